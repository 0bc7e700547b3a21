//===- ConcatInt8.cpp - Concat in int8: arguments, rule, kernel calls ------===//
//
// TFLM's Prepare() arithmetic for the kernel (bundlefit/ops/Int8Params.h),
// computed once at compile time from the node's operand types; the
// quantizer's rule (every input is an activation) and the bundle's calls.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/Int8Params.h"

#include "common/CallArgs.h"
#include "common/Int8Args.h"
#include "common/RequantizeTable.h"
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

namespace {

/// One strided copy per non-empty input: through a requantization table
/// (bf_requantize_table_strided_s8: ONNX's DequantizeLinear -> QuantizeLinear,
/// what onnxruntime's QLinearConcat computes) when its parameters differ from
/// the output's, else bf_copy_strided_u8.
std::vector<KernelCall> lower(const Node &node) {
  std::vector<KernelCall> calls;
  const std::vector<Int8ConcatPart> parts = int8ConcatArgs(node);
  const Affine out = activationParams(node, node.output(0), "output");
  size_t next = 0;
  for (const Value *input : node.inputs) {
    if (!input || input->type.numElements() == 0)
      continue;
    const Int8ConcatPart &p = parts.at(next++);
    call_args::Args args;
    args.addr(input).addr(node.output(0), p.dstOffset);
    args.table(p.dims).table(p.srcStrides).table(p.dstStrides);
    if (p.rescale) {
      const Affine in = activationParams(node, input, "input");
      calls.push_back(
          args.table(packTable(requantizeTable(in.scale, in.zeroPoint, out.scale, out.zeroPoint)))
              .call("bf_requantize_table_strided_s8"));
    } else {
      calls.push_back(args.call("bf_copy_strided_u8"));
    }
  }
  return calls;
}

std::vector<size_t> activations(const Node &node) {
  std::vector<size_t> all(node.inputs.size());
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  return all;
}

} // namespace

void registerConcatInt8(OpRegistry &registry) {
  OpDef &concat = registry.at("Concat").quantized(Int8Rule::OwnParams);
  concat.int8.activationInputs = activations;
  concat.int8.lower = lower;
}

} // namespace bundlefit
