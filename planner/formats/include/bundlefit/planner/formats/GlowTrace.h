//===- GlowTrace.h - Glow's allocator test traces as Problems ---*- C++ -*-===//
//
// Format (Glow's unit-test data): per model `MODEL name`, `ALIGN a`, then
// `ALLOC id size` / `FREE id` events, then `MEM bytes` and `EFF ratio` (the
// arena Glow reached and bound/arena). `#` starts a comment line.
//
// Time is the event index within the model: ALLOC at event i and FREE at
// event j give a buffer live on [i, j) (so Buffer::first = i, last = j - 1).
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_FORMATS_GLOWTRACE_H
#define BUNDLEFIT_PLANNER_FORMATS_GLOWTRACE_H

#include "bundlefit/planner/Problem.h"

#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace bundlefit::planner::formats {

struct GlowTraceModel {
  std::string name;
  uint64_t alignment = 1;    ///< ALIGN; applied to every buffer.
  Problem problem;           ///< Buffers in ALLOC order; Buffer::id is the trace id.
  uint64_t glowArena = 0;    ///< MEM (0 when absent).
  double glowEfficiency = 0; ///< EFF (0 when absent).
};

/// Parses every model in the stream. On failure returns std::nullopt and,
/// if error is given, a message with the line number.
std::optional<std::vector<GlowTraceModel>> parseGlowTraces(std::istream &in,
                                                           std::string *error = nullptr);

} // namespace bundlefit::planner::formats

#endif // BUNDLEFIT_PLANNER_FORMATS_GLOWTRACE_H
