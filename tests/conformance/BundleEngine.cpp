//===- BundleEngine.cpp - Conformance through host bundles -----------------===//
//
// Writes each test model's bundle as `bundlefit compile` does (the driver's
// Compilation: its memory-opt passes and plan, LLVM code generation for the
// host), links the object into the runner's native driver and runs it: the
// same bytes a user would get.
//
//===----------------------------------------------------------------------===//
#include "Engine.h"

#include "bundlefit/bundle/BundleRunner.h"

#include <filesystem>
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

  void prepare(const driver::CompilationOptions &options) override {
    dir_ = root_ / std::to_string(count_++);
    fs::remove_all(dir_);
    compilation_ = std::make_unique<driver::Compilation>(options);
    const std::string bundleDir = (dir_ / "bundle").string();
    bundle_ = &compilation_->writeBundle(bundleDir);
    spec_ = makeRunSpec(bundle_->plan, bundleDir, bundle_->networkName, options.codegen.target);
    spec_.timeoutSeconds = 60;
  }

  const Graph &graph() const override { return *bundle_->graph; }

  TensorMap run(const TensorMap &inputs) override {
    return runBundle(spec_, inputs, (dir_ / "run").string());
  }

private:
  fs::path root_, dir_;
  int count_ = 0;
  std::unique_ptr<driver::Compilation> compilation_;
  const CompiledBundle *bundle_ = nullptr; ///< compilation_'s.
  BundleRunSpec spec_;
};

} // namespace

std::unique_ptr<Engine> createBundleEngine() { return std::make_unique<BundleEngine>(); }

} // namespace conformance
} // namespace bundlefit
