// The reference models give the same outputs from the interpreter, the host
// bundle and Cortex-M bundles under QEMU: max |diff| <= 1e-4 x max |output|.
#include "bundlefit/driver/CompileBundle.h"

#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/interp/Npy.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

using namespace bundlefit;
namespace fs = std::filesystem;

namespace {

struct Outcome {
  double maxDiff = 0;
  double maxMagnitude = 0;
};

Outcome compare(const std::map<std::string, Tensor> &actual,
                const std::map<std::string, Tensor> &expected) {
  Outcome outcome;
  for (const auto &[name, reference] : expected) {
    const Tensor &tensor = actual.at(name);
    REQUIRE(tensor.type.sameShapeAndType(reference.type));
    for (int64_t i = 0; i < reference.numElements(); ++i) {
      outcome.maxDiff = std::max(outcome.maxDiff, std::fabs(tensor.at(i) - reference.at(i)));
      outcome.maxMagnitude = std::max(outcome.maxMagnitude, std::fabs(reference.at(i)));
    }
  }
  return outcome;
}

/// Compiles `model` for `target`, runs it there and checks it against the
/// interpreter.
void checkModelOnTarget(const std::string &model, const std::string &target) {
  CAPTURE(model);
  CAPTURE(target);
  std::string modelPath = std::string(BUNDLEFIT_MODELS_DIR) + "/" + model + ".onnx";
  fs::path work = fs::path(BUNDLEFIT_TEST_TMP) / (model + "-" + target);
  fs::remove_all(work);

  CompileRequest request;
  request.model.path = modelPath;
  request.outputDir = (work / "bundle").string();
  request.target = target;
  CompiledBundle bundle = compileBundle(request);

  const Value *input = bundle.graph->inputs().at(0);
  std::map<std::string, Tensor> inputs = {
      {input->name, loadNpy(std::string(BUNDLEFIT_MODELS_DIR) + "/" + model + ".input.npy")}};
  std::map<std::string, Tensor> expected = Interpreter(*bundle.graph).run(inputs);

  BundleRunSpec spec = makeRunSpec(bundle.plan, request.outputDir, bundle.networkName, target);
  spec.timeoutSeconds = 600;
  Outcome outcome = compare(runBundle(spec, inputs, (work / "run").string()), expected);
  MESSAGE(model << " on " << target << ": max |diff| " << outcome.maxDiff << ", max |output| "
                << outcome.maxMagnitude);
  CHECK(outcome.maxMagnitude > 0);
  CHECK(outcome.maxDiff <= 1e-4 * outcome.maxMagnitude);
}

const char *kModels[] = {"lenet", "resnet8", "ds_cnn", "mobilenet_v1_025", "autoencoder"};

} // namespace

TEST_CASE("reference models: host bundle matches the interpreter") {
  for (const char *model : kModels)
    checkModelOnTarget(model, "host");
}

TEST_CASE("reference models: Cortex-M7 bundle under QEMU (mps2-an500) matches the interpreter") {
  for (const char *model : kModels)
    checkModelOnTarget(model, "cortex-m7");
}

TEST_CASE("LeNet on Cortex-M33 (mps2-an505) and Cortex-M4 (mps2-an386)") {
  checkModelOnTarget("lenet", "cortex-m33");
  checkModelOnTarget("lenet", "cortex-m4");
}
