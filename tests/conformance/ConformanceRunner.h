//===- ConformanceRunner.h - One ONNX backend test, start to verdict -------===//
//
// A test is a directory with model.onnx and test_data_set_*/{input,output}_*.pb
// (the layout of ONNX's backend test data). Running it means: an Engine
// builds the model through driver::Compilation with the options a user gets
// (bundlefit's defaults: memory-opt 2, host, the same passes), executes every
// data set, and its outputs are compared with the expected ones. The harness
// itself imports, optimises and plans nothing.
//
// Verdicts:
//   passed   every output of every data set within tolerance. Graph inputs
//            that are shape operands (Reshape's shape, Slice's starts...;
//            isParameterOperand) are bound to each data set's values when the
//            model is otherwise rejected for them: bundlefit compiles static
//            shapes, and the node tests feed every operand as an input
//   skipped  the model uses an operator bundlefit does not support
//            (unsupportedOps, from the loader's UnsupportedOperatorsError),
//            or a documented unsupported mode/dtype: an Error(Unsupported)
//            from the importer, type inference, a pass or a kernel
//   failed   anything else: a wrong value, a shape mismatch, an exception of
//            another kind (Internal, BadInputFile...) or a missing kernel
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Engine.h"

#include <string>
#include <vector>

namespace bundlefit {
namespace conformance {

struct TestCase {
  std::string suite; ///< "node", "pytorch-converted", ...
  std::string name;  ///< "test_abs"
  std::string dir;
  std::string id() const { return suite + "/" + name; }
};

/// Test directories under `root`/{node,pytorch-converted,pytorch-operator,
/// simple} (or `root` itself when it holds test directories), sorted.
std::vector<TestCase> discoverTests(const std::string &root);

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

enum class Outcome { Passed, Failed, Skipped };
const char *outcomeName(Outcome outcome);

struct TestResult {
  TestCase test;
  Outcome outcome = Outcome::Failed;
  /// Skipped because of these operators (sorted, unique).
  std::vector<std::string> unsupportedOps;
  /// Skipped for a mode/dtype: the grouped reason ("Op: message" with node
  /// and file names removed). Failed: which stage failed.
  std::string reason;
  /// The full error message, or for a mismatch the comparison summary.
  std::string detail;
  /// Mismatch details: the worst output, its max abs diff and data set.
  std::string worstOutput;
  double maxAbsDiff = 0;
  std::string dataSet;
  /// Graph inputs read as shape operands (Reshape's shape, Slice's starts...)
  /// were bound to each data set's values, because bundlefit compiles static
  /// shapes and the test feeds them as inputs (boundInputNames: which).
  bool boundInputs = false;
  std::vector<std::string> boundInputNames;
  size_t dataSets = 0;
  double seconds = 0;
};

/// Runs `test` with `engine`; `options` are the driver's (the model path is
/// the test's model.onnx, whatever options.model.path holds).
TestResult runTest(const TestCase &test, Engine &engine, const Tolerance &tolerance,
                   const driver::CompilationOptions &options = {});

} // namespace conformance
} // namespace bundlefit
