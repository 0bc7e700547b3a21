//===- WindowRepair.cpp - Re-solve time windows around items too high -----===//
#include "WindowRepair.h"
#include "ItemsByTime.h"

#include <algorithm>

namespace bundlefit::planner::detail {

namespace {
// Search nodes per free item a window may spend before it grows: enough
// for a few dives in each preorder of the round robin.
constexpr uint64_t kNodesPerItem = 3;
// A window stops growing here; past it, the target is given up.
constexpr size_t kMostWindowItems = 40000;

struct Window {
  int lo = 0, hi = 0; // Compressed steps, inclusive.
};

// The hull of the lifetimes of every item live in w: the smallest window
// in which nothing live in w is an obstacle.
Window grow(const Items &items, const ItemsByTime &index, Window w) {
  Window out = w;
  index.forEachMeeting(w.lo, w.hi, [&](int i) {
    out.lo = std::min(out.lo, items.items[i].cfirst);
    out.hi = std::max(out.hi, items.items[i].clast);
  });
  return out;
}

// Items living wholly inside w (the ones a window frees).
size_t itemsInside(const Items &items, const ItemsByTime &index, Window w) {
  size_t inside = 0;
  index.forEachMeeting(w.lo, w.hi, [&](int i) {
    inside += items.items[i].cfirst >= w.lo && items.items[i].clast <= w.hi;
  });
  return inside;
}

// The items of the window as a problem of their own: those inside are free,
// those crossing an edge are obstacles at their current offsets (clipped to
// the window). False when an obstacle ends above the target.
bool windowProblem(const Items &items, const ItemsByTime &index,
                   const std::vector<uint64_t> &offsets, Window w, uint64_t target, Items &local,
                   std::vector<int> &global, std::vector<uint64_t> &fixed, size_t &freeItems) {
  local = Items();
  fixed.clear();
  freeItems = 0;
  local.numSteps = w.hi - w.lo + 1;
  // In the section's item order, as a full scan gives: the search breaks
  // ties by it.
  std::vector<int> meeting = index.meeting(w.lo, w.hi);
  global.clear();
  for (int i : meeting) {
    const Item &it = items.items[i];
    bool inside = it.cfirst >= w.lo && it.clast <= w.hi;
    if (!inside && offsets[i] + it.size > target)
      return false;
    Item clipped = it;
    clipped.cfirst = std::max(it.cfirst, w.lo) - w.lo;
    clipped.clast = std::min(it.clast, w.hi) - w.lo;
    local.items.push_back(clipped);
    global.push_back(i);
    fixed.push_back(inside ? kNotFixed : offsets[i]);
    freeItems += inside;
  }
  return true;
}

// Solves the window in place. Found, Unsolved (its node limit) or
// OutOfBudget.
Outcome solveWindow(const Items &items, const ItemsByTime &index, std::vector<uint64_t> &offsets,
                    Window w, uint64_t target, SearchBudget &budget, size_t &freeItems) {
  Items local;
  std::vector<int> global;
  std::vector<uint64_t> fixed, placed;
  if (!windowProblem(items, index, offsets, w, target, local, global, fixed, freeItems))
    return Outcome::Unsolved;
  // A node limit of its own, so that one window's verdict does not depend
  // on the machine's load; the shared budget pays for what it spends.
  SearchBudget own = budget;
  own.nodesLeft =
      std::min<uint64_t>(budget.nodesLeft, kNodesPerItem * std::max<size_t>(freeItems, 64));
  own.nodesUsed = 0;
  Outcome result = searchCapacity(local, target, own, placed, &fixed);
  budget.nodesLeft -= own.nodesUsed;
  budget.nodesUsed += own.nodesUsed;
  budget.timedOut = own.timedOut;
  if (result == Outcome::Found) {
    for (size_t k = 0; k < global.size(); ++k)
      offsets[global[k]] = placed[k];
    return result;
  }
  if (own.timedOut || budget.nodesLeft == 0)
    return Outcome::OutOfBudget;
  return Outcome::Unsolved; // Infeasible here proves nothing: the obstacles stayed.
}

uint64_t endOf(const Items &items, const std::vector<uint64_t> &offsets, int i) {
  return offsets[i] + items.items[i].size;
}
} // namespace

Outcome repairByWindows(const Items &items, std::vector<uint64_t> &offsets, uint64_t target,
                        SearchBudget &budget) {
  ItemsByTime index(items);
  // The items too high, highest end first (the first such on a tie): each
  // anchors a window unless an earlier window already brought it down. A
  // solved window leaves its items at or below the target and moves no
  // other, so the list, made once, stays in order (a scan of the whole
  // section per window cost O(items) each).
  std::vector<int> above;
  for (size_t i = 0; i < items.items.size(); ++i)
    if (items.items[i].size != 0 && endOf(items, offsets, int(i)) > target)
      above.push_back(int(i));
  std::stable_sort(above.begin(), above.end(), [&](int a, int b) {
    return endOf(items, offsets, a) > endOf(items, offsets, b);
  });
  for (int worst : above) {
    if (endOf(items, offsets, worst) <= target)
      continue;
    Window w{items.items[worst].cfirst, items.items[worst].clast};
    while (true) {
      size_t freeItems = 0;
      Outcome result = solveWindow(items, index, offsets, w, target, budget, freeItems);
      if (result == Outcome::Found)
        break;
      if (result == Outcome::OutOfBudget)
        return result;
      // The next window frees at least twice as many items (a few more
      // would cost as much to fail again).
      size_t wider = freeItems;
      Window next = w;
      while (wider < 2 * std::max<size_t>(freeItems, 32)) {
        Window grown = grow(items, index, next);
        if (grown.lo == next.lo && grown.hi == next.hi)
          break; // Nothing crosses its edges: the whole section.
        next = grown;
        wider = itemsInside(items, index, next);
      }
      if ((next.lo == w.lo && next.hi == w.hi) || wider > kMostWindowItems)
        return Outcome::Unsolved;
      w = next;
    }
  }
  return Outcome::Found;
}

} // namespace bundlefit::planner::detail
