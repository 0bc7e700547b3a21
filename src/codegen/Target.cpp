//===- Target.cpp - Target shorthands and option resolution ----------------===//
#include "bundlefit/codegen/Target.h"

#include "bundlefit/support/Error.h"

#include <llvm/TargetParser/Triple.h>

#include <algorithm>

namespace bundlefit {

const std::vector<TargetInfo> &knownTargets() {
  static const std::vector<TargetInfo> targets = {
      {"host", "x86_64-unknown-linux-gnu", "native", true,
       "the machine running bundlefit (x86_64, its own CPU features)"},
      {"x86_64", "x86_64-unknown-linux-gnu", "x86-64", true, "generic x86-64 Linux"},
      {"cortex-a53", "aarch64-unknown-linux-gnu", "cortex-a53", true, "Arm Cortex-A53, AArch64"},
      {"cortex-a72", "aarch64-unknown-linux-gnu", "cortex-a72", true, "Arm Cortex-A72, AArch64"},
      {"cortex-m4", "thumbv7em-none-eabihf", "cortex-m4", true, "Cortex-M4F (FPv4-SP)"},
      {"cortex-m7", "thumbv7em-none-eabihf", "cortex-m7", true, "Cortex-M7 (FPv5-D16)"},
      {"cortex-m33", "thumbv8m.main-none-eabihf", "cortex-m33", true, "Cortex-M33 (FPv5-SP, DSP)"},
      {"cortex-m55", "thumbv8.1m.main-none-eabihf", "cortex-m55", true,
       "Cortex-M55 (Helium MVE, FPv5, DSP)"},
      {"cortex-m85", "thumbv8.1m.main-none-eabihf", "cortex-m85", true,
       "Cortex-M85 (Helium MVE, FPv5, DSP)"},
      {"cortex-m3", "thumbv7m-none-eabi", "cortex-m3", false, "Cortex-M3 (no FPU, no DSP)"},
      {"cortex-m0plus", "thumbv6m-none-eabi", "cortex-m0plus", false,
       "Cortex-M0+ (no FPU, soft float)"},
  };
  return targets;
}

namespace {

std::string knownList() {
  std::string list;
  for (const TargetInfo &info : knownTargets())
    list += std::string(list.empty() ? "" : ", ") + info.shorthand;
  return list;
}

const TargetInfo *findShorthand(const std::string &name) {
  for (const TargetInfo &info : knownTargets())
    if (name == info.shorthand)
      return &info;
  if (name == "x86-64" || name == "x86_64-unknown-linux-gnu")
    return findShorthand("x86_64");
  if (name == "cortex-m0+" || name == "cortex-m0")
    return findShorthand("cortex-m0plus");
  return nullptr;
}

/// Shorthand whose CPU is `cpu` (for `-target=arm -mcpu=cortex-m7`).
const TargetInfo *findByCpu(const std::string &cpu) {
  if (cpu == "cortex-m0")
    return findShorthand("cortex-m0plus");
  for (const TargetInfo &info : knownTargets())
    if (cpu == info.cpu && std::string(info.shorthand) != "host")
      return &info;
  return nullptr;
}

bool startsWith(const std::string &text, const std::string &prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

bool isArmTriple(const std::string &triple) {
  return startsWith(triple, "arm") || startsWith(triple, "thumb");
}

/// Architecture part ("thumbv7em") -> whether the bitcode families cover it.
bool isSupportedArch(const std::string &triple) {
  return startsWith(triple, "x86_64") || startsWith(triple, "aarch64") ||
         startsWith(triple, "arm64") || isArmTriple(triple);
}

/// Rewrites the environment of an Arm triple to eabi / eabihf
/// ("thumbv7em-none-eabi" <-> "thumbv7em-none-eabihf"; "thumbv7em" gains "-none-eabi").
std::string withArmEnvironment(const std::string &triple, FloatAbi abi) {
  const std::string env = abi == FloatAbi::Hard ? "eabihf" : "eabi";
  const size_t dash = triple.rfind('-');
  if (dash != std::string::npos && startsWith(triple.substr(dash + 1), "eabi"))
    return triple.substr(0, dash + 1) + env;
  if (dash == std::string::npos)
    return triple + "-none-" + env;
  return triple + "-" + env;
}

} // namespace

TargetOptions resolveTarget(const std::string &shorthand, const std::string &triple,
                            const std::string &mcpu, const std::string &floatAbi,
                            const std::string &relocationModel) {
  TargetOptions target;
  bool hasFpu = true;
  if (!shorthand.empty()) {
    const TargetInfo *info = findShorthand(shorthand);
    if (!info)
      throw Error(ExitCode::Usage, "--target '" + shorthand + "' is not a known target (known: " +
                                       knownList() + "; or give --triple and --mcpu)");
    target.name = info->shorthand;
    target.triple = info->triple;
    target.cpu = info->cpu;
    hasFpu = info->hasFpu;
  } else if (triple.empty()) {
    return resolveTarget("host", "", mcpu, floatAbi, relocationModel);
  } else {
    target.name = "custom";
  }

  if (!triple.empty()) {
    std::string t = triple;
    if (t == "x86_64" || t == "x86-64")
      t = "x86_64-unknown-linux-gnu";
    else if (t == "aarch64" || t == "arm64")
      t = "aarch64-unknown-linux-gnu";
    if (t == "arm" || t == "thumb" || t == "arm-none-eabi" || t == "thumb-none-eabi") {
      const TargetInfo *byCpu = mcpu.empty() ? nullptr : findByCpu(mcpu);
      if (!byCpu || !isArmTriple(byCpu->triple))
        throw Error(ExitCode::Usage,
                    "--triple '" + triple +
                        "' needs --mcpu naming a supported Cortex-M CPU (cortex-m0plus, "
                        "cortex-m3, cortex-m4, cortex-m7, cortex-m33, cortex-m55, cortex-m85)");
      t = byCpu->triple;
      hasFpu = byCpu->hasFpu;
      target.cpu = byCpu->cpu;
    } else if (!isSupportedArch(t)) {
      throw Error(ExitCode::Usage, "--triple '" + triple +
                                       "' is not supported (x86_64, aarch64, thumbv6m, "
                                       "thumbv7m, thumbv7em, thumbv8m.main, thumbv8.1m.main)");
    }
    // The weights file, the placeholder offsets and every kernel assume
    // little-endian data: a big-endian object beside a little-endian
    // weights.bin would compute garbage.
    if (!llvm::Triple(t).isLittleEndian())
      throw Error(ExitCode::Usage, "--triple '" + triple +
                                       "' is big-endian; bundlefit generates little-endian "
                                       "bundles only (e.g. thumbv7em-none-eabi, not thumbebv7em)");
    target.triple = t;
    if (shorthand.empty() && target.cpu.empty())
      target.cpu = startsWith(t, "x86_64")       ? "x86-64"
                   : startsWith(t, "thumbv6m")   ? "cortex-m0plus"
                   : startsWith(t, "thumbv8m")   ? "cortex-m33"
                   : startsWith(t, "thumbv8.1m") ? "cortex-m55"
                   : startsWith(t, "thumbv7m")   ? "cortex-m3"
                   : isArmTriple(t)              ? "cortex-m4"
                                                 : "generic";
    if (startsWith(t, "thumbv6m") || startsWith(t, "thumbv7m"))
      hasFpu = false;
  }
  if (!mcpu.empty()) {
    if (mcpu.find_first_of(" ,;") != std::string::npos)
      throw Error(ExitCode::Usage, "--mcpu '" + mcpu + "' is not a CPU name");
    target.cpu = mcpu;
    if (target.name != "custom" && mcpu != knownTargets().front().cpu) {
      const TargetInfo *byCpu = findByCpu(mcpu);
      if (byCpu)
        hasFpu = byCpu->hasFpu;
    }
    if (mcpu == "cortex-m0plus" || mcpu == "cortex-m0" || mcpu == "cortex-m3")
      hasFpu = false;
  }

  if (floatAbi.empty())
    target.floatAbi = hasFpu ? FloatAbi::Hard : FloatAbi::Soft;
  else if (floatAbi == "hard")
    target.floatAbi = FloatAbi::Hard;
  else if (floatAbi == "soft" || floatAbi == "softfp")
    target.floatAbi = FloatAbi::Soft;
  else
    throw Error(ExitCode::Usage, "--float-abi '" + floatAbi + "' must be hard or soft");
  if (target.floatAbi == FloatAbi::Hard && !hasFpu && isArmTriple(target.triple))
    throw Error(ExitCode::Usage,
                "--float-abi hard: " + target.cpu + " has no FPU (use --float-abi soft)");
  if (isArmTriple(target.triple))
    target.triple = withArmEnvironment(target.triple, target.floatAbi);

  if (relocationModel.empty() || relocationModel == "static")
    target.relocationModel = RelocationModel::Static;
  else if (relocationModel == "pic")
    target.relocationModel = RelocationModel::Pic;
  else
    throw Error(ExitCode::Usage,
                "--relocation-model '" + relocationModel + "' must be static or pic");
  return target;
}

CodegenOptLevel parseOptLevel(const std::string &text) {
  if (text == "O2" || text == "2" || text == "speed" || text == "-O2")
    return CodegenOptLevel::O2;
  if (text == "O3" || text == "3" || text == "-O3")
    return CodegenOptLevel::O3;
  if (text == "Os" || text == "s" || text == "size" || text == "-Os")
    return CodegenOptLevel::Os;
  throw Error(ExitCode::Usage,
              "--opt '" + text + "' must be O2 (speed), O3 (speed, slow compile) or Os (size)");
}

const char *optLevelName(CodegenOptLevel level) {
  switch (level) {
  case CodegenOptLevel::O2:
    return "O2";
  case CodegenOptLevel::O3:
    return "O3";
  case CodegenOptLevel::Os:
    return "Os";
  }
  return "O2";
}

std::string describeTarget(const TargetOptions &target) {
  std::string text = target.name + " (" + target.triple + ", cpu " + target.cpu;
  if (!target.features.empty())
    text += ", features " + target.features;
  text += target.floatAbi == FloatAbi::Hard ? ", hard float" : ", soft float";
  text += target.relocationModel == RelocationModel::Static ? ", static" : ", pic";
  text += std::string(", ") + optLevelName(target.optLevel) + ")";
  return text;
}

} // namespace bundlefit
