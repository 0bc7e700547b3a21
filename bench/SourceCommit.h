//===- SourceCommit.h - The commit a benchmark measured ---------*- C++ -*-===//
//
// Every results file under bench/results/ records the git commit of the
// sources its binary was built from ("commit"), read from the build's
// source-commit.txt (cmake/SourceCommit.cmake), so a README figure can be
// traced to the code it measured and a stale result found
// (scripts/check-readme-figures.py).
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_BENCH_SOURCECOMMIT_H
#define BUNDLEFIT_BENCH_SOURCECOMMIT_H

#include <fstream>
#include <string>

namespace bundlefit::bench {

/// "<sha>", "<sha>-dirty" (uncommitted changes) or "unknown".
inline std::string sourceCommit() {
  std::ifstream in(BUNDLEFIT_SOURCE_COMMIT_FILE);
  std::string commit;
  if (!std::getline(in, commit) || commit.empty())
    return "unknown";
  return commit;
}

} // namespace bundlefit::bench

#endif // BUNDLEFIT_BENCH_SOURCECOMMIT_H
