//===- LowerInt8.cpp - Kernel calls of int8-quantized nodes ----------------===//
//
// Each operator's definition describes its int8 kernel call(s) as data
// (Int8Def::lower; CmsisDef::call for a node prepareCmsisGraph marked): the
// argument lists live next to the kernels' parameters in
// src/ops/<family>/*Int8.cpp, and code generation only emits them.
//
//===----------------------------------------------------------------------===//
#include "LowerInt8.h"

#include "bundlefit/ops/Cmsis.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

namespace bundlefit {

KernelCall describeCmsisCall(const Node &node) {
  const std::string function = node.attrs.getString(kCmsisAttribute, "");
  const OpDef *def = OpRegistry::get().find(node.opType);
  if (!def || !def->cmsis.call)
    throw Error(ExitCode::Unsupported,
                node.describe() + ": no CMSIS-NN call for '" + function + "'");
  return def->cmsis.call(node, function);
}

KernelCall describeLayoutCopy(const Node &node) {
  const Shape &s = node.input(0)->type.shape;
  const int32_t N = int32_t(s[0]), C = int32_t(s[1]), H = int32_t(s[2]), W = int32_t(s[3]);
  // Walk the logical [N, C, H, W] index space; strides of each layout.
  const std::vector<int32_t> nchw = {0, 0, C * H * W, H * W, W, 1};
  const std::vector<int32_t> nhwc = {0, 0, H * W * C, 1, W * C, C};
  const bool toNhwc = node.attrs.getString("to", "") == "NHWC";
  KernelCall c;
  c.kernel = "bf_copy_strided_u8";
  c.args = {KernelArg::address(node.input(0)), KernelArg::address(node.output(0)),
            KernelArg::i32Table({1, 1, N, C, H, W}), KernelArg::i32Table(toNhwc ? nchw : nhwc),
            KernelArg::i32Table(toNhwc ? nhwc : nchw)};
  return c;
}

std::vector<KernelCall> describeInt8Calls(const Node &node) {
  if (node.attrs.has(kCmsisAttribute))
    return {describeCmsisCall(node)};
  if (node.is(Op::CmsisLayout))
    return {describeLayoutCopy(node)};
  const OpDef *def = OpRegistry::get().find(node.opType);
  if (!def || !def->int8.lower)
    throw Error(ExitCode::Unsupported,
                node.describe() + ": no int8 bundle kernel for this operator");
  return def->int8.lower(node);
}

} // namespace bundlefit
