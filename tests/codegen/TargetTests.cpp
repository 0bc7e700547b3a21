// Target resolution: shorthands, Glow spellings and errors naming the option.
#include "bundlefit/codegen/Target.h"
#include "bundlefit/support/Error.h"

#include <doctest/doctest.h>

using namespace bundlefit;

namespace {
std::string usageError(const std::string &target, const std::string &triple, const std::string &cpu,
                       const std::string &abi, const std::string &reloc) {
  try {
    resolveTarget(target, triple, cpu, abi, reloc);
  } catch (const Error &error) {
    CHECK(error.code() == ExitCode::Usage);
    return error.what();
  }
  return "(no error)";
}
} // namespace

TEST_CASE("shorthands resolve to triple, cpu and float ABI") {
  TargetOptions m7 = resolveTarget("cortex-m7");
  CHECK(m7.triple == "thumbv7em-none-eabihf");
  CHECK(m7.cpu == "cortex-m7");
  CHECK(m7.floatAbi == FloatAbi::Hard);
  CHECK(m7.relocationModel == RelocationModel::Static);

  TargetOptions m7soft = resolveTarget("cortex-m7", "", "", "soft", "pic");
  CHECK(m7soft.triple == "thumbv7em-none-eabi");
  CHECK(m7soft.floatAbi == FloatAbi::Soft);
  CHECK(m7soft.relocationModel == RelocationModel::Pic);

  TargetOptions m0 = resolveTarget("cortex-m0plus");
  CHECK(m0.triple == "thumbv6m-none-eabi");
  CHECK(m0.floatAbi == FloatAbi::Soft);

  CHECK(resolveTarget("cortex-m33").triple == "thumbv8m.main-none-eabihf");
  CHECK(resolveTarget("cortex-a53").triple == "aarch64-unknown-linux-gnu");
  CHECK(resolveTarget("x86_64").cpu == "x86-64");
  CHECK(resolveTarget("").name == "host");
}

TEST_CASE("Glow spellings: -target=arm -mcpu=cortex-m4, explicit triples") {
  TargetOptions m4 = resolveTarget("", "arm", "cortex-m4", "", "");
  CHECK(m4.triple == "thumbv7em-none-eabihf");
  CHECK(m4.cpu == "cortex-m4");
  TargetOptions a72 = resolveTarget("", "aarch64", "cortex-a72", "", "");
  CHECK(a72.triple == "aarch64-unknown-linux-gnu");
  CHECK(a72.cpu == "cortex-a72");
  TargetOptions custom = resolveTarget("", "thumbv7em-none-eabi", "cortex-m7", "hard", "");
  CHECK(custom.triple == "thumbv7em-none-eabihf");
}

TEST_CASE("bad target options are usage errors naming the option") {
  CHECK(usageError("cortex-m99", "", "", "", "").find("--target 'cortex-m99'") !=
        std::string::npos);
  CHECK(usageError("", "riscv32", "", "", "").find("--triple") != std::string::npos);
  CHECK(usageError("", "arm", "", "", "").find("--mcpu") != std::string::npos);
  CHECK(usageError("cortex-m7", "", "", "medium", "").find("--float-abi") != std::string::npos);
  CHECK(usageError("cortex-m0plus", "", "", "hard", "").find("no FPU") != std::string::npos);
  CHECK(usageError("cortex-m7", "", "", "", "ropi").find("--relocation-model") !=
        std::string::npos);
  CHECK_THROWS_AS(parseOptLevel("O7"), Error);
  CHECK(parseOptLevel("Os") == CodegenOptLevel::Os);
}
