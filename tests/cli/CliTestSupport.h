//===- CliTestSupport.h - Run the bundlefit tool from a test ---------------===//
#pragma once

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace bundlefit::test {

struct CommandResult {
  int exitCode = -1;
  std::string output; ///< stdout and stderr, interleaved.
};

/// Runs `bundlefit <arguments>` through the shell and captures its output.
inline CommandResult runBundlefit(const std::string &arguments) {
  std::string command = std::string(BUNDLEFIT_EXE) + " " + arguments + " 2>&1";
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
  return result;
}

inline std::string modelPath(const std::string &name) {
  return std::string(BUNDLEFIT_MODELS_DIR) + "/" + name + ".onnx";
}

} // namespace bundlefit::test
