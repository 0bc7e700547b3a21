//===- CmsisNnLibrary.h - Find or build CMSIS-NN for a Cortex-M core -------===//
//
// A --use-cmsis bundle calls CMSIS-NN, which the firmware links. CMSIS-NN
// ships sources (Include/, Source/, a CMakeLists.txt) and installs no
// library, so `bundlefit run --use-cmsis --cmsis-nn DIR` and the tests accept
// either
//  - a source checkout: built once per core with arm-none-eabi-gcc through
//    CMSIS-NN's own CMakeLists (-O2, the core's -mcpu/-mfpu/-mfloat-abi) into
//    <cacheDir>/<core>-<hash of the checkout's path>/libcmsis-nn.a, reused
//    afterwards (the build lands in a temporary directory renamed into place,
//    so concurrent callers never see half a library); or
//  - a directory that already holds libcmsis-nn.a (a CMSIS-NN build or install
//    directory, the library at its top or under lib/ or build/), with the
//    headers in an Include/ or include/ beside it.
//
// Errors (bundlefit::Error): BadInputFile when DIR is neither; ToolMissing
// when cmake or arm-none-eabi-gcc is missing or the build fails (the message
// names the log).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/bundle/BundleRunner.h"

#include <string>
#include <vector>

namespace bundlefit {

struct CmsisNnLibrary {
  std::string includeDir; ///< Holds arm_nnfunctions.h.
  std::string library;    ///< libcmsis-nn.a for the core.
  bool built = false;     ///< Built by this call (false: found or cached).
};

/// The arm-none-eabi-gcc flags CMSIS-NN is built with for `core`
/// (cortex-m0plus, m3, m4, m7, m33, m55, m85); empty for other names.
std::vector<std::string> cmsisNnCoreFlags(const std::string &core);

/// The library for `core` from `dir` (see above), built into `cacheDir` when
/// `dir` is a source checkout.
CmsisNnLibrary findOrBuildCmsisNn(const std::string &dir, const std::string &core,
                                  const std::string &cacheDir, const ToolOverrides &tools = {});

/// Where `run --use-cmsis` caches libraries: $BUNDLEFIT_CACHE_DIR, else
/// $XDG_CACHE_HOME/bundlefit, else ~/.cache/bundlefit; then /cmsis-nn.
std::string defaultCmsisNnCacheDir();

} // namespace bundlefit
