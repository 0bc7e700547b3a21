//===- CliTestSupport.h - Run the bundlefit tool from a test ---------------===//
#pragma once

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace bundlefit::test {

/// The widest line of a command's output, in bytes.
inline size_t longestLine(const std::string &text) {
  size_t longest = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    longest = std::max(longest, line.size());
  return longest;
}

struct CommandResult {
  int exitCode = -1;
  std::string output; ///< stdout and stderr, interleaved.
};

/// Runs `<program> <arguments>` through the shell and captures its output:
/// stdout and stderr interleaved or, with \p stderrLog, stderr sent to that
/// file and appended to the output only when the program fails (so a test can
/// parse stdout and still show the error).
inline CommandResult runProgram(const std::string &program, const std::string &arguments,
                                const std::string &stderrLog = "") {
  std::string command =
      program + " " + arguments + (stderrLog.empty() ? " 2>&1" : " 2>" + stderrLog);
  CommandResult result;
  FILE *pipe = ::popen(command.c_str(), "r");
  if (!pipe)
    return result;
  std::array<char, 4096> chunk;
  size_t count;
  while ((count = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0)
    result.output.append(chunk.data(), count);
  int status = ::pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (result.exitCode != 0 && !stderrLog.empty()) {
    std::ifstream log(stderrLog);
    result.output.append(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>());
  }
  return result;
}

#ifdef BUNDLEFIT_EXE
/// Runs `bundlefit <arguments>`, stdout and stderr interleaved.
inline CommandResult runBundlefit(const std::string &arguments) {
  return runProgram(BUNDLEFIT_EXE, arguments);
}
#endif

#ifdef BUNDLEFIT_MODELS_DIR
inline std::string modelPath(const std::string &name) {
  return std::string(BUNDLEFIT_MODELS_DIR) + "/" + name + ".onnx";
}
#endif

} // namespace bundlefit::test
