//===- ConformanceRunner.cpp - Build with the driver, run, compare ---------===//
#include "ConformanceRunner.h"

// The test data's TensorProto files; the loader's UnsupportedOperatorsError.
#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <regex>
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

/// Handles an exception from `stage`; Unsupported (an operator without a
/// definition, or a documented limitation) skips the test, anything else
/// fails it.
void classifyException(TestResult &result, const std::string &stage) {
  try {
    throw;
  } catch (const UnsupportedOperatorsError &error) {
    result.outcome = Outcome::Skipped;
    result.unsupportedOps = error.ops();
    result.reason = "unsupported operator";
    result.detail = error.what();
  } catch (const Error &error) {
    if (error.code() == ExitCode::Unsupported && !isMissingKernel(error.what()))
      markSkipped(result, error);
    else
      markFailed(result, stage, error.what());
  } catch (const std::exception &error) {
    markFailed(result, stage, std::string("unexpected exception: ") + error.what());
  }
}

/// The message type inference gives when an operand that fixes a shape
/// (Reshape's shape, Slice's starts, Resize's scales...) is not a constant.
bool needsStaticOperands(const Error &error) {
  return error.code() == ExitCode::Unsupported &&
         std::string(error.what()).find("must be a constant") != std::string::npos;
}

/// Replaces the graph inputs read as parameter operands (isParameterOperand)
/// by constants holding this data set's values; returns their names.
std::vector<std::string> bindParameterInputs(Graph &graph, const TensorMap &inputs) {
  std::vector<std::string> bound;
  for (Value *input : graph.inputs()) {
    bool isParameter = false;
    for (const Node *node : graph.nodes())
      for (size_t i = 0; i < node->inputs.size(); ++i)
        if (node->inputs[i] == input && isParameterOperand(*node, i))
          isParameter = true;
    if (!isParameter)
      continue;
    const Tensor &data = inputs.at(input->name);
    Value *constant =
        graph.addConstant(graph.uniqueValueName(input->name + "_bound"), data.type, data.bytes);
    for (Node *node : graph.nodes())
      std::replace(node->inputs.begin(), node->inputs.end(), input, constant);
    bound.push_back(input->name);
  }
  return bound;
}

/// One data set's input tensors, in file order (input_0.pb, input_1.pb...).
std::vector<Tensor> loadInputFiles(const fs::path &dataDir) {
  std::vector<Tensor> tensors;
  for (const fs::path &file : numberedFiles(dataDir, "input"))
    tensors.push_back(loadTensorProtoFile(file.string()));
  return tensors;
}

/// The tensors keyed by `graph`'s input names: the data set's files follow
/// the ONNX inputs that are not initializers, which are the graph's inputs.
TensorMap byInputName(const Graph &graph, const std::vector<Tensor> &tensors,
                      const fs::path &dataDir) {
  if (tensors.size() != graph.inputs().size())
    throw std::runtime_error(dataDir.filename().string() + " has " +
                             std::to_string(tensors.size()) + " inputs, the graph " +
                             std::to_string(graph.inputs().size()));
  TensorMap inputs;
  for (size_t i = 0; i < tensors.size(); ++i)
    inputs[graph.inputs()[i]->name] = tensors[i];
  return inputs;
}

std::vector<std::string> outputNamesOf(const Graph &graph) {
  std::vector<std::string> names;
  for (const Value *output : graph.outputs())
    names.push_back(output->name);
  return names;
}

/// Compares one data set's outputs; keeps the worst mismatch in `result`.
/// Returns whether everything matched.
bool compareOutputs(TestResult &result, const TensorMap &outputs, const fs::path &dataDir,
                    const std::vector<std::string> &outputNames, const Tolerance &tolerance) {
  std::string dataSet = dataDir.filename().string();
  std::vector<fs::path> files = numberedFiles(dataDir, "output");
  if (files.size() != outputNames.size())
    throw std::runtime_error(dataSet + " has " + std::to_string(files.size()) +
                             " outputs, the graph " + std::to_string(outputNames.size()));
  bool matched = true;
  for (size_t i = 0; i < files.size(); ++i) {
    auto it = outputs.find(outputNames[i]);
    if (it == outputs.end())
      throw std::runtime_error("the engine produced no output '" + outputNames[i] + "'");
    Comparison comparison = compare(it->second, loadTensorProtoFile(files[i].string()), tolerance);
    if (comparison.ok)
      continue;
    matched = false;
    if (result.reason == "mismatch" && comparison.maxAbsDiff <= result.maxAbsDiff)
      continue; // an earlier output or data set was worse
    std::ostringstream detail;
    detail << "output '" << outputNames[i] << "' (" << dataSet << ")";
    if (!comparison.problem.empty())
      detail << ": " << comparison.problem;
    markFailed(result, "mismatch", detail.str());
    result.worstOutput = outputNames[i];
    result.maxAbsDiff = comparison.maxAbsDiff;
    result.dataSet = dataSet;
  }
  return matched;
}

} // namespace

const char *outcomeName(Outcome outcome) {
  switch (outcome) {
  case Outcome::Passed:
    return "passed";
  case Outcome::Failed:
    return "failed";
  case Outcome::Skipped:
    return "skipped";
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
      tests.push_back(
          {base.parent_path().filename().string(), base.filename().string(), base.string()});
    else
      collectTests(base, base.filename().string(), tests);
  }
  return tests;
}

TestResult runTest(const TestCase &test, Engine &engine, const Tolerance &tolerance,
                   const driver::CompilationOptions &options) {
  auto start = std::chrono::steady_clock::now();
  TestResult result;
  result.test = test;
  driver::CompilationOptions compilation = options;
  compilation.model.path = (fs::path(test.dir) / "model.onnx").string();
  std::string stage = "prepare";
  try {
    try {
      engine.prepare(compilation);
    } catch (const Error &error) {
      if (!needsStaticOperands(error))
        throw;
      // Node tests feed shape operands as graph inputs; bundlefit compiles
      // static shapes, so each data set's values are bound into the
      // imported graph instead, before the driver's passes.
      result.boundInputs = true;
    }
    bool matched = true;
    for (const fs::path &dataDir : dataSetDirs(fs::path(test.dir))) {
      ++result.dataSets;
      stage = "run";
      std::vector<Tensor> tensors = loadInputFiles(dataDir);
      if (result.boundInputs) {
        stage = "prepare";
        driver::CompilationOptions bound = compilation;
        bound.model.afterImport = [&](Graph &graph) {
          result.boundInputNames = bindParameterInputs(graph, byInputName(graph, tensors, dataDir));
        };
        engine.prepare(bound);
        stage = "run";
      }
      const Graph &graph = engine.graph();
      matched &= compareOutputs(result, engine.run(byInputName(graph, tensors, dataDir)), dataDir,
                                outputNamesOf(graph), tolerance);
    }
    if (result.dataSets == 0)
      markFailed(result, "data", "no test_data_set_* directory");
    else if (matched)
      result.outcome = Outcome::Passed;
  } catch (...) {
    classifyException(result, stage);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace conformance
} // namespace bundlefit
