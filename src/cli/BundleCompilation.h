//===- BundleCompilation.h - Model file in, bundle directory out -----------===//
//
// The one pipeline `bundlefit compile`, `bundlefit run` and `model-compiler`
// share: import, graph passes, memory plan, code generation, bundle files.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Command.h"
#include "QuantOptions.h"

#include "bundlefit/bundle/BundleWriter.h"
#include "bundlefit/codegen/BundleCodegen.h"
#include "bundlefit/codegen/Target.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <memory>
#include <string>

namespace bundlefit {

struct CompileRequest {
  ModelOptions model;
  std::string outputDir;
  std::string networkName; ///< Empty: from the model file name.
  std::string bundleApi = "static";
  // Target selection: a shorthand, or explicit LLVM settings.
  std::string target = "host";
  std::string triple, mcpu, floatAbi, relocationModel;
  std::string optLevel = "O2";
  double exactTimeBudgetSeconds = 5.0;
  std::string dumpGraphDag; ///< Graphviz file to write, if any.
  QuantCliOptions quant;    ///< --load-profile...: int8 (QuantOptions.h).
  /// --use-cmsis: int8 conv/pool/FC/softmax call CMSIS-NN (quant/CmsisLayout.h).
  bool useCmsis = false;
  std::string cmsisNnDir; ///< --cmsis-nn-dir: checked and reported only.
};

/// Adds --network-name, --bundle-api, --target, --triple, --mcpu,
/// --float-abi, --relocation-model, --opt to a command.
void addCompileOptions(CLI::App &command, CompileRequest &request);

struct CompiledBundle {
  std::unique_ptr<Graph> graph; ///< As planned and compiled.
  /// With --use-cmsis: the graph before CMSIS-NN preparation (ONNX layouts),
  /// which the interpreter can run; null otherwise.
  std::unique_ptr<Graph> referenceGraph;
  const Graph &interpretableGraph() const { return referenceGraph ? *referenceGraph : *graph; }
  MemoryPlan plan;
  std::string networkName;
  TargetOptions target;
  CodegenResult code;
};

/// Runs the pipeline and writes the bundle directory all-or-nothing:
/// <net>.o, <net>.h, <net>.weights.bin, <net>.weights.txt, <net>.memory.json.
CompiledBundle compileBundle(const CompileRequest &request);

} // namespace bundlefit
