//===- FitVerifyLink.h - `bundlefit fit --verify-link` ---------------------===//
//
// The part of `fit` that writes the bundle the prediction was sized from
// (the driver's build for the part's core, bundlefit/driver/VariantBuild.h)
// and links a minimal firmware for the part's memory map to check the
// prediction (bundlefit/bundle/LinkVerify.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "BundleCompilation.h"

#include "bundlefit/driver/PartLink.h"
#include "bundlefit/driver/VariantBuild.h"

#include "bundlefit/bundle/LinkVerify.h"
#include "bundlefit/device/Fit.h"

#include "bundlefit/support/TemporaryDirectory.h"

#include <nlohmann/json.hpp>

#include <string>

namespace bundlefit {

/// The bundle compiled for a part, and the directory the firmware is built in:
/// always a fresh temporary one (nothing planted in --link-dir is ever
/// written through), copied to --link-dir at the end (publishLinkDir).
struct PartBundle {
  PartToolchain toolchain;
  std::shared_ptr<const CompiledBundle> bundle; ///< The build the fit sized.
  TemporaryDirectory work{"link", "for --verify-link"};
  std::string workDir;   ///< work.path(): firmware sources, ELF, map and logs.
  std::string bundleDir; ///< <workDir>/bundle: the five bundle files.
  /// The fit's code term: object code + rodata + the runtime routines it
  /// calls (linkedCodeBytes), not the object's .text alone.
  uint64_t linkedCode = 0;
  uint64_t codeBytes() const { return linkedCode; }
};

/// Checks before any compile that the variant can be linked here: throws
/// Error(Unsupported) for the HiFi4 variants (no DSP code is generated), for
/// int8-cmsis (the firmware would need CMSIS-NN's library, which is the
/// user's) and cores without code generation, Error(Usage) for int8 without
/// a profile, Error(ToolMissing) when arm-none-eabi-gcc is missing.
void checkLinkable(const device::Device &device, const device::Variant &variant,
                   const QuantCliOptions &quant);

/// Writes `build`'s bundle (compiled, not from the cache) into a fresh
/// temporary directory's bundle/ and measures the code the link keeps
/// (linkedCodeBytes).
std::unique_ptr<PartBundle> writePartBundle(const driver::VariantBuild &build,
                                            const device::Device &device);

/// --link-dir DIR: the firmware's directory (sources, linker script, ELF,
/// map, bundle/) becomes DIR's contents as one output of the command
/// (support/OutputFile.h: OutputDirectory), and `v`'s paths name DIR.
void publishLinkDir(const PartBundle &part, const std::string &linkDir, LinkVerification &v);

/// Links the firmware and compares it with `fit` (made with the bundle's code size).
LinkVerification verifyPartLink(const PartBundle &part, const device::Device &device,
                                const device::ModelFootprint &footprint,
                                const device::FitResult &fit, uint64_t staticBytes);

/// The table printed under the fit report, and the verdict line.
std::string verifyLinkText(const LinkVerification &v, bool keptFiles);
nlohmann::json verifyLinkJson(const LinkVerification &v);
/// 0 fits (and agrees), 3 does not fit (and agrees), 1 the link contradicts the prediction.
int verifyLinkExitCode(const LinkVerification &v);

} // namespace bundlefit
