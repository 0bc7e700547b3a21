//===- Problem.h - What the memory planner is asked and answers -*- C++ -*-===//
//
// The planner's whole vocabulary: buffers with a size and a lifetime, hints
// that an output may reuse an input's storage, and the plan that comes back.
// Nothing here knows about tensors, ONNX or files; a "step" is any integer
// clock the caller uses (an operator index, an event index, ...).
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_PROBLEM_H
#define BUNDLEFIT_PLANNER_PROBLEM_H

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit::planner {

/// A block of bytes that must stay in place while it is live, on the steps
/// [first, last] inclusive. A kernel's scratch buffer is first == last.
/// The planner reserves size rounded up to alignment (the "footprint"), so a
/// plan and its lower bound count the same bytes.
struct Buffer {
  int id = 0;             ///< The caller's name for it; only used in messages.
  uint64_t size = 0;      ///< Bytes; 0 is allowed and never conflicts.
  uint64_t alignment = 1; ///< Offset must be a multiple of this (>= 1).
  int first = 0;          ///< First step on which the buffer is live.
  int last = 0;           ///< Last step on which the buffer is live.
};

/// Bytes {begin + i * stride + [0, length) : 0 <= i < count}: equally spaced
/// runs, e.g. one pixel's bytes in every channel plane of an NCHW tensor, or
/// (count = 1) a plain range.
struct ByteRuns {
  uint64_t begin = 0;
  uint64_t length = 0;
  uint64_t stride = 0;
  uint64_t count = 1;
};

/// One phase of a kernel's run, for proving an overlap safe: during the phase
/// the kernel writes the output bytes `writes` (counted from the output's
/// start), and from the start of the phase on it reads no input bytes but
/// `readsFromHere` (counted from the input's start). Phases are in execution
/// order; a phase's writes may follow any of its reads.
struct AccessPhase {
  std::vector<ByteRuns> writes;
  std::vector<ByteRuns> readsFromHere;
};

/// A streaming phase: writes output bytes [0, writeEnd), and reads input
/// bytes in [readBegin, inputBytes) only from now on.
AccessPhase streamingPhase(uint64_t writeEnd, uint64_t readBegin, uint64_t inputBytes);

/// Exact: whether a kernel with these phases, its output starting `shift`
/// bytes after its input's start, never overwrites an input byte it has
/// still to read. No phases: false (nothing is claimed).
bool overlapIsSafe(const std::vector<AccessPhase> &phases, int64_t shift);

/// A shift that is always safe: every phase's writes end below the first
/// byte it still reads,  min over phases k of (lowest byte of readsFromHere_k)
/// - (end of writes_k). Exact for streaming phases. No phases: 0.
int64_t maxSafeShift(const std::vector<AccessPhase> &phases);

/// "output may be written over input": valid when input dies on the step
/// output is born (input.last == output.first). When honoured, output gets
/// exactly input's offset + shift. Indices are positions in Problem::buffers.
///
/// shift = 0 is a true in-place operation. A non-zero shift is a partial
/// overlap: "the output may start at input offset + shift", for a kernel
/// whose every write lands on input bytes it has finished reading (the
/// caller derives the margin from the kernel's access pattern; the planner
/// and checker only see the constraint and the access pattern). A
/// shift that is not a multiple of both buffers' alignments makes the hint
/// invalid.
struct InPlaceHint {
  int output = 0;
  int input = 0;
  int64_t shift = 0;
  /// The kernel's access pattern. Required when shift != 0; when given,
  /// checkPlan proves the overlap with overlapIsSafe(access, shift), whatever
  /// the shift. Without it, a shift-0 hint is the caller's claim (e.g. an
  /// elementwise op that reads element i before writing element i).
  std::vector<AccessPhase> access;
};

struct Problem {
  std::vector<Buffer> buffers;
  std::vector<InPlaceHint> inPlace;
};

/// The answer: one offset per buffer (same order as Problem::buffers).
struct Plan {
  std::vector<uint64_t> offsets;
  uint64_t arenaSize = 0;     ///< max over buffers of offset + footprint.
  uint64_t lowerBound = 0;    ///< computeLowerBound(problem); no plan is smaller.
  std::string algorithm;      ///< Which strategy produced it, for reports.
  bool provedOptimal = false; ///< arenaSize is the minimum (bound met or search exhausted).
  uint64_t searchNodes = 0;   ///< Exact search nodes spent (0 for greedy).
  /// A limit ended the work before the planner had nothing left to try:
  /// the plan is the best found by then. stoppedBy says which limit:
  /// "work" (the work units the time limit allows, counted, not timed),
  /// "time" (the clock: a loaded machine) or "nodes" (the node limit);
  /// stoppedIn the step that was running ("search towards 1048576").
  bool budgetExhausted = false;
  std::string stoppedBy, stoppedIn;
  uint64_t workUnits = 0;        ///< Work spent, in the planner's units (about items visited).
  bool provedInfeasible = false; ///< Proved: no plan fits the capacity asked.
  size_t sections = 0;           ///< Independent sections the search saw.
};

/// Which hints every strategy honours (same order as Problem::inPlace): the
/// valid ones, first come first served, never giving an input two in-place
/// outputs or an output two inputs.
std::vector<bool> honouredInPlaceHints(const Problem &problem);

/// The bytes the planner reserves for b: size rounded up to its alignment.
inline uint64_t footprint(const Buffer &b) {
  uint64_t a = b.alignment ? b.alignment : 1;
  return (b.size + a - 1) / a * a;
}

inline uint64_t alignUp(uint64_t value, uint64_t alignment) {
  if (alignment <= 1)
    return value;
  return (value + alignment - 1) / alignment * alignment;
}

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_PROBLEM_H
