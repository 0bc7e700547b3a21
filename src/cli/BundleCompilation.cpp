#include "BundleCompilation.h"
#include "Progress.h"

#include "bundlefit/reports/GraphDot.h"
#include "bundlefit/reports/MemoryReport.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Names.h"

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
  command.add_option("--time-limit", request.exactTimeBudgetSeconds,
                     "Seconds the exact allocator may search (default 5)")
      ->check(CLI::NonNegativeNumber);
}

CompiledBundle compileBundle(const CompileRequest &request) {
  CompiledBundle bundle;
  // Resolve the target first: a bad option should fail before any work.
  bundle.target = resolveTarget(request.target, request.triple, request.mcpu, request.floatAbi,
                                request.relocationModel);
  bundle.target.optLevel = parseOptLevel(request.optLevel);
  bundle.networkName = request.networkName.empty() ? networkNameFromPath(request.model.path)
                                                   : legalizeName(request.networkName);
  bundle.graph = loadModel(request.model);
  quantizeLoadedModel(*bundle.graph, request.model.path, request.quant);

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
  report["target"] = {{"triple", bundle.target.triple},
                      {"cpu", bundle.target.cpu},
                      {"float_abi", bundle.target.floatAbi == FloatAbi::Hard ? "hard" : "soft"},
                      {"opt", optLevelName(bundle.target.optLevel)}};
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
