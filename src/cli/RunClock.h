//===- RunClock.h - A command's time limit, from the program's start ------===//
//
// plan-buffers' --time-limit bounds the whole run a user waits for, the
// program's start before main included: loading bundlefit's shared
// libraries takes about 0.02 s on a quiet machine and 0.1-0.2 s beside
// two busy processes on 2 cores, where it waits to be scheduled.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_CLI_RUNCLOCK_H
#define BUNDLEFIT_CLI_RUNCLOCK_H

#include <chrono>
#include <optional>

namespace bundlefit {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start);

/// The process's CPU seconds, from its start.
double cpuSeconds();

/// Wall seconds since the kernel started this process (/proc/self/stat: in
/// clock ticks since boot, so up to a tick, 10 ms, more than it was), or
/// nothing where that cannot be read.
std::optional<double> secondsSinceProcessStart();

/// The limit holds in CPU and in wall time, as the planner's Budget counts
/// it: what is left of it is the limit less whichever of the two has gone
/// further. What cannot stop (the check and the output after the planner)
/// costs about the same CPU whatever the load, but load stretches it in
/// wall time by `slowdown`, the wall seconds each CPU second took while the
/// file was read (3 beside two busy processes on 2 cores, 1 on a quiet
/// machine).
struct RunClock {
  Clock::time_point start = Clock::now();
  double cpuAtStart = cpuSeconds();
  /// Wall seconds before main: as the kernel counted them, else estimated
  /// from the CPU seconds (which miss the time spent waiting for a core).
  std::optional<double> wallAtStart = secondsSinceProcessStart();
  double slowdown = 1;

  /// Measures `slowdown` over the reading, which like the check is work
  /// that does not stop. Under kLeastSample of CPU (a small file) the
  /// ratio is mostly noise, and what it would scale is as small: 1.
  void measureSlowdown();
  /// Wall seconds from the program's start.
  double wall() const;
  /// Seconds of the limit used: the wall clock or the CPU clock, whichever
  /// has gone further.
  double used() const;
  static constexpr double kLeastSample = 0.005;
};

} // namespace bundlefit

#endif // BUNDLEFIT_CLI_RUNCLOCK_H
