//===- Progress.h - What the tool is doing, on stderr ----------------------===//
//
// A Stage names one step of a command (import, plan memory, generate code,
// fit...). With --verbose it prints "bundlefit: <stage>: 0.123 s" when the
// stage ends. Otherwise, when stderr is a terminal, a stage that takes longer
// than half a second shows "<stage>... 2.1 s" on one self-erasing line, so
// an exact allocation or a big model does not look hung; pipes and CI logs
// get nothing. --quiet silences both.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace bundlefit {

class Stage {
public:
  explicit Stage(std::string name);
  ~Stage();
  Stage(const Stage &) = delete;
  Stage &operator=(const Stage &) = delete;

private:
  void tick();

  std::string name_;
  std::chrono::steady_clock::time_point start_;
  std::thread ticker_;
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  bool drawn_ = false;
};

/// Whether progress lines may be drawn (stderr is a terminal, not --quiet,
/// not --verbose); BUNDLEFIT_PROGRESS=1 forces them on for tests.
bool progressEnabled();

} // namespace bundlefit
