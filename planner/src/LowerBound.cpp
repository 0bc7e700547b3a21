//===- LowerBound.cpp - Live-peak lower bound -----------------------------===//
//
// Sweep over the steps where the live set changes. An honoured in-place
// chain is one item whose bytes on a step are the largest footprint among
// its members live on that step, so a pair is counted once where it meets.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/planner/LowerBound.h"

#include "Items.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <utility>

namespace bundlefit::planner {

namespace {
struct Event {
  int64_t step;
  int64_t delta; // Signed bytes; sizes stay far below 2^63.
};

// Adds the bytes-over-time profile of one chain of buffers to the events.
void addChainProfile(const Problem &problem, const std::vector<int> &members,
                     std::vector<Event> &events) {
  if (members.size() == 1) {
    const Buffer &b = problem.buffers[members[0]];
    int64_t fp = int64_t(footprint(b));
    events.push_back({b.first, fp});
    events.push_back({int64_t(b.last) + 1, -fp});
    return;
  }
  // Cut the chain's lifetime where any member starts or ends; on each piece
  // the chain needs the largest footprint among its live members. One sweep
  // with a multiset of live footprints keeps a chain of m members at
  // O(m log m) (an in-place chain of 20,000 Relus is one chain).
  struct Change {
    int64_t step;
    bool starts;
    int64_t bytes;
  };
  std::vector<Change> changes;
  changes.reserve(members.size() * 2);
  for (int m : members) {
    const Buffer &b = problem.buffers[m];
    const int64_t fp = int64_t(footprint(b));
    changes.push_back({b.first, true, fp});
    changes.push_back({int64_t(b.last) + 1, false, fp});
  }
  std::sort(changes.begin(), changes.end(),
            [](const Change &a, const Change &b) { return a.step < b.step; });
  std::multiset<int64_t> live;
  for (size_t k = 0; k < changes.size();) {
    const int64_t step = changes[k].step;
    for (; k < changes.size() && changes[k].step == step; ++k) {
      if (changes[k].starts)
        live.insert(changes[k].bytes);
      else
        live.erase(live.find(changes[k].bytes));
    }
    if (live.empty() || k == changes.size())
      continue;
    const int64_t bytes = *live.rbegin();
    events.push_back({step, bytes});
    events.push_back({changes[k].step, -bytes});
  }
}
} // namespace

namespace detail {
uint64_t lowerBoundOf(const Problem &problem, const Items &items) {
  // Without in-place chains every item is one buffer on the compressed
  // steps: a difference array over them, O(n), where sorting 2n events took
  // a fifth of a tiny time limit's run at 10^6 buffers.
  if (items.items.size() == problem.buffers.size()) {
    std::vector<int64_t> delta(size_t(items.numSteps) + 1, 0);
    for (size_t i = 0; i < problem.buffers.size(); ++i) {
      const Item &it = items.items[items.itemOfBuffer[i]];
      int64_t fp = int64_t(footprint(problem.buffers[i]));
      delta[size_t(it.cfirst)] += fp;
      delta[size_t(it.clast) + 1] -= fp;
    }
    int64_t live = 0, peak = 0;
    for (int64_t d : delta)
      peak = std::max(peak, live += d);
    return uint64_t(peak);
  }

  std::vector<std::vector<int>> chains(items.items.size());
  for (size_t i = 0; i < problem.buffers.size(); ++i)
    chains[items.itemOfBuffer[i]].push_back(int(i));

  std::vector<Event> events;
  events.reserve(problem.buffers.size() * 2);
  for (const std::vector<int> &members : chains)
    addChainProfile(problem, members, events);
  std::sort(events.begin(), events.end(),
            [](const Event &a, const Event &b) { return a.step < b.step; });

  // Apply all changes of one step before reading the total.
  int64_t live = 0, peak = 0;
  for (size_t k = 0; k < events.size();) {
    int64_t step = events[k].step;
    for (; k < events.size() && events[k].step == step; ++k)
      live += events[k].delta;
    peak = std::max(peak, live);
  }
  return uint64_t(peak);
}
} // namespace detail

uint64_t computeLowerBound(const Problem &problem) {
  return detail::lowerBoundOf(problem, detail::buildItems(problem));
}

} // namespace bundlefit::planner
