//===- Peers.h - bundlefit, MiniMalloc and TFLM on the same files -*- C++ -*-===//
//
// Builds the peers from ../shared/third_party when they are present (their
// own build scripts), runs them as separate processes, and checks every
// plan they write with our checker: bundlefit through its CLI
// (plan-buffers --capacity --stop-when-fits), MiniMalloc's exact solver,
// TFLM's greedy planner. Times are CPU seconds of the process (and its
// children) and wall seconds: the machine is shared.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_BENCH_PLANNER_PEERS_H
#define BUNDLEFIT_BENCH_PLANNER_PEERS_H

#include "bundlefit/planner/Problem.h"

#include <filesystem>
#include <string>
#include <vector>

namespace bench_planner {

struct PeerOptions {
  std::filesystem::path data;       ///< Holds minimalloc/*.csv.
  std::filesystem::path thirdParty; ///< ../shared/third_party.
  std::filesystem::path work;       ///< Where peers are built and plans written.
  std::string bundlefit;            ///< The bundlefit executable ("" = none).
  std::vector<std::string> instances;
  double timeLimit = 120; ///< Per tool and instance, seconds.
};

/// Prints the side-by-side table; returns the JSON object ("" when the peers
/// are absent: nothing to compare with). ok turns false on an invalid plan.
std::string benchPeers(const PeerOptions &options, bool &ok);

/// One process: its exit status (-1 when killed, e.g. by `timeout`), CPU
/// seconds (user + system, its children included) and wall seconds.
struct Process {
  int status = -1;
  double cpu = 0, wall = 0;
};
Process runProcess(const std::string &shellCommand);

/// CPU seconds (user + system) this process has used so far.
double cpuSeconds();

/// The peer's binary, built with its script into work/name once; "" when
/// its sources are absent or it did not build.
std::filesystem::path buildPeer(const PeerOptions &o, const std::string &script,
                                const std::string &name, const std::string &binary);

/// Writes the problem as MiniMalloc's CSV (id,lower,upper,size), the input
/// every peer and plan-buffers read.
void writeProblemCsv(const std::filesystem::path &path, const bundlefit::planner::Problem &problem);

/// Reads a solution file (id,lower,upper,size,offset), proves it with our
/// checker against the problem and returns its peak; false (with why)
/// when there is no valid plan in it.
bool readPlan(const std::filesystem::path &solution, const bundlefit::planner::Problem &problem,
              uint64_t &peak, std::string &why);

} // namespace bench_planner

#endif // BUNDLEFIT_BENCH_PLANNER_PEERS_H
