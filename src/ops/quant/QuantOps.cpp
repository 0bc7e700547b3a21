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
// ONNX's QuantizeLinear / DequantizeLinear (registerLinearQuantOps):
// the operators of a pre-quantized (QDQ) model. The driver folds them
// into the int8 IR before anything else runs (quant/FoldQdq.h); they are
// registered so that the importer takes them, the reference interpreter can
// run them (conformance tests) and their operands are checked in one place
// (LinearQuant.h). Scale and zero point must be constants for inference to
// check them here; as graph inputs they are checked when the kernel runs.
//
//   QuantizeLinear    float32 X, scale, [zp int8|uint8] -> Y of zp's dtype
//                     (uint8 without a zero point)
//   DequantizeLinear  int8|uint8|int32 X, scale, [zp of X's dtype] -> float32
//
// MACs: one step per element (reported like elementwise ops).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ir/LinearQuant.h"
#include "quant/Quant.h"

#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/ops/ShapeHelpers.h"

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

/// The operands as tensors when they are constants (nullptr otherwise).
LinearQuant checkConstantOperands(const Node &node, DType quantized) {
  const Value &x = requireInput(node, 0, "x");
  const Value &scale = requireInput(node, 1, "scale");
  const Value *zp = node.input(2);
  if (!scale.isConstant() || (zp && !zp->isConstant())) {
    LinearQuant unknown;
    unknown.zeroPointType =
        zp ? zp->type.dtype : (quantized == DType::Float32 ? DType::UInt8 : quantized);
    return unknown;
  }
  Tensor s(scale.type, scale.data);
  if (!zp)
    return readLinearQuant(node, x.type.shape, quantized, &s, nullptr);
  Tensor z(zp->type, zp->data);
  return readLinearQuant(node, x.type.shape, quantized, &s, &z);
}

void inferQuantizeLinear(Node &node) {
  const Value &x = requireInput(node, 0, "x");
  if (x.type.dtype != DType::Float32)
    unsupported(node, "input '" + x.name + "' is " + x.type.str() + "; only float32 is quantized");
  requireSingleOutput(node, "none");
  LinearQuant q = checkConstantOperands(node, DType::Float32);
  if (q.zeroPointType != DType::Int8 && q.zeroPointType != DType::UInt8)
    unsupported(node, std::string("zero point is ") + dtypeName(q.zeroPointType) +
                          "; QuantizeLinear produces int8 or uint8");
  node.output(0)->type = TensorType{q.zeroPointType, x.type.shape, {}};
}

void inferDequantizeLinear(Node &node) {
  const Value &x = requireInput(node, 0, "x");
  if (x.type.dtype != DType::Int8 && x.type.dtype != DType::UInt8 && x.type.dtype != DType::Int32)
    unsupported(node,
                "input '" + x.name + "' is " + x.type.str() + "; expected int8, uint8 or int32");
  requireSingleOutput(node, "none");
  checkConstantOperands(node, x.type.dtype);
  node.output(0)->type = TensorType{DType::Float32, x.type.shape, {}};
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

void registerLinearQuantOps(OpRegistry &registry) {
  registry.add({"QuantizeLinear", inferQuantizeLinear, perElement})
      .with(kOpLinearQuant)
      .runs(linear_quant_interp::quantizeLinearKernel);
  registry.add({"DequantizeLinear", inferDequantizeLinear, perElement})
      .with(kOpLinearQuant)
      .runs(linear_quant_interp::dequantizeLinearKernel);
}

} // namespace bundlefit
