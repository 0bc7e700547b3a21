// Unit tests for the Elementwise / Shape / Reduce operator families: static
// type inference, MAC counts and the reference kernels, on small
// hand-computed cases.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>

using namespace bundlefit;

namespace {

template <typename T> std::vector<uint8_t> bytesOf(const std::vector<T> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty())
    std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<float> iota(int64_t count, float start = 0.0f) {
  std::vector<float> v(static_cast<size_t>(count));
  std::iota(v.begin(), v.end(), start);
  return v;
}

/// One node over constants (and optionally graph inputs): infer, count, run.
struct OneNode {
  Graph graph;
  Node *node = nullptr;
  std::vector<Value *> operands;
  std::map<const Value *, Tensor> feeds;

  template <typename T> Value *constant(DType dtype, const Shape &shape, const std::vector<T> &v) {
    REQUIRE(int64_t(v.size()) == numElements(shape));
    Value *value = graph.addConstant("c" + std::to_string(operands.size()),
                                     TensorType{dtype, shape, {}}, bytesOf(v));
    operands.push_back(value);
    return value;
  }
  Value *f32(const Shape &shape, const std::vector<float> &v) {
    return constant(DType::Float32, shape, v);
  }
  Value *i64(const Shape &shape, const std::vector<int64_t> &v) {
    return constant(DType::Int64, shape, v);
  }
  Value *i32(const Shape &shape, const std::vector<int32_t> &v) {
    return constant(DType::Int32, shape, v);
  }
  Value *u8(DType dtype, const Shape &shape, const std::vector<uint8_t> &v) {
    return constant(dtype, shape, v);
  }
  /// A graph input (not a constant) fed with `tensor` when run.
  Value *input(const Tensor &tensor) {
    Value *value = graph.addInput("in" + std::to_string(operands.size()), tensor.type);
    feeds[value] = tensor;
    operands.push_back(value);
    return value;
  }
  void omitted() { operands.push_back(nullptr); }

  Node &make(const std::string &op, size_t outputs = 1) {
    std::vector<std::string> names;
    for (size_t i = 0; i < outputs; ++i)
      names.push_back("out" + std::to_string(i));
    node = graph.addNode(op, op + "_0", operands, names);
    return *node;
  }
  void infer() { inferNodeTypes(*node); }
  const TensorType &type(size_t i = 0) const { return node->outputs[i]->type; }
  uint64_t macs() const { return countNodeMacs(*node); }
  std::vector<Tensor> run() {
    infer();
    std::vector<Tensor> storage;
    storage.reserve(node->inputs.size());
    std::vector<const Tensor *> args;
    for (const Value *v : node->inputs) {
      if (!v) {
        args.push_back(nullptr);
        continue;
      }
      storage.push_back(v->isConstant() ? Tensor(v->type, v->data) : feeds.at(v));
      args.push_back(nullptr);
    }
    for (size_t i = 0, k = 0; i < node->inputs.size(); ++i)
      if (node->inputs[i])
        args[i] = &storage[k++];
    return evaluateNode(*node, args);
  }
};

template <typename T> std::vector<T> values(const Tensor &t) {
  REQUIRE(t.bytes.size() == size_t(t.numElements()) * sizeof(T));
  std::vector<T> out(size_t(t.numElements()));
  if (!out.empty())
    std::memcpy(out.data(), t.bytes.data(), t.bytes.size());
  return out;
}

void checkFloats(const Tensor &t, const std::vector<float> &expected, float tol = 1e-6f) {
  REQUIRE(t.type.dtype == DType::Float32);
  std::vector<float> got = values<float>(t);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(std::fabs(got[i] - expected[i]) <= tol,
                  "element " << i << ": got " << got[i] << ", expected " << expected[i]);
}

/// Runs `fn` expecting an Error with `code` whose message contains `needle`.
template <typename F> void expectError(F fn, ExitCode code, const std::string &needle) {
  try {
    fn();
    FAIL("expected an error mentioning '" << needle << "'");
  } catch (const Error &e) {
    CHECK(e.code() == code);
    CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos, e.what());
  }
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

} // namespace

// ---------------------------------------------------------------- Elementwise

TEST_CASE("Add broadcasts [2,3,1] + [1,4] to [2,3,4]") {
  OneNode t;
  t.f32({2, 3, 1}, iota(6));                  // a[i][j] = 3i + j
  t.f32({1, 4}, {0.0f, 10.0f, 20.0f, 30.0f}); // b[k] = 10k
  t.make("Add");
  std::vector<Tensor> out = t.run();
  CHECK(t.type().str() == "float32[2,3,4]");
  CHECK(t.macs() == 24); // one per output element
  std::vector<float> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        expected.push_back(float(3 * i + j + 10 * k));
  checkFloats(out[0], expected);
}

TEST_CASE("Sub, Mul, Div on float with a scalar operand") {
  for (const char *op : {"Sub", "Mul", "Div"}) {
    OneNode t;
    t.f32({2, 2}, {1, 2, 3, 4});
    t.f32({}, {2});
    t.make(op);
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[2,2]");
    if (std::string(op) == "Sub")
      checkFloats(out[0], {-1, 0, 1, 2});
    else if (std::string(op) == "Mul")
      checkFloats(out[0], {2, 4, 6, 8});
    else
      checkFloats(out[0], {0.5f, 1, 1.5f, 2});
  }
}

TEST_CASE("int64 shape arithmetic: Mul, Add, Div truncating toward zero") {
  {
    OneNode t; // Shape-style [N, C] * [1] + [0]
    t.i64({2}, {3, 224});
    t.i64({1}, {2});
    t.make("Mul");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "int64[2]");
    CHECK(values<int64_t>(out[0]) == std::vector<int64_t>{6, 448});
  }
  {
    OneNode t;
    t.i64({4}, {7, -7, 7, -7});
    t.i64({4}, {2, 2, -2, -2});
    t.make("Div");
    CHECK(values<int64_t>(t.run()[0]) == std::vector<int64_t>{3, -3, -3, 3});
  }
  {
    OneNode t;
    t.i32({3}, {1, 2, 3});
    t.i32({}, {-5});
    t.make("Add");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "int32[3]");
    CHECK(values<int32_t>(out[0]) == std::vector<int32_t>{-4, -3, -2});
  }
  {
    OneNode t; // uint8 wraps like numpy
    t.u8(DType::UInt8, {2}, {3, 250});
    t.u8(DType::UInt8, {2}, {5, 10});
    t.make("Sub");
    CHECK(values<uint8_t>(t.run()[0]) == std::vector<uint8_t>{254, 240});
  }
}

TEST_CASE("Max and Min are variadic with broadcasting") {
  {
    OneNode t;
    t.f32({3}, {1, 5, 3});
    t.f32({2, 1}, {2, 4});
    t.f32({}, {0});
    t.make("Max");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[2,3]");
    checkFloats(out[0], {2, 5, 3, 4, 5, 4});
  }
  {
    OneNode t;
    t.i64({3}, {1, 5, 3});
    t.i64({2, 1}, {2, 4});
    t.make("Min");
    CHECK(values<int64_t>(t.run()[0]) == std::vector<int64_t>{1, 2, 2, 1, 4, 3});
  }
  {
    OneNode t; // one input: a copy
    t.f32({2}, {-1, 1});
    t.make("Max");
    checkFloats(t.run()[0], {-1, 1});
  }
}

TEST_CASE("binary ops reject mismatched dtypes and shapes, naming the input") {
  {
    OneNode t;
    t.f32({2}, {1, 2});
    t.i64({2}, {1, 2});
    t.make("Add");
    expectError([&] { t.infer(); }, ExitCode::Unsupported, "input 'B'");
  }
  {
    OneNode t;
    t.f32({2}, {1, 2});
    t.f32({3}, {1, 2, 3});
    t.make("Mul");
    expectError([&] { t.infer(); }, ExitCode::Unsupported, "node 'Mul_0' (Mul): cannot broadcast");
  }
}

TEST_CASE("PRelu broadcasts the slope onto X only") {
  OneNode t;
  t.f32({2, 3}, {-1, 2, -3, 4, -5, 6});
  t.f32({3}, {0.5f, 1.0f, 2.0f});
  t.make("PRelu");
  std::vector<Tensor> out = t.run();
  CHECK(t.type().str() == "float32[2,3]");
  checkFloats(out[0], {-0.5f, 2, -6, 4, -5, 6});

  OneNode bad; // slope would grow X
  bad.f32({3}, {1, 2, 3});
  bad.f32({2, 3}, iota(6));
  bad.make("PRelu");
  expectError([&] { bad.infer(); }, ExitCode::Unsupported, "input 'slope'");
}

TEST_CASE("unary activations") {
  std::vector<float> x = {-2.0f, -0.5f, 0.0f, 1.0f, 4.0f};
  auto run = [&](const std::string &op, const std::vector<std::pair<std::string, float>> &attrs) {
    OneNode t;
    t.f32({5}, x);
    Node &n = t.make(op);
    for (auto &[name, value] : attrs)
      n.attrs.setFloat(name, value);
    Tensor out = t.run()[0];
    CHECK(t.type().str() == "float32[5]");
    CHECK(t.macs() == 5);
    return out;
  };
  checkFloats(run("Relu", {}), {0, 0, 0, 1, 4});
  checkFloats(run("LeakyRelu", {}), {-0.02f, -0.005f, 0, 1, 4});
  checkFloats(run("LeakyRelu", {{"alpha", 0.5f}}), {-1, -0.25f, 0, 1, 4});
  checkFloats(run("Sigmoid", {}), {0.11920292f, 0.37754067f, 0.5f, 0.73105858f, 0.98201379f});
  checkFloats(run("Tanh", {}), {-0.96402758f, -0.46211716f, 0, 0.76159416f, 0.99932930f});
  // HardSigmoid defaults alpha=0.2, beta=0.5.
  checkFloats(run("HardSigmoid", {}), {0.1f, 0.4f, 0.5f, 0.7f, 1.0f});
  checkFloats(run("HardSigmoid", {{"alpha", 0.5f}, {"beta", 0.25f}}), {0, 0, 0.25f, 0.75f, 1});
  // HardSwish: x * clamp(x/6 + 0.5, 0, 1).
  checkFloats(run("HardSwish", {}), {-2 * (1.0f / 6), -0.5f * (5.0f / 12), 0, 2.0f / 3, 4});
  checkFloats(run("Exp", {}), {0.13533528f, 0.60653066f, 1, 2.7182818f, 54.598150f}, 1e-5f);
  Tensor s = run("Sqrt", {});
  std::vector<float> sq = values<float>(s);
  CHECK(std::isnan(sq[0]));
  CHECK(sq[2] == 0.0f);
  CHECK(sq[4] == 2.0f);
}

TEST_CASE("Clip with optional min/max operands") {
  {
    OneNode t;
    t.f32({4}, {-3, -1, 1, 3});
    t.f32({}, {-2});
    t.omitted(); // max = +inf
    t.make("Clip");
    checkFloats(t.run()[0], {-2, -1, 1, 3});
  }
  {
    OneNode t;
    t.f32({4}, {-3, -1, 1, 3});
    t.omitted(); // min = -inf
    t.f32({}, {2});
    t.make("Clip");
    checkFloats(t.run()[0], {-3, -1, 1, 2});
  }
  {
    OneNode t; // no bounds at all
    t.f32({2}, {-1e30f, 1e30f});
    t.make("Clip");
    checkFloats(t.run()[0], {-1e30f, 1e30f});
  }
  {
    OneNode t; // int8 input
    t.u8(DType::Int8, {3}, {uint8_t(-100), 5, 100});
    t.u8(DType::Int8, {}, {uint8_t(-10)});
    t.u8(DType::Int8, {}, {10});
    t.make("Clip");
    CHECK(values<int8_t>(t.run()[0]) == std::vector<int8_t>{-10, 5, 10});
  }
}

TEST_CASE("Cast truncates toward zero and wraps like numpy") {
  auto cast = [](int64_t to, const std::vector<float> &x) {
    OneNode t;
    t.f32({int64_t(x.size())}, x);
    t.make("Cast").attrs.setInt("to", to);
    Tensor out = t.run()[0];
    return out;
  };
  Tensor i8 = cast(3, {1.9f, -1.9f, 127.5f, -0.5f, -128.7f});
  CHECK(i8.type.str() == "int8[5]");
  CHECK(values<int8_t>(i8) == std::vector<int8_t>{1, -1, 127, 0, -128});
  Tensor i64 = cast(7, {2.5f, -2.5f, 1e10f});
  CHECK(values<int64_t>(i64) == std::vector<int64_t>{2, -2, 10000000000});
  Tensor u8 = cast(2, {255.9f, 3.1f});
  CHECK(values<uint8_t>(u8) == std::vector<uint8_t>{255, 3});
  Tensor b = cast(9, {0.0f, -0.1f, 2.0f});
  CHECK(b.type.dtype == DType::Bool);
  CHECK(values<uint8_t>(b) == std::vector<uint8_t>{0, 1, 1});

  OneNode t; // int64 -> float32, and a dtype-name `to` for hand-built graphs
  t.i64({2}, {-3, 1 << 20});
  t.make("Cast").attrs.setString("to", "float32");
  checkFloats(t.run()[0], {-3.0f, 1048576.0f});

  OneNode w; // int64 -> int32 wraps
  w.i64({1}, {(int64_t(1) << 32) + 5});
  w.make("Cast").attrs.setInt("to", 6);
  CHECK(values<int32_t>(w.run()[0]) == std::vector<int32_t>{5});

  OneNode bad;
  bad.f32({1}, {1});
  bad.make("Cast").attrs.setInt("to", 11); // DOUBLE
  expectError([&] { bad.infer(); }, ExitCode::Unsupported, "attribute 'to'");
}

// ---------------------------------------------------------------------- Shape

TEST_CASE("Reshape copies 0 dims and infers -1") {
  OneNode t;
  t.f32({2, 3, 4}, iota(24));
  t.i64({3}, {0, -1, 2});
  t.make("Reshape");
  std::vector<Tensor> out = t.run();
  CHECK(t.type().str() == "float32[2,6,2]");
  CHECK(t.macs() == 0);
  checkFloats(out[0], iota(24));

  OneNode z; // allowzero=1: a 0 is a real zero-size dim
  z.f32({0, 3}, {});
  z.i64({2}, {3, 0});
  z.make("Reshape").attrs.setInt("allowzero", 1);
  z.infer();
  CHECK(z.type().str() == "float32[3,0]");

  OneNode bad;
  bad.f32({2, 3}, iota(6));
  bad.i64({1}, {4});
  bad.make("Reshape");
  expectError([&] { bad.infer(); }, ExitCode::Unsupported, "input 'shape'");

  OneNode dyn; // shape from a graph input: not static
  dyn.f32({2, 3}, iota(6));
  dyn.input(Tensor::fromInts({2}, {3, 2}));
  dyn.make("Reshape");
  expectError([&] { dyn.infer(); }, ExitCode::Unsupported,
              "node 'Reshape_0' (Reshape): input 'shape' must be a constant (bundlefit "
              "compiles static shapes)");
}

TEST_CASE("Flatten, Squeeze, Unsqueeze with negative axes") {
  {
    OneNode t;
    t.f32({2, 3, 4}, iota(24));
    t.make("Flatten").attrs.setInt("axis", -1);
    checkFloats(t.run()[0], iota(24));
    CHECK(t.type().str() == "float32[6,4]");
  }
  {
    OneNode t;
    t.f32({2, 3}, iota(6));
    t.make("Flatten").attrs.setInt("axis", 0);
    t.infer();
    CHECK(t.type().str() == "float32[1,6]");
  }
  {
    OneNode t;
    t.f32({1, 3, 1, 2}, iota(6));
    t.i64({1}, {-2});
    t.make("Squeeze");
    checkFloats(t.run()[0], iota(6));
    CHECK(t.type().str() == "float32[1,3,2]");
  }
  {
    OneNode t; // no axes: every 1 goes
    t.f32({1, 3, 1, 2}, iota(6));
    t.make("Squeeze");
    t.infer();
    CHECK(t.type().str() == "float32[3,2]");
  }
  {
    OneNode t;
    t.f32({3, 2}, iota(6));
    t.i64({1}, {0});
    t.make("Squeeze");
    expectError([&] { t.infer(); }, ExitCode::Unsupported, "cannot squeeze axis 0");
  }
  {
    OneNode t;
    t.f32({3, 2}, iota(6));
    t.i64({2}, {-1, 0});
    t.make("Unsqueeze");
    checkFloats(t.run()[0], iota(6));
    CHECK(t.type().str() == "float32[1,3,2,1]");
  }
}

TEST_CASE("Transpose: default perm reverses dims; explicit perm") {
  {
    OneNode t;
    t.f32({2, 3}, iota(6));
    t.make("Transpose");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[3,2]");
    checkFloats(out[0], {0, 3, 1, 4, 2, 5});
  }
  {
    OneNode t;
    t.f32({2, 3, 4}, iota(24));
    t.make("Transpose").attrs.setInts("perm", {1, 2, 0});
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[3,4,2]");
    std::vector<float> expected; // out[j][k][i] = in[i][j][k]
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        for (int i = 0; i < 2; ++i)
          expected.push_back(float(12 * i + 4 * j + k));
    checkFloats(out[0], expected);
  }
  {
    OneNode t;
    t.f32({2, 3}, iota(6));
    t.make("Transpose").attrs.setInts("perm", {0, 0});
    expectError([&] { t.infer(); }, ExitCode::Unsupported, "attribute 'perm'");
  }
}

TEST_CASE("Concat on a negative axis, int64 too") {
  OneNode t;
  t.f32({2, 1}, {0, 1});
  t.f32({2, 2}, {10, 11, 12, 13});
  t.make("Concat").attrs.setInt("axis", -1);
  std::vector<Tensor> out = t.run();
  CHECK(t.type().str() == "float32[2,3]");
  checkFloats(out[0], {0, 10, 11, 1, 12, 13});

  OneNode s; // the classic Shape -> Concat of a new shape
  s.i64({2}, {1, 3});
  s.i64({1}, {-1});
  s.make("Concat").attrs.setInt("axis", 0);
  CHECK(values<int64_t>(s.run()[0]) == std::vector<int64_t>{1, 3, -1});

  OneNode bad;
  bad.f32({2, 1}, {0, 1});
  bad.f32({3, 1}, {0, 1, 2});
  bad.make("Concat").attrs.setInt("axis", 1);
  expectError([&] { bad.infer(); }, ExitCode::Unsupported, "cannot be concatenated");
}

TEST_CASE("Split: uneven equal parts, explicit sizes") {
  {
    OneNode t; // 5 into 3 parts: ceil(5/3)=2, 2, 1 (opset 18 num_outputs)
    t.f32({2, 5}, iota(10));
    Node &n = t.make("Split", 3);
    n.attrs.setInt("axis", 1);
    n.attrs.setInt("num_outputs", 3);
    std::vector<Tensor> out = t.run();
    CHECK(t.type(0).str() == "float32[2,2]");
    CHECK(t.type(1).str() == "float32[2,2]");
    CHECK(t.type(2).str() == "float32[2,1]");
    checkFloats(out[0], {0, 1, 5, 6});
    checkFloats(out[1], {2, 3, 7, 8});
    checkFloats(out[2], {4, 9});
  }
  {
    OneNode t;
    t.f32({5}, iota(5));
    t.i64({2}, {1, 4});
    t.make("Split", 2);
    std::vector<Tensor> out = t.run();
    checkFloats(out[0], {0});
    checkFloats(out[1], {1, 2, 3, 4});
  }
  {
    OneNode t;
    t.f32({5}, iota(5));
    t.i64({2}, {1, 3});
    t.make("Split", 2);
    expectError([&] { t.infer(); }, ExitCode::Unsupported, "input 'split'");
  }
  {
    OneNode t; // sizes whose sum overflows int64 (and wraps to 5 + 2^64)
    t.f32({5}, iota(5));
    t.i64({3}, {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max(), 7});
    t.make("Split", 3);
    expectError([&] { t.infer(); }, ExitCode::Unsupported, "input 'split'");
  }
}

TEST_CASE("Slice: negative step, clamping of huge starts/ends, default axes") {
  {
    OneNode t; // x[-1 : INT64_MIN : -2] on 10 elements
    t.f32({10}, iota(10));
    t.i64({1}, {-1});
    t.i64({1}, {kMin});
    t.i64({1}, {0});
    t.i64({1}, {-2});
    t.make("Slice");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[5]");
    checkFloats(out[0], {9, 7, 5, 3, 1});
  }
  {
    OneNode t; // x[:, 1:INT64_MAX] and x[0:1000] (clamped)
    t.f32({3, 4}, iota(12));
    t.i64({2}, {1, -1000});
    t.i64({2}, {kMax, 1000});
    t.i64({2}, {1, 0}); // axes: dim 1 then dim 0
    t.make("Slice");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[3,3]");
    checkFloats(out[0], {1, 2, 3, 5, 6, 7, 9, 10, 11});
  }
  {
    OneNode t; // reverse a whole axis with INT64_MAX start and step -1
    t.f32({2, 3}, iota(6));
    t.i64({1}, {kMax});
    t.i64({1}, {kMin});
    t.i64({1}, {-1});
    t.i64({1}, {-1});
    t.make("Slice");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[2,3]");
    checkFloats(out[0], {2, 1, 0, 5, 4, 3});
  }
  {
    OneNode t; // empty result: start beyond end
    t.f32({4}, iota(4));
    t.i64({1}, {3});
    t.i64({1}, {1});
    t.make("Slice");
    t.run();
    CHECK(t.type().str() == "float32[0]");
  }
  {
    OneNode t;
    t.f32({4}, iota(4));
    t.input(Tensor::fromInts({1}, {1}));
    t.i64({1}, {3});
    t.make("Slice");
    expectError([&] { t.infer(); }, ExitCode::Unsupported, "input 'starts' must be a constant");
  }
}

TEST_CASE("Pad: constant, reflect, edge, wrap") {
  auto pad = [](const std::string &mode, const std::vector<int64_t> &pads, float value) {
    OneNode t;
    t.f32({3}, {1, 2, 3});
    t.i64({2}, pads);
    t.f32({}, {value});
    t.make("Pad").attrs.setString("mode", mode);
    Tensor out = t.run()[0];
    CHECK(t.macs() == 0);
    return out;
  };
  checkFloats(pad("constant", {2, 1}, 9), {9, 9, 1, 2, 3, 9});
  checkFloats(pad("reflect", {2, 2}, 0), {3, 2, 1, 2, 3, 2, 1});
  checkFloats(pad("edge", {2, 2}, 0), {1, 1, 1, 2, 3, 3, 3});
  checkFloats(pad("wrap", {2, 1}, 0), {2, 3, 1, 2, 3, 1});
  checkFloats(pad("constant", {-1, 1}, 0), {2, 3, 0}); // negative pads crop

  OneNode t;              // 2-D reflect on both dims, default constant_value omitted
  t.f32({2, 3}, iota(6)); // [[0,1,2],[3,4,5]]
  t.i64({4}, {1, 1, 0, 1});
  t.make("Pad").attrs.setString("mode", "reflect");
  std::vector<Tensor> out = t.run();
  CHECK(t.type().str() == "float32[3,5]");
  checkFloats(out[0], {4, 3, 4, 5, 4, 1, 0, 1, 2, 1, 4, 3, 4, 5, 4});

  OneNode c; // constant mode, value omitted = 0, int64 data
  c.i64({2}, {7, 8});
  c.i64({2}, {1, 0});
  c.make("Pad");
  CHECK(values<int64_t>(c.run()[0]) == std::vector<int64_t>{0, 7, 8});

  OneNode bad;
  bad.f32({3}, {1, 2, 3});
  bad.i64({1}, {1});
  bad.make("Pad");
  expectError([&] { bad.infer(); }, ExitCode::Unsupported, "input 'pads'");

  // Pads are any int64 values: begin + end + dim past int64 is refused, not
  // undefined (it wrapped to a plausible size).
  const int64_t max = std::numeric_limits<int64_t>::max();
  for (std::vector<int64_t> pads : {std::vector<int64_t>{max, max}, {max, 1}, {-max, -max}}) {
    OneNode far;
    far.f32({3}, {1, 2, 3});
    far.i64({2}, pads);
    far.make("Pad");
    expectError([&] { far.infer(); }, ExitCode::Unsupported, "input 'pads'");
  }
}

TEST_CASE("Identity and Dropout copy; Dropout's mask is all true") {
  OneNode t;
  t.f32({2}, {1, 2});
  t.make("Dropout", 2);
  std::vector<Tensor> out = t.run();
  checkFloats(out[0], {1, 2});
  CHECK(t.type(1).str() == "bool[2]");
  CHECK(values<uint8_t>(out[1]) == std::vector<uint8_t>{1, 1});

  OneNode i;
  i.i64({2}, {5, 6});
  i.make("Identity");
  CHECK(values<int64_t>(i.run()[0]) == std::vector<int64_t>{5, 6});
}

TEST_CASE("Shape with start/end, independent of the input's bytes") {
  auto shapeOf = [](int64_t start, int64_t end, bool withEnd) {
    OneNode t;
    t.f32({2, 3, 4, 5}, iota(120));
    Node &n = t.make("Shape");
    n.attrs.setInt("start", start);
    if (withEnd)
      n.attrs.setInt("end", end);
    t.infer();
    CHECK(t.type().dtype == DType::Int64);
    // Constant folding may hand it a tensor whose bytes are meaningless.
    Tensor junk(t.node->inputs[0]->type);
    Tensor out = evaluateNode(*t.node, {&junk})[0];
    return values<int64_t>(out);
  };
  CHECK(shapeOf(0, 0, false) == std::vector<int64_t>{2, 3, 4, 5});
  CHECK(shapeOf(1, -1, true) == std::vector<int64_t>{3, 4});
  CHECK(shapeOf(-10, 2, true) == std::vector<int64_t>{2, 3}); // clamped
  CHECK(shapeOf(3, 1, true).empty());
}

TEST_CASE("Gather: negative indices, 2-D indices, axis 1") {
  {
    OneNode t;
    t.f32({3, 2}, iota(6));
    t.i64({2, 2}, {-1, 0, 1, -3});
    t.make("Gather");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[2,2,2]");
    checkFloats(out[0], {4, 5, 0, 1, 2, 3, 0, 1});
  }
  {
    OneNode t;
    t.f32({2, 3}, iota(6));
    t.i32({2}, {-1, 0});
    t.make("Gather").attrs.setInt("axis", 1);
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[2,2]");
    checkFloats(out[0], {2, 0, 5, 3});
  }
  {
    OneNode t; // scalar index on a shape vector: the classic shape[0]
    t.i64({4}, {1, 3, 224, 224});
    t.i64({}, {-2});
    t.make("Gather");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "int64[]");
    CHECK(values<int64_t>(out[0]) == std::vector<int64_t>{224});
  }
  {
    OneNode t;
    t.f32({3}, iota(3));
    t.i64({1}, {3});
    t.make("Gather");
    expectError([&] { t.infer(); }, ExitCode::Unsupported, "input 'indices'");
  }
}

TEST_CASE("ConstantOfShape uses value / value_dtype attributes") {
  {
    OneNode t;
    t.i64({2}, {2, 3});
    t.make("ConstantOfShape");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[2,3]");
    checkFloats(out[0], std::vector<float>(6, 0.0f));
  }
  {
    OneNode t;
    t.i64({1}, {3});
    Node &n = t.make("ConstantOfShape");
    n.attrs.setFloat("value", 7);
    n.attrs.setInt("value_dtype", int64_t(DType::Int64));
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "int64[3]");
    CHECK(values<int64_t>(out[0]) == std::vector<int64_t>{7, 7, 7});
  }
}

TEST_CASE("Range on float32, int64 and int32") {
  {
    OneNode t;
    t.f32({}, {1});
    t.f32({}, {2});
    t.f32({}, {0.25f});
    t.make("Range");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[4]");
    checkFloats(out[0], {1, 1.25f, 1.5f, 1.75f});
  }
  {
    OneNode t;
    t.i64({}, {10});
    t.i64({}, {3});
    t.i64({}, {-3});
    t.make("Range");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "int64[3]");
    CHECK(values<int64_t>(out[0]) == std::vector<int64_t>{10, 7, 4});
  }
  {
    OneNode t; // empty range
    t.i32({}, {5});
    t.i32({}, {1});
    t.i32({}, {2});
    t.make("Range");
    t.run();
    CHECK(t.type().str() == "int32[0]");
  }
}

TEST_CASE("Range is exact for every int64 input, and refuses what it cannot count") {
  const int64_t min = std::numeric_limits<int64_t>::min();
  const int64_t max = std::numeric_limits<int64_t>::max();
  {
    OneNode t; // -delta and limit - start both overflow int64: 1 element
    t.i64({}, {0});
    t.i64({}, {min});
    t.i64({}, {min});
    t.make("Range");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "int64[1]");
    CHECK(values<int64_t>(out[0]) == std::vector<int64_t>{0});
  }
  {
    OneNode t; // i * delta overflows for i = 3, start + i * delta does not
    t.i64({}, {max});
    t.i64({}, {min});
    t.i64({}, {-(int64_t(1) << 62)});
    t.make("Range");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "int64[4]");
    CHECK(values<int64_t>(out[0]) ==
          std::vector<int64_t>{max, max - (int64_t(1) << 62), -1, -(int64_t(1) << 62) - 1});
  }
  {
    OneNode t; // 2^64 - 1 elements: refused, not a wrapped count
    t.i64({}, {min});
    t.i64({}, {max});
    t.i64({}, {1});
    t.make("Range");
    expectError([&] { t.infer(); }, ExitCode::Unsupported, "past 2^63");
  }
  const float inf = std::numeric_limits<float>::infinity();
  struct Bad {
    float start, limit, delta;
    const char *why;
  };
  for (const Bad &bad :
       {Bad{0, inf, 1, "'limit' is not finite"}, Bad{0, std::nanf(""), 1, "'limit' is not finite"},
        Bad{0, 1, -inf, "'delta' is not finite"}, Bad{-1e30f, 1e30f, 1e-30f, "past 2^62"}}) {
    CAPTURE(bad.why);
    OneNode t;
    t.f32({}, {bad.start});
    t.f32({}, {bad.limit});
    t.f32({}, {bad.delta});
    t.make("Range");
    expectError([&] { t.infer(); }, ExitCode::Unsupported, bad.why);
  }
}

// --------------------------------------------------------------------- Reduce

TEST_CASE("ReduceMean keepdims=0 over two axes") {
  OneNode t;
  t.f32({2, 3, 2}, iota(12)); // x[i][j][k] = 6i + 2j + k
  Node &n = t.make("ReduceMean");
  n.attrs.setInts("axes", {0, -1});
  n.attrs.setInt("keepdims", 0);
  std::vector<Tensor> out = t.run();
  CHECK(t.type().str() == "float32[3]");
  CHECK(t.macs() == 12);
  // mean over i,k of 6i + 2j + k = 3 + 2j + 0.5
  checkFloats(out[0], {3.5f, 5.5f, 7.5f});
}

TEST_CASE("ReduceMax keeps dims by default; empty axes reduce everything") {
  {
    OneNode t;
    t.f32({2, 3}, {1, 9, 3, 4, -5, 6});
    t.make("ReduceMax").attrs.setInts("axes", {1});
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[2,1]");
    checkFloats(out[0], {9, 6});
  }
  {
    OneNode t;
    t.f32({2, 3}, {-1, -9, -3, -4, -5, -6});
    t.make("ReduceMax");
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "float32[1,1]");
    checkFloats(out[0], {-1});
  }
  {
    OneNode t; // opset-18 axes input, int64 data
    t.i64({2, 2}, {5, -2, 3, 8});
    t.i64({1}, {0});
    t.make("ReduceMax").attrs.setInt("keepdims", 0);
    std::vector<Tensor> out = t.run();
    CHECK(t.type().str() == "int64[2]");
    CHECK(values<int64_t>(out[0]) == std::vector<int64_t>{5, 8});
  }
  {
    OneNode t;
    t.f32({2, 3}, iota(6));
    t.make("ReduceMean").attrs.setInts("axes", {2});
    expectError([&] { t.infer(); }, ExitCode::Unsupported, "'axes' entry 2");
  }
}
