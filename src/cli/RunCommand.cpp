//===- RunCommand.cpp - bundlefit run MODEL --input a.npy --output-dir D ----===//
//
// Compiles the bundle, links it into a small driver (host) or firmware
// (Cortex-M under QEMU), runs it and writes each output as .npy. With
// --compare, also runs the reference interpreter and prints the difference.
//
// A batch: an input file whose leading dimension is N times the model's
// (e.g. [1000,1,28,28] for a [1,1,28,28] input) holds N samples; the bundle
// runs once per sample in one program (one QEMU boot) and each output file
// gets the N results stacked the same way. With --load-profile the bundle is
// int8 (QuantOptions.h).
//
//===----------------------------------------------------------------------===//
#include "BundleCompilation.h"
#include "OutputComparison.h"
#include "ReportSupport.h"

#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/bundle/CmsisNnLibrary.h"
#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/interp/Npy.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Names.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace bundlefit {

namespace {

struct RunOptions {
  CompileRequest compile;
  std::vector<std::string> inputs;
  std::string outputDir;
  bool compare = false;
  double timeout = 300;
  JsonReportOption json;
  HtmlReportOption html;
  std::string cmsisNnDir; ///< --cmsis-nn (else $BUNDLEFIT_CMSIS_NN_DIR)
};

/// --use-cmsis: the CMSIS-NN library for the target, built once and cached.
std::string cmsisNnLibraryFor(const RunOptions &options) {
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
    std::cerr << "built CMSIS-NN for " << options.compile.target << ": " << library.library << "\n";
  return library.library;
}

/// How many samples of `expected` the file's tensor holds: 1 for the exact
/// type, N for the leading dimension N times the model's; 0 for neither.
uint64_t samplesIn(const TensorType &file, const TensorType &expected) {
  if (file.sameShapeAndType(expected))
    return 1;
  if (file.dtype != expected.dtype || file.rank() != expected.rank() || expected.rank() == 0 ||
      expected.shape[0] <= 0 || file.shape[0] % expected.shape[0] != 0 || file.shape[0] == 0)
    return 0;
  for (size_t d = 1; d < file.rank(); ++d)
    if (file.shape[d] != expected.shape[d])
      return 0;
  return uint64_t(file.shape[0] / expected.shape[0]);
}

/// The --input files by graph input name, and the sample count they share.
std::map<std::string, Tensor> readInputs(const Graph &graph, const std::vector<std::string> &paths,
                                         uint64_t *batch) {
  if (paths.size() != graph.inputs().size())
    throw Error(ExitCode::Usage, "the model has " + std::to_string(graph.inputs().size()) +
                                     " inputs, " + std::to_string(paths.size()) +
                                     " given with --input");
  std::map<std::string, Tensor> inputs;
  *batch = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    const Value *input = graph.inputs()[i];
    Tensor tensor = loadNpy(paths[i]);
    uint64_t samples = samplesIn(tensor.type, input->type);
    if (samples == 0)
      throw Error(ExitCode::BadInputFile, paths[i] + ": input '" + input->name + "' expects " +
                                              input->type.str() +
                                              " (or N of them stacked along the first "
                                              "dimension), the file holds " +
                                              tensor.type.str());
    if (*batch != 0 && samples != *batch)
      throw Error(ExitCode::BadInputFile, paths[i] + ": holds " + std::to_string(samples) +
                                              " samples, " + paths[0] + " holds " +
                                              std::to_string(*batch));
    *batch = samples;
    inputs[input->name] = std::move(tensor);
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

/// The input files are readable .npy and the output directory can take
/// files: checked before the (long) compile, not after it.
void checkRunFiles(const RunOptions &options) {
  for (const std::string &path : options.inputs)
    loadNpy(path);
  // Nothing is created yet: a run that fails leaves no empty directory.
  std::error_code ec;
  if (fs::exists(options.outputDir, ec) && !fs::is_directory(options.outputDir, ec))
    throw Error(ExitCode::CannotWrite, options.outputDir + ": exists and is not a directory");
  fs::path existing = fs::absolute(options.outputDir, ec);
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.parent_path())
    existing = existing.parent_path();
  if (!fs::is_directory(existing, ec) || ::access(existing.c_str(), W_OK | X_OK) != 0)
    throw Error(ExitCode::CannotWrite, options.outputDir +
                                           ": cannot create the output directory (" +
                                           existing.string() + " is not writable)");
  options.json.checkFileWritable();
  options.html.checkFileWritable();
}

int runRun(const RunOptions &options) {
  checkRunFiles(options);
  fs::path work = fs::temp_directory_path() / ("bundlefit-run-" + std::to_string(::getpid()));
  fs::create_directories(work);
  struct Cleanup {
    fs::path path;
    ~Cleanup() {
      std::error_code ec;
      if (!std::getenv("BUNDLEFIT_KEEP_WORK"))
        fs::remove_all(path, ec);
    }
  } cleanup{work};

  CompileRequest compile = options.compile;
  compile.outputDir = (work / "bundle").string();
  const std::string cmsisNn = compile.useCmsis ? cmsisNnLibraryFor(options) : "";
  CompiledBundle bundle = compileBundle(compile);
  uint64_t batch = 1;
  std::map<std::string, Tensor> inputs = readInputs(*bundle.graph, options.inputs, &batch);

  BundleRunSpec spec =
      makeRunSpec(bundle.plan, compile.outputDir, bundle.networkName, compile.target);
  spec.timeoutSeconds = options.timeout;
  spec.batch = batch;
  if (!cmsisNn.empty())
    spec.linkInputs.push_back(cmsisNn);
  BundleRunStats stats;
  std::map<std::string, Tensor> outputs = runBundle(spec, inputs, (work / "run").string(), &stats);

  std::vector<std::string> columns = {"output", "type", "file"};
  if (options.compare) // vs the reference interpreter
    columns.insert(columns.end(), {"max |diff|", "cosine", "rel. L2", "top-1"});
  TextTable table(columns, {false, false, false, true, true, true, true});
  table.setDropOrder({2}); // the files are in --output-dir, named after the outputs
  // The interpreter's outputs, sample by sample, stacked like the bundle's.
  std::map<std::string, Tensor> reference;
  if (options.compare) {
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
  }
  nlohmann::json outputsJson = nlohmann::json::array();
  std::vector<std::string> outputNames;
  for (const Value *output : bundle.graph->outputs())
    outputNames.push_back(output->name);
  // "a.b" and "a-b" must not both become a_b.npy.
  const std::vector<std::string> fileStems = uniqueLegalNames(outputNames);
  size_t outputIndex = 0;
  std::error_code dirError;
  fs::create_directories(options.outputDir, dirError);
  if (dirError)
    throw Error(ExitCode::CannotWrite,
                options.outputDir + ": cannot create the output directory: " + dirError.message());
  for (const Value *output : bundle.graph->outputs()) {
    const Tensor &tensor = outputs.at(output->name);
    outputsJson.push_back({{"name", output->name},
                           {"dtype", dtypeName(tensor.type.dtype)},
                           {"shape", tensor.type.shape}});
    std::string file = (fs::path(options.outputDir) / (fileStems[outputIndex++] + ".npy")).string();
    writeFileAtomically(file, encodeNpy(tensor));
    outputsJson.back()["file"] = file;
    std::vector<std::string> row = {output->name, tensor.type.str(), file};
    if (options.compare) {
      OutputComparison c = compareOutputs(tensor, reference.at(output->name), batch);
      nlohmann::json &entry = outputsJson.back();
      entry["max_abs_diff"] = c.maxAbsDiff;
      entry["max_abs_output"] = c.maxAbsReference;
      entry["cosine_similarity"] = c.cosine;
      entry["relative_l2_error"] =
          std::isfinite(c.relativeL2) ? nlohmann::json(c.relativeL2) : nlohmann::json();
      if (c.hasTop1)
        entry["top1_agreement"] = double(c.top1Agree) / double(c.samples);
      char diff[32], cosine[32], l2[32];
      std::snprintf(diff, sizeof diff, "%.3g", c.maxAbsDiff);
      std::snprintf(cosine, sizeof cosine, "%.6f", c.cosine);
      std::snprintf(l2, sizeof l2, "%.3g", c.relativeL2);
      row.insert(row.end(), {diff, cosine, l2, formatTop1(c)});
    }
    table.addRow(row);
  }
  std::string ran = "ran " + bundle.networkName + " on " + compile.target +
                    (batch > 1 ? " over " + std::to_string(batch) + " samples" : "") + " (build " +
                    std::to_string(stats.buildSeconds).substr(0, 4) + " s, run " +
                    std::to_string(stats.runSeconds).substr(0, 5) + " s)";
  options.html.writeTable(compile.model.path + ": run", {ran}, "Outputs", table);
  if (options.json.wanted()) {
    options.json.emit({{"schema", "bundlefit.run/1"},
                       {"network", bundle.networkName},
                       {"target", compile.target},
                       {"samples", batch},
                       {"build_seconds", stats.buildSeconds},
                       {"run_seconds", stats.runSeconds},
                       {"outputs", outputsJson}},
                      compile.model.path);
    if (options.json.replacesText())
      return 0;
  }
  printText(ran + "\n\n" + table.render());
  return 0;
}

} // namespace

void addRunCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<RunOptions>();
  CLI::App *command = app.add_subcommand(
      "run",
      "Compile, link and run a bundle on the host or a Cortex-M under QEMU; write .npy outputs");
  addModelOptions(*command, options->compile.model);
  command
      ->add_option("--input", options->inputs,
                   "Input .npy, one per model input in order; N samples stacked along the "
                   "first dimension run as a batch (one build, one QEMU boot)")
      ->required();
  command->add_option("--output-dir", options->outputDir, "Directory for the output .npy files")
      ->required();
  command
      ->add_option(
          "--target", options->compile.target,
          "host | cortex-m7 (mps2-an500) | cortex-m33 (mps2-an505) | cortex-m4 (mps2-an386) | "
          "cortex-m55 (mps3-an547)")
      ->check(CLI::IsMember(supportedRunTargets()));
  command->add_option("--opt", options->compile.optLevel, "O2 | O3 | Os")
      ->check(CLI::IsMember({"O2", "O3", "Os"}));
  command->add_option("--network-name", options->compile.networkName, "Bundle name");
  addQuantOptions(*command, options->compile.quant);
  command->add_flag("--use-cmsis", options->compile.useCmsis,
                    "int8: call CMSIS-NN's s8 functions, linked from --cmsis-nn");
  command->add_option("--cmsis-nn", options->cmsisNnDir,
                      "CMSIS-NN source checkout (built per core, cached in ~/.cache/bundlefit) "
                      "or a directory holding libcmsis-nn.a; default $BUNDLEFIT_CMSIS_NN_DIR");
  command->add_flag("--compare", options->compare,
                    "Also run the reference interpreter: max |diff|, cosine similarity, relative "
                    "L2 error, top-1 agreement over the batch");
  command->add_option("--timeout", options->timeout, "Seconds the program may run (default 300)");
  options->json.addTo(*command, "bundlefit.run/1");
  options->html.addTo(*command, "the outputs, and how they compare with --compare");
  command->callback([options, &action] {
    action = [options] {
      markPreQuantized(options->compile.model.path, options->compile.quant);
      return runRun(*options);
    };
  });
}

} // namespace bundlefit
