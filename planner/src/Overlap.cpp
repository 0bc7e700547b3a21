//===- Overlap.cpp - Proving that an output may overlap its input ----------===//
//
// A kernel's access pattern is a list of phases, each with the output bytes
// it writes and the input bytes it may still read. An overlap at `shift` is
// safe when no phase writes (after shifting) a byte that it or a later phase
// reads. Byte sets are runs with a stride, so an NCHW kernel that walks
// pixels across all channel planes is described by a few numbers per phase.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/planner/Problem.h"

#include <algorithm>
#include <climits>

namespace bundlefit::planner {

namespace {

using Int = __int128; // Offsets plus shifts never overflow.

Int floorDiv(Int a, Int b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

Int lastByte(const ByteRuns &r) { return Int(r.begin) + Int(r.count - 1) * r.stride + r.length; }

/// Whether any run of `a`, moved by `shift`, shares a byte with a run of `b`.
/// Walks the runs of `a`; for each, the runs of `b` it could touch form an
/// index range found by division.
bool intersects(const ByteRuns &a, Int shift, const ByteRuns &b) {
  if (a.length == 0 || a.count == 0 || b.length == 0 || b.count == 0)
    return false;
  for (uint64_t i = 0; i < a.count; ++i) {
    const Int lo = Int(a.begin) + Int(i) * a.stride + shift, hi = lo + a.length;
    if (b.count == 1 || b.stride == 0) {
      if (lo < Int(b.begin) + b.length && Int(b.begin) < hi)
        return true;
      continue;
    }
    // Run j of b is [b.begin + j*stride, + length): it meets [lo, hi) when
    // b.begin + j*stride < hi and b.begin + j*stride + length > lo.
    const Int first = std::max<Int>(0, floorDiv(lo - Int(b.begin) - b.length, b.stride) + 1);
    const Int last = std::min<Int>(Int(b.count) - 1, floorDiv(hi - 1 - Int(b.begin), b.stride));
    if (first <= last)
      return true;
  }
  return false;
}

} // namespace

AccessPhase streamingPhase(uint64_t writeEnd, uint64_t readBegin, uint64_t inputBytes) {
  AccessPhase phase;
  phase.writes.push_back({0, writeEnd, 0, 1});
  if (inputBytes > readBegin)
    phase.readsFromHere.push_back({readBegin, inputBytes - readBegin, 0, 1});
  return phase;
}

bool overlapIsSafe(const std::vector<AccessPhase> &phases, int64_t shift) {
  if (phases.empty())
    return false;
  for (const AccessPhase &phase : phases)
    for (const ByteRuns &write : phase.writes)
      for (const ByteRuns &read : phase.readsFromHere)
        // Iterate over whichever side has fewer runs.
        if (write.count <= read.count ? intersects(write, shift, read)
                                      : intersects(read, -Int(shift), write))
          return false;
  return true;
}

int64_t maxSafeShift(const std::vector<AccessPhase> &phases) {
  if (phases.empty())
    return 0;
  // The lowest byte read from phase k on, and the end of phase k's writes.
  Int best = INT64_MAX;
  for (const AccessPhase &phase : phases) {
    Int writeEnd = 0, readFloor = INT64_MAX;
    for (const ByteRuns &w : phase.writes)
      if (w.length && w.count)
        writeEnd = std::max(writeEnd, lastByte(w));
    for (const ByteRuns &r : phase.readsFromHere)
      if (r.length && r.count)
        readFloor = std::min(readFloor, Int(r.begin));
    best = std::min(best, readFloor - writeEnd);
  }
  return int64_t(std::clamp<Int>(best, INT64_MIN, INT64_MAX));
}

} // namespace bundlefit::planner
