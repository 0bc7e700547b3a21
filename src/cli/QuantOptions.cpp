//===- QuantOptions.cpp - Parse the int8 options, apply the profile --------===//
#include "QuantOptions.h"
#include "Progress.h"

#include "bundlefit/ir/Graph.h"
#include "bundlefit/quant/Profile.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"

#include <iostream>

namespace bundlefit {

void addQuantOptions(CLI::App &command, QuantCliOptions &options, bool requireProfile) {
  CLI::Option *profile =
      command
          .add_option("--load-profile", options.profilePath,
                      "Quantize to int8 with this profile (bundlefit profile; Glow's YAML)")
          ->each(noteInputFile);
  if (requireProfile)
    profile->required();
  command.add_option("--quantization-schema", options.schema,
                     "asymmetric (default) | symmetric | symmetric_with_uint8 | "
                     "symmetric_with_power2_scale");
  command.add_option("--quantization-precision-bias", options.biasPrecision,
                     "Int32 (default: bias at accumulator scale) | Int8");
  command
      .add_option("--keep-original-precision-for-nodes", options.keepOriginal,
                  "Op kinds that stay float, e.g. Add,Softmax (ONNX or Glow names)")
      ->delimiter(',');
  command.add_flag("--channelwise", options.channelwise,
                   "One weight scale per output channel (Conv, Gemm)");
}

void addCalibrationOptions(CLI::App &command, CalibrationCliOptions &options) {
  command
      .add_option("inputs", options.inputs,
                  "Calibration inputs: .npy files (a stack of samples along the first "
                  "dimension is split), PNG images, or directories of them")
      ->required();
  command
      .add_option("--image-mode", options.imageMode,
                  "Pixel p of uint8 .npy / PNG inputs becomes: 0to1 p/255 (default), neg1to1, "
                  "0to255, neg128to127")
      ->check(CLI::IsMember({"0to1", "neg1to1", "0to255", "neg128to127"}));
  command
      .add_option("--image-layout", options.imageLayout,
                  "Model input layout for PNG: NCHW (default) | NHWC")
      ->check(CLI::IsMember({"NCHW", "NHWC"}));
  command
      .add_option("--image-channel-order", options.channelOrder,
                  "PNG channel order: RGB (default) | BGR")
      ->check(CLI::IsMember({"RGB", "BGR"}));
}

SampleProgress::SampleProgress(std::string label)
    : label_(std::move(label)), enabled_(progressEnabled()) {}

SampleProgress::~SampleProgress() {
  if (enabled_ && done_ > 0)
    std::cerr << "\r\033[K" << std::flush;
}

void SampleProgress::advance(size_t done, size_t total) {
  done_ = done;
  if (!enabled_ || total == 0)
    return;
  // Redraw only when the bar moves (at most 100 times), not once per sample.
  if (done != total && done * 100 / total == (done - 1) * 100 / total)
    return;
  constexpr size_t width = 30;
  size_t filled = done * width / total;
  std::cerr << "\r" << label_ << " [" << std::string(filled, '#')
            << std::string(width - filled, '.') << "] " << done << "/" << total << std::flush;
}

} // namespace bundlefit
