//===- Engine.h - What runs a model in the conformance driver --------------===//
//
// An Engine builds each test model through driver::Compilation, with the
// options a user's command gets (memory-opt, target, time limit at bundlefit's
// defaults), and executes it on each test data set. The reference interpreter
// runs the loaded graph; the bundle engine compiles, links and runs the bundle
// `bundlefit compile` would write. Another engine implements this interface
// and adds one line to createEngine() in Engines.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/driver/Compilation.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/ir/Tensor.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace bundlefit {
namespace conformance {

using TensorMap = std::map<std::string, Tensor>;

class Engine {
public:
  virtual ~Engine() = default;
  virtual std::string name() const = 0;
  /// Builds the model of `options` through a driver::Compilation: once per
  /// test model, or once per data set when the harness binds shape operands
  /// (options.model.afterImport). Throws bundlefit::Error.
  virtual void prepare(const driver::CompilationOptions &options) = 0;
  /// The prepared model's graph: its inputs and outputs, in the model's
  /// order, name run()'s. Valid until the next prepare().
  virtual const Graph &graph() const = 0;
  /// Runs the prepared model: inputs keyed by graph input name, outputs keyed
  /// by graph output name. Throws bundlefit::Error.
  virtual TensorMap run(const TensorMap &inputs) = 0;
};

/// Host bundles: each model compiled and run natively (BundleEngine.cpp).
std::unique_ptr<Engine> createBundleEngine();

/// "interp" (the reference interpreter) or "bundle" (host bundles). Returns
/// nullptr for unknown names.
std::unique_ptr<Engine> createEngine(const std::string &name);
/// Names createEngine accepts, for --help.
std::vector<std::string> engineNames();

} // namespace conformance
} // namespace bundlefit
