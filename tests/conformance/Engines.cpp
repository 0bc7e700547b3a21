//===- Engines.cpp - The engines the conformance driver can use ------------===//
#include "Engine.h"

#include "bundlefit/interp/Interpreter.h"

namespace bundlefit {
namespace conformance {
namespace {

/// The reference interpreter: runs the loaded graph (import and default
/// passes; int8 for a pre-quantized model) node by node, as `bundlefit run
/// --compare` does.
class InterpreterEngine : public Engine {
public:
  std::string name() const override { return "interp"; }
  void prepare(const driver::CompilationOptions &options) override {
    graph_ = driver::Compilation(options).loadGraph();
  }
  const Graph &graph() const override { return *graph_; }
  TensorMap run(const TensorMap &inputs) override { return Interpreter(*graph_).run(inputs); }

private:
  std::unique_ptr<Graph> graph_;
};

} // namespace

std::unique_ptr<Engine> createEngine(const std::string &name) {
  if (name == "interp")
    return std::make_unique<InterpreterEngine>();
  if (name == "bundle")
    return createBundleEngine();
  return nullptr;
}

std::vector<std::string> engineNames() { return {"interp", "bundle"}; }

} // namespace conformance
} // namespace bundlefit
