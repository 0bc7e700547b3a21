//===- MemoryPlan.h - Where every tensor of a graph lives -------------------===//
//
// The bridge between the graph IR and the planner library: it orders the
// nodes, computes liveness, turns views and in-place operations into shared
// storage, and asks the planner for activation offsets and the weight layout.
// Code generation and reports read a MemoryPlan; they never re-plan.
//
// Glow's bundle has three regions, each allocated by the application:
//   constantWeight  weights (Flash or RAM)        CONSTANT_MEM_SIZE
//   mutableWeight   graph inputs then outputs     MUTABLE_MEM_SIZE
//   activations     intermediates + scratch       ACTIVATIONS_MEM_SIZE
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bundlefit {

enum class MemoryRegion : uint8_t { ConstantWeight, MutableWeight, Activations };
const char *regionName(MemoryRegion region);

/// A byte range inside one region.
struct Placement {
  MemoryRegion region = MemoryRegion::Activations;
  uint64_t offset = 0;
  uint64_t size = 0; ///< Bytes the tensor occupies (unaligned).
};

/// A run of the constant region that a part's memory map puts in one memory
/// region (`compile --device PART --weights ...`): the weights the fit placed
/// there, back to back in first-use order. Segments follow each other in
/// weights.bin, so Glow's one-pointer entry still works on the whole file,
/// and the split entry (<net>_placed) takes one pointer per segment.
struct WeightSegment {
  std::string region;                   ///< The part's memory region: "FLASH", "DTCM".
  uint64_t offset = 0;                  ///< Start in constantWeight (weights.bin); 64-aligned.
  uint64_t size = 0;                    ///< Bytes (each constant padded to 64).
  bool copiedToRam = false;             ///< Its image sits in Flash and start-up copies it here.
  std::vector<const Value *> constants; ///< In weights.bin order.
};

/// Kernel workspace a node needs while it runs (e.g. CMSIS-NN's buffer).
struct ScratchBuffer {
  const Node *node = nullptr;
  Placement placement;
};

/// One activation buffer as planned: the tensor it holds and its lifetime in
/// schedule steps (indices into MemoryPlan::schedule, inclusive).
struct PlannedBuffer {
  const Value *value = nullptr;
  Placement placement;
  int first = 0;
  int last = 0;
};

struct MemoryPlan {
  /// Glow's alignment: of each region's base (<NET>_MEM_ALIGN), of every
  /// constant and placeholder, and of activation buffers unless
  /// PlanOptions::bufferAlignment says otherwise.
  static constexpr uint64_t kAlignment = 64;
  /// The range of PlanOptions::bufferAlignment. 16 is the least: it covers
  /// every element type bundlefit computes in (int64 scratch, double: 8),
  /// 128-bit SIMD loads (SSE on the host, Helium and NEON), CMSIS-NN's
  /// buffers (4) and TFLite Micro's own tensor alignment
  /// (MicroArenaBufferAlignment(), 16).
  static constexpr uint64_t kMinBufferAlignment = 16;
  static constexpr uint64_t kMaxBufferAlignment = 4096;
  /// The alignment of every activation buffer's and workspace's offset in
  /// the arena (PlanOptions::bufferAlignment).
  uint64_t bufferAlignment = kAlignment;

  /// Nodes in execution order (may differ from the graph's order when the
  /// memory-aware scheduler found a better one). Views are included.
  std::vector<const Node *> schedule;
  /// Storage of every value that a scheduled node reads or writes. A view
  /// (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout) and an
  /// in-place result share the placement of the value they alias.
  std::map<const Value *, Placement> placements;
  std::vector<PlannedBuffer> buffers;      ///< Activation buffers (owners only).
  std::vector<ScratchBuffer> scratch;      ///< Kernel workspaces.
  std::vector<const Value *> constants;    ///< In first-use order (= layout unless split).
  std::vector<const Value *> placeholders; ///< Inputs, then outputs.

  uint64_t constantSize = 0;
  uint64_t mutableSize = 0;
  uint64_t activationsSize = 0;
  uint64_t activationsLowerBound = 0;
  std::string allocator; ///< Which planner algorithm produced the arena.
  /// How the node order was chosen: "model order", "exact-dp", "beam", or
  /// "model order: too large to reorder" (past the search's work limit).
  std::string scheduleMethod;
  /// planner::proofOf the activation plan: "proven optimal", "proven to fit"
  /// (PlanOptions::activationCapacity), "proven not to fit" or "best effort".
  std::string activationsProof;
  /// The capacity the search targeted (PlanOptions), 0 for none.
  uint64_t activationCapacity = 0;
  /// What ended the activation search before it proved its plan: "" (it
  /// did not stop early), "time", "work" (the work the time limit allows)
  /// or "nodes"; and the step it was in (planner::Plan::stoppedIn).
  std::string activationsStoppedBy, activationsStoppedIn;
  /// Work units the planner spent (planner::Plan::workUnits).
  uint64_t activationsWorkUnits = 0;

  /// Empty: Glow's single constantWeight region. Else one entry per memory
  /// region holding weights, in weights.bin order (splitWeightSegments).
  std::vector<WeightSegment> weightSegments;
  /// With weightSegments: the Flash region holding the images of segments
  /// copied to RAM, and what placed them ("rt1062, weights auto"), for the
  /// generated files' comments.
  std::string weightImageRegion, weightPlacementSource;

  const Placement &placementOf(const Value *value) const;
  /// The segment holding constantWeight byte `offset` (index into
  /// weightSegments; 0 when there are none).
  size_t segmentAt(uint64_t offset) const;
  bool hasPlacement(const Value *value) const { return placements.count(value) != 0; }
  /// The workspace planned for `node`, or nullptr when it has none.
  const Placement *scratchOf(const Node *node) const;
};

/// Whether a node is a view: its output aliases its first input byte for
/// byte, so it needs no code and no storage of its own.
bool isViewNode(const Node &node);

/// The value whose storage `value` uses: itself, or the source of its view(s).
const Value *storageOwner(const Value *value);

/// The --memory-opt level bundlefit's commands use when none is given: the
/// lowest memory, proved equal to level 0 on the reference models (README).
/// PlanOptions itself defaults to 0, Glow's layout, so library callers (the
/// device calibration against Glow's published sizes) get what they ask for.
inline constexpr int kDefaultMemoryOpt = 2;
inline constexpr int kMaxMemoryOpt = 2;

struct PlanOptions {
  /// The time limit (seconds) of the whole command. The activation
  /// planner's work count is the whole limit's (so its plan does not depend
  /// on the load); its clock gets what is left once the order search and
  /// secondsSpentBefore are taken off.
  double exactTimeBudgetSeconds = 5.0;
  /// Seconds of exactTimeBudgetSeconds the caller spent before
  /// planGraphMemory (loading the model, graph passes).
  double secondsSpentBefore = 0;
  bool reorderForMemory = true; ///< Memory-aware topological order.
  /// Work bound of the order search (planner::OrderOptions::maxWork).
  uint64_t orderWorkBudget = 30'000'000;
  bool allowInPlace = true; ///< Elementwise ops overwrite a dying input.
  /// Going below the layer-by-layer bound (README "Memory optimisation"):
  /// 0 = as before; 1 = also depthwise convs overwrite a dying input plane
  /// by plane (one-plane scratch), 1x1 convs pixel block by pixel block
  /// (scratch for one block in and out), and ConvPool nodes (made by fuseConvPool,
  /// which the caller runs on the graph at level >= 1) get their scratch row.
  int memoryOpt = 0;
  /// For callers that also run the level's graph passes on a copy (the
  /// device database sizing int8 builds): runMemoryOptPasses' budget.
  double patchRecomputeBudget = 0.2;
  /// Bytes the activation arena must fit in (a device's activation region);
  /// 0 = none. The planner then looks for a fit first and minimises with the
  /// time left; activationsSize > activationCapacity means no fit was found.
  uint64_t activationCapacity = 0;
  /// Rooms the arena could go in, in order of preference (a part's RAM
  /// regions, fastest first, as `fit` places it): when activationCapacity is
  /// 0, the capacity is the first room not below the arena's lower bound.
  std::vector<uint64_t> activationRooms;
  /// Offsets of activation buffers and kernel workspaces in the arena are
  /// multiples of this: a power of two, kMinBufferAlignment to
  /// kMaxBufferAlignment. Glow's 64 by default; bundlefit's commands take a
  /// TFLite model's 16 (planOptionsFor). The arena's base, the weights and
  /// the placeholders stay 64-aligned whatever it is.
  uint64_t bufferAlignment = MemoryPlan::kAlignment;
};

/// Plans all three regions of a type-inferred, pass-optimised graph.
MemoryPlan planGraphMemory(const Graph &graph, const PlanOptions &options = {});

/// Lays the constant region out again in segments: `regionOf[i]` names the
/// memory region of plan.constants[i]; segments follow `regionOrder` (regions
/// without weights are left out), constants keep their relative order inside
/// each; plan.constants keeps its order. `copied` are the regions whose weights start-up copies
/// from Flash. CONSTANT's size is unchanged. Throws Error(Usage) for a region named in regionOf but
/// not in regionOrder.
void splitWeightSegments(MemoryPlan &plan, const std::vector<std::string> &regionOf,
                         const std::vector<std::string> &regionOrder,
                         const std::vector<std::string> &copied);

} // namespace bundlefit
