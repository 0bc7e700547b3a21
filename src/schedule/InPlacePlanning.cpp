//===- InPlacePlanning.cpp - Outputs written over their dying inputs ------===//
//
// --memory-opt >= 1: which operators of the schedule write over their dying
// input, each with its kernel's access pattern (which bytes each phase
// writes, which it may still read) so the planner's checker proves the
// overlap rather than trusting it, and which of them pay for themselves.
//
//===----------------------------------------------------------------------===//
#include "InPlacePlanning.h"

#include "bundlefit/ops/InPlaceOps.h"
#include "bundlefit/planner/Planner.h"

#include <algorithm>

namespace bundlefit {

namespace {

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

/// bf_pointwise_inplace_*: pixel block [p0, p1) of every input plane is
/// read (float: from p0 for a whole block, past p1 in the first one) to
/// compute the block of every output plane into scratch, which is then
/// written; later blocks read only pixels from p1 on. Output plane m thus
/// lands on input pixels already read (proved by the planner's checker, not
/// assumed).
std::vector<planner::AccessPhase> pointwiseAccess(const Node &node, uint64_t block, uint64_t lead) {
  const TensorType &x = node.input(0)->type, &y = node.output()->type;
  const uint64_t es = dtypeSize(x.dtype), pixels = uint64_t(x.shape[2] * x.shape[3]);
  const uint64_t plane = pixels * es, C = uint64_t(x.shape[1]), M = uint64_t(y.shape[1]);
  std::vector<planner::AccessPhase> phases;
  for (uint64_t p0 = 0, n = lead; p0 < pixels; p0 += n, n = block) {
    const uint64_t p1 = std::min(pixels, p0 + n);
    planner::AccessPhase phase;
    phase.writes.push_back({p0 * es, (p1 - p0) * es, plane, M});
    if (p1 < pixels)
      phase.readsFromHere.push_back({p1 * es, (pixels - p1) * es, plane, C});
    phases.push_back(std::move(phase));
  }
  return phases;
}

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

} // namespace

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
      const int64_t a = int64_t(plan.bufferAlignment); // The shift keeps both aligned.
      op.hint.shift = margin >= 0 ? margin / a * a : -((-margin + a - 1) / a * a);
    } else if ((op.scratch = depthwiseInPlaceScratch(*node))) {
      op.hint.access = depthwiseAccess(*node);
    } else if (int64_t block = pointwiseInPlacePixels(*node)) {
      op.hint.access =
          pointwiseAccess(*node, uint64_t(block), uint64_t(pointwiseInPlaceLead(*node)));
      op.scratch = pointwiseInPlaceScratch(*node);
    } else {
      continue;
    }
    candidates.push_back(std::move(op));
  }
  return candidates;
}

planner::Problem withInPlaceOps(const planner::Problem &base, const std::vector<InPlaceOp> &chosen,
                                std::map<const Node *, uint64_t> scratchBytes,
                                const std::vector<const Node *> &schedule, uint64_t alignment,
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
    problem.buffers.push_back({int(problem.buffers.size()), it->second, alignment, step, step});
  }
  return problem;
}

/// In-place operators are not free: the planner keeps an in-place chain
/// as one block as large as its largest member for the chain's whole life,
/// and each needs a workspace. Depthwise ones (a workspace of one plane,
/// output no larger than input) are taken (with `dropDepthwise`, each left
/// out again where the greedy plan is smaller without it); each 1x1 conv and
/// pool, in schedule order, only when the (greedy) plan is no larger with it
/// than without; then each 1x1 conv is left out again where the plan is no
/// larger without it (its kernel is slower than the conv's own).
std::vector<InPlaceOp> chooseInPlaceOps(const planner::Problem &base,
                                        const std::vector<InPlaceOp> &candidates,
                                        const std::map<const Node *, uint64_t> &scratchBytes,
                                        const std::vector<const Node *> &schedule,
                                        uint64_t alignment, bool dropDepthwise) {
  planner::PlanOptions greedyOnly;
  greedyOnly.useExact = false;
  auto arenaWith = [&](const std::vector<InPlaceOp> &chosen) {
    planner::Problem problem =
        withInPlaceOps(base, chosen, scratchBytes, schedule, alignment, nullptr);
    if (!chosen.empty() && !planner::honouredInPlaceHints(problem).back())
      return UINT64_MAX; // Its input already has an in-place output.
    if (planner::checkProblem(problem))
      return UINT64_MAX; // Sizes past the planner's range: the caller reports them.
    return planner::planMemory(problem, greedyOnly).arenaSize;
  };
  std::vector<InPlaceOp> chosen;
  for (const InPlaceOp &candidate : candidates)
    if (depthwiseInPlaceScratch(*candidate.node))
      chosen.push_back(candidate);
  uint64_t best = arenaWith(chosen);
  // dropDepthwise: a depthwise conv that shrinks its input (stride 2) joins
  // its input's chain, which then keeps the input's size until the chain's
  // last member dies (through the tables and SE gate run in place after
  // it): dropped, in schedule order, when the plan is smaller without it.
  for (size_t i = 0; dropDepthwise && i < chosen.size();) {
    std::vector<InPlaceOp> without = chosen;
    without.erase(without.begin() + std::ptrdiff_t(i));
    const uint64_t arena = arenaWith(without);
    if (arena < best) {
      best = arena;
      chosen = std::move(without);
    } else {
      ++i;
    }
  }
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
  // A pool over its input runs its own kernel, free; a 1x1 conv's in-place
  // kernel computes a few rows at a time (DS-CNN's ran 2.3x slower per MAC
  // than its conv), so each is left out again where the plan is no larger
  // without it. Taken one by one above, none of several equal peaks (DS-CNN's
  // three 1x1 convs) would have lowered the plan alone; undone one by one,
  // each that does not is found.
  for (size_t i = 0; i < chosen.size();) {
    if (depthwiseInPlaceScratch(*chosen[i].node) || poolMayOverlapInput(*chosen[i].node)) {
      ++i;
      continue;
    }
    std::vector<InPlaceOp> without = chosen;
    without.erase(without.begin() + std::ptrdiff_t(i));
    const uint64_t arena = arenaWith(without);
    if (arena <= best) {
      best = arena;
      chosen = std::move(without);
    } else {
      ++i;
    }
  }
  return chosen;
}

} // namespace bundlefit
