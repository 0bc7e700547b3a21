//===- TemporaryDirectory.h - Work directories that never outlive a run ----===//
//
// `run`, `fit --verify-link`, code sizing and the Python module work in a
// directory of their own under $TMPDIR ("bundlefit-<kind>-<pid>-XXXXXX"),
// removed when the work is done. A run killed by a signal cannot remove its
// own, so every new one first removes those whose process is gone: a killed
// `run` leaves nothing behind for longer than the next run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace bundlefit {

class TemporaryDirectory {
public:
  /// Creates the directory; `why` says what it is for in the error
  /// (Error(CannotWrite)) when it cannot be created.
  TemporaryDirectory(const std::string &kind, const std::string &why);
  /// Removes the directory and everything in it.
  ~TemporaryDirectory();
  TemporaryDirectory(TemporaryDirectory &&other) noexcept;
  TemporaryDirectory &operator=(TemporaryDirectory &&) = delete;
  TemporaryDirectory(const TemporaryDirectory &) = delete;
  TemporaryDirectory &operator=(const TemporaryDirectory &) = delete;

  const std::string &path() const { return path_; }

  /// Keeps the directory (BUNDLEFIT_KEEP_WORK), renamed "<path>-kept" so that
  /// later runs leave it alone; returns the new path.
  std::string keep();

private:
  std::string path_;
};

/// Removes $TMPDIR/bundlefit-*-<pid>-* directories of processes that no
/// longer exist (owned by this user). Called by every TemporaryDirectory.
void removeLeftoverTemporaryDirectories();

} // namespace bundlefit
