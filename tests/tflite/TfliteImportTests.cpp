//===- TfliteImportTests.cpp - .tflite files into the graph IR -------------===//
//
// Tiny models built in C++ (TfliteTestModel.h): what each TFLite operator
// becomes, checked by running the imported graph in the reference
// interpreter against NHWC loops written here from TFLite's definitions
// (layouts, SAME padding, weight orders), what an int8 model becomes after
// the driver's load (the int8 IR with the file's integers and int8 I/O), and
// the one-line errors of broken files.
//
//===----------------------------------------------------------------------===//
#include "TfliteTestModel.h"

#include "../memory_opt/MemoryOptTestSupport.h" // randomFloats
#include "ErrorOf.h"

#include "bundlefit/driver/ModelRun.h"
#include "bundlefit/driver/Pipeline.h"
#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/tflite/TfliteImporter.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <tuple>

using namespace bundlefit;
using namespace bundlefit::testing;
using bundlefit::test::randomFloats;

namespace {

/// Runs the imported graph on one float input.
std::vector<float> runFloat(const Graph &graph, const std::vector<float> &input) {
  REQUIRE(graph.inputs().size() == 1);
  const Value &in = *graph.inputs()[0];
  Tensor tensor = Tensor::fromFloats(in.type.shape, input);
  auto outputs = Interpreter(graph).run({{in.name, tensor}});
  REQUIRE(outputs.size() == 1);
  const Tensor &out = outputs.begin()->second;
  return std::vector<float>(out.data<float>(), out.data<float>() + out.numElements());
}

void checkClose(const std::vector<float> &got, const std::vector<float> &want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
}

size_t countOps(const Graph &graph, const std::string &opType) {
  size_t count = 0;
  for (const Node *node : graph.nodes())
    count += node->opType == opType;
  return count;
}

/// TFLite's conv (NHWC input, OHWI weights, SAME or VALID), plain loops.
std::vector<float> referenceConv(const std::vector<float> &x, int h, int w, int c,
                                 const std::vector<float> &weights, int o, int kh, int kw,
                                 const std::vector<float> &bias, int stride, bool same,
                                 bool depthwise, bool relu, int *outH, int *outW) {
  int oh = same ? (h + stride - 1) / stride : (h - kh) / stride + 1;
  int ow = same ? (w + stride - 1) / stride : (w - kw) / stride + 1;
  int padTop = same ? std::max(0, (oh - 1) * stride + kh - h) / 2 : 0;
  int padLeft = same ? std::max(0, (ow - 1) * stride + kw - w) / 2 : 0;
  std::vector<float> y(size_t(oh * ow * o));
  const int multiplier = depthwise ? o / c : 1;
  for (int yy = 0; yy < oh; ++yy)
    for (int xx = 0; xx < ow; ++xx)
      for (int oc = 0; oc < o; ++oc) {
        float sum = bias.empty() ? 0.0f : bias[size_t(oc)];
        for (int ky = 0; ky < kh; ++ky)
          for (int kx = 0; kx < kw; ++kx) {
            int iy = yy * stride - padTop + ky, ix = xx * stride - padLeft + kx;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
              continue;
            if (depthwise) {
              int ic = oc / multiplier;
              sum += x[size_t((iy * w + ix) * c + ic)] * weights[size_t((ky * kw + kx) * o + oc)];
            } else {
              for (int ic = 0; ic < c; ++ic)
                sum += x[size_t((iy * w + ix) * c + ic)] *
                       weights[size_t(((oc * kh + ky) * kw + kx) * c + ic)];
            }
          }
        y[size_t((yy * ow + xx) * o + oc)] = relu ? std::max(0.0f, sum) : sum;
      }
  *outH = oh;
  *outW = ow;
  return y;
}

flatbuffers::Offset<void> convOptions(TfliteTestModel &m, tflite::Padding padding, int stride,
                                      tflite::ActivationFunctionType act) {
  return tflite::CreateConv2DOptions(m.builder(), padding, stride, stride, act).Union();
}

} // namespace

TEST_CASE("CONV_2D: NHWC input, OHWI weights and SAME padding (odd pixel after) as TFLite") {
  const int h = 6, w = 5, c = 3, o = 4, k = 3;
  std::vector<float> x = randomFloats(h * w * c, 1), wts = randomFloats(o * k * k * c, 2),
                     bias = randomFloats(o, 3);
  int oh = 0, ow = 0;
  std::vector<float> want =
      referenceConv(x, h, w, c, wts, o, k, k, bias, 2, true, false, true, &oh, &ow);
  TfliteTestModel m;
  int32_t in = m.floatTensor("x", {1, h, w, c});
  int32_t wt = m.floatTensor("w", {o, k, k, c}, wts);
  int32_t b = m.floatTensor("b", {o}, bias);
  int32_t out = m.floatTensor("y", {1, oh, ow, o});
  m.op(tflite::BuiltinOperator_CONV_2D, {in, wt, b}, {out}, tflite::BuiltinOptions_Conv2DOptions,
       convOptions(m, tflite::Padding_SAME, 2, tflite::ActivationFunctionType_RELU));
  m.inputs({in});
  m.outputs({out});
  auto graph = importTfliteModel(m.save("conv.tflite"));
  CHECK(graph->inputs()[0]->type.str() == "float32[1,6,5,3]");
  CHECK(graph->outputs()[0]->type.str() == "float32[1,3,3,4]");
  CHECK(graph->outputs()[0]->name == "y");
  checkClose(runFloat(*graph, x), want);
}

TEST_CASE("DEPTHWISE_CONV_2D: weights [1,H,W,C*M] with a channel multiplier, VALID") {
  const int h = 5, w = 4, c = 2, o = 6, k = 2;
  std::vector<float> x = randomFloats(h * w * c, 4), wts = randomFloats(k * k * o, 5),
                     bias = randomFloats(o, 6);
  int oh = 0, ow = 0;
  std::vector<float> want =
      referenceConv(x, h, w, c, wts, o, k, k, bias, 1, false, true, false, &oh, &ow);
  TfliteTestModel m;
  int32_t in = m.floatTensor("x", {1, h, w, c});
  int32_t wt = m.floatTensor("w", {1, k, k, o}, wts);
  int32_t b = m.floatTensor("b", {o}, bias);
  int32_t out = m.floatTensor("y", {1, oh, ow, o});
  m.op(tflite::BuiltinOperator_DEPTHWISE_CONV_2D, {in, wt, b}, {out},
       tflite::BuiltinOptions_DepthwiseConv2DOptions,
       tflite::CreateDepthwiseConv2DOptions(m.builder(), tflite::Padding_VALID, 1, 1, o / c)
           .Union());
  m.inputs({in});
  m.outputs({out});
  auto graph = importTfliteModel(m.save("dw.tflite"));
  checkClose(runFloat(*graph, x), want);
}

TEST_CASE("FULLY_CONNECTED after a conv reads the channels-first output with permuted weights") {
  const int h = 4, w = 4, c = 1, o = 3, k = 3, units = 5;
  std::vector<float> x = randomFloats(h * w * c, 7), wts = randomFloats(o * k * k * c, 8);
  int oh = 0, ow = 0;
  std::vector<float> conv =
      referenceConv(x, h, w, c, wts, o, k, k, {}, 1, true, false, false, &oh, &ow);
  const int in = oh * ow * o;
  std::vector<float> fc = randomFloats(size_t(units * in), 9), fcBias = randomFloats(units, 10);
  std::vector<float> want(units);
  for (int u = 0; u < units; ++u) {
    float sum = fcBias[size_t(u)];
    for (int i = 0; i < in; ++i)
      sum += conv[size_t(i)] * fc[size_t(u * in + i)];
    want[size_t(u)] = sum;
  }
  TfliteTestModel m;
  int32_t xin = m.floatTensor("x", {1, h, w, c});
  int32_t wt = m.floatTensor("w", {o, k, k, c}, wts);
  int32_t mid = m.floatTensor("conv", {1, oh, ow, o});
  int32_t fw = m.floatTensor("fc_w", {units, in}, fc);
  int32_t fb = m.floatTensor("fc_b", {units}, fcBias);
  int32_t out = m.floatTensor("y", {1, units});
  m.op(tflite::BuiltinOperator_CONV_2D, {xin, wt, -1}, {mid}, tflite::BuiltinOptions_Conv2DOptions,
       convOptions(m, tflite::Padding_SAME, 1, tflite::ActivationFunctionType_NONE));
  m.op(tflite::BuiltinOperator_FULLY_CONNECTED, {mid, fw, fb}, {out});
  m.inputs({xin});
  m.outputs({out});
  auto graph = importTfliteModel(m.save("conv_fc.tflite"));
  CHECK(countOps(*graph, "Transpose") == 0); // C == 1 in, weights permuted out
  checkClose(runFloat(*graph, x), want);
}

TEST_CASE("AVERAGE_POOL_2D with SAME padding divides by the pixels inside the input") {
  const int h = 3, w = 3, c = 2;
  std::vector<float> x = randomFloats(h * w * c, 11);
  std::vector<float> want(h * w * c);
  for (int yy = 0; yy < h; ++yy)
    for (int xx = 0; xx < w; ++xx)
      for (int ch = 0; ch < c; ++ch) {
        float sum = 0;
        int count = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            int iy = yy + dy, ix = xx + dx;
            if (iy >= 0 && iy < h && ix >= 0 && ix < w) {
              sum += x[size_t((iy * w + ix) * c + ch)];
              ++count;
            }
          }
        want[size_t((yy * w + xx) * c + ch)] = sum / float(count);
      }
  TfliteTestModel m;
  int32_t in = m.floatTensor("x", {1, h, w, c});
  int32_t out = m.floatTensor("y", {1, h, w, c});
  m.op(tflite::BuiltinOperator_AVERAGE_POOL_2D, {in}, {out}, tflite::BuiltinOptions_Pool2DOptions,
       tflite::CreatePool2DOptions(m.builder(), tflite::Padding_SAME, 1, 1, 3, 3).Union());
  m.inputs({in});
  m.outputs({out});
  auto graph = importTfliteModel(m.save("avgpool.tflite"));
  // 4-D in and out with C > 1: the pool runs channels-first between two transposes.
  CHECK(countOps(*graph, "Transpose") == 2);
  checkClose(runFloat(*graph, x), want);
}

TEST_CASE("LEAKY_RELU reads its alpha; without options it is 0, as TFLM's zeroed params") {
  // TFLM's ParseLeakyRelu sets alpha only from options that are there; its
  // params start zeroed, so a file without them runs as ReLU.
  std::vector<float> x = randomFloats(8, 5);
  for (bool withOptions : {true, false}) {
    CAPTURE(withOptions);
    TfliteTestModel m;
    int32_t in = m.floatTensor("x", {1, 8});
    int32_t out = m.floatTensor("y", {1, 8});
    if (withOptions)
      m.op(tflite::BuiltinOperator_LEAKY_RELU, {in}, {out}, tflite::BuiltinOptions_LeakyReluOptions,
           tflite::CreateLeakyReluOptions(m.builder(), 0.3f).Union());
    else
      m.op(tflite::BuiltinOperator_LEAKY_RELU, {in}, {out});
    m.inputs({in});
    m.outputs({out});
    auto graph =
        importTfliteModel(m.save(withOptions ? "leaky.tflite" : "leaky_no_options.tflite"));
    const float alpha = withOptions ? 0.3f : 0.0f;
    std::vector<float> want;
    for (float v : x)
      want.push_back(v >= 0 ? v : alpha * v);
    REQUIRE(std::any_of(x.begin(), x.end(), [](float v) { return v < 0; }));
    checkClose(runFloat(*graph, x), want);
  }
}

namespace {

/// int8 FC: x int8 [1,4] -> FC(int8 weights per channel, int32 bias) + RELU
/// -> int8 [1,3]; `floatIo`: float x -> QUANTIZE ... DEQUANTIZE -> float y.
std::string int8FcModel(const std::string &name, bool floatIo) {
  TfliteTestModel m;
  const TestQuant xq{{0.05f}, {-3}}, yq{{0.1f}, {-128}};
  int32_t x = m.int8Tensor("x", {1, 4}, xq);
  int32_t w = m.int8Tensor("w", {3, 4}, {{0.01f, 0.02f, 0.03f}, {0, 0, 0}, 0},
                           {1, -2, 3, -4, 127, -128, 0, 5, -7, 8, 9, -10});
  int32_t b = m.int32Tensor("b", {3}, {100, -200, 300}, {{0.0005f, 0.001f, 0.0015f}, {0, 0, 0}, 0});
  int32_t y = m.int8Tensor("y", {1, 3}, yq);
  int32_t fcIn = x, fcOut = y;
  if (floatIo) {
    int32_t xf = m.floatTensor("x_float", {1, 4});
    int32_t yf = m.floatTensor("y_float", {1, 3});
    m.op(tflite::BuiltinOperator_QUANTIZE, {xf}, {x});
    m.op(tflite::BuiltinOperator_FULLY_CONNECTED, {fcIn, w, b}, {fcOut},
         tflite::BuiltinOptions_FullyConnectedOptions,
         tflite::CreateFullyConnectedOptions(m.builder(), tflite::ActivationFunctionType_RELU)
             .Union());
    m.op(tflite::BuiltinOperator_DEQUANTIZE, {y}, {yf});
    m.inputs({xf});
    m.outputs({yf});
  } else {
    m.op(tflite::BuiltinOperator_FULLY_CONNECTED, {fcIn, w, b}, {fcOut},
         tflite::BuiltinOptions_FullyConnectedOptions,
         tflite::CreateFullyConnectedOptions(m.builder(), tflite::ActivationFunctionType_RELU)
             .Union());
    m.inputs({x});
    m.outputs({y});
  }
  return m.save(name);
}

} // namespace

TEST_CASE("an int8 model loads as the int8 IR: int8 I/O, the file's weight integers and bias") {
  const std::string path = int8FcModel("fc_int8.tflite", false);
  CHECK(isTfliteModelFile(path));
  CHECK(modelIsPreQuantized(path));
  ModelOptions options;
  options.path = path;
  auto graph = loadModel(options);
  const Value &x = *graph->inputs()[0], &y = *graph->outputs()[0];
  CHECK(x.name == "x");
  CHECK(x.type.str() == "int8[1,4]");
  CHECK(x.type.quant.scales == std::vector<float>{0.05f});
  CHECK(x.type.quant.zeroPoints == std::vector<int32_t>{-3});
  CHECK(y.name == "y");
  CHECK(y.type.str() == "int8[1,3]");
  CHECK(y.type.quant.zeroPoints == std::vector<int32_t>{-128});
  REQUIRE(graph->numNodes() == 1);
  const Node &fc = *graph->nodes()[0];
  CHECK(fc.opType == "Gemm");
  CHECK(fc.attrs.getString("activation", "") == "Relu");
  CHECK(!fc.attrs.has(kInt8RoundingAttr)); // TFLM's double rounding
  const Value &w = *fc.input(1);
  REQUIRE(w.type.dtype == DType::Int8);
  std::vector<int8_t> stored(w.dataAs<int8_t>(), w.dataAs<int8_t>() + 12);
  CHECK(stored == std::vector<int8_t>{1, -2, 3, -4, 127, -128, 0, 5, -7, 8, 9, -10});
  CHECK(w.type.quant.scales == std::vector<float>{0.01f, 0.02f, 0.03f});
  const Value &b = *fc.input(2);
  REQUIRE(b.type.dtype == DType::Int32);
  CHECK(std::vector<int32_t>(b.dataAs<int32_t>(), b.dataAs<int32_t>() + 3) ==
        std::vector<int32_t>{100, -200, 300});
}

TEST_CASE("float inputs before QUANTIZE and outputs after DEQUANTIZE stay float") {
  ModelOptions options;
  options.path = int8FcModel("fc_float_io.tflite", true);
  auto graph = loadModel(options);
  CHECK(graph->inputs()[0]->type.str() == "float32[1,4]");
  CHECK(graph->outputs()[0]->type.str() == "float32[1,3]");
  CHECK(graph->outputs()[0]->name == "y_float");
  CHECK(countOps(*graph, "Quantize") == 1);
  CHECK(countOps(*graph, "Dequantize") == 1);
  REQUIRE(countOps(*graph, "Gemm") == 1);
}

//===----------------------------------------------------------------------===//
// Refused files: one line each, naming the tensor or operator
//===----------------------------------------------------------------------===//

namespace {

/// x [1,4] float -> ADD(x, c) -> y, with `c` breakable.
TfliteTestModel addModel(const std::vector<int32_t> &cShape = {1, 4},
                         const std::vector<float> &cValues = {1, 2, 3, 4}) {
  TfliteTestModel m;
  int32_t x = m.floatTensor("x", {1, 4});
  int32_t c = m.floatTensor("c", cShape, cValues);
  int32_t y = m.floatTensor("y", {1, 4});
  m.op(tflite::BuiltinOperator_ADD, {x, c}, {y});
  m.inputs({x});
  m.outputs({y});
  return m;
}

} // namespace

TEST_CASE("operators bundlefit cannot run are listed together, before any work") {
  TfliteTestModel m;
  int32_t x = m.floatTensor("x", {1, 4});
  int32_t a = m.floatTensor("a", {1, 4});
  int32_t b = m.floatTensor("b", {1, 4});
  int32_t y = m.floatTensor("y", {1, 4});
  m.op(tflite::BuiltinOperator_CUSTOM, {x}, {a}, tflite::BuiltinOptions_NONE, 0, "SignalFft");
  m.op(tflite::BuiltinOperator_RELU, {a}, {b});
  m.op(tflite::BuiltinOperator_CUSTOM, {b}, {y}, tflite::BuiltinOptions_NONE, 0, "SignalFft");
  m.op(tflite::BuiltinOperator_ELU, {y}, {y});
  m.inputs({x});
  m.outputs({y});
  const std::string path = m.save("custom.tflite");
  auto [code, message] = errorOf([&] { importTfliteModel(path); });
  CHECK(code == ExitCode::Unsupported);
  CHECK(message == path + ": 2 unsupported operators: custom 'SignalFft' (operators 0, 2), ELU "
                          "(operator 3)");
  // inspect keeps them as nodes.
  TfliteImportOptions lenient;
  lenient.rejectUnsupportedOps = false;
  CHECK(errorOf([&] { importTfliteModel(path, lenient); }).first == ExitCode::BadInputFile);
}

TEST_CASE("a broken file is one BadInputFile line naming the tensor or operator") {
  SUBCASE("not a file of the format") {
    const std::string path = writeBytes("text.tflite", {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o'});
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message == path + ": is not a TFLite model (no 'TFL3' file identifier at byte 4)");
  }
  SUBCASE("truncated") {
    std::vector<uint8_t> bytes = addModel().bytes();
    bytes.resize(bytes.size() / 2);
    const std::string path = writeBytes("truncated.tflite", bytes);
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message.find("the flatbuffers verifier rejects it") != std::string::npos);
  }
  SUBCASE("an operand index out of range") {
    TfliteTestModel m;
    int32_t x = m.floatTensor("x", {1, 4});
    int32_t y = m.floatTensor("y", {1, 4});
    m.op(tflite::BuiltinOperator_ADD, {x, 99}, {y});
    m.inputs({x});
    m.outputs({y});
    const std::string path = m.save("index.tflite");
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message == path + ": operator 0 (ADD)'s input list names tensor 99, but the subgraph "
                            "has 2 tensors");
  }
  SUBCASE("constant data shorter than its shape") {
    TfliteTestModel m = addModel({1, 4}, {1, 2});
    const std::string path = m.save("short.tflite");
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message == path + ": tensor 1 ('c') of shape [1,4] holds 8 bytes of data; its shape "
                            "needs 16");
  }
  SUBCASE("a buffer beyond the end of the file") {
    for (auto [offset, size] : {std::pair<uint64_t, uint64_t>{1000000, 16},
                                {~uint64_t(0) - 7, 16}}) { // offset + size wraps
      TfliteTestModel m;
      int32_t x = m.floatTensor("x", {1, 4});
      int32_t c = m.externalTensor("c", {1, 4}, offset, size);
      int32_t y = m.floatTensor("y", {1, 4});
      m.op(tflite::BuiltinOperator_ADD, {x, c}, {y});
      m.inputs({x});
      m.outputs({y});
      const std::string path = m.save("external.tflite");
      auto [code, message] = errorOf([&] { importTfliteModel(path); });
      CHECK(code == ExitCode::BadInputFile);
      CHECK(message.find(path + ": tensor 1 ('c'): its buffer 1 (offset " + std::to_string(offset) +
                         ", 16 bytes) lies beyond the end of the file") == 0);
    }
  }
  SUBCASE("an absurd shape") {
    TfliteTestModel m;
    int32_t x = m.floatTensor("x", {1 << 30, 1 << 30, 1 << 30});
    int32_t y = m.floatTensor("y", {1 << 30, 1 << 30, 1 << 30});
    m.op(tflite::BuiltinOperator_RELU, {x}, {y});
    m.inputs({x});
    m.outputs({y});
    const std::string path = m.save("huge.tflite");
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message.find("tensor 0 ('x') of shape [1073741824,1073741824,1073741824] is larger "
                       "than bundlefit's limit") != std::string::npos);
  }
  SUBCASE("per-channel scales that do not match the channels") {
    TfliteTestModel m;
    int32_t x = m.int8Tensor("x", {1, 4}, {{0.1f}, {0}});
    int32_t w = m.int8Tensor("w", {3, 4}, {{0.1f, 0.2f}, {0, 0}, 0}, std::vector<int8_t>(12, 1));
    int32_t y = m.int8Tensor("y", {1, 3}, {{0.1f}, {0}});
    m.op(tflite::BuiltinOperator_FULLY_CONNECTED, {x, w, -1}, {y});
    m.inputs({x});
    m.outputs({y});
    const std::string path = m.save("scales.tflite");
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message == path + ": tensor 1 ('w') has 2 scales for dimension 0 of size 3");
  }
  SUBCASE("a zero scale and a zero point out of range") {
    for (auto [scale, zeroPoint, expect] :
         {std::tuple<float, int64_t, const char *>{0.0f, 0, "has scale 0.000000"},
          {0.5f, 200, "has zero point 200 outside [-128, 127] for INT8"}}) {
      TfliteTestModel m;
      int32_t x = m.int8Tensor("x", {1, 4}, {{scale}, {zeroPoint}});
      int32_t y = m.int8Tensor("y", {1, 4}, {{0.1f}, {0}});
      m.op(tflite::BuiltinOperator_RELU, {x}, {y});
      m.inputs({x});
      m.outputs({y});
      const std::string path = m.save("scale0.tflite");
      auto [code, message] = errorOf([&] { importTfliteModel(path); });
      CHECK(code == ExitCode::BadInputFile);
      CHECK(message.find(path + ": tensor 0 ('x') " + expect) == 0);
    }
  }
  SUBCASE("an output shape the operator does not compute") {
    TfliteTestModel m;
    int32_t x = m.floatTensor("x", {1, 4});
    int32_t y = m.floatTensor("y", {1, 5});
    m.op(tflite::BuiltinOperator_RELU, {x}, {y});
    m.inputs({x});
    m.outputs({y});
    const std::string path = m.save("shape.tflite");
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message == path + ": operator 0 (RELU): its output 'y' is [1,4] by the operator's "
                            "definition, but the model says [1,5]");
  }
  SUBCASE("an output nothing computes, in a model without operators") {
    // fuzz_tflite_loader: naming "operator 0" of an empty operator list
    // read past the flatbuffer.
    TfliteTestModel m;
    int32_t x = m.floatTensor("x", {1, 4});
    int32_t ghost = m.floatTensor("ghost", {1, 4});
    m.inputs({x});
    m.outputs({ghost});
    const std::string path = m.save("no_operators.tflite");
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message == path + ": the subgraph's input and output lists: reads tensor 1 ('ghost'), "
                            "which is neither a graph input, a constant nor computed by an "
                            "earlier operator");
  }
  SUBCASE("an operator reading a tensor nothing computes") {
    TfliteTestModel m;
    int32_t x = m.floatTensor("x", {1, 4});
    int32_t ghost = m.floatTensor("ghost", {1, 4});
    int32_t y = m.floatTensor("y", {1, 4});
    m.op(tflite::BuiltinOperator_ADD, {x, ghost}, {y});
    m.inputs({x});
    m.outputs({y});
    const std::string path = m.save("ghost.tflite");
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message == path + ": operator 0 (ADD): reads tensor 1 ('ghost'), which is neither a "
                            "graph input, a constant nor computed by an earlier operator");
  }
}

TEST_CASE("legal TFLite bundlefit does not take is Unsupported, naming the tensor") {
  SUBCASE("an int16x8 operator without an int16 kernel") {
    TfliteTestModel m;
    int32_t x = m.tensor("x", tflite::TensorType_INT16, {1, 4}, {{0.1f}, {0}});
    int32_t y = m.tensor("y", tflite::TensorType_INT16, {1, 4}, {{0.1f}, {0}});
    m.op(tflite::BuiltinOperator_RELU, {x}, {y});
    m.inputs({x});
    m.outputs({y});
    const std::string path = m.save("int16.tflite");
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::Unsupported);
    CHECK(message == path + ": 1 unsupported operator: RELU int16x8 (operator 0)");
  }
  SUBCASE("an int16 activation inside an int8 model") {
    TfliteTestModel m;
    int32_t x = m.tensor("x", tflite::TensorType_INT8, {1, 4}, {{0.1f}, {0}});
    int32_t y = m.tensor("y", tflite::TensorType_INT16, {1, 4}, {{0.1f}, {0}});
    int32_t z = m.tensor("z", tflite::TensorType_INT8, {1, 4}, {{0.1f}, {0}});
    m.op(tflite::BuiltinOperator_RELU, {x}, {y});
    m.op(tflite::BuiltinOperator_RELU, {y}, {z});
    m.inputs({x});
    m.outputs({z});
    const std::string path = m.save("int16_inside.tflite");
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::Unsupported);
    CHECK(message == path + ": tensor 1 ('y') is int16 in a model whose inputs and outputs are "
                            "not: int16 activations are supported in int16x8 models only");
  }
  SUBCASE("a dynamic dimension") {
    TfliteTestModel m;
    int32_t x = m.floatTensor("x", {-1, 4});
    int32_t y = m.floatTensor("y", {-1, 4});
    m.op(tflite::BuiltinOperator_RELU, {x}, {y});
    m.inputs({x});
    m.outputs({y});
    const std::string path = m.save("dynamic.tflite");
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::Unsupported);
    CHECK(message == path + ": tensor 0 ('x') has dimension -1 (a dynamic shape); bundlefit "
                            "compiles static shapes of at least 1");
  }
}

namespace {

/// A float UNIDIRECTIONAL_SEQUENCE_LSTM model ([T, B, I] when time-major,
/// else [B, T, I]); `weights` holds the 8 weight matrices (input-to-gate i,
/// f, c, o [H, I], then recurrent [H, H]) and `biases` the 4 biases [H].
/// `peephole` adds cell_to_forget weights, `cifg` drops the input gate.
std::string lstmModel(const std::string &fileName, int t, int b, int i, int h, bool timeMajor,
                      float cellClip, const std::vector<std::vector<float>> &weights,
                      const std::vector<std::vector<float>> &biases, bool peephole = false,
                      bool cifg = false) {
  TfliteTestModel m;
  const std::vector<int32_t> xShape =
      timeMajor ? std::vector<int32_t>{t, b, i} : std::vector<int32_t>{b, t, i};
  std::vector<int32_t> operands = {m.floatTensor("x", xShape)};
  for (int g = 0; g < 8; ++g)
    operands.push_back(
        m.floatTensor("w" + std::to_string(g), {h, g < 4 ? i : h}, weights[size_t(g)]));
  if (cifg)
    operands[1] = operands[5] = -1;
  operands.insert(operands.end(), {-1, peephole ? m.floatTensor("p", {h}, biases[0]) : -1, -1});
  for (int g = 0; g < 4; ++g)
    operands.push_back(m.floatTensor("b" + std::to_string(g), {h}, biases[size_t(g)]));
  operands.insert(operands.end(),
                  {-1, -1, m.floatTensor("state_h", {b, h}), m.floatTensor("state_c", {b, h})});
  const std::vector<int32_t> yShape =
      timeMajor ? std::vector<int32_t>{t, b, h} : std::vector<int32_t>{b, t, h};
  int32_t y = m.floatTensor("y", yShape);
  auto options = tflite::CreateUnidirectionalSequenceLSTMOptions(
      m.builder(), tflite::ActivationFunctionType_TANH, cellClip, 0.0f, timeMajor);
  m.op(tflite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM, operands, {y},
       tflite::BuiltinOptions_UnidirectionalSequenceLSTMOptions, options.Union());
  m.inputs({operands[0]});
  m.outputs({y});
  return m.save(fileName);
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

} // namespace

TEST_CASE("UNIDIRECTIONAL_SEQUENCE_LSTM float: TFLite's gate order, cell_clip and time_major") {
  const int t = 3, b = 2, i = 2, h = 3;
  const float cellClip = 0.6f;
  std::vector<std::vector<float>> weights, biases;
  for (int g = 0; g < 8; ++g) {
    weights.push_back(randomFloats(size_t(h * (g < 4 ? i : h)), 40 + unsigned(g)));
    for (float &w : weights.back())
      w *= 2.0f; // cells beyond the clip
  }
  for (int g = 0; g < 4; ++g)
    biases.push_back(randomFloats(size_t(h), 50 + unsigned(g)));
  const std::vector<float> x = randomFloats(size_t(t * b * i), 60);
  for (bool timeMajor : {false, true}) {
    CAPTURE(timeMajor);
    // TFLite's float LSTM (lstm_eval): gates i, f, c, o; c = f*c + i*g,
    // clipped; h = o * tanh(c); state zero at the first step.
    auto at = [&](int step, int n) { return timeMajor ? step * b + n : n * t + step; };
    std::vector<float> want(size_t(t * b * h));
    int clipped = 0;
    for (int n = 0; n < b; ++n) {
      std::vector<float> hs(size_t(h), 0.0f), cs(size_t(h), 0.0f);
      for (int step = 0; step < t; ++step) {
        std::vector<float> gate(size_t(4 * h));
        for (int g = 0; g < 4; ++g)
          for (int k = 0; k < h; ++k) {
            float sum = biases[size_t(g)][size_t(k)];
            for (int j = 0; j < i; ++j)
              sum += weights[size_t(g)][size_t(k * i + j)] * x[size_t(at(step, n) * i + j)];
            for (int j = 0; j < h; ++j)
              sum += weights[size_t(4 + g)][size_t(k * h + j)] * hs[size_t(j)];
            gate[size_t(g * h + k)] = sum;
          }
        for (int k = 0; k < h; ++k) {
          float c = sigmoid(gate[size_t(h + k)]) * cs[size_t(k)] +
                    sigmoid(gate[size_t(k)]) * std::tanh(gate[size_t(2 * h + k)]);
          clipped += std::fabs(c) > cellClip;
          cs[size_t(k)] = std::clamp(c, -cellClip, cellClip);
          hs[size_t(k)] = sigmoid(gate[size_t(3 * h + k)]) * std::tanh(cs[size_t(k)]);
          want[size_t(at(step, n) * h + k)] = hs[size_t(k)];
        }
      }
    }
    CHECK(clipped > 0); // the test reaches the clip
    auto graph = importTfliteModel(lstmModel(timeMajor ? "lstm_tm.tflite" : "lstm.tflite", t, b, i,
                                             h, timeMajor, cellClip, weights, biases));
    // One TfliteLstm (bf_lstm_f32 in a bundle), not the IR's unrolled LSTM.
    REQUIRE(countOps(*graph, "TfliteLstm") == 1);
    CHECK(countOps(*graph, "LSTM") == 0);
    inferGraphTypes(*graph);
    checkClose(runFloat(*graph, x), want);
  }
}

TEST_CASE("UNIDIRECTIONAL_SEQUENCE_LSTM float: the bundle's bf_lstm_f32 equals the interpreter's "
          "reference, time-major, batched and clipped") {
  // mnist_lstm (tflite_vs_tflm) is batch-major, one sample, no clip: this
  // covers the rest (the cell clip 0.6 is reached, as in the test above).
  const int t = 5, b = 3, i = 4, h = 6;
  std::vector<std::vector<float>> weights, biases;
  for (int g = 0; g < 8; ++g) {
    weights.push_back(randomFloats(size_t(h * (g < 4 ? i : h)), 70 + unsigned(g)));
    for (float &w : weights.back())
      w *= 2.0f;
  }
  for (int g = 0; g < 4; ++g)
    biases.push_back(randomFloats(size_t(h), 80 + unsigned(g)));
  for (bool timeMajor : {false, true}) {
    CAPTURE(timeMajor);
    driver::ModelRunOptions options;
    options.compile.model.path = lstmModel(timeMajor ? "lstm_f32_tm.tflite" : "lstm_f32_bm.tflite",
                                           t, b, i, h, timeMajor, 0.6f, weights, biases);
    options.compare = true;
    const Shape shape = timeMajor ? Shape{t, b, i} : Shape{b, t, i};
    Tensor x(TensorType{DType::Float32, shape, {}});
    const std::vector<float> values = randomFloats(size_t(t * b * i), 90);
    std::memcpy(x.bytes.data(), values.data(), values.size() * sizeof(float));
    const driver::ModelRun run = driver::runModel(options, {{"", x, "x"}});
    REQUIRE(run.outputs.size() == 1);
    REQUIRE(run.outputs[0].comparison);
    // The bundle's sigmoid and tanh are vector_math.h's, the reference's libm's.
    CHECK(run.outputs[0].comparison->maxAbsDiff < 1e-6);
    CHECK(run.outputs[0].comparison->maxAbsReference > 0.1);
  }
}

TEST_CASE("UNIDIRECTIONAL_SEQUENCE_LSTM variants bundlefit does not run are refused by name") {
  const int h = 2;
  std::vector<std::vector<float>> weights(8, std::vector<float>(size_t(h * h), 0.5f));
  std::vector<std::vector<float>> biases(4, std::vector<float>(size_t(h), 0.0f));
  for (auto [peephole, cifg, variant] : {std::tuple{true, false, "with peephole weights"},
                                         std::tuple{false, true, "CIFG (no input gate)"}}) {
    const std::string path =
        lstmModel("lstm_variant.tflite", 2, 1, h, h, false, 0.0f, weights, biases, peephole, cifg);
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::Unsupported);
    CHECK(message == path + ": 1 unsupported operator: UNIDIRECTIONAL_SEQUENCE_LSTM " + variant +
                         ": not supported yet (operator 0)");
  }
}

namespace {

/// An int8 UNIDIRECTIONAL_SEQUENCE_LSTM (TFLM's integer LSTM): int8 input,
/// weights (scale 0.01 + 0.001 g) and output state (scale 1/128, zero point
/// 3), int32 biases, an int16 cell state of scale `cellScale`.
std::string int8LstmModel(const std::string &fileName, int t, int b, int i, int h, bool timeMajor,
                          float cellClip, float cellScale, bool peephole = false) {
  TfliteTestModel m;
  const std::vector<int32_t> xShape =
      timeMajor ? std::vector<int32_t>{t, b, i} : std::vector<int32_t>{b, t, i};
  const TestQuant state{{1.0f / 128.0f}, {3}};
  std::vector<int32_t> operands = {m.int8Tensor("x", xShape, {{0.05f}, {-2}})};
  for (int g = 0; g < 8; ++g) {
    const int columns = g < 4 ? i : h;
    std::vector<int8_t> w(size_t(h * columns));
    for (size_t k = 0; k < w.size(); ++k)
      w[k] = int8_t(int(k * 37 + size_t(g) * 11) % 255 - 127);
    operands.push_back(
        m.int8Tensor("w" + std::to_string(g), {h, columns}, {{0.01f + 0.001f * float(g)}, {0}}, w));
  }
  operands.insert(
      operands.end(),
      {-1,
       peephole ? m.int8Tensor("p", {h}, {{0.01f}, {0}}, std::vector<int8_t>(size_t(h), 1)) : -1,
       -1});
  for (int g = 0; g < 4; ++g)
    operands.push_back(
        m.int32Tensor("b" + std::to_string(g), {h}, std::vector<int32_t>(size_t(h), 100 * g - 50)));
  operands.insert(operands.end(),
                  {-1, -1, m.int8Tensor("state_h", {b, h}, state),
                   m.tensor("state_c", tflite::TensorType_INT16, {b, h}, {{cellScale}, {0}})});
  const std::vector<int32_t> yShape =
      timeMajor ? std::vector<int32_t>{t, b, h} : std::vector<int32_t>{b, t, h};
  int32_t y = m.int8Tensor("y", yShape, state);
  auto options = tflite::CreateUnidirectionalSequenceLSTMOptions(
      m.builder(), tflite::ActivationFunctionType_TANH, cellClip, 0.0f, timeMajor);
  m.op(tflite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM, operands, {y},
       tflite::BuiltinOptions_UnidirectionalSequenceLSTMOptions, options.Union());
  m.inputs({operands[0]});
  m.outputs({y});
  return m.save(fileName);
}

} // namespace

TEST_CASE("UNIDIRECTIONAL_SEQUENCE_LSTM int8: one TfliteLstm node on the stored integers") {
  auto graph =
      importTfliteModel(int8LstmModel("lstm_int8.tflite", 3, 2, 4, 5, true, 2.0f, 1.0f / 2048.0f));
  REQUIRE(countOps(*graph, "TfliteLstm") == 1);
  CHECK(countOps(*graph, "LSTM") == 0);
  for (const Node *node : graph->nodes()) {
    if (node->opType != "TfliteLstm")
      continue;
    CHECK(node->attrs.getInt("time_major", 0) == 1);
    CHECK(node->attrs.getFloat("cell_clip", 0.0f) == 2.0f);
    CHECK(node->attrs.getFloat("cell_scale", 0.0f) == 1.0f / 2048.0f);
    const Value &w = *node->input(1);
    CHECK(w.type.dtype == DType::Int8);
    CHECK(w.type.shape == Shape{4, 5, 4});
    CHECK(w.type.quant.scales == std::vector<float>{0.01f, 0.011f, 0.012f, 0.013f});
    CHECK(node->input(3)->type.dtype == DType::Int32);
    CHECK(node->output()->type.shape == Shape{3, 2, 5});
  }
}

TEST_CASE("UNIDIRECTIONAL_SEQUENCE_LSTM int8 variants are refused by name") {
  {
    const std::string path = int8LstmModel("lstm_int8_peephole.tflite", 2, 1, 2, 2, false, 0.0f,
                                           1.0f / 2048.0f, /*peephole=*/true);
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::Unsupported);
    CHECK(message == path + ": 1 unsupported operator: UNIDIRECTIONAL_SEQUENCE_LSTM int8 with "
                            "peephole weights: not supported yet (operator 0)");
  }
  {
    const std::string path =
        int8LstmModel("lstm_int8_cell.tflite", 2, 1, 2, 2, false, 0.0f, 0.0003f);
    auto [code, message] = errorOf([&] { importTfliteModel(path); });
    CHECK(code == ExitCode::Unsupported);
    CHECK(message.find("'state_c') must have one scale, a power of two, and zero point 0") !=
          std::string::npos);
  }
}

TEST_CASE("UNIDIRECTIONAL_SEQUENCE_LSTM int8: the bundle's bf_lstm_s8 equals the interpreter's "
          "reference, time-major, batched and clipped") {
  // mnist_lstm (tflite_vs_tflm) is batch-major, one sample, no clip: this
  // covers the rest. The two share only the parameters' scales.
  for (bool timeMajor : {false, true}) {
    CAPTURE(timeMajor);
    const int t = 4, b = 3, i = 5, h = 6;
    driver::ModelRunOptions options;
    options.compile.model.path =
        int8LstmModel(timeMajor ? "lstm_int8_tm.tflite" : "lstm_int8_bm.tflite", t, b, i, h,
                      timeMajor, 1.5f, 1.0f / 2048.0f);
    options.compare = true;
    const Shape shape = timeMajor ? Shape{t, b, i} : Shape{b, t, i};
    Tensor x(TensorType{DType::Int8, shape, {}});
    std::mt19937 random(33);
    for (uint8_t &byte : x.bytes)
      byte = uint8_t(random());
    const driver::ModelRun run = driver::runModel(options, {{"", x, "x"}});
    REQUIRE(run.outputs.size() == 1);
    REQUIRE(run.outputs[0].comparison);
    CHECK(run.outputs[0].comparison->maxAbsDiff == 0);
    CHECK(run.outputs[0].comparison->maxAbsReference > 0);
  }
}
