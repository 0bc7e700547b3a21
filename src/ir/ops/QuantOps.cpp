//===- QuantOps.cpp - Quantize, Dequantize, Rescale (bundlefit-internal) ---===//
//
// The conversion nodes the quantization pass inserts (docs/quantized-ir.md).
// Their parameters are the quantization parameters of their input and output
// types, which the pass sets; inference checks the dtypes and keeps them.
//
//   Quantize    float32 X -> int8 Y   (Y.quant required)
//   Dequantize  int8 X    -> float32 Y
//   Rescale     int8 X    -> int8 Y   (Y.quant required)
//   CmsisLayout int8 X    -> int8 Y   (same type; `to` = NHWC | NCHW: the
//               bytes of a 4-D tensor re-ordered for CMSIS-NN calls,
//               quant/CmsisLayout.h)
//
// MACs: one step per element (reported like elementwise ops).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ir/OpRegistry.h"

#include "ShapeHelpers.h"

namespace bundlefit {

using namespace shape_helpers;

namespace {

void requireDType(const Node &node, const Value &value, DType dtype, bool needsQuant) {
  if (value.type.dtype != dtype)
    unsupported(node, "input '" + value.name + "' is " + value.type.str() + ", expected " +
                          dtypeName(dtype));
  if (needsQuant && value.type.quant.empty())
    unsupported(node, "input '" + value.name + "' has no quantization parameters");
}

/// Sets the output's dtype and shape; an int8 output must already carry the
/// parameters the pass chose.
void setConversionOutput(Node &node, DType dtype) {
  const Value &x = requireInput(node, 0, "X");
  requireSingleOutput(node, "none");
  Value *y = node.output(0);
  y->type.dtype = dtype;
  y->type.shape = x.type.shape;
  if (dtype == DType::Float32)
    y->type.quant = {};
  else if (y->type.quant.empty())
    unsupported(node, "output '" + y->name + "' has no quantization parameters");
}

void inferQuantize(Node &node) {
  requireDType(node, requireInput(node, 0, "X"), DType::Float32, false);
  setConversionOutput(node, DType::Int8);
}

void inferDequantize(Node &node) {
  requireDType(node, requireInput(node, 0, "X"), DType::Int8, true);
  setConversionOutput(node, DType::Float32);
}

void inferRescale(Node &node) {
  requireDType(node, requireInput(node, 0, "X"), DType::Int8, true);
  setConversionOutput(node, DType::Int8);
}

void inferCmsisLayout(Node &node) {
  requireDType(node, requireInput(node, 0, "X"), DType::Int8, true);
  requireSingleOutput(node, "none");
  node.output(0)->type = node.input(0)->type;
}

uint64_t perElement(const Node &node) {
  const Value *y = node.output(0);
  return y ? uint64_t(y->type.numElements()) : 0;
}

} // namespace

void registerQuantOps(OpRegistry &registry) {
  registry.add({"Quantize", inferQuantize, perElement});
  registry.add({"Dequantize", inferDequantize, perElement});
  registry.add({"Rescale", inferRescale, perElement});
  registry.add({"CmsisLayout", inferCmsisLayout, perElement});
}

} // namespace bundlefit
