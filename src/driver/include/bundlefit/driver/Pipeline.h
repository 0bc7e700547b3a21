//===- Pipeline.h - The stages every model-reading command runs ------------===//
//
// The driver library is the one pipeline behind `compile`, `run`, `plan`,
// `fit`, `pick`, model-compiler, the CMake functions, the benches and the
// tests:
//
//   load (import + default passes) -> quantize (--load-profile) -> CMSIS-NN
//   preparation (--use-cmsis) -> --memory-opt passes -> memory plan ->
//   code generation -> bundle files
//
// Sizing a build for a part (VariantBuild.h) runs the same stages as
// compiling it, so a verdict describes the bundle that will be built. Front
// ends (src/cli, model-compiler, Python) call these through driver::Compilation
// (Compilation.h): they fill its one CompilationOptions and format results.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/quant/QuantizeGraph.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace bundlefit {

class Graph;

/// Options every model-reading command shares.
struct ModelOptions {
  std::string path;
  std::vector<std::string> defineSymbols; ///< name=value
  std::vector<std::string> modelInputs;   ///< name,type,[d0,d1,...]
  bool fuseActivations = true;
  /// --memory-opt: 0..kMaxMemoryOpt (MemoryPlan.h). >= 1 also fuses Conv+pool
  /// (applyMemoryOptPasses); planners must get the same level
  /// (PlanOptions::memoryOpt, set from this in Compilation::planOptions).
  int memoryOpt = kDefaultMemoryOpt;
  /// --patch-recompute-budget: extra MACs the level-2 patch stages' grids that
  /// set the peak may recompute, as a fraction of the model's MACs; a stage
  /// passes it only for a grid estimated under kPastBudgetTimeRatio of its
  /// grid within its time (PatchStageOptions).
  double patchRecomputeBudget = 0.2;
  /// --keep-model-order: nodes run in the model's order, not a memory-aware
  /// one (PlanOptions::reorderForMemory), for every command that plans.
  bool keepModelOrder = false;
  /// --int8-io (also --keep-int8-io): an int8 build's graph inputs and
  /// outputs stay int8 instead of float with a Quantize / Dequantize at the
  /// boundary; their parameters are the pre-quantized model's, or those of
  /// the profile's ranges (QuantizationOptions::keepInt8Io). A float build
  /// with it is a usage error (checkInt8IoBuild).
  bool keepInt8Io = false;
  /// --buffer-alignment: the alignment of activation buffers in the arena
  /// (PlanOptions::bufferAlignment); 0 = the model's: Glow's 64 for ONNX,
  /// TFLite Micro's 16 for a .tflite (defaultBufferAlignment).
  uint64_t bufferAlignment = 0;
  /// An extension point (as LLVM's PassBuilder callbacks), for programs that
  /// drive the pipeline, not for a command line: every load of the model
  /// runs it on the imported graph, before the default passes. The ONNX
  /// conformance harness binds the shape operands its node tests feed as
  /// inputs with it. fit's and pick's code cache, keyed by the model file,
  /// cannot see it: Compilation::buildOptions turns the cache off.
  std::function<void(Graph &)> afterImport;
};

/// The activation buffers' alignment when --buffer-alignment is not given:
/// 16 for a TFLite model (TFLite Micro aligns its tensors to 16, so its
/// users expect that arena), Glow's 64 for ONNX (bundles stay Glow's).
uint64_t defaultBufferAlignment(const std::string &modelPath);

/// The int8 options (Glow's names): --load-profile, --quantization-schema,
/// --quantization-precision-bias, --keep-original-precision-for-nodes,
/// --channelwise.
struct QuantCliOptions {
  std::string profilePath; ///< Empty: the model stays float.
  std::string schema = "asymmetric";
  std::string biasPrecision = "Int32";
  std::vector<std::string> keepOriginal; ///< Op kinds, Glow's or ONNX names.
  bool channelwise = false;
  /// The model is pre-quantized (QDQ): int8 without a profile; loadModel
  /// quantizes it with the model's own parameters (markPreQuantized).
  bool preQuantized = false;
  /// ... and int16x8 (a TFLite model with int16 activations): its integer
  /// builds are named int16x8 (device::asInt16x8).
  bool int16x8 = false;
  /// The model markPreQuantized looked at, so that --variant refusals name it.
  std::string markedModel;

  bool enabled() const { return !profilePath.empty() || preQuantized; }
};

/// Whether `graph` computes in int8 anywhere (quantized or pre-quantized).
bool isInt8Graph(const Graph &graph);

/// The ONNX operators that make a model pre-quantized (QDQ and QOperator).
const std::vector<std::string> &preQuantizedOps();

/// Whether the model at `modelPath` is int8 already: an ONNX model with
/// QuantizeLinear/DequantizeLinear (or QOperator) nodes, or a TFLite model
/// with int8 activations. False for an unreadable file (loadModel says why).
bool modelIsPreQuantized(const std::string &modelPath);

/// Sets options.preQuantized when modelIsPreQuantized(modelPath), so that
/// commands treat the model as int8 (options.int16x8 for an int16x8 TFLite
/// model).
void markPreQuantized(const std::string &modelPath, QuantCliOptions &options);

/// Imports the model (ONNX, or TFLite told by its file identifier), runs
/// options.afterImport and the default graph passes. An ONNX operator without
/// a definition is an UnsupportedOperatorsError (onnx/OnnxImporter.h). A
/// pre-quantized (QDQ) or int8 TFLite model comes back int8 already (a TFLite
/// model's int8 inputs and outputs stay int8): its Q/DQ nodes folded
/// (quant/FoldQdq.h) and quantized with its own parameters, one warning line
/// on stderr for each place where its arithmetic was changed.
std::unique_ptr<Graph> loadModel(const ModelOptions &options);
/// The graph transforms of --memory-opt (level >= 1: Conv+pool fusion;
/// >= 2: a patch stage). Run after quantization, which must see every tensor
/// the profile names; commands that plan or compile call it, profile does not.
void applyMemoryOptPasses(Graph &graph, const ModelOptions &options);

/// The planner's options for a model as every command plans it: its
/// --memory-opt level and patch budget, memory-aware order unless
/// --keep-model-order, its buffer alignment, with the search time limit
/// `timeLimitSeconds`. The one place that turns ModelOptions into
/// PlanOptions, so `plan`, `compile`, Python and the benches plan a model
/// alike.
PlanOptions planOptionsFor(const ModelOptions &model, double timeLimitSeconds);

/// A model as `plan` reports it: the graph after every pass and its plan.
struct PlannedModel {
  std::unique_ptr<Graph> graph;
  MemoryPlan plan;
};

/// load -> quantize (--load-profile / pre-quantized) -> --memory-opt passes ->
/// memory plan with `planOptions` (from planOptionsFor, plus what the caller
/// adds: an arena capacity, in-place off); the time limit counts loading
/// and the passes too (PlanOptions::secondsSpentBefore). `bundlefit plan`
/// and Python's plan() both run this.
PlannedModel planModel(const ModelOptions &model, const QuantCliOptions &quant,
                       const PlanOptions &planOptions);

/// Validates the option values (Error(Usage) naming the option at fault).
QuantizationOptions resolveQuantOptions(const QuantCliOptions &options);

/// The int8q inputs of --model-input (Glow's -model-input NAME,int8q,SCALE,
/// OFFSET): name -> scale and zero point (Glow's offset). uint8q is
/// Error(Unsupported).
std::map<std::string, ScaleZeroPoint> int8InputParams(const ModelOptions &options);

/// `model` for a float build: no --int8-io, int8q inputs float (their
/// shapes kept). fit and pick size their float variants with it.
ModelOptions floatIoModel(const ModelOptions &model);

/// Error(Usage) when a float build (`int8Build` false) was asked for int8
/// inputs or outputs (--int8-io, an int8q --model-input).
void checkInt8IoBuild(const ModelOptions &model, bool int8Build);

/// When --load-profile is given: loads the profile, checks it was recorded
/// for `modelPath`, and quantizes `graph` (a loadModel result) in place.
/// Prints one status line. Returns false (graph untouched) without a profile.
/// A missing or unreadable profile is Error(BadInputFile) naming the file.
bool quantizeLoadedModel(Graph &graph, const ModelOptions &model, const QuantCliOptions &options);

/// Error(BadInputFile) naming the file when --load-profile is given and
/// cannot be read or parsed; nothing without one.
void checkProfileReadable(const QuantCliOptions &options);

/// The model as `compile` would quantize it, for sizing int8 builds: loaded,
/// quantized with --load-profile when given, else with a synthetic profile
/// (every float tensor in [-1, 1]: the sizes depend on which nodes become
/// int8, the schema and the bias precision, not on the ranges). Not yet
/// through the --memory-opt transforms.
std::unique_ptr<Graph> quantizedGraphForSizing(const ModelOptions &model,
                                               const QuantCliOptions &options);

/// Quantizes `graph` with a range of [-1, 1] for every float tensor: enough
/// to size an int8 build when no profile was recorded.
void quantizeWithSyntheticProfile(Graph &graph, const ModelOptions &model,
                                  const QuantCliOptions &options);

/// Global verbosity (--quiet / --verbose), read by progress output.
enum class Verbosity { Quiet, Normal, Verbose };
Verbosity verbosity();
void setVerbosity(Verbosity level);
/// While one lives, status lines from this thread are left out (a variant's
/// compile inside `fit`: one line per variant, not the compile's). Other
/// threads are unaffected.
class QuietScope {
public:
  QuietScope();
  ~QuietScope();
  QuietScope(const QuietScope &) = delete;
  QuietScope &operator=(const QuietScope &) = delete;
};
/// Writes a progress/status line to stderr unless --quiet.
void status(const std::string &line);
/// Informational notes (the memory-opt level line) are left out when a JSON
/// report is the whole output of the run.
void setStatusNotesSuppressed(bool suppressed);
/// After a command's work: the memory-opt level it planned at, as a status
/// line (nothing when no model was planned or notes are suppressed).
void printMemoryOptNote();
/// Builds made inside it (fit's suggestions at another level) leave the
/// level printMemoryOptNote names as it was: the note is about the answer.
class KeepMemoryOptNote {
public:
  KeepMemoryOptNote();
  ~KeepMemoryOptNote();
  KeepMemoryOptNote(const KeepMemoryOptNote &) = delete;
  KeepMemoryOptNote &operator=(const KeepMemoryOptNote &) = delete;

private:
  int level_;
};
/// "memory-opt 2 (...; defaults: bundlefit 2, model-compiler 0)".
std::string describeMemoryOpt(int level);

/// Writes `text` to `path` atomically (temporary name, then rename), so a
/// failure leaves nothing half-written. Throws Error(CannotWrite).
void writeFileAtomically(const std::string &path, const std::string &text);

} // namespace bundlefit
