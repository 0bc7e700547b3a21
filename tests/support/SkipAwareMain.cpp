//===- SkipAwareMain.cpp - doctest's main, with skips as ctest SKIP (77) ----===//
//
// The implementation of doctest and the main of every test executable that
// can skip. A listener counts the cases that ran and failed; recordSkip marks
// the running case. When no case failed and every case that ran skipped, the
// executable exits 77, so ctest shows SKIP rather than a pass.
//
//===----------------------------------------------------------------------===//
#define DOCTEST_CONFIG_IMPLEMENT
#include "SkipTest.h"

#include <iostream>
#include <set>

namespace {

constexpr int kExitSkipped = 77;

struct RunTally {
  std::string currentCase;
  std::set<std::string> skippedCases;
  unsigned casesRun = 0;
  unsigned casesFailed = 0;
};

RunTally &tally() {
  static RunTally instance;
  return instance;
}

/// Follows the run so main can tell "all skipped" from "all passed".
struct SkipListener : doctest::IReporter {
  explicit SkipListener(const doctest::ContextOptions &) {}
  void report_query(const doctest::QueryData &) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats &stats) override {
    tally().casesRun = stats.numTestCasesPassingFilters;
    tally().casesFailed = stats.numTestCasesFailed;
  }
  void test_case_start(const doctest::TestCaseData &data) override {
    tally().currentCase = data.m_name;
  }
  void test_case_reenter(const doctest::TestCaseData &) override {}
  void test_case_end(const doctest::CurrentTestCaseStats &) override {}
  void test_case_exception(const doctest::TestCaseException &) override {}
  void subcase_start(const doctest::SubcaseSignature &) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData &) override {}
  void log_message(const doctest::MessageData &) override {}
  void test_case_skipped(const doctest::TestCaseData &) override {}
};

} // namespace

DOCTEST_REGISTER_LISTENER("bundlefit_skips", 1, SkipListener);

void bundlefit::testing::recordSkip(const std::string &reason) {
  std::cerr << "SKIPPED: " << tally().currentCase << ": " << reason << "\n";
  tally().skippedCases.insert(tally().currentCase);
}

int main(int argc, char **argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit())
    return result;
  const RunTally &run = tally();
  if (result == 0 && run.casesFailed == 0 && run.casesRun > 0 &&
      run.skippedCases.size() == run.casesRun) {
    std::cerr << "all " << run.casesRun << " test case(s) skipped: exit " << kExitSkipped << "\n";
    return kExitSkipped;
  }
  return result;
}
