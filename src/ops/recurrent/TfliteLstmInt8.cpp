//===- TfliteLstmInt8.cpp - TFLite's integer LSTM as one kernel ------------===//
//
// `TfliteLstm`: an int8 UNIDIRECTIONAL_SEQUENCE_LSTM as the TFLite importer
// writes it (tflite/TfliteLstm.cpp). TFLM's integer LSTM keeps int16 gates
// and an int16 cell state between int8 input and hidden state, which no
// composition of the IR's int8 ops reproduces bit for bit, so it is one
// node with one kernel (bf_lstm_s8) instead of an expansion:
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
// The float variant (float32 X, W, R, B, Y; attribute cell_clip) is TFLM's
// float LSTM, kernel bf_lstm_f32: the float model's LSTM as one node, each
// step's hidden state written straight into Y (the IR's unrolled LSTM kept
// one buffer per step). A quantized build keeps it float (whyFloat).
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

struct Geometry {
  int64_t batch = 0, steps = 0, inputs = 0, cells = 0;
  bool timeMajor = false;
};

Geometry geometryOf(const Node &node) {
  const Value &x = requireInput(node, 0, "X");
  const Value &w = requireInput(node, 1, "W");
  const Value &r = requireInput(node, 2, "R");
  const Value &b = requireInput(node, 3, "B");
  if (x.type.rank() != 3 || r.type.rank() != 3)
    unsupported(node, "X and R must have rank 3, got " + x.type.str() + " and " + r.type.str());
  Geometry g;
  g.timeMajor = node.attrs.getInt("time_major", 0) != 0;
  g.steps = x.type.shape[g.timeMajor ? 0 : 1];
  g.batch = x.type.shape[g.timeMajor ? 1 : 0];
  g.inputs = x.type.shape[2];
  g.cells = r.type.shape[1];
  if (g.steps <= 0 || g.batch <= 0 || g.inputs <= 0 || g.cells <= 0)
    unsupported(node, "X " + x.type.str() + " or R " + r.type.str() + " has an empty dimension");
  // The kernel's indices are below B * T * max(I, H) and 4 * H * max(I, H).
  constexpr int64_t kDimLimit = int64_t(1) << 20;
  if (g.batch > kDimLimit || g.steps > kDimLimit || g.inputs > kDimLimit || g.cells > kDimLimit ||
      g.batch * g.steps * std::max(g.inputs, g.cells) > INT32_MAX ||
      4 * g.cells * std::max(g.inputs, g.cells) > INT32_MAX)
    unsupported(node, "sizes beyond int32");
  if (w.type.dtype == DType::Float32) { // TFLite's float LSTM
    if (x.type.dtype != DType::Float32 || r.type.dtype != DType::Float32 ||
        b.type.dtype != DType::Float32)
      unsupported(node, "float32 W needs float32 X, R and B");
  } else {
    // int64 biases with int16 activations (TFLite's int16x8), int32 otherwise.
    const DType bias = x.type.dtype == DType::Int16 ? DType::Int64 : DType::Int32;
    if (w.type.dtype != DType::Int8 || r.type.dtype != DType::Int8 || b.type.dtype != bias)
      unsupported(node, std::string("W and R must be int8 (or all float32), B ") +
                            (bias == DType::Int64 ? "int64 (int16 X)" : "int32"));
  }
  if (w.type.shape != Shape{4, g.cells, g.inputs} || r.type.shape != Shape{4, g.cells, g.cells} ||
      b.type.shape != Shape{4, g.cells})
    unsupported(node, "W " + w.type.str() + ", R " + r.type.str() + ", B " + b.type.str() +
                          " do not match " + std::to_string(g.cells) + " cells of " +
                          std::to_string(g.inputs) + " inputs");
  return g;
}

void inferTfliteLstm(Node &node) {
  const Geometry g = geometryOf(node);
  const DType dtype = node.input(0)->type.dtype;
  if (dtype != DType::Float32 && dtype != DType::Int8 && dtype != DType::Int16)
    unsupported(node, "X must be float32 (dequantized int8), int8 or int16");
  requireSingleOutput(node, "Y");
  const Shape y = g.timeMajor ? Shape{g.steps, g.batch, g.cells} : Shape{g.batch, g.steps, g.cells};
  setDTypeAndShape(*node.output(0), dtype, y);
}

uint64_t tfliteLstmMacs(const Node &node) {
  const Value *x = node.input(0), *r = node.input(2);
  if (!x || !r || x->type.rank() != 3 || r->type.rank() != 3)
    return 0;
  return macProduct(node, {uint64_t(x->type.shape[0]), uint64_t(x->type.shape[1]), 4,
                           uint64_t(r->type.shape[1]),
                           uint64_t(x->type.shape[2]) + uint64_t(r->type.shape[2])});
}

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

uint64_t tfliteLstmScratchBytes(const Node &node) {
  const Geometry g = geometryOf(node);
  // The cell state: int16, or float in the float LSTM.
  const bool isFloat = node.input(1)->type.dtype == DType::Float32;
  return uint64_t(g.batch * g.cells) * (isFloat ? sizeof(float) : sizeof(int16_t));
}

namespace {

std::vector<KernelCall> lower(const Node &node) {
  const Geometry g = geometryOf(node);
  call_args::Args args;
  args.addr(node.input(0)).addr(node.input(1)).addr(node.input(2)).addr(node.input(3));
  args.table(tfliteLstmParams(node)).addr(node.output(0)).scratch();
  args.i32(g.batch).i32(g.steps).i32(g.inputs).i32(g.cells).i32(g.timeMajor ? 1 : 0);
  return {args.call(node.input(0)->type.dtype == DType::Int16 ? "bf_lstm_s16" : "bf_lstm_s8")};
}

std::vector<size_t> activationInputs(const Node &) { return {0}; }

/// The float LSTM (float32 W) stays float in a quantized build: TFLite's
/// int8 LSTM needs the int8 weights and the cell scale of a converted model.
std::string whyFloat(const Node &node) {
  const Value *w = node.input(1);
  return w && w->type.dtype == DType::Float32
             ? "TFLite's float LSTM (float32 weights) has no int8 kernel here"
             : "";
}

/// bf_lstm_f32: TFLite's float LSTM; its one parameter, cell_clip (0: none).
std::vector<KernelCall> lowerFloat(const Node &node, const PlanView &) {
  const Geometry g = geometryOf(node);
  if (node.input(1)->type.dtype != DType::Float32)
    unsupported(node, "int8 W in a float build (the int8 LSTM runs quantized only)");
  call_args::Args args;
  args.addr(node.input(0)).addr(node.input(1)).addr(node.input(2)).addr(node.input(3));
  args.floats({node.attrs.getFloat("cell_clip", 0.0f)}).addr(node.output(0)).scratch();
  args.i32(g.batch).i32(g.steps).i32(g.inputs).i32(g.cells).i32(g.timeMajor ? 1 : 0);
  return {args.call("bf_lstm_f32")};
}

} // namespace

void registerTfliteLstm(OpRegistry &registry) {
  OpDef &def =
      registry.add({kTfliteLstmOp, inferTfliteLstm, tfliteLstmMacs}).quantized(Int8Rule::OwnParams);
  def.lower = lowerFloat;
  def.int8.activationInputs = activationInputs;
  def.int8.whyFloat = whyFloat;
  def.int8.lower = lower;
  registerTfliteLstmReference(registry);
}

} // namespace bundlefit
