//===- passes_model_tests.cpp - The default passes on the reference models -===//
//
// The reference models (tests/models, generated at build time) have what the
// passes exist for: Conv/Gemm + BatchNormalization + Relu/ReLU6 (Clip), a
// PyTorch-style Shape->Gather->Unsqueeze->Concat->Reshape flatten. For each,
// the interpreter's output after runDefaultPasses (fusion on and off) must
// match the output of the graph that was only folded and typed, and the
// rewrites must have happened (no BN, no fusable activation left).
//
// The models directory comes from the environment (BUNDLEFIT_MODELS_DIR, set
// by CTest); without it every case skips and ctest reports a SKIP.
//
//===----------------------------------------------------------------------===//
#include "SkipTest.h"

#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/interp/Npy.h"
#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/passes/Passes.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

using namespace bundlefit;
namespace fs = std::filesystem;

namespace {

fs::path modelsDir() {
  const char *dir = std::getenv("BUNDLEFIT_MODELS_DIR");
  return dir ? fs::path(dir) : fs::path();
}

std::map<std::string, Tensor> runModel(const Graph &graph, const fs::path &inputFile) {
  REQUIRE(graph.inputs().size() == 1);
  return Interpreter(graph).run({{graph.inputs()[0]->name, loadNpy(inputFile.string())}});
}

size_t countOps(const Graph &graph, const std::vector<std::string> &ops) {
  size_t count = 0;
  for (const Node *node : graph.nodes())
    if (std::find(ops.begin(), ops.end(), node->opType) != ops.end())
      ++count;
  return count;
}

void checkClose(const std::map<std::string, Tensor> &actual,
                const std::map<std::string, Tensor> &expected) {
  REQUIRE(actual.size() == expected.size());
  for (const auto &[name, want] : expected) {
    INFO("output " << name);
    REQUIRE(actual.count(name) == 1);
    const Tensor &got = actual.at(name);
    REQUIRE(got.type.shape == want.type.shape);
    double worst = 0;
    for (int64_t i = 0; i < want.numElements(); ++i)
      worst = std::max(worst, std::fabs(got.at(i) - want.at(i)) / (1.0 + std::fabs(want.at(i))));
    CHECK(worst <= 1e-4);
  }
}

void checkModel(const std::string &name) {
  fs::path dir = modelsDir();
  fs::path model = dir / (name + ".onnx"), input = dir / (name + ".input.npy");
  if (dir.empty() || !fs::exists(model) || !fs::exists(input))
    BUNDLEFIT_SKIP_TEST(model.string() << " not found (set BUNDLEFIT_MODELS_DIR)");
  INFO("model " << name);
  std::unique_ptr<Graph> reference = importOnnxModel(model.string());
  foldConstantsAndInferTypes(*reference);
  std::map<std::string, Tensor> expected = runModel(*reference, input);

  std::unique_ptr<Graph> optimised = importOnnxModel(model.string());
  size_t nodesBefore = optimised->numNodes();
  PassStats stats = runDefaultPasses(*optimised);
  MESSAGE(name << ": " << describePassStats(stats));
  CHECK(stats.nodesAfter < nodesBefore);
  checkClose(runModel(*optimised, input), expected);
  CHECK(countOps(*optimised, {"BatchNormalization", "Identity", "Dropout", "Shape", "Gather",
                              "Unsqueeze", "ConstantOfShape", "Range", "Cast"}) == 0);
  // Nothing left to fuse or fold: the pipeline reached its fixed point.
  CHECK(foldBatchNorm(*optimised) == 0);
  CHECK(fuseActivations(*optimised) == 0);
  for (const Value *output : optimised->outputs())
    CHECK(reference->findValue(output->name) != nullptr);

  std::unique_ptr<Graph> unfused = importOnnxModel(model.string());
  PassOptions noFusion;
  noFusion.fuseActivations = false;
  runDefaultPasses(*unfused, noFusion);
  checkClose(runModel(*unfused, input), expected);
  CHECK(countOps(*unfused, {"Relu", "Clip"}) > 0);
}

} // namespace

TEST_CASE("default passes on lenet") { checkModel("lenet"); }
TEST_CASE("default passes on resnet8") { checkModel("resnet8"); }
TEST_CASE("default passes on ds_cnn") { checkModel("ds_cnn"); }
TEST_CASE("default passes on mobilenet_v1_025") { checkModel("mobilenet_v1_025"); }
TEST_CASE("default passes on autoencoder") { checkModel("autoencoder"); }
TEST_CASE("default passes on branchy") { checkModel("branchy"); }
TEST_CASE("default passes on mobilenet_v2 (folds the PyTorch flatten chain)") {
  checkModel("mobilenet_v2");
}
