//===- PlanChecker.cpp - Independent proof of a plan's safety -------------===//
//
// Sweeps the steps in order keeping the live buffers in a set ordered by
// offset. Live buffers never share a byte (bar an in-place or shifted pair), so a new
// buffer only has to be compared with its neighbours in that set.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/planner/PlanChecker.h"

#include "Items.h"
#include "bundlefit/planner/CheckedArithmetic.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <sstream>

namespace bundlefit::planner {

namespace {
class Checker {
public:
  Checker(const Problem &problem, const Plan &plan) : problem(problem), plan(plan) {}

  std::optional<std::string> run() {
    if (plan.offsets.size() != problem.buffers.size()) {
      out << "plan has " << plan.offsets.size() << " offsets for " << problem.buffers.size()
          << " buffers";
      return message();
    }
    for (size_t i = 0; i < problem.buffers.size(); ++i)
      if (auto error = checkPlacement(int(i)))
        return error;
    collectInPlacePairs();
    if (auto error = checkShifts())
      return error;
    return checkOverlaps();
  }

private:
  std::string message() { return out.str(); }

  std::string describe(int i) const {
    const Buffer &b = problem.buffers[i];
    std::ostringstream s;
    s << "buffer #" << i << " (id " << b.id << ", steps [" << b.first << "," << b.last
      << "], bytes [" << plan.offsets[i] << "," << plan.offsets[i] + b.size << "))";
    return s.str();
  }

  std::optional<std::string> checkPlacement(int i) {
    const Buffer &b = problem.buffers[i];
    uint64_t offset = plan.offsets[i];
    if (b.alignment > 1 && offset % b.alignment != 0) {
      out << describe(i) << " is not aligned to " << b.alignment;
      return message();
    }
    if (b.size > 0 && offset + b.size > plan.arenaSize) {
      out << describe(i) << " ends past the arena of " << plan.arenaSize << " bytes";
      return message();
    }
    return std::nullopt;
  }

  // In-place pairs placed at one offset may share their common step.
  void collectInPlacePairs() {
    for (const InPlaceHint &h : problem.inPlace) {
      if (!detail::isValidHint(problem, h))
        continue;
      // Shifted pairs (partial overlap) must sit exactly at their shift.
      if (int64_t(plan.offsets[h.output] - plan.offsets[h.input]) != h.shift)
        continue;
      sharing.insert({std::min(h.input, h.output), std::max(h.input, h.output)});
      paired.insert(h.input);
      paired.insert(h.output);
    }
  }

  // A pair with an access pattern (any shifted pair has one) shares bytes
  // only if the pattern proves that no input byte is overwritten before its
  // last read.
  std::optional<std::string> checkShifts() {
    for (const InPlaceHint &h : problem.inPlace) {
      if ((h.shift == 0 && h.access.empty()) || !mayShare(h.input, h.output))
        continue;
      if (h.access.empty()) {
        out << describe(h.output) << " starts " << h.shift << " bytes from " << describe(h.input)
            << " with no access pattern given";
        return message();
      }
      if (!overlapIsSafe(h.access, h.shift)) {
        out << describe(h.output) << " starts " << h.shift << " bytes from " << describe(h.input)
            << ": its kernel would overwrite input bytes it still "
            << "reads (always-safe shift " << maxSafeShift(h.access) << ")";
        return message();
      }
    }
    return std::nullopt;
  }

  bool mayShare(int a, int b) const { return sharing.count({std::min(a, b), std::max(a, b)}) != 0; }

  uint64_t end(int i) const { return plan.offsets[i] + problem.buffers[i].size; }

  std::optional<std::string> conflict(int a, int b) {
    const Buffer &x = problem.buffers[a], &y = problem.buffers[b];
    out << describe(a) << " and " << describe(b) << " overlap on step "
        << std::max(x.first, y.first);
    return message();
  }

  // Compares buffer i with the live buffers around its offset.
  std::optional<std::string> checkAgainstLive(int i) {
    uint64_t lo = plan.offsets[i], hi = end(i);
    auto above = live.lower_bound({lo, -1});
    for (auto it = above; it != live.end() && it->first < hi; ++it)
      if (!mayShare(i, it->second))
        return conflict(it->second, i);
    if (above == live.begin())
      return std::nullopt;
    // Live buffers are disjoint except honoured pairs (same offset, or
    // shifted by a partial-overlap hint). So a buffer further down can only
    // reach into [lo, hi) across one that belongs to a pair: walk down while
    // the buffer just checked is paired.
    auto it = std::prev(above);
    while (true) {
      if (end(it->second) > lo && !mayShare(i, it->second))
        return conflict(it->second, i);
      if (it == live.begin() || !paired.count(it->second))
        break;
      --it;
    }
    return std::nullopt;
  }

  std::optional<std::string> checkOverlaps() {
    std::vector<int> order;
    for (size_t i = 0; i < problem.buffers.size(); ++i)
      if (problem.buffers[i].size > 0)
        order.push_back(int(i));
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return problem.buffers[a].first < problem.buffers[b].first;
    });
    using Death = std::pair<int, int>; // (last step, buffer)
    std::priority_queue<Death, std::vector<Death>, std::greater<Death>> deaths;
    for (int i : order) {
      int step = problem.buffers[i].first;
      while (!deaths.empty() && deaths.top().first < step) {
        int dead = deaths.top().second;
        live.erase({plan.offsets[dead], dead});
        deaths.pop();
      }
      if (auto error = checkAgainstLive(i))
        return error;
      live.insert({plan.offsets[i], i});
      deaths.push({problem.buffers[i].last, i});
    }
    return std::nullopt;
  }

  const Problem &problem;
  const Plan &plan;
  std::ostringstream out;
  std::set<std::pair<int, int>> sharing;
  std::set<int> paired;                    // Buffers in some entry of `sharing`.
  std::set<std::pair<uint64_t, int>> live; // (offset, buffer)
};
} // namespace

std::optional<std::string> checkPlan(const Problem &problem, const Plan &plan) {
  return Checker(problem, plan).run();
}

namespace {
std::string nameOf(const Problem &problem, size_t i) {
  return "buffer #" + std::to_string(i) + " (id " + std::to_string(problem.buffers[i].id) + ")";
}

// An honoured chain becomes one item aligned to the lcm of its members'
// alignments and as large as its members spread by their shifts: both must
// stay representable.
std::optional<std::string> checkChains(const Problem &problem) {
  size_t n = problem.buffers.size();
  std::vector<size_t> root(n);
  std::vector<uint64_t> alignment(n);
  for (size_t i = 0; i < n; ++i) {
    root[i] = i;
    alignment[i] = std::max<uint64_t>(problem.buffers[i].alignment, 1);
  }
  auto find = [&root](size_t x) {
    while (root[x] != x)
      x = root[x] = root[root[x]];
    return x;
  };
  std::vector<bool> honoured = detail::selectHints(problem);
  uint64_t shifts = 0;
  for (size_t k = 0; k < honoured.size(); ++k) {
    if (!honoured[k])
      continue;
    const InPlaceHint &h = problem.inPlace[k];
    uint64_t magnitude = h.shift < 0 ? uint64_t(0) - uint64_t(h.shift) : uint64_t(h.shift);
    if (!checkedAdd(shifts, magnitude, shifts) || shifts > kMaxPlannerBytes)
      return "in-place hint #" + std::to_string(k) + ": shifts add up to more than 2^62 bytes";
    size_t a = find(size_t(h.input)), b = find(size_t(h.output));
    uint64_t lcm;
    if (!checkedLcm(alignment[a], alignment[b], lcm) || lcm > kMaxPlannerBytes)
      return "in-place hint #" + std::to_string(k) + ": " + nameOf(problem, size_t(h.output)) +
             " and " + nameOf(problem, size_t(h.input)) + " have no common alignment below 2^62";
    root[b] = a;
    alignment[a] = lcm;
  }
  return std::nullopt;
}
} // namespace

std::optional<std::string> checkProblem(const Problem &problem) {
  size_t n = problem.buffers.size();
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    const Buffer &b = problem.buffers[i];
    if (b.first > b.last)
      return nameOf(problem, i) + " ends (step " + std::to_string(b.last) +
             ") before it starts (step " + std::to_string(b.first) + ")";
    if (b.alignment > kMaxPlannerBytes)
      return nameOf(problem, i) + ": alignment " + std::to_string(b.alignment) + " is above 2^62";
    uint64_t bytes;
    if (!checkedAlignUp(b.size, b.alignment, bytes) || !checkedAdd(total, bytes, total) ||
        !checkedAdd(total, std::max<uint64_t>(b.alignment, 1), total) || total > kMaxPlannerBytes)
      return nameOf(problem, i) + ": size " + std::to_string(b.size) +
             " brings the buffers' total past 2^62 bytes";
  }
  for (size_t k = 0; k < problem.inPlace.size(); ++k) {
    const InPlaceHint &h = problem.inPlace[k];
    if (h.output < 0 || size_t(h.output) >= n || h.input < 0 || size_t(h.input) >= n ||
        h.input == h.output)
      return "in-place hint #" + std::to_string(k) + " names buffers " + std::to_string(h.output) +
             " and " + std::to_string(h.input) + ", not two distinct buffers of " +
             std::to_string(n);
  }
  return checkChains(problem);
}

} // namespace bundlefit::planner
