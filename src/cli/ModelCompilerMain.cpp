//===- ModelCompilerMain.cpp - Glow's model-compiler, command for command ---===//
//
// Existing NXP/Glow scripts call `model-compiler -model=m.onnx -emit-bundle=out
// -backend=CPU -target=arm -mcpu=cortex-m7 -float-abi=hard ...`. This front end
// accepts those single-dash spellings and runs bundlefit's compile pipeline.
// tests/glow_compat/glow_command_lines.txt holds every command line of Glow's
// AOT document and of NXP's AN13001; a test runs each of them unchanged.
//
//===----------------------------------------------------------------------===//
#include "BundleCompilation.h"
#include "GlowFrontEnd.h"
#include "GlowTarget.h"
#include "OptionChecks.h"
#include "bundlefit/driver/ToolInfo.h"

#include "bundlefit/support/Error.h"
#include "bundlefit/support/OutputFile.h"

#include <filesystem>
#include <iostream>

using namespace bundlefit;

namespace {

/// Glow options that change nothing in bundlefit's output; accepted so
/// scripts keep working, each with one note saying why it is ignored.
struct IgnoredGlowOptions {
  std::string llvmCompiler;
  std::vector<std::string> llvmCompilerOpts;
  bool dumpLlvmAsm = false, bundleApiVerbose = false;
};

void noteIgnored(const IgnoredGlowOptions &ignored) {
  if (!ignored.llvmCompiler.empty())
    status("note: -llvm-compiler=" + ignored.llvmCompiler +
           " ignored: bundlefit compiles the bundle in-process with its own LLVM");
  if (!ignored.llvmCompilerOpts.empty())
    status("note: -llvm-compiler-opt ignored: bundlefit compiles the bundle in-process (use "
           "-opt=O2|O3|Os for the optimisation level)");
  if (ignored.dumpLlvmAsm)
    status("note: -dump-llvm-asm ignored: bundlefit emits the object directly (disassemble "
           "<net>.o with objdump -d; -dump-llvm-ir prints the IR)");
  if (ignored.bundleApiVerbose)
    status("note: -bundle-api-verbose ignored: the header always lists every placeholder's "
           "name, type, size and offset");
}

/// Glow reads Caffe2 models from a directory; bundlefit reads ONNX files.
void checkModelPath(const std::string &path) {
  if (std::filesystem::is_directory(path))
    throw Error(ExitCode::BadInputFile,
                "-model=" + path +
                    ": a directory (a Caffe2 model?); bundlefit compiles ONNX files (.onnx, or "
                    "any name holding an ONNX model)");
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"model-compiler (bundlefit " + bundlefitVersion() +
               "): Glow-compatible bundle compiler"};
  app.allow_windows_style_options(false);
  driver::CompilationOptions options;
  driver::CodegenOptions &codegen = options.codegen;
  std::string outputDir;
  // Glow's memory layout unless asked: a drop-in for existing scripts keeps
  // Glow's ACTIVATIONS and MACs (bundlefit compile defaults to the lowest).
  options.model.memoryOpt = 0;
  std::string backend = "CPU", glowTarget, mcpu, dumpProfile;
  std::vector<std::string> symbols;
  IgnoredGlowOptions ignored;
  bool quiet = false, verbose = false;
  app.set_version_flag("--version", "model-compiler (bundlefit) " + bundlefitVersion());
  app.add_option("--model", options.model.path, "ONNX or TFLite (.tflite) model file")->required();
  app.add_option("--emit-bundle", outputDir, "Bundle output directory")->required();
  app.add_option("--backend", backend, "Only CPU is supported");
  app.add_option("--target", glowTarget, "LLVM architecture: x86_64, aarch64, arm");
  app.add_option("--mcpu", mcpu,
                 "CPU: cortex-m0, cortex-m3, cortex-m4, cortex-m7, cortex-m33, cortex-m55, "
                 "cortex-a53, ...");
  app.add_option("--float-abi", codegen.floatAbi, "hard | soft");
  app.add_option("--relocation-model", codegen.relocationModel, "static | pic");
  app.add_option("--network-name", codegen.networkName, "Bundle name");
  app.add_option("--bundle-api", codegen.bundleApi, "static | dynamic");
  // bundlefit's spelling too: the importer's error names --define-symbol.
  app.add_option("--onnx-define-symbol,--define-symbol", symbols, "Symbolic dimension: name,value");
  app.add_option("--model-input", options.model.modelInputs, "name,type,[shape]");
  app.add_option("--dump-graph-DAG", codegen.dumpGraphDag, "Graphviz file of the final graph");
  app.add_option("--memory-opt", options.model.memoryOpt,
                 "bundlefit's --memory-opt (0 = Glow's layout, the default here; 1; 2)")
      ->check(CLI::Range(0, kMaxMemoryOpt));
  app.add_option("--buffer-alignment", options.model.bufferAlignment,
                 "bundlefit's --buffer-alignment: activation buffers aligned to N bytes, a power "
                 "of two from " +
                     std::to_string(MemoryPlan::kMinBufferAlignment) + " to " +
                     std::to_string(MemoryPlan::kMaxBufferAlignment) +
                     " (default 64 for ONNX, Glow's; 16 for .tflite, TFLite Micro's)")
      ->check(powerOfTwoCheck(MemoryPlan::kMinBufferAlignment, MemoryPlan::kMaxBufferAlignment));
  app.add_option("--opt", codegen.optLevel, "bundlefit's code optimisation: O2 | O3 | Os");
  app.add_option("--llvm-compiler", ignored.llvmCompiler,
                 "Glow: external LLVM compiler for the bundle (ignored: compiled in-process)");
  app.add_option("--llvm-compiler-opt", ignored.llvmCompilerOpts,
                 "Glow: options for -llvm-compiler (ignored)");
  bool dumpLlvmIr = false, timeReport = false;
  app.add_flag("--dump-llvm-ir", dumpLlvmIr, "Glow: print the bundle's optimised LLVM IR");
  app.add_flag("--dump-llvm-asm", ignored.dumpLlvmAsm, "Glow: print assembly (ignored, a note)");
  app.add_flag("--time-report", timeReport, "Glow: the time of each stage on stderr");
  app.add_flag("--bundle-api-verbose", ignored.bundleApiVerbose,
               "Glow: a verbose header (ignored: the header is always complete)");
  app.add_option("--dump-profile", dumpProfile,
                 "Glow: write a quantization profile (needs inputs: use model-profiler)");
  // Glow's int8 options, same meaning as bundlefit's (QuantOptions.h).
  app.add_option("--load-profile", options.quant.profilePath, "Quantization profile (int8)");
  app.add_option("--quantization-schema", options.quant.schema,
                 "asymmetric | symmetric | symmetric_with_uint8 | symmetric_with_power2_scale");
  app.add_option("--quantization-precision-bias", options.quant.biasPrecision, "Int32 | Int8");
  app.add_option("--keep-original-precision-for-nodes", options.quant.keepOriginal,
                 "Node kinds kept float (Glow's names), e.g. Add,Sub,Mul,Div,Exp,SoftMax")
      ->delimiter(',');
  app.add_flag("--enable-channelwise", options.quant.channelwise,
               "Per-channel weight scales for Convolution and FullyConnected");
  app.add_flag("--use-cmsis", codegen.useCmsis,
               "Call CMSIS-NN kernels (int8; ignored with a note for float models, as in Glow)");
  app.add_flag("-q,--quiet", quiet, "Print only errors");
  app.add_flag("-v,--verbose", verbose, "Print what each stage did");

  std::vector<std::string> args = glowArgumentsForCli11(argc, argv);
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::cerr << "model-compiler: error: " << e.what() << "\n";
    return int(ExitCode::Usage);
  }
  // -time-report: the stages' times are what -v prints (one line per stage).
  setVerbosity(quiet                   ? Verbosity::Quiet
               : verbose || timeReport ? Verbosity::Verbose
                                       : Verbosity::Normal);

  try {
    if (backend != "CPU")
      throw Error(ExitCode::Usage, "-backend=" + backend + ": only the CPU backend is supported");
    if (!dumpProfile.empty())
      throw Error(ExitCode::Usage,
                  "-dump-profile=" + dumpProfile +
                      ": profiling runs the model on inputs; use `model-profiler -model=" +
                      options.model.path + " -dump-profile=" + dumpProfile +
                      " -input-dataset=NAME,rawbin,dir,DIR` (or image-classifier IMAGES... "
                      "-dump-profile=...), then -load-profile=" +
                      dumpProfile);
    checkModelPath(options.model.path);
    for (const std::string &symbol : symbols)
      options.model.defineSymbols.push_back(symbol);
    GlowTargetChoice choice = glowTargetChoice(glowTarget, mcpu);
    codegen.target = choice.shorthand;
    codegen.triple = choice.triple;
    codegen.mcpu = choice.mcpu;
    if (choice.noFpu && codegen.floatAbi.empty())
      codegen.floatAbi = "soft";
    if (codegen.useCmsis && !options.quant.enabled() && !modelIsPreQuantized(options.model.path)) {
      // Glow: "-use-cmsis will only have an effect if the model is also
      // quantized" (AN13001 2.2.2); an int8 .tflite or QDQ model is.
      status("note: -use-cmsis ignored: the model is float (CMSIS-NN kernels are int8; add "
             "-load-profile=profile.yml to quantize)");
      codegen.useCmsis = false;
    }
    noteIgnored(ignored);
    OutputSet outputs; // the bundle and -dump-graph-DAG, together
    driver::Compilation compilation(std::move(options));
    const CompiledBundle &bundle = compilation.writeBundle(outputDir);
    outputs.commit();
    if (dumpLlvmIr)
      std::cout << generateBundleIR(*bundle.graph, bundle.plan, bundle.networkName, bundle.target);
    printMemoryOptNote();
    return 0;
  } catch (const Error &e) {
    std::cerr << "model-compiler: error: " << e.what() << "\n";
    return int(e.code());
  } catch (const std::exception &e) {
    std::cerr << "model-compiler: internal error: " << e.what() << "\n";
    return int(ExitCode::Internal);
  }
}
