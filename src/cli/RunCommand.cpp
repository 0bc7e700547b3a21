//===- RunCommand.cpp - bundlefit run MODEL --input a.npy --output-dir D ----===//
//
// Compiles the bundle, links it into a small driver (host) or firmware
// (Cortex-M under QEMU), runs it and writes each output as .npy. With
// --compare, also runs the reference interpreter and prints the difference.
//
//===----------------------------------------------------------------------===//
#include "BundleCompilation.h"

#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/interp/Npy.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Names.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>
#include <iostream>

namespace fs = std::filesystem;

namespace bundlefit {

namespace {

struct RunOptions {
  CompileRequest compile;
  std::vector<std::string> inputs;
  std::string outputDir;
  bool compare = false;
  double timeout = 300;
  bool json = false;
};

std::map<std::string, Tensor> readInputs(const Graph &graph, const std::vector<std::string> &paths) {
  if (paths.size() != graph.inputs().size())
    throw Error(ExitCode::Usage, "the model has " + std::to_string(graph.inputs().size()) +
                                     " inputs, " + std::to_string(paths.size()) +
                                     " given with --input");
  std::map<std::string, Tensor> inputs;
  for (size_t i = 0; i < paths.size(); ++i) {
    const Value *input = graph.inputs()[i];
    Tensor tensor = loadNpy(paths[i]);
    if (!tensor.type.sameShapeAndType(input->type))
      throw Error(ExitCode::BadInputFile, paths[i] + ": input '" + input->name + "' expects " +
                                              input->type.str() + ", the file holds " +
                                              tensor.type.str());
    inputs[input->name] = std::move(tensor);
  }
  return inputs;
}

double maxAbsDiff(const Tensor &a, const Tensor &b, double *maxMagnitude) {
  double diff = 0, magnitude = 0;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    diff = std::max(diff, std::fabs(a.at(i) - b.at(i)));
    magnitude = std::max(magnitude, std::fabs(b.at(i)));
  }
  *maxMagnitude = magnitude;
  return diff;
}

int runRun(const RunOptions &options) {
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
  CompiledBundle bundle = compileBundle(compile);
  std::map<std::string, Tensor> inputs = readInputs(*bundle.graph, options.inputs);

  BundleRunSpec spec = makeRunSpec(bundle.plan, compile.outputDir, bundle.networkName, compile.target);
  spec.timeoutSeconds = options.timeout;
  BundleRunStats stats;
  std::map<std::string, Tensor> outputs = runBundle(spec, inputs, (work / "run").string(), &stats);

  std::error_code dirError;
  fs::create_directories(options.outputDir, dirError);
  if (dirError)
    throw Error(ExitCode::CannotWrite, options.outputDir + ": cannot create the output directory: " +
                                           dirError.message());
  TextTable table({"output", "type", "file", "max |diff| vs interpreter"},
                  {false, false, false, true});
  std::map<std::string, Tensor> reference;
  if (options.compare)
    reference = Interpreter(*bundle.graph).run(inputs);
  nlohmann::json outputsJson = nlohmann::json::array();
  for (const Value *output : bundle.graph->outputs()) {
    const Tensor &tensor = outputs.at(output->name);
    outputsJson.push_back({{"name", output->name}, {"dtype", dtypeName(tensor.type.dtype)},
                           {"shape", tensor.type.shape}});
    std::string file = (fs::path(options.outputDir) / (legalizeName(output->name) + ".npy")).string();
    writeFileAtomically(file, encodeNpy(tensor));
    std::string diffText = "-";
    if (options.compare) {
      double magnitude = 0;
      double diff = maxAbsDiff(tensor, reference.at(output->name), &magnitude);
      outputsJson.back()["max_abs_diff"] = diff;
      outputsJson.back()["max_abs_output"] = magnitude;
      char text[64];
      std::snprintf(text, sizeof text, "%.3g (max |out| %.3g)", diff, magnitude);
      diffText = text;
    }
    outputsJson.back()["file"] = file;
    table.addRow({output->name, tensor.type.str(), file, diffText});
  }
  if (options.json) {
    std::cout << nlohmann::json{{"schema", "bundlefit.run/1"}, {"network", bundle.networkName},
                                {"target", compile.target}, {"build_seconds", stats.buildSeconds},
                                {"run_seconds", stats.runSeconds}, {"outputs", outputsJson}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << "ran " << bundle.networkName << " on " << compile.target << " (build "
            << std::to_string(stats.buildSeconds).substr(0, 4) << " s, run "
            << std::to_string(stats.runSeconds).substr(0, 5) << " s)\n\n"
            << table.render();
  return 0;
}

} // namespace

void addRunCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<RunOptions>();
  CLI::App *command = app.add_subcommand(
      "run", "Compile, link and run a bundle on the host or a Cortex-M under QEMU; write .npy outputs");
  addModelOptions(*command, options->compile.model);
  command->add_option("--input", options->inputs, "Input .npy, one per model input in order")
      ->required();
  command->add_option("--output-dir", options->outputDir, "Directory for the output .npy files")
      ->required();
  command->add_option("--target", options->compile.target,
                      "host | cortex-m7 (mps2-an500) | cortex-m33 (mps2-an505) | cortex-m4 (mps2-an386)")
      ->check(CLI::IsMember(supportedRunTargets()));
  command->add_option("--opt", options->compile.optLevel, "O2 | O3 | Os")
      ->check(CLI::IsMember({"O2", "O3", "Os"}));
  command->add_option("--network-name", options->compile.networkName, "Bundle name");
  command->add_flag("--compare", options->compare,
                    "Also run the reference interpreter and print the largest difference");
  command->add_option("--timeout", options->timeout, "Seconds the program may run (default 300)");
  command->add_flag("--json", options->json, "Print JSON (bundlefit.run/1) instead of the table");
  command->callback([options, &action] { action = [options] { return runRun(*options); }; });
}

} // namespace bundlefit
