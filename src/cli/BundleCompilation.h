//===- BundleCompilation.h - The compile options of the command line -------===//
//
// The pipeline itself is the driver library's (bundlefit/driver/CompileBundle.h);
// this adds the options that fill its CompileRequest.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Command.h"
#include "QuantOptions.h"

#include "bundlefit/driver/CompileBundle.h"

namespace bundlefit {

/// Adds --network-name, --bundle-api, --target, --triple, --mcpu,
/// --float-abi, --relocation-model, --opt, --dump-graph-DAG, --use-cmsis,
/// --cmsis-nn-dir and --time-limit to a command.
void addCompileOptions(CLI::App &command, CompileRequest &request);

} // namespace bundlefit
