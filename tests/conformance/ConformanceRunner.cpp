//===- ConformanceRunner.cpp - Import, optimise, run, compare --------------===//
#include "ConformanceRunner.h"

#include "bundlefit/ir/OpRegistry.h"
#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace bundlefit {
namespace conformance {
namespace {

const char *const kSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

bool isTestDir(const fs::path &dir) { return fs::is_regular_file(dir / "model.onnx"); }

void collectTests(const fs::path &dir, const std::string &suite, std::vector<TestCase> &tests) {
  std::vector<fs::path> entries;
  for (const auto &entry : fs::directory_iterator(dir))
    if (entry.is_directory() && isTestDir(entry.path()))
      entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  for (const fs::path &path : entries)
    tests.push_back({suite, path.filename().string(), path.string()});
}

/// Files `prefix`_0.pb, `prefix`_1.pb ... in `dir`, in index order.
std::vector<fs::path> numberedFiles(const fs::path &dir, const std::string &prefix) {
  std::vector<fs::path> files;
  for (size_t i = 0;; ++i) {
    fs::path file = dir / (prefix + "_" + std::to_string(i) + ".pb");
    if (!fs::is_regular_file(file))
      return files;
    files.push_back(file);
  }
}

std::vector<fs::path> dataSetDirs(const fs::path &testDir) {
  std::vector<fs::path> dirs;
  for (const auto &entry : fs::directory_iterator(testDir))
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0)
      dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

/// Operators of `modelPath` that the OpRegistry does not know (empty when the
/// model cannot even be imported leniently, or knows them all).
std::vector<std::string> unsupportedOperators(const std::string &modelPath) {
  ImportOptions lenient;
  lenient.rejectUnsupportedOps = false;
  std::set<std::string> ops;
  try {
    std::unique_ptr<Graph> graph = importOnnxModel(modelPath, lenient);
    for (const Node *node : graph->nodes())
      if (!OpRegistry::get().find(node->opType))
        ops.insert(node->opType);
  } catch (const std::exception &) {
    return {};
  }
  return {ops.begin(), ops.end()};
}

/// Groups error messages: drops the test's path, node names and quoted value
/// names, so that the same limitation in many tests reads as one reason.
std::string normalizeReason(const std::string &message, const std::string &testDir) {
  std::string text = message;
  for (size_t at; (at = text.find(testDir)) != std::string::npos;)
    text.erase(at, testDir.size());
  text = std::regex_replace(text, std::regex("^/?model\\.onnx: "), "");
  text = std::regex_replace(text, std::regex("node '[^']*' \\(([^)]*)\\)"), "$1");
  text = std::regex_replace(text, std::regex("'[^']*'"), "'...'");
  text = std::regex_replace(text, std::regex("--model-input [^,]*,"), "--model-input NAME,");
  return text;
}

bool isMissingKernel(const std::string &message) {
  return message.find("has no kernel") != std::string::npos;
}

/// numpy.allclose semantics, NaN equal to NaN.
struct Comparison {
  bool ok = true;
  double maxAbsDiff = 0;
  std::string problem;
};

Comparison compare(const Tensor &actual, const Tensor &expected, const Tolerance &tolerance) {
  Comparison result;
  if (actual.type.shape != expected.type.shape) {
    result.ok = false;
    result.maxAbsDiff = INFINITY;
    result.problem = "shape " + shapeToString(actual.type.shape) + ", expected " +
                     shapeToString(expected.type.shape);
    return result;
  }
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    double a = actual.at(i), e = expected.at(i);
    if (std::isnan(a) && std::isnan(e))
      continue;
    double diff = std::fabs(a - e);
    if (std::isnan(diff))
      diff = INFINITY;
    if (a == e)
      diff = 0; // equal infinities
    result.maxAbsDiff = std::max(result.maxAbsDiff, diff);
    if (!(diff <= tolerance.atol + tolerance.rtol * std::fabs(e)))
      result.ok = false;
  }
  return result;
}

void markSkipped(TestResult &result, const Error &error) {
  result.outcome = Outcome::Skipped;
  result.detail = error.what();
  result.reason = normalizeReason(error.what(), result.test.dir);
}

void markFailed(TestResult &result, const std::string &stage, const std::string &message) {
  result.outcome = Outcome::Failed;
  result.reason = stage;
  result.detail = message;
}

/// Handles an exception from `stage`; Unsupported (a documented limitation)
/// skips the test, anything else fails it.
void classifyException(TestResult &result, const std::string &stage) {
  try {
    throw;
  } catch (const Error &error) {
    if (error.code() == ExitCode::Unsupported && !isMissingKernel(error.what()))
      markSkipped(result, error);
    else
      markFailed(result, stage, error.what());
  } catch (const std::exception &error) {
    markFailed(result, stage, std::string("unexpected exception: ") + error.what());
  }
}

/// Runs every data set and fills the verdict (a mismatch reports the output
/// with the largest difference over all data sets).
void runDataSets(TestResult &result, Engine &engine, const Graph &graph,
                 const std::vector<std::string> &outputNames, const Tolerance &tolerance) {
  const fs::path testDir(result.test.dir);
  bool mismatched = false;
  for (const fs::path &dataDir : dataSetDirs(testDir)) {
    ++result.dataSets;
    std::string dataSet = dataDir.filename().string();
    std::vector<fs::path> inputFiles = numberedFiles(dataDir, "input");
    std::vector<fs::path> outputFiles = numberedFiles(dataDir, "output");
    if (inputFiles.size() != graph.inputs().size())
      return markFailed(result, "inputs",
                        dataSet + " has " + std::to_string(inputFiles.size()) +
                            " inputs, the graph " + std::to_string(graph.inputs().size()));
    if (outputFiles.size() != outputNames.size())
      return markFailed(result, "outputs",
                        dataSet + " has " + std::to_string(outputFiles.size()) +
                            " outputs, the graph " + std::to_string(outputNames.size()));
    TensorMap inputs;
    for (size_t i = 0; i < inputFiles.size(); ++i)
      inputs[graph.inputs()[i]->name] = loadTensorProtoFile(inputFiles[i].string());
    TensorMap outputs = engine.run(inputs);
    for (size_t i = 0; i < outputFiles.size(); ++i) {
      auto it = outputs.find(outputNames[i]);
      if (it == outputs.end())
        return markFailed(result, "outputs", "engine produced no output '" + outputNames[i] + "'");
      Tensor expected = loadTensorProtoFile(outputFiles[i].string());
      Comparison comparison = compare(it->second, expected, tolerance);
      if (comparison.ok)
        continue;
      if (mismatched && comparison.maxAbsDiff <= result.maxAbsDiff)
        continue;
      mismatched = true;
      std::ostringstream detail;
      detail << "output '" << outputNames[i] << "' (" << dataSet << ")";
      if (!comparison.problem.empty())
        detail << ": " << comparison.problem;
      markFailed(result, "mismatch", detail.str());
      result.worstOutput = outputNames[i];
      result.maxAbsDiff = comparison.maxAbsDiff;
      result.dataSet = dataSet;
    }
  }
  if (result.dataSets == 0)
    return markFailed(result, "data", "no test_data_set_* directory");
  if (!mismatched)
    result.outcome = Outcome::Passed;
}

} // namespace

const char *outcomeName(Outcome outcome) {
  switch (outcome) {
  case Outcome::Passed: return "passed";
  case Outcome::Failed: return "failed";
  case Outcome::Skipped: return "skipped";
  }
  return "?";
}

std::vector<TestCase> discoverTests(const std::string &root) {
  std::vector<TestCase> tests;
  fs::path base(root);
  bool anySuite = false;
  for (const char *suite : kSuites)
    if (fs::is_directory(base / suite)) {
      anySuite = true;
      collectTests(base / suite, suite, tests);
    }
  if (!anySuite && fs::is_directory(base)) {
    if (isTestDir(base))
      tests.push_back({base.parent_path().filename().string(), base.filename().string(),
                       base.string()});
    else
      collectTests(base, base.filename().string(), tests);
  }
  return tests;
}

TestResult runTest(const TestCase &test, Engine &engine, const Tolerance &tolerance,
                   const PassOptions &passes) {
  auto start = std::chrono::steady_clock::now();
  TestResult result;
  result.test = test;
  std::string modelPath = (fs::path(test.dir) / "model.onnx").string();
  std::string stage = "import";
  try {
    std::unique_ptr<Graph> graph;
    try {
      graph = importOnnxModel(modelPath);
    } catch (const Error &error) {
      if (error.code() != ExitCode::Unsupported)
        throw;
      result.unsupportedOps = unsupportedOperators(modelPath);
      if (result.unsupportedOps.empty())
        throw;
      result.outcome = Outcome::Skipped;
      result.reason = "unsupported operator";
      result.detail = error.what();
    }
    if (graph) {
      std::vector<std::string> outputNames;
      for (const Value *output : graph->outputs())
        outputNames.push_back(output->name);
      stage = "passes";
      result.passStats = describePassStats(runDefaultPasses(*graph, passes));
      stage = "run";
      engine.prepare(modelPath, *graph);
      runDataSets(result, engine, *graph, outputNames, tolerance);
    }
  } catch (...) {
    classifyException(result, stage);
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace conformance
} // namespace bundlefit
