//===- CriticalFirst.cpp - Place the items of the peaks first -------------===//
#include "CriticalFirst.h"
#include "Placement.h"
#include "Search.h"

#include <algorithm>

namespace bundlefit::planner::detail {

namespace {
// A step is critical when its live bytes are within 1/kCriticalShare of the
// most live on any step. At 1/20 (5%) the critical items of 10^5
// network-like buffers number 45-180 and their problem is solved in 0.02 s;
// at 15% (570 items) it was not solved in 2 s.
constexpr uint64_t kCriticalShare = 20;
// Past 1/kMostCritical of the items, there is no start to be had.
constexpr size_t kMostCritical = 4;
// Search nodes per critical item when no greedy strategy meets the target.
constexpr uint64_t kNodesPerItem = 64;

// The critical items' offsets under the target, as a problem of its own.
bool placeCritical(const Items &critical, uint64_t target, Budget &budget, bool search,
                   std::vector<uint64_t> &placed) {
  // Glow's two orders, first fit: of the twelve orders and fits tried
  // here before, the only ones that ever met the target on network-like
  // problems (10^4 and 10^5 buffers); the search does the rest.
  for (GreedyOrder order : {GreedyOrder::MaxLiveBySize, GreedyOrder::MaxLiveByTime}) {
    std::vector<uint64_t> offsets;
    if (!greedyPass(critical, order, offsets, budget))
      return false;
    if (arenaOf(critical, offsets) <= target) {
      placed = std::move(offsets);
      return true;
    }
  }
  if (!search || critical.items.size() > kMostSearchItems)
    return false;
  uint64_t nodes = kNodesPerItem * std::max<uint64_t>(critical.items.size(), 64);
  return searchCapacity(critical, target, budget, nodes, placed) == Outcome::Found;
}
} // namespace

bool placeCriticalFirst(const Items &items, uint64_t target, Budget &budget,
                        std::vector<uint64_t> &offsets, std::vector<char> &critical, bool search) {
  size_t n = items.items.size();
  size_t steps = size_t(std::max(items.numSteps, 1));
  std::vector<uint64_t> live(steps + 1, 0);
  for (const Item &it : items.items) {
    live[size_t(it.cfirst)] += it.size;
    live[size_t(it.clast) + 1] -= it.size;
  }
  uint64_t most = 0;
  for (size_t s = 1; s <= steps; ++s)
    live[s] += live[s - 1];
  for (size_t s = 0; s < steps; ++s)
    most = std::max(most, live[s]);
  // criticalBefore[s]: critical steps before step s.
  std::vector<uint32_t> criticalBefore(steps + 1, 0);
  for (size_t s = 0; s < steps; ++s)
    criticalBefore[s + 1] = criticalBefore[s] + uint32_t(live[s] >= most - most / kCriticalShare);
  critical.assign(n, 0);
  Items local;
  local.numSteps = items.numSteps;
  std::vector<int> global;
  for (size_t i = 0; i < n; ++i) {
    const Item &it = items.items[i];
    if (it.size != 0 && criticalBefore[size_t(it.clast) + 1] > criticalBefore[size_t(it.cfirst)]) {
      critical[i] = 1;
      local.items.push_back(it);
      global.push_back(int(i));
    }
  }
  // When most items are critical (a flat live profile), the critical
  // problem is the whole one again.
  std::vector<uint64_t> placed;
  if (local.items.empty() || local.items.size() > n / kMostCritical ||
      !placeCritical(local, target, budget, search, placed))
    return false;
  // The rest around them, by one greedy pass in Glow's max-live order.
  offsets.assign(n, 0);
  for (size_t k = 0; k < global.size(); ++k)
    offsets[size_t(global[k])] = placed[k];
  return greedyPass(items, GreedyOrder::MaxLiveBySize, offsets, budget, &critical);
}

} // namespace bundlefit::planner::detail
