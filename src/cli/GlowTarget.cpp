//===- GlowTarget.cpp - Glow's -target/-mcpu pair as bundlefit's target ----===//
#include "GlowTarget.h"

#include "bundlefit/codegen/Target.h"
#include "bundlefit/support/Error.h"

#include <utility>

namespace bundlefit {

namespace {

/// Arm M-profile cores without a bundlefit shorthand: their architecture.
/// The Arm kernel bitcode is plain Thumb-2 / Thumb-1 C, so every M-profile
/// architecture LLVM knows can take it; the FPU follows the CPU name.
const std::pair<const char *, const char *> kArmCores[] = {
    {"cortex-m3", "thumbv7m"},         {"cortex-m23", "thumbv8m.base"},
    {"cortex-m35p", "thumbv8m.main"},  {"cortex-m55", "thumbv8.1m.main"},
    {"cortex-m85", "thumbv8.1m.main"}, {"cortex-m1", "thumbv6m"},
};

bool isShorthand(const std::string &name) {
  for (const TargetInfo &info : knownTargets())
    if (name == info.shorthand && name != "host")
      return true;
  return name == "cortex-m0";
}

bool isArmArch(const std::string &target) {
  return target == "arm" || target == "thumb" || target == "armv7" || target == "thumbv7" ||
         target.rfind("thumbv", 0) == 0 || target.rfind("armv", 0) == 0 ||
         target == "arm-none-eabi" || target == "thumb-none-eabi";
}

} // namespace

GlowTargetChoice glowTargetChoice(const std::string &glowTarget, const std::string &mcpu) {
  GlowTargetChoice choice;
  if (glowTarget == "i386" || glowTarget == "i686" || glowTarget == "x86" ||
      glowTarget.rfind("i386-", 0) == 0 || glowTarget.rfind("i686-", 0) == 0)
    throw Error(ExitCode::Usage,
                "-target=" + glowTarget +
                    ": 32-bit x86 bundles are not built by bundlefit (its kernels exist for "
                    "x86_64, aarch64 and Arm Cortex-M); use -target=x86_64");
  if (mcpu.empty()) {
    if (glowTarget.empty())
      choice.shorthand = "host";
    else if (glowTarget == "x86_64" || glowTarget == "x86-64")
      choice.shorthand = "x86_64";
    else if (glowTarget == "aarch64" || glowTarget == "arm64")
      choice.triple = "aarch64-unknown-linux-gnu";
    else if (isArmArch(glowTarget))
      throw Error(ExitCode::Usage, "-target=" + glowTarget +
                                       " needs -mcpu naming the core (cortex-m0, cortex-m3, "
                                       "cortex-m4, cortex-m7, cortex-m33, cortex-m55)");
    else
      throw Error(ExitCode::Usage, "-target=" + glowTarget +
                                       ": not an architecture bundlefit builds (x86_64, "
                                       "aarch64, arm)");
    return choice;
  }
  for (const auto &[cpu, arch] : kArmCores)
    if (mcpu == cpu && !glowTarget.empty() && !isArmArch(glowTarget))
      throw Error(ExitCode::Usage,
                  "-mcpu=" + mcpu + " is an Arm core; -target=" + glowTarget + " is not Arm");
  if (isShorthand(mcpu)) {
    choice.shorthand = mcpu;
    return choice;
  }
  for (const auto &[cpu, arch] : kArmCores)
    if (mcpu == cpu) {
      choice.triple = std::string(arch) + "-none-eabi";
      choice.mcpu = mcpu;
      choice.noFpu = mcpu == "cortex-m3" || mcpu == "cortex-m23" || mcpu == "cortex-m1";
      return choice;
    }
  if (glowTarget == "aarch64" || glowTarget == "arm64") {
    choice.triple = "aarch64-unknown-linux-gnu";
    choice.mcpu = mcpu;
    return choice;
  }
  if (glowTarget == "x86_64" || glowTarget == "x86-64") {
    choice.triple = "x86_64-unknown-linux-gnu";
    choice.mcpu = mcpu;
    return choice;
  }
  throw Error(ExitCode::Usage,
              "-mcpu=" + mcpu + ": not a core bundlefit builds for" +
                  (glowTarget.empty() ? "" : " with -target=" + glowTarget) +
                  " (Arm: cortex-m0, cortex-m3, cortex-m4, cortex-m7, cortex-m23, cortex-m33, "
                  "cortex-m55, cortex-m85; aarch64: any AArch64 CPU, e.g. cortex-a53)");
}

} // namespace bundlefit
