//===- PlacedIndex.h - Which placed items overlap a time range --*- C++ -*-===//
//
// Greedy placement asks, for each new item, "which placed items are live at
// some step of [first, last]?". An item overlapping [a, b] is either live on
// step a (a stabbing query on a segment tree of canonical intervals) or born
// inside (a, b] (an ordered set of birth steps). Both cost O(log T) plus the
// answers, so the whole greedy pass stays near O(n log n).
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_PLACEDINDEX_H
#define BUNDLEFIT_PLANNER_SRC_PLACEDINDEX_H

#include <set>
#include <vector>

namespace bundlefit::planner::detail {

class PlacedIndex {
public:
  explicit PlacedIndex(int numSteps) {
    leaves = 1;
    while (leaves < numSteps)
      leaves *= 2;
    cover.resize(2 * size_t(leaves));
    bornAt.resize(size_t(leaves));
  }

  void insert(int item, int first, int last) {
    for (int l = first + leaves, r = last + leaves + 1; l < r; l /= 2, r /= 2) {
      if (l & 1)
        cover[l++].push_back(item);
      if (r & 1)
        cover[--r].push_back(item);
    }
    bornAt[first].push_back(item);
    birthSteps.insert(first);
  }

  /// Calls visit(item) once for each inserted item overlapping [first, last].
  template <typename Visit> void forEachOverlapping(int first, int last, Visit visit) const {
    for (int node = first + leaves; node >= 1; node /= 2)
      for (int item : cover[node])
        visit(item);
    for (auto it = birthSteps.upper_bound(first);
         it != birthSteps.end() && *it <= last; ++it)
      for (int item : bornAt[*it])
        visit(item);
  }

private:
  int leaves;
  std::vector<std::vector<int>> cover;  // Segment tree of canonical nodes.
  std::vector<std::vector<int>> bornAt; // Items by first step.
  std::set<int> birthSteps;             // Steps with at least one birth.
};

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_PLACEDINDEX_H
