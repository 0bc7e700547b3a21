//===- Target.h - Which machine a bundle is compiled for -------------------===//
//
// A TargetOptions names everything the code generator needs to pick an LLVM
// target: triple, CPU, extra features, float ABI, relocation model and the
// optimisation goal. resolveTarget turns command-line spellings (the
// `--target cortex-m7` shorthand, or Glow's -target/-mcpu/-float-abi/
// -relocation-model) into one, throwing Error(Usage) that names the option.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

enum class FloatAbi : uint8_t {
  Hard, ///< Float arguments in FPU registers (arm-none-eabi-gcc -mfloat-abi=hard).
  Soft  ///< Soft calling convention. Like Glow, the FPU (if the CPU has one) is
        ///< still used inside the bundle, i.e. gcc's -mfloat-abi=softfp; it links
        ///< with both softfp and soft firmware.
};
enum class RelocationModel : uint8_t { Static, Pic };
enum class CodegenOptLevel : uint8_t {
  O2, ///< Speed: kernels are inlined and specialised per call site, except
      ///< convolutions in networks with more than 16 of them (one shared copy
      ///< then, so large networks still compile in seconds).
  O3, ///< Speed at any compile-time cost: convolutions specialised too (Glow-like).
  Os  ///< Size first: LLVM's inliner decides; shared kernels stay calls.
};

struct TargetOptions {
  std::string name;     ///< Shorthand ("cortex-m7", "host") or "custom".
  std::string triple;   ///< e.g. "thumbv7em-none-eabihf".
  std::string cpu;      ///< LLVM CPU name; "native" = the host CPU.
  std::string features; ///< Extra "+feat,-feat" on top of the CPU's defaults.
  FloatAbi floatAbi = FloatAbi::Hard;
  RelocationModel relocationModel = RelocationModel::Static;
  CodegenOptLevel optLevel = CodegenOptLevel::O2;
};

/// One row of the shorthand table (`bundlefit targets` can print it).
struct TargetInfo {
  const char *shorthand;
  const char *triple; ///< Hard-float spelling for Arm CPUs with an FPU.
  const char *cpu;
  bool hasFpu;
  const char *description;
};
const std::vector<TargetInfo> &knownTargets();

/// Resolves `--target` (shorthand, may be empty) plus explicit overrides.
/// Empty strings mean "not given". With neither a shorthand nor a triple the
/// target is "host". A bare "arm"/"thumb" triple (Glow's `-target=arm`) takes
/// its architecture from `mcpu`. floatAbi: "hard"|"soft" (default: hard when
/// the CPU has an FPU); relocationModel: "static"|"pic" (default static, as
/// Glow). Throws Error(ExitCode::Usage) naming --target, --triple, --mcpu,
/// --float-abi or --relocation-model.
TargetOptions resolveTarget(const std::string &shorthand, const std::string &triple = "",
                            const std::string &mcpu = "", const std::string &floatAbi = "",
                            const std::string &relocationModel = "");

/// "O2"/"2"/"speed", "O3"/"3" or "Os"/"s"/"size"; throws Error(Usage) naming --opt.
CodegenOptLevel parseOptLevel(const std::string &text);
const char *optLevelName(CodegenOptLevel level);

/// "cortex-m7 (thumbv7em-none-eabihf, cpu cortex-m7, hard float, static, O2)".
std::string describeTarget(const TargetOptions &target);

} // namespace bundlefit
