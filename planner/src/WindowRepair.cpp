//===- WindowRepair.cpp - Re-solve time windows around items too high -----===//
#include "WindowRepair.h"

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

bool meets(const Item &it, Window w) {
  return it.size != 0 && it.cfirst <= w.hi && it.clast >= w.lo;
}

// The hull of the lifetimes of every item live in w: the smallest window
// in which nothing live in w is an obstacle.
Window grow(const Items &items, Window w) {
  Window out = w;
  for (const Item &it : items.items)
    if (meets(it, w)) {
      out.lo = std::min(out.lo, it.cfirst);
      out.hi = std::max(out.hi, it.clast);
    }
  return out;
}

// The items of the window as a problem of their own: those inside are free,
// those crossing an edge are obstacles at their current offsets (clipped to
// the window). False when an obstacle ends above the target.
bool windowProblem(const Items &items, const std::vector<uint64_t> &offsets, Window w,
                   uint64_t target, Items &local, std::vector<int> &global,
                   std::vector<uint64_t> &fixed, size_t &freeItems) {
  local = Items();
  global.clear();
  fixed.clear();
  freeItems = 0;
  local.numSteps = w.hi - w.lo + 1;
  for (size_t i = 0; i < items.items.size(); ++i) {
    const Item &it = items.items[i];
    if (!meets(it, w))
      continue;
    bool inside = it.cfirst >= w.lo && it.clast <= w.hi;
    if (!inside && offsets[i] + it.size > target)
      return false;
    Item clipped = it;
    clipped.cfirst = std::max(it.cfirst, w.lo) - w.lo;
    clipped.clast = std::min(it.clast, w.hi) - w.lo;
    local.items.push_back(clipped);
    global.push_back(int(i));
    fixed.push_back(inside ? kNotFixed : offsets[i]);
    freeItems += inside;
  }
  return true;
}

// Solves the window in place. Found, Unsolved (its node limit) or
// OutOfBudget.
Outcome solveWindow(const Items &items, std::vector<uint64_t> &offsets, Window w, uint64_t target,
                    SearchBudget &budget, size_t &freeItems) {
  Items local;
  std::vector<int> global;
  std::vector<uint64_t> fixed, placed;
  if (!windowProblem(items, offsets, w, target, local, global, fixed, freeItems))
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
} // namespace

Outcome repairByWindows(const Items &items, std::vector<uint64_t> &offsets, uint64_t target,
                        SearchBudget &budget) {
  while (true) {
    // The item that ends highest (the first such) anchors the next window.
    int worst = -1;
    for (size_t i = 0; i < items.items.size(); ++i) {
      const Item &it = items.items[i];
      if (it.size != 0 && offsets[i] + it.size > target &&
          (worst < 0 || offsets[i] + it.size > offsets[worst] + items.items[worst].size))
        worst = int(i);
    }
    if (worst < 0)
      return Outcome::Found;
    Window w{items.items[worst].cfirst, items.items[worst].clast};
    while (true) {
      size_t freeItems = 0;
      Outcome result = solveWindow(items, offsets, w, target, budget, freeItems);
      if (result == Outcome::Found)
        break;
      if (result == Outcome::OutOfBudget)
        return result;
      // The next window frees at least twice as many items (a few more
      // would cost as much to fail again).
      size_t wider = freeItems;
      Window next = w;
      while (wider < 2 * std::max<size_t>(freeItems, 32)) {
        Window grown = grow(items, next);
        if (grown.lo == next.lo && grown.hi == next.hi)
          break; // Nothing crosses its edges: the whole section.
        next = grown;
        wider = 0;
        for (const Item &it : items.items)
          wider += it.size != 0 && it.cfirst >= next.lo && it.clast <= next.hi;
      }
      if ((next.lo == w.lo && next.hi == w.hi) || wider > kMostWindowItems)
        return Outcome::Unsolved;
      w = next;
    }
  }
}

} // namespace bundlefit::planner::detail
