//===- ResizeInt8.cpp - Nearest Resize in int8: a copy by indices ----------===//
//
// Nearest-neighbour Resize only copies elements, so its int8 output carries
// the input's scale and zero point (Int8Rule::SameParams) and equals
// onnxruntime's DequantizeLinear -> Resize -> QuantizeLinear whenever the
// model gives both sides the same parameters. The source row and column of
// every output are the reference interpreter's (resize_interp::dimMaps),
// computed at compile time; bf_resize_nearest_u8 copies by them. Linear
// resizing blends values and would need the rescale onnxruntime does in
// float: it stays float.
//
//===----------------------------------------------------------------------===//
#include "resize/Resize.h"

#include "common/CallArgs.h"
#include "common/Int8Args.h"

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
  if (node.attrs.getString("mode", "nearest") != "nearest")
    return "only nearest Resize runs in int8 (linear blends values)";
  if (node.attrs.getString("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
    return "tf_crop_and_resize (extrapolation_value) has no int8 kernel";
  const Value *x = node.input(0), *y = node.output(0);
  if (!x || !y || x->type.rank() != 4 || x->type.shape[0] != y->type.shape[0] ||
      x->type.shape[1] != y->type.shape[1])
    return "only 2-D resizes of NCHW tensors (N and C unchanged) run in int8";
  return "";
}

std::vector<KernelCall> lower(const Node &node) {
  const Value &x = operand(node, node.input(0), "input");
  const Value &y = operand(node, node.output(0), "output");
  if (!(activationParams(node, &x, "input") == activationParams(node, &y, "output")))
    unsupported(node, "int8 nearest Resize needs equal input and output quantization parameters");
  const std::string why = whyFloat(node);
  if (!why.empty())
    unsupported(node, why);
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
  call_args::Args args;
  args.addr(&x).addr(&y).i32(narrow(node, xs[0] * xs[1])).i32(narrow(node, xs[2]));
  args.i32(narrow(node, xs[3])).i32(narrow(node, ys[2])).i32(narrow(node, ys[3]));
  args.table(sources(2)).table(sources(3));
  return {args.call("bf_resize_nearest_u8")};
}

} // namespace

void registerResizeInt8(OpRegistry &registry) {
  // The reference kernel reads and writes any dtype: nearest copies codes.
  OpDef &def =
      registry.at("Resize").quantized(Int8Rule::SameParams).int8Runs(resize_interp::resizeKernel);
  def.int8.whyFloat = whyFloat;
  def.int8.lower = lower;
}

} // namespace bundlefit
