// End-to-end: --int8-io and Glow's -model-input=NAME,int8q,SCALE,OFFSET keep a
// profiled model's inputs and outputs int8 (issue 30, item 4): the header and
// memory.json give their scale and zero point, and `run` takes and returns
// int8 arrays.
#include "CliTestSupport.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace bundlefit::test;
namespace fs = std::filesystem;

namespace {

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

fs::path freshDir(const std::string &name) {
  fs::path dir = fs::path(BUNDLEFIT_TEST_TMP) / name;
  fs::remove_all(dir);
  return dir;
}

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// A version 1.0 .npy of int8 values, shape [1, 1, 28, 28] (LeNet's input).
std::string int8LenetInput() {
  std::string header = "{'descr': '|i1', 'fortran_order': False, 'shape': (1, 1, 28, 28), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += char(1);
  bytes += char(0);
  bytes += char(header.size() & 0xff);
  bytes += char(header.size() >> 8);
  bytes += header;
  for (int i = 0; i < 28 * 28; ++i) // a bright square on a dark field
    bytes += char((i / 28 > 8 && i / 28 < 20 && i % 28 > 8 && i % 28 < 20) ? 100 : -128);
  return bytes;
}

/// The descr field of an .npy file ("<f4", "|i1").
std::string npyDescr(const fs::path &path) {
  std::string text = readFile(path);
  size_t at = text.find("'descr': '");
  REQUIRE(at != std::string::npos);
  at += 10;
  return text.substr(at, text.find('\'', at) - at);
}

const std::string lenet = modelPath("lenet");

std::string lenetProfile() {
  fs::path profile = fs::path(BUNDLEFIT_TEST_TMP) / "int8io_profile.yml";
  std::string input = std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.input.npy";
  CommandResult r = runBundlefit("-q profile " + lenet + " " + input + " -o " + profile.string());
  REQUIRE_MESSAGE(r.exitCode == 0, r.output);
  return profile.string();
}

} // namespace

TEST_CASE("--int8-io: int8 inputs and outputs with their parameters in the header and "
          "memory.json; run takes and returns int8 .npy") {
  std::string profile = lenetProfile();
  fs::path bundle = freshDir("int8io_bundle");
  CommandResult compiled = runBundlefit("-q compile " + lenet + " --load-profile " + profile +
                                        " --int8-io -o " + bundle.string());
  REQUIRE_MESSAGE(compiled.exitCode == 0, compiled.output);
  auto memory = nlohmann::json::parse(readFile(bundle / "lenet.memory.json"));
  std::string header = readFile(bundle / "lenet.h");
  size_t int8Placeholders = 0;
  for (const auto &p : memory["placeholders"]) {
    INFO(p.dump());
    CHECK(p["dtype"] == "int8");
    REQUIRE(p.contains("scale"));
    CHECK(p["scale"].get<double>() > 0);
    int zeroPoint = p["zero_point"].get<int>();
    CHECK((zeroPoint >= -128 && zeroPoint <= 127));
    std::string name = p["name"];
    CHECK(has(header, "#define LENET_" + name + "_SCALE "));
    size_t define = header.find("#define LENET_" + name + "_ZERO_POINT ");
    REQUIRE(define != std::string::npos);
    std::string line = header.substr(define, header.find('\n', define) - define);
    CHECK(line.substr(line.find_last_of(' ') + 1) == std::to_string(zeroPoint));
    ++int8Placeholders;
  }
  CHECK(int8Placeholders == 2); // data and the softmax output
  // An input of one byte per element: a quarter of the float build's.
  fs::path floatBundle = freshDir("int8io_float_io");
  REQUIRE(runBundlefit("-q compile " + lenet + " --load-profile " + profile + " -o " +
                       floatBundle.string())
              .exitCode == 0);
  auto floatMemory = nlohmann::json::parse(readFile(floatBundle / "lenet.memory.json"));
  CHECK(floatMemory["placeholders"][0]["size"].get<int>() ==
        4 * memory["placeholders"][0]["size"].get<int>());
  CHECK(!floatMemory["placeholders"][0].contains("scale"));
  CHECK(!has(readFile(floatBundle / "lenet.h"), "_ZERO_POINT"));

  fs::path input = fs::path(BUNDLEFIT_TEST_TMP) / "int8io_input.npy";
  std::ofstream(input, std::ios::binary) << int8LenetInput();
  fs::path out = freshDir("int8io_run");
  CommandResult ran =
      runBundlefit("-q run " + lenet + " --load-profile " + profile + " --int8-io --input " +
                   input.string() + " --output-dir " + out.string() + " --compare");
  REQUIRE_MESSAGE(ran.exitCode == 0, ran.output);
  size_t outputs = 0;
  for (const auto &entry : fs::directory_iterator(out))
    if (entry.path().extension() == ".npy") {
      CHECK(npyDescr(entry.path()) == "|i1");
      ++outputs;
    }
  CHECK(outputs == 1);
  // A float array for an int8 input is refused, naming what it expects.
  CommandResult wrongType = runBundlefit("-q run " + lenet + " --load-profile " + profile +
                                         " --int8-io --input " + std::string(BUNDLEFIT_MODELS_DIR) +
                                         "/lenet.input.npy --output-dir " + out.string());
  CHECK(wrongType.exitCode == 4);
  CHECK_MESSAGE(has(wrongType.output, "expects int8[1,1,28,28]"), wrongType.output);
}

TEST_CASE("Glow's -model-input=NAME,int8q,SCALE,OFFSET sets that input's parameters") {
  std::string profile = lenetProfile();
  fs::path bundle = freshDir("int8q_bundle");
  std::string command = std::string(MODEL_COMPILER_EXE) + " -backend=CPU -model=" + lenet +
                        " -emit-bundle=" + bundle.string() + " -load-profile=" + profile +
                        " -model-input=data,int8q,0.0078125,-128";
  CommandResult r = runProgram(command, "");
  REQUIRE_MESSAGE(r.exitCode == 0, r.output);
  auto memory = nlohmann::json::parse(readFile(bundle / "lenet.memory.json"));
  const auto &data = memory["placeholders"][0];
  CHECK(data["name"] == "data");
  CHECK(data["dtype"] == "int8");
  CHECK(data["scale"] == 0.0078125);
  CHECK(data["zero_point"] == -128);
  CHECK(has(readFile(bundle / "lenet.h"), "LENET_data_SCALE       0.0078125f"));
  // Without -int8-io the output stays float.
  CHECK(memory["placeholders"][1]["dtype"] == "float32");

  // An int8 input needs an int8 build; uint8q needs uint8 kernels.
  CommandResult floatBuild =
      runProgram(std::string(MODEL_COMPILER_EXE) + " -backend=CPU -model=" + lenet +
                     " -emit-bundle=" + freshDir("int8q_float").string() +
                     " -model-input=data,int8q,0.0078125,-128",
                 "");
  CHECK(floatBuild.exitCode == 2);
  CHECK_MESSAGE(has(floatBuild.output, "needs an int8 build"), floatBuild.output);
  CommandResult unsignedInput =
      runProgram(std::string(MODEL_COMPILER_EXE) + " -backend=CPU -model=" + lenet +
                     " -emit-bundle=" + freshDir("uint8q").string() + " -load-profile=" + profile +
                     " -model-input=data,uint8q,0.0078125,0",
                 "");
  CHECK(unsignedInput.exitCode == 5);
  CHECK_MESSAGE(has(unsignedInput.output, "uint8q"), unsignedInput.output);
  CommandResult floatIo =
      runBundlefit("-q compile " + lenet + " --int8-io -o " + freshDir("int8io_float").string());
  CHECK(floatIo.exitCode == 2);
  CHECK_MESSAGE(has(floatIo.output, "--int8-io"), floatIo.output);
}

TEST_CASE("inspect refuses --int8-io: it lists the float graph, so the flag would do nothing") {
  CommandResult r = runBundlefit("inspect " + lenet + " --int8-io");
  CHECK(r.exitCode == 2);
  CHECK(has(r.output, "--int8-io"));
}
