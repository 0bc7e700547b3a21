//===- SkipTest.h - A doctest case that cannot run reports a skip -----------===//
//
// Debian 12's doctest (2.4.9) has no runtime skip: a case that returns early
// passes. BUNDLEFIT_SKIP_TEST(why) instead records the skip, prints why, and
// returns; the shared main (SkipAwareMain.cpp) then exits with 77 when every
// case that ran was skipped and none failed, which ctest reports as SKIP
// (SKIP_RETURN_CODE 77, set by bundlefit_add_doctest in tests/support).
//
// A case that may skip belongs to a "needs_..." test suite, e.g.
//   TEST_CASE("..." * doctest::test_suite("needs_qemu"))
// and bundlefit_add_doctest runs each such suite as its own ctest entry, so a
// skip is visible in ctest's summary instead of hidden among passing cases.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_TESTS_SKIPTEST_H
#define BUNDLEFIT_TESTS_SKIPTEST_H

#include <doctest/doctest.h>

#include <sstream>
#include <string>

namespace bundlefit::testing {

/// Marks the running test case as skipped for `reason` (printed to stderr).
void recordSkip(const std::string &reason);

} // namespace bundlefit::testing

/// Skips the current test case: records it and returns from the case.
#define BUNDLEFIT_SKIP_TEST(why)                                                                   \
  do {                                                                                             \
    std::ostringstream bundlefitSkipReason_;                                                       \
    bundlefitSkipReason_ << why;                                                                   \
    ::bundlefit::testing::recordSkip(bundlefitSkipReason_.str());                                  \
    return;                                                                                        \
  } while (false)

#endif // BUNDLEFIT_TESTS_SKIPTEST_H
