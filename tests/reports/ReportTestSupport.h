//===- ReportTestSupport.h - Run the tool, read schemas --------------------===//
#pragma once

#include "CliTestSupport.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

namespace bundlefit::test {

inline std::string readText(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline nlohmann::json loadSchema(const std::string &name) {
  std::string path = std::string(BUNDLEFIT_SCHEMAS_DIR) + "/" + name;
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  return nlohmann::json::parse(in);
}

inline std::string tmpPath(const std::string &name) {
  return std::string(BUNDLEFIT_TEST_TMP) + "/" + name;
}

/// stdout and stderr kept apart (CliTestSupport interleaves them).
struct SplitResult {
  int exitCode = -1;
  std::string out, err;
};

inline SplitResult runSplit(const std::string &arguments, const std::string &env = "") {
  static int counter = 0;
  std::string errPath = tmpPath("stderr." + std::to_string(++counter) + ".txt");
  std::string command = env + (env.empty() ? "" : " ") + std::string(BUNDLEFIT_EXE) + " " +
                        arguments + " 2>" + errPath;
  SplitResult result;
  FILE *pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe);
  std::array<char, 4096> chunk;
  size_t count;
  while ((count = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0)
    result.out.append(chunk.data(), count);
  int status = ::pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = readText(errPath);
  std::remove(errPath.c_str());
  return result;
}

/// Runs a command that must print one JSON document on stdout.
inline nlohmann::json runJson(const std::string &arguments, int expectedExit = 0) {
  SplitResult result = runSplit(arguments);
  INFO("bundlefit " << arguments << "\nstderr: " << result.err);
  REQUIRE(result.exitCode == expectedExit);
  nlohmann::json document;
  REQUIRE_NOTHROW(document = nlohmann::json::parse(result.out));
  return document;
}

} // namespace bundlefit::test
