//===- Peers.h - bundlefit, MiniMalloc and TFLM on the same files -*- C++ -*-===//
//
// Builds the peers from ../shared/third_party when they are present (their
// own build scripts), runs all three on each MiniMalloc instance as
// separate processes, and checks every plan they write with our checker:
// bundlefit through its CLI (plan-buffers --capacity --stop-when-fits),
// MiniMalloc's exact solver, TFLM's greedy planner.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_BENCH_PLANNER_PEERS_H
#define BUNDLEFIT_BENCH_PLANNER_PEERS_H

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

} // namespace bench_planner

#endif // BUNDLEFIT_BENCH_PLANNER_PEERS_H
