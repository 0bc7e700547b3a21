//===- FitBatchTests.cpp - bundlefit fit --batch LIST ----------------------===//
//
// A batch answers for every model in LIST's order, one JSON line each: the
// model's fit report, the same as `fit MODEL --json`, or its error with the
// exit category; a bad model never ends the batch. Every line names its
// schema and validates against it; a progress line goes to stderr when asked.
// Its own ctest (fit_batch).
//
//===----------------------------------------------------------------------===//
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "../cli/CliTestSupport.h"
#include "bundlefit/device/JsonSchema.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using bundlefit::test::CommandResult;

std::string model(const std::string &name) {
  return std::string(BUNDLEFIT_MODELS_DIR) + "/" + name + ".onnx";
}

/// A fresh directory holding `bad.onnx` (not a model).
fs::path batchDir(const std::string &name) {
  fs::path dir = fs::path(FIT_BATCH_TEST_TMP) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "bad.onnx") << "this is not an ONNX model\n";
  return dir;
}

std::vector<nlohmann::json> lines(const std::string &stdoutText) {
  std::vector<nlohmann::json> parsed;
  std::istringstream in(stdoutText);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] == '{') // stderr follows when the batch fails
      parsed.push_back(nlohmann::json::parse(line));
  return parsed;
}

/// Whether the code sizes came from the cache depends on what ran before.
nlohmann::json withoutCacheFlag(nlohmann::json report) {
  report["code"].erase("cached");
  return report;
}

CommandResult run(const std::string &arguments, const fs::path &dir) {
  return bundlefit::test::runProgram(BUNDLEFIT_EXE, arguments, (dir / "stderr.txt").string());
}

/// Violations of the schema a line names: fit.schema.json for a report,
/// fit-error.schema.json for a model that failed.
std::string schemaViolations(const nlohmann::json &line) {
  static const std::map<std::string, std::string> files = {
      {"bundlefit.fit/1", "fit.schema.json"}, {"bundlefit.fit-error/1", "fit-error.schema.json"}};
  auto file = files.find(line.value("schema", ""));
  if (file == files.end())
    return "no known \"schema\": " + line.dump().substr(0, 200);
  std::ifstream in(std::string(BUNDLEFIT_SCHEMAS_DIR) + "/" + file->second);
  std::string text;
  for (const auto &violation : bundlefit::device::validateJson(nlohmann::json::parse(in), line))
    text += violation.str() + "\n";
  return text;
}

} // namespace

TEST_CASE("fit --batch: a line per model in LIST's order, a bad model is a line with its error") {
  const std::string lenet = model("lenet"), dsCnn = model("ds_cnn");
  fs::path dir = batchDir("list");
  {
    std::ofstream list(dir / "models.txt");
    list << "# models to check\n"
         << lenet << "\n\n"
         << (dir / "bad.onnx").string() << "\n"
         << "/nonexistent/missing.onnx\n"
         << dsCnn << "\n";
  }
  // No code-size cache: both threads really compile at the same time.
  CommandResult batch = bundlefit::test::runProgram(
      std::string("BUNDLEFIT_CACHE_DIR=off ") + BUNDLEFIT_EXE,
      "fit --batch " + (dir / "models.txt").string() + " --device rt1060 --jobs 2",
      (dir / "stderr.txt").string());
  CHECK_MESSAGE(batch.exitCode == 4, batch.output); // the first failure: bad.onnx
  std::vector<nlohmann::json> answers = lines(batch.output);
  REQUIRE_MESSAGE(answers.size() == 4, batch.output);

  CHECK(answers[0]["model"] == lenet);
  CHECK(answers[0]["schema"] == "bundlefit.fit/1");
  CHECK(answers[0]["fits"] == true);
  CHECK(answers[0]["bundle"]["constant"] == 1724608); // LeNet by hand: tests/models/README.md

  CHECK(answers[1]["model"] == (dir / "bad.onnx").string());
  CHECK(answers[1]["exit_code"] == 4);
  CHECK(answers[1]["exit_category"] == "bad_input_file");
  CHECK_MESSAGE(answers[1]["error"].get<std::string>().find("bad.onnx") != std::string::npos,
                answers[1]);
  CHECK(answers[1].contains("tool"));

  CHECK(answers[2]["model"] == "/nonexistent/missing.onnx");
  CHECK(answers[2]["exit_category"] == "bad_input_file");
  CHECK(answers[2]["error"].get<std::string>().find("missing.onnx") != std::string::npos);

  CHECK(answers[3]["model"] == dsCnn);
  CHECK(answers[3]["schema"] == "bundlefit.fit/1");

  // Every line says what it is and is what it says.
  CHECK(answers[1]["schema"] == "bundlefit.fit-error/1");
  for (const nlohmann::json &answer : answers)
    CHECK_MESSAGE(schemaViolations(answer).empty(), schemaViolations(answer));
  nlohmann::json notAnError = answers[1];
  notAnError["exit_category"] = "does_not_fit";
  CHECK(!schemaViolations(notAnError).empty()); // the schema can fail

  // Each report is the one `fit MODEL --json` prints, stamp included.
  for (size_t i : {size_t(0), size_t(3)}) {
    CommandResult single =
        run("fit " + answers[i]["model"].get<std::string>() + " --device rt1060 --json", dir);
    REQUIRE_MESSAGE(single.exitCode == 0, single.output);
    CHECK(withoutCacheFlag(nlohmann::json::parse(single.output)) == withoutCacheFlag(answers[i]));
  }
}

TEST_CASE("fit --batch GLOB: the matching files, sorted; exit 3 when a model does not fit") {
  fs::path dir = batchDir("glob");
  fs::copy_file(model("lenet"), dir / "a_lenet.onnx");
  fs::copy_file(model("ds_cnn"), dir / "c_ds_cnn.onnx");
  fs::remove(dir / "bad.onnx");
  // Float LeNet's 1.7 MB of weights do not fit the LPC55S69's 640 KB of Flash.
  CommandResult batch =
      run("fit --batch '" + (dir / "*.onnx").string() + "' --device lpc55s69", dir);
  CHECK_MESSAGE(batch.exitCode == 3, batch.output);
  std::vector<nlohmann::json> answers = lines(batch.output);
  REQUIRE_MESSAGE(answers.size() == 2, batch.output);
  CHECK(answers[0]["model"] == (dir / "a_lenet.onnx").string());
  CHECK(answers[0]["fits"] == false);
  CHECK(!answers[0]["suggestions"].empty());
  CHECK(answers[1]["model"] == (dir / "c_ds_cnn.onnx").string());
  CHECK(answers[1]["fits"] == true);
}

TEST_CASE("fit --batch: usage errors name the option") {
  fs::path dir = batchDir("usage");
  std::ofstream(dir / "models.txt") << model("lenet") << "\n";
  CommandResult none =
      run("fit --batch '" + (dir / "*.nothing").string() + "' --device rt1060", dir);
  CHECK(none.exitCode == 4);
  CHECK_MESSAGE(none.output.find("no file matches the pattern") != std::string::npos, none.output);
  CommandResult both = run("fit " + model("lenet") + " --batch " + (dir / "models.txt").string() +
                               " --device rt1060",
                           dir);
  CHECK(both.exitCode == 2);
  CHECK_MESSAGE(both.output.find("either MODEL or --batch LIST") != std::string::npos, both.output);
  CommandResult neither = run("fit --device rt1060", dir);
  CHECK(neither.exitCode == 2);
  CommandResult part =
      run("fit --batch " + (dir / "models.txt").string() + " --device rt9999", dir);
  CHECK(part.exitCode == 2);
  CHECK_MESSAGE(part.output.find("unknown device 'rt9999'") != std::string::npos, part.output);
}

TEST_CASE("fit --batch: progress on stderr when asked, the same lines on stdout") {
  fs::path dir = batchDir("progress");
  std::ofstream(dir / "models.txt") << model("lenet") << "\n"
                                    << (dir / "bad.onnx").string() << "\n"
                                    << model("ds_cnn") << "\n";
  const std::string batch = "fit --batch " + (dir / "models.txt").string() + " --device rt1060";
  auto stdoutOf = [&](const std::string &environment) {
    CommandResult r = bundlefit::test::runProgram(environment + " " + BUNDLEFIT_EXE, batch,
                                                  (dir / "progress.txt").string());
    CHECK_MESSAGE(r.exitCode == 4, r.output);
    std::ifstream in(dir / "progress.txt");
    std::string progress((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<nlohmann::json> parsed;
    for (nlohmann::json &line : lines(r.output))
      parsed.push_back(line.contains("code") ? withoutCacheFlag(line) : line);
    return std::make_pair(parsed, progress);
  };
  auto [shown, progress] = stdoutOf("BUNDLEFIT_PROGRESS=1 BUNDLEFIT_PROGRESS_AFTER_MS=0");
  CHECK_MESSAGE(progress.find("fit --batch: 3/3 models, ") != std::string::npos, progress);
  CHECK_MESSAGE(progress.find("/s, ETA ") != std::string::npos, progress);
  CHECK_MESSAGE(progress.find("fit --batch: 3 models in ") != std::string::npos, progress);
  CHECK_MESSAGE(progress.find(": 2 fit, 0 do not, 1 failed") != std::string::npos, progress);
  auto [quiet, none] = stdoutOf("BUNDLEFIT_PROGRESS=0");
  CHECK_MESSAGE(none.empty(), none);
  CHECK(shown == quiet);
  CHECK(shown.size() == 3);
}
