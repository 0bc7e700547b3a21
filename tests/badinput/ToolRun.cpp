#include "ToolRun.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace bundlefit {
namespace badinput {

std::string slurp(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path scratch(const std::string &name) {
  fs::path dir = fs::path(BUNDLEFIT_TEST_TMP) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

Outcome runTool(const std::string &arguments, const std::string &stdoutPath,
                const std::string &prefix) {
  fs::path dir = fs::path(BUNDLEFIT_TEST_TMP);
  fs::create_directories(dir);
  const fs::path out = stdoutPath.empty() ? dir / "stdout.txt" : fs::path(stdoutPath);
  fs::remove(dir / "stdout.txt");
  std::string command = prefix + std::string(BUNDLEFIT_EXE) + " " + arguments + " >" + q(out) +
                        " 2>" + q(dir / "stderr.txt");
  int status = std::system(command.c_str());
  Outcome o;
  o.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (stdoutPath.empty())
    o.out = slurp(out);
  o.err = slurp(dir / "stderr.txt");
  std::istringstream lines(o.err);
  for (std::string line; std::getline(lines, line);)
    o.errLines.push_back(line);
  return o;
}

void checkFailure(const Outcome &o, int exitCode, const std::vector<std::string> &mentions) {
  INFO("stderr: " << o.err << "stdout: " << o.out);
  CHECK(o.exitCode == exitCode);
  REQUIRE(o.errLines.size() == 1);
  CHECK(o.errLines[0].rfind("bundlefit: error: ", 0) == 0);
  for (const std::string &m : mentions)
    CHECK_MESSAGE(o.errLines[0].find(m) != std::string::npos, "does not name " << m);
  CHECK(o.out.empty());
}

std::string q(const fs::path &path) { return "'" + path.string() + "'"; }

} // namespace badinput
} // namespace bundlefit
