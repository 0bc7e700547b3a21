//===- PerfectPacking.cpp - Cut a full strip into buffers -----------------===//
#include "bundlefit/planner/formats/PerfectPacking.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

namespace bundlefit::planner::formats {

namespace {
constexpr uint64_t kHeight = uint64_t(1) << 24;
// The chance that the buffers filling one hole share a lifetime (so the
// hole opens again whole), and that a size larger than its hole grows the
// hole by ending the buffers above it a step early. Without them, holes,
// and so sizes, would shrink step after step.
constexpr double kTogether = 0.5;
constexpr double kGrow = 0.05;
// Uniform sizes: from 1/256 to 1/8 of the strip.
constexpr uint64_t kSmallestPart = 256, kLargestPart = 8;

// splitmix64: the same numbers on every platform and standard library.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return double(next() >> 11) * 0x1.0p-53; } // [0, 1)
  uint64_t between(uint64_t lo, uint64_t hi) { return lo + next() % (hi - lo + 1); }
  double logUniform(double lo, double hi) { return lo * std::pow(hi / lo, unit()); }

private:
  uint64_t state;
};

// One family's distributions of lifetimes and sizes.
struct Shape {
  PackingFamily family;
  uint64_t length(Random &r) const {
    switch (family) {
    case PackingFamily::Uniform:
      return r.between(1, 16);
    case PackingFamily::HeavyTailed:
      return uint64_t(r.logUniform(1, 257));
    case PackingFamily::PowerOfTwo:
      return r.between(1, 32);
    case PackingFamily::LongLived:
      return r.unit() < 0.05 ? r.between(64, 2048) : r.between(1, 8);
    }
    return 1;
  }
  uint64_t size(Random &r) const {
    switch (family) {
    case PackingFamily::Uniform:
      return r.between(kHeight / kSmallestPart, kHeight / kLargestPart);
    case PackingFamily::HeavyTailed:
      return uint64_t(
          std::min(double(kHeight / 2), (kHeight / 256) / std::pow(1 - r.unit(), 1 / 1.1)));
    case PackingFamily::PowerOfTwo:
      return uint64_t(1) << r.between(14, 22);
    case PackingFamily::LongLived:
      return uint64_t(r.logUniform(kHeight / 1024, kHeight / 8));
    }
    return 1;
  }
  // A piece of a hole with `room` bytes: all of it when the rest would be
  // a sliver under 64 bytes; a power of two in that family (every hole is
  // then a multiple of 64).
  uint64_t fit(uint64_t size, uint64_t room) const {
    size = std::min(size, room);
    if (family == PackingFamily::PowerOfTwo) {
      while (size & (size - 1))
        size &= size - 1;
      return size;
    }
    return room - size < 64 ? room : size;
  }
};

// The strip swept step by step: what dies leaves holes (merged with the
// free bytes beside them), and buffers born on the step fill every hole.
// A size that does not fit its hole grows the hole first: the live
// buffers above it end a step early (otherwise holes, and so sizes, would
// shrink step after step). Every step has the whole strip live; lifetimes
// end at the last step.
Problem sweepStrip(size_t n, const Shape &shape, Random &r) {
  Problem p;
  std::map<uint64_t, uint64_t> holes{{0, kHeight}}; // offset -> end
  std::set<std::pair<uint64_t, int>> dying;         // (last step, buffer)
  std::map<uint64_t, int> liveAt;                   // offset -> buffer
  auto free = [&](int b) {
    uint64_t offset = p.buffers[b].id, end = offset + p.buffers[b].size;
    dying.erase({uint64_t(p.buffers[b].last), b});
    liveAt.erase(offset);
    auto next = holes.find(end);
    if (next != holes.end()) {
      end = next->second;
      holes.erase(next);
    }
    auto after = holes.lower_bound(offset);
    if (after != holes.begin() && std::prev(after)->second == offset)
      std::prev(after)->second = end;
    else
      holes[offset] = end;
  };
  uint64_t step = 0;
  for (; p.buffers.size() < n; ++step) {
    while (!dying.empty() && dying.begin()->first < step)
      free(dying.begin()->second);
    while (!holes.empty()) {
      auto [offset, end] = *holes.begin();
      holes.erase(holes.begin());
      bool together = r.unit() < kTogether;
      uint64_t groupLength = shape.length(r);
      for (uint64_t at = offset; at < end;) {
        uint64_t size = shape.size(r);
        // Grow the hole into the buffers above it (born earlier).
        bool grow = r.unit() < kGrow;
        while (grow && at + size > end && liveAt.count(end) &&
               uint64_t(p.buffers[liveAt[end]].first) < step) {
          int above = liveAt[end];
          free(above);
          p.buffers[above].last = int(step) - 1;
          auto grown = holes.find(end);
          end = grown->second;
          holes.erase(grown);
        }
        size = shape.fit(size, end - at);
        uint64_t length = together ? groupLength : shape.length(r);
        uint64_t last = step + length - 1;
        int b = int(p.buffers.size());
        p.buffers.push_back({int(at), size, 1, int(step), int(last)}); // id: offset for now
        dying.insert({last, b});
        liveAt[at] = b;
        at += size;
      }
    }
  }
  // The strip ends after the step where the n-th buffer was born.
  for (Buffer &b : p.buffers)
    b.last = std::min(b.last, int(step) - 1);
  // In a random order: listed as cut, the buffers born on a step would be
  // in offset order, and a first-fit pass in that order rebuilds the strip.
  for (size_t b = p.buffers.size(); b > 1; --b)
    std::swap(p.buffers[b - 1], p.buffers[r.next() % b]);
  for (size_t b = 0; b < p.buffers.size(); ++b)
    p.buffers[b].id = int(b);
  return p;
}
} // namespace

const std::vector<PackingFamily> &allPackingFamilies() {
  static const std::vector<PackingFamily> all = {PackingFamily::Uniform, PackingFamily::HeavyTailed,
                                                 PackingFamily::PowerOfTwo,
                                                 PackingFamily::LongLived};
  return all;
}

std::string toString(PackingFamily family) {
  switch (family) {
  case PackingFamily::Uniform:
    return "uniform";
  case PackingFamily::HeavyTailed:
    return "heavy-tailed";
  case PackingFamily::PowerOfTwo:
    return "power-of-two";
  case PackingFamily::LongLived:
    return "long-lived";
  }
  return "unknown";
}

bool packingFamilyFromString(const std::string &name, PackingFamily &family) {
  for (PackingFamily f : allPackingFamilies())
    if (toString(f) == name) {
      family = f;
      return true;
    }
  return false;
}

Problem perfectPackingProblem(int n, PackingFamily family, uint64_t seed) {
  Random random(seed);
  return sweepStrip(size_t(std::max(n, 1)), Shape{family}, random);
}

} // namespace bundlefit::planner::formats
