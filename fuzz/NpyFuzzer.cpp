//===- NpyFuzzer.cpp - libFuzzer target: .npy files -------------------------===//
//
// decodeNpy reads `run --input` and profiling samples. A header whose shape
// is negative, not a number or too large to allocate must be refused naming
// the file before anything is allocated (issue 16).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "bundlefit/interp/Npy.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string bytes(reinterpret_cast<const char *>(data), size);
  bundlefit::fuzz::expectParsedOrError("fuzz.npy",
                                       [&] { bundlefit::decodeNpy(bytes, "fuzz.npy"); });
  return 0;
}
