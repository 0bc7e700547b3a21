//===- ModelOptions.cpp - The options every model-reading command takes ----===//
#include "Command.h"
#include "OptionChecks.h"

#include "bundlefit/support/InputFile.h"

namespace bundlefit {

void addModelOptions(CLI::App &command, ModelOptions &options) {
  // Noted as an input as it is parsed: an output path naming it (`plan
  // m.onnx --json m.onnx`) then fails before any work (OutputFile.h).
  command.add_option("model", options.path, "ONNX or TFLite (.tflite) model file")
      ->required()
      ->each(noteInputFile);
  command.add_option("--define-symbol", options.defineSymbols,
                     "Value of a symbolic dimension: name=value (repeatable)");
  command.add_option(
      "--model-input", options.modelInputs,
      "Override an input's type and shape: name,type,[d0,d1,...], or an int8 input of an "
      "int8 build: name,int8q,scale,offset[,[d0,...]] (repeatable)");
  command
      .add_option("--memory-opt", options.memoryOpt,
                  "Go below the layer-by-layer memory bound: 0 off (Glow's layout), 1 fuse "
                  "Conv+pool, run depthwise and 1x1 convs in place and overlap pools with "
                  "their input, 2 also run the high-resolution prefix in spatial tiles "
                  "(default " +
                      std::to_string(kDefaultMemoryOpt) + ")")
      ->check(CLI::Range(0, kMaxMemoryOpt));
  command
      .add_option("--patch-recompute-budget", options.patchRecomputeBudget,
                  "--memory-opt 2: extra MACs the recomputed halos of the tile grids that set "
                  "the peak may cost, as a fraction of the model's MACs (default 0.2); with the "
                  "peak final, a stage passes it only for a grid of no higher peak estimated "
                  "under 0.8x the time of its grid within it (plan -v)")
      ->check(finiteCheck(0, 100));
  command.add_flag("--keep-model-order", options.keepModelOrder,
                   "Run nodes in the model's order instead of a memory-aware order (plan, "
                   "compile, run, fit, pick)");
  command
      .add_option("--buffer-alignment", options.bufferAlignment,
                  "Align each activation buffer in the arena to N bytes, a power of two from " +
                      std::to_string(MemoryPlan::kMinBufferAlignment) + " to " +
                      std::to_string(MemoryPlan::kMaxBufferAlignment) +
                      " (default 64 for ONNX, Glow's layout; 16 for .tflite, TFLite Micro's); "
                      "the arena's base, the weights and the inputs/outputs stay 64-aligned")
      ->check(powerOfTwoCheck(MemoryPlan::kMinBufferAlignment, MemoryPlan::kMaxBufferAlignment));
  command.add_flag("--int8-io,--keep-int8-io", options.keepInt8Io,
                   "int8 builds: int8 inputs and outputs, no Quantize/Dequantize at the boundary; "
                   "scales and zero points from the pre-quantized model or the profile's ranges "
                   "(in the header and memory.json)");
}

} // namespace bundlefit
