#include "BundleCompilation.h"
#include "Progress.h"
#include "ToolInfo.h"

#include "bundlefit/quant/CmsisLayout.h"
#include "bundlefit/reports/GraphDot.h"
#include "bundlefit/reports/MemoryReport.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Names.h"

#include <filesystem>
#include <unistd.h>

namespace bundlefit {

void addCompileOptions(CLI::App &command, CompileRequest &request) {
  command.add_option("--network-name", request.networkName,
                     "Bundle name: file prefix, entry point, macro prefix (default: model file name)");
  command.add_option("--bundle-api", request.bundleApi, "static | dynamic (default static)")
      ->check(CLI::IsMember({"static", "dynamic"}));
  command.add_option("--target", request.target,
                     "host, x86_64, cortex-a53, cortex-a72, cortex-m0plus, cortex-m4, cortex-m7, "
                     "cortex-m33 (default host)");
  command.add_option("--triple", request.triple, "LLVM target triple (overrides --target)");
  command.add_option("--mcpu", request.mcpu, "LLVM CPU name (overrides --target)");
  command.add_option("--float-abi", request.floatAbi, "hard | soft")
      ->check(CLI::IsMember({"hard", "soft"}));
  command.add_option("--relocation-model", request.relocationModel, "static | pic")
      ->check(CLI::IsMember({"static", "pic"}));
  command.add_option("--opt", request.optLevel, "O2 (speed) | O3 (specialise every kernel call) | Os (size first)")
      ->check(CLI::IsMember({"O2", "O3", "Os"}));
  command.add_option("--dump-graph-DAG", request.dumpGraphDag,
                     "Write the compiled graph (shapes, buffer offsets) as Graphviz to FILE");
  command.add_flag("--use-cmsis", request.useCmsis,
                   "int8: conv, depthwise, fully connected, pooling and softmax call CMSIS-NN "
                   "(NHWC, scratch sized for the core; link CMSIS-NN from your SDK)");
  command.add_option("--cmsis-nn-dir", request.cmsisNnDir,
                     "CMSIS-NN source or install directory (checked; used by the CMake package)");
  command.add_option("--time-limit", request.exactTimeBudgetSeconds,
                     "Seconds the exact allocator may search (default 5)")
      ->check(CLI::NonNegativeNumber);
}

namespace {

/// The bundle directory can be created or written: checked before the model
/// is compiled, so a typo in -o fails in a second, not after the compile.
void checkOutputDirectory(const std::string &dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error(ExitCode::CannotWrite, dir + ": exists and is not a directory (bundle output)");
  fs::path existing = fs::absolute(dir, ec);
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.parent_path())
    existing = existing.parent_path();
  if (!fs::is_directory(existing, ec) || ::access(existing.c_str(), W_OK | X_OK) != 0)
    throw Error(ExitCode::CannotWrite,
                dir + ": cannot create the bundle directory (" + existing.string() +
                    " is not writable)");
}

} // namespace

CompiledBundle compileBundle(const CompileRequest &request) {
  CompiledBundle bundle;
  // Resolve the target first: a bad option should fail before any work.
  bundle.target = resolveTarget(request.target, request.triple, request.mcpu, request.floatAbi,
                                request.relocationModel);
  bundle.target.optLevel = parseOptLevel(request.optLevel);
  bundle.networkName = request.networkName.empty() ? networkNameFromPath(request.model.path)
                                                   : legalizeName(request.networkName);
  if (request.useCmsis && !request.quant.enabled())
    throw Error(ExitCode::Usage, "--use-cmsis: CMSIS-NN kernels are int8; add --load-profile");
  if (!request.cmsisNnDir.empty() && !std::filesystem::is_directory(request.cmsisNnDir))
    throw Error(ExitCode::Usage, "--cmsis-nn-dir " + request.cmsisNnDir + ": not a directory");
  checkOutputDirectory(request.outputDir);
  bundle.graph = loadModel(request.model);
  quantizeLoadedModel(*bundle.graph, request.model.path, request.quant);
  CmsisPreparation cmsis;
  const CmsisExtension extension = cmsisExtensionForCpu(bundle.target.cpu);
  if (request.useCmsis) {
    // The interpreter needs the graph in ONNX layouts (run --compare).
    bundle.referenceGraph = loadModel(request.model);
    const Verbosity level = verbosity();
    setVerbosity(Verbosity::Quiet); // the same status line once is enough
    quantizeLoadedModel(*bundle.referenceGraph, request.model.path, request.quant);
    setVerbosity(level);
    cmsis = prepareCmsisGraph(*bundle.graph, extension);
    status("CMSIS-NN (" + std::string(cmsisExtensionName(extension)) + " build): " +
           std::to_string(cmsis.cmsisNodes) + " calls, " + std::to_string(cmsis.layoutNodes) +
           " layout copies");
    if (resolveQuantOptions(request.quant).biasPrecision == BiasPrecision::Int8)
      status("note: --quantization-precision-bias Int8 with --use-cmsis: biases keep int8 "
             "values, stored widened to int32 for CMSIS-NN's s8 kernels (4 bytes per channel)");
    if (verbosity() == Verbosity::Verbose)
      for (const std::string &line : cmsis.portable)
        status("  portable: " + line);
  }
  applyMemoryOptPasses(*bundle.graph, request.model);

  PlanOptions planOptions;
  planOptions.exactTimeBudgetSeconds = request.exactTimeBudgetSeconds;
  planOptions.memoryOpt = request.model.memoryOpt;
  {
    Stage stage("plan memory");
    bundle.plan = planGraphMemory(*bundle.graph, planOptions);
  }
  BundleApi api = request.bundleApi == "dynamic" ? BundleApi::Dynamic : BundleApi::Static;
  {
    Stage stage("generate code");
    bundle.code = generateBundleObject(*bundle.graph, bundle.plan, bundle.networkName,
                                       bundle.target, api == BundleApi::Dynamic);
  }
  status("compiled " + bundle.networkName + " for " + describeTarget(bundle.target) + " in " +
         std::to_string(bundle.code.compileSeconds).substr(0, 5) + " s");

  const std::string &net = bundle.networkName;
  std::vector<uint8_t> weights = packWeights(bundle.plan);
  nlohmann::json report = memoryReportJson(*bundle.graph, bundle.plan, net);
  report["code_size"] = {{"text", bundle.code.textBytes},
                         {"rodata", bundle.code.rodataBytes},
                         {"data", bundle.code.dataBytes}};
  if (request.useCmsis) {
    nlohmann::json calls = nlohmann::json::array();
    for (const Node *node : bundle.graph->nodes())
      if (node->attrs.has(kCmsisAttribute))
        calls.push_back({{"node", node->name},
                         {"function", node->attrs.getString(kCmsisAttribute, "")},
                         {"scratch", node->attrs.getInt(kCmsisScratchAttribute, 0)}});
    report["cmsis_nn"] = {{"extension", cmsisExtensionName(extension)},
                          {"calls", calls},
                          {"layout_copies", cmsis.layoutNodes},
                          {"portable", cmsis.portable}};
  }
  report["target"] = {{"triple", bundle.target.triple},
                      {"cpu", bundle.target.cpu},
                      {"float_abi", bundle.target.floatAbi == FloatAbi::Hard ? "hard" : "soft"},
                      {"opt", optLevelName(bundle.target.optLevel)}};
  stampReport(report, request.model.path);
  writeBundleDirectory(
      request.outputDir,
      {{net + ".o", std::string(bundle.code.object.begin(), bundle.code.object.end())},
       {net + ".h", renderBundleHeader(bundle.plan, net, api)},
       {net + ".weights.bin", std::string(weights.begin(), weights.end())},
       {net + ".weights.txt", renderWeightsText(weights)},
       {net + ".memory.json", report.dump(2) + "\n"}});
  if (!request.dumpGraphDag.empty())
    writeFileAtomically(request.dumpGraphDag, renderGraphDot(*bundle.graph, &bundle.plan));
  return bundle;
}

} // namespace bundlefit
