//===- Items.cpp - Collapse in-place chains, compress time ----------------===//
#include "Items.h"

#include <algorithm>
#include <climits>
#include <numeric>

namespace bundlefit::planner::detail {

bool isValidHint(const Problem &problem, const InPlaceHint &h) {
  int n = int(problem.buffers.size());
  if (h.output < 0 || h.output >= n || h.input < 0 || h.input >= n)
    return false;
  if (h.output == h.input)
    return false;
  const Buffer &in = problem.buffers[h.input], &out = problem.buffers[h.output];
  for (uint64_t a : {in.alignment, out.alignment})
    if (a > 1 && h.shift % int64_t(a) != 0)
      return false;
  return in.last == out.first;
}

namespace {
int findRoot(std::vector<int> &parent, int x) {
  while (parent[x] != x)
    x = parent[x] = parent[parent[x]];
  return x;
}
} // namespace

std::vector<bool> selectHints(const Problem &problem) {
  size_t n = problem.buffers.size();
  std::vector<bool> chosen(problem.inPlace.size(), false);
  std::vector<bool> hasOutput(n, false), hasInput(n, false);
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (size_t k = 0; k < problem.inPlace.size(); ++k) {
    const InPlaceHint &h = problem.inPlace[k];
    if (!isValidHint(problem, h))
      continue;
    // A chain, never a tree: two buffers live at once cannot share storage.
    if (hasOutput[h.input] || hasInput[h.output])
      continue;
    int a = findRoot(parent, h.input), b = findRoot(parent, h.output);
    if (a == b)
      continue;
    parent[b] = a;
    hasOutput[h.input] = hasInput[h.output] = true;
    chosen[k] = true;
  }
  return chosen;
}

namespace {
// Groups buffers joined by honoured hints; returns buffer -> group root.
// `shiftFromChainStart` gets each buffer's offset relative to the first
// buffer of its chain (the sum of the shifts along the chain).
std::vector<int> groupBuffers(const Problem &problem, std::vector<int64_t> &shiftFromChainStart) {
  size_t n = problem.buffers.size();
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<bool> chosen = selectHints(problem);
  std::vector<int> next(n, -1);
  std::vector<int64_t> shiftToNext(n, 0);
  std::vector<bool> hasInput(n, false);
  for (size_t k = 0; k < chosen.size(); ++k) {
    if (!chosen[k])
      continue;
    const InPlaceHint &h = problem.inPlace[k];
    int a = findRoot(parent, h.input);
    int b = findRoot(parent, h.output);
    parent[b] = a;
    next[h.input] = h.output;
    shiftToNext[h.input] = h.shift;
    hasInput[h.output] = true;
  }
  // Chosen hints form chains (one input and one output per buffer, no cycle).
  shiftFromChainStart.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (hasInput[i])
      continue;
    for (int at = int(i); next[at] >= 0; at = next[at])
      shiftFromChainStart[next[at]] = shiftFromChainStart[at] + shiftToNext[at];
  }
  std::vector<int> root(n);
  for (size_t i = 0; i < n; ++i)
    root[i] = findRoot(parent, int(i));
  return root;
}

// Steps that are dense integers (a schedule's, a trace's) are ranked
// through an array indexed by step, O(n + steps): at 10^6 buffers the sort
// and the binary searches took a third of a second, more than a tiny time
// limit leaves for planning.
bool compressDenseTime(Items &result) {
  if (result.items.empty())
    return false;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const Item &it : result.items) {
    lo = std::min<int64_t>(lo, it.first);
    hi = std::max<int64_t>(hi, int64_t(it.last) + 1);
  }
  if (hi - lo > 4 * int64_t(result.items.size()) + 1024)
    return false;
  std::vector<int> rank(size_t(hi - lo) + 1, 0);
  for (const Item &it : result.items)
    rank[size_t(it.first - lo)] = rank[size_t(int64_t(it.last) + 1 - lo)] = 1;
  int used = 0;
  for (int &r : rank) {
    int mark = r;
    r = used;
    used += mark;
  }
  for (Item &it : result.items) {
    it.cfirst = rank[size_t(it.first - lo)];
    it.clast = rank[size_t(int64_t(it.last) + 1 - lo)] - 1;
  }
  result.numSteps = used - 1;
  return true;
}

void compressTime(Items &result) {
  if (compressDenseTime(result))
    return;
  std::vector<int64_t> points;
  points.reserve(result.items.size() * 2);
  for (const Item &it : result.items) {
    points.push_back(it.first);
    points.push_back(int64_t(it.last) + 1);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  auto index = [&](int64_t t) {
    return int(std::lower_bound(points.begin(), points.end(), t) - points.begin());
  };
  for (Item &it : result.items) {
    it.cfirst = index(it.first);
    it.clast = index(int64_t(it.last) + 1) - 1;
  }
  result.numSteps = points.empty() ? 0 : int(points.size()) - 1;
}
} // namespace

Items buildItems(const Problem &problem) {
  Items result;
  size_t n = problem.buffers.size();
  std::vector<int64_t> shift;
  std::vector<int> root = groupBuffers(problem, shift);
  std::vector<int> itemOfRoot(n, -1);
  result.itemOfBuffer.assign(n, -1);
  // A shifted chain starts at its lowest member.
  std::vector<int64_t> lowest(n, 0);
  for (size_t i = 0; i < n; ++i)
    lowest[root[i]] = std::min(lowest[root[i]], shift[i]);
  result.offsetInItem.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const Buffer &b = problem.buffers[i];
    int &slot = itemOfRoot[root[i]];
    if (slot < 0) {
      slot = int(result.items.size());
      result.items.push_back({0, 1, b.first, b.last, 0, 0});
    }
    Item &it = result.items[slot];
    result.offsetInItem[i] = uint64_t(shift[i] - lowest[root[i]]);
    it.alignment = std::lcm(it.alignment, std::max<uint64_t>(b.alignment, 1));
    it.size = std::max(it.size, result.offsetInItem[i] + footprint(b));
    it.first = std::min(it.first, b.first);
    it.last = std::max(it.last, b.last);
    result.itemOfBuffer[i] = slot;
  }
  for (Item &it : result.items)
    it.size = alignUp(it.size, it.alignment);
  compressTime(result);
  return result;
}

Plan makePlan(const Problem &problem, const Items &items, const std::vector<uint64_t> &itemOffsets,
              std::string algorithm, uint64_t lowerBound) {
  Plan plan;
  plan.algorithm = std::move(algorithm);
  plan.lowerBound = lowerBound;
  plan.offsets.resize(problem.buffers.size());
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    uint64_t offset = itemOffsets[items.itemOfBuffer[i]] + items.offsetInItem[i];
    plan.offsets[i] = offset;
    uint64_t fp = footprint(problem.buffers[i]);
    if (fp > 0)
      plan.arenaSize = std::max(plan.arenaSize, offset + fp);
  }
  plan.provedOptimal = plan.arenaSize == lowerBound;
  return plan;
}

uint64_t arenaOf(const Items &items, const std::vector<uint64_t> &itemOffsets) {
  uint64_t top = 0;
  for (size_t i = 0; i < items.items.size(); ++i)
    if (items.items[i].size != 0)
      top = std::max(top, itemOffsets[i] + items.items[i].size);
  return top;
}

} // namespace bundlefit::planner::detail

namespace bundlefit::planner {
std::vector<bool> honouredInPlaceHints(const Problem &problem) {
  return detail::selectHints(problem);
}
} // namespace bundlefit::planner
