//===- BundleCompilation.h - The compile options of the command line -------===//
//
// The pipeline itself is the driver library's (bundlefit/driver/Compilation.h);
// this adds the options that fill its CompilationOptions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Command.h"
#include "QuantOptions.h"

#include "bundlefit/driver/Compilation.h"

namespace bundlefit {

/// Adds --network-name, --bundle-api, --target, --triple, --mcpu,
/// --float-abi, --relocation-model, --opt, --dump-graph-DAG, --use-cmsis,
/// --cmsis-nn-dir and --time-limit to a command.
void addCompileOptions(CLI::App &command, driver::CompilationOptions &options);

} // namespace bundlefit
