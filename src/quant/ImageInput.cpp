//===- ImageInput.cpp - .npy and PNG files into float input samples --------===//
#include "bundlefit/quant/ImageInput.h"

#include "bundlefit/interp/Npy.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

// stb_image is a single-header library: this file instantiates the PNG
// decoder privately (static functions), so nothing else links against it.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#define STBI_NO_STDIO
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

namespace fs = std::filesystem;

namespace bundlefit {

namespace {

[[noreturn]] void bad(const std::string &path, const std::string &what) {
  throw Error(ExitCode::BadInputFile, path + ": " + what);
}

bool hasExtension(const std::string &path, const char *extension) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
  return ext == extension;
}

std::vector<Tensor> samplesFromNpy(const std::string &path, const Shape &inputShape,
                                   const ImageOptions &options) {
  Tensor array = loadNpy(path);
  DType dtype = array.type.dtype;
  if (dtype != DType::Float32 && dtype != DType::UInt8)
    bad(path, std::string("holds ") + dtypeName(dtype) +
                  " data; calibration .npy files must be float32 or uint8 (image pixels)");
  int64_t perSample = numElements(inputShape);
  const Shape &shape = array.type.shape;
  // The input's shape exactly, or N of them stacked along the first
  // dimension: an element count that merely matches ([784], or [2,1,14,28]
  // for [1,1,28,28]) is another layout, not a sample.
  int64_t count = 0;
  if (shape == inputShape)
    count = 1;
  else if (!shape.empty() && shape.size() == inputShape.size() && inputShape[0] > 0 &&
           shape[0] % inputShape[0] == 0 &&
           std::equal(shape.begin() + 1, shape.end(), inputShape.begin() + 1))
    count = shape[0] / inputShape[0];
  if (count == 0)
    bad(path, "shape " + shapeToString(shape) + " is neither the model input's " +
                  shapeToString(inputShape) + " nor a stack of them along the first dimension");
  std::vector<Tensor> samples;
  samples.reserve(size_t(count));
  TensorType type{DType::Float32, inputShape, {}};
  for (int64_t s = 0; s < count; ++s) {
    Tensor sample(type);
    float *out = sample.data<float>();
    if (dtype == DType::Float32) {
      const float *in = array.data<float>() + s * perSample;
      std::copy(in, in + perSample, out);
    } else {
      const uint8_t *in = array.data<uint8_t>() + s * perSample;
      for (int64_t i = 0; i < perSample; ++i)
        out[i] = convertPixel(in[i], options.mode);
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

Tensor sampleFromPng(const std::string &path, const Shape &inputShape,
                     const ImageOptions &options) {
  if (inputShape.size() != 4 || inputShape[0] != 1)
    bad(path, "PNG inputs need a model input of shape [1,C,H,W] or [1,H,W,C], not " +
                  shapeToString(inputShape));
  int64_t channels = options.nhwc ? inputShape[3] : inputShape[1];
  int64_t height = options.nhwc ? inputShape[1] : inputShape[2];
  int64_t width = options.nhwc ? inputShape[2] : inputShape[3];
  if (channels != 1 && channels != 3 && channels != 4)
    bad(path, "the model input " + shapeToString(inputShape) + " has " + std::to_string(channels) +
                  " channels with --image-layout " + (options.nhwc ? "NHWC" : "NCHW") +
                  "; PNG inputs need 1, 3 or 4");
  std::string data = readInputFile(path, "image");
  if (data.size() > size_t(INT32_MAX))
    bad(path, "file too large");
  int w = 0, h = 0, fileChannels = 0;
  auto refuseSize = [&] {
    bad(path, "image is " + std::to_string(w) + "x" + std::to_string(h) + ", the model input " +
                  shapeToString(inputShape) + " needs " + std::to_string(width) + "x" +
                  std::to_string(height) + " (resize it first)");
  };
  // The size check reads only the header: a 30000x30000 image must not be
  // decoded (seconds and gigabytes) just to be refused.
  if (stbi_info_from_memory(reinterpret_cast<const stbi_uc *>(data.data()), int(data.size()), &w,
                            &h, &fileChannels) &&
      (w != width || h != height))
    refuseSize();
  stbi_uc *pixels = stbi_load_from_memory(reinterpret_cast<const stbi_uc *>(data.data()),
                                          int(data.size()), &w, &h, &fileChannels, int(channels));
  if (!pixels)
    bad(path, std::string("not a readable PNG image (") + stbi_failure_reason() + ")");
  std::unique_ptr<stbi_uc, void (*)(void *)> owner(pixels, stbi_image_free);
  if (w != width || h != height)
    refuseSize();
  Tensor sample(TensorType{DType::Float32, inputShape, {}});
  float *out = sample.data<float>();
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x)
      for (int64_t c = 0; c < channels; ++c) {
        // BGR swaps the first and third colour channels (alpha stays last).
        int64_t source = options.bgr && channels >= 3 && c < 3 ? 2 - c : c;
        uint8_t pixel = pixels[(y * width + x) * channels + source];
        int64_t index =
            options.nhwc ? (y * width + x) * channels + c : (c * height + y) * width + x;
        out[index] = convertPixel(pixel, options.mode);
      }
  return sample;
}

} // namespace

bool parseImageMode(const std::string &text, ImageMode &out) {
  if (text == "0to1")
    out = ImageMode::ZeroToOne;
  else if (text == "neg1to1")
    out = ImageMode::NegOneToOne;
  else if (text == "0to255")
    out = ImageMode::ZeroTo255;
  else if (text == "neg128to127")
    out = ImageMode::Neg128To127;
  else
    return false;
  return true;
}

float convertPixel(uint8_t pixel, ImageMode mode) {
  switch (mode) {
  case ImageMode::ZeroToOne:
    return float(pixel) / 255.0f;
  case ImageMode::NegOneToOne:
    return float(pixel) / 127.5f - 1.0f;
  case ImageMode::ZeroTo255:
    return float(pixel);
  case ImageMode::Neg128To127:
    return float(pixel) - 128.0f;
  }
  return float(pixel);
}

std::vector<std::string> expandInputPaths(const std::vector<std::string> &paths) {
  std::vector<std::string> files;
  for (const std::string &path : paths) {
    std::error_code error;
    if (fs::is_directory(path, error)) {
      std::vector<std::string> found;
      for (const fs::directory_entry &entry : fs::directory_iterator(path, error)) {
        std::string name = entry.path().string();
        if (entry.is_regular_file(error) &&
            (hasExtension(name, ".npy") || hasExtension(name, ".png")))
          found.push_back(name);
      }
      if (error)
        bad(path, "cannot list directory");
      if (found.empty())
        bad(path, "directory holds no .npy or .png files");
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(path, error)) {
      files.push_back(path);
    } else {
      bad(path, "no such file or directory");
    }
  }
  return files;
}

std::vector<Tensor> loadSamples(const std::string &path, const Shape &inputShape,
                                const ImageOptions &options) {
  if (hasExtension(path, ".png"))
    return {sampleFromPng(path, inputShape, options)};
  if (hasExtension(path, ".npy"))
    return samplesFromNpy(path, inputShape, options);
  bad(path, "unknown input kind (expected .npy or .png)");
}

std::vector<Tensor> loadAllSamples(const std::vector<std::string> &paths, const Shape &inputShape,
                                   const ImageOptions &options) {
  std::vector<Tensor> samples;
  for (const std::string &file : expandInputPaths(paths)) {
    std::vector<Tensor> more = loadSamples(file, inputShape, options);
    for (Tensor &sample : more)
      samples.push_back(std::move(sample));
  }
  if (samples.empty())
    throw Error(ExitCode::BadInputFile, "no calibration inputs given");
  return samples;
}

} // namespace bundlefit
