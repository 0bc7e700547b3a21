//===- EjectionRepair.cpp - Bring items under a target by evicting others -===//
#include "EjectionRepair.h"
#include "Placement.h"

#include <algorithm>
#include <optional>
#include <queue>
#include <tuple>

namespace bundlefit::planner::detail {

namespace {
struct Placed {
  uint64_t offset, end;
  int item;
};

// What evicting the items overlapping [o, o + size) costs, for every
// candidate o at once: the weight of the items starting below o + size,
// minus the weight of those ending at or below o (they start below too).
// Held items are counted the same way, apart: a candidate overlapping one
// is not taken.
class EvictionCost {
public:
  // `placed` sorted by offset; weight[k] and held[k] belong to placed[k].
  // One object serves every move: its vectors keep their capacity, so a
  // move allocates nothing.
  void reset(const std::vector<Placed> &placed, const std::vector<double> &weight,
             const std::vector<char> &held) {
    byOffset.assign(placed.size() + 1, 0);
    heldByOffset.assign(placed.size() + 1, 0);
    ends.clear();
    for (size_t k = 0; k < placed.size(); ++k) {
      byOffset[k + 1] = byOffset[k] + weight[k];
      heldByOffset[k + 1] = heldByOffset[k] + uint32_t(held[k]);
      ends.push_back({placed[k].end, weight[k], held[k]});
    }
    std::sort(ends.begin(), ends.end());
    byEnd.assign(ends.size() + 1, 0);
    heldByEnd.assign(ends.size() + 1, 0);
    for (size_t k = 0; k < ends.size(); ++k) {
      byEnd[k + 1] = byEnd[k] + std::get<1>(ends[k]);
      heldByEnd[k + 1] = heldByEnd[k] + uint32_t(std::get<2>(ends[k]));
    }
  }

  /// The offsets worth trying for an item of `size` (0, just above a placed
  /// item, just under one), ascending, each ending at or below `target`:
  /// two sorted runs merged (ends are sorted here, offsets by the caller).
  /// `above`: lowered to the first end over the target, where the run stops.
  void candidates(const std::vector<Placed> &placed, uint64_t size, uint64_t alignment,
                  uint64_t target, std::vector<uint64_t> &out, uint64_t &above) {
    under.clear();
    for (const Placed &p : placed)
      if (p.offset >= size)
        under.push_back((p.offset - size) / alignment * alignment);
    out.assign(1, 0);
    size_t a = 0, b = 0;
    while (a < ends.size() || b < under.size()) {
      uint64_t next = b == under.size() || (a < ends.size() &&
                                            alignUp(std::get<0>(ends[a]), alignment) < under[b])
                          ? alignUp(std::get<0>(ends[a++]), alignment)
                          : under[b++];
      if (next + size > target) {
        above = std::min(above, next + size);
        break;
      }
      if (next != out.back())
        out.push_back(next);
    }
  }

  /// The cheapest candidate overlapping no held item (the lowest on a
  /// tie); false when every one overlaps one. Candidates ascending, each
  /// with offset + size <= the target.
  bool cheapest(const std::vector<Placed> &placed, const std::vector<uint64_t> &candidates,
                uint64_t size, uint64_t &offset) const {
    size_t startsBelow = 0, endsBelow = 0;
    double best = 0;
    bool found = false;
    for (uint64_t o : candidates) {
      while (startsBelow < placed.size() && placed[startsBelow].offset < o + size)
        ++startsBelow;
      while (endsBelow < ends.size() && std::get<0>(ends[endsBelow]) <= o)
        ++endsBelow;
      if (heldByOffset[startsBelow] != heldByEnd[endsBelow])
        continue;
      double cost = byOffset[startsBelow] - byEnd[endsBelow];
      if (!found || cost < best) {
        best = cost;
        offset = o;
        found = true;
      }
    }
    return found;
  }

private:
  std::vector<double> byOffset, byEnd;           // Prefix sums of weight.
  std::vector<uint32_t> heldByOffset, heldByEnd; // Prefix counts of held items.
  std::vector<std::tuple<uint64_t, double, char>> ends;
  std::vector<uint64_t> under; // candidates(): offsets just under a placed item.
};
} // namespace

Outcome repairByEjection(const Items &items, std::vector<uint64_t> &offsets, uint64_t target,
                         const EjectionLimits &limits, Budget &budget, uint64_t *sameUpTo) {
  size_t n = items.items.size();
  // The least end compared with the target and found over it (sameUpTo).
  uint64_t above = UINT64_MAX;
  auto over = [&](uint64_t end) {
    if (end > target)
      above = std::min(above, end);
    return end > target;
  };
  auto result = [&](Outcome why) {
    if (sameUpTo)
      *sameUpTo = above - 1;
    return why;
  };
  auto isHeld = [&](size_t i) { return limits.held && (*limits.held)[i] != 0; };
  std::vector<char> out(n, 0);
  std::vector<uint32_t> evictions(n, 0);
  // Largest first (the hardest to place); the lower index on a tie.
  auto later = [&](int a, int b) {
    const Item &x = items.items[a], &y = items.items[b];
    return x.size != y.size ? x.size < y.size : a > b;
  };
  std::priority_queue<int, std::vector<int>, decltype(later)> takenOut(later);
  for (size_t i = 0; i < n; ++i)
    if (items.items[i].size != 0 && over(offsets[i] + items.items[i].size)) {
      if (over(items.items[i].size) || isHeld(i))
        return result(Outcome::Unsolved); // Fits nowhere under the target, or may not move.
      out[i] = 1;
      takenOut.push(int(i));
    }
  // Setting up reads every item once (and sorts them into a time index
  // when the caller has none).
  if (!budget.spend(n + (limits.index ? 0 : sortUnits(n))))
    return result(Outcome::OutOfBudget);
  std::optional<ItemsByTime> own;
  if (!limits.index)
    own.emplace(items);
  const ItemsByTime &index = limits.index ? *limits.index : *own;
  std::vector<uint64_t> saved = offsets;
  auto giveUp = [&](Outcome why) {
    offsets = std::move(saved);
    return result(why);
  };

  std::vector<Placed> placed;
  std::vector<double> weight;
  std::vector<char> held;
  std::vector<uint64_t> candidates;
  EvictionCost cost;
  uint64_t moves = 0;
  while (!takenOut.empty()) {
    if (moves >= limits.maxMoves)
      return giveUp(Outcome::Unsolved);
    int u = takenOut.top();
    takenOut.pop();
    const Item &it = items.items[u];
    placed.clear();
    index.forEachMeeting(it.cfirst, it.clast, [&](int j) {
      if (j != u && !out[j])
        placed.push_back({offsets[j], offsets[j] + items.items[j].size, j});
    });
    std::sort(placed.begin(), placed.end(), [](const Placed &a, const Placed &b) {
      return a.offset != b.offset ? a.offset < b.offset : a.item < b.item;
    });
    ++moves;
    // A move reads the items meeting it (a few tiers of ItemsByTime), sorts
    // them and prices every place: counted at what it costs beside a node
    // of the search.
    if (!budget.spend(12 + 9 * placed.size() + 3 * sortUnits(placed.size())))
      return giveUp(Outcome::OutOfBudget);
    // The lowest free fit, when it is under the target.
    uint64_t at = lowestFit(placed.begin(), placed.end(), it.size, it.alignment,
                            [](const Placed &p) { return std::make_pair(p.offset, p.end); });
    if (!over(at + it.size)) {
      offsets[u] = at;
      out[u] = 0;
      continue;
    }
    // Else where evicting costs least: at the bottom, on top of a placed
    // item, or just under one.
    weight.clear();
    held.clear();
    for (const Placed &p : placed) {
      const Item &q = items.items[p.item];
      double lifetime = limits.weighLifetime ? double(q.length()) : 1;
      weight.push_back(double(q.size) * lifetime * double(1 + evictions[p.item]));
      held.push_back(isHeld(p.item));
    }
    cost.reset(placed, weight, held);
    cost.candidates(placed, it.size, it.alignment, target, candidates, above);
    uint64_t o = 0;
    if (!cost.cheapest(placed, candidates, it.size, o))
      return giveUp(Outcome::Unsolved); // Held items fill every place.
    offsets[u] = o;
    out[u] = 0;
    for (const Placed &p : placed)
      if (p.offset < o + it.size && p.end > o) {
        out[p.item] = 1;
        ++evictions[p.item];
        takenOut.push(p.item);
      }
  }
  return result(Outcome::Found);
}

} // namespace bundlefit::planner::detail
