#include "bundlefit/driver/Progress.h"

#include "bundlefit/driver/Pipeline.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace bundlefit {

bool progressEnabled() {
  if (verbosity() != Verbosity::Normal)
    return false;
  const char *forced = std::getenv("BUNDLEFIT_PROGRESS");
  if (forced && *forced)
    return std::string(forced) == "1";
  return ::isatty(STDERR_FILENO) != 0;
}

long progressDelayMs(long fallback) {
  const char *text = std::getenv("BUNDLEFIT_PROGRESS_AFTER_MS");
  char *end = nullptr;
  long value = text ? std::strtol(text, &end, 10) : -1;
  return text && *text && end && !*end && value >= 0 ? value : fallback;
}

Stage::Stage(std::string name) : name_(std::move(name)), start_(std::chrono::steady_clock::now()) {
  if (progressEnabled())
    ticker_ = std::thread([this] { tick(); });
}

void Stage::tick() {
  using namespace std::chrono;
  std::unique_lock<std::mutex> lock(mutex_);
  // Quick stages never draw: the line would only flicker.
  if (done_.wait_for(lock, milliseconds(progressDelayMs(500)), [this] { return finished_; }))
    return;
  do {
    double seconds = duration<double>(steady_clock::now() - start_).count();
    std::fprintf(stderr, "\r\033[K%s%s... %.1f s", name_.c_str(),
                 detail_.empty() ? "" : (": " + detail_).c_str(), seconds);
    std::fflush(stderr);
    drawn_ = true;
  } while (!done_.wait_for(lock, milliseconds(200), [this] { return finished_; }));
}

void Stage::layer(size_t layer, size_t layers, const std::string &node) {
  if (!ticker_.joinable()) // progress is off
    return;
  using namespace std::chrono;
  auto elapsed = duration_cast<milliseconds>(steady_clock::now() - start_).count();
  if (elapsed < progressDelayMs(1000))
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  std::fprintf(stderr, "\r\033[K%s: layer %zu/%zu %s", name_.c_str(), layer, layers, node.c_str());
  // What the ticker shows from now on: after the last layer the stage is
  // still busy (code generation then optimises the whole module).
  detail_ = layer < layers ? "layer " + std::to_string(layer) + "/" + std::to_string(layers)
                           : "all " + std::to_string(layers) + " layers, finishing";
  std::fflush(stderr);
  drawn_ = true;
}

Stage::~Stage() {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (ticker_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    done_.notify_all();
    ticker_.join();
    if (drawn_) {
      std::fprintf(stderr, "\r\033[K");
      std::fflush(stderr);
    }
  }
  if (verbosity() == Verbosity::Verbose)
    std::fprintf(stderr, "bundlefit: %s: %.3f s\n", name_.c_str(), seconds);
}

} // namespace bundlefit
