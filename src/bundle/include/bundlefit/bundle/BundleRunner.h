//===- BundleRunner.h - Link a bundle into a driver and run it -------------===//
//
// Runs a compiled bundle (<net>.o + <net>.weights.bin, Glow's static API
//
//   int <net>(uint8_t *constantWeight, uint8_t *mutableWeight,
//             uint8_t *activations);          // 0 = success
//
// ) on real inputs and reads its outputs back:
//
//  - host: a generated C driver (three 64-aligned regions, weights and inputs
//    read from files, outputs written to files) linked by the system C
//    compiler with <net>.o and -lm (`-no-pie`), run natively.
//  - cortex-m7 / cortex-m33 / cortex-m4 / cortex-m55: generated bare-metal
//    firmware (vector table, reset handler enabling the FPU and MVE, weights
//    and inputs in the image via .incbin, outputs written back with semihosting
//    file I/O, exit status via SYS_EXIT_EXTENDED) linked by arm-none-eabi-gcc
//    with newlib's libm, run under qemu-system-arm on the MPS2/MPS3 board for
//    that core (mps2-an500, mps2-an505, mps2-an386, mps3-an547).
//
// The caller passes the sizes and placeholder offsets it already knows (the
// header is not parsed). Every generated or temporary file lives under
// `<workDir>/<net>.<target>/`.
//
// Errors (bundlefit::Error):
//  - ToolMissing: cc / arm-none-eabi-gcc / newlib / qemu-system-arm missing
//    (the message names the Debian package to install); the compiler or linker
//    failed; the program crashed (fault), timed out or exited abnormally (the
//    message ends with the last lines of its output).
//  - Internal: the bundle entry returned non-zero.
//  - Usage: unknown target, missing or unknown input name.
//  - BadInputFile: missing <net>.o, weights.bin size != constantSize, input
//    dtype/size mismatch.
//  - DoesNotFit: the regions do not fit the board's memories.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Tensor.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bundlefit {

/// One placeholder (input or output) inside the mutableWeight region.
struct PlaceholderSpec {
  std::string name;    ///< Key of the input/output maps (the model's name).
  uint64_t offset = 0; ///< Byte offset in mutableWeight (<NET>_<name>).
  TensorType type;     ///< dtype and shape; bytes() bytes are read/written.
  bool isInput = false;
};

/// Explicit tool paths; an empty field means: the environment variable
/// (BUNDLEFIT_CC, BUNDLEFIT_ARM_GCC, BUNDLEFIT_QEMU_ARM), then PATH.
struct ToolOverrides {
  std::string cc;     ///< Host C compiler (default "cc", then "gcc").
  std::string armGcc; ///< Default "arm-none-eabi-gcc".
  std::string qemu;   ///< Default "qemu-system-arm".
};

/// A firmware image laid out for a part's memory map (`fit --verify-run`,
/// LinkVerify.h: verifyRunImage) in place of the board's default layout:
/// its linker script, the extra sources it links (the placed bundle's
/// <net>_weights.c), include directories, and what the generated firmware
/// declares, runs at start-up and calls per sample.
struct PartImage {
  std::string linkerScript;
  std::vector<std::string> sources, includeDirs; ///< Absolute paths.
  std::string declarations;                      ///< C lines after the entry's prototype.
  std::string startup;                           ///< C statements before the first sample.
  std::string call;                              ///< The entry call expression.
};

struct BundleRunSpec {
  std::string bundleDir, networkName; ///< <bundleDir>/<net>.o, <net>.weights.bin
  uint64_t constantSize = 0, mutableSize = 0, activationsSize = 0;
  std::vector<PlaceholderSpec> placeholders;
  std::string target = "host"; ///< "host" | "cortex-m7" | "cortex-m33" | "cortex-m4" | "cortex-m55"
  double timeoutSeconds = 120; ///< For running the program (builds: 600 s each).
  ToolOverrides tools;
  /// Samples per run: each input tensor holds `batch` samples back to back
  /// (batch * the placeholder's bytes), the program calls the entry once per
  /// sample and each output comes back with `batch` results back to back, its
  /// leading dimension multiplied by `batch`. One build and one QEMU boot for
  /// a whole test set.
  uint64_t batch = 1;
  /// Objects or static libraries linked after <net>.o (absolute paths): the
  /// CMSIS-NN library a --use-cmsis bundle calls.
  std::vector<std::string> linkInputs;
  /// Cortex-M only: the firmware laid out for a part (verify-run).
  std::optional<PartImage> partImage;
};

/// What a run cost, for logs and benchmarks.
struct BundleRunStats {
  double buildSeconds = 0; ///< Driver/firmware compile + link.
  double runSeconds = 0;   ///< Native run, or QEMU from start to exit.
  std::string runDir;      ///< Where the driver, image and outputs are.
  std::string layout;      ///< Cortex-M: where each region was placed.
  std::string output;      ///< The program's stdout+stderr.
};

/// The spec for a bundle written to `bundleDir` from `plan`: region sizes and
/// every placeholder at its planned offset.
BundleRunSpec makeRunSpec(const MemoryPlan &plan, const std::string &bundleDir,
                          const std::string &networkName, const std::string &target);

/// Links and runs the bundle; returns one tensor per output placeholder,
/// keyed by name. `inputs` must hold exactly the input placeholders.
std::map<std::string, Tensor> runBundle(const BundleRunSpec &spec,
                                        const std::map<std::string, Tensor> &inputs,
                                        const std::string &workDir,
                                        BundleRunStats *stats = nullptr);

//===----------------------------------------------------------------------===//
// Toolchain helpers (also used by tests and `bundlefit run`).
//===----------------------------------------------------------------------===//

/// Absolute path of executable `name` on PATH ("" if none). A name with a
/// '/' is returned as is if it is an executable file, else "".
std::string findTool(const std::string &name);

/// A Cortex-M target as run under QEMU: board, core, gcc flags, memories.
struct CortexMBoard {
  std::string target;              ///< "cortex-m7"
  std::string machine;             ///< QEMU -machine: "mps2-an500"
  std::string cpu;                 ///< QEMU -cpu: "cortex-m7"
  std::vector<std::string> cflags; ///< -mcpu/-mthumb/-mfloat-abi/-mfpu
  struct Memory {
    const char *name;
    uint64_t base, size;
  };
  Memory code;  ///< Vector table, code, read-only data, weights (as Flash).
  Memory ram;   ///< .data/.bss, stack, mutable + activations.
  Memory extra; ///< Large PSRAM used when the above overflow.
};

/// The board for `target`, or nullptr for host / unknown targets.
const CortexMBoard *findCortexMBoard(const std::string &target);
/// The targets runBundle accepts: "host", "cortex-m7", "cortex-m33", "cortex-m4", "cortex-m55".
std::vector<std::string> supportedRunTargets();

/// Resolved tool paths; each throws Error(ToolMissing, "... install the
/// Debian package X") when the tool cannot be found.
std::string requireHostCC(const ToolOverrides &tools = {});
std::string requireArmGcc(const ToolOverrides &tools = {});
std::string requireQemuArm(const ToolOverrides &tools = {});
/// Checks newlib (libc.a and libm.a) exists for the board's multilib; writes
/// its log into `scratchDir`.
void requireNewlib(const std::string &armGcc, const CortexMBoard &board,
                   const std::string &scratchDir);

/// Result of a child process run with a time limit.
struct ProcessResult {
  int exitCode = -1;  ///< Exit status when it exited normally.
  int termSignal = 0; ///< Signal that ended it (0 if it exited).
  bool timedOut = false;
  bool startFailed = false; ///< chdir or exec failed (reported as exit code 127).
  double seconds = 0;
  std::string output; ///< stdout and stderr, interleaved.
  bool ok() const { return !timedOut && termSignal == 0 && exitCode == 0; }
};

/// Runs argv[0] (PATH searched) in `cwd` with stdin from /dev/null, stdout
/// and stderr into `logPath`; kills its process group after `timeoutSeconds`.
/// A `cwd` other than "." is also the tools' TMPDIR.
ProcessResult runProcess(const std::vector<std::string> &argv, const std::string &cwd,
                         double timeoutSeconds, const std::string &logPath);

/// The last `lines` lines of `text` (for error messages).
std::string lastLines(const std::string &text, int lines);

} // namespace bundlefit
