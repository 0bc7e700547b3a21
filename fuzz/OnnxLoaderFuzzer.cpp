//===- OnnxLoaderFuzzer.cpp - libFuzzer target: ONNX model files -----------===//
//
// The bytes are written to a file and loaded the way `bundlefit compile`
// loads a model: importOnnxModel (protobuf parsing, opset rewrites, constants,
// the unsupported-operator check) and then shape inference, which is where a
// malformed but parseable model meets the operator rules.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/ops/OpRegistry.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bundlefit::fuzz::limitMemory();
  const std::string &path = bundlefit::fuzz::writeScratchFile(data, size, ".onnx");
  std::unique_ptr<bundlefit::Graph> graph;
  bundlefit::fuzz::expectParsedOrError(path, [&] { graph = bundlefit::importOnnxModel(path); });
  if (graph) // The pipeline names the file around shape inference errors.
    bundlefit::fuzz::expectParsedOrError("", [&] { bundlefit::inferGraphTypes(*graph); });
  std::remove(path.c_str());
  return 0;
}
