//===- Harness.h - Generated drivers, startup code and linker scripts ------===//
//
// Internal to bundlefit_bundle. The generated programs use only relative file
// names ("weights.bin", "in0.bin", "out0.bin"): they are built and run with
// the run directory as working directory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/bundle/BundleRunner.h"

#include <string>
#include <vector>

namespace bundlefit {
namespace harness {

/// Exit statuses shared by the host driver and the firmware.
enum Status : int {
  StatusOk = 0,
  StatusEntryFailed = 2, ///< The entry returned non-zero.
  StatusIoFailed = 3,    ///< A file could not be read/written.
  StatusFault = 0x46,    ///< Cortex-M fault handler (HardFault, ...).
};

/// One placeholder as the generated code sees it: file index, offset, size.
struct IoSlot {
  std::string name;
  uint64_t offset = 0, bytes = 0;
  bool isInput = false;
  int index = 0; ///< in<index>.bin / out<index>.bin
};

/// Where each part of the firmware image goes.
struct FirmwareLayout {
  const CortexMBoard *board = nullptr;
  bool weightsInExtra = false; ///< weights + inputs in board.extra, else code
  bool regionsInExtra = false; ///< mutable + activations in board.extra, else ram
  uint64_t stackBytes = 64 * 1024;
  uint64_t heapBytes = 64 * 1024;
  std::string describe(const BundleRunSpec &spec) const;
};

/// host: driver.c, main() reading weights.bin + in<i>.bin and writing out<i>.bin.
std::string hostDriverSource(const BundleRunSpec &spec, const std::vector<IoSlot> &slots);

/// Cortex-M: fw.c (vector table, reset handler, semihosting, .incbin data).
std::string firmwareSource(const BundleRunSpec &spec, const std::vector<IoSlot> &slots,
                           const FirmwareLayout &layout);
/// Cortex-M: fw.ld for the board.
std::string linkerScript(const FirmwareLayout &layout);

} // namespace harness
} // namespace bundlefit
