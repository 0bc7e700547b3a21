//===- MemoryPlan.cpp - Plan the three bundle regions of a graph -----------===//
//
// Order of work: fix the schedule, give placeholders and constants their
// offsets (simple, Glow-compatible layouts), then hand the activations to the
// planner library as buffers with lifetimes in schedule steps.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/schedule/MemoryPlan.h"

#include "bundlefit/ir/FusedOps.h"
#include "bundlefit/ir/InPlaceOps.h"
#include "bundlefit/ir/OpRegistry.h"
#include "bundlefit/planner/Planner.h"
#include "bundlefit/planner/WeightLayout.h"
#include "bundlefit/schedule/Schedule.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <set>

namespace bundlefit {

namespace {

uint64_t alignUp(uint64_t value) {
  return (value + MemoryPlan::kAlignment - 1) / MemoryPlan::kAlignment *
         MemoryPlan::kAlignment;
}

/// Ops whose output element i depends only on input element i (after
/// broadcasting), so the output may overwrite a same-shaped input.
bool isElementwise(const Node &node) {
  static const std::set<std::string> ops = {
      "Relu", "Clip", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish",
      "Exp", "Sqrt", "Add", "Sub", "Mul", "Div", "Max", "Min", "PRelu",
      "BatchNormalization"};
  return ops.count(node.opType) != 0;
}

/// bf_depthwise_inplace_*: plane p is read into scratch, then written; later
/// planes are read only from input plane p + 1 on.
std::vector<planner::AccessPhase> depthwiseAccess(const Node &node) {
  const TensorType &x = node.input(0)->type, &y = node.output()->type;
  const uint64_t planes = uint64_t(x.shape[0] * x.shape[1]), es = dtypeSize(x.dtype);
  const uint64_t in = uint64_t(x.shape[2] * x.shape[3]) * es;
  const uint64_t out = uint64_t(y.shape[2] * y.shape[3]) * es;
  std::vector<planner::AccessPhase> phases;
  for (uint64_t p = 0; p < planes; ++p) {
    planner::AccessPhase phase;
    phase.writes.push_back({p * out, out, 0, 1});
    if (p + 1 < planes)
      phase.readsFromHere.push_back({(p + 1) * in, (planes - p - 1) * in, 0, 1});
    phases.push_back(std::move(phase));
  }
  return phases;
}

/// bf_pointwise_inplace_*: pixel block [p0, p1) of every input plane is read
/// into scratch, then written in every output plane; later blocks read only
/// pixels from p1 on. Output plane m thus lands on input pixels already read
/// (proved by the planner's checker, not assumed).
std::vector<planner::AccessPhase> pointwiseAccess(const Node &node, uint64_t block) {
  const TensorType &x = node.input(0)->type, &y = node.output()->type;
  const uint64_t es = dtypeSize(x.dtype), pixels = uint64_t(x.shape[2] * x.shape[3]);
  const uint64_t plane = pixels * es, C = uint64_t(x.shape[1]), M = uint64_t(y.shape[1]);
  std::vector<planner::AccessPhase> phases;
  for (uint64_t p0 = 0; p0 < pixels; p0 += block) {
    const uint64_t p1 = std::min(pixels, p0 + block);
    planner::AccessPhase phase;
    phase.writes.push_back({p0 * es, (p1 - p0) * es, plane, M});
    if (p1 < pixels)
      phase.readsFromHere.push_back({p1 * es, (pixels - p1) * es, plane, C});
    phases.push_back(std::move(phase));
  }
  return phases;
}

/// Mutable region: graph inputs first, then outputs, each 64-aligned.
void placePlaceholders(const Graph &graph, MemoryPlan &plan) {
  uint64_t offset = 0;
  auto place = [&](const Value *value) {
    if (plan.hasPlacement(value))
      return;
    plan.placements[value] = {MemoryRegion::MutableWeight, offset, value->type.bytes()};
    plan.placeholders.push_back(value);
    offset += alignUp(value->type.bytes());
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
    plan.placements[ordered[i]] = {MemoryRegion::ConstantWeight,
                                   layout.placements[i].offset, constants[i].size};
  plan.constants = ordered;
  plan.constantSize = layout.total;
}

/// The value whose storage `value` uses: itself, or the source of a view.
const Value *storageOwner(const Value *value) {
  while (value->producer && isViewNode(*value->producer))
    value = value->producer->inputs[0];
  return value;
}

/// An operator that may write its output over its dying input (a
/// convolution in place, or a pool overlapping it), with the kernel's access
/// pattern (in the hint) and the workspace it then needs.
struct InPlaceOp {
  const Node *node = nullptr;
  planner::InPlaceHint hint;
  uint64_t scratch = 0;
};

/// bf_maxpool2d_* / bf_avgpool2d_*, one output row at a time: the output may
/// start before the input by the margin the rows allow (rounded to the
/// arena's alignment): each row's writes end below the first input byte it
/// or a later row reads.
std::vector<planner::AccessPhase> poolAccess(const Node &node) {
  const uint64_t inputBytes = node.input(0)->type.bytes();
  std::vector<planner::AccessPhase> phases;
  for (const PoolRowAccess &row : poolRowAccess(node))
    phases.push_back(planner::streamingPhase(row.writeEnd, row.readBegin, inputBytes));
  return phases;
}

std::vector<InPlaceOp> inPlaceCandidates(const MemoryPlan &plan, const planner::Problem &problem,
                                         const std::map<const Value *, int> &bufferOf) {
  std::vector<InPlaceOp> candidates;
  for (int step = 0; step < int(plan.schedule.size()); ++step) {
    const Node *node = plan.schedule[step];
    const bool isPool = poolMayOverlapInput(*node);
    if (!(isPool || hasInPlaceConvKernel(*node)) || !bufferOf.count(node->output()))
      continue;
    auto it = bufferOf.find(storageOwner(node->input(0)));
    if (it == bufferOf.end() || problem.buffers[it->second].last != step)
      continue;
    InPlaceOp op{node, {bufferOf.at(node->output()), it->second, 0, {}}, 0};
    if (isPool) {
      op.hint.access = poolAccess(*node);
      const int64_t margin = planner::maxSafeShift(op.hint.access);
      const int64_t a = int64_t(MemoryPlan::kAlignment); // The shift keeps both aligned.
      op.hint.shift = margin >= 0 ? margin / a * a : -((-margin + a - 1) / a * a);
    } else if ((op.scratch = depthwiseInPlaceScratch(*node))) {
      op.hint.access = depthwiseAccess(*node);
    } else if (int64_t block = pointwiseInPlaceBlock(*node)) {
      op.hint.access = pointwiseAccess(*node, uint64_t(block));
      op.scratch = pointwiseInPlaceScratch(*node);
    } else {
      continue;
    }
    candidates.push_back(std::move(op));
  }
  return candidates;
}

/// `base` plus the chosen in-place hints and one workspace buffer, live on
/// its node's step only, per node that needs one (fused nodes' in
/// `scratchBytes`, the chosen convs' own). `scratchOf` gets node -> buffer.
planner::Problem withInPlaceOps(const planner::Problem &base, const std::vector<InPlaceOp> &chosen,
                                std::map<const Node *, uint64_t> scratchBytes,
                                const std::vector<const Node *> &schedule,
                                std::vector<std::pair<const Node *, int>> *scratchOf) {
  planner::Problem problem = base;
  for (const InPlaceOp &op : chosen) {
    problem.inPlace.push_back(op.hint);
    if (op.scratch)
      scratchBytes[op.node] = op.scratch;
  }
  for (int step = 0; step < int(schedule.size()); ++step) {
    auto it = scratchBytes.find(schedule[step]);
    if (it == scratchBytes.end())
      continue;
    if (scratchOf)
      scratchOf->push_back({it->first, int(problem.buffers.size())});
    problem.buffers.push_back({int(problem.buffers.size()), it->second,
                               MemoryPlan::kAlignment, step, step});
  }
  return problem;
}

/// In-place operators are not free: the planner keeps an in-place chain
/// as one block as large as its largest member for the chain's whole life,
/// and each needs a workspace. Depthwise ones (a workspace of one plane,
/// output no larger than input) are always taken; each 1x1 conv and pool, in
/// schedule order, only when the (greedy) plan is no larger with it than
/// without.
std::vector<InPlaceOp> chooseInPlaceOps(const planner::Problem &base,
                                        const std::vector<InPlaceOp> &candidates,
                                        const std::map<const Node *, uint64_t> &scratchBytes,
                                        const std::vector<const Node *> &schedule) {
  planner::PlanOptions greedyOnly;
  greedyOnly.useExact = false;
  auto arenaWith = [&](const std::vector<InPlaceOp> &chosen) {
    planner::Problem problem = withInPlaceOps(base, chosen, scratchBytes, schedule, nullptr);
    if (!chosen.empty() && !planner::honouredInPlaceHints(problem).back())
      return UINT64_MAX; // Its input already has an in-place output.
    return planner::planMemory(problem, greedyOnly).arenaSize;
  };
  std::vector<InPlaceOp> chosen;
  for (const InPlaceOp &candidate : candidates)
    if (depthwiseInPlaceScratch(*candidate.node))
      chosen.push_back(candidate);
  uint64_t best = arenaWith(chosen);
  for (const InPlaceOp &candidate : candidates) {
    if (depthwiseInPlaceScratch(*candidate.node))
      continue;
    chosen.push_back(candidate);
    uint64_t arena = arenaWith(chosen);
    if (arena <= best)
      best = arena;
    else
      chosen.pop_back();
  }
  return chosen;
}

void placeActivations(MemoryPlan &plan, const PlanOptions &options) {
  // Buffers: every owner that is an intermediate and not a placeholder.
  std::map<const Value *, int> bufferOf;
  planner::Problem problem;
  for (int step = 0; step < int(plan.schedule.size()); ++step) {
    const Node *node = plan.schedule[step];
    for (const Value *output : node->outputs) {
      if (storageOwner(output) != output || plan.hasPlacement(output))
        continue;
      bufferOf[output] = int(problem.buffers.size());
      problem.buffers.push_back({int(problem.buffers.size()), output->type.bytes(),
                                 MemoryPlan::kAlignment, step, step});
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
        problem.inPlace.push_back({out, it->second});
        break;
      }
    }
  }

  // --memory-opt >= 1: in-place depthwise and 1x1 convolutions and pools
  // overlapping their input, those that pay for themselves. Fused nodes (FusedOps.h) always need their
  // workspace, whatever the level.
  std::map<const Node *, uint64_t> scratchBytes;
  for (const Node *node : plan.schedule)
    if (uint64_t bytes = nodeScratchBytes(*node))
      scratchBytes[node] = bytes;
  std::vector<InPlaceOp> chosen;
  if (options.memoryOpt >= 1 && options.allowInPlace)
    chosen = chooseInPlaceOps(problem, inPlaceCandidates(plan, problem, bufferOf),
                                scratchBytes, plan.schedule);
  std::vector<std::pair<const Node *, int>> scratchOf;
  problem = withInPlaceOps(problem, chosen, scratchBytes, plan.schedule, &scratchOf);

  planner::PlanOptions plannerOptions;
  plannerOptions.exact.timeBudgetSeconds = options.exactTimeBudgetSeconds;
  planner::Plan result = planner::planMemory(problem, plannerOptions);
  if (auto problemText = planner::checkPlan(problem, result))
    fatalInternal("activation plan failed its check: " + *problemText);

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
  case MemoryRegion::ConstantWeight: return "constantWeight";
  case MemoryRegion::MutableWeight: return "mutableWeight";
  case MemoryRegion::Activations: return "activations";
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

bool isViewNode(const Node &node) {
  static const std::set<std::string> views = {"Reshape", "Flatten", "Squeeze",
                                              "Unsqueeze", "Identity", "Dropout"};
  if (!views.count(node.opType) || node.outputs.empty() || node.inputs.empty())
    return false;
  // A placeholder needs its own bytes: copying into it is not a view. Nor is
  // a view of a constant (its bytes live in another region).
  const Value *input = node.inputs[0];
  return !node.output()->isGraphOutput && input && !input->isConstant();
}

MemoryPlan planGraphMemory(const Graph &graph, const PlanOptions &options) {
  MemoryPlan plan;
  plan.schedule = chooseSchedule(graph, options.reorderForMemory);
  placePlaceholders(graph, plan);
  placeConstants(plan);
  placeActivations(plan, options);
  placeViews(plan);
  return plan;
}

} // namespace bundlefit
