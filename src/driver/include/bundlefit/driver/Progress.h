//===- Progress.h - What the tool is doing, on stderr ----------------------===//
//
// A Stage names one step of a command (import, plan memory, generate code,
// fit...). With --verbose it prints "bundlefit: <stage>: 0.123 s" when the
// stage ends. Otherwise, when stderr is a terminal, a stage that takes longer
// than half a second shows "<stage>... 2.1 s" on one self-erasing line, so
// an exact allocation or a big model does not look hung; pipes and CI logs
// get nothing. --quiet silences both.
//
// A stage that goes layer by layer (code generation) also says which layer
// it is on, "generate code: layer 37/120 conv_12", once it has taken longer
// than a second (BUNDLEFIT_PROGRESS_AFTER_MS changes that; a test sets 0).
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

  /// The stage has reached `layer` (1-based) of `layers`, node `node`.
  void layer(size_t layer, size_t layers, const std::string &node);

private:
  void tick();

  std::string name_;
  std::chrono::steady_clock::time_point start_;
  std::thread ticker_;
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  bool drawn_ = false;
  std::string detail_; ///< "layer 37/120 conv_12", drawn after the name.
};

/// Whether progress lines may be drawn (stderr is a terminal, not --quiet,
/// not --verbose); BUNDLEFIT_PROGRESS=1 forces them on for tests.
bool progressEnabled();

/// Milliseconds a stage runs before its layer progress shows:
/// BUNDLEFIT_PROGRESS_AFTER_MS, else `fallback`.
long progressDelayMs(long fallback);

} // namespace bundlefit
