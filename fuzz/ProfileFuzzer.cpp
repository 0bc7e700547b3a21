//===- ProfileFuzzer.cpp - libFuzzer target: quantization profiles (YAML) --===//
//
// parseProfile promises (quant/Profile.h) that any text either parses or
// throws Error(BadInputFile) naming the source. A profile that parses must
// also survive the round trip through renderProfile: the same tensors, in the
// same order, with the same ranges.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "bundlefit/quant/Profile.h"

#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string source = "fuzz-profile.yaml";
  std::string text(reinterpret_cast<const char *>(data), size);
  bundlefit::fuzz::expectParsedOrError(source, [&] {
    bundlefit::ProfileData profile = bundlefit::parseProfile(text, source);
    bundlefit::ProfileData again =
        bundlefit::parseProfile(bundlefit::renderProfile(profile), "rendered");
    bool same =
        again.tensors.size() == profile.tensors.size() && again.modelHash == profile.modelHash;
    for (size_t i = 0; same && i < profile.tensors.size(); ++i)
      same = again.tensors[i].name == profile.tensors[i].name &&
             again.tensors[i].min == profile.tensors[i].min &&
             again.tensors[i].max == profile.tensors[i].max;
    if (!same) {
      std::fprintf(stderr, "fuzz: profile does not survive renderProfile -> parseProfile\n");
      std::abort();
    }
  });
  return 0;
}
