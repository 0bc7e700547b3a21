//===- FitVerifyRun.h - `bundlefit fit --verify-run` -----------------------===//
//
// Proof by running: the firmware `--verify-link` links for the part (its
// weights where the placement puts them, copied at start-up, its buffers
// where the fit put them) runs under QEMU on the board of the part's core,
// its memory map moved onto the board's memory at the part's sizes
// (bundle/LinkVerify.h: mapPartOnBoard, verifyRunImage). Its outputs are
// compared byte for byte with the same model's bundle with Glow's one
// constantWeight, built for the same core and run under QEMU, and with the
// host build (byte for byte where the arithmetic is integer; float kernels
// on x86-64 round differently from a Cortex-M, so that difference is
// reported).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "FitVerifyLink.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace bundlefit {

struct RunVerification {
  bool ran = false;
  std::string why; ///< Why it did not run (no QEMU board for the core...).
  std::string machine, cpu, layout;
  bool outputsEqual = false; ///< The placed firmware equals the Glow-layout run, byte for byte.
  bool hostEqual = false;    ///< ... and the host build's outputs.
  double hostMaxAbsDiff = 0;
  size_t outputs = 0, outputBytes = 0;
  double seconds = 0;
  std::string firstDifference; ///< "softmax: byte 12 differs" when not equal.
};

/// Runs the placed firmware, the Glow-layout firmware and the host build on
/// the same deterministic inputs and compares the outputs. `unplaced` is the
/// build with Glow's one constantWeight (compiled for the part's core).
RunVerification verifyPartRun(const PartBundle &part, const device::Device &device,
                              const device::FitResult &fit, const driver::VariantBuild &unplaced,
                              const driver::BuildOptions &options);

std::string verifyRunText(const RunVerification &v);
nlohmann::json verifyRunJson(const RunVerification &v);

} // namespace bundlefit
