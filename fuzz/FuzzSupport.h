//===- FuzzSupport.h - What a fuzz target accepts as a correct outcome -----===//
//
// Every parser bundlefit exposes to user files promises one thing: any bytes
// either parse or throw bundlefit::Error with a documented exit code and a
// message naming the file. So a fuzz target calls the parser and lets through
// exactly that. Anything else -- a crash, a sanitizer report, another
// exception type (the tool would print "internal error" and exit 1), or an
// Error with ExitCode::Internal -- aborts, and libFuzzer keeps the input.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/support/Error.h"
#include "bundlefit/support/MemoryBudget.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>
#include <unistd.h>

namespace bundlefit::fuzz {

/// Runs `parse`; `source` is the name the error must mention ("" when the
/// stage does not know the file, e.g. shape inference on an imported graph).
template <typename F> void expectParsedOrError(const std::string &source, F &&parse) {
  try {
    parse();
  } catch (const Error &error) {
    if (error.code() == ExitCode::Internal) {
      std::fprintf(stderr, "fuzz: internal error: %s\n", error.what());
      std::abort();
    }
    std::string message = error.what();
    if (!source.empty() && message.find(source) == std::string::npos) {
      std::fprintf(stderr, "fuzz: error does not name %s: %s\n", source.c_str(), message.c_str());
      std::abort();
    }
  } catch (const std::exception &other) {
    std::fprintf(stderr, "fuzz: escaped %s: %s\n", typeid(other).name(), other.what());
    std::abort();
  }
}

/// Writes the input to a per-process scratch file ending in `suffix` (the
/// first call's: one kind of file per fuzzer), on tmpfs when there is one
/// (the parsers read paths), and returns its path.
inline const std::string &writeScratchFile(const uint8_t *data, size_t size,
                                           const std::string &suffix) {
  static const std::string path = [&] {
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/bundlefit-fuzz-" + std::to_string(getpid()) + suffix;
  }();
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    std::abort();
  if (size && std::fwrite(data, 1, size, file) != size)
    std::abort();
  std::fclose(file);
  return path;
}

/// libFuzzer stops a target at 2 GB of RSS (-rss_limit_mb=2048), ASan's
/// shadow memory included: models that need more are refused by name, as the
/// tool refuses them past --max-memory, at a quarter of that.
inline void limitMemory() {
  static const bool once = (setMemoryBudget(uint64_t(512) << 20), true);
  (void)once;
}

} // namespace bundlefit::fuzz
