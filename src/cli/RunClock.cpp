//===- RunClock.cpp - A command's time limit, from the program's start ----===//
#include "RunClock.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace bundlefit {

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double cpuSeconds() { return double(std::clock()) / CLOCKS_PER_SEC; }

std::optional<double> secondsSinceProcessStart() {
  std::ifstream in("/proc/self/stat");
  std::string stat;
  if (!std::getline(in, stat))
    return std::nullopt;
  // Field 2, the command's name, is in parentheses and may hold spaces:
  // fields from the third on follow the last ')'; the start is field 22.
  size_t close = stat.rfind(')');
  if (close == std::string::npos)
    return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int k = 3; k < 22 && fields >> field; ++k) {
  }
  unsigned long long startTicks = 0;
  long ticksPerSecond = sysconf(_SC_CLK_TCK);
  timespec now{};
  if (!(fields >> startTicks) || ticksPerSecond <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0)
    return std::nullopt;
  double since =
      double(now.tv_sec) + 1e-9 * double(now.tv_nsec) - double(startTicks) / double(ticksPerSecond);
  // A clock that disagrees (a container's own boot time): not to be trusted.
  if (since < 0 || since > 60)
    return std::nullopt;
  return since;
}

void RunClock::measureSlowdown() {
  double cpu = cpuSeconds() - cpuAtStart, wallSeconds = secondsSince(start);
  if (cpu >= kLeastSample)
    slowdown = std::max(1.0, wallSeconds / cpu);
}

double RunClock::wall() const {
  return secondsSince(start) + (wallAtStart ? *wallAtStart : cpuAtStart * slowdown);
}

double RunClock::used() const { return std::max(cpuSeconds(), wall()); }

} // namespace bundlefit
