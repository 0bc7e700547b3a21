//===- MemoryPlan.cpp - Plan the three bundle regions of a graph -----------===//
//
// Order of work: fix the schedule, give placeholders and constants their
// offsets (simple, Glow-compatible layouts), then hand the activations to the
// planner library as buffers with lifetimes in schedule steps.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/schedule/MemoryPlan.h"

#include "InPlacePlanning.h"

#include "bundlefit/ops/FusedOps.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/planner/CheckedArithmetic.h"
#include "bundlefit/planner/Planner.h"
#include "bundlefit/planner/WeightLayout.h"
#include "bundlefit/schedule/Schedule.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <chrono>
#include <set>

namespace bundlefit {

namespace {

/// Ops whose output element i depends only on input element i (after
/// broadcasting), so the output may overwrite a same-shaped input.
bool isElementwise(const Node &node) { return hasOpTrait(node.opType, kOpElementwise); }

/// Mutable region: graph inputs first, then outputs, each 64-aligned (Glow's
/// layout, whatever PlanOptions::bufferAlignment is).
void placePlaceholders(const Graph &graph, MemoryPlan &plan) {
  uint64_t offset = 0;
  auto place = [&](const Value *value) {
    if (plan.hasPlacement(value))
      return;
    plan.placements[value] = {MemoryRegion::MutableWeight, offset, value->type.bytes()};
    plan.placeholders.push_back(value);
    offset += alignUp(value->type.bytes(), MemoryPlan::kAlignment);
  };
  for (const Value *input : graph.inputs())
    place(input);
  for (const Value *output : graph.outputs())
    place(output);
  plan.mutableSize = offset;
}

/// Constant region: data constants in first-use order, each 64-aligned.
/// Parameter operands (shapes, axes, bounds) are compiled into the code.
void placeConstants(MemoryPlan &plan) {
  std::vector<const Value *> ordered;
  std::set<const Value *> seen;
  for (const Node *node : plan.schedule) {
    if (isViewNode(*node))
      continue;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const Value *input = node->inputs[i];
      if (!input || !input->isConstant() || isParameterOperand(*node, i))
        continue;
      if (seen.insert(input).second)
        ordered.push_back(input);
    }
  }
  std::vector<planner::Constant> constants;
  for (size_t i = 0; i < ordered.size(); ++i)
    constants.push_back({int(i), ordered[i]->type.bytes(), int(i)});
  planner::WeightLayout layout = planner::layoutWeights(constants, MemoryPlan::kAlignment);
  for (size_t i = 0; i < ordered.size(); ++i)
    plan.placements[ordered[i]] = {MemoryRegion::ConstantWeight, layout.placements[i].offset,
                                   constants[i].size};
  plan.constants = ordered;
  plan.constantSize = layout.total;
}

/// The planner only takes problems whose sizes it can add up without
/// wrapping (planner::checkProblem); a tensor that claims more is an input
/// error, named here, not a crash in the planner.
void rejectOversizedBuffers(const planner::Problem &problem,
                            const std::map<const Value *, int> &bufferOf) {
  std::optional<std::string> malformed = planner::checkProblem(problem);
  if (!malformed)
    return;
  uint64_t total = 0, bytes = 0;
  for (const auto &[value, index] : bufferOf) {
    const planner::Buffer &b = problem.buffers[index];
    if (!planner::checkedAlignUp(b.size, b.alignment, bytes) ||
        !planner::checkedAdd(total, bytes, total) || total > planner::kMaxPlannerBytes)
      throw Error(ExitCode::BadInputFile, "tensor '" + value->name + "' (" +
                                              std::to_string(b.size) +
                                              " bytes): activations need more than 2^62 bytes");
  }
  throw Error(ExitCode::BadInputFile, "activation buffers: " + *malformed);
}

// Checking the plan is O(n log n): kept out of the planner's share of the
// limit (about 0.6 s for 10^6 buffers on a shared 2-core machine).
double plannerCheckReserve(size_t buffers) { return 0.02 + 1.2e-6 * double(buffers); }

/// `secondsSpent`: of the time limit, before the planner starts.
void placeActivations(MemoryPlan &plan, const PlanOptions &options, double secondsSpent) {
  // Buffers: every owner that is an intermediate and not a placeholder.
  std::map<const Value *, int> bufferOf;
  planner::Problem problem;
  for (int step = 0; step < int(plan.schedule.size()); ++step) {
    const Node *node = plan.schedule[step];
    for (const Value *output : node->outputs) {
      if (storageOwner(output) != output || plan.hasPlacement(output))
        continue;
      bufferOf[output] = int(problem.buffers.size());
      problem.buffers.push_back(
          {int(problem.buffers.size()), output->type.bytes(), plan.bufferAlignment, step, step});
    }
    for (const Value *input : node->inputs) {
      if (!input)
        continue;
      auto it = bufferOf.find(storageOwner(input));
      if (it != bufferOf.end())
        problem.buffers[it->second].last = step;
    }
  }
  // In-place: an elementwise output may take a same-shaped input that dies here.
  if (options.allowInPlace) {
    for (int step = 0; step < int(plan.schedule.size()); ++step) {
      const Node *node = plan.schedule[step];
      if (!isElementwise(*node) || !bufferOf.count(node->output()))
        continue;
      int out = bufferOf[node->output()];
      for (const Value *input : node->inputs) {
        auto it = input ? bufferOf.find(storageOwner(input)) : bufferOf.end();
        if (it == bufferOf.end() || !input->type.sameShapeAndType(node->output()->type))
          continue;
        const planner::Buffer &candidate = problem.buffers[it->second];
        if (candidate.last != step || candidate.size != problem.buffers[out].size)
          continue;
        problem.inPlace.push_back({out, it->second, /*shift=*/0, /*access=*/{}});
        break;
      }
    }
  }

  // --memory-opt >= 1: in-place depthwise and 1x1 convolutions and pools
  // overlapping their input, those that pay for themselves. Fused nodes (FusedOps.h) always need
  // their workspace, whatever the level.
  rejectOversizedBuffers(problem, bufferOf);
  std::map<const Node *, uint64_t> scratchBytes;
  for (const Node *node : plan.schedule)
    if (uint64_t bytes = nodeScratchBytes(*node))
      scratchBytes[node] = bytes;
  std::vector<InPlaceOp> chosen, dropped;
  if (options.memoryOpt >= 1 && options.allowInPlace) {
    const std::vector<InPlaceOp> candidates = inPlaceCandidates(plan, problem, bufferOf);
    const uint64_t a = plan.bufferAlignment;
    chosen = chooseInPlaceOps(problem, candidates, scratchBytes, plan.schedule, a, false);
    dropped = chooseInPlaceOps(problem, candidates, scratchBytes, plan.schedule, a, true);
  }
  const planner::Problem base = problem;
  const auto started = std::chrono::steady_clock::now();
  planner::PlanOptions plannerOptions;
  std::vector<std::pair<const Node *, int>> scratchOf;
  auto planWith = [&](const std::vector<InPlaceOp> &ops, planner::Problem &out,
                      std::vector<std::pair<const Node *, int>> &outScratch) {
    outScratch.clear();
    out = withInPlaceOps(base, ops, scratchBytes, plan.schedule, plan.bufferAlignment, &outScratch);
    rejectOversizedBuffers(out, bufferOf); // Now with the workspaces.
    // The work the whole limit allows, the clock only what is left of it.
    double limit = std::max(0.0, options.exactTimeBudgetSeconds);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    plannerOptions = {};
    plannerOptions.exact.workLimit = std::max<uint64_t>(
        1, uint64_t(std::min(limit, 1e7) * double(planner::kWorkUnitsPerSecond)));
    plannerOptions.exact.timeBudgetSeconds =
        std::max(0.0, limit - secondsSpent - elapsed - plannerCheckReserve(out.buffers.size()));
    plannerOptions.exact.capacity = options.activationCapacity;
    if (plannerOptions.exact.capacity == 0 && !options.activationRooms.empty()) {
      uint64_t bound = planner::computeLowerBound(out);
      for (uint64_t room : options.activationRooms)
        if (room >= bound) {
          plannerOptions.exact.capacity = room;
          break;
        }
    }
    planner::Plan planned = planner::planMemory(out, plannerOptions);
    if (auto problemText = planner::checkPlan(out, planned))
      fatalInternal("activation plan failed its check: " + *problemText);
    return planned;
  };
  planner::Plan result = planWith(chosen, problem, scratchOf);
  // The greedy plan that judged the dropped depthwise convs is not the final
  // planner: the final planner judges (MobileNetV3-small int8 level 2:
  // 362,048 -> 250,880 B; MobileNetV2 int8 would lose 3,456 B).
  auto nodesOf = [](const std::vector<InPlaceOp> &ops) {
    std::vector<const Node *> nodes;
    for (const InPlaceOp &op : ops)
      nodes.push_back(op.node);
    return nodes;
  };
  if (nodesOf(dropped) != nodesOf(chosen)) {
    planner::Problem other;
    std::vector<std::pair<const Node *, int>> otherScratch;
    const planner::PlanOptions kept = plannerOptions;
    planner::Plan alternative = planWith(dropped, other, otherScratch);
    if (alternative.arenaSize < result.arenaSize) {
      result = std::move(alternative);
      problem = std::move(other);
      scratchOf = std::move(otherScratch);
    } else {
      plannerOptions = kept;
    }
  }

  for (const auto &[value, index] : bufferOf) {
    Placement placement{MemoryRegion::Activations, result.offsets[index], value->type.bytes()};
    plan.placements[value] = placement;
    const planner::Buffer &buffer = problem.buffers[index];
    plan.buffers.push_back({value, placement, buffer.first, buffer.last});
  }
  for (const auto &[node, index] : scratchOf)
    plan.scratch.push_back(
        {node, {MemoryRegion::Activations, result.offsets[index], problem.buffers[index].size}});
  std::sort(plan.buffers.begin(), plan.buffers.end(),
            [](const PlannedBuffer &a, const PlannedBuffer &b) {
              return a.first != b.first ? a.first < b.first : a.value->name < b.value->name;
            });
  plan.activationsSize = result.arenaSize;
  plan.activationsLowerBound = result.lowerBound;
  plan.allocator = result.algorithm;
  plan.activationCapacity = plannerOptions.exact.capacity;
  plan.activationsProof = planner::proofOf(result, plan.activationCapacity);
  plan.activationsStoppedBy = result.stoppedBy;
  plan.activationsStoppedIn = result.stoppedIn;
  plan.activationsWorkUnits = result.workUnits;
}

/// Views (and in-place results) inherit their owner's placement.
void placeViews(MemoryPlan &plan) {
  for (const Node *node : plan.schedule)
    for (const Value *output : node->outputs) {
      if (plan.hasPlacement(output))
        continue;
      const Value *owner = storageOwner(output);
      if (!plan.hasPlacement(owner))
        fatalInternal("value '" + output->name + "' has no storage");
      Placement placement = plan.placementOf(owner);
      placement.size = output->type.bytes();
      plan.placements[output] = placement;
    }
}

} // namespace

const char *regionName(MemoryRegion region) {
  switch (region) {
  case MemoryRegion::ConstantWeight:
    return "constantWeight";
  case MemoryRegion::MutableWeight:
    return "mutableWeight";
  case MemoryRegion::Activations:
    return "activations";
  }
  return "?";
}

const Placement &MemoryPlan::placementOf(const Value *value) const {
  auto it = placements.find(value);
  if (it == placements.end())
    fatalInternal("no placement for value '" + value->name + "'");
  return it->second;
}

const Placement *MemoryPlan::scratchOf(const Node *node) const {
  for (const ScratchBuffer &buffer : scratch)
    if (buffer.node == node)
      return &buffer.placement;
  return nullptr;
}

const Value *storageOwner(const Value *value) {
  while (value->producer && isViewNode(*value->producer))
    value = value->producer->inputs[0];
  return value;
}

bool isViewNode(const Node &node) {
  if (!isViewOp(node.opType) || node.outputs.empty() || node.inputs.empty())
    return false;
  // A placeholder needs its own bytes: copying into it is not a view. Nor is
  // a view of a constant (its bytes live in another region).
  const Value *input = node.inputs[0];
  return !node.output()->isGraphOutput && input && !input->isConstant();
}

MemoryPlan planGraphMemory(const Graph &graph, const PlanOptions &options) {
  const uint64_t a = options.bufferAlignment;
  if (a < MemoryPlan::kMinBufferAlignment || a > MemoryPlan::kMaxBufferAlignment || (a & (a - 1)))
    throw Error(ExitCode::Usage, "buffer alignment " + std::to_string(a) +
                                     ": expected a power of two from " +
                                     std::to_string(MemoryPlan::kMinBufferAlignment) + " to " +
                                     std::to_string(MemoryPlan::kMaxBufferAlignment));
  MemoryPlan plan;
  plan.bufferAlignment = a;
  auto start = std::chrono::steady_clock::now();
  plan.schedule = chooseSchedule(graph, options.reorderForMemory, &plan.scheduleMethod,
                                 options.orderWorkBudget, a);
  placePlaceholders(graph, plan);
  placeConstants(plan);
  double ordering = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  placeActivations(plan, options, options.secondsSpentBefore + ordering);
  placeViews(plan);
  return plan;
}

} // namespace bundlefit
