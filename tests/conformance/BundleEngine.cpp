//===- BundleEngine.cpp - Conformance through host bundles -----------------===//
//
// Compiles each test graph exactly as `bundlefit compile` does (memory plan,
// LLVM code generation for the host), links the object into the runner's
// native driver and runs it: the same bytes a user would get.
//
//===----------------------------------------------------------------------===//
#include "Engine.h"

#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/bundle/BundleWriter.h"
#include "bundlefit/codegen/BundleCodegen.h"
#include "bundlefit/codegen/Target.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace bundlefit {
namespace conformance {

namespace {

class BundleEngine : public Engine {
public:
  BundleEngine()
      : root_(fs::temp_directory_path() / ("bundlefit-conformance-" + std::to_string(::getpid()))) {
  }
  ~BundleEngine() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string name() const override { return "bundle"; }

  void prepare(const std::string &, const Graph &graph) override {
    dir_ = root_ / std::to_string(count_++);
    fs::remove_all(dir_);
    plan_ = planGraphMemory(graph);
    CodegenResult code = generateBundleObject(graph, plan_, "net", resolveTarget("host"));
    std::vector<uint8_t> weights = packWeights(plan_);
    writeBundleDirectory((dir_ / "bundle").string(),
                         {{"net.o", std::string(code.object.begin(), code.object.end())},
                          {"net.weights.bin", std::string(weights.begin(), weights.end())}});
    spec_ = makeRunSpec(plan_, (dir_ / "bundle").string(), "net", "host");
    spec_.timeoutSeconds = 60;
  }

  TensorMap run(const TensorMap &inputs) override {
    return runBundle(spec_, inputs, (dir_ / "run").string());
  }

private:
  fs::path root_, dir_;
  int count_ = 0;
  MemoryPlan plan_;
  BundleRunSpec spec_;
};

} // namespace

std::unique_ptr<Engine> createBundleEngine() { return std::make_unique<BundleEngine>(); }

} // namespace conformance
} // namespace bundlefit
