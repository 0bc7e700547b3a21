// Local searches tried on the perfect packings and not kept (planner/README, "Tried";
// docs/studies/local-search.md). Not part of the product: a record that reproduces the
// figures. Reads a MiniMalloc CSV (id,lower,upper,size[,offset]; `exact_fill.py csv` writes
// the benchmark's problems) and prints how far over the live-peak bound the best placement
// found ends.
//
//   swo FILE SECONDS      squeaky-wheel first fit: items ending above the target move up the
//                         order (their priority grows by their size), first fit again
//   ruin FILE SECONDS     ruin and recreate: the items above a random level in a random
//                         window of up to 16 steps out, back by first fit; kept when the
//                         area over the target does not grow
//   buddy FILE            one first-fit pass, largest first, each item aligned to its size
//   flip FILE SECONDS     from a plan (the offset column, e.g. plan-buffers -o): turn it
//                         upside down, let every item fall to its lowest fit, repeat
//
// Build: g++ -O2 -std=c++17 -o local_search docs/studies/local_search.cpp
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {
struct Item {
  int64_t lo, hi, size, offset; // Live on steps [lo, hi).
};

struct Problem {
  std::vector<Item> items;
  std::vector<std::vector<int>> meets; // Per item, the items live on a step with it.
  int64_t steps = 0, bound = 0;
};

Problem read(const char *path) {
  Problem p;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string f[5];
    for (std::string &x : f)
      std::getline(row, x, ',');
    p.items.push_back({std::stoll(f[1]), std::stoll(f[2]), std::stoll(f[3]),
                       f[4].empty() ? 0 : std::stoll(f[4])});
  }
  size_t n = p.items.size();
  for (const Item &x : p.items)
    p.steps = std::max(p.steps, x.hi);
  std::vector<int64_t> live(p.steps + 1);
  for (const Item &x : p.items)
    for (int64_t t = x.lo; t < x.hi; ++t)
      live[t] += x.size;
  p.bound = *std::max_element(live.begin(), live.end());
  std::vector<int> byLo(n);
  for (size_t i = 0; i < n; ++i)
    byLo[i] = int(i);
  std::sort(byLo.begin(), byLo.end(), [&](int a, int b) { return p.items[a].lo < p.items[b].lo; });
  p.meets.resize(n);
  std::vector<int> active, keep;
  for (int i : byLo) {
    keep.clear();
    for (int j : active)
      if (p.items[j].hi > p.items[i].lo) {
        keep.push_back(j);
        p.meets[i].push_back(j);
        p.meets[j].push_back(i);
      }
    keep.push_back(i);
    active.swap(keep);
  }
  return p;
}

// First fit of item i among the placed items it meets (offset >= 0), at a multiple of
// `align` (1, or the item's size for buddy alignment).
int64_t firstFit(const Problem &p, const std::vector<int64_t> &offset, int i, bool buddy) {
  std::vector<std::pair<int64_t, int64_t>> taken;
  for (int j : p.meets[i])
    if (offset[j] >= 0)
      taken.push_back({offset[j], offset[j] + p.items[j].size});
  std::sort(taken.begin(), taken.end());
  int64_t size = p.items[i].size, align = buddy ? size : 1, at = 0;
  for (const auto &r : taken) {
    if (r.first >= at + size)
      break;
    if (r.second > at)
      at = (r.second + align - 1) / align * align;
  }
  return at;
}

int64_t top(const Problem &p, const std::vector<int64_t> &offset) {
  int64_t t = 0;
  for (size_t i = 0; i < offset.size(); ++i)
    t = std::max(t, offset[i] + p.items[i].size);
  return t;
}

std::vector<int64_t> placeInOrder(const Problem &p, const std::vector<int> &order, bool buddy) {
  std::vector<int64_t> offset(p.items.size(), -1);
  for (int i : order)
    offset[i] = firstFit(p, offset, i, buddy);
  return offset;
}

std::vector<int> largestFirst(const Problem &p) {
  std::vector<int> order(p.items.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = int(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return p.items[a].size > p.items[b].size; });
  return order;
}

struct Clock {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

// Squeaky wheel: priorities start at size x lifetime; after each pass the items ending
// above 90% of the way from the bound to the best top gain their size (times 0.5-1).
int64_t squeakyWheel(const Problem &p, double seconds) {
  size_t n = p.items.size();
  std::vector<double> priority(n);
  for (size_t i = 0; i < n; ++i)
    priority[i] = double(p.items[i].size) * double(p.items[i].hi - p.items[i].lo);
  std::mt19937_64 rng(1);
  int64_t best = INT64_MAX;
  for (Clock clock; clock.seconds() < seconds;) {
    std::vector<int> order(n);
    for (size_t i = 0; i < n; ++i)
      order[i] = int(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return priority[a] > priority[b]; });
    std::vector<int64_t> offset = placeInOrder(p, order, false);
    best = std::min(best, top(p, offset));
    int64_t target = p.bound + (best - p.bound) * 9 / 10;
    for (size_t i = 0; i < n; ++i)
      if (offset[i] + p.items[i].size > target)
        priority[i] += double(p.items[i].size) * (0.5 + 0.5 * double(rng() % 1000) / 1000.0);
  }
  return best;
}

// The area an item puts over `target` (bytes over it x its lifetime).
double areaOver(const Item &x, int64_t offset, int64_t target) {
  return offset + x.size > target ? double(offset + x.size - target) * double(x.hi - x.lo) : 0;
}

int64_t ruinAndRecreate(const Problem &p, double seconds) {
  size_t n = p.items.size();
  std::vector<int64_t> offset = placeInOrder(p, largestFirst(p), false);
  std::vector<std::vector<int>> bornAt(p.steps + 1);
  int64_t longest = 0;
  for (size_t i = 0; i < n; ++i) {
    bornAt[p.items[i].lo].push_back(int(i));
    longest = std::max(longest, p.items[i].hi - p.items[i].lo);
  }
  int64_t best = top(p, offset), target = p.bound + (best - p.bound) * 9 / 10;
  auto totalOver = [&] {
    double a = 0;
    for (size_t i = 0; i < n; ++i)
      a += areaOver(p.items[i], offset[i], target);
    return a;
  };
  double over = totalOver();
  std::mt19937_64 rng(1);
  std::vector<int> out;
  std::vector<int64_t> saved;
  for (Clock clock; clock.seconds() < seconds;) {
    int64_t t = int64_t(rng() % uint64_t(p.steps)), width = 1 + int64_t(rng() % 16);
    int64_t level = int64_t(double(rng() % 1000) / 1000.0 * double(target));
    out.clear();
    for (int64_t s = std::max<int64_t>(0, t - longest); s < std::min(p.steps, t + width); ++s)
      for (int i : bornAt[s])
        if (p.items[i].hi > t && offset[i] + p.items[i].size > level)
          out.push_back(i);
    if (out.empty() || out.size() > 400)
      continue;
    double before = 0, after = 0;
    saved.clear();
    for (int i : out) {
      saved.push_back(offset[i]);
      before += areaOver(p.items[i], offset[i], target);
      offset[i] = -1;
    }
    switch (rng() % 3) {
    case 0:
      std::sort(out.begin(), out.end(),
                [&](int a, int b) { return p.items[a].size > p.items[b].size; });
      break;
    case 1:
      std::sort(out.begin(), out.end(), [&](int a, int b) {
        const Item &x = p.items[a], &y = p.items[b];
        return (x.hi - x.lo) * x.size > (y.hi - y.lo) * y.size;
      });
      break;
    default:
      std::shuffle(out.begin(), out.end(), rng);
    }
    for (int i : out) {
      offset[i] = firstFit(p, offset, i, false);
      after += areaOver(p.items[i], offset[i], target);
    }
    if (after > before) {
      for (size_t k = 0; k < out.size(); ++k)
        offset[out[k]] = saved[k];
      continue;
    }
    over += after - before;
    if (over <= 0) { // Every item under the target: a new best, and a lower target.
      best = std::min(best, top(p, offset));
      target = p.bound + (best - p.bound) * 9 / 10;
      over = totalOver();
    }
  }
  return best;
}

// Turned upside down, every item falls to its lowest fit in the order of its turned offset:
// none ends higher than it was turned, so the top never grows.
int64_t flipAndCompact(const Problem &p, double seconds) {
  size_t n = p.items.size();
  std::vector<int64_t> offset(n);
  for (size_t i = 0; i < n; ++i)
    offset[i] = p.items[i].offset;
  int64_t best = top(p, offset);
  std::printf("start: %.3f%% over the bound\n", 100.0 * double(best - p.bound) / double(p.bound));
  for (Clock clock; clock.seconds() < seconds;) {
    int64_t t = top(p, offset);
    std::vector<int> order(n);
    for (size_t i = 0; i < n; ++i) {
      offset[i] = t - offset[i] - p.items[i].size;
      order[i] = int(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return offset[a] < offset[b]; });
    offset = placeInOrder(p, order, false);
    best = std::min(best, top(p, offset));
  }
  return best;
}
} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 2 ? argv[1] : "";
  double seconds = argc > 3 ? std::atof(argv[3]) : 5;
  if (mode != "swo" && mode != "ruin" && mode != "buddy" && mode != "flip") {
    std::fprintf(stderr, "usage: %s swo|ruin|buddy|flip FILE [SECONDS]\n", argv[0]);
    return 2;
  }
  Problem p = read(argv[2]);
  int64_t best = mode == "swo"    ? squeakyWheel(p, seconds)
                 : mode == "ruin" ? ruinAndRecreate(p, seconds)
                 : mode == "flip" ? flipAndCompact(p, seconds)
                                  : top(p, placeInOrder(p, largestFirst(p), true));
  std::printf("%s %s: %zu buffers, %.3f%% over the bound\n", mode.c_str(), argv[2], p.items.size(),
              100.0 * double(best - p.bound) / double(p.bound));
  return 0;
}
