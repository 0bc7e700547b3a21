//===- TfliteLstmInt8.cpp - TFLite's int8 and int16x8 LSTM kernels ---------===//
//
// `TfliteLstm` (TfliteLstm.cpp) with integer operands: an int8
// UNIDIRECTIONAL_SEQUENCE_LSTM as the TFLite importer writes it. TFLM's
// integer LSTM keeps int16 gates and an int16 cell state between int8 input
// and hidden state, which no composition of the IR's int8 ops reproduces bit
// for bit, so it is one node with one kernel (bf_lstm_s8) instead of an
// expansion:
//   X [B, T, I] (time_major: [T, B, I]), the activation;
//   W [4, H, I] and R [4, H, H]: int8 constants, one scale per gate (axis 0),
//     gates i, f, c, o; B [4, H]: the int32 input biases;
//   attributes time_major, cell_scale (a power of two), cell_clip (0: none);
//   Y [B, T, H] like X: the hidden state of every step, int8 with the hidden
//     state's scale and zero point.
// The int16x8 variant has int16 X and Y (zero point 0) and int64 biases B:
// TFLM runs it through the same step code (lstm_eval.h, EvalLstm<int16_t,
// int8_t, int16_t, int64_t>) except that both fully connected products sum
// in int64 and requantize by the 64-bit rule of the int16 convolutions, and
// the hidden state is clamped to int16 (kernel bf_lstm_s16).
// The kernel's parameters are TFLM's Prepare() arithmetic (its
// lstm_eval_common.cc): each gate's products requantized to 2^-12, the
// inter-gate multiplies' effective scales, the tanh input scaling of the cell
// state.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include "common/CallArgs.h"
#include "common/Int8Args.h"
#include "common/Int8Reference.h"
#include "int16x8/Int16x8Common.h"
#include "recurrent/TfliteLstm.h"

#include "bundlefit/kernels/abi.h"

#include <cmath>

namespace bundlefit {

using namespace shape_helpers;

namespace {

constexpr double kGateScale = 1.0 / 4096.0;        // 2^-12: gate pre-activations (Q3.12)
constexpr double kActivationScale = 1.0 / 32768.0; // 2^-15: sigmoid/tanh outputs (Q0.15)

/// One scale per gate of int8 weights `w` (TFLite's per-tensor scales).
std::vector<float> gateScales(const Node &node, const Value &w, const char *role) {
  const QuantParams &q = w.type.quant;
  if (q.scales.size() != 4 || q.zeroPoints.size() != 4)
    unsupported(node, std::string(role) + " needs one scale per gate");
  for (size_t g = 0; g < 4; ++g)
    if (q.zeroPoints[g] != 0 || !(q.scales[g] > 0.0f))
      unsupported(node, std::string(role) + " must be symmetric with scales > 0");
  return q.scales;
}

/// The scale and zero point of activation `v`: int8, or int16 with zero
/// point 0 (int16x8).
int8_args::Affine activationParams(const Node &node, const Value *v, const char *role) {
  if (v && v->type.dtype == DType::Int16)
    return {int16x8::int16Scale(node, v, role), 0};
  return int8_args::activationParams(node, v, role);
}

} // namespace

std::vector<int32_t> tfliteLstmParams(const Node &node) {
  using int8_ref::quantizeMultiplier;
  const int8_args::Affine in = activationParams(node, node.input(0), "input");
  const int8_args::Affine out = activationParams(node, node.output(0), "output");
  const std::vector<float> w = gateScales(node, *node.input(1), "W");
  const std::vector<float> r = gateScales(node, *node.input(2), "R");
  std::vector<int32_t> p(BF_LSTM_PARAM_COUNT, 0);
  auto put = [&](size_t at, double real) {
    const int8_ref::Multiplier m = quantizeMultiplier(real);
    p[at] = m.m, p[at + 1] = m.s;
  };
  for (size_t g = 0; g < 4; ++g) { // TFLite's GetQuantizedConvolutionMultipler
    put(4 * g, double(in.scale) * double(w[g]) / kGateScale);
    put(4 * g + 2, double(out.scale) * double(r[g]) / kGateScale);
  }
  const float cellScale = node.attrs.getFloat("cell_scale", 0.0f);
  int power = 0;
  if (!(cellScale > 0.0f) || std::frexp(cellScale, &power) != 0.5f)
    unsupported(node,
                "the cell state's scale " + std::to_string(cellScale) + " is not a power of two");
  --power; // cellScale = 2^power
  put(BF_LSTM_FORGET_MULT, kActivationScale * double(cellScale) / double(cellScale));
  put(BF_LSTM_INPUT_MULT, kActivationScale * kActivationScale / double(cellScale));
  put(BF_LSTM_OUTPUT_MULT, kActivationScale * kActivationScale / double(out.scale));
  // TFLM lstm_eval.cc Tanh: the cell state (Q(15+power)) brought to Q3.12 x 3/4.
  const int leftShift = 15 + power - 3;
  p[BF_LSTM_TANH_MULT] = leftShift < 0 ? 3 : 3 << std::min(leftShift, 20);
  p[BF_LSTM_TANH_SHIFT] = leftShift < 0 ? std::min(-leftShift, 30) : 0;
  p[BF_LSTM_INPUT_ZP] = in.zeroPoint;
  p[BF_LSTM_HIDDEN_ZP] = out.zeroPoint;
  const float clip = node.attrs.getFloat("cell_clip", 0.0f);
  if (clip > 0.0f) // TFLM CreateLstmCellStateInfo (truncated toward zero)
    p[BF_LSTM_CELL_CLIP] =
        int16_t(std::min(std::max(double(clip) / double(cellScale), -32768.0), 32767.0));
  return p;
}

namespace {

std::vector<KernelCall> lower(const Node &node) {
  const TfliteLstmGeometry g = tfliteLstmGeometry(node);
  call_args::Args args;
  args.addr(node.input(0)).addr(node.input(1)).addr(node.input(2)).addr(node.input(3));
  args.table(tfliteLstmParams(node)).addr(node.output(0)).scratch();
  args.i32(g.batch).i32(g.steps).i32(g.inputs).i32(g.cells).i32(g.timeMajor ? 1 : 0);
  return {args.call(node.input(0)->type.dtype == DType::Int16 ? "bf_lstm_s16" : "bf_lstm_s8")};
}

std::vector<size_t> activationInputs(const Node &) { return {0}; }

} // namespace

void registerTfliteLstmInt8(OpRegistry &registry) {
  OpDef &def = registry.at(kTfliteLstmOp).quantized(Int8Rule::OwnParams);
  def.int8.activationInputs = activationInputs;
  def.int8.lower = lower;
}

} // namespace bundlefit
