//===- CodeCacheTests.cpp - fit's code-size cache serves only its model file ===//
//
// The code-size cache is keyed by the model file (its hash), the build's
// options and the target; a graph ModelOptions::afterImport edits is in none
// of them, so fit and pick compile such a graph and never read the cache
// (driver::Compilation::buildOptions).
//
//===----------------------------------------------------------------------===//
#include <doctest/doctest.h>

#include "../cli/CliTestSupport.h"
#include "bundlefit/driver/Compilation.h"
#include "bundlefit/support/TemporaryDirectory.h"

#include <cstdlib>
#include <string>

using namespace bundlefit;

namespace {

/// A code-size cache of the test's own, for as long as the test runs; the
/// other tests of the process get back the one they were given.
struct OwnCodeCache {
  TemporaryDirectory dir{"code-cache-test", "for the code-size cache"};
  const char *given = std::getenv("BUNDLEFIT_CACHE_DIR");
  std::string before = given ? given : "";
  OwnCodeCache() { ::setenv("BUNDLEFIT_CACHE_DIR", dir.path().c_str(), 1); }
  ~OwnCodeCache() {
    if (given)
      ::setenv("BUNDLEFIT_CACHE_DIR", before.c_str(), 1);
    else
      ::unsetenv("BUNDLEFIT_CACHE_DIR");
  }
};

} // namespace

TEST_CASE("fit compiles a graph afterImport changed, not the cached code of its file") {
  OwnCodeCache cache;
  driver::CompilationOptions options;
  options.model.path = test::modelPath("lenet");
  driver::FitQuery query;
  query.part.device = "lpc55s69";
  query.variant = "float";
  auto codeOf = [&](const driver::CompilationOptions &o) {
    return driver::Compilation(o).fit(query)->build->code;
  };
  const driver::CodeBreakdown plain = codeOf(options);
  CHECK_FALSE(plain.fromCache);
  REQUIRE(codeOf(options).fromCache); // the file's entry is there to be misread

  // Sigmoid's float kernel (expf) is other code than Relu's.
  options.model.afterImport = [](Graph &graph) {
    for (Node *node : graph.nodes())
      if (node->is(Op::Relu))
        node->setOp(Op::Sigmoid);
  };
  const driver::CodeBreakdown hooked = codeOf(options);
  CHECK_FALSE(hooked.fromCache);
  CHECK(hooked.text != plain.text);
}
