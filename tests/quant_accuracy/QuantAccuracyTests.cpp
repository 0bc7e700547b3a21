//===- QuantAccuracyTests.cpp - Top-1 of float and int8 bundles, Fashion-MNIST ===//
//
// Issue 5 "Must show": on the trained Fashion-MNIST CNN (tests/models/
// fashion_mnist, torch top-1 913/1000) over its 1,000 test images,
//  - the float host bundle's top-1 count equals the reference interpreter's;
//  - int8 bundles (profile recorded here by `bundlefit profile` from the 200
//    calibration images) stay within 1.0 point of float with the asymmetric
//    schema and within 2.0 points with symmetric_with_power2_scale,
//    on the host and on Cortex-M7 under QEMU (mps2-an500), where the float
//    bundle also matches the interpreter's count;
//  - the Cortex-M7 int8 logits are byte-identical to the host int8 logits.
// Every bundle runs through `bundlefit run` with all 1,000 images stacked in
// one .npy: one build and one QEMU boot per bundle, not 1,000.
//
//===----------------------------------------------------------------------===//
#include "../cli/CliTestSupport.h"
#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/interp/Npy.h"
#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/passes/Passes.h"

#include "SkipTest.h"
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/wait.h>

using namespace bundlefit;
namespace fs = std::filesystem;

namespace {

const std::string kDataDir = std::string(BUNDLEFIT_SOURCE_DIR) + "/tests/models/fashion_mnist";
const std::string kModel = kDataDir + "/fashion_cnn.onnx";
constexpr int kImages = 1000;
constexpr int kClasses = 10;
constexpr int kTorchCorrect = 913; // tests/models/fashion_mnist/README.md

using test::CommandResult;

/// Runs bundlefit with stdout captured (it carries the JSON the tests parse);
/// stderr goes to a log that is appended to the output on failure.
CommandResult runTool(const std::string &arguments) {
  return test::runProgram(BUNDLEFIT_EXE, arguments,
                          std::string(BUNDLEFIT_TEST_TMP) + "/stderr.log");
}

void writeFile(const fs::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  REQUIRE(out.good());
}

/// What every test case shares, made once: the test images as the model's
/// float input (pixel / 255, README), the labels and the int8 profile.
struct Fixture {
  fs::path dir = fs::path(BUNDLEFIT_TEST_TMP);
  std::string imagesNpy = (dir / "test_images_f32.npy").string();
  std::string profile = (dir / "fashion_cnn.profile.yaml").string();
  std::vector<uint8_t> labels;
  Tensor images; ///< float32 [1000,1,28,28]

  Fixture() {
    Tensor pixels = loadNpy(kDataDir + "/test_images.npy");
    REQUIRE(pixels.type.dtype == DType::UInt8);
    REQUIRE(pixels.type.shape == Shape{kImages, 1, 28, 28});
    std::vector<float> values(pixels.bytes.size());
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = float(pixels.bytes[i]) / 255.0f;
    images = Tensor::fromFloats(pixels.type.shape, values);
    writeFile(imagesNpy, encodeNpy(images));

    Tensor labelTensor = loadNpy(kDataDir + "/test_labels.npy");
    REQUIRE(labelTensor.type.dtype == DType::UInt8);
    REQUIRE(labelTensor.numElements() == kImages);
    labels = labelTensor.bytes;

    CommandResult profiled =
        runTool("profile -q " + kModel + " " + kDataDir + "/calib_images.npy -o " + profile);
    REQUIRE_MESSAGE(profiled.exitCode == 0, profiled.output);
  }
};

Fixture &fixture() {
  static Fixture instance;
  return instance;
}

int argmax(const float *logits) {
  return int(std::max_element(logits, logits + kClasses) - logits);
}

int correctCount(const Tensor &logits) {
  REQUIRE(logits.type.dtype == DType::Float32);
  REQUIRE(logits.type.shape == Shape{kImages, kClasses});
  int correct = 0;
  for (int i = 0; i < kImages; ++i)
    correct += argmax(logits.data<float>() + i * kClasses) == fixture().labels[size_t(i)];
  return correct;
}

double percent(int correct) { return 100.0 * correct / kImages; }

/// `bundlefit run` over all test images, float (empty `schema`) or int8 with
/// the fixture's profile. Returns the stacked logits [1000,10]; each bundle
/// runs once per test binary.
const Tensor &logitsOf(const std::string &target, const std::string &schema) {
  static std::map<std::string, Tensor> cache;
  Fixture &f = fixture();
  std::string name = target + (schema.empty() ? "-float" : "-" + schema);
  if (auto it = cache.find(name); it != cache.end())
    return it->second;
  fs::path outDir = f.dir / name;
  std::string arguments = "run -q " + kModel + " --input " + f.imagesNpy + " --output-dir " +
                          outDir.string() + " --target " + target + " --json";
  if (!schema.empty())
    arguments += " --load-profile " + f.profile + " --quantization-schema " + schema;
  CommandResult result = runTool(arguments);
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  nlohmann::json report = nlohmann::json::parse(result.output);
  CHECK(report["samples"] == kImages);
  REQUIRE(report["outputs"].size() == 1);
  MESSAGE(name << ": build " << report["build_seconds"].get<double>() << " s, run "
               << report["run_seconds"].get<double>() << " s for " << kImages << " images");
  return cache[name] = loadNpy(report["outputs"][0]["file"].get<std::string>());
}

int interpreterCorrect() {
  static int correct = [] {
    // The graph the bundle is compiled from (import + default passes; the
    // passes also infer the output types the interpreter allocates).
    std::unique_ptr<Graph> graph = importOnnxModel(kModel, {});
    runDefaultPasses(*graph);
    Interpreter interpreter(*graph);
    const Tensor &images = fixture().images;
    const std::string &input = graph->inputs()[0]->name;
    const std::string &output = graph->outputs()[0]->name;
    size_t sampleBytes = images.bytes.size() / kImages;
    int count = 0;
    for (int i = 0; i < kImages; ++i) {
      auto first = images.bytes.begin() + std::ptrdiff_t(size_t(i) * sampleBytes);
      Tensor sample(graph->inputs()[0]->type,
                    std::vector<uint8_t>(first, first + std::ptrdiff_t(sampleBytes)));
      Tensor logits = interpreter.run({{input, sample}}).at(output);
      count += argmax(logits.data<float>()) == fixture().labels[size_t(i)];
    }
    return count;
  }();
  return correct;
}

int floatBundleCorrect() {
  static int correct = correctCount(logitsOf("host", ""));
  return correct;
}

bool haveCortexMTools() {
  return !findTool("qemu-system-arm").empty() && !findTool("arm-none-eabi-gcc").empty();
}

} // namespace

TEST_CASE("float host bundle: same top-1 as the interpreter on 1,000 Fashion-MNIST images") {
  int interp = interpreterCorrect();
  int bundle = floatBundleCorrect();
  MESSAGE("float top-1: interpreter " << interp << "/1000 (" << percent(interp)
                                      << " %), host bundle " << bundle << "/1000 ("
                                      << percent(bundle) << " %), torch " << kTorchCorrect);
  CHECK(bundle == interp);
  // The interpreter reproduces torch's accuracy (same weights, float32).
  CHECK(std::abs(interp - kTorchCorrect) <= 2);
}

TEST_CASE("int8 host bundles stay within 1.0 (asymmetric) / 2.0 (power-of-2) points of float") {
  int floatCorrect = floatBundleCorrect();
  for (auto [schema, maxDropPoints] :
       {std::pair<std::string, double>{"asymmetric", 1.0}, {"symmetric_with_power2_scale", 2.0}}) {
    CAPTURE(schema);
    int correct = correctCount(logitsOf("host", schema));
    MESSAGE("host int8 " << schema << ": " << correct << "/1000 (" << percent(correct)
                         << " %), float " << percent(floatCorrect) << " %");
    CHECK(percent(floatCorrect) - percent(correct) <= maxDropPoints);
  }
}

TEST_CASE("Cortex-M7 (QEMU mps2-an500): float top-1 as the interpreter; int8 within the bounds, "
          "logits identical to the host's" *
          doctest::test_suite("needs_qemu")) {
  if (!haveCortexMTools())
    BUNDLEFIT_SKIP_TEST("qemu-system-arm or arm-none-eabi-gcc missing");
  int floatCorrect = floatBundleCorrect();
  int m7Float = correctCount(logitsOf("cortex-m7", ""));
  MESSAGE("cortex-m7 float: " << m7Float << "/1000 (" << percent(m7Float) << " %)");
  CHECK(m7Float == interpreterCorrect());
  for (auto [schema, maxDropPoints] :
       {std::pair<std::string, double>{"asymmetric", 1.0}, {"symmetric_with_power2_scale", 2.0}}) {
    CAPTURE(schema);
    const Tensor &m7 = logitsOf("cortex-m7", schema);
    int correct = correctCount(m7);
    MESSAGE("cortex-m7 int8 " << schema << ": " << correct << "/1000 (" << percent(correct)
                              << " %), float (host) " << percent(floatCorrect) << " %");
    CHECK(percent(floatCorrect) - percent(correct) <= maxDropPoints);
    // Integer kernels: the firmware must compute exactly what the host did.
    const Tensor &host = logitsOf("host", schema);
    CHECK_MESSAGE(host.bytes == m7.bytes, "cortex-m7 int8 logits differ from the host's");
  }
}
