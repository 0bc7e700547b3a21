//===- ToolRun.h - Running the bundlefit tool and checking its failures ----===//
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace bundlefit {
namespace badinput {

struct Outcome {
  int exitCode = -1; ///< -1 when the tool died of a signal.
  std::string out, err;
  std::vector<std::string> errLines;
};

std::string slurp(const std::filesystem::path &path);

/// An empty scratch directory <BUNDLEFIT_TEST_TMP>/<name>.
std::filesystem::path scratch(const std::string &name);

/// Runs `bundlefit <arguments>` with stdout and stderr kept apart; stdout
/// goes to `stdoutPath` when given (e.g. "/dev/full"). `prefix` goes before
/// the executable on the shell line: environment settings, `timeout 60`.
Outcome runTool(const std::string &arguments, const std::string &stdoutPath = "",
                const std::string &prefix = "");

/// The README's promise for a failure: the exit code, one error line that
/// names every string in `mentions`, nothing on stdout.
void checkFailure(const Outcome &o, int exitCode, const std::vector<std::string> &mentions);

/// `path` in single quotes for the shell.
std::string q(const std::filesystem::path &path);

} // namespace badinput
} // namespace bundlefit
