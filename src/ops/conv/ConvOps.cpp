//===- ConvOps.cpp - Conv and ConvTranspose --------------------------------===//
//
// Conv          X[N,C,d...]  W[M,C/group,k...]  B[M]?  -> Y[N,M,o...]
// ConvTranspose X[N,C,d...]  W[C,M/group,k...]  B[M]?  -> Y[N,M,o...]
// Any spatial rank >= 1 (1D, 2D, 3D...). Geometry: ShapeHelpers.h.
// MACs: Conv = |Y| * (C/group) * prod(k); ConvTranspose = |X| * (M/group) * prod(k).
//
//===----------------------------------------------------------------------===//
#include "conv/Conv.h"
#include "quant/Quant.h"

#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

namespace bundlefit {

using namespace shape_helpers;

namespace {

struct ConvOperands {
  const Value *x, *w, *b;
  int64_t group;
  std::vector<int64_t> inSpatial, kernel;
};

ConvOperands checkConvOperands(const Node &node, bool transpose) {
  ConvOperands ops;
  ops.x = &requireInput(node, 0, "X");
  ops.w = &requireInput(node, 1, "W");
  ops.b = node.input(2);
  const Shape &xs = ops.x->type.shape, &ws = ops.w->type.shape;
  if (xs.size() < 3)
    unsupported(node, "input X " + ops.x->type.str() + " must have rank >= 3 (N,C,spatial...)");
  if (ws.size() != xs.size())
    unsupported(node,
                "weight W " + ops.w->type.str() + " must have the rank of X " + ops.x->type.str());
  ops.group = node.attrs.getInt("group", 1);
  if (ops.group < 1)
    unsupported(node, "attribute 'group'=" + std::to_string(ops.group) + " must be positive");
  ops.inSpatial.assign(xs.begin() + 2, xs.end());
  ops.kernel.assign(ws.begin() + 2, ws.end());
  if (node.attrs.has("kernel_shape") && node.attrs.getInts("kernel_shape") != ops.kernel)
    unsupported(node,
                "attribute 'kernel_shape'=" + intsToString(node.attrs.getInts("kernel_shape")) +
                    " does not match weight W " + ops.w->type.str());
  int64_t c = xs[1];
  if (c % ops.group != 0)
    unsupported(node, "attribute 'group'=" + std::to_string(ops.group) +
                          " does not divide the input channels " + std::to_string(c));
  int64_t m;
  if (!transpose) {
    m = ws[0];
    if (ws[1] * ops.group != c)
      unsupported(node, "weight W " + ops.w->type.str() + " expects " +
                            std::to_string(ws[1] * ops.group) + " input channels, X " +
                            ops.x->type.str() + " has " + std::to_string(c) +
                            " (attribute 'group'=" + std::to_string(ops.group) + ")");
    if (m % ops.group != 0)
      unsupported(node, "attribute 'group'=" + std::to_string(ops.group) +
                            " does not divide the output channels " + std::to_string(m));
  } else {
    if (ws[0] != c)
      unsupported(node, "weight W " + ops.w->type.str() + " expects " + std::to_string(ws[0]) +
                            " input channels, X " + ops.x->type.str() + " has " +
                            std::to_string(c));
    m = ws[1] * ops.group;
  }
  if (ops.b && ops.b->type.numElements() > 0 && ops.b->type.shape != Shape{m})
    unsupported(node,
                "bias B " + ops.b->type.str() + " must have shape [" + std::to_string(m) + "]");
  checkFusedActivation(node);
  return ops;
}

void inferConv(Node &node) {
  ConvOperands ops = checkConvOperands(node, false);
  Window w = resolveWindow(node, ops.inSpatial, ops.kernel, false);
  Shape out{ops.x->type.shape[0], ops.w->type.shape[0]};
  out.insert(out.end(), w.outSpatial.begin(), w.outSpatial.end());
  setDTypeAndShape(*node.output(0), ops.x->type.dtype, out);
}

/// A quantized convolution's output: Conv's shape over operands `x`, `w`
/// (and `b`) of `node`, element type `dtype`.
void inferAsConv(Node &node, const std::vector<Value *> &operands, DType dtype) {
  Node conv = node; // same attributes and output Value
  conv.inputs = operands;
  inferConv(conv);
  node.output(0)->type.dtype = dtype;
}

/// ConvInteger(x, w, [x_zero_point], [w_zero_point]) -> int32.
void inferConvInteger(Node &node) {
  inferAsConv(node, {node.input(0), node.input(1)}, DType::Int32);
}

/// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B]) -> y_zp's type.
void inferQLinearConv(Node &node) {
  const Value &yZp = requireInput(node, 7, "y_zero_point");
  inferAsConv(node, {node.input(0), node.input(3), node.input(8)}, yZp.type.dtype);
}

uint64_t convMacs(const Node &node) {
  const Value *w = node.input(1), *y = node.output(0);
  if (!w || !y || w->type.rank() < 3)
    return 0;
  // Each output element: (C/group) * prod(k) products = W elements / M.
  int64_t perOutput = w->type.numElements() / std::max<int64_t>(1, w->type.shape[0]);
  return macProduct(node, {uint64_t(y->type.numElements()), uint64_t(perOutput)});
}

void inferConvTranspose(Node &node) {
  ConvOperands ops = checkConvOperands(node, true);
  TransposeWindow w = resolveTransposeWindow(node, ops.inSpatial, ops.kernel);
  std::optional<int64_t> channels = checkedMul(ops.w->type.shape[1], ops.group);
  if (!channels)
    throw Error(ExitCode::Unsupported, node.describe() + ": its output channels (weight dim 1 x "
                                                         "group) overflow int64");
  Shape out{ops.x->type.shape[0], *channels};
  out.insert(out.end(), w.outSpatial.begin(), w.outSpatial.end());
  setDTypeAndShape(*node.output(0), ops.x->type.dtype, out);
}

uint64_t convTransposeMacs(const Node &node) {
  const Value *x = node.input(0), *w = node.input(1);
  if (!x || !w || w->type.rank() < 3)
    return 0;
  // Each input element scatters into (M/group) * prod(k) outputs = W elements / C.
  int64_t perInput = w->type.numElements() / std::max<int64_t>(1, w->type.shape[0]);
  return macProduct(node, {uint64_t(x->type.numElements()), uint64_t(perInput)});
}

} // namespace

void registerConvOps(OpRegistry &registry) {
  // Reference interpreter only (conformance); the driver rewrites
  // QLinearConv into Q/DQ pairs first (quant/FoldQdq.h).
  registry.add({"ConvInteger", inferConvInteger, convMacs})
      .runs(linear_quant_interp::convIntegerKernel);
  registry.add({"QLinearConv", inferQLinearConv, convMacs})
      .with(kOpQOperator)
      .runs(linear_quant_interp::qlinearConvKernel);
  OpDef &conv = registry.add({"Conv", inferConv, convMacs}).runs(conv_interp::convKernel);
  conv.biasOperand = 2;
  conv.glowNames = {"convolution"};
  conv.lower = conv_float::lowerConv;
  OpDef &transpose = registry.add({"ConvTranspose", inferConvTranspose, convTransposeMacs})
                         .runs(conv_interp::convTransposeKernel);
  transpose.biasOperand = 2;
  transpose.lower = conv_float::lowerConvTranspose;
}

} // namespace bundlefit
