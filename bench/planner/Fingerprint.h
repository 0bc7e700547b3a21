//===- Fingerprint.h - Every plan of a fixed set, one line each --*- C++ -*-===//
#ifndef BUNDLEFIT_BENCH_PLANNER_FINGERPRINT_H
#define BUNDLEFIT_BENCH_PLANNER_FINGERPRINT_H

#include <filesystem>

namespace bench_planner {

/// Prints one line per (instance, planner entry point) with the arena, the
/// bound, the algorithm, the proofs, search nodes, work units, why it
/// stopped and a hash of every offset. Work limits, not seconds, end each
/// run, so the output depends only on the code. Returns false when a plan
/// fails checkPlan. `data`: the Glow traces and MiniMalloc instances.
bool printFingerprint(const std::filesystem::path &data);

} // namespace bench_planner

#endif // BUNDLEFIT_BENCH_PLANNER_FINGERPRINT_H
