//===- ConcatInt8.cpp - Concat's int8 kernel arguments ---------------------===//
//
// TFLM's Prepare() arithmetic for the kernel (bundlefit/ops/Int8Params.h),
// computed once at compile time from the node's operand types.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/Int8Params.h"

#include "common/Int8Args.h"
#include "shape/Shape.h"

#include "bundlefit/ops/ShapeHelpers.h"

namespace bundlefit {

using namespace int8_args;

std::vector<Int8ConcatPart> int8ConcatArgs(const Node &node) {
  const Value &y = operand(node, node.output(0), "output");
  const Affine out = activationParams(node, &y, "output");
  const Shape &ys = y.type.shape;
  const int64_t axis =
      shape_helpers::normalizeAxis(node, node.attrs.getInt("axis", 0), int64_t(ys.size()), "axis");
  std::array<int32_t, 6> outDims, outStrides;
  dims6(node, ys, outDims, outStrides);
  const size_t axis6 = 6 - ys.size() + size_t(axis);
  std::vector<Int8ConcatPart> parts;
  int64_t along = 0;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value &x = operand(node, node.input(i), "input");
    const Affine in = activationParams(node, &x, "input");
    if (x.type.rank() != ys.size())
      unsupported(node, "input '" + x.name + "' rank differs from the output's");
    Int8ConcatPart part;
    dims6(node, x.type.shape, part.dims, part.srcStrides);
    part.dstStrides = outStrides;
    part.dstOffset = along * outStrides[axis6];
    along += x.type.shape[size_t(axis)];
    part.rescale = !(in == out);
    part.inOffset = -in.zeroPoint, part.outOffset = out.zeroPoint;
    if (part.rescale)
      part.scale = scaleOf(double(in.scale) / double(out.scale));
    if (x.type.numElements() > 0)
      parts.push_back(part);
  }
  return parts;
}

namespace concat_int8 {

std::vector<size_t> activations(const Node &node) {
  std::vector<size_t> all(node.inputs.size());
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  return all;
}

} // namespace concat_int8

} // namespace bundlefit
