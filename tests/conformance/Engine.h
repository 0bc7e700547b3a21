//===- Engine.h - What runs a model in the conformance driver --------------===//
//
// The driver imports each test model and runs the default passes once; an
// Engine then executes the resulting graph on each test data set. The
// reference interpreter is the first engine. A second one (host bundles:
// compile the model, build it natively, run it) plugs in by implementing this
// interface and adding one line to createEngine() in Engines.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

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
  /// Called with the imported graph after runDefaultPasses, once per test
  /// model -- or once per data set when the driver bound shape operands to
  /// the data set's values (then the graph differs from the file: compile
  /// `graph`, use `modelPath` for names and messages). The graph outlives the
  /// following run() calls. An engine that compiles (bundles) does it here.
  /// Throws bundlefit::Error.
  virtual void prepare(const std::string &modelPath, const Graph &graph) = 0;
  /// Runs the prepared model: inputs keyed by graph input name, outputs keyed
  /// by graph output name. Throws bundlefit::Error.
  virtual TensorMap run(const TensorMap &inputs) = 0;
};

/// Host bundles: each graph compiled and run natively (BundleEngine.cpp).
std::unique_ptr<Engine> createBundleEngine();

/// "interp" (the reference interpreter) or "bundle" (host bundles). Returns
/// nullptr for unknown names.
std::unique_ptr<Engine> createEngine(const std::string &name);
/// Names createEngine accepts, for --help.
std::vector<std::string> engineNames();

} // namespace conformance
} // namespace bundlefit
