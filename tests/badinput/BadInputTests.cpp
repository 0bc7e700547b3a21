// Every kind of bad input the README promises to handle, through the tool:
// exit code, one line on stderr naming what is at fault, nothing on stdout,
// and no partial output left behind. Cases tested elsewhere and not repeated:
//   tests/onnx/FileErrorTests.cpp  missing/empty/directory/other-format/
//                                  truncated files, external data (library)
//   tests/cli                      missing model, unknown option on plan,
//                                  compile --target cortex-z99, -o /proc/bundle
//   tests/device/CliTests.cpp      fit --device rt9999
#include "TestModel.h"
#include "ToolRun.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace fs = std::filesystem;
using bundlefit::testing::TestModel;

namespace {

using namespace bundlefit::badinput;

std::string lenet() { return std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.onnx"; }

/// x[1,4] -> Relu -> y: compiles in a moment.
std::string tinyModel() {
  TestModel m;
  m.input("x", {1, 4});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  return m.save("tiny.onnx");
}

} // namespace

TEST_CASE("a truncated model: exit 4 naming the file, no bundle") {
  std::string whole = slurp(lenet());
  REQUIRE(whole.size() > 100000);
  fs::path dir = scratch("truncated");
  for (size_t cut : {size_t(16), size_t(4096), whole.size() / 2, whole.size() - 1}) {
    CAPTURE(cut);
    fs::path model = dir / ("lenet-" + std::to_string(cut) + ".onnx");
    std::ofstream(model, std::ios::binary) << whole.substr(0, cut);
    fs::path out = dir / "bundle";
    checkFailure(runTool("compile " + q(model) + " -o " + q(out)), 4, {model.string()});
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("files that are not ONNX models: exit 4 naming the file and what it is") {
  fs::path dir = scratch("not_onnx");
  fs::path npy = std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.input.npy";
  fs::path json = dir / "device.json";
  std::ofstream(json) << "{\"id\": \"x\"}\n";
  fs::path tflite = dir / "model.tflite";
  std::ofstream(tflite, std::ios::binary)
      << std::string("\x1c\0\0\0TFL3", 8) << std::string(64, '\0');
  for (const fs::path &model : {npy, json, tflite}) {
    CAPTURE(model);
    fs::path out = dir / "bundle";
    checkFailure(runTool("compile " + q(model) + " -o " + q(out)), 4, {model.string()});
    CHECK_FALSE(fs::exists(out));
  }
  // Read as TFLite (issue 33): a flatbuffer that verifies, with nothing in it.
  Outcome tfl = runTool("plan " + q(tflite));
  CHECK(tfl.err.find(tflite.string() + ": has no subgraph") != std::string::npos);
}

TEST_CASE("--model-input that does not match the model") {
  fs::path out = scratch("model_input") / "bundle";
  // Another spatial size: Gemm fc1 then sees 600 features instead of 800.
  checkFailure(
      runTool("compile " + lenet() + " -o " + q(out) + " --model-input 'data,float,[1,1,27,28]'"),
      5, {lenet(), "'fc1'", "Gemm"});
  // Another rank and another channel count: Conv conv1 refuses them.
  checkFailure(
      runTool("compile " + lenet() + " -o " + q(out) + " --model-input 'data,float,[1,28,28]'"), 5,
      {lenet(), "'conv1'"});
  checkFailure(
      runTool("compile " + lenet() + " -o " + q(out) + " --model-input 'data,float,[1,3,28,28]'"),
      5, {lenet(), "'conv1'"});
  // An input the model does not have, and text that is not a shape.
  checkFailure(
      runTool("compile " + lenet() + " -o " + q(out) + " --model-input 'image,float,[1,1,28,28]'"),
      2, {"--model-input", "'image'", "'data'"});
  checkFailure(runTool("plan " + lenet() + " --model-input 'data,float,[1,x,28]'"), 2,
               {"--model-input"});
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("an input .npy of the wrong shape for run: exit 4 naming the .npy") {
  fs::path dir = scratch("run_shape");
  fs::path npy = std::string(BUNDLEFIT_MODELS_DIR) + "/resnet8.input.npy";
  checkFailure(
      runTool("-q run " + lenet() + " --input " + q(npy) + " --output-dir " + q(dir / "out")), 4,
      {npy.string(), "'data'", "float32[1,1,28,28]"});
  CHECK_FALSE(fs::exists(dir / "out"));
}

TEST_CASE("unknown devices and bad device files") {
  fs::path dir = scratch("devices");
  checkFailure(runTool("pick " + lenet() + " --device rt9999"), 2, {"'rt9999'", "--device"});
  checkFailure(runTool("fit " + lenet() + " --device rt1060 --device-file " + q(dir / "none.json")),
               4, {(dir / "none.json").string()});
  fs::path broken = dir / "broken.json";
  std::ofstream(broken)
      << "{\"id\": \"mine\", \"memory\": [ {\"name\": \"FLASH\", \"size\": \"lots\"} ]";
  checkFailure(runTool("fit " + lenet() + " --device mine --device-file " + q(broken)), 4,
               {broken.string()});
  // Valid JSON that breaks the schema: the message names the file and the
  // field. (The schema check lists every violation, one per line, so this is
  // the one error that may take several lines.)
  fs::path wrong = dir / "wrong.json";
  std::ofstream(wrong) << "{\"id\": \"mine\", \"memory\": 12}";
  Outcome o = runTool("fit " + lenet() + " --device mine --device-file " + q(wrong));
  CHECK(o.exitCode == 4);
  REQUIRE_FALSE(o.errLines.empty());
  CHECK(o.errLines[0].rfind("bundlefit: error: " + wrong.string() + ": ", 0) == 0);
  CHECK(o.err.find(wrong.string() + ": memory: expected array") != std::string::npos);
  CHECK(o.out.empty());
}

TEST_CASE("unknown options and bad option values: exit 2 naming the option, no bundle") {
  fs::path out = scratch("options") / "bundle";
  checkFailure(runTool("compile " + lenet() + " -o " + q(out) + " --no-such-option"), 2,
               {"--no-such-option"});
  checkFailure(runTool("compile " + lenet() + " -o " + q(out) + " --opt O9"), 2, {"--opt", "O9"});
  checkFailure(
      runTool("compile " + lenet() + " -o " + q(out) + " --float-abi hard --target cortex-m0plus"),
      2, {"--float-abi"});
  checkFailure(runTool("fit " + lenet() + " --device rt1060 --variant int3"), 2, {"--variant"});
  checkFailure(runTool("no-such-command " + lenet()), 2, {"no-such-command"});
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("a profile made for another model: exit 4 naming both files, no bundle") {
  // LeNet's profile in the documented layout (quant/Profile.h): the hash is
  // FNV-1a 64 of lenet.onnx's bytes, which is what ties a profile to its model.
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : slurp(lenet()))
    hash = (hash ^ c) * 1099511628211ull;
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%016llX", (unsigned long long)hash);
  fs::path dir = scratch("profile");
  fs::path profile = dir / "lenet.yaml";
  std::ofstream(profile) << "---\nGraphPreLowerHash: " << hex << "\n...\n---\n"
                         << "- NodeOutputName: 'data'\n  Min: 0\n  Max: 1\n"
                         << "  Histogram: [ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 ]\n...\n"
                         << "---\nBundlefitProfile: 1\nModel: 'lenet.onnx'\nSamples: 1\n...\n";
  std::string other = std::string(BUNDLEFIT_MODELS_DIR) + "/ds_cnn.onnx";
  fs::path out = dir / "bundle";
  checkFailure(runTool("compile " + other + " -o " + q(out) + " --load-profile " + q(profile)), 4,
               {profile.string(), "ds_cnn.onnx"});
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("outputs that cannot be written: exit 6 naming the path, nothing partial") {
  std::string model = tinyModel();
  fs::path dir = scratch("unwritable");

  // -o names a regular file: it is left as it was.
  fs::path file = dir / "a-file";
  std::ofstream(file) << "keep me\n";
  checkFailure(runTool("-q compile " + model + " -o " + q(file)), 6, {file.string()});
  CHECK(slurp(file) == "keep me\n");

  // A bundle file name taken by a directory: the files before it in the
  // write order must not stay behind.
  fs::path taken = dir / "taken";
  fs::create_directories(taken / "tiny.h");
  checkFailure(runTool("-q compile " + model + " -o " + q(taken)), 6, {taken.string(), "tiny.h"});
  std::vector<std::string> left;
  for (const auto &entry : fs::directory_iterator(taken))
    left.push_back(entry.path().filename().string());
  CHECK(left == std::vector<std::string>{"tiny.h"});
  for (const auto &entry : fs::directory_iterator(dir))
    CHECK_MESSAGE(entry.path().filename().string().find("staging") == std::string::npos,
                  "staging directory left: " << entry.path());

  // Reports and run outputs under /proc (unwritable even for root).
  checkFailure(runTool("plan " + model + " --json /proc/bundlefit/plan.json"), 6,
               {"/proc/bundlefit/plan.json"});
  fs::path npy = dir / "x.npy";
  {
    // float32 [1,4] as .npy v1.0
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }";
    header.resize(128 - 10 - 1, ' ');
    header += '\n';
    std::ofstream out(npy, std::ios::binary);
    out << std::string("\x93NUMPY\x01\x00", 8) << char(header.size() & 255)
        << char(header.size() >> 8) << header << std::string(16, '\0');
  }
  checkFailure(
      runTool("-q run " + model + " --input " + q(npy) + " --output-dir /proc/bundlefit-out"), 6,
      {"/proc/bundlefit-out"});
}

TEST_CASE("unsupported operators: exit 5 listing every one with its node, no bundle") {
  TestModel m;
  m.input("x", {1, 4});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Bernoulli", {"a"}, {"b"}, "coin");
  m.node("Det", {"b"}, {"c"}, "determinant");
  m.node("Relu", {"c"}, {"y"}, "relu2");
  m.output("y");
  std::string model = m.save("unsupported.onnx");
  fs::path out = scratch("unsupported") / "bundle";
  checkFailure(runTool("compile " + model + " -o " + q(out)), 5,
               {model, "2 unsupported operators", "'coin'", "'determinant'", "Bernoulli", "Det"});
  CHECK_FALSE(fs::exists(out));
}
