//===- main.cpp - onnx_conformance: bundlefit on ONNX's backend test data --===//
//
// usage: onnx_conformance [DATA_ROOT] [--filter TEXT] [--engine interp|bundle]
//                         [--json FILE] [--verbose] [--no-fusion] [--memory-opt N]
//                         [--rtol R] [--atol A] [--expect-passed N]
//
// DATA_ROOT defaults to /usr/share/libonnx-testdata/data (Debian package
// libonnx-testdata); its node, pytorch-converted, pytorch-operator and simple
// suites are run. Prints one line per failure, the skip tables, and last
// "N passed, M failed, K skipped". Models are built by driver::Compilation
// with bundlefit's defaults (memory-opt 2, host); --no-fusion and
// --memory-opt change them as the same options of `bundlefit compile` do.
// Exit status: 0 no failure, 1 a failure,
// 2 usage error, 77 no test data (CTest reports the test as skipped).
// The README's conformance figures come from --json files under bench/results/.
//
//===----------------------------------------------------------------------===//
#include "ConformanceRunner.h"
#include "SourceCommit.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

using namespace bundlefit::conformance;

namespace {

const char *const kDefaultRoot = "/usr/share/libonnx-testdata/data";
constexpr int kExitNoData = 77;

struct Options {
  std::string root = kDefaultRoot;
  std::string filter;
  std::string engine = "interp";
  std::string jsonPath;
  bool verbose = false;
  /// With --expect-passed: the exact number of passes CTest expects, so a
  /// pass that turns into a skip fails the test (and a new pass asks for
  /// the number to be raised).
  long expectedPassed = -1;
  Tolerance tolerance;
  /// The driver's options for every test (runTest sets the model path).
  bundlefit::driver::CompilationOptions compilation;
};

void printUsage() {
  std::cout
      << "usage: onnx_conformance [DATA_ROOT] [--filter TEXT] [--engine NAME]\n"
         "                        [--json FILE] [--verbose] [--no-fusion] [--memory-opt N]\n"
         "                        [--rtol R] [--atol A] [--expect-passed N]\n"
         "  DATA_ROOT   default "
      << kDefaultRoot
      << "\n"
         "  --filter    run tests whose name (or 'suite/name' if TEXT has a '/') contains TEXT\n"
         "  --engine    interp (reference interpreter) or bundle (host bundles)\n"
         "  --json      write one result per test to FILE\n"
         "  --no-fusion run the default passes without activation fusion\n"
         "  --memory-opt N  the level models are built at, 0.."
      << bundlefit::kMaxMemoryOpt << " (default " << bundlefit::kDefaultMemoryOpt
      << ", bundlefit's)\n"
         "  --rtol/--atol  tolerance |actual-expected| <= atol + rtol*|expected|\n"
         "                 (default 1e-3 / 1e-5)\n"
         "  --expect-passed N  fail unless exactly N tests pass\n";
}

bool parseOptions(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc) {
        std::cerr << "onnx_conformance: " << arg << " needs a value\n";
        return false;
      }
      out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "--help" || arg == "-h") {
      printUsage();
      std::exit(0);
    } else if (arg == "--verbose" || arg == "-v") {
      options.verbose = true;
    } else if (arg == "--no-fusion") {
      options.compilation.model.fuseActivations = false;
    } else if (arg == "--memory-opt") {
      if (!value(text))
        return false;
      char *end = nullptr;
      long level = std::strtol(text.c_str(), &end, 10);
      if (text.empty() || *end || level < 0 || level > bundlefit::kMaxMemoryOpt) {
        std::cerr << "onnx_conformance: --memory-opt expects 0.." << bundlefit::kMaxMemoryOpt
                  << ", got '" << text << "'\n";
        return false;
      }
      options.compilation.model.memoryOpt = int(level);
    } else if (arg == "--filter") {
      if (!value(options.filter))
        return false;
    } else if (arg == "--engine") {
      if (!value(options.engine))
        return false;
    } else if (arg == "--json") {
      if (!value(options.jsonPath))
        return false;
    } else if (arg == "--expect-passed") {
      if (!value(text))
        return false;
      char *end = nullptr;
      long number = std::strtol(text.c_str(), &end, 10);
      if (text.empty() || *end || number < 0) {
        std::cerr << "onnx_conformance: --expect-passed expects a count, got '" << text << "'\n";
        return false;
      }
      options.expectedPassed = number;
    } else if (arg == "--rtol" || arg == "--atol") {
      if (!value(text))
        return false;
      char *end = nullptr;
      double number = std::strtod(text.c_str(), &end);
      if (*end || number < 0) {
        std::cerr << "onnx_conformance: " << arg << " expects a number, got '" << text << "'\n";
        return false;
      }
      (arg == "--rtol" ? options.tolerance.rtol : options.tolerance.atol) = number;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "onnx_conformance: unknown option '" << arg << "'\n";
      return false;
    } else {
      options.root = arg;
    }
  }
  return true;
}

std::string joined(const std::vector<std::string> &items, const char *separator) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i)
    text += (i ? separator : "") + items[i];
  return text;
}

void printResultLine(const TestResult &r, bool verbose) {
  char diff[64];
  std::snprintf(diff, sizeof diff, "%.3g", r.maxAbsDiff);
  switch (r.outcome) {
  case Outcome::Failed:
    if (r.reason == "mismatch")
      std::cout << "FAIL " << r.test.id() << ": max abs diff " << diff << " in " << r.detail
                << "\n";
    else
      std::cout << "FAIL " << r.test.id() << " [" << r.reason << "]: " << r.detail << "\n";
    return;
  case Outcome::Skipped:
    if (verbose)
      std::cout << "SKIP " << r.test.id() << ": "
                << (r.unsupportedOps.empty() ? r.reason
                                             : "unsupported " + joined(r.unsupportedOps, ", "))
                << "\n";
    return;
  case Outcome::Passed:
    if (verbose)
      std::cout << "PASS " << r.test.id() << " (" << r.dataSets << " data sets, " << r.seconds
                << " s)"
                << (r.boundInputs
                        ? " [shape operands bound: " + joined(r.boundInputNames, ", ") + "]"
                        : std::string())
                << "\n";
    return;
  }
}

/// "name (count): test, test, test ..." grouped tables.
void printGroups(const std::string &title,
                 const std::map<std::string, std::vector<std::string>> &groups) {
  if (groups.empty())
    return;
  std::cout << title << "\n";
  std::vector<std::pair<std::string, std::vector<std::string>>> sorted(groups.begin(),
                                                                       groups.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto &a, const auto &b) { return a.second.size() > b.second.size(); });
  for (const auto &[key, tests] : sorted) {
    std::vector<std::string> examples(tests.begin(),
                                      tests.begin() + std::min<size_t>(3, tests.size()));
    std::cout << "  " << tests.size() << "\t" << key << "   [" << joined(examples, ", ")
              << (tests.size() > examples.size() ? ", ..." : "") << "]\n";
  }
}

nlohmann::json toJson(const TestResult &r) {
  nlohmann::json j;
  j["test"] = r.test.id();
  j["dir"] = r.test.dir;
  j["outcome"] = outcomeName(r.outcome);
  j["reason"] = r.reason;
  j["detail"] = r.detail;
  j["seconds"] = r.seconds;
  if (!r.unsupportedOps.empty())
    j["unsupported_ops"] = r.unsupportedOps;
  if (r.outcome == Outcome::Failed && r.reason == "mismatch") {
    j["max_abs_diff"] = r.maxAbsDiff;
    j["worst_output"] = r.worstOutput;
    j["data_set"] = r.dataSet;
  }
  if (r.boundInputs)
    j["bound_inputs"] = r.boundInputNames;
  return j;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parseOptions(argc, argv, options)) {
    printUsage();
    return 2;
  }
  // The driver's status lines ("compiled model for host ...") once per test
  // would bury the results; its warnings still print.
  bundlefit::setVerbosity(bundlefit::Verbosity::Quiet);
  std::unique_ptr<Engine> engine = createEngine(options.engine);
  if (!engine) {
    std::cerr << "onnx_conformance: engine '" << options.engine
              << "' is not available (available: " << joined(engineNames(), ", ") << ")\n";
    return 2;
  }
  std::vector<TestCase> tests = discoverTests(options.root);
  if (tests.empty()) {
    std::cerr << "onnx_conformance: no ONNX backend tests under '" << options.root
              << "' (install the libonnx-testdata package)\n";
    return kExitNoData;
  }

  size_t passed = 0, failed = 0, skipped = 0;
  std::map<std::string, std::vector<std::string>> byOp, byReason;
  nlohmann::json results = nlohmann::json::array();
  for (const TestCase &test : tests) {
    // A filter with '/' matches "suite/name", otherwise the test name only
    // (so "conv" does not select every "pytorch-converted" test).
    const std::string &haystack =
        options.filter.find('/') != std::string::npos ? test.id() : test.name;
    if (!options.filter.empty() && haystack.find(options.filter) == std::string::npos)
      continue;
    if (options.verbose)
      std::cout << "---- " << test.id() << std::endl;
    TestResult result = runTest(test, *engine, options.tolerance, options.compilation);
    printResultLine(result, options.verbose);
    std::cout.flush();
    switch (result.outcome) {
    case Outcome::Passed:
      ++passed;
      break;
    case Outcome::Failed:
      ++failed;
      break;
    case Outcome::Skipped:
      ++skipped;
      if (!result.unsupportedOps.empty())
        for (const std::string &op : result.unsupportedOps)
          byOp[op].push_back(test.name);
      else
        byReason[result.reason].push_back(test.name);
      break;
    }
    results.push_back(toJson(result));
  }

  printGroups("Skipped: unsupported operators (tests per operator):", byOp);
  printGroups("Skipped: unsupported mode or dtype (tests per reason):", byReason);
  if (!options.jsonPath.empty()) {
    nlohmann::json document;
    document["commit"] = bundlefit::bench::sourceCommit(); // README figures cite this file.
    document["engine"] = engine->name();
    document["root"] = options.root;
    document["rtol"] = options.tolerance.rtol;
    document["atol"] = options.tolerance.atol;
    document["fusion"] = options.compilation.model.fuseActivations;
    document["memory_opt"] = options.compilation.model.memoryOpt;
    document["passed"] = passed;
    document["failed"] = failed;
    document["skipped"] = skipped;
    document["results"] = results;
    std::ofstream out(options.jsonPath);
    out << document.dump(2) << "\n";
    if (!out) {
      std::cerr << "onnx_conformance: cannot write '" << options.jsonPath << "'\n";
      return 2;
    }
  }
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped" << std::endl;
  if (options.expectedPassed >= 0 && long(passed) != options.expectedPassed) {
    std::cout << "expected exactly " << options.expectedPassed << " passed, got " << passed
              << (long(passed) < options.expectedPassed
                      ? " (a test that passed is now skipped or failing)"
                      : " (new passes: raise --expect-passed in tests/conformance/CMakeLists.txt)")
              << std::endl;
    return 1;
  }
  return failed ? 1 : 0;
}
