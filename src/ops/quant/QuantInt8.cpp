//===- QuantInt8.cpp - Quantize, Dequantize and Rescale kernel calls -------===//
//
// TFLM's Prepare() arithmetic for the kernel (bundlefit/ops/Int8Params.h),
// computed once at compile time from the node's operand types, and the
// bundle's kernel calls.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/Int8Params.h"

#include "common/CallArgs.h"
#include "common/Int8Args.h"
#include "elementwise/Elementwise.h"
#include "quant/Quant.h"

namespace bundlefit {

using namespace int8_args;

Int8ConvertArgs int8ConvertArgs(const Node &node) {
  Int8ConvertArgs args;
  const Value &x = operand(node, node.input(0), "input");
  const Value &y = operand(node, node.output(0), "output");
  Affine p;
  if (node.opType == "Quantize") {
    if (x.type.dtype != DType::Float32)
      unsupported(node, "Quantize needs a float32 input");
    p = activationParams(node, &y, "output");
  } else if (node.opType == "Dequantize") {
    if (y.type.dtype != DType::Float32)
      unsupported(node, "Dequantize needs a float32 output");
    p = activationParams(node, &x, "input");
  } else {
    unsupported(node, "not a Quantize or Dequantize node");
  }
  args.n = narrow(node, y.type.numElements());
  args.scale = p.scale, args.zeroPoint = p.zeroPoint;
  return args;
}

namespace {

/// bf_quantize_f32_s8 (TFLite's half away from zero), bf_quantize_even_f32_s8
/// (ONNX's half to even: kInt8RoundingAttr "single") / bf_dequantize_s8_f32.
std::vector<KernelCall> lowerConvert(const Node &node) {
  const Int8ConvertArgs a = int8ConvertArgs(node);
  call_args::Args args;
  args.addr(node.input(0)).addr(node.output(0)).i32(a.n).f32(a.scale).i32(a.zeroPoint);
  if (node.opType == "Dequantize")
    return {args.call("bf_dequantize_s8_f32")};
  const bool halfEven = node.attrs.getString(kInt8RoundingAttr, "") == "single";
  return {args.call(halfEven ? "bf_quantize_even_f32_s8" : "bf_quantize_f32_s8")};
}

} // namespace

void registerQuantInt8(OpRegistry &registry) {
  OpDef &quantize = registry.at("Quantize");
  quantize.int8.lower = lowerConvert;
  quantize.int8.singleRounding = true; // ONNX rounds half to even, TFLite half away

  registry.at("Dequantize").int8.lower = lowerConvert;
  OpDef &rescale = registry.at("Rescale");
  rescale.int8.anyLayout = true;
  rescale.int8.lower = elementwise_int8::lowerRescale;
}

} // namespace bundlefit
