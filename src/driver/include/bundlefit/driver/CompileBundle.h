//===- CompileBundle.h - Model file in, bundle directory out ---------------===//
//
// The pipeline `bundlefit compile`, `bundlefit run`, `model-compiler` and the
// sizing of `fit`/`pick` (VariantBuild.h) share: import, graph passes, int8
// quantization, CMSIS-NN preparation, --memory-opt passes, memory plan, code
// generation, bundle files.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/driver/Pipeline.h"
#include "bundlefit/driver/WeightPlacement.h"

#include "bundlefit/bundle/BundleWriter.h"
#include "bundlefit/codegen/BundleCodegen.h"
#include "bundlefit/codegen/Target.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/ops/CmsisBufferSizes.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

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
  /// The arena's capacity, or the rooms of a part (PlanOptions): the search
  /// looks for a plan within it first, then goes lower with the time left.
  uint64_t activationCapacity = 0;
  std::vector<uint64_t> activationRooms;
  std::string dumpGraphDag; ///< Graphviz file to write, if any.
  QuantCliOptions quant;    ///< --load-profile...: int8 (Pipeline.h).
  /// --use-cmsis: int8 conv/pool/FC/softmax call CMSIS-NN (quant/CmsisLayout.h).
  bool useCmsis = false;
  std::string cmsisNnDir; ///< --cmsis-nn-dir: checked and reported only.
  /// int8 without --load-profile: quantize with a synthetic profile (sizing
  /// only: the sizes depend on which nodes become int8, not on the ranges).
  bool syntheticProfile = false;
  /// false: stop after the memory plan (sizing a build no code is made for).
  bool generateCode = true;
  /// --device PART [--weights ...]: the weights placed as `fit` places them on
  /// the part, in one segment per memory region (WeightPlacement.h); the
  /// target defaults to the part's bundle core and the arena is planned for
  /// its RAM rooms, as `fit` sizes it. Unset: Glow's one constantWeight.
  std::optional<driver::PartPlacement> placement;
};

struct CompiledBundle {
  std::unique_ptr<Graph> graph; ///< As planned and compiled.
  /// With --use-cmsis: the graph before CMSIS-NN preparation (ONNX layouts),
  /// which the interpreter can run; null otherwise.
  std::unique_ptr<Graph> referenceGraph;
  const Graph &interpretableGraph() const { return referenceGraph ? *referenceGraph : *graph; }
  MemoryPlan plan;
  std::string networkName;
  TargetOptions target;
  CodegenResult code;    ///< Empty when CompileRequest::generateCode is false.
  bool useCmsis = false; ///< Built with --use-cmsis.
  CmsisExtension cmsisExtension = CmsisExtension::None;
  int64_t cmsisLayoutNodes = 0;
  std::vector<std::string> cmsisPortable; ///< Nodes left on portable kernels.
};

/// Runs the pipeline; writes nothing.
CompiledBundle buildBundle(const CompileRequest &request);

/// The code generation step of buildBundle, for a bundle planned with
/// CompileRequest::generateCode false (the same request otherwise).
void generateBundleCode(CompiledBundle &bundle, const CompileRequest &request);

/// Writes the bundle directory all-or-nothing: <net>.o, <net>.h,
/// <net>.weights.bin, <net>.weights.txt, <net>.memory.json. While an
/// OutputSet is open (support/OutputFile.h) the directory is only staged.
void writeBundle(const CompileRequest &request, const CompiledBundle &bundle);

/// What <net>.memory.json holds (sizes, code size, CMSIS-NN calls, target),
/// stamped: `compile --json` prints it before the bundle is in place.
nlohmann::json bundleMemoryReport(const CompileRequest &request, const CompiledBundle &bundle);

/// buildBundle, then writeBundle.
CompiledBundle compileBundle(const CompileRequest &request);

} // namespace bundlefit
