//===- ConvertInt8.cpp - Quantize and Dequantize kernel arguments ----------===//
//
// TFLM's Prepare() arithmetic for the kernel (bundlefit/ops/Int8Params.h),
// computed once at compile time from the node's operand types.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/Int8Params.h"

#include "common/Int8Args.h"

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

} // namespace bundlefit
