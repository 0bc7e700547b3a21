// `bundlefit compile --use-cmsis` and `model-compiler -use-cmsis` on LeNet:
// the object calls CMSIS-NN, <net>.memory.json lists each call with its
// buffer, and the options fail with the documented exit codes.
#include "../cli/CliTestSupport.h"

#include "bundlefit/codegen/BundleCodegen.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

using bundlefit::test::CommandResult;
using bundlefit::test::modelPath;
namespace fs = std::filesystem;

namespace {

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

std::set<std::string> armSymbols(const fs::path &object) {
  std::ifstream in(object, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::set<std::string> arm;
  for (const std::string &sym : bundlefit::inspectObject(bytes).undefinedSymbols) {
    CHECK_MESSAGE(sym.rfind("bf_", 0) != 0, sym);
    if (sym.rfind("arm_", 0) == 0)
      arm.insert(sym);
  }
  return arm;
}

} // namespace

TEST_CASE("compile --use-cmsis / model-compiler -use-cmsis on LeNet int8 for Cortex-M7") {
  const fs::path work = fs::path(BUNDLEFIT_TEST_TMP) / "cli";
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string lenet = modelPath("lenet");
  const std::string input = lenet.substr(0, lenet.size() - 5) + ".input.npy";
  const std::string profile = (work / "lenet.yaml").string();
  CommandResult profiled =
      bundlefit::test::runBundlefit("-q profile " + lenet + " " + input + " -o " + profile);
  REQUIRE_MESSAGE(profiled.exitCode == 0, profiled.output);

  CommandResult noProfile = bundlefit::test::runBundlefit("compile " + lenet + " -o " +
                                                          (work / "x").string() + " --use-cmsis");
  CHECK_MESSAGE(noProfile.exitCode == 2, noProfile.output);
  CHECK(has(noProfile.output, "--use-cmsis: CMSIS-NN kernels are int8; add --load-profile"));
  CommandResult badDir = bundlefit::test::runBundlefit(
      "compile " + lenet + " -o " + (work / "x").string() + " --load-profile " + profile +
      " --use-cmsis --cmsis-nn-dir /nonexistent/cmsis-nn");
  CHECK_MESSAGE(badDir.exitCode == 2, badDir.output);
  CHECK(has(badDir.output, "--cmsis-nn-dir /nonexistent/cmsis-nn: not a directory"));

  const fs::path bundle = work / "bundle";
  CommandResult compiled = bundlefit::test::runBundlefit(
      "-q compile " + lenet + " -o " + bundle.string() + " --target cortex-m7 --load-profile " +
      profile + " --use-cmsis");
  REQUIRE_MESSAGE(compiled.exitCode == 0, compiled.output);
  nlohmann::json report;
  std::ifstream(bundle / "lenet.memory.json") >> report;
  const nlohmann::json &cmsis = report["cmsis_nn"];
  CHECK(cmsis["extension"] == "dsp");
  CHECK(cmsis["layout_copies"] == 0); // C = 1 input; pool2 -> flatten -> fc1 permutes fc1's columns
  std::vector<std::string> functions;
  for (const nlohmann::json &call : cmsis["calls"])
    functions.push_back(call["function"]);
  CHECK(functions == std::vector<std::string>{"arm_convolve_wrapper_s8", "arm_max_pool_s8",
                                              "arm_convolve_wrapper_s8", "arm_max_pool_s8",
                                              "arm_fully_connected_s8", "arm_fully_connected_s8",
                                              "arm_softmax_s8"});
  CHECK(cmsis["calls"][0]["scratch"] == 112);  // conv1: 2 * align4(1*5*5) * 2
  CHECK(cmsis["calls"][2]["scratch"] == 2000); // conv2: 2 * align4(20*5*5) * 2
  // 11,520 + 2,880, LeNet int8's layer bound (tests/models/README.md): the buffers fit beside it.
  CHECK(report["sizes"]["activations"] == 14400);
  CHECK(armSymbols(bundle / "lenet.o") ==
        std::set<std::string>{"arm_convolve_wrapper_s8", "arm_fully_connected_s8",
                              "arm_max_pool_s8", "arm_softmax_s8"});
  // The header states the prototype of every function the object calls
  // (each operator definition's CmsisDef::prototypes), checked when the
  // firmware compiles it with arm_nnfunctions.h.
  std::ifstream headerFile(bundle / "lenet.h");
  const std::string header((std::istreambuf_iterator<char>(headerFile)),
                           std::istreambuf_iterator<char>());
  for (const std::string &function : armSymbols(bundle / "lenet.o"))
    CHECK_MESSAGE(has(header, " " + function + "(const "), function);

  // Glow's spelling (NXP's -use-cmsis).
  const fs::path glow = work / "glow";
  std::string command =
      std::string(MODEL_COMPILER_EXE) + " -model=" + lenet + " -emit-bundle=" + glow.string() +
      " -backend=CPU -target=arm -mcpu=cortex-m7 -load-profile=" + profile + " -use-cmsis 2>&1";
  CHECK(std::system(command.c_str()) == 0);
  CHECK(armSymbols(glow / "lenet.o").count("arm_convolve_wrapper_s8") == 1);
}
