//===- CompileBundle.cpp - Model file in, bundle directory out -------------===//
#include "bundlefit/driver/CompileBundle.h"
#include "bundlefit/driver/FitCheck.h"
#include "bundlefit/driver/PartLink.h"
#include "bundlefit/driver/Progress.h"
#include "bundlefit/driver/ToolInfo.h"

#include "bundlefit/ops/Cmsis.h"
#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/quant/CmsisLayout.h"
#include "bundlefit/reports/GraphDot.h"
#include "bundlefit/reports/JsonText.h"
#include "bundlefit/reports/MemoryReport.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/MemoryBudget.h"
#include "bundlefit/support/Names.h"
#include "bundlefit/support/OutputFile.h"

#include <filesystem>

namespace bundlefit {

namespace {

void quantizeForBuild(Graph &graph, const CompileRequest &request) {
  if (request.quant.enabled())
    quantizeLoadedModel(graph, request.model, request.quant);
  else if (request.syntheticProfile)
    quantizeWithSyntheticProfile(graph, request.model, request.quant);
  else
    checkInt8IoBuild(request.model, false);
}

/// The part a placed build is for, and the variant it is (fit's names).
struct PlacedPart {
  device::DeviceDatabase db; ///< When the request names the part by id.
  const device::Device *device = nullptr;
  device::Variant variant;
};

/// --device: the part's core unless a target is given, the arena planned for
/// the part's RAM rooms as `fit` plans it.
std::unique_ptr<PlacedPart> resolvePart(CompileRequest &request) {
  if (!request.placement)
    return nullptr;
  auto part = std::make_unique<PlacedPart>();
  const driver::PartPlacement &placement = *request.placement;
  part->device = placement.resolved;
  if (!part->device) {
    part->db = driver::loadDeviceDatabase(placement.deviceFiles);
    part->device = &part->db.get(placement.device);
  }
  const bool int8 = request.quant.enabled() || request.syntheticProfile;
  part->variant = device::parseVariant(!int8 ? "float" : request.useCmsis ? "int8-cmsis" : "int8");
  if (request.quant.int16x8)
    part->variant = device::asInt16x8(part->variant);
  if (request.target == "host" && request.triple.empty() && request.mcpu.empty()) {
    PartToolchain toolchain = driver::partToolchain(*part->device);
    request.target = toolchain.codegenTarget;
    if (request.floatAbi.empty())
      request.floatAbi = toolchain.floatAbi;
  }
  if (request.activationRooms.empty() && request.activationCapacity == 0)
    request.activationRooms = device::arenaRooms(*part->device, part->variant, placement.request);
  return part;
}

/// What the header checks of the CMSIS-NN API the plan's nodes call: their
/// definitions' prototypes and further checks (ops/Cmsis.h).
CmsisNnChecks cmsisChecks(const MemoryPlan &plan) {
  CmsisNnChecks checks;
  for (const Node *node : plan.schedule)
    if (node->attrs.has(kCmsisAttribute)) {
      checks.prototypes[node->attrs.getString(kCmsisAttribute, "")] = cmsisPrototypeFor(*node);
      if (std::string check = cmsisApiChecksFor(*node); !check.empty())
        checks.apiChecks.insert(std::move(check));
    }
  return checks;
}

} // namespace

CompiledBundle buildBundle(const CompileRequest &original) {
  CompileRequest request = original;
  const std::unique_ptr<PlacedPart> part = resolvePart(request);
  CompiledBundle bundle;
  // Resolve the target first: a bad option should fail before any work.
  bundle.target = resolveTarget(request.target, request.triple, request.mcpu, request.floatAbi,
                                request.relocationModel);
  bundle.target.optLevel = parseOptLevel(request.optLevel);
  bundle.networkName = request.networkName.empty() ? networkNameFromPath(request.model.path)
                                                   : legalizeName(request.networkName);
  if (request.useCmsis && !request.quant.enabled() && !request.syntheticProfile &&
      !modelIsPreQuantized(request.model.path))
    throw Error(ExitCode::Usage, "--use-cmsis: CMSIS-NN kernels are int8; add --load-profile");
  if (!request.cmsisNnDir.empty() && !std::filesystem::is_directory(request.cmsisNnDir))
    throw Error(ExitCode::Usage, "--cmsis-nn-dir " + request.cmsisNnDir + ": not a directory");
  bundle.graph = loadModel(request.model);
  quantizeForBuild(*bundle.graph, request);
  CmsisPreparation cmsis;
  const CmsisExtension extension = cmsisExtensionForCpu(bundle.target.cpu);
  if (request.useCmsis) {
    // The interpreter needs the graph in ONNX layouts (run --compare).
    {
      // The same status lines (the importer's, the quantizer's) once are
      // enough. A scope, not setVerbosity: a level read inside another
      // QuietScope (a variant sized by fit) and set back would leave the
      // whole process quiet.
      QuietScope quiet;
      bundle.referenceGraph = loadModel(request.model);
      quantizeForBuild(*bundle.referenceGraph, request);
    }
    // CMSIS-NN as built by default rounds twice (no CMSIS_NN_USE_SINGLE_ROUNDING):
    // the nodes left to bundlefit's kernels, and the interpreter, do the same.
    for (Graph *graph : {bundle.graph.get(), bundle.referenceGraph.get()})
      setInt8SingleRounding(*graph, false);
    cmsis = prepareCmsisGraph(*bundle.graph, extension);
    status("CMSIS-NN (" + std::string(cmsisExtensionName(extension)) +
           " build): " + std::to_string(cmsis.cmsisNodes) + " calls, " +
           std::to_string(cmsis.layoutNodes) + " layout copies");
    if (request.quant.enabled() &&
        resolveQuantOptions(request.quant).biasPrecision == BiasPrecision::Int8)
      status("note: --quantization-precision-bias Int8 with --use-cmsis: biases keep int8 "
             "values, stored widened to int32 for CMSIS-NN's s8 kernels (4 bytes per channel)");
    if (verbosity() == Verbosity::Verbose)
      for (const std::string &line : cmsis.portable)
        status("  portable: " + line);
  }
  applyMemoryOptPasses(*bundle.graph, request.model);

  PlanOptions planOptions = planOptionsFor(request.model, request.exactTimeBudgetSeconds);
  planOptions.activationCapacity = request.activationCapacity;
  planOptions.activationRooms = request.activationRooms;
  {
    Stage stage("plan memory");
    bundle.plan = planGraphMemory(*bundle.graph, planOptions);
  }
  if (part) {
    driver::placeBundleWeights(bundle.plan, *part->device, part->variant,
                               request.placement->request, request.placement->refuseOverflow);
    status("weights placed for " + part->device->id + ": " +
           driver::describeWeightSegments(bundle.plan));
  }
  bundle.useCmsis = request.useCmsis;
  bundle.cmsisExtension = extension;
  bundle.cmsisLayoutNodes = cmsis.layoutNodes;
  bundle.cmsisPortable = cmsis.portable;
  if (request.generateCode)
    generateBundleCode(bundle, request);
  return bundle;
}

void generateBundleCode(CompiledBundle &bundle, const CompileRequest &request) {
  BundleApi api = request.bundleApi == "dynamic" ? BundleApi::Dynamic : BundleApi::Static;
  try {
    Stage stage("generate code");
    bundle.code = generateBundleObject(*bundle.graph, bundle.plan, bundle.networkName,
                                       bundle.target, api == BundleApi::Dynamic,
                                       [&](size_t layer, size_t layers, const std::string &node) {
                                         stage.layer(layer, layers, node);
                                       });
  } catch (const Error &e) {
    // What the model asks of the target (a bundle past a 32-bit address
    // space, an operator without a kernel) is an error in that file.
    throw Error(e.code(), request.model.path + ": " + e.what());
  }
  status("compiled " + bundle.networkName + " for " + describeTarget(bundle.target) + " in " +
         std::to_string(bundle.code.compileSeconds).substr(0, 5) + " s");
  if (verbosity() == Verbosity::Verbose && bundle.code.fusedTables)
    status("  " + std::to_string(bundle.code.fusedTables) +
           " int8 activation table(s) applied in their convs' stores");
}

CompiledBundle compileBundle(const CompileRequest &request) {
  checkDirectoryCreatable(request.outputDir, "bundle directory");
  if (!request.dumpGraphDag.empty()) // before the compile, not after it
    checkOutputFile(request.dumpGraphDag, "--dump-graph-DAG");
  CompiledBundle bundle = buildBundle(request);
  writeBundle(request, bundle);
  return bundle;
}

nlohmann::json bundleMemoryReport(const CompileRequest &request, const CompiledBundle &bundle) {
  nlohmann::json report = memoryReportJson(*bundle.graph, bundle.plan, bundle.networkName);
  report["code_size"] = {{"text", bundle.code.textBytes},
                         {"rodata", bundle.code.rodataBytes},
                         {"data", bundle.code.dataBytes}};
  if (bundle.useCmsis) {
    nlohmann::json calls = nlohmann::json::array();
    for (const Node *node : bundle.graph->nodes())
      if (node->attrs.has(kCmsisAttribute))
        calls.push_back({{"node", node->name},
                         {"function", node->attrs.getString(kCmsisAttribute, "")},
                         {"scratch", node->attrs.getInt(kCmsisScratchAttribute, 0)}});
    report["cmsis_nn"] = {{"extension", cmsisExtensionName(bundle.cmsisExtension)},
                          {"calls", calls},
                          {"layout_copies", bundle.cmsisLayoutNodes},
                          {"portable", bundle.cmsisPortable}};
  }
  report["target"] = {{"triple", bundle.target.triple},
                      {"cpu", bundle.target.cpu},
                      {"float_abi", bundle.target.floatAbi == FloatAbi::Hard ? "hard" : "soft"},
                      {"opt", optLevelName(bundle.target.optLevel)}};
  stampReport(report, request.model.path);
  const std::string &net = bundle.networkName;
  if (!bundle.plan.weightSegments.empty()) {
    nlohmann::json segments = nlohmann::json::array();
    for (const WeightSegment &segment : bundle.plan.weightSegments)
      segments.push_back({{"region", segment.region},
                          {"offset", segment.offset},
                          {"size", segment.size},
                          {"copied_to_ram", segment.copiedToRam},
                          {"tensors", segment.constants.size()},
                          {"file", net + ".weights." + regionIdentifier(segment.region) + ".bin"}});
    report["weights_placement"] = {
        {"source", bundle.plan.weightPlacementSource},
        {"image_region", bundle.plan.weightImageRegion},
        {"segments", segments},
        {"entry", bundle.plan.weightSegments.size() > 1 ? net + "_placed" : net}};
  }
  return report;
}

void writeBundle(const CompileRequest &request, const CompiledBundle &bundle) {
  const BundleApi api = request.bundleApi == "dynamic" ? BundleApi::Dynamic : BundleApi::Static;
  const std::string &net = bundle.networkName;
  // weights.bin, then weights.txt at 6 characters a byte (and the object).
  checkMemoryBudget(bundle.plan.constantSize * 8, request.model.path + ": its bundle's weights");
  std::vector<uint8_t> weights = packWeights(bundle.plan);
  nlohmann::json report = bundleMemoryReport(request, bundle);
  std::vector<BundleFile> files = {
      {net + ".o", std::string(bundle.code.object.begin(), bundle.code.object.end())},
      {net + ".h", renderBundleHeader(bundle.plan, net, api, cmsisChecks(bundle.plan))},
      {net + ".weights.bin", std::string(weights.begin(), weights.end())},
      {net + ".weights.txt", renderWeightsText(weights)},
      {net + ".memory.json", jsonText(report, 2) + "\n"}};
  for (BundleFile &file : renderPlacementFiles(bundle.plan, net, weights))
    files.push_back(std::move(file));
  writeBundleDirectory(request.outputDir, files);
  if (!request.dumpGraphDag.empty())
    writeFileAtomically(request.dumpGraphDag, renderGraphDot(*bundle.graph, &bundle.plan));
}

} // namespace bundlefit
