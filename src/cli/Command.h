//===- Command.h - How subcommands plug into the bundlefit tool ------------===//
#pragma once

#include <CLI/CLI.hpp>

#include "bundlefit/driver/Pipeline.h"
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

void addModelOptions(CLI::App &command, ModelOptions &options);

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
