//===- Error.h - Errors that carry an exit code ----------------------------===//
//
// bundlefit reports every failure as one line naming the file, node or option
// at fault, and exits with a documented code (README, "Exit codes"). Library
// code throws bundlefit::Error; only the command-line tools catch it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdexcept>
#include <string>

namespace bundlefit {

/// Process exit codes, documented in the README. Keep the numbers stable:
/// CI scripts gate on them.
enum class ExitCode : int {
  Success = 0,
  Internal = 1,       ///< A bug in bundlefit.
  Usage = 2,          ///< Unknown or malformed command-line option.
  DoesNotFit = 3,     ///< The model does not fit the device / capacity.
  BadInputFile = 4,   ///< Unreadable, truncated or wrongly formatted input.
  Unsupported = 5,    ///< Valid model that bundlefit cannot compile.
  CannotWrite = 6,    ///< Output could not be written.
  ToolMissing = 7,    ///< An external tool (toolchain, QEMU) is missing or failed.
  NotFoundInTime = 8, ///< plan-buffers: no plan within the capacity found in the time limit,
                      ///< and none proven impossible.
};

class Error : public std::runtime_error {
public:
  Error(ExitCode code, const std::string &message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

private:
  ExitCode code_;
};

/// Throws an Internal error: an invariant that should never break did.
[[noreturn]] void fatalInternal(const std::string &message);

} // namespace bundlefit
