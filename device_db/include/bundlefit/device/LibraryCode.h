//===- LibraryCode.h - Code a bundle links from a kernel library -----------===//
//
// An int8-cmsis bundle calls CMSIS-NN functions that the firmware links from
// the library: their code is part of the build's Flash. The figures are
// measured per core by linking the real library (device_db/libraries/
// cmsis-nn-code.json, made by scripts/measure-cmsis-nn-code.sh; see
// device_db/README.md): for each entry function, the library symbols a link
// rooted at it keeps, with their sizes. A bundle's library code is the size of
// the union of its functions' symbols, so shared helpers count once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit::device {

struct LibraryCodeSize {
  uint64_t bytes = 0;
  bool measured = false; ///< Every function found in the table for this core.
  std::string why;       ///< When not measured: what is missing.
  std::string source;    ///< The table's provenance line.
};

/// CMSIS-NN code for `functions` (arm_* names) on `core` ("cortex-m7", ...),
/// from <device db directory>/libraries/cmsis-nn-code.json.
LibraryCodeSize cmsisNnCodeBytes(const std::string &core,
                                 const std::vector<std::string> &functions);

} // namespace bundlefit::device
