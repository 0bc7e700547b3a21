//===- GreedyOrder.cpp - The orders in which greedy passes place items ----===//
//
// TFLM's order is a sort. Glow's two dynamic orders repeatedly look at the
// step where the most unplaced bytes are live and take the largest (or the
// longest-lived) unplaced item there. Both are done in O(n log^2 n) with a
// max segment tree over steps and per-node candidate lists.
//
//===----------------------------------------------------------------------===//
#include "PlacedIndex.h"
#include "Placement.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace bundlefit::planner::detail {

namespace {
// Glow's tie-breaks: larger footprint then longer lifetime (MaxLiveBySize)
// or the other way round, then program order, so every order is
// deterministic. Returned as a rank per item (0 = best) so later
// comparisons are cheap.
std::vector<int> dynamicRanks(const Items &items, GreedyOrder order) {
  const std::vector<Item> &v = items.items;
  bool sizeFirst = order == GreedyOrder::MaxLiveBySize;
  auto key = [&](int i) {
    return sizeFirst ? std::make_pair(v[i].size, v[i].length())
                     : std::make_pair(v[i].length(), v[i].size);
  };
  std::vector<int> seq(v.size());
  std::iota(seq.begin(), seq.end(), 0);
  std::sort(seq.begin(), seq.end(), [&](int a, int b) {
    auto ka = key(a), kb = key(b);
    return ka != kb ? ka > kb : a < b;
  });
  std::vector<int> rank(v.size());
  for (size_t r = 0; r < seq.size(); ++r)
    rank[seq[r]] = int(r);
  return rank;
}

// Bytes live per step, with range add and "leftmost step of maximum".
class LiveBytesTree {
public:
  explicit LiveBytesTree(int numSteps) : n(std::max(numSteps, 1)) {
    best.assign(4 * size_t(n), 0);
    pending.assign(4 * size_t(n), 0);
  }
  void add(int first, int last, int64_t delta) { add(1, 0, n - 1, first, last, delta); }
  int64_t maximum() const { return best[1]; }
  int argmax() const {
    int node = 1, lo = 0, hi = n - 1;
    while (lo < hi) {
      // Descend into the left child whenever it holds the maximum.
      int mid = (lo + hi) / 2;
      int64_t target = best[node] - pending[node];
      if (best[2 * node] == target) {
        node = 2 * node;
        hi = mid;
      } else {
        node = 2 * node + 1;
        lo = mid + 1;
      }
    }
    return lo;
  }

private:
  void add(int node, int lo, int hi, int first, int last, int64_t delta) {
    if (last < lo || hi < first)
      return;
    if (first <= lo && hi <= last) {
      best[node] += delta;
      pending[node] += delta;
      return;
    }
    int mid = (lo + hi) / 2;
    add(2 * node, lo, mid, first, last, delta);
    add(2 * node + 1, mid + 1, hi, first, last, delta);
    best[node] = std::max(best[2 * node], best[2 * node + 1]) + pending[node];
  }

  int n;
  std::vector<int64_t> best;    // Max over the node's range, incl. its own pending.
  std::vector<int64_t> pending; // Added to the whole range, not pushed down.
};

// For each step, the unplaced items live there, best first. An item is
// listed in the O(log T) canonical nodes covering its lifetime; each node's
// list is sorted once and read through a cursor that skips placed items.
class CandidateTree {
public:
  CandidateTree(const Items &items, const std::vector<int> &rank)
      : tree(items), placed(items.items.size(), false), rank(rank) {
    lists.resize(2 * size_t(tree.leaves));
    cursor.assign(2 * size_t(tree.leaves), 0);
    for (size_t i = 0; i < items.items.size(); ++i)
      if (items.items[i].size != 0)
        tree.forEachCanonical(items.items[i].cfirst, items.items[i].clast,
                              [&](int node) { lists[node].push_back(int(i)); });
    auto better = [&rank](int a, int b) { return rank[a] < rank[b]; };
    for (std::vector<int> &list : lists)
      std::sort(list.begin(), list.end(), better);
  }

  /// Best unplaced item live on step, or -1.
  int bestAt(int step) {
    int chosen = -1;
    // No list is higher than the tree's height: 13 of 21 levels on 10^6 network-like items.
    tree.forEachAncestor(step, [&](int node) {
      std::vector<int> &list = lists[node];
      size_t &c = cursor[node];
      while (c < list.size() && placed[list[c]])
        ++c;
      if (c < list.size() && (chosen < 0 || rank[list[c]] < rank[chosen]))
        chosen = list[c];
    });
    return chosen;
  }

  void markPlaced(int item) { placed[item] = true; }

private:
  StepTree tree;
  std::vector<std::vector<int>> lists;
  std::vector<size_t> cursor;
  std::vector<char> placed; // Not vector<bool>: this is read in the hot loop.
  const std::vector<int> &rank;
};

std::vector<int> dynamicOrder(const Items &items, GreedyOrder order) {
  std::vector<int> rank = dynamicRanks(items, order);
  LiveBytesTree live(items.numSteps);
  CandidateTree candidates(items, rank);
  std::vector<int> sequence;
  sequence.reserve(items.items.size());
  size_t nonEmpty = 0;
  for (size_t i = 0; i < items.items.size(); ++i) {
    const Item &it = items.items[i];
    if (it.size == 0) {
      sequence.push_back(int(i));
      continue;
    }
    live.add(it.cfirst, it.clast, int64_t(it.size));
    ++nonEmpty;
  }
  for (size_t placedCount = 0; placedCount < nonEmpty; ++placedCount) {
    int item = candidates.bestAt(live.argmax());
    if (item < 0)
      break; // Only for a problem checkProblem rejects; never index with -1.
    const Item &it = items.items[item];
    candidates.markPlaced(item);
    live.add(it.cfirst, it.clast, -int64_t(it.size));
    sequence.push_back(item);
  }
  if (sequence.size() < items.items.size()) { // Keep "every item once".
    std::vector<char> listed(items.items.size(), 0);
    for (int i : sequence)
      listed[i] = 1;
    for (size_t i = 0; i < items.items.size(); ++i)
      if (!listed[i])
        sequence.push_back(int(i));
  }
  return sequence;
}
} // namespace

uint64_t orderUnits(const Items &items, GreedyOrder order) {
  bool dynamic = order == GreedyOrder::MaxLiveBySize || order == GreedyOrder::MaxLiveByTime;
  return kGatherUnits * (dynamic ? 20 : 1) * sortUnits(items.items.size());
}

uint64_t passUnits(const Items &items) {
  // Pairs that meet: each item meets, when it starts, every item live on
  // that step that started earlier, and those starting on the same step.
  size_t steps = size_t(std::max(items.numSteps, 1));
  std::vector<uint64_t> starting(steps, 0);
  std::vector<int64_t> live(steps + 1, 0);
  for (const Item &it : items.items)
    if (it.size != 0) {
      ++starting[size_t(it.cfirst)];
      ++live[size_t(it.cfirst)];
      --live[size_t(it.clast) + 1];
    }
  uint64_t pairs = 0, most = 1;
  int64_t running = 0;
  for (size_t s = 0; s < steps; ++s) {
    running += live[s];
    uint64_t earlier = uint64_t(running) - starting[s];
    pairs += starting[s] * earlier + starting[s] * (starting[s] - (starting[s] != 0)) / 2;
    most = std::max(most, uint64_t(running));
  }
  // Each item's ranges are sorted: at most log2 of the most live apiece.
  return kGatherUnits * (items.items.size() + pairs * (1 + sortUnits(most) / most));
}

std::vector<int> orderItems(const Items &items, GreedyOrder order) {
  if (order == GreedyOrder::MaxLiveBySize || order == GreedyOrder::MaxLiveByTime)
    return dynamicOrder(items, order);
  // TFLM's order, ties by the later item first: it fills the array it
  // sorts (stably) from the back.
  const std::vector<Item> &v = items.items;
  std::vector<int> sequence(v.size());
  std::iota(sequence.begin(), sequence.end(), 0);
  std::sort(sequence.begin(), sequence.end(),
            [&v](int a, int b) { return v[a].size != v[b].size ? v[a].size > v[b].size : a > b; });
  return sequence;
}

} // namespace bundlefit::planner::detail
