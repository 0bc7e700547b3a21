//===- ModelCompilerMain.cpp - Glow's model-compiler, command for command ---===//
//
// Existing NXP/Glow scripts call `model-compiler -model=m.onnx -emit-bundle=out
// -backend=CPU -target=arm -mcpu=cortex-m7 -float-abi=hard ...`. This front end
// accepts those single-dash spellings and runs bundlefit's compile pipeline.
//
//===----------------------------------------------------------------------===//
#include "BundleCompilation.h"

#include "bundlefit/support/Error.h"

#include <iostream>

using namespace bundlefit;

namespace {

/// Glow options are single-dash long options ("-model=x"); CLI11 wants
/// "--model=x". Short options bundlefit adds itself are left alone.
std::vector<std::string> toDoubleDash(int argc, char **argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool singleDashLong = arg.size() > 2 && arg[0] == '-' && arg[1] != '-';
    args.push_back(singleDashLong && arg != "-h" ? "-" + arg : arg);
  }
  return args;
}

/// Glow's -target is an LLVM architecture; with -mcpu it names bundlefit's
/// target shorthand (cortex-m7, cortex-a53...).
std::string targetShorthand(const std::string &glowTarget, const std::string &mcpu) {
  if (!mcpu.empty())
    return mcpu;
  if (glowTarget.empty())
    return "host";
  return glowTarget;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"model-compiler (bundlefit): Glow-compatible bundle compiler"};
  app.allow_windows_style_options(false);
  CompileRequest request;
  // Glow's memory layout unless asked: a drop-in for existing scripts keeps
  // Glow's ACTIVATIONS and MACs (bundlefit compile defaults to the lowest).
  request.model.memoryOpt = 0;
  std::string backend = "CPU", glowTarget, mcpu;
  std::vector<std::string> symbols;
  app.add_option("--model", request.model.path, "ONNX model file")->required();
  app.add_option("--emit-bundle", request.outputDir, "Bundle output directory")->required();
  app.add_option("--backend", backend, "Only CPU is supported");
  app.add_option("--target", glowTarget, "LLVM architecture: x86_64, aarch64, arm");
  app.add_option("--mcpu", mcpu, "CPU: cortex-m0plus, cortex-m4, cortex-m7, cortex-m33, ...");
  app.add_option("--float-abi", request.floatAbi, "hard | soft");
  app.add_option("--relocation-model", request.relocationModel, "static | pic");
  app.add_option("--network-name", request.networkName, "Bundle name");
  app.add_option("--bundle-api", request.bundleApi, "static | dynamic");
  app.add_option("--onnx-define-symbol", symbols, "Symbolic dimension: name,value");
  app.add_option("--model-input", request.model.modelInputs, "name,type,[shape]");
  app.add_option("--dump-graph-DAG", request.dumpGraphDag, "Graphviz file of the final graph");
  app.add_option("--memory-opt", request.model.memoryOpt,
                 "bundlefit's --memory-opt (0 = Glow's layout, the default here; 1; 2)")
      ->check(CLI::Range(0, kMaxMemoryOpt));
  // Glow's int8 options, same meaning as bundlefit's (QuantOptions.h).
  app.add_option("--load-profile", request.quant.profilePath, "Quantization profile (int8)");
  app.add_option("--quantization-schema", request.quant.schema,
                 "asymmetric | symmetric | symmetric_with_uint8 | symmetric_with_power2_scale");
  app.add_option("--quantization-precision-bias", request.quant.biasPrecision, "Int32 | Int8");
  app.add_option("--keep-original-precision-for-nodes", request.quant.keepOriginal,
                 "Node kinds kept float, e.g. Add,SoftMax")
      ->delimiter(',');
  app.add_flag("--enable-channelwise", request.quant.channelwise,
               "Per-channel weight scales for Convolution and FullyConnected");
  app.add_flag("--use-cmsis", request.useCmsis, "Call CMSIS-NN kernels (int8; NXP's option)");

  std::vector<std::string> args = toDoubleDash(argc, argv);
  std::reverse(args.begin(), args.end()); // CLI11 parses a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::cerr << "model-compiler: error: " << e.what() << "\n";
    return int(ExitCode::Usage);
  }

  try {
    if (backend != "CPU")
      throw Error(ExitCode::Usage, "-backend=" + backend + ": only the CPU backend is supported");
    for (const std::string &symbol : symbols)
      request.model.defineSymbols.push_back(symbol);
    request.target = targetShorthand(glowTarget, mcpu);
    compileBundle(request);
    return 0;
  } catch (const Error &e) {
    std::cerr << "model-compiler: error: " << e.what() << "\n";
    return int(e.code());
  } catch (const std::exception &e) {
    std::cerr << "model-compiler: internal error: " << e.what() << "\n";
    return int(ExitCode::Internal);
  }
}
