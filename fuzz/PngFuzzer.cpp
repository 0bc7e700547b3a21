//===- PngFuzzer.cpp - libFuzzer target: PNG calibration images ------------===//
//
// loadSamples reads PNG files for profiling and `run`. The image size is
// checked from the header before decoding (issue 16: a 30000x30000 image took
// 28 s and 1.8 GB before being refused), so the RSS limit catches a regression.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "bundlefit/quant/ImageInput.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = bundlefit::fuzz::writeScratchFile(data, size, ".png");
  bundlefit::ImageOptions options;
  bundlefit::fuzz::expectParsedOrError(path, [&] {
    bundlefit::loadSamples(path, {1, 3, 8, 8}, options);
  });
  std::remove(path.c_str());
  return 0;
}
