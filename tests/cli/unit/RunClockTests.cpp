// The program's start as the kernel records it: plan-buffers counts the
// wall time before main against --time-limit.
#include "RunClock.h"

#include <doctest/doctest.h>

#include <thread>

using namespace bundlefit;

TEST_CASE("the wall seconds since the process started are read and advance with the clock") {
  std::optional<double> first = secondsSinceProcessStart();
  REQUIRE(first.has_value()); // Linux has /proc/self/stat.
  // This process has run at least the CPU seconds it has used (one thread
  // here); a wrong field of the stat line would be far from both.
  CHECK(*first >= cpuSeconds() - 0.01);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::optional<double> second = secondsSinceProcessStart();
  REQUIRE(second.has_value());
  // The sleep at least (a busy machine may wake this later).
  CHECK(*second - *first >= 0.199);
  CHECK(*second - *first < 10);
}

TEST_CASE("a run's wall time counts from the process's start, not from the clock's") {
  RunClock clock;
  REQUIRE(clock.wallAtStart.has_value());
  // wall() adds the seconds before main (a wall() from the clock's own start
  // would be about 0 here, far under them).
  CHECK(clock.wall() >= *clock.wallAtStart);
}
