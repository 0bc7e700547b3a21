//===- ModelRun.cpp - Compile a bundle, run it on inputs, compare it -------===//
#include "bundlefit/driver/ModelRun.h"

#include "bundlefit/bundle/CmsisNnLibrary.h"
#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/interp/Npy.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/OutputFile.h"
#include "bundlefit/support/TemporaryDirectory.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace bundlefit::driver {

namespace {

/// --use-cmsis: the CMSIS-NN library for the target, built once and cached.
std::string cmsisNnLibraryFor(const ModelRunOptions &options) {
  std::string dir = options.cmsisNnDir;
  if (dir.empty())
    if (const char *env = std::getenv("BUNDLEFIT_CMSIS_NN_DIR"))
      dir = env;
  if (dir.empty())
    throw Error(ExitCode::Usage, "run --use-cmsis: give --cmsis-nn DIR (a CMSIS-NN source "
                                 "checkout or a directory holding libcmsis-nn.a) or set "
                                 "BUNDLEFIT_CMSIS_NN_DIR");
  if (options.compile.target == "host")
    throw Error(ExitCode::Usage, "run --use-cmsis runs on a Cortex-M target under QEMU "
                                 "(--target cortex-m4, cortex-m7, cortex-m33 or cortex-m55)");
  CmsisNnLibrary library =
      findOrBuildCmsisNn(dir, options.compile.target, defaultCmsisNnCacheDir());
  if (library.built)
    status("built CMSIS-NN for " + options.compile.target + ": " + library.library);
  return library.library;
}

/// How many samples of `expected` the tensor holds: 1 for the exact type, N
/// for the leading dimension N times the model's; 0 for neither.
uint64_t samplesIn(const TensorType &given, const TensorType &expected) {
  if (given.sameShapeAndType(expected))
    return 1;
  if (given.dtype != expected.dtype || given.rank() != expected.rank() || expected.rank() == 0 ||
      expected.shape[0] <= 0 || given.shape[0] % expected.shape[0] != 0 || given.shape[0] == 0)
    return 0;
  for (size_t d = 1; d < given.rank(); ++d)
    if (given.shape[d] != expected.shape[d])
      return 0;
  return uint64_t(given.shape[0] / expected.shape[0]);
}

std::string inputNames(const Graph &graph) {
  std::string names;
  for (const Value *input : graph.inputs())
    names += (names.empty() ? "" : ", ") + input->name;
  return names;
}

/// The given inputs in the model's order: by name when they are named, else
/// by position.
std::vector<const RunInput *> inModelOrder(const Graph &graph, const std::vector<RunInput> &given,
                                           const std::string &option) {
  const size_t named = size_t(std::count_if(given.begin(), given.end(),
                                            [](const RunInput &in) { return !in.name.empty(); }));
  std::vector<const RunInput *> ordered;
  if (named == 0) {
    if (given.size() != graph.inputs().size())
      throw Error(ExitCode::Usage, "the model has " + std::to_string(graph.inputs().size()) +
                                       " inputs, " + std::to_string(given.size()) + " given with " +
                                       option);
    for (const RunInput &input : given)
      ordered.push_back(&input);
    return ordered;
  }
  if (named != given.size())
    throw Error(ExitCode::Usage, option + ": name every input or none");
  std::set<std::string> modelInputs;
  for (const Value *input : graph.inputs()) {
    modelInputs.insert(input->name);
    auto found = std::find_if(given.begin(), given.end(),
                              [&](const RunInput &in) { return in.name == input->name; });
    if (found == given.end())
      throw Error(ExitCode::Usage, option + ": nothing given for the model's input '" +
                                       input->name + "' (its inputs: " + inputNames(graph) + ")");
    ordered.push_back(&*found);
  }
  for (const RunInput &input : given)
    if (!modelInputs.count(input.name))
      throw Error(ExitCode::Usage,
                  option + ": '" + input.name +
                      "' is not an input of the model (its inputs: " + inputNames(graph) + ")");
  return ordered;
}

/// The inputs by model input name, and the sample count they share.
std::map<std::string, Tensor> matchInputs(const Graph &graph, const std::vector<RunInput> &given,
                                          const std::string &option, uint64_t *batch) {
  std::vector<const RunInput *> ordered = inModelOrder(graph, given, option);
  std::map<std::string, Tensor> inputs;
  *batch = 0;
  for (size_t i = 0; i < ordered.size(); ++i) {
    const Value *input = graph.inputs()[i];
    const RunInput &in = *ordered[i];
    uint64_t samples = samplesIn(in.tensor.type, input->type);
    if (samples == 0)
      throw Error(ExitCode::BadInputFile, in.origin + ": input '" + input->name + "' expects " +
                                              input->type.str() +
                                              " (or N of them stacked along the first "
                                              "dimension), it holds " +
                                              in.tensor.type.str());
    if (*batch != 0 && samples != *batch)
      throw Error(ExitCode::BadInputFile, in.origin + ": holds " + std::to_string(samples) +
                                              " samples, " + ordered[0]->origin + " holds " +
                                              std::to_string(*batch));
    *batch = samples;
    inputs[input->name] = in.tensor;
  }
  if (*batch == 0)
    *batch = 1;
  return inputs;
}

/// Sample `index` of a tensor holding `count` samples back to back, typed `type`.
Tensor sampleOf(const Tensor &batched, uint64_t index, uint64_t count, const TensorType &type) {
  size_t bytes = batched.bytes.size() / count;
  auto first = batched.bytes.begin() + std::ptrdiff_t(index * bytes);
  return Tensor(type, std::vector<uint8_t>(first, first + std::ptrdiff_t(bytes)));
}

/// The interpreter's outputs, sample by sample, stacked like the bundle's.
std::map<std::string, Tensor> referenceOutputs(const CompiledBundle &bundle,
                                               const std::map<std::string, Tensor> &inputs,
                                               uint64_t batch,
                                               const std::map<std::string, Tensor> &outputs) {
  std::map<std::string, Tensor> reference;
  Interpreter interpreter(bundle.interpretableGraph());
  for (uint64_t n = 0; n < batch; ++n) {
    std::map<std::string, Tensor> sample;
    for (const Value *input : bundle.graph->inputs())
      sample[input->name] = sampleOf(inputs.at(input->name), n, batch, input->type);
    for (auto &[name, tensor] : interpreter.run(sample)) {
      Tensor &stacked = reference[name];
      stacked.type = outputs.count(name) ? outputs.at(name).type : tensor.type;
      stacked.bytes.insert(stacked.bytes.end(), tensor.bytes.begin(), tensor.bytes.end());
    }
  }
  return reference;
}

/// A private directory for the bundle and the program: a per-call name, so
/// runs on several threads of one process do not meet; a killed run's is
/// removed by the next (support/TemporaryDirectory.h).
class WorkDir {
public:
  WorkDir() : dir_("run", "for the run's bundle and program") {}
  ~WorkDir() {
    if (std::getenv("BUNDLEFIT_KEEP_WORK"))
      dir_.keep();
  }
  WorkDir(const WorkDir &) = delete;
  WorkDir &operator=(const WorkDir &) = delete;
  std::string operator/(const std::string &name) const {
    return (fs::path(dir_.path()) / name).string();
  }

private:
  TemporaryDirectory dir_;
};

} // namespace

RunInput npyFileInput(const std::string &path, const std::string &name) {
  return {name, loadNpy(path), path};
}

RunInput npyBytesInput(const std::string &bytes, const std::string &origin,
                       const std::string &name) {
  return {name, decodeNpy(bytes, origin), origin};
}

std::string npyBytes(const Tensor &tensor) { return encodeNpy(tensor); }

ModelRun runModel(const ModelRunOptions &options, const std::vector<RunInput> &given) {
  WorkDir work;
  CompileRequest compile = options.compile;
  compile.outputDir = work / "bundle";
  const std::string cmsisNn = compile.useCmsis ? cmsisNnLibraryFor(options) : "";
  CompiledBundle bundle;
  {
    ImmediateOutputs now; // the work directory's bundle is built on at once
    bundle = compileBundle(compile);
  }
  uint64_t batch = 1;
  std::map<std::string, Tensor> inputs =
      matchInputs(*bundle.graph, given, options.inputOption, &batch);

  BundleRunSpec spec =
      makeRunSpec(bundle.plan, compile.outputDir, bundle.networkName, compile.target);
  spec.timeoutSeconds = options.timeoutSeconds;
  spec.batch = batch;
  if (!cmsisNn.empty())
    spec.linkInputs.push_back(cmsisNn);
  ModelRun run;
  run.networkName = bundle.networkName;
  run.target = compile.target;
  run.samples = batch;
  std::map<std::string, Tensor> outputs = runBundle(spec, inputs, work / "run", &run.stats);
  std::map<std::string, Tensor> reference;
  if (options.compare)
    reference = referenceOutputs(bundle, inputs, batch, outputs);
  for (const Value *output : bundle.graph->outputs()) {
    RunOutput &out = run.outputs.emplace_back();
    out.name = output->name;
    out.tensor = outputs.at(output->name);
    if (options.compare)
      out.comparison = compareOutputs(out.tensor, reference.at(output->name), batch);
  }
  return run;
}

} // namespace bundlefit::driver
