//===- PipelineFuzzer.cpp - libFuzzer target: load -> passes -> plan -------===//
//
// The path `bundlefit plan` takes for a model file: import, the default graph
// passes (shape inference and constant folding run the reference interpreter
// on constants, which is where ConstantOfShape [2^31, 2^31] crashed), and the
// memory plan. Anything but a bundlefit::Error with a documented code aborts.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bundlefit::fuzz::limitMemory();
  const std::string &path = bundlefit::fuzz::writeScratchFile(data, size, ".onnx");
  std::unique_ptr<bundlefit::Graph> graph;
  bundlefit::fuzz::expectParsedOrError(path, [&] { graph = bundlefit::importOnnxModel(path); });
  if (graph)
    bundlefit::fuzz::expectParsedOrError("", [&] {
      bundlefit::runDefaultPasses(*graph);
      bundlefit::PlanOptions options;
      options.exactTimeBudgetSeconds = 0.05;
      // The order search's work grows with nodes x beam width x ready nodes;
      // its work limit bounds it for every graph. The product's budget
      // is seconds in a release build, too long under ASan for libFuzzer's
      // 10 s timeout, so the fuzzer runs the same search on a smaller one
      // (large graphs still reach the narrow beam).
      options.orderWorkBudget = 2'000'000;
      bundlefit::planGraphMemory(*graph, options);
    });
  std::remove(path.c_str());
  return 0;
}
