//===- Engines.cpp - The engines the conformance driver can use ------------===//
#include "Engine.h"

#include "bundlefit/interp/Interpreter.h"

namespace bundlefit {
namespace conformance {
namespace {

/// The reference interpreter: runs the optimised graph node by node.
class InterpreterEngine : public Engine {
public:
  std::string name() const override { return "interp"; }
  void prepare(const std::string &, const Graph &graph) override { graph_ = &graph; }
  TensorMap run(const TensorMap &inputs) override { return Interpreter(*graph_).run(inputs); }

private:
  const Graph *graph_ = nullptr;
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
