//===- Compilation.cpp - One model's compilation ---------------------------===//
#include "bundlefit/driver/Compilation.h"

#include "bundlefit/ir/Graph.h"
#include "bundlefit/support/OutputFile.h"

namespace bundlefit::driver {

Compilation::Compilation(CompilationOptions options) : options_(std::move(options)) {
  markPreQuantized(options_.model.path, options_.quant);
}

namespace {

CompilationOptions modelOnly(const ModelOptions &model, const QuantCliOptions &quant) {
  CompilationOptions options;
  options.model = model;
  options.quant = quant;
  return options;
}

} // namespace

Compilation::Compilation(const ModelOptions &model, const QuantCliOptions &quant)
    : Compilation(modelOnly(model, quant)) {}

PlanOptions Compilation::planOptions() const {
  PlanOptions plan = planOptionsFor(options_.model, options_.timeLimitSeconds);
  plan.activationCapacity = options_.arenaCapacity;
  plan.allowInPlace = options_.allowInPlace;
  return plan;
}

std::unique_ptr<Graph> Compilation::loadGraph() const { return loadModel(options_.model); }

std::unique_ptr<Graph> Compilation::loadQuantizedGraph() const {
  std::unique_ptr<Graph> graph = loadGraph();
  quantizeLoadedModel(*graph, options_.model, options_.quant);
  return graph;
}

std::unique_ptr<Graph> Compilation::loadTransformedGraph() const {
  std::unique_ptr<Graph> graph = loadGraph();
  applyMemoryOptPasses(*graph, options_.model);
  return graph;
}

const PlannedModel &Compilation::plan() {
  if (!planned_)
    planned_ = planModel(options_.model, options_.quant, planOptions());
  return *planned_;
}

CompileRequest Compilation::compileRequest(const std::string &outputDir) const {
  const CodegenOptions &codegen = options_.codegen;
  CompileRequest request;
  request.model = options_.model;
  request.quant = options_.quant;
  request.outputDir = outputDir;
  request.networkName = codegen.networkName;
  request.bundleApi = codegen.bundleApi;
  request.target = codegen.target;
  request.triple = codegen.triple;
  request.mcpu = codegen.mcpu;
  request.floatAbi = codegen.floatAbi;
  request.relocationModel = codegen.relocationModel;
  request.optLevel = codegen.optLevel;
  request.useCmsis = codegen.useCmsis;
  request.cmsisNnDir = codegen.cmsisNnDir;
  request.dumpGraphDag = codegen.dumpGraphDag;
  request.exactTimeBudgetSeconds = options_.timeLimitSeconds;
  request.activationCapacity = options_.arenaCapacity;
  request.placement = options_.placement;
  return request;
}

const CompiledBundle &Compilation::bundle() {
  if (!bundle_)
    bundle_ = buildBundle(compileRequest(""));
  return *bundle_;
}

const CompiledBundle &Compilation::writeBundle(const std::string &dir) {
  const CompileRequest request = compileRequest(dir);
  if (!bundle_) {
    bundle_ = compileBundle(request); // checks the outputs before the compile
    return *bundle_;
  }
  checkDirectoryCreatable(dir, "bundle directory");
  if (!request.dumpGraphDag.empty())
    checkOutputFile(request.dumpGraphDag, "--dump-graph-DAG");
  bundlefit::writeBundle(request, *bundle_);
  return *bundle_;
}

ProfileData Compilation::profile(const SampleLoader &load, const std::string &outputPath,
                                 const SampleDone &onSample) const {
  std::unique_ptr<Graph> graph = loadGraph();
  std::vector<Tensor> samples = load(*graph);
  ProfileData profile = recordProfile(*graph, samples, options_.model.path, onSample);
  if (!outputPath.empty())
    writeFileAtomically(outputPath, renderProfile(profile));
  return profile;
}

QuantComparison Compilation::compareQuant(const SampleLoader &load,
                                          const SampleDone &onSample) const {
  std::unique_ptr<Graph> floatGraph = loadGraph();
  std::unique_ptr<Graph> int8Graph = loadQuantizedGraph();
  std::vector<Tensor> samples = load(*floatGraph);
  return compareQuantized(*floatGraph, *int8Graph, samples, onSample);
}

nlohmann::json Compilation::memoryReport() {
  return bundleMemoryReport(compileRequest(""), bundle());
}

BuildOptions Compilation::buildOptions() const {
  BuildOptions build;
  build.model = options_.model;
  build.quant = options_.quant;
  build.optLevel = options_.codegen.optLevel;
  build.exactTimeBudgetSeconds = options_.timeLimitSeconds;
  // The cache is keyed by the model file; an afterImport edit is not in it.
  build.useCache = options_.useCodeCache && !options_.model.afterImport;
  return build;
}

std::unique_ptr<FitCheck> Compilation::fit(const FitQuery &query) const {
  return checkFit(buildOptions(), query);
}

std::unique_ptr<PickCheck> Compilation::pick(const PickQuery &query) const {
  return checkPick(buildOptions(), query);
}

ModelRun Compilation::run(const std::vector<RunInput> &inputs, const RunQuery &query) const {
  ModelRunOptions run;
  run.compile = compileRequest("");
  run.compile.cmsisNnDir.clear(); // linked by the run, not checked as compile's
  run.cmsisNnDir = options_.codegen.cmsisNnDir;
  run.compare = query.compare;
  run.timeoutSeconds = query.timeoutSeconds;
  run.inputOption = query.inputOption;
  return runModel(run, inputs);
}

} // namespace bundlefit::driver
