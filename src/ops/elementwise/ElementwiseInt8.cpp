//===- ElementwiseInt8.cpp - Add, Mul, Relu, Clip, Rescale in int8 -------===//
//
// The int8 kernels' arguments (TFLM's Prepare() arithmetic,
// bundlefit/ops/Int8Params.h), what the quantizer asks of a float node and
// the bundle's kernel calls.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/ops/KernelParams.h"

#include "common/CallArgs.h"
#include "common/Int8Args.h"
#include "common/RequantizeTable.h"
#include "elementwise/Elementwise.h"

#include <cfloat>
#include <cmath>

namespace bundlefit {

using namespace int8_args;

Int8BinaryArgs int8BinaryArgs(const Node &node) {
  Int8BinaryArgs args;
  const Value &a = operand(node, node.input(0), "first input");
  const Value &b = operand(node, node.input(1), "second input");
  const Value &y = operand(node, node.output(0), "output");
  const Affine pa = activationParams(node, &a, "first input");
  const Affine pb = activationParams(node, &b, "second input");
  const Affine po = activationParams(node, &y, "output");
  const Shape &out = y.type.shape;
  std::array<int32_t, 6> outStrides;
  dims6(node, out, args.dims, outStrides);
  auto broadcastStrides = [&](const Value &v, std::array<int32_t, 6> &strides) {
    Shape s = v.type.shape;
    if (s.size() > out.size())
      unsupported(node, "'" + v.name + "' has a higher rank than the output");
    s.insert(s.begin(), out.size() - s.size(), 1);
    std::array<int32_t, 6> dims;
    dims6(node, s, dims, strides);
    for (size_t d = 0; d < 6; ++d) {
      if (dims[d] == 1 && args.dims[d] != 1)
        strides[d] = 0;
      else if (dims[d] != args.dims[d])
        unsupported(node, "'" + v.name + "' " + shapeToString(v.type.shape) +
                              " does not broadcast to " + shapeToString(out));
    }
  };
  broadcastStrides(a, args.aStrides);
  broadcastStrides(b, args.bStrides);
  args.aOffset = -pa.zeroPoint, args.bOffset = -pb.zeroPoint, args.outOffset = po.zeroPoint;
  if (node.opType == "Add") {
    args.leftShift = 20;
    const double twiceMax = 2.0 * double(std::max(pa.scale, pb.scale));
    args.a = scaleOf(double(pa.scale) / twiceMax);
    args.b = scaleOf(double(pb.scale) / twiceMax);
    args.out = scaleOf(twiceMax / (double(1 << args.leftShift) * double(po.scale)));
  } else if (node.opType == "Mul") {
    args.out = scaleOf(double(pa.scale) * double(pb.scale) / double(po.scale));
    args.onnxMul = node.attrs.getString(kInt8RoundingAttr, "") == "single";
  } else {
    unsupported(node, "no int8 binary kernel");
  }
  fusedActivationRange(node, po, args.actMin, args.actMax);
  return args;
}

Int8RescaleArgs int8RescaleArgs(const Node &node) {
  Int8RescaleArgs args;
  const Value &x = operand(node, node.input(0), "input");
  const Value &y = operand(node, node.output(0), "output");
  const Affine in = activationParams(node, &x, "input");
  const Affine out = activationParams(node, &y, "output");
  args.n = narrow(node, y.type.numElements());
  args.clampOnly = in == out;
  args.inOffset = -in.zeroPoint, args.outOffset = out.zeroPoint;
  if (!args.clampOnly)
    args.scale = scaleOf(double(in.scale) / double(out.scale));
  double lo = -DBL_MAX, hi = DBL_MAX;
  if (node.opType == "Relu") {
    lo = 0.0;
  } else if (node.opType == "Clip") {
    // Bounds are constants: float reals, or int8 in the input's parameters.
    auto bound = [&](size_t i, double fallback) {
      const Value *v = node.input(i);
      if (!v)
        return fallback;
      if (!v->isConstant())
        unsupported(node, "Clip bound '" + v->name + "' must be a constant");
      const double raw = v->elementAsDouble(0);
      if (v->type.dtype == DType::Int8 && !v->type.quant.empty())
        return double(v->type.quant.scales[0]) * (raw - v->type.quant.zeroPoints[0]);
      return raw;
    };
    lo = bound(1, -DBL_MAX), hi = bound(2, DBL_MAX);
  } else if (node.opType != "Rescale") {
    unsupported(node, "no int8 clamp/rescale kernel");
  }
  clampRange(out, lo, hi, args.actMin, args.actMax);
  return args;
}

OnnxMulRatio onnxMulRatio(const Node &node) {
  const Affine pa = activationParams(node, node.input(0), "first input");
  const Affine pb = activationParams(node, node.input(1), "second input");
  const Affine po = activationParams(node, node.output(0), "output");
  // In float, in onnxruntime's order: ScaleA * ScaleB / ScaleC.
  const float product = pa.scale * pb.scale;
  const float ratio = product / po.scale;
  if (!std::isfinite(ratio) || ratio <= 0.0f)
    unsupported(node, "the scales' ratio " + std::to_string(ratio) +
                          " (first * second / output) is not a positive float");
  int exponent = 0;
  const float fraction = std::frexp(ratio, &exponent); // in [0.5, 1)
  OnnxMulRatio r;
  r.mant = int32_t(std::ldexp(fraction, 24)); // exact: a float has 24 bits
  r.exp = exponent - 24;
  return r;
}

namespace elementwise_int8 {

std::vector<KernelCall> lowerRescale(const Node &node) {
  const Int8RescaleArgs a = int8RescaleArgs(node);
  call_args::Args args;
  args.addr(node.input(0)).addr(node.output(0)).i32(a.n);
  if (a.clampOnly)
    return {args.i32(a.actMin).i32(a.actMax).call("bf_clamp_s8")};
  // ONNX's DequantizeLinear -> QuantizeLinear (float32, half to even) and
  // the clamp, as a table: what onnxruntime computes (RequantizeTable.h).
  const Affine in = activationParams(node, node.input(0), "input");
  const Affine out = activationParams(node, node.output(0), "output");
  return {args.table(packTable(requantizeTable(in.scale, in.zeroPoint, out.scale, out.zeroPoint,
                                               a.actMin, a.actMax)))
              .call("bf_requantize_table_s8")};
}

} // namespace elementwise_int8

namespace {

/// bf_add_s8 / bf_mul_s8 / bf_mul_ratio_s8.
std::vector<KernelCall> lowerBinary(const Node &node) {
  const Int8BinaryArgs a = int8BinaryArgs(node);
  call_args::Args args;
  args.addr(node.input(0)).addr(node.input(1)).addr(node.output(0));
  args.table(a.dims).table(a.aStrides).table(a.bStrides);
  if (node.opType == "Add") {
    bf_add_params add = unsetKernelParams<bf_add_params>();
    add.a_offset = paramI32(node, a.aOffset), add.a_mult = paramI32(node, a.a.mult);
    add.a_shift = paramI32(node, a.a.shift), add.b_offset = paramI32(node, a.bOffset);
    add.b_mult = paramI32(node, a.b.mult), add.b_shift = paramI32(node, a.b.shift);
    add.left_shift = paramI32(node, a.leftShift), add.out_offset = paramI32(node, a.outOffset);
    add.out_mult = paramI32(node, a.out.mult), add.out_shift = paramI32(node, a.out.shift);
    add.act_min = paramI32(node, a.actMin), add.act_max = paramI32(node, a.actMax);
    return {args.params(node, add).call("bf_add_s8")};
  }
  bf_mul_params mul = unsetKernelParams<bf_mul_params>();
  mul.a_offset = paramI32(node, a.aOffset), mul.b_offset = paramI32(node, a.bOffset);
  mul.out_offset = paramI32(node, a.outOffset);
  mul.act_min = paramI32(node, a.actMin), mul.act_max = paramI32(node, a.actMax);
  if (a.onnxMul) {
    const OnnxMulRatio r = onnxMulRatio(node);
    mul.out_mult = paramI32(node, r.mant), mul.out_shift = paramI32(node, r.exp);
    return {args.params(node, mul).call("bf_mul_ratio_s8")};
  }
  mul.out_mult = paramI32(node, a.out.mult), mul.out_shift = paramI32(node, a.out.shift);
  return {args.params(node, mul).call("bf_mul_s8")};
}

std::string whyFloatBinary(const Node &node) {
  // Mul broadcasts (a squeeze-and-excitation gate [N, C, 1, 1] over its
  // feature map): the kernel's strides; Add broadcasts a constant only (a
  // pre-quantized model's bias, onnxruntime's QLinearAdd), else same-shape.
  if (node.opType == "Mul")
    return "";
  for (size_t i = 0; i < 2; ++i)
    if (node.input(i)->type.shape != node.output()->type.shape && !node.input(i)->isConstant())
      return "broadcasting " + node.opType + " has no int8 kernel";
  return "";
}

std::vector<size_t> binaryActivations(const Node &) { return {0, 1}; }

std::string whyFloatClip(const Node &node) {
  for (size_t i = 1; i < 3; ++i)
    if (node.input(i) && !node.input(i)->isConstant())
      return "bounds are not constants";
  return "";
}

} // namespace

void registerElementwiseInt8(OpRegistry &registry) {
  for (const char *op : {"Add", "Mul"}) {
    OpDef &def = registry.at(op).quantized(Int8Rule::OwnParams);
    def.int8.whyFloat = whyFloatBinary;
    def.int8.activationInputs = binaryActivations;
    def.int8.anyLayout = true;
    def.int8.lower = lowerBinary;
  }
  // A pre-quantized ONNX model's Mul rounds as onnxruntime's QLinearMul.
  registry.at("Mul").int8.singleRounding = true;
  OpDef &relu = registry.at("Relu").quantized(Int8Rule::SameParams);
  relu.int8.anyLayout = true;
  relu.int8.lower = elementwise_int8::lowerRescale;
  OpDef &clip = registry.at("Clip").quantized(Int8Rule::SameParams);
  clip.int8.whyFloat = whyFloatClip;
  clip.int8.anyLayout = true;
  clip.int8.lower = elementwise_int8::lowerRescale;
}

} // namespace bundlefit
