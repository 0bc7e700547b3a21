//===- QuantizeGraphTests.cpp - The int8 rewrite of Caffe LeNet ------------===//
//
// LeNet (tests/models) profiled on random inputs, then quantized; the tests
// check the graph the contract (docs/quantized-ir.md) promises.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/quant/QuantizeGraph.h"

#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/support/Error.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

using namespace bundlefit;

namespace {

const std::string kLenet = std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.onnx";

std::unique_ptr<Graph> loadLenet() {
  std::unique_ptr<Graph> graph = importOnnxModel(kLenet, {});
  runDefaultPasses(*graph);
  return graph;
}

ProfileData profileLenet(const Graph &graph) {
  ProfileRecorder recorder;
  Interpreter interpreter(graph);
  interpreter.setObserver(
      [&](const Value &value, const Tensor &tensor) { recorder.observe(value.name, tensor); });
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  for (int sample = 0; sample < 3; ++sample) {
    std::vector<float> values(784);
    for (float &v : values)
      v = pixel(rng);
    interpreter.run({{"data", Tensor::fromFloats({1, 1, 28, 28}, values)}});
    recorder.finishSample();
  }
  return recorder.result(hashModelFile(kLenet), "lenet.onnx");
}

int countOps(const Graph &graph, const std::string &op) {
  int count = 0;
  for (const Node *node : graph.nodes())
    count += node->opType == op;
  return count;
}

} // namespace

TEST_CASE("LeNet: every node int8, one Quantize at the input, one Dequantize at the output") {
  std::unique_ptr<Graph> graph = loadLenet();
  ProfileData profile = profileLenet(*graph);
  QuantizationSummary summary = quantizeGraph(*graph, profile, {}, "lenet.yaml");
  CHECK(summary.floatNodes == 0);
  CHECK(summary.int8Nodes == 8);
  CHECK(summary.quantizeNodes == 1);
  CHECK(summary.dequantizeNodes == 1);
  CHECK(countOps(*graph, "Quantize") == 1);
  CHECK(countOps(*graph, "Dequantize") == 1);

  // Inputs and outputs stay float under their names.
  REQUIRE(graph->inputs().size() == 1);
  CHECK(graph->inputs()[0]->type.dtype == DType::Float32);
  REQUIRE(graph->outputs().size() == 1);
  const Value &output = *graph->outputs()[0];
  CHECK(output.name == "softmax");
  CHECK(output.type.dtype == DType::Float32);
  CHECK(output.producer->opType == "Dequantize");

  const Value &conv1 = *graph->findValue("conv1");
  CHECK(conv1.type.dtype == DType::Int8);
  REQUIRE(conv1.type.quant.scales.size() == 1);
  const TensorProfile &conv1Range = *profile.find("conv1");
  ScaleZeroPoint expected =
      chooseQuantParams(conv1Range.min, conv1Range.max, QuantSchema::Asymmetric);
  CHECK(conv1.type.quant.scales[0] == expected.scale);
  CHECK(conv1.type.quant.zeroPoints[0] == expected.zeroPoint);

  // MaxPool and views reuse their input's parameters; Softmax uses 1/256, -128.
  const Value &pool1 = *graph->findValue("pool1");
  CHECK(pool1.type.dtype == DType::Int8);
  CHECK(pool1.type.quant.scales == conv1.type.quant.scales);
  CHECK(pool1.type.quant.zeroPoints == conv1.type.quant.zeroPoints);
  const Value &flatten = *graph->findValue("flatten");
  CHECK(flatten.type.quant.scales == graph->findValue("pool2")->type.quant.scales);
  const Value &softmaxInt8 = *graph->findValue("softmax_int8");
  CHECK(softmaxInt8.type.dtype == DType::Int8);
  CHECK(softmaxInt8.type.quant.scales[0] == 1.0f / 256.0f);
  CHECK(softmaxInt8.type.quant.zeroPoints[0] == -128);

  // fc1's fused Relu: the profiled range starts at 0, so its zero point is -128.
  const Value &fc1 = *graph->findNode("fc1")->output(); // value "relu1"
  CHECK(fc1.type.quant.zeroPoints[0] == -128);
}

TEST_CASE("LeNet weights: symmetric int8 in [-127,127]; Int32 bias at input*weight scale") {
  std::unique_ptr<Graph> graph = loadLenet();
  std::vector<float> floatWeights = graph->findValue("conv1.weight")
                                        ? graph->findValue("conv1.weight")->toFloats()
                                        : std::vector<float>{};
  ProfileData profile = profileLenet(*graph);
  quantizeGraph(*graph, profile, {}, "lenet.yaml");
  const Node &conv1 = *graph->findNode("conv1");
  const Value &x = *conv1.input(0);
  const Value &w = *conv1.input(1);
  const Value &b = *conv1.input(2);
  CHECK(x.type.dtype == DType::Int8);
  CHECK(x.producer->opType == "Quantize");
  CHECK(w.isConstant());
  CHECK(w.type.dtype == DType::Int8);
  REQUIRE(w.type.quant.scales.size() == 1);
  CHECK(w.type.quant.zeroPoints[0] == 0);
  CHECK(w.type.quant.axis == -1);
  int maxAbs = 0;
  for (int64_t i = 0; i < w.type.numElements(); ++i)
    maxAbs = std::max(maxAbs, std::abs(int(w.dataAs<int8_t>()[i])));
  CHECK(maxAbs == 127); // the largest weight uses the full range
  CHECK(b.type.dtype == DType::Int32);
  CHECK(b.type.shape == Shape{20});
  REQUIRE(b.type.quant.scales.size() == 1);
  CHECK(b.type.quant.scales[0] ==
        doctest::Approx(double(x.type.quant.scales[0]) * double(w.type.quant.scales[0])));
  if (!floatWeights.empty()) { // in place: the weight keeps its name
    CHECK(w.name == "conv1.weight");
    for (size_t i = 0; i < floatWeights.size(); ++i)
      CHECK(std::abs(floatWeights[i] - w.type.quant.scales[0] * w.dataAs<int8_t>()[i]) <=
            w.type.quant.scales[0] * 0.5f + 1e-7f);
  }
}

TEST_CASE("channelwise: one weight scale per output channel (Conv axis 0, Gemm axis 1)") {
  std::unique_ptr<Graph> graph = loadLenet();
  ProfileData profile = profileLenet(*graph);
  QuantizationOptions options;
  options.channelwise = true;
  quantizeGraph(*graph, profile, options, "lenet.yaml");
  const Node &conv2 = *graph->findNode("conv2");
  CHECK(conv2.input(1)->type.quant.scales.size() == 50);
  CHECK(conv2.input(1)->type.quant.axis == 0);
  CHECK(conv2.input(2)->type.quant.scales.size() == 50);
  const Node &fc2 = *graph->findNode("fc2");
  const Value &b = *fc2.input(1);
  int axis = fc2.attrs.getInt("transB", 0) ? 0 : 1;
  CHECK(b.type.quant.axis == axis);
  CHECK(b.type.quant.scales.size() == 10);
  CHECK(fc2.input(2)->type.shape == Shape{10});
}

TEST_CASE("power2 schema with Int8 bias: power-of-two scales everywhere, int8 bias") {
  std::unique_ptr<Graph> graph = loadLenet();
  ProfileData profile = profileLenet(*graph);
  QuantizationOptions options;
  options.schema = QuantSchema::SymmetricWithPower2Scale;
  options.biasPrecision = BiasPrecision::Int8;
  quantizeGraph(*graph, profile, options, "lenet.yaml");
  for (const Node *node : graph->nodes())
    for (const Value *value : node->inputs) {
      if (!value || value->type.dtype == DType::Float32 || value->type.quant.empty())
        continue;
      CAPTURE(value->name);
      for (float scale : value->type.quant.scales)
        CHECK(isPowerOfTwo(scale));
      if (node->opType != "Dequantize" && value->name != "softmax_int8")
        for (int32_t zp : value->type.quant.zeroPoints)
          CHECK(zp == 0);
    }
  const Node &fc1 = *graph->findNode("fc1");
  CHECK(fc1.input(2)->type.dtype == DType::Int8);
  CHECK(fc1.input(2)->type.shape == Shape{500});
}

TEST_CASE("kept-float kinds get Dequantize/Quantize around them; type inference keeps quant") {
  std::unique_ptr<Graph> graph = loadLenet();
  ProfileData profile = profileLenet(*graph);
  QuantizationOptions options;
  options.keepFloatOps = {"Softmax", "MaxPool"};
  QuantizationSummary summary = quantizeGraph(*graph, profile, options, "lenet.yaml");
  CHECK(summary.keptFloat.size() == 3);
  CHECK(graph->findNode("softmax")->opType == "Softmax");
  CHECK(graph->findValue("softmax")->type.dtype == DType::Float32);
  CHECK(graph->findValue("pool1")->type.dtype == DType::Float32);
  CHECK(graph->findValue("conv2")->type.dtype == DType::Int8);
  // conv1 -> Dequantize -> pool1 (float) -> Quantize -> conv2 -> Dequantize -> pool2 ...
  CHECK(countOps(*graph, "Quantize") == 3);
  CHECK(countOps(*graph, "Dequantize") == 3);

  // Re-running inference on the quantized graph changes nothing.
  std::map<std::string, TensorType> before;
  for (const Node *node : graph->nodes())
    before[node->output()->name] = node->output()->type;
  inferGraphTypes(*graph);
  for (const Node *node : graph->nodes()) {
    const TensorType &type = node->output()->type;
    const TensorType &old = before[node->output()->name];
    CAPTURE(node->name);
    CHECK(type.dtype == old.dtype);
    CHECK(type.shape == old.shape);
    CHECK(type.quant.scales == old.quant.scales);
    CHECK(type.quant.zeroPoints == old.quant.zeroPoints);
  }
}

TEST_CASE("a profile without a needed tensor is a BadInputFile error naming it") {
  std::unique_ptr<Graph> graph = loadLenet();
  ProfileData profile = profileLenet(*graph);
  profile.tensors.erase(std::remove_if(profile.tensors.begin(), profile.tensors.end(),
                                       [](const TensorProfile &t) { return t.name == "conv2"; }),
                        profile.tensors.end());
  try {
    quantizeGraph(*graph, profile, {}, "p.yaml");
    FAIL("expected an error");
  } catch (const Error &e) {
    CHECK(e.code() == ExitCode::BadInputFile);
    CHECK(std::string(e.what()).find("p.yaml: no range recorded for tensor 'conv2'") == 0);
  }
}

TEST_CASE("Glow and ONNX kind names for --keep-original-precision-for-nodes") {
  CHECK(opTypeForKindName("FullyConnected") == "Gemm");
  CHECK(opTypeForKindName("Convolution") == "Conv");
  CHECK(opTypeForKindName("SoftMax") == "Softmax");
  CHECK(opTypeForKindName("avgpool") == "AveragePool");
  CHECK(opTypeForKindName("Add") == "Add");
  CHECK(opTypeForKindName("Frobnicate") == "");
}
