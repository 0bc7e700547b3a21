//===- Compilation.h - One model's compilation: the driver's public face --===//
//
// What clang's CompilerInvocation and CompilerInstance are to clang: a front
// end (bundlefit's commands, model-compiler, the Python module) fills one
// CompilationOptions, hands it to a Compilation and formats what comes back:
//
//   driver::Compilation c(options);
//   const CompiledBundle &bundle = c.writeBundle(dir);   // or c.plan(), c.fit(query) ...
//
// The Compilation runs the stages of Pipeline.h (load -> quantize -> CMSIS-NN
// preparation -> --memory-opt passes -> memory plan -> code generation ->
// bundle files) and keeps each result, so asking twice does the work once;
// profile and compare-quant run the reference interpreter on the loaded
// model (Calibration.h, QuantComparison.h).
// The planner's options (memory-opt level, patch budget, order, buffer
// alignment, time limit, arena capacity) are derived from CompilationOptions
// in one place, planOptions(): `plan`, `compile`, `run`, `fit`, `pick`,
// model-compiler and Python cannot plan one model two ways. The stage
// functions of Pipeline.h, CompileBundle.h, FitCheck.h, PickCheck.h,
// ModelRun.h, Calibration.h and QuantComparison.h are its implementation.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/driver/Calibration.h"
#include "bundlefit/driver/CompileBundle.h"
#include "bundlefit/driver/FitCheck.h"
#include "bundlefit/driver/ModelRun.h"
#include "bundlefit/driver/PickCheck.h"
#include "bundlefit/driver/Pipeline.h"
#include "bundlefit/driver/QuantComparison.h"
#include "bundlefit/driver/WeightPlacement.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bundlefit::driver {

/// The code a bundle is generated as (compile, run; fit and pick size the
/// build for the part's core and read only the optimisation level).
struct CodegenOptions {
  std::string networkName; ///< Empty: from the model file name.
  std::string bundleApi = "static";
  /// A shorthand (host, cortex-m7, ...), or explicit LLVM settings.
  std::string target = "host";
  std::string triple, mcpu, floatAbi, relocationModel;
  std::string optLevel = "O2";
  /// --use-cmsis: int8 conv/pool/FC/softmax call CMSIS-NN.
  bool useCmsis = false;
  /// The CMSIS-NN checkout or library: `compile` checks and reports it,
  /// `run` links it (empty: $BUNDLEFIT_CMSIS_NN_DIR).
  std::string cmsisNnDir;
  std::string dumpGraphDag; ///< Graphviz file writeBundle also writes, if any.
};

/// Everything a front end decides about one model's compilation. Groups as
/// clang's invocation groups LangOptions and CodeGenOptions; one object.
struct CompilationOptions {
  /// The model file and its import and graph options, including how it is
  /// planned: --memory-opt (the one field that holds the level), the patch
  /// budget, --keep-model-order, --buffer-alignment (Pipeline.h).
  ModelOptions model;
  QuantCliOptions quant; ///< int8 (--load-profile, ...).
  CodegenOptions codegen;
  /// Seconds the memory plan may take: `plan` counts loading and the passes
  /// too; `compile` and `run` give it all to the exact allocator.
  double timeLimitSeconds = 5.0;
  /// --arena-capacity: the search looks for a plan within it first.
  uint64_t arenaCapacity = 0;
  bool allowInPlace = true; ///< false: --no-in-place.
  /// --device PART: weights placed as `fit` places them (WeightPlacement.h).
  std::optional<PartPlacement> placement;
  /// fit: false compiles every build (--verify-link needs the object).
  bool useCodeCache = true;
};

/// What run() is asked.
struct RunQuery {
  bool compare = false; ///< Also run the reference interpreter.
  double timeoutSeconds = 300;
  std::string inputOption = "--input"; ///< How errors name the inputs' option.
};

class Compilation {
public:
  /// Takes the options as given; a pre-quantized model (QDQ, int8 TFLite) is
  /// marked int8 here (markPreQuantized), once for every front end. Nothing
  /// is read beyond that until a stage is asked for.
  explicit Compilation(CompilationOptions options);
  /// For the commands that only read the model (inspect, profile,
  /// compare-quant): the other options at their defaults.
  explicit Compilation(const ModelOptions &model, const QuantCliOptions &quant = {});

  const CompilationOptions &options() const { return options_; }

  /// Profiling and compare-quant run the reference interpreter on the loaded
  // model (Calibration.h, QuantComparison.h). The planner's options for this model: the one place
  // the memory-opt
  /// level, patch budget, order, buffer alignment, time limit, arena
  /// capacity and in-place choice become PlanOptions.
  PlanOptions planOptions() const;

  /// A fresh copy of the loaded model (import + default passes; int8 when
  /// pre-quantized): for commands that run the interpreter on it.
  std::unique_ptr<Graph> loadGraph() const;
  /// loadGraph(), quantized with --load-profile (as compile quantizes it).
  std::unique_ptr<Graph> loadQuantizedGraph() const;
  /// loadGraph() through the --memory-opt passes, not quantized (`inspect`).
  std::unique_ptr<Graph> loadTransformedGraph() const;

  /// load -> quantize -> --memory-opt passes -> plan, no code (`plan`); the
  /// time limit counts the loading too. Cached.
  const PlannedModel &plan();

  /// The whole pipeline through code generation, nothing written. Cached.
  const CompiledBundle &bundle();
  /// bundle(), then the bundle directory written all-or-nothing (with
  /// dumpGraphDag). The directory and graph file are checked writable first.
  const CompiledBundle &writeBundle(const std::string &dir);
  /// <net>.memory.json's content (sizes, code, CMSIS-NN calls, target).
  nlohmann::json memoryReport();

  /// Does the build fit the part (`fit`): sized for the part's core.
  std::unique_ptr<FitCheck> fit(const FitQuery &query) const;
  /// Which build suits the part (`pick`).
  std::unique_ptr<PickCheck> pick(const PickQuery &query) const;
  /// Compiles into a temporary directory, links, runs (`run`).
  ModelRun run(const std::vector<RunInput> &inputs, const RunQuery &query) const;

  /// Records the float model's ranges on the samples `load` reads for it
  /// (`profile`, model-profiler); writes them as the profile YAML to
  /// `outputPath` (all or nothing) unless it is empty.
  ProfileData profile(const SampleLoader &load, const std::string &outputPath,
                      const SampleDone &onSample = {}) const;
  /// The int8 model (--load-profile) against the float one on the samples
  /// `load` reads (`compare-quant`).
  QuantComparison compareQuant(const SampleLoader &load, const SampleDone &onSample = {}) const;

  /// The options fit and pick size builds with (VariantBuild.h).
  BuildOptions buildOptions() const;

private:
  CompileRequest compileRequest(const std::string &outputDir) const;

  CompilationOptions options_;
  std::optional<PlannedModel> planned_;
  std::optional<CompiledBundle> bundle_;
};

} // namespace bundlefit::driver
