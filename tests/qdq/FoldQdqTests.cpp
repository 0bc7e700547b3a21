//===- FoldQdqTests.cpp - QDQ models: the int8 IR they become, their errors -===//
//
// Tiny QDQ models built in C++ (tests/onnx/TestModel.h): what foldQdqPairs
// and quantizeGraph make of well-formed ones (the model's parameters kept
// exactly, uint8 shifted by 128), and the one-line error each malformed one
// gets (file, node and tensor named).
//
//===----------------------------------------------------------------------===//
#include "../onnx/TestModel.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/quant/FoldQdq.h"
#include "bundlefit/quant/QuantizeGraph.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace bundlefit;
using namespace bundlefit::testing;

namespace {

template <typename T>
onnx::TensorProto &rawInit(TestModel &m, const std::string &name, int32_t type,
                           const std::vector<int64_t> &dims, const std::vector<T> &values) {
  onnx::TensorProto *tensor = m.graph().add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(type);
  for (int64_t dim : dims)
    tensor->add_dims(dim);
  tensor->set_raw_data(values.data(), values.size() * sizeof(T));
  return *tensor;
}

/// What a QDQ Conv model can vary.
struct ConvSpec {
  bool unsignedActivations = false;
  std::vector<float> weightScales = {0.02f, 0.03f}; ///< per channel when > 1
  std::vector<int8_t> weightZeroPoints = {0, 0};
  int64_t weightAxis = 0;
  float inputScale = 0.05f;
  bool zeroPointTypeMismatch = false; ///< weight zp uint8 for int8 weights
  std::vector<int32_t> bias = {100, -250};
};

/// x[1,1,4,4] -> Q -> DQ -> Conv(2 filters 3x3, int32 bias) -> Q -> DQ -> y
TestModel qdqConv(const ConvSpec &spec) {
  TestModel m;
  m.input("x", {1, 1, 4, 4});
  const int32_t act = spec.unsignedActivations ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
  auto actZp = [&](const std::string &name, int real) {
    if (spec.unsignedActivations)
      rawInit<uint8_t>(m, name, act, {}, {uint8_t(real + 128)});
    else
      rawInit<int8_t>(m, name, act, {}, {int8_t(real)});
  };
  m.floatInit("x_scale", {}, {spec.inputScale});
  actZp("x_zp", -3);
  m.node("QuantizeLinear", {"x", "x_scale", "x_zp"}, {"x_q"}, "quant_x");
  m.node("DequantizeLinear", {"x_q", "x_scale", "x_zp"}, {"x_dq"}, "dequant_x");
  std::vector<int8_t> w(18);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = int8_t(int(i * 7 % 21) - 10);
  w[4] = -128; // legal int8; bundlefit's own weights stop at -127, the model's must not
  rawInit<int8_t>(m, "w_q", onnx::TensorProto::INT8, {2, 1, 3, 3}, w);
  const std::vector<int64_t> scaleDims =
      spec.weightScales.size() > 1 ? std::vector<int64_t>{int64_t(spec.weightScales.size())}
                                   : std::vector<int64_t>{};
  m.floatInit("w_scale", scaleDims, spec.weightScales);
  if (spec.zeroPointTypeMismatch)
    rawInit<uint8_t>(m, "w_zp", onnx::TensorProto::UINT8, scaleDims,
                     std::vector<uint8_t>(spec.weightZeroPoints.size(), 0));
  else
    rawInit<int8_t>(m, "w_zp", onnx::TensorProto::INT8, scaleDims, spec.weightZeroPoints);
  onnx::NodeProto &dqw =
      m.node("DequantizeLinear", {"w_q", "w_scale", "w_zp"}, {"w_dq"}, "dequant_w");
  if (spec.weightScales.size() > 1)
    setInt(dqw, "axis", spec.weightAxis);
  std::vector<float> biasScales;
  for (float s : spec.weightScales)
    biasScales.push_back(spec.inputScale * s);
  rawInit<int32_t>(m, "b_q", onnx::TensorProto::INT32, {2}, spec.bias);
  m.floatInit("b_scale", scaleDims, biasScales);
  onnx::NodeProto &dqb = m.node("DequantizeLinear", {"b_q", "b_scale"}, {"b_dq"}, "dequant_b");
  if (spec.weightScales.size() > 1)
    setInt(dqb, "axis", 0);
  m.node("Conv", {"x_dq", "w_dq", "b_dq"}, {"conv"}, "conv");
  m.floatInit("y_scale", {}, {0.1f});
  actZp("y_zp", 7);
  m.node("QuantizeLinear", {"conv", "y_scale", "y_zp"}, {"y_q"}, "quant_y");
  m.node("DequantizeLinear", {"y_q", "y_scale", "y_zp"}, {"y"}, "dequant_y");
  m.output("y");
  return m;
}

/// x[1,n] -> QuantizeLinear "qx" (-> "xq") with int8 scale "s" (`scales`
/// elements; one: a scalar) and zero point "z" 0; the caller goes on from "xq".
TestModel quantizedInput(int64_t n, const std::vector<float> &scales) {
  TestModel m;
  m.input("x", {1, n});
  std::vector<int64_t> dims;
  if (scales.size() > 1)
    dims = {int64_t(scales.size())};
  m.floatInit("s", dims, scales);
  rawInit<int8_t>(m, "z", onnx::TensorProto::INT8, dims, std::vector<int8_t>(scales.size(), 0));
  m.node("QuantizeLinear", {"x", "s", "z"}, {"xq"}, "qx");
  return m;
}

struct Folded {
  std::unique_ptr<Graph> graph;
  QdqFoldResult fold;
  std::vector<std::string> poolNotes;
  QuantizationSummary summary;
};

/// The driver's order: import, fold, default passes, quantize with the preset.
Folded compileQdq(const TestModel &m, const std::string &file) {
  Folded f;
  const std::string path = m.save(file);
  f.graph = importOnnxModel(path);
  REQUIRE(hasLinearQuantNodes(*f.graph));
  f.fold = foldQdqPairs(*f.graph, path);
  runDefaultPasses(*f.graph);
  matMulsAsGemms(*f.graph, f.fold.params);
  averagePoolsAsConvs(*f.graph, f.fold.params, f.poolNotes);
  QuantizationOptions options;
  options.channelwise = true;
  options.preset = &f.fold.params;
  f.summary = quantizeGraph(*f.graph, ProfileData{}, options, path);
  return f;
}

std::pair<ExitCode, std::string> foldError(const TestModel &m, const std::string &file) {
  return errorOf([&] {
    std::unique_ptr<Graph> graph = importOnnxModel(m.save(file));
    foldQdqPairs(*graph, tempPath(file));
  });
}

} // namespace

TEST_CASE("QDQ Conv, per-channel int8: the model's scales, zero points and integers, exactly") {
  // Every expected value is the test model's own (qdqConv's defaults, written above), read back.
  Folded f = compileQdq(qdqConv({}), "qdq_conv_s8.onnx");
  CHECK(f.fold.pairs == 2);
  CHECK(f.fold.constants == 2);
  CHECK(f.summary.warnings.empty());
  const Node &conv = *onlyNode(*f.graph, "Conv");
  const Value &x = *conv.input(0);
  REQUIRE(x.type.dtype == DType::Int8);
  CHECK(x.type.quant.scales == std::vector<float>{0.05f});
  CHECK(x.type.quant.zeroPoints == std::vector<int32_t>{-3});
  const Value &w = *conv.input(1);
  REQUIRE(w.type.dtype == DType::Int8);
  CHECK(w.type.quant.axis == 0);
  CHECK(w.type.quant.scales == std::vector<float>{0.02f, 0.03f});
  for (int64_t i = 0; i < 18; ++i)
    CHECK(int(w.elementAsDouble(i)) == (i == 4 ? -128 : int(i * 7 % 21) - 10));
  const Value &b = *conv.input(2);
  REQUIRE(b.type.dtype == DType::Int32);
  CHECK(int(b.elementAsDouble(0)) == 100);
  CHECK(int(b.elementAsDouble(1)) == -250);
  CHECK(conv.output()->type.quant.scales == std::vector<float>{0.1f});
  CHECK(conv.output()->type.quant.zeroPoints == std::vector<int32_t>{7});
  // Float at the boundary, under the model's names.
  CHECK(f.graph->inputs()[0]->name == "x");
  CHECK(f.graph->outputs()[0]->name == "y");
  CHECK(f.graph->outputs()[0]->type.dtype == DType::Float32);
}

TEST_CASE("QDQ Conv: an int32 bias beyond float's 2^24 keeps its exact integers") {
  ConvSpec spec;
  spec.bias = {100, 40000001}; // not a float32: the float round trip would give 40000000
  Folded f = compileQdq(qdqConv(spec), "qdq_conv_bigbias.onnx");
  const Value &b = *onlyNode(*f.graph, "Conv")->input(2);
  REQUIRE(b.type.dtype == DType::Int32);
  CHECK(int64_t(b.elementAsDouble(1)) == 40000001);
  CHECK(f.summary.warnings.empty());
}

TEST_CASE("QDQ Conv, uint8 activations: zero points shifted by 128, same scales") {
  ConvSpec spec;
  spec.unsignedActivations = true;
  Folded f = compileQdq(qdqConv(spec), "qdq_conv_u8.onnx");
  const Node &conv = *onlyNode(*f.graph, "Conv");
  CHECK(conv.input(0)->type.quant.zeroPoints == std::vector<int32_t>{-3});
  CHECK(conv.output()->type.quant.zeroPoints == std::vector<int32_t>{7});
  CHECK(f.summary.warnings.empty());
}

TEST_CASE("QDQ Conv, asymmetric weights: the model's integers and zero points, no warning") {
  ConvSpec spec;
  spec.weightZeroPoints = {0, 5};
  Folded f = compileQdq(qdqConv(spec), "qdq_conv_asym.onnx");
  CHECK(f.fold.warnings.empty());
  CHECK(f.summary.warnings.empty());
  const Value &w = *onlyNode(*f.graph, "Conv")->input(1);
  CHECK(w.type.dtype == DType::Int8);
  CHECK(w.type.quant.zeroPoints == std::vector<int32_t>{0, 5});
  CHECK(w.type.quant.scales == std::vector<float>{0.02f, 0.03f});
  // The stored integers are the model's (exact: bf_conv2d_wzp_s8 subtracts
  // the zero point), not a symmetric requantization of them.
  for (int64_t i = 0; i < 18; ++i)
    CHECK(int(w.elementAsDouble(i)) == (i == 4 ? -128 : int(i * 7 % 21) - 10));
}

TEST_CASE("QDQ: a float op between pairs is kept in float, with a warning") {
  TestModel m = quantizedInput(4, {0.1f});
  m.node("DequantizeLinear", {"xq", "s", "z"}, {"xd"}, "dqx");
  // Softplus has no int8 kernel (Sigmoid has: a table, src/ops/lut/).
  m.node("Softplus", {"xd"}, {"sp"}, "softplus");
  m.node("QuantizeLinear", {"sp", "s", "z"}, {"sq"}, "qs");
  m.node("DequantizeLinear", {"sq", "s", "z"}, {"y"}, "dqs");
  m.output("y");
  Folded f = compileQdq(m, "qdq_softplus.onnx");
  REQUIRE(f.summary.warnings.size() == 1);
  CHECK(f.summary.warnings[0].find("'softplus' (Softplus): kept in float") != std::string::npos);
}

/// x[xShape] -> Q/DQ (0.1, 0) -> MatMul by DQ(int8 [4,3], per column) -> Q/DQ (0.2, 1) -> y
TestModel qdqMatMul(const std::vector<int64_t> &xShape) {
  TestModel m;
  m.input("x", xShape);
  m.floatInit("s", {}, {0.1f});
  rawInit<int8_t>(m, "z", onnx::TensorProto::INT8, {}, {0});
  m.node("QuantizeLinear", {"x", "s", "z"}, {"xq"}, "qx");
  m.node("DequantizeLinear", {"xq", "s", "z"}, {"xd"}, "dqx");
  rawInit<int8_t>(m, "w_q", onnx::TensorProto::INT8, {4, 3},
                  {1, -2, 3, -128, 5, 6, 7, 8, -9, 10, 11, 127});
  m.floatInit("w_scale", {3}, {0.01f, 0.02f, 0.03f});
  rawInit<int8_t>(m, "w_zp", onnx::TensorProto::INT8, {3}, {0, 0, 0});
  setInt(m.node("DequantizeLinear", {"w_q", "w_scale", "w_zp"}, {"w"}, "dqw"), "axis", 1);
  m.node("MatMul", {"xd", "w"}, {"mm"}, "mm");
  m.floatInit("s2", {}, {0.2f});
  rawInit<int8_t>(m, "z2", onnx::TensorProto::INT8, {}, {1});
  m.node("QuantizeLinear", {"mm", "s2", "z2"}, {"mq"}, "qm");
  m.node("DequantizeLinear", {"mq", "s2", "z2"}, {"y"}, "dqm");
  m.output("y");
  return m;
}

TEST_CASE("QDQ MatMul by a constant: the int8 Gemm with the model's integers, batched too") {
  Folded f = compileQdq(qdqMatMul({1, 4}), "qdq_matmul.onnx");
  CHECK(f.summary.warnings.empty());
  const Node &gemm = *onlyNode(*f.graph, "Gemm");
  CHECK(gemm.attrs.getInt("transB", 0) == 0);
  const Value &w = *gemm.input(1);
  REQUIRE(w.type.dtype == DType::Int8);
  CHECK(w.type.quant.axis == 1);
  CHECK(w.type.quant.scales == std::vector<float>{0.01f, 0.02f, 0.03f});
  CHECK(w.elementAsDouble(3) == -128.0);
  CHECK(w.elementAsDouble(11) == 127.0);
  CHECK(gemm.output()->type.dtype == DType::Int8);

  // [2, 3, 4]: a batched MatMul is the same Gemm on its 6 rows, between
  // Reshapes that view the model's parameters; it keeps the user's name.
  Folded batched = compileQdq(qdqMatMul({2, 3, 4}), "qdq_matmul_3d.onnx");
  CHECK(batched.summary.warnings.empty());
  const Node &rows = *onlyNode(*batched.graph, "Gemm");
  CHECK(rows.name == "mm");
  CHECK(rows.input(0)->type.shape == Shape{6, 4});
  REQUIRE(rows.output()->type.dtype == DType::Int8);
  CHECK(rows.output()->type.quant.scales == std::vector<float>{0.2f});
  CHECK(rows.output()->type.quant.zeroPoints == std::vector<int32_t>{1});
  CHECK(rows.input(0)->type.quant.scales == std::vector<float>{0.1f});
  const Node *back = nullptr;
  for (const Node *node : batched.graph->nodes())
    if (node->opType == "Reshape" && node->input(0) == rows.output())
      back = node;
  REQUIRE(back);
  CHECK(back->output()->type.shape == Shape{2, 3, 3});
}

/// x[1,2,4,4] -> Q/DQ (0.1, 0) -> AveragePool 2x2 (`pads`) -> Q/DQ (0.02, -5) -> y
TestModel qdqAveragePool(const std::vector<int64_t> &pads) {
  TestModel m;
  m.input("x", {1, 2, 4, 4});
  m.floatInit("s", {}, {0.1f});
  rawInit<int8_t>(m, "z", onnx::TensorProto::INT8, {}, {0});
  m.node("QuantizeLinear", {"x", "s", "z"}, {"xq"}, "qx");
  m.node("DequantizeLinear", {"xq", "s", "z"}, {"xd"}, "dqx");
  onnx::NodeProto &pool = m.node("AveragePool", {"xd"}, {"avg"}, "avg");
  setInts(pool, "kernel_shape", {2, 2});
  setInts(pool, "strides", {2, 2});
  setInts(pool, "pads", pads);
  m.floatInit("s2", {}, {0.02f});
  rawInit<int8_t>(m, "z2", onnx::TensorProto::INT8, {}, {-5});
  m.node("QuantizeLinear", {"avg", "s2", "z2"}, {"aq"}, "qa");
  m.node("DequantizeLinear", {"aq", "s2", "z2"}, {"y"}, "dqa");
  m.output("y");
  return m;
}

TEST_CASE("QDQ average pooling with its own output scale: a depthwise Conv of weights 1/count") {
  Folded f = compileQdq(qdqAveragePool({0, 0, 0, 0}), "qdq_avgpool.onnx");
  REQUIRE(f.poolNotes.size() == 1);
  CHECK(f.poolNotes[0].find("'avg' (AveragePool)") != std::string::npos);
  const Node &conv = *onlyNode(*f.graph, "Conv");
  CHECK(conv.attrs.getInt("group", 0) == 2);
  const Value &w = *conv.input(1);
  REQUIRE(w.type.dtype == DType::Int8);
  CHECK(w.type.shape == Shape{2, 1, 2, 2});
  CHECK(w.type.quant.scales == std::vector<float>{0.25f});
  for (int64_t i = 0; i < 8; ++i)
    CHECK(w.elementAsDouble(i) == 1.0);
  CHECK(conv.output()->type.quant.scales == std::vector<float>{0.02f});
  CHECK(conv.output()->type.quant.zeroPoints == std::vector<int32_t>{-5});
}

TEST_CASE("QDQ padded average pooling with its own output scale: pooling, then a Rescale") {
  Folded f = compileQdq(qdqAveragePool({1, 1, 1, 1}), "qdq_avgpool_pads.onnx");
  CHECK(f.poolNotes.empty());
  onlyNode(*f.graph, "AveragePool");
  const Node &rescale = *onlyNode(*f.graph, "Rescale");
  CHECK(rescale.output()->type.quant.scales == std::vector<float>{0.02f});
  REQUIRE(f.summary.warnings.size() == 1);
  CHECK(f.summary.warnings[0].find("requantized by a Rescale") != std::string::npos);
}

TEST_CASE("QDQ errors: one line naming the file, the node and the tensor") {
  SUBCASE("zero point type differs from the quantized weight's") {
    ConvSpec spec;
    spec.zeroPointTypeMismatch = true;
    auto [code, message] = foldError(qdqConv(spec), "bad_zp_type.onnx");
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message.find("bad_zp_type.onnx") != std::string::npos);
    CHECK(message.find("dequant_w") != std::string::npos);
    CHECK(message.find("'w_zp' is uint8 but the input is int8") != std::string::npos);
  }
  SUBCASE("scale zero, negative, NaN, infinite") {
    for (float bad : {0.0f, -0.5f, std::numeric_limits<float>::quiet_NaN(),
                      std::numeric_limits<float>::infinity()}) {
      ConvSpec spec;
      spec.weightScales = {0.02f, bad};
      auto [code, message] = foldError(qdqConv(spec), "bad_scale.onnx");
      CHECK(code == ExitCode::BadInputFile);
      CHECK(message.find("bad_scale.onnx") != std::string::npos);
      CHECK(message.find("'dequant_w'") != std::string::npos);
      CHECK(message.find("scale 'w_scale'[1]") != std::string::npos);
      CHECK(message.find('\n') == std::string::npos);
    }
  }
  SUBCASE("axis out of range") {
    ConvSpec spec;
    spec.weightAxis = 4;
    auto [code, message] = foldError(qdqConv(spec), "bad_axis.onnx");
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message.find("'dequant_w'") != std::string::npos);
    CHECK(message.find("axis 4 is out of range for input rank 4") != std::string::npos);
  }
  SUBCASE("per-axis scale of the wrong length") {
    ConvSpec spec;
    spec.weightScales = {0.02f, 0.03f, 0.04f};
    spec.weightZeroPoints = {0, 0, 0};
    auto [code, message] = foldError(qdqConv(spec), "bad_axis_len.onnx");
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message.find("per-axis scale 'w_scale' has 3 elements but axis 0 of the input has 2") !=
          std::string::npos);
  }
  SUBCASE("per-axis scale on an activation") {
    TestModel m = quantizedInput(2, {0.1f, 0.2f});
    m.node("DequantizeLinear", {"xq", "s", "z"}, {"y"}, "dqx");
    m.output("y");
    auto [code, message] = foldError(m, "act_axis.onnx");
    CHECK(code == ExitCode::Unsupported);
    CHECK(message.find("'qx'") != std::string::npos);
    CHECK(message.find("per-axis scale 's' on activation 'x'") != std::string::npos);
  }
  SUBCASE("a quantized activation read by something else than DequantizeLinear") {
    TestModel m = quantizedInput(2, {0.1f});
    m.node("Identity", {"xq"}, {"xi"}, "ident");
    m.node("DequantizeLinear", {"xi", "s", "z"}, {"y"}, "dqx");
    m.output("y");
    auto [code, message] = foldError(m, "q_reader.onnx");
    CHECK(code == ExitCode::Unsupported);
    CHECK(message.find("its output 'xq' is read by node 'ident' (Identity)") != std::string::npos);
  }
}
