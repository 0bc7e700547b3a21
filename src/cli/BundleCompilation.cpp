//===- BundleCompilation.cpp - The compile options of the command line -----===//
#include "BundleCompilation.h"
#include "OptionChecks.h"

namespace bundlefit {

void addCompileOptions(CLI::App &command, driver::CompilationOptions &options) {
  driver::CodegenOptions &codegen = options.codegen;
  command.add_option(
      "--network-name", codegen.networkName,
      "Bundle name: file prefix, entry point, macro prefix (default: model file name)");
  command.add_option("--bundle-api", codegen.bundleApi, "static | dynamic (default static)")
      ->check(CLI::IsMember({"static", "dynamic"}));
  command.add_option("--target", codegen.target,
                     "host, x86_64, cortex-a53, cortex-a72, cortex-m0plus, cortex-m4, cortex-m7, "
                     "cortex-m33 (default host)");
  command.add_option("--triple", codegen.triple, "LLVM target triple (overrides --target)");
  command.add_option("--mcpu", codegen.mcpu, "LLVM CPU name (overrides --target)");
  command.add_option("--float-abi", codegen.floatAbi, "hard | soft")
      ->check(CLI::IsMember({"hard", "soft"}));
  command.add_option("--relocation-model", codegen.relocationModel, "static | pic")
      ->check(CLI::IsMember({"static", "pic"}));
  command
      .add_option("--opt", codegen.optLevel,
                  "O2 (speed) | O3 (specialise every kernel call) | Os (size first)")
      ->check(CLI::IsMember({"O2", "O3", "Os"}));
  command.add_option("--dump-graph-DAG", codegen.dumpGraphDag,
                     "Write the compiled graph (shapes, buffer offsets) as Graphviz to FILE");
  command.add_flag("--use-cmsis", codegen.useCmsis,
                   "int8: conv, depthwise, fully connected, pooling and softmax call CMSIS-NN "
                   "(NHWC, scratch sized for the core; link CMSIS-NN from your SDK)");
  command.add_option("--cmsis-nn-dir", codegen.cmsisNnDir,
                     "CMSIS-NN source or install directory (checked; used by the CMake package)");
  command
      .add_option("--time-limit", options.timeLimitSeconds,
                  "Seconds the exact allocator may search (default 5)")
      ->check(secondsCheck());
  command
      .add_option("--arena-capacity", options.arenaCapacity,
                  "Bytes the activation arena must fit in (e.g. a part's DTCM): the allocator "
                  "looks for a plan within it first, then goes lower with the time left")
      ->check(byteCountCheck());
}

} // namespace bundlefit
