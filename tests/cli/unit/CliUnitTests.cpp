// Unit tests of the CLI helpers that need no process: the reports' SHA-256,
// run --compare's metrics and the Glow -target/-mcpu mapping.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "GlowTarget.h"
#include "bundlefit/driver/OutputComparison.h"
#include "bundlefit/driver/Sha256.h"

#include "bundlefit/support/Error.h"

#include <cmath>
#include <string>

using namespace bundlefit;

TEST_CASE("SHA-256 of FIPS 180-4's examples") {
  const std::string abc = "abc";
  CHECK(sha256Hex(reinterpret_cast<const uint8_t *>(abc.data()), abc.size()) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256Hex(nullptr, 0) ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // Two blocks: the padding crosses a block boundary.
  const std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK(sha256Hex(reinterpret_cast<const uint8_t *>(two.data()), two.size()) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("compareOutputs: cosine, relative L2 and top-1 over a batch") {
  // Two samples of three scores; the second sample's arg-max differs.
  Tensor out = Tensor::fromFloats({2, 3}, {0.1f, 0.7f, 0.2f, 0.5f, 0.3f, 0.2f});
  Tensor ref = Tensor::fromFloats({2, 3}, {0.1f, 0.8f, 0.1f, 0.2f, 0.6f, 0.2f});
  OutputComparison c = compareOutputs(out, ref, 2);
  CHECK(c.hasTop1);
  CHECK(c.top1Agree == 1);
  CHECK(c.samples == 2);
  CHECK(formatTop1(c) == "1/2");
  // dot = .01+.56+.02+.10+.18+.04 = .91; |out|^2 = .92, |ref|^2 = 1.10
  CHECK(c.cosine == doctest::Approx(0.91 / std::sqrt(0.92 * 1.10)).epsilon(1e-6));
  // |out-ref|^2 = .01+.01+.09+.09 = .20
  CHECK(c.relativeL2 == doctest::Approx(std::sqrt(0.20 / 1.10)).epsilon(1e-6));
  CHECK(c.maxAbsDiff == doctest::Approx(0.3).epsilon(1e-6));

  OutputComparison same = compareOutputs(ref, ref, 2);
  CHECK(same.cosine == doctest::Approx(1.0));
  CHECK(same.relativeL2 == 0.0);
  CHECK(same.top1Agree == 2);

  // One value per sample: no arg-max to agree on.
  Tensor scalar = Tensor::fromFloats({2, 1}, {1.0f, 2.0f});
  CHECK_FALSE(compareOutputs(scalar, scalar, 2).hasTop1);
  CHECK(formatTop1(compareOutputs(scalar, scalar, 2)) == "-");
}

TEST_CASE("Glow's -target/-mcpu pairs map onto targets bundlefit builds") {
  CHECK(glowTargetChoice("", "").shorthand == "host");
  CHECK(glowTargetChoice("x86_64", "").shorthand == "x86_64");
  CHECK(glowTargetChoice("arm", "cortex-m7").shorthand == "cortex-m7");
  CHECK(glowTargetChoice("arm", "cortex-m0").shorthand == "cortex-m0");
  // Cores bundlefit has a --target for map onto it (Target.cpp); others get a triple.
  CHECK(glowTargetChoice("arm", "cortex-m3").shorthand == "cortex-m3");
  CHECK(glowTargetChoice("arm", "cortex-m55").shorthand == "cortex-m55");
  GlowTargetChoice m23 = glowTargetChoice("arm", "cortex-m23");
  CHECK(m23.triple == "thumbv8m.base-none-eabi");
  CHECK(m23.mcpu == "cortex-m23");
  CHECK(m23.noFpu);
  CHECK(glowTargetChoice("aarch64", "cortex-a53").shorthand == "cortex-a53");
  CHECK(glowTargetChoice("aarch64", "neoverse-n1").triple == "aarch64-unknown-linux-gnu");

  auto messageOf = [](const std::string &target, const std::string &cpu) {
    try {
      glowTargetChoice(target, cpu);
    } catch (const Error &e) {
      CHECK(e.code() == ExitCode::Usage);
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(messageOf("i386", "").find("-target=i386: 32-bit x86") == 0);
  CHECK(messageOf("arm", "").find("-target=arm needs -mcpu") == 0);
  CHECK(messageOf("arm", "cortex-r5").find("-mcpu=cortex-r5: not a core") == 0);
  CHECK(messageOf("x86_64", "cortex-m3").find("-mcpu=cortex-m3 is an Arm core") == 0);
}
