//===- ResizeInt8.cpp - Resize in int8 -------------------------------------===//
//
// Nearest-neighbour Resize only copies elements, so its int8 output carries
// the input's scale and zero point (Int8Rule::SameParams) and equals
// onnxruntime's DequantizeLinear -> Resize -> QuantizeLinear whenever the
// model gives both sides the same parameters. The source row and column of
// every output are the reference interpreter's (resize_interp::dimMaps),
// computed at compile time; bf_resize_nearest_u8 copies by them.
//
// Linear Resize blends four neighbours. onnxruntime runs a QDQ model's
// linear Resize in float (no int8 kernel of its own), so the exact int8
// result is its float arithmetic: neighbours and weights from its bilinear
// setup in float (linearAxisF32, here at compile time), the dequantized
// neighbours blended in float, rounded once half to even
// (bf_resize_linear_s8). The output keeps the input's parameters when the
// quantizer picks them (a blend stays in the input's range); a pre-quantized
// model's own output parameters are honoured.
//
//===----------------------------------------------------------------------===//
#include "resize/Resize.h"

#include "common/CallArgs.h"
#include "common/Int8Args.h"

#include <algorithm>
#include <cmath>

namespace bundlefit {
namespace {

using namespace int8_args;

/// A constant operand's elements (empty when omitted or empty).
std::vector<double> constantValues(const Value *value) {
  std::vector<double> values;
  if (value && value->isConstant() && value->type.rank() > 0)
    for (int64_t i = 0; i < value->type.numElements(); ++i)
      values.push_back(value->elementAsDouble(i));
  return values;
}

std::string whyFloat(const Node &node) {
  if (node.attrs.getString("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
    return "tf_crop_and_resize (extrapolation_value) has no int8 kernel";
  const Value *x = node.input(0), *y = node.output(0);
  if (!x || !y || x->type.rank() != 4 || x->type.shape[0] != y->type.shape[0] ||
      x->type.shape[1] != y->type.shape[1])
    return "only 2-D resizes of NCHW tensors (N and C unchanged) run in int8";
  return "";
}

std::vector<KernelCall> lowerLinear(const Node &node, const Value &x, const Value &y) {
  const Shape &xs = x.type.shape, &ys = y.type.shape;
  const LinearAxis h = linearAxisF32(node, 2), w = linearAxisF32(node, 3);
  const Affine in = activationParams(node, &x, "input"), out = activationParams(node, &y, "output");
  bf_resize_params p = resizeParams(node, xs, ys);
  p.in_zero_point = paramI32(node, in.zeroPoint), p.out_zero_point = paramI32(node, out.zeroPoint);
  call_args::Args args;
  args.addr(&x).addr(&y).params(node, p);
  args.table(h.lo).table(h.hi).floats(h.loWeight).floats(h.hiWeight);
  args.table(w.lo).table(w.hi).floats(w.loWeight).floats(w.hiWeight);
  args.f32(in.scale).f32(out.scale);
  return {args.call("bf_resize_linear_s8")};
}

std::vector<KernelCall> lower(const Node &node) {
  const Value &x = operand(node, node.input(0), "input");
  const Value &y = operand(node, node.output(0), "output");
  const std::string why = whyFloat(node);
  if (!why.empty())
    unsupported(node, why);
  if (node.attrs.getString("mode", "nearest") == "linear")
    return lowerLinear(node, x, y);
  const Affine params = activationParams(node, &x, "input");
  if (!(params == activationParams(node, &y, "output")))
    unsupported(node, "int8 nearest Resize needs equal input and output quantization parameters");
  const Shape &xs = x.type.shape, &ys = y.type.shape;
  const std::vector<double> scales = constantValues(node.input(2));
  const bool useSizes = !constantValues(node.input(3)).empty();
  const std::vector<resize_interp::DimMap> maps =
      resize_interp::dimMaps(node, xs, ys, {}, scales, useSizes);
  auto sources = [&](size_t axis) {
    const resize_interp::DimMap &m = maps[axis];
    std::vector<int32_t> index(m.i0.size());
    for (size_t o = 0; o < index.size(); ++o)
      index[o] = narrow(node, m.w1[o] != 0 ? m.i1[o] : m.i0[o]);
    return index;
  };
  bf_resize_params p = resizeParams(node, xs, ys);
  p.in_zero_point = p.out_zero_point = paramI32(node, params.zeroPoint); // unread by a copy
  call_args::Args args;
  args.addr(&x).addr(&y).params(node, p).table(sources(2)).table(sources(3));
  return {args.call("bf_resize_nearest_u8")};
}

} // namespace

LinearAxis linearAxisF32(const Node &node, size_t d) {
  using namespace int8_args;
  const Shape &xs = operand(node, node.input(0), "input").type.shape;
  const Shape &ys = operand(node, node.output(0), "output").type.shape;
  const std::vector<double> scales = constantValues(node.input(2));
  const int64_t inLen = xs.at(d), outLen = ys.at(d);
  const float scale = scales.size() == xs.size() ? float(scales[d]) : float(outLen) / float(inLen);
  const std::string ctm = node.attrs.getString("coordinate_transformation_mode", "half_pixel");
  if (ctm == "tf_crop_and_resize")
    unsupported(node, "tf_crop_and_resize (extrapolation_value) has no int8 kernel");
  LinearAxis axis;
  const float last = float(inLen - 1);
  for (int64_t o = 0; o < outLen; ++o) {
    // onnxruntime's bilinear setup: an unscaled axis reads its own index.
    float v = scale == 1.0f ? float(o)
                            : resizeSourceCoordinate<float>(ctm, o, inLen, scale, float(outLen));
    v = std::max(0.0f, std::min(v, last));
    const int64_t lo = std::min<int64_t>(int64_t(v), inLen - 1), hi = std::min(lo + 1, inLen - 1);
    float loWeight = std::fabs(v - float(hi)), hiWeight = std::fabs(v - float(lo));
    if (lo == hi)
      loWeight = hiWeight = 0.5f;
    axis.lo.push_back(narrow(node, lo)), axis.hi.push_back(narrow(node, hi));
    axis.loWeight.push_back(loWeight), axis.hiWeight.push_back(hiWeight);
  }
  return axis;
}

void registerResizeInt8(OpRegistry &registry) {
  OpDef &def = registry.at("Resize").quantized(Int8Rule::SameParams);
  def.int8.whyFloat = whyFloat;
  def.int8.lower = lower;
}

} // namespace bundlefit
