//===- TfliteLoaderFuzzer.cpp - libFuzzer target: TFLite model files -------===//
//
// The bytes are written to a file and imported the way every command loads a
// .tflite (importTfliteModel: the flatbuffers Verifier, the index, buffer,
// shape and quantization checks, each operator's conversion and shape
// inference). Anything but a graph or a bundlefit::Error naming the file is
// a finding (FuzzSupport.h).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "bundlefit/tflite/TfliteImporter.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bundlefit::fuzz::limitMemory();
  const std::string &path = bundlefit::fuzz::writeScratchFile(data, size, ".tflite");
  std::unique_ptr<bundlefit::Graph> graph;
  bundlefit::fuzz::expectParsedOrError(path, [&] { graph = bundlefit::importTfliteModel(path); });
  std::remove(path.c_str());
  return 0;
}
