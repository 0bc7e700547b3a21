//===- ItemsByTime.h - Which items meet a stretch of time? ------*- C++ -*-===//
//
// Ejection asks "which items are live in [lo, hi]?" once per move; a scan
// of the whole section would make each move cost O(items). Sorted by first
// step, the items that meet [lo, hi] are among those born in
// [lo - longest + 1, hi], so a query reads only the items born near it. One
// long-lived item would make that every item born thousands of steps
// before (4,100 read per query on 10^5 network-like buffers, where 1% live
// up to 4,096 steps), so items are kept in tiers by lifetime, each read
// back only as far as its own longest: about 60 read instead.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_ITEMSBYTIME_H
#define BUNDLEFIT_PLANNER_SRC_ITEMSBYTIME_H

#include "Items.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace bundlefit::planner::detail {

class ItemsByTime {
public:
  /// Only items that take bytes are indexed.
  explicit ItemsByTime(const Items &items) : items(items) {
    for (size_t i = 0; i < items.items.size(); ++i) {
      const Item &it = items.items[i];
      if (it.size == 0)
        continue;
      size_t tier = 0;
      while ((int64_t(1) << tier) <= int64_t(it.clast) - it.cfirst)
        ++tier;
      if (tiers.size() <= tier)
        tiers.resize(tier + 1);
      tiers[tier].byFirst.push_back(int(i));
      tiers[tier].longest = std::max(tiers[tier].longest, it.clast - it.cfirst);
    }
    for (Tier &t : tiers)
      std::stable_sort(t.byFirst.begin(), t.byFirst.end(),
                       [&](int a, int b) { return items.items[a].cfirst < items.items[b].cfirst; });
  }

  /// Calls f(i) for every item (of non-zero size) live on some step of
  /// [lo, hi], in no particular order.
  template <typename F> void forEachMeeting(int lo, int hi, F f) const {
    for (const Tier &t : tiers) {
      auto begin = std::lower_bound(t.byFirst.begin(), t.byFirst.end(), lo - t.longest,
                                    [&](int i, int step) { return items.items[i].cfirst < step; });
      for (auto it = begin; it != t.byFirst.end() && items.items[*it].cfirst <= hi; ++it)
        if (items.items[*it].clast >= lo)
          f(*it);
    }
  }

  /// Same, in increasing item index (the order a full scan would give).
  std::vector<int> meeting(int lo, int hi) const {
    std::vector<int> out;
    forEachMeeting(lo, hi, [&](int i) { out.push_back(i); });
    std::sort(out.begin(), out.end());
    return out;
  }

private:
  // Items whose lifetimes span fewer than 2^k steps more than one, by
  // first step: a query reads those born at most `longest` steps before it.
  struct Tier {
    std::vector<int> byFirst;
    int longest = 0; // Most steps an item of the tier spans, minus one.
  };
  const Items &items;
  std::vector<Tier> tiers;
};

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_ITEMSBYTIME_H
