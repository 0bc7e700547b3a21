//===- Int16x8Softmax.cpp - TFLite's int16 SOFTMAX ------------------------===//
//
//   Int16Softmax  X [..., D] int16 -> Y of X's shape, over the last axis;
//                 attribute beta.
// TFLM's reference SoftmaxInt16 (reference_ops/softmax.h): each row's
// differences to its maximum, scaled so that [-65535, 0] is [-10, 0], go
// through a 513-entry exp table; the sum of the row's exps through a
// 1 / (1 + x) table; the products rounded to Q0.15. The tables are TFLM's
// gen_lut in float, computed here at compile time and stored as int16, as
// TFLM stores them (bf_softmax_s16 reads 2 x 1,026 bytes). TFLM's Prepare
// requires the output's scale to be 1/32768 (within 0.1%) and its zero
// point 0.
// No CMSIS-NN mapping: arm_softmax_s16 sums the shifted exps in int32 where
// TFLM uses int64 (it wraps when the normalised sum's top bits are all ones)
// and clamps neither the reciprocal's input nor the result: a row of one
// element (1.0) comes out -32768 where TFLM writes 32767.
//
//===----------------------------------------------------------------------===//
#include "common/CallArgs.h"
#include "int16x8/Int16x8Common.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace bundlefit::int16x8 {

using namespace shape_helpers;
using int8_ref::Multiplier;

namespace {

using Inputs = std::vector<const Tensor *>;

/// Entries of a TFLM int16 table: 512 steps and the end point.
constexpr int kTableSize = 513;
/// Rows up to this long keep TFLM's int32 sum of Q0.15 exps exact.
constexpr int64_t kMostDepth = int64_t(1) << 16;

/// TFLM gen_lut<float, int16_t, int16_t>(f, inMin, inMax, -1, 1): f sampled
/// at 512 steps, each sample corrected by half the midpoint's interpolation
/// error, in float with std::round; the last entry f(inMax).
std::vector<int16_t> tflmTable(float (*f)(float), float inMin, float inMax) {
  const float step = (inMax - inMin) / 512, halfStep = step / 2;
  const float scale = 65536.0f / 2.0f; // int16's range over [-1, 1]
  auto held = [](float v) { return int16_t(std::min(std::max(v, -32768.0f), 32767.0f)); };
  std::vector<int16_t> table(kTableSize);
  for (int i = 0; i < 512; ++i) {
    const float value = f(inMin + float(i) * step);
    const float midpoint = f(inMin + float(i) * step + halfStep);
    const float next = f(inMin + float(i + 1) * step);
    const float sample = std::round(value * scale);
    const float interpolated = std::round((next * scale + std::round(value * scale)) / 2);
    const float bias = std::round((interpolated - std::round(midpoint * scale)) / 2);
    table[size_t(i)] = held(sample - bias);
  }
  table[512] = held(std::round(f(inMax) * scale));
  return table;
}

float expOf(float v) { return std::exp(v); }
float oneOverOnePlus(float v) { return 1.0f / (1.0f + v); }

struct SoftmaxParams {
  int64_t rows, depth;
  Multiplier input;
};

SoftmaxParams softmaxParams(const Node &node) {
  requireInt16(node, 0, "X");
  const float in = int16Scale(node, node.input(0), "X");
  const Shape &xs = node.input(0)->type.shape;
  if (xs.empty() || xs.back() < 1 || xs.back() > kMostDepth ||
      node.input(0)->type.numElements() > INT32_MAX)
    unsupported(node, "X " + node.input(0)->type.str() + " needs a last axis of 1 to " +
                          std::to_string(kMostDepth) + " elements and below 2^31 in all");
  const Value *y = node.output(0);
  if (y && y->type.dtype == DType::Int16 && !y->type.quant.scales.empty() &&
      std::abs(int16Scale(node, y, "Y") - 1.0f / 32768) > 0.001f / 32768)
    unsupported(node, "the output's scale must be 1/32768 (TFLM's int16 SOFTMAX)");
  const float beta = node.attrs.getFloat("beta", 1.0f);
  const double rescale = double(in) * double(beta) / (10.0 / 65535.0);
  if (!(rescale > 0.0))
    unsupported(node, "beta " + std::to_string(beta) + " (must be > 0)");
  const Multiplier m = int8_ref::quantizeMultiplier(rescale);
  if (m.s > 14) // a difference of up to 65535 shifted left must stay in int32
    unsupported(node, "input scale times beta is too large for TFLM's int16 SOFTMAX");
  return {node.input(0)->type.numElements() / xs.back(), xs.back(), m};
}

void inferSoftmax(Node &node) {
  softmaxParams(node);
  requireSingleOutput(node, "Y");
  setDTypeAndShape(*node.output(0), DType::Int16, node.input(0)->type.shape);
}

/// TFLM's interpolating table lookup.
int32_t lookUp(int32_t v, const std::vector<int16_t> &table) {
  const size_t index = size_t(256 + (v >> 7));
  const int32_t slope = int16_t(table[index + 1] - table[index]);
  return int16_t(table[index] + ((slope * (v & 0x7f) + 64) >> 7));
}

/// The reference, following TFLM's SoftmaxInt16 step by step.
void softmaxKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const SoftmaxParams p = softmaxParams(node);
  const std::vector<int16_t> expTable = tflmTable(expOf, -10.0f, 0.0f);
  const std::vector<int16_t> reciprocalTable = tflmTable(oneOverOnePlus, 0.0f, 1.0f);
  const int16_t *x = inputs[0]->data<int16_t>();
  int16_t *y = outputs[0].data<int16_t>();
  std::vector<int32_t> exps(size_t(p.depth));
  for (int64_t r = 0; r < p.rows; ++r) {
    const int16_t *row = x + r * p.depth;
    const int32_t max = *std::max_element(row, row + p.depth);
    int64_t sum = 0;
    for (int64_t i = 0; i < p.depth; ++i) {
      const int32_t scaled = int8_ref::multiplyByQuantizedMultiplier(row[i] - max, p.input);
      exps[size_t(i)] = lookUp(clamp16(int64_t(scaled) + 32767), expTable);
      sum += exps[size_t(i)];
    }
    int headroomPlusOne = 0; // leading zeros of the 32-bit sum
    while (!(uint32_t(sum) & (0x80000000u >> headroomPlusOne)))
      ++headroomPlusOne;
    const int64_t shifted = ((sum << (headroomPlusOne - 1)) + (1 << 13)) >> 14;
    const int32_t reciprocal = lookUp(clamp16(shifted - ((1 << 15) + (1 << 16))), reciprocalTable);
    const int rightShift = 31 - headroomPlusOne;
    for (int64_t i = 0; i < p.depth; ++i)
      y[r * p.depth + i] = clamp16(
          (int64_t(exps[size_t(i)]) * reciprocal + (int64_t(1) << (rightShift - 1))) >> rightShift,
          0, 32767);
  }
}

std::vector<KernelCall> lowerSoftmax(const Node &node, const PlanView &) {
  const SoftmaxParams p = softmaxParams(node);
  call_args::Args args;
  args.addr(node.input(0)).addr(node.output(0)).i32(p.rows).i32(p.depth);
  args.i32(p.input.m).i32(p.input.s);
  args.table(tflmTable(expOf, -10.0f, 0.0f)).table(tflmTable(oneOverOnePlus, 0.0f, 1.0f));
  return {args.call("bf_softmax_s16")};
}

/// TFLM counts no MACs for SOFTMAX; a few operations per element.
uint64_t softmaxMacs(const Node &) { return 0; }

} // namespace

void registerInt16x8Softmax(OpRegistry &registry) {
  registry.add({"Int16Softmax", inferSoftmax, softmaxMacs}).runs(softmaxKernel).lower =
      lowerSoftmax;
}

} // namespace bundlefit::int16x8
