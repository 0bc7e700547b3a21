//===- SoftmaxInt8.cpp - Softmax in int8: arguments, rule, CMSIS-NN -------===//
//
// The int8 kernel's arguments (TFLM's Prepare() arithmetic,
// bundlefit/ops/Int8Params.h), what the quantizer asks of a float Softmax, the
// bundle's kernel call, and when and how an int8 Softmax calls CMSIS-NN's
// arm_softmax_s8.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/Int8Params.h"

#include "bundlefit/ops/Softmax.h"
#include "common/CallArgs.h"
#include "common/Int8Args.h"
#include "norm/Norm.h"

#include <algorithm>
#include <cmath>

namespace bundlefit {

using namespace int8_args;

namespace {

/// bf_softmax_s8's and arm_softmax_s8's arguments.
struct Int8SoftmaxArgs {
  int32_t outer = 1, axis = 1, inner = 1;
  int32_t mult = 0, shift = 0, diffMin = 0;
};

Int8SoftmaxArgs int8SoftmaxArgs(const Node &node) {
  Int8SoftmaxArgs args;
  const Value &x = operand(node, node.input(0), "input");
  const Value &y = operand(node, node.output(0), "output");
  const Affine in = activationParams(node, &x, "input");
  const Affine out = activationParams(node, &y, "output");
  if (out.scale != 1.0f / 256.0f || out.zeroPoint != -128)
    unsupported(node, "int8 Softmax needs output scale 1/256 and zero point -128");
  const SoftmaxExtents e = softmaxExtents(node, x.type.shape);
  args.outer = narrow(node, e.outer);
  args.axis = narrow(node, e.len);
  args.inner = narrow(node, e.inner);
  // TFLM PreprocessSoftmaxScaling(beta = 1, scale, 5 integer bits).
  constexpr int kScaledDiffIntegerBits = 5;
  const double real = std::min(double(in.scale) * double(1 << (31 - kScaledDiffIntegerBits)),
                               double((1ll << 31) - 1));
  int shift = 0;
  quantizeMultiplier(real, args.mult, shift);
  if (shift < 0)
    unsupported(node, "int8 Softmax input scale " + std::to_string(in.scale) + " is too small");
  args.shift = shift;
  // TFLM CalculateInputRadius(5, shift).
  const double radius = double((1 << kScaledDiffIntegerBits) - 1) *
                        double(1ll << (31 - kScaledDiffIntegerBits)) / double(1ll << shift);
  args.diffMin = -int32_t(std::floor(radius));
  return args;
}

std::vector<KernelCall> lower(const Node &node) {
  const Int8SoftmaxArgs a = int8SoftmaxArgs(node);
  call_args::Args args;
  args.addr(node.input(0)).addr(node.output(0)).i32(a.outer).i32(a.axis).i32(a.inner);
  return {args.i32(a.mult).i32(a.shift).i32(a.diffMin).call("bf_softmax_s8")};
}

/// arm_softmax_s8 (returns void).
KernelCall cmsisCall(const Node &node, const std::string &function) {
  using namespace call_args;
  const Int8SoftmaxArgs a = int8SoftmaxArgs(node);
  KernelCall c =
      externalCall(function, {address(node.input(0)), i32(a.outer), i32(a.axis), i32(a.mult),
                              i32(a.shift), i32(a.diffMin), address(node.output(0))});
  c.returnsVoid = true;
  return c;
}

std::string whyFloat(const Node &node) {
  const int64_t rank = int64_t(node.input(0)->type.rank());
  int64_t axis = node.attrs.getInt("axis", node.attrs.getInt("coerce_to_2d", 0) ? 1 : -1);
  if (axis < 0)
    axis += rank;
  return axis == rank - 1 ? "" : "int8 Softmax normalises the last axis only";
}

std::string cmsisChoose(const Node &node, CmsisExtension, std::string *whyNot) {
  if (softmaxExtents(node, node.input(0)->type.shape).inner == 1)
    return "arm_softmax_s8";
  if (whyNot)
    *whyNot = "softmax over a strided axis";
  return "";
}

} // namespace

void registerSoftmaxInt8(OpRegistry &registry) {
  OpDef &softmax = registry.at("Softmax").quantized(Int8Rule::OwnParams);
  softmax.int8.whyFloat = whyFloat;
  // TFLM's int8 softmax output: scale 1/256, zero point -128.
  softmax.int8.fixedOutput = true;
  softmax.int8.outputScale = 1.0f / 256.0f;
  softmax.int8.outputZeroPoint = -128;
  softmax.int8.lower = lower;
  softmax.cmsis.function = "arm_softmax_s8";
  softmax.cmsis.choose = cmsisChoose;
  softmax.cmsis.nhwc = false;
  softmax.cmsis.call = cmsisCall;
  softmax.cmsis.prototypes = {{"arm_softmax_s8",
                               "void arm_softmax_s8(const int8_t *, const int32_t, "
                               "const int32_t, const int32_t, const int32_t, "
                               "const int32_t, int8_t *);"}};
}

} // namespace bundlefit
