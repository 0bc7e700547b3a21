//===- Passes.h - Graph-to-graph rewrites before planning ------------------===//
//
// Each pass takes a graph whose node order is a valid execution order and
// leaves it valid. Every pass returns how many rewrites it made (0 = the graph
// is unchanged), so a pipeline can report what happened. Passes keep the
// graph's outputs: the values in Graph::outputs() keep their names (a bundle
// output is named after them) and stay computed by a node.
//
// Order matters: foldConstantsAndInferTypes must run first, because static
// type inference of later nodes (Reshape, Expand, Slice...) needs their shape
// operands as constants. runDefaultPasses runs them in the right order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace bundlefit {

/// One forward sweep in execution order: infers each node's output types,
/// then, when every (non-null) input is a constant -- or the node is `Shape`,
/// whose result only depends on its input's static type -- evaluates it with
/// the reference interpreter and turns its outputs into constants. This is
/// what removes PyTorch's Shape->Gather->Unsqueeze->Concat->Reshape chains,
/// ConstantOfShape, Range, Cast of constants...
///
/// A folded value that is a graph output stays computed by a node: it is
/// produced by an `Identity` reading a new constant `<name>_const`, so a
/// bundle still writes every output. Returns the number of folded nodes.
size_t foldConstantsAndInferTypes(Graph &graph);

/// The same sweep, but a node for which `keep` returns true is typed and never
/// folded: before a pre-quantized model's Q/DQ nodes are folded, the chains
/// exporters build their scales and zero points with (PyTorch:
/// Shape -> ConstantOfShape -> Cast) must become constants, while the weights'
/// DequantizeLinear nodes must stay to give their scales.
size_t foldConstantsAndInferTypes(Graph &graph, const std::function<bool(const Node &)> &keep);

/// BatchNormalization after Conv (any group count) or Gemm (2-D, transB 0 or
/// 1) whose weight and bias are constants and whose output only feeds the BN
/// is folded into the producer's weight and bias (a bias is created when
/// missing). Any other BN becomes Mul+Add with constant per-channel scale and
/// shift of shape [C,1,...,1]. Returns the number of BN nodes rewritten.
/// Requires known types (run after foldConstantsAndInferTypes).
size_t foldBatchNorm(Graph &graph);

/// Removes Identity and (inference) Dropout by making their readers read the
/// input. When the output is a graph output its name is kept: the input's
/// producer is made to compute the graph output directly when the input is
/// an intermediate read only by this node; otherwise the node stays.
/// Returns the number of nodes removed.
size_t eliminateIdentities(Graph &graph);

/// Removes nodes whose outputs nobody reads and that are not graph outputs
/// (repeatedly, back to front), then drops unreferenced values.
/// Returns the number of nodes removed.
size_t eliminateDeadNodes(Graph &graph);

/// Fuses Relu, Clip (constant or omitted min/max), LeakyRelu, Sigmoid, Tanh,
/// HardSigmoid and HardSwish into a preceding Conv, Gemm or MatMul whose
/// output feeds only that activation and is not a graph output. The producer
/// gets the bundlefit attributes documented in OpRegistry.h (`activation`,
/// `activation_min`/`activation_max` with +-inf stored as +-FLT_MAX,
/// `activation_alpha`/`activation_beta`) and now computes the activation's
/// output value (same Value, same name). Returns the number of fusions.
size_t fuseActivations(Graph &graph);

/// Whether an activation may be fused into the producer of its input `x`
/// (false keeps it a node of its own). A pre-quantized model rounds where it
/// quantizes: fusing a LeakyRelu after a quantized Conv output would skip that
/// rounding.
using MayFuseActivation = std::function<bool(const Value &x, const Node &activation)>;
size_t fuseActivations(Graph &graph, const MayFuseActivation &mayFuse);

/// --memory-opt >= 1: a 2-D float Conv (with its fused activation) whose
/// output only feeds a MaxPool or AveragePool becomes one ConvPool node
/// (ops/FusedOps.h) that never materialises the conv output. Run after
/// runDefaultPasses. Returns the number of fusions. A pair is fused where
/// that lowers the estimated peak, with activations sized as the plan will
/// align them (`bufferAlignment`, PlanOptions::bufferAlignment; 64 is
/// Glow's, ONNX's default).
size_t fuseConvPool(Graph &graph, uint64_t bufferAlignment = 64);

/// Replaces each GELU spelled as its formula (PyTorch's export before opset
/// 20: x * 0.5 * (1 + Erf(x / sqrt 2)), or the tanh approximation) by one
/// Gelu node; the chain it read is left for eliminateDeadNodes. Returns how
/// many were replaced.
size_t fuseGelu(Graph &graph);

struct PatchStageOptions {
  /// Extra MACs the recomputed tile halos of the grids that lower the peak
  /// may cost, as a fraction of the model's MACs (--patch-recompute-budget).
  /// With the peak final, a stage takes a grid of no higher peak past it only
  /// if that grid is estimated (patchTimeMacs) under kPastBudgetTimeRatio
  /// (0.8) of the time of its grid within it: the stages are never estimated
  /// slower than grids within the budget.
  double recomputeBudget = 0.2;
  /// With the peak final, each stage takes the fastest grid that keeps it
  /// (off: the grids within the budget that set the peak; tests).
  bool fastestGridAtPeak = true;
  /// When set, the stage must end at the value of this name (tests,
  /// experiments); the best grid within the budget is still chosen.
  std::string stageOutput;
  /// The plan's alignment of activation buffers (PlanOptions::
  /// bufferAlignment): the estimated peaks round each buffer up to it.
  uint64_t bufferAlignment = 64;
};

/// --memory-opt >= 2: the run of nodes that lowers the estimated peak most
/// becomes one PatchStage node (ops/PatchStage.h) run tile by tile, then the
/// next such run, while each lowers the estimate (a forced stageOutput: one
/// stage, starting the graph). Run after quantization and fuseConvPool.
/// Returns the number of stages formed.
size_t formPatchStage(Graph &graph, const PatchStageOptions &options = {});

/// The graph transforms of --memory-opt `level`: >= 1 fuseConvPool, >= 2
/// also formPatchStage. Run after quantization and after CMSIS-NN
/// preparation (both must see the plain layers); plan the result at the
/// same level (PlanOptions::memoryOpt) and buffer alignment
/// (PlanOptions::bufferAlignment), which the passes' estimates take.
void runMemoryOptPasses(Graph &graph, int level, double patchRecomputeBudget,
                        uint64_t bufferAlignment);

struct PassOptions {
  bool foldBatchNorm = true;
  bool eliminateIdentities = true;
  bool fuseActivations = true;
  /// When set, asked before each fusion (see fuseActivations).
  MayFuseActivation mayFuseActivation;
};

/// What runDefaultPasses did, for --verbose output.
struct PassStats {
  size_t nodesBefore = 0;
  size_t nodesAfter = 0;
  size_t folded = 0;           ///< nodes evaluated at compile time
  size_t batchNormsFolded = 0; ///< BN nodes folded or lowered to Mul+Add
  size_t identitiesRemoved = 0;
  size_t activationsFused = 0;
  size_t deadNodesRemoved = 0;
};

/// One line: "passes: 53 -> 21 nodes (folded 28, batchnorm 2, ...)".
std::string describePassStats(const PassStats &stats);

/// Unrolls every LSTM, GRU and RNN over its static sequence into MatMul,
/// Slice, Sigmoid, Tanh, Mul and Add nodes (types unknown until the next
/// foldConstantsAndInferTypes). Returns how many were unrolled.
size_t expandRecurrentOps(Graph &graph);

/// fold+infer -> BN fold -> identities -> activation fusion -> dead code ->
/// topological sort -> verify -> inferGraphTypes again as a consistency check.
PassStats runDefaultPasses(Graph &graph, const PassOptions &options = PassOptions());

} // namespace bundlefit
