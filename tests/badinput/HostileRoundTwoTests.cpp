// The second round of hostile inputs (issue 36): quantities that wrapped into
// a FITS verdict, a code-size cache entry that did, MAC totals past 2^64,
// NaN options, input paths that are not regular files. Each must be a
// one-line error naming the option, file or node (README "Exit codes"), or
// the same answer as without the hostile part.
#include "SkipTest.h"
#include "TestModel.h"
#include "ToolRun.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace fs = std::filesystem;
using bundlefit::testing::TestModel;
using namespace bundlefit::badinput;

namespace {

std::string lenet() { return q(std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.onnx"); }

const std::string k2To64Minus12000 = "18446744073709539616";

} // namespace

TEST_CASE("byte counts past 1 TiB are refused naming the option, never wrapped into a fit") {
  for (const char *command : {"fit", "pick"})
    for (const char *option :
         {"--static-bytes", "--reserve-ram", "--reserve-flash", "--app-ram", "--app-flash"}) {
      CAPTURE(command);
      CAPTURE(option);
      checkFailure(runTool(std::string("-q ") + command + " " + lenet() + " --device lpc55s69 " +
                           option + " " + k2To64Minus12000),
                   2, {option, k2To64Minus12000});
    }
  checkFailure(runTool("-q fit " + lenet() + " --device lpc55s69 --code-bytes -1"), 2,
               {"--code-bytes"});
  checkFailure(runTool("-q plan " + lenet() + " --arena-capacity 18446744073709551615"), 2,
               {"--arena-capacity"});
  // 1 TiB itself is a byte count; the verdict is then DOES NOT FIT (exit 3).
  CHECK(runTool("-q fit " + lenet() + " --device lpc55s69 --static-bytes 1099511627776").exitCode ==
        3);
}

TEST_CASE("NaN and infinite options are refused naming the option") {
  const std::string npy = q(std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.input.npy");
  const std::string out = q(scratch("nan_options") / "out");
  struct Case {
    std::string arguments, option;
  };
  for (const Case &c :
       {Case{"plan " + lenet() + " --patch-recompute-budget nan", "--patch-recompute-budget"},
        Case{"plan " + lenet() + " --patch-recompute-budget inf", "--patch-recompute-budget"},
        Case{"plan " + lenet() + " --time-limit nan", "--time-limit"},
        Case{"compile " + lenet() + " -o " + out + " --time-limit inf", "--time-limit"},
        Case{"fit " + lenet() + " --device rt1060 --time-limit -inf", "--time-limit"},
        Case{"run " + lenet() + " --input " + npy + " --output-dir " + out + " --timeout nan",
             "--timeout"},
        Case{"run " + lenet() + " --input " + npy + " --output-dir " + out + " --timeout 1e300",
             "--timeout"}}) {
    CAPTURE(c.arguments);
    checkFailure(runTool("-q " + c.arguments), 2, {c.option});
  }
  CHECK_FALSE(fs::exists(scratch("nan_options") / "out"));
}

TEST_CASE("a corrupt code-size cache entry never reaches a verdict") {
  const fs::path cache = scratch("code_cache");
  const std::string env = "BUNDLEFIT_CACHE_DIR=" + q(cache) + " ";
  const std::string command = "-q fit " + lenet() + " --device lpc55s69 --variant float --json";
  Outcome fresh = runTool(command, "", env);
  REQUIRE_MESSAGE(fresh.exitCode == 3, fresh.err);
  nlohmann::json expected = nlohmann::json::parse(fresh.out);
  std::vector<fs::path> entries;
  for (const auto &entry : fs::directory_iterator(cache))
    entries.push_back(entry.path());
  REQUIRE(!entries.empty());
  // The entry of issue 36 (a code size of 2^64 - 1,700,000 wrapped Flash from
  // 272% to FITS), the old format without its key line, another model's,
  // truncated figures, no .text, a flag that is not 0 or 1: every entry so.
  using Corruption = std::string (*)(const std::string &key);
  for (Corruption corrupt : std::vector<Corruption>{
           [](const std::string &key) { return key + "\n18446744073707851616 0 0 658 1\n"; },
           [](const std::string &) { return std::string("18446744073707851616 0 0 658 1\n"); },
           [](const std::string &key) { // another model's entry
             std::string other = key;
             other.replace(key.find(" code-") + 6, 16, std::string(16, '0'));
             return other + "\n100 0 0 0 1\n";
           },
           [](const std::string &key) { return key + "\n10338 0 0\n"; },
           [](const std::string &key) { return key + "\n0 0 0 0 1\n"; },
           [](const std::string &key) { return key + "\n100 0 0 0 7\n"; }}) {
    std::string sample;
    for (const fs::path &entry : entries) {
      std::string text = slurp(entry);
      sample = corrupt(text.substr(0, text.find('\n')));
      std::ofstream(entry) << sample;
    }
    CAPTURE(sample);
    Outcome again = runTool(command, "", env);
    REQUIRE(again.exitCode == 3);
    nlohmann::json report = nlohmann::json::parse(again.out);
    CHECK(report["totals"] == expected["totals"]);
    CHECK(report["bundle"]["code"] == expected["bundle"]["code"]);
  }
}

TEST_CASE("model paths that are not regular files are refused before reading") {
  const fs::path dir = scratch("not_regular");
  fs::create_symlink("/dev/zero", dir / "zero.onnx");
  REQUIRE(::mkfifo((dir / "fifo.onnx").c_str(), 0600) == 0);
  for (const char *name : {"zero.onnx", "fifo.onnx"})
    for (const std::string &command :
         {std::string("plan"), std::string("inspect"),
          std::string("fit --device rt1060 --variant float"), "compile -o " + q(dir / "out")}) {
      CAPTURE(name);
      CAPTURE(command);
      std::string words = command.substr(0, command.find(' '));
      std::string rest = command.size() > words.size() ? command.substr(words.size()) : "";
      // `timeout`: a FIFO that is opened blocks for ever.
      Outcome o = runTool(words + " " + q(dir / name) + rest, "", "timeout 60 ");
      checkFailure(o, 4, {(dir / name).string(), "not a regular file"});
    }
}

TEST_CASE("MAC counts past 2^56 are refused naming the node, never a wrapped total") {
  // 1,025 MatMuls of 2^54 MACs each reported 2^54 (the total wrapped).
  TestModel m;
  m.input("a", {int64_t(1) << 16, int64_t(1) << 20});
  m.input("b", {int64_t(1) << 20, int64_t(1) << 18});
  for (int i = 0; i < 1025; ++i) {
    m.node("MatMul", {"a", "b"}, {"y" + std::to_string(i)}, "mm" + std::to_string(i));
    m.output("y" + std::to_string(i));
  }
  std::string model = m.save("matmuls.onnx");
  checkFailure(runTool("inspect " + q(model)), 5, {model, "'mm4'", "2^56"});
  // One of them is counted exactly.
  TestModel one;
  one.input("a", {int64_t(1) << 16, int64_t(1) << 20});
  one.input("b", {int64_t(1) << 20, int64_t(1) << 18});
  one.node("MatMul", {"a", "b"}, {"y"}, "mm");
  one.output("y");
  Outcome o = runTool("inspect --json " + q(one.save("matmul.onnx")));
  REQUIRE_MESSAGE(o.exitCode == 0, o.err);
  CHECK(nlohmann::json::parse(o.out)["totals"]["macs"] == uint64_t(1) << 54);
}

namespace {

/// x[1,4] -> Relu -> y: compiles in a fraction of a second.
std::string reluModel(const std::string &file) {
  TestModel m;
  m.input("x", {1, 4});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  return m.save(file);
}

/// The inode of `path`: the same after a command means it was not replaced.
ino_t inodeOf(const fs::path &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

/// A float32 .npy (v1.0) with the header's shape text and the raw data.
void writeNpy(const fs::path &path, const std::string &shapeText, const std::string &data) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shapeText + ", }";
  header.resize(128 - 10 - 1, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out << std::string("\x93NUMPY\x01\x00", 8) << char(header.size() & 255)
      << char(header.size() >> 8) << header << data;
}

std::vector<std::string> entriesOf(const fs::path &dir) {
  std::vector<std::string> names;
  for (const auto &entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace

TEST_CASE("no output may be the input model, however its path is spelled") {
  const fs::path dir = scratch("output_is_input");
  const fs::path model = dir / "m.onnx";
  fs::copy_file(std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.onnx", model);
  fs::create_hard_link(model, dir / "hard.onnx");
  const std::string before = slurp(model);
  for (const std::string &output :
       {std::string("--json ") + q(model), "--json " + q(dir / ".." / "output_is_input" / "m.onnx"),
        "--html " + q(dir / "hard.onnx")}) {
    CAPTURE(output);
    checkFailure(runTool("plan " + q(model) + " " + output), 6, {"reads"});
  }
  // Every command with an output, before any work (14 replaced the model).
  const std::string npy = q(std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.input.npy");
  for (const std::string &command :
       {"inspect " + q(model), "fit " + q(model) + " --device rt1060",
        "pick " + q(model) + " --device rt1060", "compile " + q(model) + " -o " + q(dir / "b"),
        "run " + q(model) + " --input " + npy + " --output-dir " + q(dir / "out"),
        "plan " + q(model) + " --device rt1060"})
    for (const char *option : {"--json", "--html"}) {
      CAPTURE(command);
      checkFailure(runTool(command + " " + option + " " + q(model)), 6, {option, "reads"});
    }
  checkFailure(runTool("-q profile " + q(model) + " " +
                       q(std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.input.npy") + " -o " +
                       q(model)),
               6, {"reads"});
  CHECK(slurp(model) == before);
}

TEST_CASE("a command whose last output fails leaves every earlier output as it was") {
  const std::string model = reluModel("relu.onnx");
  const fs::path dir = scratch("all_or_nothing");
  const fs::path bundle = dir / "bundle";
  REQUIRE(runTool("-q compile " + model + " -o " + q(bundle) + " --network-name net").exitCode ==
          0);
  const ino_t header = inodeOf(bundle / "net.h");
  // --json names a directory; --dump-graph-DAG cannot be written: the new
  // bundle was already built when they failed (exit 6 after the old bundle
  // was replaced, before issue 36).
  fs::create_directories(dir / "a-directory");
  checkFailure(runTool("-q compile " + model + " -o " + q(bundle) +
                       " --network-name net --memory-opt 0 --json " + q(dir / "a-directory")),
               6, {"a-directory"});
  checkFailure(runTool("-q compile " + model + " -o " + q(bundle) +
                       " --network-name net --memory-opt 0 --dump-graph-DAG /proc/graph.dot"),
               6, {"/proc/graph.dot"});
  CHECK(inodeOf(bundle / "net.h") == header);
  CHECK(entriesOf(dir) == std::vector<std::string>{"a-directory", "bundle"});

  // run --output-dir: the second output's name is taken by a directory; the
  // first output's old file stays (it was replaced, then the run failed).
  TestModel two;
  two.input("x", {1, 4});
  two.node("Relu", {"x"}, {"a"}, "relu");
  two.node("Neg", {"x"}, {"b"}, "neg");
  two.output("a");
  two.output("b");
  const std::string twoModel = two.save("two_outputs.onnx");
  const fs::path out = dir / "out";
  fs::create_directories(out / "b.npy");
  std::ofstream(out / "a.npy") << "old output\n";
  writeNpy(dir / "x.npy", "(1, 4)", std::string(16, '\0'));
  checkFailure(
      runTool("-q run " + twoModel + " --input " + q(dir / "x.npy") + " --output-dir " + q(out)), 6,
      {out.string(), "b.npy"});
  CHECK(slurp(out / "a.npy") == "old output\n");
  fs::remove_all(out / "b.npy");
  REQUIRE(runTool("-q run " + twoModel + " --input " + q(dir / "x.npy") + " --output-dir " + q(out))
              .exitCode == 0);
  CHECK(entriesOf(out) == std::vector<std::string>{"a.npy", "b.npy"});
}

TEST_CASE("compile -o . writes the bundle into the working directory, in place") {
  const std::string model = reluModel("relu.onnx");
  const fs::path dir = scratch("compile_dot");
  fs::copy_file(model, dir / "m.onnx");
  std::ofstream(dir / "notes.txt") << "keep\n";
  for (int round = 0; round < 2; ++round) {
    Outcome o = runTool("-q compile m.onnx -o . --json report.json", "", "cd " + q(dir) + " && ");
    INFO(o.err);
    REQUIRE(o.exitCode == 0);
  }
  CHECK(entriesOf(dir) == std::vector<std::string>{"m.h", "m.memory.json", "m.o", "m.onnx",
                                                   "m.weights.bin", "m.weights.txt", "notes.txt",
                                                   "report.json"});
  CHECK(slurp(dir / "notes.txt") == "keep\n");
}

TEST_CASE("--link-dir: files planted in it as symbolic links are never written through") {
  if (std::system("command -v arm-none-eabi-gcc >/dev/null 2>&1") != 0)
    BUNDLEFIT_SKIP_TEST("arm-none-eabi-gcc is not installed");
  const std::string model = reluModel("relu.onnx");
  const fs::path dir = scratch("link_dir");
  const std::string command =
      "-q fit " + model + " --device rt1060 --verify-link --link-dir " + q(dir / "link");
  REQUIRE(runTool(command).exitCode == 0);
  fs::create_directories(dir / "victim");
  int planted = 0;
  for (const std::string &name : entriesOf(dir / "link"))
    if (fs::is_regular_file(dir / "link" / name)) {
      std::ofstream(dir / "victim" / name) << "victim\n";
      fs::remove(dir / "link" / name);
      fs::create_symlink(dir / "victim" / name, dir / "link" / name);
      ++planted;
    }
  REQUIRE(planted >= 8);
  Outcome o = runTool(command);
  checkFailure(o, 6, {"link", "symbolic link"});
  for (const std::string &name : entriesOf(dir / "victim"))
    CHECK(slurp(dir / "victim" / name) == "victim\n");
}

TEST_CASE("a killed run leaves its work directory only until the next run") {
  const std::string model = reluModel("relu.onnx");
  const fs::path dir = scratch("killed_run");
  fs::create_directories(dir / "tmp");
  writeNpy(dir / "x.npy", "(1, 4)", std::string(16, '\0'));
  const std::string run = "TMPDIR=" + q(dir / "tmp") + " " + BUNDLEFIT_EXE + " -q run " + model +
                          " --input " + q(dir / "x.npy") + " --output-dir " + q(dir / "out");
  // Killed as soon as its work directory exists.
  const std::string kill = "(" + run + " >/dev/null 2>&1 & pid=$!; for i in $(seq 600); do " +
                           "[ -n \"$(ls " + q(dir / "tmp") + ")\" ] && break; sleep 0.05; done; " +
                           "kill -9 $pid; wait $pid) 2>/dev/null";
  std::system(kill.c_str());
  REQUIRE(entriesOf(dir / "tmp").size() == 1);
  CHECK(entriesOf(dir / "tmp")[0].rfind("bundlefit-run-", 0) == 0);
  REQUIRE(std::system((run + " >/dev/null 2>&1").c_str()) == 0);
  CHECK(entriesOf(dir / "tmp").empty());
}

TEST_CASE("device files: broken database entries are left out by name, clashes are refused") {
  const std::string model = reluModel("relu.onnx");
  const fs::path dir = scratch("device_dir");
  fs::copy(fs::path(BUNDLEFIT_SOURCE_DIR) / "device_db", dir / "db", fs::copy_options::recursive);
  std::ofstream(dir / "db" / "parts" / "broken.json") << "{\"id\": \"broken\",";
  REQUIRE(::mkfifo((dir / "db" / "parts" / "fifo.json").c_str(), 0600) == 0);
  Outcome o = runTool("-q fit " + model + " --device rt1060", "",
                      "BUNDLEFIT_DEVICE_DB=" + q(dir / "db") + " timeout 120 ");
  CHECK(o.exitCode == 0);
  REQUIRE(o.errLines.size() == 2);
  CHECK(o.errLines[0].find("warning: " + (dir / "db" / "parts" / "broken.json").string()) !=
        std::string::npos);
  CHECK(o.errLines[1].find("fifo.json: cannot read device file: it is a FIFO") !=
        std::string::npos);

  // A --device-file with a built-in id (or alias) once replaced the part.
  nlohmann::json part =
      nlohmann::json::parse(slurp(fs::path(BUNDLEFIT_SOURCE_DIR) / "device_db/parts/rt1062.json"));
  part["memory"][0]["size"] = 1 << 30;
  std::ofstream(dir / "mine.json") << part.dump(2);
  checkFailure(
      runTool("-q fit " + model + " --device rt1062 --device-file " + q(dir / "mine.json")), 4,
      {(dir / "mine.json").string(), "'rt1062'", "rt1062.json"});
  part["id"] = "my-rt1062";
  part.erase("aliases");
  std::ofstream(dir / "mine.json") << part.dump(2);
  CHECK(runTool("-q fit " + model + " --device my-rt1062 --device-file " + q(dir / "mine.json"))
            .exitCode == 0);
}

TEST_CASE("big-endian targets, .npy files of another shape and NaN calibration data are refused") {
  const std::string lenetModel = lenet();
  const fs::path dir = scratch("totality");
  for (const char *triple : {"thumbebv7em-none-eabi", "armebv7m-none-eabi", "aarch64_be"})
    checkFailure(
        runTool("-q compile " + lenetModel + " -o " + q(dir / "b") + " --triple " + triple), 2,
        {triple, "big-endian"});
  CHECK_FALSE(fs::exists(dir / "b"));
  // [784] and [2,1,14,28] hold 784 floats, as LeNet's [1,1,28,28] does.
  auto npy = [&](const std::string &name, const std::string &shape, size_t floats,
                 const std::string &data = "") {
    writeNpy(dir / name, shape, data.empty() ? std::string(floats * 4, '\0') : data);
    return q(dir / name);
  };
  for (const std::string &file :
       {npy("flat.npy", "(784,)", 784), npy("halves.npy", "(2, 1, 14, 28)", 784)}) {
    CAPTURE(file);
    checkFailure(runTool("-q profile " + lenetModel + " " + file + " -o " + q(dir / "p.yaml")), 4,
                 {"shape"});
    checkFailure(
        runTool("-q run " + lenetModel + " --input " + file + " --output-dir " + q(dir / "out")), 4,
        {"expects float32[1,1,28,28]"});
  }
  std::string values(784 * 4, '\0');
  const float nan = std::nanf("");
  std::memcpy(&values[4 * 100], &nan, 4);
  checkFailure(runTool("-q profile " + lenetModel + " " +
                       npy("nan.npy", "(1, 1, 28, 28)", 784, values) + " -o " + q(dir / "p.yaml")),
               4, {"tensor 'data'", "NaN"});
  CHECK_FALSE(fs::exists(dir / "p.yaml"));
}

TEST_CASE("memory bombs are refused by name within the budget (--max-memory, ulimit -v)") {
  // A 300-byte LSTM with batch 2^30 reached 23.4 GB (even `inspect`).
  TestModel lstm;
  lstm.input("x", {1, int64_t(1) << 30, 1});
  lstm.floatInit("w", {1, 8, 1}, std::vector<float>(8, 0.5f));
  lstm.floatInit("r", {1, 8, 2}, std::vector<float>(16, 0.5f));
  bundlefit::testing::setInt(lstm.node("LSTM", {"x", "w", "r"}, {"y"}, "bomb"), "hidden_size", 2);
  lstm.output("y");
  const std::string lstmModel = lstm.save("lstm_bomb.onnx");
  for (const char *command : {"inspect", "plan"})
    checkFailure(runTool(std::string("--max-memory 512M ") + command + " " + q(lstmModel)), 5,
                 {lstmModel, "'bomb'", "--max-memory"});
  // ConstantOfShape [2^28] + Add was folded at over 4 GB.
  TestModel fill;
  fill.int64Init("shape", {1}, {int64_t(1) << 28});
  fill.node("ConstantOfShape", {"shape"}, {"zeros"}, "fill");
  fill.node("Add", {"zeros", "zeros"}, {"sum"}, "twice");
  fill.output("sum");
  const std::string fillModel = fill.save("fill_bomb.onnx");
  checkFailure(runTool("--max-memory 1G plan " + q(fillModel)), 5,
               {fillModel, "folding", "--max-memory"});
  // An int64 Range to 2^31 malloc'ed 16 GiB.
  TestModel range;
  range.int64Init("start", {}, {0});
  range.int64Init("limit", {}, {int64_t(1) << 31});
  range.int64Init("delta", {}, {1});
  range.node("Range", {"start", "limit", "delta"}, {"y"}, "count");
  range.output("y");
  const std::string rangeModel = range.save("range_bomb.onnx");
  checkFailure(runTool("plan " + q(rangeModel) + " --max-memory 4G"), 5,
               {rangeModel, "'count'", "--max-memory"});
  checkFailure(runTool("plan " + q(rangeModel) + " --max-memory 2T"), 2, {"--max-memory 2T"});

  // The default budget follows ulimit -v: half of 1.5 GB refuses the 1 GiB
  // constant by name (no bad_alloc, no OOM kill); small models still plan.
  const std::string limited = "ulimit -v 1500000 && ";
  checkFailure(runTool("plan " + q(fillModel), "", limited), 5, {"'fill'", "--max-memory"});
  CHECK(runTool("-q plan " + lenet(), "", limited).exitCode == 0);
}

TEST_CASE("names that are not UTF-8 are escaped in JSON and text, never an abort") {
  TestModel m;
  m.input("caf\xe9_in", {1, 4});
  m.node("Relu", {"caf\xe9_in"}, {"caf\xe9_out"}, "caf\xe9");
  m.output("caf\xe9_out");
  const std::string model = m.save("latin1.onnx");
  Outcome json = runTool("plan " + q(model) + " --json");
  REQUIRE_MESSAGE(json.exitCode == 0, json.err);
  nlohmann::json report = nlohmann::json::parse(json.out); // valid UTF-8 JSON
  CHECK(report.dump().find("caf\\\\xE9") != std::string::npos);
  Outcome text = runTool("inspect " + q(model));
  REQUIRE_MESSAGE(text.exitCode == 0, text.err);
  CHECK(text.out.find("caf\\xE9") != std::string::npos);
  CHECK(text.out.find("caf\xe9") == std::string::npos);

  // fit --batch with a Latin-1 file name aborted (SIGABRT) and printed nothing.
  const fs::path dir = scratch("latin1_batch");
  fs::copy_file(reluModel("relu.onnx"), dir / "caf\xe9.onnx");
  fs::copy_file(reluModel("relu.onnx"), dir / "plain.onnx");
  Outcome batch = runTool("fit --batch " + q(dir / "*.onnx") + " --device rt1060");
  CHECK_MESSAGE(batch.exitCode == 0, batch.err);
  std::istringstream lines(batch.out);
  int parsed = 0;
  for (std::string line; std::getline(lines, line); ++parsed)
    CHECK(nlohmann::json::parse(line)["fits"] == true);
  CHECK(parsed == 2);
  CHECK(batch.out.find("caf\\\\xE9.onnx") != std::string::npos);
}

TEST_CASE("--keep-model-order is taken by compile, fit and pick too") {
  // branchy is stored in a memory-poor breadth-first order (README): the
  // model's order needs more activations than the memory-aware one.
  const std::string branchy = q(std::string(BUNDLEFIT_MODELS_DIR) + "/branchy.onnx");
  auto activations = [&](const std::string &arguments, const char *pointer) {
    Outcome o = runTool("-q " + arguments + " --json");
    INFO(arguments << "\n" << o.err);
    REQUIRE((o.exitCode == 0 || o.exitCode == 3)); // fits or not: the sizes are reported
    return nlohmann::json::parse(o.out)[nlohmann::json::json_pointer(pointer)].get<uint64_t>();
  };
  const uint64_t modelOrder =
      activations("plan " + branchy + " --keep-model-order", "/sizes/activations");
  REQUIRE(modelOrder > activations("plan " + branchy, "/sizes/activations"));
  const fs::path dir = scratch("keep_model_order");
  CHECK(activations("compile " + branchy + " -o " + q(dir / "b") + " --keep-model-order",
                    "/sizes/activations") == modelOrder);
  CHECK(activations("fit " + branchy + " --device stm32h743 --keep-model-order",
                    "/bundle/activations") == modelOrder);
  // pick's rows have no activations figure: their RAM grows by the difference.
  const std::string pick = "pick " + branchy + " --device stm32h743 --variants float";
  CHECK(activations(pick + " --keep-model-order", "/candidates/0/ram") >
        activations(pick, "/candidates/0/ram"));
}
