// A bundle directory holds the complete old bundle or the complete new one at
// every moment: compiles are killed (SIGKILL) at random points, run two at a
// time into one directory, and made to fail; after each, the directory must
// equal one of the two complete bundles, and no staging directory may survive
// the next run.
#include "TestModel.h"
#include "ToolRun.h"

#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

extern char **environ;

namespace fs = std::filesystem;
using bundlefit::testing::TestModel;
using namespace bundlefit::badinput;

namespace {

using DirectoryContents = std::map<std::string, std::string>; // file name -> bytes

DirectoryContents contentsOf(const fs::path &dir) {
  DirectoryContents contents;
  for (const auto &entry : fs::directory_iterator(dir))
    contents[entry.path().filename().string()] = slurp(entry.path());
  return contents;
}

/// x[1,16] through `depth` Relus: two models with one network name give two
/// bundles whose every file differs.
std::string chainModel(const std::string &file, int depth) {
  TestModel m;
  m.input("x", {1, 16});
  std::string last = "x";
  for (int i = 0; i < depth; ++i) {
    std::string next = "r" + std::to_string(i);
    m.node("Relu", {last}, {next}, "relu" + std::to_string(i));
    last = next;
  }
  m.node("Relu", {last}, {"y"}, "relu_out");
  m.output("y");
  return m.save(file);
}

/// Starts `bundlefit -q compile model -o out --network-name net --target host`.
pid_t startCompile(const std::string &model, const fs::path &out) {
  std::vector<std::string> args = {BUNDLEFIT_EXE,    "-q",  "compile",  model, "-o", out.string(),
                                   "--network-name", "net", "--target", "host"};
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, BUNDLEFIT_EXE, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  return pid;
}

int waitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::string> stagingLeft(const fs::path &parent) {
  std::vector<std::string> left;
  for (const auto &entry : fs::directory_iterator(parent))
    if (entry.path().filename().string().find("staging") != std::string::npos)
      left.push_back(entry.path().filename().string());
  return left;
}

struct Bundles {
  std::string oldModel, newModel;
  DirectoryContents oldContents, newContents;
};

/// Compiles both models once into reference directories.
Bundles referenceBundles(const fs::path &dir) {
  Bundles b;
  b.oldModel = chainModel("chain_old.onnx", 1);
  b.newModel = chainModel("chain_new.onnx", 3);
  REQUIRE(waitExit(startCompile(b.oldModel, dir / "ref_old")) == 0);
  REQUIRE(waitExit(startCompile(b.newModel, dir / "ref_new")) == 0);
  b.oldContents = contentsOf(dir / "ref_old");
  b.newContents = contentsOf(dir / "ref_new");
  REQUIRE(b.oldContents.size() == 5);
  REQUIRE(b.oldContents != b.newContents);
  return b;
}

} // namespace

TEST_CASE("compiles killed at random points leave the complete old or the complete new bundle") {
  fs::path dir = scratch("killed_compiles");
  Bundles b = referenceBundles(dir);
  fs::path out = dir / "bundle";
  REQUIRE(waitExit(startCompile(b.oldModel, out)) == 0);
  auto start = std::chrono::steady_clock::now();
  REQUIRE(waitExit(startCompile(b.newModel, dir / "timed")) == 0);
  const auto compileTime = std::chrono::steady_clock::now() - start;

  std::mt19937 random(16);
  int sawOld = 0, sawNew = 0;
  for (int round = 0; round < 16; ++round) {
    CAPTURE(round);
    if (contentsOf(out) != b.oldContents)
      REQUIRE(waitExit(startCompile(b.oldModel, out)) == 0);
    // Kill anywhere between 60% and 120% of a compile's time: most kills
    // land near the end, where the files are written and moved.
    const long micros =
        long(std::chrono::duration_cast<std::chrono::microseconds>(compileTime).count());
    std::uniform_int_distribution<long> delay(micros * 3 / 5, micros * 6 / 5);
    pid_t pid = startCompile(b.newModel, out);
    std::this_thread::sleep_for(std::chrono::microseconds(delay(random)));
    ::kill(pid, SIGKILL);
    waitExit(pid);
    DirectoryContents now = contentsOf(out);
    CHECK_MESSAGE((now == b.oldContents || now == b.newContents),
                  "mixed bundle after a kill in round " << round);
    (now == b.oldContents ? sawOld : sawNew)++;
  }
  MESSAGE("after 16 kills (compile " << compileTime.count() / 1000000 << " ms): " << sawOld
                                     << " old, " << sawNew << " new bundles");
  // The next run removes whatever staging directory a kill left behind.
  REQUIRE(waitExit(startCompile(b.newModel, out)) == 0);
  CHECK(contentsOf(out) == b.newContents);
  CHECK(stagingLeft(dir).empty());
}

TEST_CASE("two compiles into one directory at once: both succeed, one complete bundle") {
  fs::path dir = scratch("concurrent_compiles");
  Bundles b = referenceBundles(dir);
  fs::path out = dir / "bundle";
  for (int round = 0; round < 3; ++round) {
    pid_t first = startCompile(b.oldModel, out);
    pid_t second = startCompile(b.newModel, out);
    CHECK(waitExit(first) == 0);
    CHECK(waitExit(second) == 0);
    DirectoryContents now = contentsOf(out);
    CHECK((now == b.oldContents || now == b.newContents));
  }
  CHECK(stagingLeft(dir).empty());
}

TEST_CASE("a failed compile leaves the old bundle and the directory's other files untouched") {
  fs::path dir = scratch("failed_compile");
  Bundles b = referenceBundles(dir);
  fs::path out = dir / "bundle";
  REQUIRE(waitExit(startCompile(b.oldModel, out)) == 0);
  std::ofstream(out / "notes.txt") << "firmware notes\n";
  DirectoryContents before = contentsOf(out);

  TestModel broken;
  broken.input("x", {1, 16});
  broken.node("Det", {"x"}, {"y"}, "determinant"); // an operator bundlefit lacks
  broken.output("y");
  std::string brokenModel = broken.save("broken.onnx");
  CHECK(waitExit(startCompile(brokenModel, out)) == 5);
  CHECK(contentsOf(out) == before);

  // A good compile replaces the bundle and keeps the other file.
  REQUIRE(waitExit(startCompile(b.newModel, out)) == 0);
  DirectoryContents expected = b.newContents;
  expected["notes.txt"] = "firmware notes\n";
  CHECK(contentsOf(out) == expected);
  CHECK(stagingLeft(dir).empty());
}
