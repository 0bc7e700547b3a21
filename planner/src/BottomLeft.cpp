//===- BottomLeft.cpp - A first placement in O(n log n) -------------------===//
//
// The placement is built from the bottom up. Its top edge over time (the
// skyline) is kept as stretches of equal height; the lowest stretch (the
// leftmost of equals), [a, b) at height h, is filled next. An item placed
// at h there must start at step a (the step before a is higher, so an item
// born earlier would overlap it) and die before b (the step after is
// higher too). Of the items that do, the one with the largest area among
// the longest few goes in; when none does, step a can only be used from the
// height of a neighbour on, so the steps up to the next one where an item
// starts are raised to the lower neighbour. Every round places an item or
// merges stretches, and each is a few queue and tree operations: O(n log n)
// whatever the lifetimes, unlike a first-fit pass, which looks at every
// placed item that meets the new one.
//
//===----------------------------------------------------------------------===//
#include "Placement.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <numeric>
#include <queue>
#include <utility>
#include <vector>

namespace bundlefit::planner::detail {

namespace {
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
constexpr int kNone = std::numeric_limits<int>::max();
// Items compared by area among the longest that fit: more is slower and,
// on the perfect-packing tuning problems, no better.
constexpr int kLooked = 8;

// Items by first step, then by last step: an array with, per first step,
// the position of its first unplaced item (next) and of the last unplaced
// one at or before any position (prev), both with path halving.
class ItemsByStart {
public:
  explicit ItemsByStart(const Items &items) : items(items) {
    int steps = std::max(items.numSteps, 1);
    for (size_t i = 0; i < items.items.size(); ++i)
      if (items.items[i].size != 0)
        order.push_back(int(i));
    std::sort(order.begin(), order.end(), [&](int x, int y) {
      const Item &a = items.items[x], &b = items.items[y];
      return a.cfirst != b.cfirst ? a.cfirst < b.cfirst
             : a.clast != b.clast ? a.clast < b.clast
                                  : x < y;
    });
    begin.assign(size_t(steps) + 1, 0);
    for (int i : order) {
      ++begin[size_t(items.items[i].cfirst) + 1];
      lastAt.push_back(items.items[i].clast);
    }
    std::partial_sum(begin.begin(), begin.end(), begin.begin());
    next.resize(order.size() + 1);
    std::iota(next.begin(), next.end(), 0);
    prev.resize(order.size() + 1);
    std::iota(prev.begin(), prev.end(), 0); // prev[p + 1]: last alive <= p, or 0
    leaves = 1;
    while (leaves < steps)
      leaves *= 2;
    lowestLast.assign(2 * size_t(leaves), kNone);
    for (int s = 0; s < steps; ++s)
      refresh(s);
  }

  /// The first step in [a, b) where an unplaced item starts that dies
  /// before b, or b.
  int firstFitting(int a, int b) const {
    int found = leftmost(1, 0, leaves, a, b);
    return found < 0 ? b : found;
  }

  /// Of the unplaced items starting at a that die before b, the largest
  /// in area among the kLooked longest; -1 when there is none.
  int choose(int a, int b) {
    int best = -1;
    int p = findPrev(upperLast(a, b));
    for (int k = 0; k < kLooked && p > begin[a]; ++k, p = findPrev(p - 1)) {
      int i = order[p - 1];
      const Item &it = items.items[i];
      if (best < 0 || area(it) > area(items.items[best]))
        best = i;
    }
    return best;
  }

  void remove(int i) {
    const Item &it = items.items[i];
    int p = int(std::lower_bound(lastAt.begin() + begin[it.cfirst],
                                 lastAt.begin() + begin[it.cfirst + 1], it.clast) -
                lastAt.begin());
    while (order[p] != i) // Ties by index, in order.
      ++p;
    next[p] = p + 1;
    prev[p + 1] = p;
    refresh(it.cfirst);
  }

private:
  static unsigned __int128 area(const Item &it) { return (unsigned __int128)it.size * it.length(); }

  // One past the last position of step a with an item dying before b.
  int upperLast(int a, int b) const {
    return int(std::lower_bound(lastAt.begin() + begin[a], lastAt.begin() + begin[a + 1], b) -
               lastAt.begin());
  }

  int findNext(int p) {
    while (next[p] != p)
      p = next[p] = next[next[p]];
    return p;
  }
  // One past the last alive position before p (p itself is one past).
  int findPrev(int p) {
    while (prev[p] != p)
      p = prev[p] = prev[prev[p]];
    return p;
  }

  // The leftmost step of [a, b) under `node` (its steps [lo, hi)) whose
  // earliest death is before b.
  int leftmost(int node, int lo, int hi, int a, int b) const {
    if (hi <= a || lo >= b || lowestLast[node] >= b)
      return -1;
    if (hi - lo == 1)
      return lo;
    int mid = (lo + hi) / 2;
    int found = leftmost(2 * node, lo, mid, a, b);
    return found >= 0 ? found : leftmost(2 * node + 1, mid, hi, a, b);
  }

  void refresh(int s) {
    int p = findNext(begin[s]);
    int node = s + leaves;
    lowestLast[node] = p < begin[s + 1] ? lastAt[p] : kNone;
    for (node /= 2; node >= 1; node /= 2)
      lowestLast[node] = std::min(lowestLast[2 * node], lowestLast[2 * node + 1]);
  }

  const Items &items;
  std::vector<int> order, lastAt, begin, next, prev; // lastAt[p]: order[p]'s last step.
  int leaves = 1;
  std::vector<int> lowestLast; // Per step (tree): the earliest death of its unplaced items.
};

// (height, start) pairs, lowest first. The lowest stretch only ever rises
// (a stretch that is pushed is higher than the one being filled, or as high
// and further right), so a radix heap does: each entry moves down its
// buckets at most 96 times, in arrays, where a binary heap walks log n
// scattered entries per operation.
class MonotoneQueue {
public:
  bool empty() const { return size == 0; }
  void push(std::pair<uint64_t, int> entry) {
    Key key = keyOf(entry);
    assert(key >= last && "the skyline's lowest stretch went down");
    buckets[bucketOf(key)].push_back(key);
    ++size;
  }
  std::pair<uint64_t, int> top() {
    if (buckets[0].empty()) {
      size_t b = 1;
      while (buckets[b].empty())
        ++b;
      last = *std::min_element(buckets[b].begin(), buckets[b].end());
      for (Key key : buckets[b])
        buckets[bucketOf(key)].push_back(key);
      buckets[b].clear();
    }
    return {uint64_t(last >> 32), int(uint32_t(last))};
  }
  void pop() {
    top();
    buckets[0].pop_back();
    --size;
  }

private:
  using Key = unsigned __int128; // height << 32 | start
  static Key keyOf(std::pair<uint64_t, int> e) { return Key(e.first) << 32 | uint32_t(e.second); }
  // 0 for the last key popped; else 1 + the highest bit where they differ.
  size_t bucketOf(Key key) const {
    Key d = key ^ last;
    if (d == 0)
      return 0;
    uint64_t hi = uint64_t(d >> 64), lo = uint64_t(d);
    return hi ? size_t(128 - __builtin_clzll(hi)) : size_t(64 - __builtin_clzll(lo));
  }
  std::vector<Key> buckets[129];
  Key last = 0;
  size_t size = 0;
};

// The top edge: stretches [start, end) at a height, in arrays indexed by
// their first and last step, and a queue of them by height whose stale
// entries are skipped when they come up.
class Skyline {
public:
  explicit Skyline(int steps)
      : steps(steps), end(size_t(steps) + 1, -1), height(size_t(steps) + 1, 0),
        startEndingAt(size_t(steps) + 1, 0) {
    add(0, steps, 0);
  }

  /// The lowest stretch (the leftmost of equals) as (height, start); false
  /// when every step is done.
  bool bottom(uint64_t &h, int &start) {
    while (!lowest.empty()) {
      auto [eh, es] = lowest.top();
      if (end[size_t(es)] >= 0 && height[size_t(es)] == eh) {
        h = eh;
        start = es;
        return true;
      }
      lowest.pop();
    }
    return false;
  }
  int endOf(int start) const { return end[size_t(start)]; }
  uint64_t heightBefore(int start) const {
    return start == 0 ? kNever : height[size_t(startEndingAt[size_t(start)])];
  }
  uint64_t heightAt(int start) const { return start == steps ? kNever : height[size_t(start)]; }

  /// Sets [a, b), which lies inside the stretch starting at a, to height h.
  void raise(int a, int b, uint64_t h) {
    int e = end[size_t(a)];
    uint64_t old = height[size_t(a)];
    end[size_t(a)] = -1;
    if (b < e)
      add(b, e, old);
    add(a, b, h);
  }

private:
  void add(int start, int stop, uint64_t h) {
    if (stop < steps && end[size_t(stop)] >= 0 && height[size_t(stop)] == h) {
      int next = stop;
      stop = end[size_t(next)];
      end[size_t(next)] = -1;
    }
    if (start > 0) {
      int before = startEndingAt[size_t(start)];
      if (end[size_t(before)] == start && height[size_t(before)] == h)
        start = before;
    }
    end[size_t(start)] = stop;
    height[size_t(start)] = h;
    startEndingAt[size_t(stop)] = start;
    if (h != kNever)
      lowest.push({h, start});
  }

  int steps;
  std::vector<int> end;           // Per start: the stretch's end, or -1.
  std::vector<uint64_t> height;   // Per start.
  std::vector<int> startEndingAt; // Per end: the start of the stretch ending there.
  MonotoneQueue lowest;
};
// What a cut-short placement did not reach goes on shelves above the rest,
// a size class (the size rounded up to a power of two, one alignment) at a
// time: taken by first step, an item reuses a shelf of its class whose last
// item has died, else opens one. That is interval partitioning, which needs
// as many shelves as the class has items live at once, so each class takes
// at most twice its own peak; O(n log n), and valid whatever was placed.
void shelveRest(const Items &items, const std::vector<char> &done, std::vector<uint64_t> &offsets) {
  uint64_t height = 0;
  std::vector<int> rest;
  for (size_t i = 0; i < items.items.size(); ++i) {
    if (done[i])
      height = std::max(height, offsets[i] + items.items[i].size);
    else if (items.items[i].size != 0)
      rest.push_back(int(i));
  }
  // By first step (a counting sort: ties stay in index order).
  std::vector<int> firstAt(size_t(std::max(items.numSteps, 1)) + 1, 0), byFirst(rest.size());
  for (int i : rest)
    ++firstAt[size_t(items.items[i].cfirst) + 1];
  std::partial_sum(firstAt.begin(), firstAt.end(), firstAt.begin());
  for (int i : rest)
    byFirst[size_t(firstAt[size_t(items.items[i].cfirst)]++)] = i;
  rest.swap(byFirst);
  struct Class {
    uint64_t height, alignment;
    // (last step of the shelf's latest item, shelf), earliest first.
    std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>,
                        std::greater<std::pair<int, int>>>
        freeAfter;
  };
  std::vector<Class> classes;
  std::vector<std::pair<uint64_t, int>> classOf[65]; // Per log2: (alignment, class).
  std::vector<int> shelfClass, shelfOf(items.items.size(), -1);
  for (int i : rest) {
    const Item &it = items.items[i];
    int log2 = it.size <= 1 ? 0 : 64 - __builtin_clzll(it.size - 1);
    int k = -1;
    for (auto [alignment, index] : classOf[log2])
      if (alignment == it.alignment)
        k = index;
    if (k < 0) {
      k = int(classes.size());
      classOf[log2].push_back({it.alignment, k});
      classes.push_back({uint64_t(1) << log2, it.alignment, {}});
    }
    Class &c = classes[size_t(k)];
    int shelf;
    if (!c.freeAfter.empty() && c.freeAfter.top().first < it.cfirst) {
      shelf = c.freeAfter.top().second;
      c.freeAfter.pop();
    } else {
      shelf = int(shelfClass.size());
      shelfClass.push_back(k);
    }
    c.freeAfter.push({it.clast, shelf});
    shelfOf[size_t(i)] = shelf;
  }
  std::vector<uint64_t> shelfOffset(shelfClass.size());
  for (size_t s = 0; s < shelfClass.size(); ++s) {
    const Class &c = classes[size_t(shelfClass[s])];
    shelfOffset[s] = alignUp(height, c.alignment);
    height = shelfOffset[s] + c.height;
  }
  for (int i : rest)
    offsets[size_t(i)] = shelfOffset[size_t(shelfOf[size_t(i)])];
}
} // namespace

bool placeBottomLeft(const Items &items, std::vector<uint64_t> &offsets, Budget *budget,
                     uint64_t units) {
  offsets.assign(items.items.size(), 0);
  // The units are spent a batch of items at a time, as the items are
  // placed, so that a budget that runs out stops the placement part way.
  constexpr size_t kBatch = 1024;
  uint64_t spent = 0;
  size_t placed = 0, total = std::max<size_t>(items.items.size(), 1);
  // Shelving what is left costs 0.05-0.15 us an item at 10^5, 0.2-0.3 at
  // 10^6 on the shared machine (cache misses): the placement stops while
  // the time left still covers that.
  double shelfSeconds = 0.15e-6 * (1 + double(total) / 1e6);
  auto spend = [&](size_t done) {
    uint64_t due = uint64_t((unsigned __int128)units * done / total);
    bool ok = budget->spend(due - spent);
    spent = due;
    return ok && budget->timeLeft(shelfSeconds * double(total - done));
  };
  std::vector<char> done(items.items.size(), 0);
  // Setting up (the items sorted, a tree over the steps) costs about as
  // much again, 0.3 s at 10^6 perfect-packing items, and nothing can stop
  // before the first batch: begin only where the time left covers both.
  bool complete =
      budget == nullptr || (spend(0) && budget->timeLeft(2 * shelfSeconds * double(total)));
  if (complete) {
    ItemsByStart unplaced(items);
    Skyline top(std::max(items.numSteps, 1));
    uint64_t h = 0;
    int a = 0;
    while (top.bottom(h, a)) {
      int b = top.endOf(a);
      int i = unplaced.choose(a, b);
      if (i >= 0) {
        const Item &it = items.items[i];
        offsets[i] = alignUp(h, it.alignment);
        done[i] = 1;
        unplaced.remove(i);
        top.raise(a, it.clast + 1, offsets[i] + it.size);
        if (budget && ++placed % kBatch == 0 && !spend(placed)) {
          complete = false;
          break;
        }
        continue;
      }
      // Nothing can use [a, next) at h: an item covering it later starts
      // before a (above the left neighbour) or dies at or after b (above
      // the right one).
      int next = unplaced.firstFitting(a + 1, b);
      top.raise(a, next, std::min(top.heightBefore(a), top.heightAt(b)));
    }
  }
  if (complete) {
    if (budget)
      spend(total);
    return true;
  }
  shelveRest(items, done, offsets);
  return false;
}

std::vector<uint64_t> placeBottomLeft(const Items &items) {
  std::vector<uint64_t> offsets;
  placeBottomLeft(items, offsets, nullptr, 0);
  return offsets;
}

} // namespace bundlefit::planner::detail
