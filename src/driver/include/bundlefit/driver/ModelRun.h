//===- ModelRun.h - Compile a bundle, run it on inputs, compare it ---------===//
//
// What `bundlefit run` computes, without its command line: the bundle
// compiled into a private temporary directory, linked into a host driver or
// Cortex-M firmware (QEMU) and run on the inputs (BundleRunner.h), its
// outputs and, when asked, how far each is from the reference interpreter's
// (OutputComparison.h), and the bundlefit.run/1 JSON report. `bundlefit run`
// and the Python module's run() call it, so both give the same outputs and
// the same report for the same model, inputs and options.
//
// A batch: inputs whose leading dimension is N times the model's (e.g.
// [1000,1,28,28] for a [1,1,28,28] input) hold N samples; the bundle runs
// once per sample in one program (one build, one QEMU boot) and each output
// holds the N results stacked the same way.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/driver/CompileBundle.h"
#include "bundlefit/driver/OutputComparison.h"
#include "bundlefit/ir/Tensor.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace bundlefit::driver {

/// One input tensor (it may hold a batch of samples).
struct RunInput {
  /// The model input it feeds; empty: the next one in the model's order
  /// (either every input of a run is named or none is).
  std::string name;
  Tensor tensor;
  /// Names it in error messages: the .npy file, or "inputs['x']".
  std::string origin;
};

/// An input read from a .npy file (Error(BadInputFile) naming the file).
RunInput npyFileInput(const std::string &path, const std::string &name = "");
/// An input from .npy bytes (numpy.save's), named `origin` in errors.
RunInput npyBytesInput(const std::string &bytes, const std::string &origin,
                       const std::string &name = "");
/// A tensor as .npy bytes (numpy.load reads them).
std::string npyBytes(const Tensor &tensor);

struct ModelRunOptions {
  /// The model, target and int8 options; outputDir is not used (the bundle
  /// goes to a temporary directory, removed afterwards unless
  /// $BUNDLEFIT_KEEP_WORK is set).
  CompileRequest compile;
  /// --use-cmsis: the CMSIS-NN checkout or library directory; empty:
  /// $BUNDLEFIT_CMSIS_NN_DIR.
  std::string cmsisNnDir;
  /// Also run the reference interpreter and compare each output with it.
  bool compare = false;
  double timeoutSeconds = 300; ///< For the program's run.
  /// How errors name the option the inputs came from ("--input", "inputs").
  std::string inputOption = "--input";
};

struct RunOutput {
  std::string name;                           ///< The model's output name.
  Tensor tensor;                              ///< The bundle's result, `samples` of them stacked.
  std::optional<OutputComparison> comparison; ///< With ModelRunOptions::compare.
};

struct ModelRun {
  std::string networkName, target;
  uint64_t samples = 1;
  BundleRunStats stats;
  std::vector<RunOutput> outputs; ///< In the model's order.
};

/// Compiles, runs and (optionally) compares. Throws bundlefit::Error naming
/// the model, input or option at fault (BundleRunner.h lists the kinds).
ModelRun runModel(const ModelRunOptions &options, const std::vector<RunInput> &inputs);

/// Writes each output as <dir>/<name>.npy (names made legal file names,
/// unique: "a.b" and "a-b" do not both become a_b.npy), all of them or none:
/// `dir` is an OutputDirectory (support/OutputFile.h), created fresh or
/// swapped in with its other files kept. Returns the files in output order.
/// Callers check `dir` before the run (checkDirectoryCreatable(dir, "output
/// directory")).
std::vector<std::string> writeRunOutputs(const ModelRun &run, const std::string &dir);

/// The bundlefit.run/1 report, not yet stamped with the tool and model hash
/// (ToolInfo.h: stampReport). `files`: writeRunOutputs' result, or empty
/// when the outputs were not written (no "file" fields).
nlohmann::json runReportJson(const ModelRun &run, const std::vector<std::string> &files);

} // namespace bundlefit::driver
