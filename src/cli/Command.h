//===- Command.h - How subcommands plug into the bundlefit tool ------------===//
#pragma once

#include <CLI/CLI.hpp>

#include "bundlefit/schedule/MemoryPlan.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace bundlefit {

class Graph;

/// What the chosen subcommand will run once options are parsed; returns the
/// process exit code.
using CommandAction = std::function<int()>;

/// Options every model-reading command shares.
struct ModelOptions {
  std::string path;
  std::vector<std::string> defineSymbols; ///< name=value
  std::vector<std::string> modelInputs;   ///< name,type,[d0,d1,...]
  bool fuseActivations = true;
  /// --memory-opt: 0..kMaxMemoryOpt (MemoryPlan.h). >= 1 also fuses Conv+pool
  /// in loadModel; planners must get the same level (PlanOptions::memoryOpt).
  int memoryOpt = kDefaultMemoryOpt;
  /// --patch-recompute-budget: extra MACs a level-2 patch stage may cost, as a
  /// fraction of the model's MACs.
  double patchRecomputeBudget = 0.2;
};

void addModelOptions(CLI::App &command, ModelOptions &options);

/// Imports the model and runs the default graph passes.
std::unique_ptr<Graph> loadModel(const ModelOptions &options);
/// "memory-opt 2 (...; defaults: bundlefit 2, model-compiler 0)".
std::string describeMemoryOpt(int level);
/// The graph transforms of --memory-opt (level >= 1: Conv+pool fusion;
/// >= 2: a patch stage). Run after quantization, which must see every tensor
/// the profile names; commands that plan or compile call it, profile does not.
void applyMemoryOptPasses(Graph &graph, const ModelOptions &options);

/// Global verbosity (--quiet / --verbose), read by progress output.
enum class Verbosity { Quiet, Normal, Verbose };
Verbosity verbosity();
void setVerbosity(Verbosity level);
/// Writes a progress/status line to stderr unless --quiet.
void status(const std::string &line);

/// Writes `text` to `path` atomically (temporary name, then rename), so a
/// failure leaves nothing half-written. Throws Error(CannotWrite).
void writeFileAtomically(const std::string &path, const std::string &text);

// One function per subcommand (src/cli/<Name>Command.cpp).
void addInspectCommand(CLI::App &app, CommandAction &action);
void addPlanCommand(CLI::App &app, CommandAction &action);
void addPlanBuffersCommand(CLI::App &app, CommandAction &action);
void addDevicesCommand(CLI::App &app, CommandAction &action);
void addFitCommand(CLI::App &app, CommandAction &action);
void addPickCommand(CLI::App &app, CommandAction &action);
void addCompileCommand(CLI::App &app, CommandAction &action);
void addRunCommand(CLI::App &app, CommandAction &action);
void addProfileCommand(CLI::App &app, CommandAction &action);      // int8: quant/Profile.h
void addCompareQuantCommand(CLI::App &app, CommandAction &action); // int8 vs float SNR

} // namespace bundlefit
