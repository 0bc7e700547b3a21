//===- MiniMallocCsv.h - MiniMalloc's CSV problems and solutions -*- C++ -*-===//
//
// `id,lower,upper,size` with an optional `alignment` and `offset` column (a
// solution file). A buffer lives on the half-open [lower, upper), so
// Buffer::first = lower and Buffer::last = upper - 1. Columns are found by
// the header's names, so their order does not matter.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_FORMATS_MINIMALLOCCSV_H
#define BUNDLEFIT_PLANNER_FORMATS_MINIMALLOCCSV_H

#include "bundlefit/planner/Problem.h"

#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace bundlefit::planner::formats {

struct CsvProblem {
  Problem problem;                ///< Buffer::id is the row number (from 0).
  std::vector<std::string> names; ///< The id column, per buffer.
  std::vector<uint64_t> offsets;  ///< The offset column, if the file has one.
};

std::optional<CsvProblem> parseMiniMallocCsv(std::istream &in, std::string *error = nullptr);

/// Writes `id,lower,upper,size,offset`, one row per buffer. names[i] is the id
/// written for buffer i (Buffer::id when names is empty).
void writeMiniMallocCsv(std::ostream &out, const Problem &problem, const Plan &plan,
                        const std::vector<std::string> &names = {});

/// Writes `id,lower,upper,size` (the problem alone, Buffer::id as the id):
/// what MiniMalloc and TFLM's planner read.
void writeMiniMallocProblemCsv(std::ostream &out, const Problem &problem);

} // namespace bundlefit::planner::formats

#endif // BUNDLEFIT_PLANNER_FORMATS_MINIMALLOCCSV_H
