//===- RankSet.h - A set of ranks with neighbour queries --------*- C++ -*-===//
//
// The plan checker's live buffers, by their rank in offset order: a set of
// integers in [0, n) as a tree of 64-bit words (a bit per rank at the bottom,
// a bit per non-empty word above). Insert, erase and the nearest member on
// either side read one word per level, 4 levels for 10^6 ranks in 130 KB,
// where a std::set follows a pointer per level of a tree of 20 and allocates.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_RANKSET_H
#define BUNDLEFIT_PLANNER_SRC_RANKSET_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bundlefit::planner::detail {

class RankSet {
public:
  static constexpr size_t kNone = ~size_t(0);

  explicit RankSet(size_t n) {
    do {
      n = (n + 63) / 64;
      levels.emplace_back(n, 0);
    } while (n > 1);
  }

  void insert(size_t r) {
    for (std::vector<uint64_t> &level : levels) {
      uint64_t &word = level[r / 64];
      bool hadMembers = word != 0;
      word |= bit(r);
      if (hadMembers) // the levels above already have it
        return;
      r /= 64;
    }
  }

  void erase(size_t r) {
    for (std::vector<uint64_t> &level : levels) {
      uint64_t &word = level[r / 64];
      word &= ~bit(r);
      if (word != 0) // the levels above still have it
        return;
      r /= 64;
    }
  }

  /// The smallest member >= r, or kNone.
  size_t next(size_t r) const {
    size_t level = 0;
    for (;; ++level, r = r / 64 + 1) { // up: the words after r's
      if (level == levels.size())
        return kNone;
      if (r / 64 >= levels[level].size())
        continue;
      uint64_t above = levels[level][r / 64] & (~uint64_t(0) << (r % 64));
      if (above != 0) {
        r = r / 64 * 64 + size_t(__builtin_ctzll(above));
        break;
      }
    }
    for (; level > 0; --level) // down: the lowest member under r
      r = r * 64 + size_t(__builtin_ctzll(levels[level - 1][r]));
    return r;
  }

  /// The largest member < r, or kNone.
  size_t prev(size_t r) const {
    size_t level = 0;
    for (;; ++level, r /= 64) { // up: the words before r's
      if (level == levels.size() || r == 0)
        return kNone;
      size_t last = r - 1;
      uint64_t below = levels[level][last / 64] & (~uint64_t(0) >> (63 - last % 64));
      if (below != 0) {
        r = last / 64 * 64 + size_t(63 - __builtin_clzll(below));
        break;
      }
      r = last; // so that r / 64 below is last's word, which holds nothing before r
    }
    for (; level > 0; --level) // down: the highest member under r
      r = r * 64 + size_t(63 - __builtin_clzll(levels[level - 1][r]));
    return r;
  }

private:
  static uint64_t bit(size_t r) { return uint64_t(1) << (r % 64); }

  std::vector<std::vector<uint64_t>> levels; // levels[0]: a bit per rank.
};

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_RANKSET_H
