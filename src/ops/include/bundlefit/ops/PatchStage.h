//===- PatchStage.h - Patch-based execution of a high-resolution prefix -*- C++ -*-===//
//
// "PatchStage" (made by formPatchStage, --memory-opt >= 2; MCUNetV2's
// patch-based inference) replaces k consecutive nodes of a graph: the stage
// output is cut into a grid of spatial tiles, and for each tile the k layers
// run on tile-sized buffers (with the halos their windows need), so the big
// full-resolution intermediates never exist. Halos overlap between tiles:
// that recomputation is the price (countNodeMacs of the node includes it).
//
//   inputs   the body's external activations, then its data constants (weights,
//            biases) in first-use order: so the memory plan keeps them alive
//            and places them
//   output   the stage output (the k-th node's value: same name, same readers)
//   attrs    body     id of the PatchBody (the k original nodes, registered
//                     in this process)
//            grid_h, grid_w   tiles along H and W of the stage output
//
// The tile program (buildPatchProgram) is the single description of the
// execution: the interpreter runs it with the reference kernels, code
// generation emits the same kernel calls, the memory plan reserves its arena
// as the node's scratch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace bundlefit {

class OpRegistry;

inline constexpr const char *kPatchStageOp = "PatchStage";

/// The original nodes of a stage. Body nodes read main-graph values for the
/// stage's external inputs and data constants, and body-owned values for
/// everything computed inside (and for parameter constants such as Clip
/// bounds, copied with their bytes).
struct PatchBody {
  std::vector<std::unique_ptr<Value>> values;
  std::vector<std::unique_ptr<Node>> nodes; ///< Execution order.
  const Value *result = nullptr;            ///< Body value that is the stage output.
};

/// Keeps `body` for the life of the process; returns its id (attribute "body").
int64_t registerPatchBody(std::shared_ptr<PatchBody> body);
/// The body of a PatchStage node (throws an internal error if unknown).
std::shared_ptr<const PatchBody> patchBodyOf(const Node &stage);

/// A strided copy of `dims` ([C, rows, cols]) elements from `src` to `dst`
/// (element offsets and strides).
struct PatchCopy {
  const Value *src = nullptr, *dst = nullptr;
  int64_t srcOffset = 0, dstOffset = 0;
  std::vector<int64_t> dims, srcStrides, dstStrides;
};

/// One step of a tile: run `node` (a tile-sized copy of a body node) or copy.
struct PatchStep {
  const Node *node = nullptr; ///< Null: a copy.
  PatchCopy copy;
};

/// The execution of a stage, tile by tile. Tile buffers are synthetic values
/// owned here; each has an offset in the stage's arena (its scratch).
struct PatchProgram {
  std::vector<std::unique_ptr<Value>> values;
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::vector<PatchStep>> tiles;
  std::map<const Value *, uint64_t> arenaOffset;
  /// The int8 convolutions' im2col columns (int8ConvIm2colBytes, the largest
  /// of the body's), after the tile buffers; 0 bytes when none.
  uint64_t im2colOffset = 0, im2colBytes = 0;
  uint64_t arenaBytes = 0;
  uint64_t macs = 0; ///< Including the recomputed halos.
  /// Output columns of the narrowest convolution of any tile (0: none), and
  /// whether some convolution runs on tiles narrower than kWideTileColumns
  /// where its whole output is not.
  int64_t narrowestConvColumns = 0;
  bool narrowConvTiles = false;
};

/// Output columns below which a stride-1 convolution cannot take the 16-pixel
/// tiles of the AVX-512 host kernels (conv.c's BF_WIDE_PB): a patch stage
/// prefers tiles at least this wide (full-width row bands) where the bytes
/// allow (ResNet-8's 3-column tiles ran 0.43 ms for layers that take 0.19 ms
/// whole, for 1.27x the MACs).
inline constexpr int64_t kWideTileColumns = 16;
/// Output columns below which 64-bit hosts run a stride-1 or stride-2
/// convolution as flat runs across its rows (conv.c's bf_conv_blocks_flat and
/// bf_conv_phase_blocks) rather than lane-by-lane checked tiles: the lanes of
/// the halo columns are computed and dropped.
inline constexpr int64_t kFlatRunColumns = 8;

/// How much slower a stage's MACs run per doubling of its column splits
/// (patchTimeMacs). Rows are the contiguous axis: a split crops every input
/// band with strided copies, shortens each kernel row and recomputes halo
/// columns on every row. Fitted on host side-by-side CPU times (shared
/// machine) of the grids of equal peak: ResNet-8's first stage, 8x1 / 4x2 /
/// 8x2 / 3x3 / 2x4 / 1x8 tiles ran 0.91 / 1 / 1.06 / 1.12 / 1.12 / 1.16x the
/// model's 4x2 time for +27.4 / 16.6 / 33.5 / 16.9 / 16.6 / 27.4% MACs, the
/// order this factor gives; MobileNetV1-0.25's 4x3 ran 0.97x its 3x4.
inline constexpr double kColumnSplitTimeFactor = 0.6;
/// The same per doubling of its row bands (more kernel calls, fewer rows per
/// call): small, but it must tell ResNet-8's second stage's 5x5 tiles from
/// 8x4 (+40.6% and +51.3% MACs, 1 + 0.6 log2 5 and 1 + 0.6 log2 4: equal to
/// within 2% without it), and 8x4 ran 1.13x slower. At most 0.067, or
/// ResNet-8's 3x3 would come before its faster 8x2.
inline constexpr double kRowSplitTimeFactor = 0.05;
/// A grid past the recompute budget must be estimated at most this fraction
/// of the time of the stage's grid within it (formPatchStage): the estimate
/// errs by up to ~15% between grids of one peak. MobileNetV2-0.35's 6x2
/// tiles, estimated 0.89x its 4x3's time, ran 1.04x; MobileNetV1-0.25's 6x2,
/// 0.89x, ran 1.02x; ResNet-8's first stage's 8x1 row bands, 0.74x its 4x2,
/// ran 0.95x the model's time.
inline constexpr double kPastBudgetTimeRatio = 0.8;

/// The estimated time of a stage's tiles in MAC-equivalents: their MACs
/// (recomputed halos included) times 1 + kColumnSplitTimeFactor * log2(gridW)
/// + kRowSplitTimeFactor * log2(gridH). Grids of one peak are told apart by
/// it (fewer is faster).
double patchTimeMacs(const PatchProgram &program, int64_t gridH, int64_t gridW);

/// The tile program of `body` with its result cut into gridH x gridW tiles
/// and pasted into `stageOutput`. Throws Unsupported for a body it cannot tile.
std::unique_ptr<PatchProgram> buildPatchProgram(const PatchBody &body, const Value &stageOutput,
                                                int64_t gridH, int64_t gridW);
/// The program of a PatchStage node.
std::unique_ptr<PatchProgram> buildPatchProgram(const Node &stage);

/// Whether a body may contain `node` (Conv, Add, Relu, Clip, Quantize, Rescale,
/// int8 activation tables, on 4-D batch-1 tensors).
bool isPatchableNode(const Node &node);
/// Why isPatchableNode is false, in a phrase ("op GlobalAveragePool has no
/// patch form", "Mul broadcasts float32[1,32,1,1] to float32[1,32,112,112]");
/// empty when it is true. `plan -v` names the layers it leaves at the peak.
std::string whyNotPatchable(const Node &node);

/// Registers PatchStage's type inference and MACs (called by registerFusedOps).
void registerPatchStageOp(OpRegistry &registry);

} // namespace bundlefit
