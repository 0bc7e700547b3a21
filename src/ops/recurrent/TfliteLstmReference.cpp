//===- TfliteLstmReference.cpp - The references of TfliteLstm --------------===//
//
// TFLM's integer LSTM step (lstm_eval.h LstmStep with the int16 helpers of
// lstm_eval.cc) written as TFLM structures it, a whole gate vector at a
// time, from the node's scales (not bf_lstm_s8's parameter table, which
// runs cell by cell), so comparing the bundle with the interpreter tests
// both:
//   gate = act(sat16(FC16(x, W, bias) + FC16(h, R)))   Q3.12 -> Q0.15
//   c    = clip(sat16(mul16(f, c) + mul16(i, g)))      scale 2^power
//   h    = mul8(tanh(c), o)                            the output's scale
// FC16 requantizes to 2^-12 and clamps to int16; mul16/mul8 are
// MulElementwise with the effective scale of the two operands' product.
// The int16x8 variant (TFLM's EvalLstm<int16_t, int8_t, int16_t, int64_t>):
// FC16 sums in int64 with the int64 bias and TFLM's 64-bit requantization,
// and h = mul16(tanh(c), o), clamped to int16.
// The float variant is TFLM's float step (reference FullyConnected,
// Logistic with its cutoffs, std::tanh) through the same loop (runLstm).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/kernels/abi.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include "common/Int8Reference.h"
#include "int16x8/Int16x8Common.h"
#include "recurrent/TfliteLstm.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace bundlefit {

using namespace int8_ref;
using shape_helpers::unsupported;

namespace {

int16_t sat16(int64_t v) { return int16_t(std::clamp<int64_t>(v, -32768, 32767)); }

/// reference_integer_ops::Logistic (int16) with input multiplier 0 and
/// shift 0: the power-of-two case, multiplier 3.
int16_t sigmoid16(int16_t x) {
  const int32_t in = int32_t(x) * 3;
  const uint32_t a = uint32_t(std::abs(in));
  const uint32_t high = a >> 9;
  uint32_t r = 0x7FFFu << 10;
  if (high < 255) {
    const uint32_t lo = bf_sigmoid_table_u16[high], hi = bf_sigmoid_table_u16[high + 1];
    r = (lo << 9) + (a & 0x1FFu) * (hi - lo);
  }
  r = in >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
  return int16_t(r >> 10);
}

/// reference_integer_ops::Tanh (int16) as lstm_eval.cc calls it for an
/// input of scale 2^power.
int16_t tanh16(int16_t x, int power) {
  int32_t shift = 15 + power - 3, multiplier = 0;
  if (shift < 0)
    shift = -shift, multiplier = 3;
  if (multiplier == 0) // power of two: the shift folds into the multiplier
    multiplier = 3 << shift, shift = 0;
  const int32_t round = shift > 0 ? 1 << (shift - 1) : 0;
  const int32_t in = (int32_t(x) * multiplier + round) >> shift;
  const uint32_t a = uint32_t(std::abs(in));
  const uint32_t high = a >> 8;
  int32_t r = 0xFFFF << 8;
  if (high < 255) {
    const uint32_t lo = bf_sigmoid_table_u16[high], hi = bf_sigmoid_table_u16[high + 1];
    r = int32_t((lo << 8) + uint32_t(uint8_t(a & 0xFF)) * (hi - lo));
  }
  r = in >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
  return int16_t(r >> 8);
}

/// TFLM's requantization of a FullyConnected sum: the 32-bit rule for int8's
/// int32 sums, the 64-bit one for int16x8's int64 sums.
int32_t requantize(int32_t acc, Multiplier q) { return multiplyByQuantizedMultiplier(acc, q); }
int32_t requantize(int64_t acc, Multiplier q) { return int16x8::mbqm64(acc, q); }

/// One FullyConnected to int16 at scale 2^-12: out[j] = sat16(requantize(
/// sum((v + offset) * w[j]) + bias[j])), summed in the bias's type as TFLM
/// does (reference_integer_ops::FullyConnected).
template <typename Act, typename Bias>
std::vector<int16_t> fc16(const Act *v, int64_t n, int32_t offset, const int8_t *w,
                          const Bias *bias, int64_t rows, double real) {
  const Multiplier q = quantizeMultiplier(real);
  std::vector<int16_t> out(static_cast<size_t>(rows));
  for (int64_t j = 0; j < rows; ++j) {
    Bias acc = 0;
    for (int64_t k = 0; k < n; ++k)
      acc += (int32_t(v[k]) + offset) * int32_t(w[j * n + k]);
    if (bias)
      acc += bias[j];
    out[size_t(j)] = sat16(requantize(acc, q));
  }
  return out;
}

/// TFLM's EvalLstm loop, shared by the variants: for each batch row and step,
/// the four gate vectors (i, f, c, o) from `gate(g, xRow, h)`, then cell by
/// cell `step(gates, c[k], k)` updates the cell state and returns the hidden
/// state, which is written to Y. The hidden state starts at `h0`, the cell
/// state at 0.
template <typename Act, typename Cell, typename GateFn, typename StepFn>
void runLstm(const Node &node, const Act *x, Act *y, Act h0, GateFn gate, StepFn step) {
  const Value &xv = *node.input(0), &rv = *node.input(2);
  const bool timeMajor = node.attrs.getInt("time_major", 0) != 0;
  const int64_t steps = xv.type.shape[timeMajor ? 0 : 1], batch = xv.type.shape[timeMajor ? 1 : 0];
  const int64_t nIn = xv.type.shape[2], cells = rv.type.shape[1];
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Act> h(static_cast<size_t>(cells), h0);
    std::vector<Cell> c(static_cast<size_t>(cells), Cell(0));
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t row = timeMajor ? t * batch + b : b * steps + t;
      const Act *xRow = x + row * nIn;
      const std::array<decltype(gate(0, xRow, h.data())), 4> gates = {
          gate(0, xRow, h.data()), gate(1, xRow, h.data()), gate(2, xRow, h.data()),
          gate(3, xRow, h.data())};
      for (int64_t j = 0; j < cells; ++j) {
        const size_t k = size_t(j);
        h[k] = step(gates.data(), c[k], k);
        y[row * cells + j] = h[k];
      }
    }
  }
}

/// Act int8 and Bias int32, or Act int16 and Bias int64 (int16x8).
template <typename Act, typename Bias>
void tfliteLstm(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs) {
  const Value &xv = *node.input(0), &rv = *node.input(2), &yv = *node.output(0);
  const int64_t nIn = xv.type.shape[2], cells = rv.type.shape[1];
  const float inScale = xv.type.quant.scales.at(0), outScale = yv.type.quant.scales.at(0);
  const int32_t inZero = xv.type.quant.zeroPoints.at(0), hZero = yv.type.quant.zeroPoints.at(0);
  const std::vector<float> &wScales = node.input(1)->type.quant.scales;
  const std::vector<float> &rScales = rv.type.quant.scales;
  const double cellScale = node.attrs.getFloat("cell_scale", 1.0f);
  int power = 0;
  std::frexp(cellScale, &power);
  --power;
  const double clip = node.attrs.getFloat("cell_clip", 0.0f);
  const int16_t clip16 =
      clip > 0 ? int16_t(std::min(std::max(clip / cellScale, -32768.0), 32767.0)) : 0;
  const double gateScale = 1.0 / 4096.0, act = 1.0 / 32768.0;
  const Multiplier forgetMul = quantizeMultiplier(act * cellScale / cellScale);
  const Multiplier inputMul = quantizeMultiplier(act * act / cellScale);
  const Multiplier outputMul = quantizeMultiplier(act * act / double(outScale));

  const int8_t *w = inputs[1]->data<int8_t>(), *r = inputs[2]->data<int8_t>();
  const Bias *bias = inputs[3]->data<Bias>();
  // Gate g: act(sat16(FC16(x, W, bias) + FC16(h, R))), Q0.15.
  auto gate = [&](int g, const Act *xRow, const Act *h) {
    std::vector<int16_t> in = fc16(xRow, nIn, -inZero, w + g * cells * nIn, bias + g * cells, cells,
                                   double(inScale) * double(wScales[size_t(g)]) / gateScale);
    std::vector<int16_t> rec =
        fc16<Act, Bias>(h, cells, -hZero, r + g * cells * cells, nullptr, cells,
                        double(outScale) * double(rScales[size_t(g)]) / gateScale);
    for (size_t j = 0; j < in.size(); ++j) {
      const int16_t sum = sat16(int32_t(in[j]) + rec[j]);
      in[j] = g == 2 ? tanh16(sum, -12) : sigmoid16(sum);
    }
    return in;
  };
  auto step = [&](const std::vector<int16_t> *gates, int16_t &c, size_t k) {
    const int16_t kept = sat16(multiplyByQuantizedMultiplier(int32_t(gates[1][k]) * c, forgetMul));
    const int16_t added =
        sat16(multiplyByQuantizedMultiplier(int32_t(gates[0][k]) * gates[2][k], inputMul));
    c = sat16(int32_t(kept) + added);
    if (clip16 > 0)
      c = std::clamp<int16_t>(c, int16_t(-clip16), clip16);
    const int32_t o =
        hZero + multiplyByQuantizedMultiplier(int32_t(tanh16(c, power)) * gates[3][k], outputMul);
    return Act(
        std::clamp<int32_t>(o, std::numeric_limits<Act>::min(), std::numeric_limits<Act>::max()));
  };
  runLstm<Act, int16_t>(node, inputs[0]->data<Act>(), outputs[0].data<Act>(), Act(hZero), gate,
                        step);
}

/// reference_ops::Logistic (float), as TFLM's float LSTM calls it.
float sigmoidF32(float x) {
  if (x > 16.619047164916992188f)
    return 1.0f;
  if (x < -9.0f)
    return std::exp(x);
  return 1.0f / (1.0f + std::exp(-x));
}

} // namespace

/// TFLM's float LSTM (lstm_eval.cc with float operands): gate =
/// act(FC(x, W, bias) + FC(h, R)), each FC summed in order;
/// c = clip(f * c + i * g); h = tanh(c) * o.
void tfliteLstmFloat(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs) {
  if (node.input(1)->type.dtype != DType::Float32)
    unsupported(node, "int8 W in a float build (the int8 LSTM runs quantized only)");
  const int64_t nIn = node.input(0)->type.shape[2], cells = node.input(2)->type.shape[1];
  const float clip = node.attrs.getFloat("cell_clip", 0.0f);
  const float *w = inputs[1]->data<float>(), *r = inputs[2]->data<float>();
  const float *bias = inputs[3]->data<float>();
  auto gate = [&](int g, const float *xRow, const float *h) {
    std::vector<float> out(static_cast<size_t>(cells));
    for (int64_t j = 0; j < cells; ++j) {
      const float *wRow = w + (g * cells + j) * nIn, *rRow = r + (g * cells + j) * cells;
      float in = 0.0f, rec = 0.0f;
      for (int64_t k = 0; k < nIn; ++k)
        in += xRow[k] * wRow[k];
      for (int64_t k = 0; k < cells; ++k)
        rec += h[k] * rRow[k];
      const float sum = (in + bias[g * cells + j]) + rec;
      out[size_t(j)] = g == 2 ? std::tanh(sum) : sigmoidF32(sum);
    }
    return out;
  };
  auto step = [&](const std::vector<float> *gates, float &c, size_t k) {
    const float kept = gates[1][k] * c;
    const float added = gates[0][k] * gates[2][k];
    c = kept + added;
    if (clip > 0.0f)
      c = std::clamp(c, -clip, clip);
    return std::tanh(c) * gates[3][k];
  };
  runLstm<float, float>(node, inputs[0]->data<float>(), outputs[0].data<float>(), 0.0f, gate, step);
}

namespace {

void tfliteLstmKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                      std::vector<Tensor> &outputs) {
  if (node.input(0)->type.dtype == DType::Int16)
    tfliteLstm<int16_t, int64_t>(node, inputs, outputs);
  else
    tfliteLstm<int8_t, int32_t>(node, inputs, outputs);
}

} // namespace

void registerTfliteLstmInt8Reference(OpRegistry &registry) {
  registry.at(kTfliteLstmOp).int8Runs(tfliteLstmKernel);
}

} // namespace bundlefit
