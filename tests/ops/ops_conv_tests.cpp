// Unit tests for the Conv / Pool / MatMul / Norm / Resize operator families:
// static type inference, MAC counts and the reference kernels, on small
// hand-computed cases.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

using namespace bundlefit;

namespace {

std::vector<uint8_t> floatBytes(const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  if (!bytes.empty()) // memcpy from an empty vector's null data() is undefined
    std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<float> iota(int64_t count, float start = 1.0f) {
  std::vector<float> values(static_cast<size_t>(count));
  std::iota(values.begin(), values.end(), start);
  return values;
}

/// One node over graph inputs and constants: infers, counts MACs, runs.
struct OneNode {
  Graph graph;
  Node *node = nullptr;
  std::map<const Value *, Tensor> feeds;
  std::vector<Value *> operands;

  Value *input(const Shape &shape, const std::vector<float> &values) {
    Value *v = graph.addInput("in" + std::to_string(operands.size()),
                              TensorType{DType::Float32, shape, {}});
    feeds[v] = Tensor::fromFloats(shape, values);
    operands.push_back(v);
    return v;
  }
  Value *constant(const Shape &shape, const std::vector<float> &values) {
    Value *v = graph.addConstant("c" + std::to_string(operands.size()),
                                 TensorType{DType::Float32, shape, {}}, floatBytes(values));
    operands.push_back(v);
    return v;
  }
  Value *constantInts(const Shape &shape, const std::vector<int64_t> &values) {
    std::vector<uint8_t> bytes(values.size() * 8);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    Value *v = graph.addConstant("c" + std::to_string(operands.size()),
                                 TensorType{DType::Int64, shape, {}}, bytes);
    operands.push_back(v);
    return v;
  }
  void omitted() { operands.push_back(nullptr); }

  Node &make(const std::string &opType, size_t numOutputs = 1) {
    std::vector<std::string> outs;
    for (size_t i = 0; i < numOutputs; ++i)
      outs.push_back("y" + std::to_string(i));
    node = graph.addNode(opType, "n", operands, outs);
    return *node;
  }
  Shape infer() {
    inferNodeTypes(*node);
    return node->output(0)->type.shape;
  }
  std::vector<float> run() {
    infer();
    std::vector<Tensor> constants;
    constants.reserve(node->inputs.size());
    std::vector<const Tensor *> args;
    for (const Value *v : node->inputs) {
      if (!v) {
        args.push_back(nullptr);
      } else if (v->isConstant()) {
        constants.emplace_back(v->type, v->data);
        args.push_back(&constants.back());
      } else {
        args.push_back(&feeds.at(v));
      }
    }
    std::vector<Tensor> results = evaluateNode(*node, args);
    const Tensor &y = results.at(0);
    return std::vector<float>(y.data<float>(), y.data<float>() + y.numElements());
  }
  uint64_t macs() { return countNodeMacs(*node); }
};

void checkClose(const std::vector<float> &got, const std::vector<float> &want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol));
  }
}

/// Runs `fn` and checks it throws Error(Unsupported) mentioning `needle`.
template <typename Fn> void expectUnsupported(Fn fn, const std::string &needle) {
  try {
    fn();
    FAIL("expected an Unsupported error mentioning " << needle);
  } catch (const Error &e) {
    CHECK(e.code() == ExitCode::Unsupported);
    INFO(e.what());
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
    CHECK(std::string(e.what()).find("node 'n'") != std::string::npos);
  }
}

} // namespace

// ---------------------------------------------------------------- Conv ------

TEST_CASE("Conv 3x3 on 4x4, bias, no padding") {
  OneNode t;
  t.input({1, 1, 4, 4}, iota(16));
  t.constant({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  t.constant({1}, {1.0f});
  t.make("Conv").attrs.setInts("kernel_shape", {3, 3});
  CHECK(t.infer() == Shape{1, 1, 2, 2});
  checkClose(t.run(), {55, 64, 91, 100});
  CHECK(t.macs() == 4 * 9);
}

TEST_CASE("Conv with pads 1 keeps 4x4, corners see 2x2 of the input") {
  OneNode t;
  t.input({1, 1, 4, 4}, iota(16));
  t.constant({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  t.make("Conv").attrs.setInts("pads", {1, 1, 1, 1});
  CHECK(t.infer() == Shape{1, 1, 4, 4});
  std::vector<float> y = t.run();
  CHECK(y[0] == 1 + 2 + 5 + 6);
  CHECK(y[3] == 3 + 4 + 7 + 8);
  CHECK(y[5] == 54); // interior = unpadded 3x3 sum
  CHECK(y[15] == 11 + 12 + 15 + 16);
}

TEST_CASE("Conv asymmetric pads and strides") {
  OneNode t;
  t.input({1, 1, 4, 4}, iota(16));
  t.constant({1, 1, 2, 2}, {1, 0, 0, 0}); // picks the window's top-left
  Node &n = t.make("Conv");
  n.attrs.setInts("pads", {1, 0, 0, 0});
  n.attrs.setInts("strides", {2, 2});
  // H: (4 + 1 - 2) / 2 + 1 = 2 ; W: (4 - 2) / 2 + 1 = 2.
  CHECK(t.infer() == Shape{1, 1, 2, 2});
  checkClose(t.run(), {0, 0, 5, 7});
}

TEST_CASE("Conv depthwise (group = channels) with channel multiplier 1") {
  OneNode t;
  // Channel 0 = 1..9, channel 1 = 10..18 (3x3 each).
  t.input({1, 2, 3, 3}, iota(18));
  t.constant({2, 1, 2, 2}, {1, 1, 1, 1, 1, 0, 0, -1});
  t.constant({2}, {0.5f, 0.0f});
  t.make("Conv").attrs.setInt("group", 2);
  CHECK(t.infer() == Shape{1, 2, 2, 2});
  // ch0: 2x2 sums + 0.5; ch1: x[i][j] - x[i+1][j+1] = -4.
  checkClose(t.run(), {12.5f, 16.5f, 24.5f, 28.5f, -4, -4, -4, -4});
  CHECK(t.macs() == 8 * 4);
}

TEST_CASE("Conv grouped: 4 in, 2 groups, 2 out") {
  OneNode t;
  t.input({1, 4, 1, 1}, {1, 2, 3, 4});
  t.constant({2, 2, 1, 1}, {1, 10, 100, 1000});
  t.make("Conv").attrs.setInt("group", 2);
  CHECK(t.infer() == Shape{1, 2, 1, 1});
  checkClose(t.run(), {1 + 20, 300 + 4000});
  CHECK(t.macs() == 2 * 2);
}

TEST_CASE("Conv dilation 2") {
  OneNode t;
  t.input({1, 1, 5, 5}, iota(25));
  t.constant({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  t.make("Conv").attrs.setInts("dilations", {2, 2});
  CHECK(t.infer() == Shape{1, 1, 1, 1});
  // Rows 0,2,4 x cols 0,2,4 of 1..25.
  checkClose(t.run(), {1 + 3 + 5 + 11 + 13 + 15 + 21 + 23 + 25});
}

TEST_CASE("Conv 1D auto_pad SAME_UPPER vs SAME_LOWER vs VALID") {
  for (std::string mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    OneNode t;
    t.input({1, 1, 4}, {1, 2, 3, 4});
    t.constant({1, 1, 2}, {1, 10});
    t.make("Conv").attrs.setString("auto_pad", mode);
    std::vector<float> y = t.run();
    if (mode == "SAME_UPPER")
      checkClose(y, {21, 32, 43, 4});
    else if (mode == "SAME_LOWER")
      checkClose(y, {10, 21, 32, 43});
    else
      checkClose(y, {21, 32, 43});
  }
}

TEST_CASE("Conv SAME_UPPER with stride 2 on 5x5 -> 3x3") {
  OneNode t;
  t.input({1, 1, 5, 5}, iota(25));
  t.constant({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  Node &n = t.make("Conv");
  n.attrs.setString("auto_pad", "SAME_UPPER");
  n.attrs.setInts("strides", {2, 2});
  CHECK(t.infer() == Shape{1, 1, 3, 3});
  std::vector<float> y = t.run();
  CHECK(y[0] == 1 + 2 + 6 + 7); // pad 1 at the top-left
  CHECK(y[4] == 7 + 8 + 9 + 12 + 13 + 14 + 17 + 18 + 19);
}

TEST_CASE("Conv 3D") {
  OneNode t;
  t.input({1, 1, 2, 2, 2}, iota(8));
  t.constant({1, 1, 2, 2, 2}, std::vector<float>(8, 1.0f));
  t.make("Conv");
  CHECK(t.infer() == Shape{1, 1, 1, 1, 1});
  checkClose(t.run(), {36});
}

TEST_CASE("Conv fused activations") {
  struct Case {
    std::string act;
    std::vector<float> want;
  };
  // Identity 1x1 conv over [-8, -1, 0.5, 8].
  std::vector<Case> cases = {
      {"Relu", {0, 0, 0.5f, 8}},
      {"Clip", {-1, -1, 0.5f, 6}},
      {"LeakyRelu", {-0.8f, -0.1f, 0.5f, 8}},
      {"Sigmoid",
       {float(1 / (1 + std::exp(8.0))), float(1 / (1 + std::exp(1.0))),
        float(1 / (1 + std::exp(-0.5))), float(1 / (1 + std::exp(-8.0)))}},
      {"Tanh", {std::tanh(-8.0f), std::tanh(-1.0f), std::tanh(0.5f), std::tanh(8.0f)}},
      {"HardSigmoid", {0, 0.3f, 0.6f, 1}},
      {"HardSwish", {0, -1 * (1 / 3.0f), 0.5f * (0.5f / 6 + 0.5f), 8}},
  };
  for (const Case &c : cases) {
    INFO(c.act);
    OneNode t;
    t.input({1, 1, 2, 2}, {-8, -1, 0.5f, 8});
    t.constant({1, 1, 1, 1}, {1});
    Node &n = t.make("Conv");
    n.attrs.setString("activation", c.act);
    if (c.act == "Clip") {
      n.attrs.setFloat("activation_min", -1);
      n.attrs.setFloat("activation_max", 6);
    }
    if (c.act == "LeakyRelu")
      n.attrs.setFloat("activation_alpha", 0.1f);
    checkClose(t.run(), c.want);
  }
}

TEST_CASE("Conv errors name the attribute") {
  {
    OneNode t;
    t.input({1, 3, 4, 4}, iota(48));
    t.constant({2, 1, 1, 1}, {1, 1});
    t.make("Conv").attrs.setInt("group", 2);
    expectUnsupported([&] { t.infer(); }, "'group'");
  }
  {
    OneNode t;
    t.input({1, 1, 4, 4}, iota(16));
    t.constant({1, 1, 1, 1}, {1});
    t.make("Conv").attrs.setString("auto_pad", "SAME_MIDDLE");
    expectUnsupported([&] { t.infer(); }, "'auto_pad'");
  }
  {
    OneNode t;
    t.input({1, 1, 4, 4}, iota(16));
    t.constant({1, 1, 1, 1}, {1});
    t.make("Conv").attrs.setString("activation", "Gelu");
    expectUnsupported([&] { t.infer(); }, "'activation'");
  }
  {
    OneNode t;
    t.input({1, 1, 4, 4}, iota(16));
    t.constant({1, 1, 3, 3}, std::vector<float>(9, 1));
    t.make("Conv").attrs.setInts("kernel_shape", {2, 2});
    expectUnsupported([&] { t.infer(); }, "'kernel_shape'");
  }
}

// ------------------------------------------------------- ConvTranspose ------

TEST_CASE("ConvTranspose 1D stride 1 and 2, pads, output_padding, output_shape") {
  auto run = [](auto configure) {
    OneNode t;
    t.input({1, 1, 3}, {1, 2, 3});
    t.constant({1, 1, 3}, {1, 1, 1});
    configure(t.make("ConvTranspose"));
    return t.run();
  };
  checkClose(run([](Node &) {}), {1, 3, 6, 5, 3});
  checkClose(run([](Node &n) { n.attrs.setInts("strides", {2}); }), {1, 1, 3, 2, 5, 3, 3});
  checkClose(run([](Node &n) {
               n.attrs.setInts("strides", {2});
               n.attrs.setInts("pads", {1, 1});
             }),
             {1, 3, 2, 5, 3});
  checkClose(run([](Node &n) {
               n.attrs.setInts("strides", {2});
               n.attrs.setInts("output_padding", {1});
             }),
             {1, 1, 3, 2, 5, 3, 3, 0});
  // output_shape 6 of the full 7: NOTSET puts the odd pad at the start.
  checkClose(run([](Node &n) {
               n.attrs.setInts("strides", {2});
               n.attrs.setInts("output_shape", {6});
             }),
             {1, 3, 2, 5, 3, 3});
  // SAME_UPPER: output = in * stride = 6, the odd pad at the end.
  checkClose(run([](Node &n) {
               n.attrs.setInts("strides", {2});
               n.attrs.setString("auto_pad", "SAME_UPPER");
             }),
             {1, 1, 3, 2, 5, 3});
}

TEST_CASE("ConvTranspose 2D groups, bias, MACs") {
  OneNode t;
  t.input({1, 2, 1, 1}, {1, 2});
  // W [C=2, M/group=1, 2, 2].
  t.constant({2, 1, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  t.constant({2}, {0.5f, -0.5f});
  t.make("ConvTranspose").attrs.setInt("group", 2);
  CHECK(t.infer() == Shape{1, 2, 2, 2});
  checkClose(t.run(), {1.5f, 2.5f, 3.5f, 4.5f, 19.5f, 39.5f, 59.5f, 79.5f});
  CHECK(t.macs() == 2 * 4);
}

// ---------------------------------------------------------------- Pools -----

TEST_CASE("MaxPool 1D floor vs ceil_mode, dilations") {
  auto run = [](auto configure) {
    OneNode t;
    t.input({1, 1, 5}, {1, 5, 2, 4, 3});
    Node &n = t.make("MaxPool");
    n.attrs.setInts("kernel_shape", {2});
    n.attrs.setInts("strides", {2});
    configure(n);
    return t.run();
  };
  checkClose(run([](Node &) {}), {5, 4});
  checkClose(run([](Node &n) { n.attrs.setInt("ceil_mode", 1); }), {5, 4, 3});
  {
    OneNode t;
    t.input({1, 1, 6}, {6, 1, 5, 2, 4, 3});
    Node &n = t.make("MaxPool");
    n.attrs.setInts("kernel_shape", {2});
    n.attrs.setInts("dilations", {2});
    checkClose(t.run(), {6, 2, 5, 3});
    CHECK(t.macs() == 0);
  }
}

TEST_CASE("MaxPool 2D pads and ceil_mode drop windows starting in the padding") {
  {
    OneNode t;
    t.input({1, 1, 4, 4}, iota(16));
    Node &n = t.make("MaxPool");
    n.attrs.setInts("kernel_shape", {3, 3});
    n.attrs.setInts("strides", {2, 2});
    n.attrs.setInts("pads", {1, 1, 1, 1});
    n.attrs.setInt("ceil_mode", 1);
    // (4 + 2 - 3) / 2 = 1.5 -> ceil 2, + 1 = 3 windows starting at -1, 1, 3.
    CHECK(t.infer() == Shape{1, 1, 3, 3});
    checkClose(t.run(), {6, 8, 8, 14, 16, 16, 14, 16, 16});
  }
  {
    OneNode t;
    t.input({1, 1, 5, 5}, iota(25));
    Node &n = t.make("MaxPool");
    n.attrs.setInts("kernel_shape", {2, 2});
    n.attrs.setInts("strides", {2, 2});
    n.attrs.setInts("pads", {1, 1, 1, 1});
    n.attrs.setInt("ceil_mode", 1);
    // (5 + 2 - 2) / 2 = 2.5 -> ceil 3, + 1 = 4, but the 4th window would
    // start at 5, inside the end padding: dropped.
    CHECK(t.infer() == Shape{1, 1, 3, 3});
    checkClose(t.run(), {1, 3, 5, 11, 13, 15, 21, 23, 25});
  }
}

TEST_CASE("MaxPool Indices output and storage_order are unsupported") {
  OneNode t;
  t.input({1, 1, 4, 4}, iota(16));
  t.make("MaxPool", 2).attrs.setInts("kernel_shape", {2, 2});
  expectUnsupported([&] { t.infer(); }, "Indices");
}

TEST_CASE("AveragePool count_include_pad and ceil_mode") {
  auto run = [](int countPad) {
    OneNode t;
    t.input({1, 1, 3}, {1, 2, 3});
    Node &n = t.make("AveragePool");
    n.attrs.setInts("kernel_shape", {3});
    n.attrs.setInts("pads", {1, 1});
    n.attrs.setInt("count_include_pad", countPad);
    return t.run();
  };
  checkClose(run(0), {1.5f, 2, 2.5f});
  checkClose(run(1), {1, 2, 5 / 3.0f});

  OneNode t;
  t.input({1, 1, 5}, {1, 5, 2, 4, 3});
  Node &n = t.make("AveragePool");
  n.attrs.setInts("kernel_shape", {2});
  n.attrs.setInts("strides", {2});
  n.attrs.setInt("ceil_mode", 1);
  checkClose(t.run(), {3, 3, 3}); // the last window holds only the 3
}

TEST_CASE("AveragePool 2D SAME_LOWER") {
  OneNode t;
  t.input({1, 1, 2, 2}, {1, 2, 3, 4});
  Node &n = t.make("AveragePool");
  n.attrs.setInts("kernel_shape", {2, 2});
  n.attrs.setString("auto_pad", "SAME_LOWER");
  CHECK(t.infer() == Shape{1, 1, 2, 2});
  checkClose(t.run(), {1, 1.5f, 2, 2.5f});
}

TEST_CASE("GlobalAveragePool and GlobalMaxPool") {
  for (std::string op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    OneNode t;
    t.input({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -8});
    t.make(op);
    CHECK(t.infer() == Shape{1, 2, 1, 1});
    checkClose(t.run(),
               op == "GlobalMaxPool" ? std::vector<float>{4, -1} : std::vector<float>{2.5f, -3.5f});
  }
}

// ---------------------------------------------------------- Gemm/MatMul -----

TEST_CASE("Gemm transB, alpha, beta, C row broadcast") {
  OneNode t;
  t.input({2, 3}, {1, 2, 3, 4, 5, 6});
  t.constant({2, 3}, {1, 0, 1, 0, 1, 0}); // [N,K]
  t.constant({2}, {1, 2});
  Node &n = t.make("Gemm");
  n.attrs.setInt("transB", 1);
  n.attrs.setFloat("alpha", 2);
  n.attrs.setFloat("beta", 0.5f);
  CHECK(t.infer() == Shape{2, 2});
  // A B^T = [[4,2],[10,5]].
  checkClose(t.run(), {8.5f, 5, 20.5f, 11});
  CHECK(t.macs() == 2 * 2 * 3);
}

TEST_CASE("Gemm transA, C column broadcast, no C, scalar C") {
  {
    OneNode t;
    t.input({3, 2}, {1, 4, 2, 5, 3, 6}); // A^T of [[1,2,3],[4,5,6]]
    t.constant({3, 2}, {1, 0, 0, 1, 1, 0});
    t.constant({2, 1}, {10, 20});
    t.make("Gemm").attrs.setInt("transA", 1);
    checkClose(t.run(), {14, 12, 30, 25});
  }
  {
    OneNode t;
    t.input({1, 2}, {1, 2});
    t.constant({2, 1}, {3, 4});
    t.make("Gemm");
    checkClose(t.run(), {11});
  }
  {
    OneNode t;
    t.input({1, 2}, {1, 2});
    t.constant({2, 1}, {3, 4});
    t.constant({}, {-1});
    t.make("Gemm").attrs.setString("activation", "Relu");
    checkClose(t.run(), {10});
  }
  {
    OneNode t;
    t.input({2, 2}, {1, 2, 3, 4});
    t.constant({2, 2}, {1, 2, 3, 4});
    t.constant({3}, {1, 2, 3});
    t.make("Gemm");
    expectUnsupported([&] { t.infer(); }, "input C");
  }
}

TEST_CASE("MatMul batch broadcasting") {
  OneNode t;
  // A [2,1,2,2], B [3,2,2]; B[j] = (j+1) * I.
  t.input({2, 1, 2, 2}, iota(8));
  t.constant({3, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2, 3, 0, 0, 3});
  t.make("MatMul");
  CHECK(t.infer() == Shape{2, 3, 2, 2});
  std::vector<float> y = t.run();
  std::vector<float> want;
  for (int a = 0; a < 2; ++a)
    for (int j = 1; j <= 3; ++j)
      for (int e = 0; e < 4; ++e)
        want.push_back(float((a * 4 + e + 1) * j));
  checkClose(y, want);
  CHECK(t.macs() == 24 * 2);
}

TEST_CASE("MatMul 1-D operands follow numpy") {
  {
    OneNode t;
    t.input({3}, {1, 2, 3});
    t.constant({3, 2}, {1, 0, 0, 1, 1, 1});
    t.make("MatMul");
    CHECK(t.infer() == Shape{2});
    checkClose(t.run(), {4, 5});
  }
  {
    OneNode t;
    t.input({2, 3}, {1, 2, 3, 4, 5, 6});
    t.constant({3}, {1, 1, 1});
    t.make("MatMul");
    CHECK(t.infer() == Shape{2});
    checkClose(t.run(), {6, 15});
  }
  {
    OneNode t;
    t.input({3}, {1, 2, 3});
    t.constant({3}, {4, 5, 6});
    t.make("MatMul");
    CHECK(t.infer() == Shape{});
    checkClose(t.run(), {32});
  }
  {
    OneNode t;
    t.input({2, 3}, {1, 2, 3, 4, 5, 6});
    t.constant({2, 3}, {1, 2, 3, 4, 5, 6});
    t.make("MatMul");
    expectUnsupported([&] { t.infer(); }, "inner dimensions");
  }
}

// ------------------------------------------------------------- Norm ---------

TEST_CASE("BatchNormalization inference") {
  OneNode t;
  t.input({1, 2, 1, 2}, {1, 2, 3, 4});
  t.constant({2}, {1, 2}); // scale
  t.constant({2}, {0, 1}); // B
  t.constant({2}, {1, 3}); // mean
  t.constant({2}, {4, 1}); // var
  t.make("BatchNormalization").attrs.setFloat("epsilon", 0);
  CHECK(t.infer() == Shape{1, 2, 1, 2});
  checkClose(t.run(), {0, 0.5f, 1, 3});
  CHECK(t.macs() == 4);
}

TEST_CASE("BatchNormalization training outputs are unsupported") {
  OneNode t;
  t.input({1, 1, 1, 1}, {1});
  for (int i = 0; i < 4; ++i)
    t.constant({1}, {1});
  t.make("BatchNormalization", 3);
  expectUnsupported([&] { t.infer(); }, "output 1");
}

TEST_CASE("Softmax axis=-1 vs coerce_to_2d") {
  const float ln3 = std::log(3.0f);
  {
    OneNode t;
    t.input({1, 2, 2}, {0, 0, 0, ln3});
    t.make("Softmax");
    checkClose(t.run(), {0.5f, 0.5f, 0.25f, 0.75f});
  }
  {
    OneNode t;
    t.input({1, 2, 2}, {0, 0, 0, ln3});
    t.make("Softmax").attrs.setInt("coerce_to_2d", 1); // axis defaults to 1
    checkClose(t.run(), {1 / 6.0f, 1 / 6.0f, 1 / 6.0f, 0.5f});
  }
  {
    OneNode t;
    t.input({1, 2, 2}, {0, 0, 0, ln3});
    t.make("Softmax").attrs.setInt("axis", 1); // opset 13: over dim 1 only
    checkClose(t.run(), {0.5f, 0.25f, 0.5f, 0.75f});
  }
  {
    OneNode t;
    t.input({1, 2, 2}, {0, 0, 0, ln3});
    Node &n = t.make("LogSoftmax");
    n.attrs.setInt("coerce_to_2d", 1);
    n.attrs.setInt("axis", 0);
    checkClose(t.run(), {-std::log(6.0f), -std::log(6.0f), -std::log(6.0f), -std::log(2.0f)});
  }
  {
    OneNode t;
    t.input({1, 2, 2}, {1000, 0, 0, 1000}); // large values must not overflow
    t.make("Softmax");
    checkClose(t.run(), {1, 0, 0, 1});
  }
  {
    OneNode t;
    t.input({1, 2, 2}, {0, 0, 0, 0});
    t.make("Softmax").attrs.setInt("axis", 3);
    expectUnsupported([&] { t.infer(); }, "'axis'");
  }
}

// ------------------------------------------------------------ Resize --------

TEST_CASE("Resize nearest asymmetric x2 via scales") {
  OneNode t;
  t.input({1, 1, 2, 2}, {1, 2, 3, 4});
  t.omitted();
  t.constant({4}, {1, 1, 2, 2});
  Node &n = t.make("Resize");
  n.attrs.setString("coordinate_transformation_mode", "asymmetric");
  n.attrs.setString("nearest_mode", "floor");
  CHECK(t.infer() == Shape{1, 1, 4, 4});
  checkClose(t.run(), {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST_CASE("Resize nearest half_pixel round_prefer_floor vs ceil") {
  // 1 -> 3 elements of [0, 10] at x = (o + 0.5) * 2/3 - 0.5: -0.167, 0.5, 1.167.
  for (std::string mode : {"round_prefer_floor", "round_prefer_ceil"}) {
    OneNode t;
    t.input({1, 2}, {0, 10});
    t.constant({0}, {});
    t.omitted();
    t.constantInts({2}, {1, 3});
    t.make("Resize").attrs.setString("nearest_mode", mode);
    CHECK(t.infer() == Shape{1, 3});
    checkClose(t.run(), mode == "round_prefer_floor" ? std::vector<float>{0, 0, 10}
                                                     : std::vector<float>{0, 10, 10});
  }
}

TEST_CASE("Resize linear half_pixel and align_corners") {
  {
    OneNode t;
    t.input({1, 1, 1, 2}, {0, 10});
    t.omitted();
    t.constant({4}, {1, 1, 1, 2});
    t.make("Resize").attrs.setString("mode", "linear");
    checkClose(t.run(), {0, 2.5f, 7.5f, 10});
  }
  {
    OneNode t;
    t.input({1, 1, 2, 2}, {0, 10, 20, 30});
    t.omitted();
    t.omitted();
    t.constantInts({4}, {1, 1, 3, 3});
    Node &n = t.make("Resize");
    n.attrs.setString("mode", "linear");
    n.attrs.setString("coordinate_transformation_mode", "align_corners");
    checkClose(t.run(), {0, 5, 10, 10, 15, 20, 20, 25, 30});
  }
}

TEST_CASE("Resize errors") {
  {
    OneNode t;
    t.input({1, 1, 2, 2}, {1, 2, 3, 4});
    t.omitted();
    t.constant({4}, {1, 1, 2, 2});
    t.make("Resize").attrs.setString("mode", "cubic");
    expectUnsupported([&] { t.infer(); }, "'mode'");
  }
  {
    OneNode t;
    t.input({1, 1, 2, 2}, {1, 2, 3, 4});
    t.omitted();
    t.input({4}, {1, 1, 2, 2});
    t.make("Resize");
    expectUnsupported([&] { t.infer(); }, "'scales'");
  }
  {
    OneNode t;
    t.input({1, 1, 2, 2}, {1, 2, 3, 4});
    t.omitted();
    t.constant({4}, {1, 1, 2, 2});
    t.make("Resize").attrs.setString("coordinate_transformation_mode", "banana");
    expectUnsupported([&] { t.infer(); }, "'coordinate_transformation_mode'");
  }
}

TEST_CASE("ConvTranspose output_shape beyond the full output adds bias-only elements") {
  OneNode t;
  t.input({1, 1, 3}, {1, 2, 3});
  t.constant({1, 1, 3}, {1, 1, 1});
  t.constant({1}, {1});
  Node &n = t.make("ConvTranspose");
  n.attrs.setInts("strides", {2});
  n.attrs.setInts("output_shape", {8});
  CHECK(t.infer() == Shape{1, 1, 8});
  checkClose(t.run(), {2, 2, 4, 3, 6, 4, 4, 1});
}

TEST_CASE("Resize linear tf_crop_and_resize extrapolates outside the roi") {
  OneNode t;
  t.input({1, 4}, {0, 10, 20, 30});
  t.constant({4}, {0, 0.5f, 1, 1.5f}); // roi: starts then ends
  t.omitted();
  t.constantInts({2}, {1, 3});
  Node &n = t.make("Resize");
  n.attrs.setString("mode", "linear");
  n.attrs.setString("coordinate_transformation_mode", "tf_crop_and_resize");
  n.attrs.setFloat("extrapolation_value", 7);
  // x = 1.5 + 1.5 * o: 1.5, 3, 4.5 (outside [0, 3]).
  checkClose(t.run(), {15, 30, 7});
}

TEST_CASE("Resize tf_crop_and_resize needs a constant roi") {
  OneNode t;
  t.input({1, 4}, {0, 10, 20, 30});
  t.input({4}, {0, 0.5f, 1, 1.5f});
  t.omitted();
  t.constantInts({2}, {1, 3});
  t.make("Resize").attrs.setString("coordinate_transformation_mode", "tf_crop_and_resize");
  expectUnsupported([&] { t.infer(); }, "'roi'");
}
