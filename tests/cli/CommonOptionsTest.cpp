// The options every command shares (--json [FILE], --version, -q/-v), the
// reports' tool version and model hash, and the checks made before a long
// compile: what a firmware engineer scripting bundlefit relies on.
#include "CliTestSupport.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace bundlefit::test;
namespace fs = std::filesystem;

namespace {

std::string readText(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

fs::path scratch(const std::string &name) {
  fs::path path = fs::path(BUNDLEFIT_TEST_TMP) / name;
  fs::remove_all(path);
  return path;
}

/// `sha256sum FILE`'s digest: an independent check of the reports' hash.
std::string sha256sum(const std::string &path) {
  CommandResult result = runProgram("sha256sum", path);
  REQUIRE(result.exitCode == 0);
  return result.output.substr(0, 64);
}

/// stdout only (stderr to a log), for commands whose stdout is JSON.
CommandResult runStdout(const std::string &arguments) {
  return runProgram(BUNDLEFIT_EXE, arguments,
                    (fs::path(BUNDLEFIT_TEST_TMP) / "stderr.log").string());
}

} // namespace

TEST_CASE("--version on both tools, before or after the command") {
  CommandResult bundlefit = runBundlefit("--version");
  CHECK(bundlefit.exitCode == 0);
  CHECK(bundlefit.output.find("bundlefit 0.") == 0);
  CHECK(runBundlefit("plan --version").output == bundlefit.output);
  CommandResult glow = runProgram(MODEL_COMPILER_EXE, "-version");
  CHECK(glow.exitCode == 0);
  CHECK(glow.output.find("model-compiler (bundlefit) 0.") == 0);
}

TEST_CASE("--json FILE on fit, pick, inspect and plan: the file gets the JSON, stdout the text") {
  const std::string lenet = modelPath("lenet");
  const std::string expectedHash = sha256sum(lenet);
  const std::string version = runBundlefit("--version").output.substr(10, 5);
  struct Case {
    std::string arguments, schema, textMarker;
    int exitCode;
  };
  const Case cases[] = {
      {"fit " + lenet + " --device rt1060", "bundlefit.fit/1", "verdict: FITS", 0},
      {"pick " + lenet + " --device rt1060", "bundlefit.pick/1", "variant", 0},
      {"inspect " + lenet, "bundlefit.inspect/1", "total", 0},
      {"plan " + lenet, "bundlefit.memory/1", "activations", 0},
  };
  for (const Case &c : cases) {
    CAPTURE(c.arguments);
    fs::path file = scratch("report.json");
    CommandResult text = runStdout(c.arguments + " --json " + file.string());
    CHECK(text.exitCode == c.exitCode);
    CHECK(text.output.find(c.textMarker) != std::string::npos);
    CHECK(text.output.find("\"schema\"") == std::string::npos);
    REQUIRE(fs::exists(file));
    nlohmann::json report = nlohmann::json::parse(readText(file));
    CHECK(report["schema"] == c.schema);
    CHECK(report["model_sha256"] == expectedHash);
    CHECK(report["tool"]["name"] == "bundlefit");
    CHECK(report["tool"]["version"].get<std::string>().find(version.substr(0, 2)) == 0);

    // --json alone: the same report is the whole stdout.
    CommandResult json = runStdout(c.arguments + " --json");
    CHECK(json.exitCode == c.exitCode);
    nlohmann::json printed = nlohmann::json::parse(json.output);
    CHECK(printed["schema"] == c.schema);
    CHECK(printed["model_sha256"] == expectedHash);
  }
}

TEST_CASE("the bundle's memory.json names the tool and the model's SHA-256") {
  fs::path dir = scratch("stamped_bundle");
  const std::string lenet = modelPath("lenet");
  REQUIRE(runBundlefit("-q compile " + lenet + " -o " + dir.string()).exitCode == 0);
  nlohmann::json report = nlohmann::json::parse(readText(dir / "lenet.memory.json"));
  CHECK(report["model_sha256"] == sha256sum(lenet));
  CHECK(report["tool"]["name"] == "bundlefit");
}

TEST_CASE("devices fits 100 columns; --wide and -v give every column") {
  CommandResult narrow = runBundlefit("devices");
  REQUIRE(narrow.exitCode == 0);
  CHECK(longestLine(narrow.output) <= 100);
  CHECK(narrow.output.find("rt1060") != std::string::npos);
  CommandResult wide = runBundlefit("devices --wide");
  REQUIRE(wide.exitCode == 0);
  CHECK(wide.output.find("DTCM") != std::string::npos); // a RAM region's name
  CHECK(runBundlefit("devices -v").output == wide.output);
}

TEST_CASE("both tools say which --memory-opt level they used") {
  const std::string lenet = modelPath("lenet");
  CommandResult bundlefit = runBundlefit("plan " + lenet);
  CHECK(bundlefit.output.find("memory-opt 2 (") != std::string::npos);
  fs::path dir = scratch("memory_opt_line");
  CommandResult glow =
      runProgram(MODEL_COMPILER_EXE, "-model=" + lenet + " -emit-bundle=" + dir.string());
  CHECK(glow.exitCode == 0);
  CHECK(glow.output.find("memory-opt 0 (Glow's activation layout") != std::string::npos);
}

TEST_CASE("run and compile check the input file and output directory before compiling") {
  const std::string lenet = modelPath("lenet");
  CommandResult missing = runBundlefit(
      "run " + lenet + " --input /nonexistent/x.npy --output-dir " + scratch("run_out").string());
  CHECK(missing.exitCode == 4);
  CHECK(missing.output.find("/nonexistent/x.npy") != std::string::npos);
  CHECK(missing.output.find("compiled") == std::string::npos); // failed before the compile
  CHECK(missing.output.find("memory-opt") == std::string::npos);

  fs::path blocker = scratch("not_a_dir");
  std::ofstream(blocker) << "a file";
  std::string input = std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.input.npy";
  CommandResult badOut = runBundlefit("run " + lenet + " --input " + input + " --output-dir " +
                                      (blocker / "sub").string());
  CHECK(badOut.exitCode == 6);
  CHECK(badOut.output.find("memory-opt") == std::string::npos);
  CommandResult badBundle = runBundlefit("compile " + lenet + " -o " + blocker.string());
  CHECK(badBundle.exitCode == 6);
  CHECK(badBundle.output.find("not_a_dir: exists and is not a directory") != std::string::npos);
  CHECK(badBundle.output.find("memory-opt") == std::string::npos);
}

TEST_CASE("--model-input int8q on a float build: one clear error, not an int8 graph that fails") {
  CommandResult result = runBundlefit("compile " + modelPath("lenet") +
                                      " --model-input data,int8q,0.123,-13,[1,1,28,28] -o " +
                                      scratch("int8q_float").string());
  CHECK(result.exitCode == 2);
  CHECK(result.output.find("--model-input 'data,int8q,...'") != std::string::npos);
  CHECK(result.output.find("an int8q input needs an int8 build") != std::string::npos);
  CHECK(result.output.find("\n") == result.output.size() - 1); // one line
}

TEST_CASE("run --compare: cosine similarity, relative L2 error and top-1 agreement") {
  fs::path out = scratch("run_compare");
  std::string input = std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.input.npy";
  CommandResult result = runStdout("run " + modelPath("lenet") + " --input " + input +
                                   " --output-dir " + out.string() + " --compare --json");
  REQUIRE(result.exitCode == 0);
  nlohmann::json report = nlohmann::json::parse(result.output);
  const nlohmann::json &softmax = report["outputs"][0];
  CHECK(softmax["cosine_similarity"].get<double>() > 0.999999);
  CHECK(softmax["cosine_similarity"].get<double>() <= 1.000001);
  CHECK(softmax["relative_l2_error"].get<double>() < 1e-5);
  CHECK(softmax["top1_agreement"] == 1.0);
  CHECK(report["model_sha256"] == sha256sum(modelPath("lenet")));
}

TEST_CASE("profile accepts --quantization-schema as Glow's doc passes it, and checks it") {
  fs::path profile = scratch("schema_profile.yml");
  std::string input = std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.input.npy";
  CommandResult ok = runBundlefit("-q profile " + modelPath("lenet") + " " + input + " -o " +
                                  profile.string() + " --quantization-schema symmetric");
  CHECK(ok.exitCode == 0);
  CHECK(fs::exists(profile));
  CommandResult bad = runBundlefit("profile " + modelPath("lenet") + " " + input + " -o " +
                                   profile.string() + " --quantization-schema symetric");
  CHECK(bad.exitCode == 2);
  CHECK(bad.output.find("--quantization-schema symetric") != std::string::npos);
}
