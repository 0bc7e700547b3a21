//===- ItemsByTime.h - Which items meet a stretch of time? ------*- C++ -*-===//
//
// Window repair asks "which items are live in [lo, hi]?" once per window. A
// scan over the whole section made each window cost O(items): thousands of
// windows over 10^6 items. Sorted by first step, the items that meet
// [lo, hi] are among those born in [lo - longest + 1, hi], so a query reads
// only the items born near the window.
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
    for (size_t i = 0; i < items.items.size(); ++i)
      if (items.items[i].size != 0) {
        byFirst.push_back(int(i));
        longest = std::max(longest, items.items[i].clast - items.items[i].cfirst);
      }
    std::stable_sort(byFirst.begin(), byFirst.end(),
                     [&](int a, int b) { return items.items[a].cfirst < items.items[b].cfirst; });
  }

  /// Calls f(i) for every item (of non-zero size) live on some step of
  /// [lo, hi], in no particular order.
  template <typename F> void forEachMeeting(int lo, int hi, F f) const {
    auto begin = std::lower_bound(byFirst.begin(), byFirst.end(), lo - longest,
                                  [&](int i, int step) { return items.items[i].cfirst < step; });
    for (auto it = begin; it != byFirst.end() && items.items[*it].cfirst <= hi; ++it)
      if (items.items[*it].clast >= lo)
        f(*it);
  }

  /// Same, in increasing item index (the order a full scan would give).
  std::vector<int> meeting(int lo, int hi) const {
    std::vector<int> out;
    forEachMeeting(lo, hi, [&](int i) { out.push_back(i); });
    std::sort(out.begin(), out.end());
    return out;
  }

private:
  const Items &items;
  std::vector<int> byFirst; // Item indices by first compressed step.
  int longest = 0;          // Most steps any item spans, minus one.
};

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_ITEMSBYTIME_H
