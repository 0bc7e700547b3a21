//===- GlowTarget.h - Glow's -target/-mcpu pair as bundlefit's target ------===//
//
// Glow names a target by LLVM architecture (-target=arm, x86_64, aarch64,
// i386) and CPU (-mcpu=cortex-m7). bundlefit's kernels exist as bitcode for
// x86_64, AArch64 and Arm M-profile; this maps Glow's pair onto a target
// shorthand or an explicit triple, or fails naming the Glow option.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace bundlefit {

struct GlowTargetChoice {
  std::string shorthand; ///< A bundlefit --target, or empty with `triple` set.
  std::string triple;    ///< Explicit LLVM triple for CPUs without a shorthand.
  std::string mcpu;      ///< LLVM CPU with `triple`.
  bool noFpu = false;    ///< The core has no FPU: soft float unless -float-abi says.
};

/// Error(Usage) naming -target or -mcpu when bundlefit cannot build for them.
GlowTargetChoice glowTargetChoice(const std::string &glowTarget, const std::string &mcpu);

} // namespace bundlefit
