//===- PlanChecker.h - Proof that a plan is safe to run ---------*- C++ -*-===//
#ifndef BUNDLEFIT_PLANNER_PLANCHECKER_H
#define BUNDLEFIT_PLANNER_PLANCHECKER_H

#include "bundlefit/planner/Problem.h"

#include <optional>
#include <string>

namespace bundlefit::planner {

/// Independent of how the plan was made, checks that:
///  - there is one offset per buffer and every offset honours its alignment;
///  - no two buffers live on a common step share a byte of [offset, offset+size),
///    except an in-place pair (valid hint, output offset = input offset +
///    the hint's shift) on the step they share; a hint with an access
///    pattern (required for a non-zero shift) must pass overlapIsSafe;
///  - arenaSize >= offset + size for every buffer.
/// Returns std::nullopt when the plan is sound, otherwise a message naming the
/// offending buffer(s). O(n log n).
std::optional<std::string> checkPlan(const Problem &problem, const Plan &plan);

/// Checks the input itself: every buffer has first <= last, every hint
/// names two existing, distinct buffers, and every size the planner derives
/// stays representable: the buffers' footprints plus alignments, the shifts
/// of honoured hints and a chain's common alignment each stay within
/// kMaxPlannerBytes (2^62, CheckedArithmetic.h). (A well-formed hint whose input
/// outlives the output's first step is not an error; it is just ignored.)
/// The planner's results are only meaningful for problems that pass.
std::optional<std::string> checkProblem(const Problem &problem);

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_PLANCHECKER_H
