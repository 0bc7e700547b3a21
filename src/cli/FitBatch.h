//===- FitBatch.h - bundlefit fit --batch LIST: many models, JSON lines ----===//
//
// A model search asks "does it fit" thousands of times. `fit --batch LIST`
// answers for every model of LIST (a file of paths, one per line, or a glob)
// in one process, on a small pool of threads, one JSON line per model in
// LIST's order: the model's bundlefit.fit/1 report, or an error line with
// the message and the exit category. A bad model never ends the batch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/driver/Compilation.h"

#include <string>
#include <vector>

namespace bundlefit {

/// The models LIST names: the lines of a list file (blank lines and lines
/// starting with '#' skipped), or the files a glob (a pattern with *, ? or [)
/// matches, sorted. Error(BadInputFile) when the file cannot be read or
/// nothing matches.
std::vector<std::string> batchModelPaths(const std::string &list);

/// Fits every model of `list`, compiled as `base` (its model path replaced),
/// to `query`'s part on `jobs`
/// threads (0: one per core) and prints one JSON line per model. Returns 0
/// when every model fits, 3 when some do not and none failed, else the exit
/// code of the first model that failed.
int runFitBatch(const std::string &list, unsigned jobs, const driver::CompilationOptions &base,
                const driver::FitQuery &query);

} // namespace bundlefit
