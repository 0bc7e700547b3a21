//===- PerturbedGreedy.cpp - Random-order greedy passes over the top window -===//
#include "PerturbedGreedy.h"
#include "GreedyInternal.h"
#include "ItemsByTime.h"
#include "PlacedIndex.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace bundlefit::planner::detail {

namespace {
// The tries cycle through windows of at least this many free items: on
// 10^5 network-like buffers small windows (a few thousand items, ~4 ms a
// pass) brought seed 1 from +2.4% to +0.3% over the bound in 20 tries, but
// left seed 43 at +4.5%, which needed windows of ~16k (+5.2% -> +0.8%).
constexpr size_t kWindowItems[] = {2048, 8192, 16384};

// A fixed sequence in [0, 1), the same with every standard library.
struct Random {
  std::mt19937_64 bits{0x5eed};
  double next() { return double(bits() >> 11) * 0x1.0p-53; }
};

uint64_t endOf(const Items &items, const std::vector<uint64_t> &offsets, size_t i) {
  return offsets[i] + items.items[i].size;
}

// The window around item `worst`: its lifetime, grown to the lifetimes of
// everything live in it until at least `wanted` items live wholly inside
// (or nothing crosses its edges). inside / crossing: the items it frees and
// the ones that stay.
void windowAround(const Items &items, const ItemsByTime &index, int worst, size_t wanted, int &lo,
                  int &hi, std::vector<int> &inside, std::vector<int> &crossing) {
  lo = items.items[worst].cfirst;
  hi = items.items[worst].clast;
  while (true) {
    inside.clear();
    crossing.clear();
    int grownLo = lo, grownHi = hi;
    index.forEachMeeting(lo, hi, [&](int i) {
      const Item &it = items.items[i];
      (it.cfirst >= lo && it.clast <= hi ? inside : crossing).push_back(i);
      grownLo = std::min(grownLo, it.cfirst);
      grownHi = std::max(grownHi, it.clast);
    });
    if (inside.size() >= wanted || (grownLo == lo && grownHi == hi))
      break;
    lo = grownLo;
    hi = grownHi;
  }
  // Index order, so that the sequence of tries does not depend on the
  // index's internal order.
  std::sort(inside.begin(), inside.end());
  std::sort(crossing.begin(), crossing.end());
}
} // namespace

uint64_t perturbWindows(const Items &items, std::vector<uint64_t> &offsets, uint64_t floor,
                        const PerturbLimits &limits) {
  size_t n = items.items.size();
  // Each item's key mixes the most bytes live on one of its steps (items at
  // the peak first, as Glow's max-live orders do), its lifetime and its
  // size, with random weights and noise per try.
  std::vector<uint64_t> live(size_t(std::max(items.numSteps, 1)) + 1, 0);
  uint64_t most = 1;
  for (const Item &it : items.items) {
    live[it.cfirst] += it.size;
    live[size_t(it.clast) + 1] -= it.size;
  }
  for (size_t s = 1; s < live.size(); ++s)
    live[s] += live[s - 1];
  for (uint64_t bytes : live)
    most = std::max(most, bytes);
  std::vector<double> peak(n, 0), logLength(n), logSize(n);
  for (size_t i = 0; i < n; ++i) {
    const Item &it = items.items[i];
    uint64_t top = 0;
    for (int s = it.cfirst; s <= it.clast; ++s)
      top = std::max(top, live[s]);
    peak[i] = double(top) / double(most);
    logLength[i] = std::log2(double(it.length()));
    logSize[i] = std::log2(double(std::max<uint64_t>(it.size, 1)));
  }

  ItemsByTime index(items);
  Random random;
  std::vector<int> inside, crossing, sequence;
  std::vector<double> key(n);
  std::vector<std::pair<uint64_t, uint64_t>> occupied;
  std::vector<uint64_t> placed(n);
  PlaceStats stats;
  uint64_t lowered = 0;
  for (uint64_t attempt = 0; limits.maxTries == 0 || attempt < limits.maxTries; ++attempt) {
    if (std::chrono::steady_clock::now() >= limits.until)
      break;
    // The item that ends highest (the first on a tie) sets the arena.
    size_t worst = n;
    for (size_t i = 0; i < n; ++i)
      if (items.items[i].size != 0 &&
          (worst == n || endOf(items, offsets, i) > endOf(items, offsets, worst)))
        worst = i;
    if (worst == n || endOf(items, offsets, worst) <= floor)
      break;
    int lo = 0, hi = 0;
    windowAround(items, index, int(worst), kWindowItems[attempt % std::size(kWindowItems)], lo, hi,
                 inside, crossing);
    double weightPeak = 40 * random.next(), weightLength = random.next(),
           weightSize = random.next(), noise = 0.5 * random.next();
    GreedyFit fit = random.next() < 0.5 ? GreedyFit::FirstFit : GreedyFit::BestFit;
    for (int i : inside)
      key[i] = weightPeak * peak[i] + weightLength * logLength[i] + weightSize * logSize[i] +
               noise * random.next();
    sequence = inside;
    std::stable_sort(sequence.begin(), sequence.end(),
                     [&](int a, int b) { return key[a] > key[b]; });
    // The window as a problem of its own: the crossing items, clipped to
    // it, stand where they are; the inside ones go in the sequence's order.
    Items local;
    local.numSteps = hi - lo + 1;
    auto localItem = [&](int i) {
      Item it = items.items[i];
      it.cfirst = std::max(it.cfirst, lo) - lo;
      it.clast = std::min(it.clast, hi) - lo;
      return it;
    };
    for (int i : crossing)
      local.items.push_back(localItem(i));
    for (int i : inside)
      local.items.push_back(localItem(i));
    PlacedIndex windowIndex(local);
    for (int i : crossing) {
      Item it = localItem(i);
      windowIndex.insert({offsets[i], endOf(items, offsets, i)}, it.cfirst, it.clast);
    }
    uint64_t oldTop = 0, newTop = 0;
    for (int i : sequence) {
      Item it = localItem(i);
      occupied.clear();
      windowIndex.forEachOverlapping(it.cfirst, it.clast,
                                     [&](const Range &r) { occupied.push_back(r); });
      placed[i] = chooseOffset(occupied, it.size, it.alignment, fit, stats);
      windowIndex.insert({placed[i], placed[i] + it.size}, it.cfirst, it.clast);
      oldTop = std::max(oldTop, endOf(items, offsets, i));
      newTop = std::max(newTop, placed[i] + it.size);
    }
    if (newTop < oldTop) {
      for (int i : inside)
        offsets[i] = placed[i];
      ++lowered;
    }
  }
  return lowered;
}

} // namespace bundlefit::planner::detail
