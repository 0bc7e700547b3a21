//===- ImageInput.h - Calibration samples from .npy files and PNG images ---===//
//
// `bundlefit profile` and `compare-quant` take INPUTS: .npy files, PNG files,
// or directories of them (read in sorted name order, not recursively). Each
// becomes one or more samples of the model's (single) float input:
//
//   .npy float32   the model input's shape, or [N*batch, rest...] holding N
//                  samples (a calibration set in one file)
//   .npy uint8     the same shapes; pixels are converted with --image-mode
//   .png           decoded with stb_image to the input's channel count (1:
//                  grey, 3: RGB or --image-channel-order BGR), laid out as
//                  --image-layout NCHW [1,C,H,W] or NHWC [1,H,W,C]; the image
//                  must already have the input's height and width
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Tensor.h"

#include <string>
#include <vector>

namespace bundlefit {

/// How a pixel p in [0, 255] becomes a float (Glow's -image-mode).
enum class ImageMode : uint8_t {
  ZeroToOne,   ///< "0to1":       p / 255
  NegOneToOne, ///< "neg1to1":    p / 127.5 - 1
  ZeroTo255,   ///< "0to255":     p
  Neg128To127, ///< "neg128to127": p - 128
};

struct ImageOptions {
  ImageMode mode = ImageMode::ZeroToOne;
  bool nhwc = false; ///< --image-layout NHWC
  bool bgr = false;  ///< --image-channel-order BGR
};

bool parseImageMode(const std::string &text, ImageMode &out);
float convertPixel(uint8_t pixel, ImageMode mode);

/// Files named by `paths`: files as given, directories expanded to their
/// .npy and .png files in sorted order. Throws Error(BadInputFile) naming a
/// path that does not exist or a directory without such files.
std::vector<std::string> expandInputPaths(const std::vector<std::string> &paths);

/// The samples one file holds, each of type float32 `inputShape`.
/// Throws Error(BadInputFile) naming the file when it cannot be used.
std::vector<Tensor> loadSamples(const std::string &path, const Shape &inputShape,
                                const ImageOptions &options);

/// All samples of all `paths`, in order (at least one).
std::vector<Tensor> loadAllSamples(const std::vector<std::string> &paths, const Shape &inputShape,
                                   const ImageOptions &options);

} // namespace bundlefit
