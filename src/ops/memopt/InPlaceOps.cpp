//===- InPlaceOps.cpp - Which operators may write over their own input ------===//
#include "bundlefit/ops/InPlaceOps.h"
#include "bundlefit/support/CheckedMath.h"

#include "bundlefit/ir/QuantSymmetry.h"
#include "bundlefit/ops/ShapeHelpers.h"
#include "bundlefit/support/Error.h"

#include <algorithm>

namespace bundlefit {

namespace {
bool isCmsisCall(const Node &node) {
  for (const auto &[name, attribute] : node.attrs.all())
    if (name.compare(0, 5, "cmsis") == 0)
      return true; // A CMSIS-NN call: its own kernel, not ours.
  return false;
}
} // namespace

bool hasInPlaceConvKernel(const Node &node) {
  if (node.opType != "Conv" || !node.input(0) || !node.input(1) || !node.output())
    return false;
  const TensorType &x = node.input(0)->type, &y = node.output()->type;
  const bool isFloat = x.dtype == DType::Float32 && y.dtype == DType::Float32;
  // Asymmetric int8 weights run bf_conv2d_wzp_s8 only, which has no in-place form.
  const bool isInt8 = x.dtype == DType::Int8 && y.dtype == DType::Int8 && !x.quant.empty() &&
                      !y.quant.empty() && node.input(1)->type.dtype == DType::Int8 &&
                      isSymmetric(node.input(1)->type.quant);
  return x.rank() == 4 && y.rank() == 4 && (isFloat || isInt8) && !isCmsisCall(node);
}

uint64_t int8ConvIm2colBytes(const Node &node) {
  // No quantization parameters needed: device_db's int8 estimate of a float
  // graph (driver/VariantFootprint.cpp) plans the same workspace.
  if (node.opType != "Conv" || !node.input(0) || !node.input(1) || !node.output() ||
      isCmsisCall(node) || node.attrs.getInt("group", 1) != 1)
    return 0;
  const TensorType &x = node.input(0)->type;
  if (x.dtype != DType::Int8 || x.rank() != 4 || node.input(1)->type.dtype != DType::Int8 ||
      !isSymmetric(node.input(1)->type.quant) || // bf_conv2d_wzp_s8 needs no scratch
      node.input(1)->type.rank() != 4 || node.output()->type.dtype != DType::Int8)
    return 0;
  const Shape &w = node.input(1)->type.shape; // [M, C, KH, KW]: its bytes exist, so no overflow
  return 2 * uint64_t(w[1]) * uint64_t(w[2]) * uint64_t(w[3]);
}

/// A 2-D float or int8 depthwise Conv (group == C == M) whose output planes
/// are no larger than its input planes: bf_depthwise_inplace_f32 / _s8 may
/// then write its output over its input (the proof is in
/// src/kernels/conv_inplace.c). Returns the one-plane scratch it needs, or 0
/// when it cannot.
uint64_t depthwiseInPlaceScratch(const Node &node) {
  if (!hasInPlaceConvKernel(node))
    return 0;
  const TensorType &x = node.input(0)->type, &y = node.output()->type;
  const int64_t groups = node.attrs.getInt("group", 1);
  if (groups != x.shape[1] || groups != y.shape[1] || x.shape[0] != y.shape[0])
    return 0;
  if (y.shape[2] * y.shape[3] > x.shape[2] * x.shape[3])
    return 0;
  return uint64_t(y.shape[2] * y.shape[3]) * dtypeSize(y.dtype);
}

int64_t pointwiseInPlaceRows(const Node &node) {
  if (!hasInPlaceConvKernel(node) || node.attrs.getInt("group", 1) != 1)
    return 0;
  const TensorType &x = node.input(0)->type, &y = node.output()->type, &w = node.input(1)->type;
  if (x.shape[0] != 1 || y.shape[0] != 1 || w.rank() != 4 || w.shape[2] != 1 || w.shape[3] != 1 ||
      x.shape[2] != y.shape[2] || x.shape[3] != y.shape[3])
    return 0;
  for (const char *name : {"strides", "pads", "dilations"})
    for (int64_t v : node.attrs.getInts(name))
      if (v != (std::string(name) == "pads" ? 0 : 1))
        return 0;
  const int64_t W = x.shape[3];
  return std::min<int64_t>(x.shape[2], (kPointwiseMinPixels + W - 1) / W);
}

int64_t pointwiseInPlacePixels(const Node &node) {
  const int64_t rows = pointwiseInPlaceRows(node);
  const Shape &x = node.input(0)->type.shape;
  if (!rows || node.output()->type.dtype == DType::Int8)
    return rows * x[3];
  return std::min<int64_t>(x[2] * x[3], kPointwiseMinPixels);
}

int64_t pointwiseInPlaceLead(const Node &node) {
  const int64_t block = pointwiseInPlacePixels(node);
  const Shape &x = node.input(0)->type.shape;
  if (!block || node.output()->type.dtype == DType::Int8)
    return block;
  const int64_t rest = x[2] * x[3] % block;
  return rest ? rest : block;
}

uint64_t pointwiseInPlaceScratch(const Node &node) {
  // Whole rows for float too, though its kernel uses M x 16 of them: the
  // passes estimate the memory in use with this size, and the smaller one
  // (DS-CNN 37,120 -> 36,096 B) steers the patch-stage search of
  // MobileNetV2-0.35 96x96 to a worse grid (102,336 -> 129,024 B).
  const TensorType &y = node.output()->type;
  const uint64_t block =
      uint64_t(pointwiseInPlaceRows(node) * y.shape[3] * y.shape[1]) * dtypeSize(y.dtype);
  if (!block || y.dtype != DType::Int8)
    return block;
  return alignUp(block, 4) + int8ConvIm2colBytes(node); // bf_pointwise_inplace_s8
}

bool poolMayOverlapInput(const Node &node) {
  const bool isMax = node.opType == "MaxPool";
  if ((!isMax && node.opType != "AveragePool") || node.outputs.size() != 1 || !node.input(0) ||
      !node.output() || isCmsisCall(node))
    return false;
  const TensorType &x = node.input(0)->type, &y = node.output()->type;
  if (x.rank() != 4 || y.rank() != 4 || x.dtype != y.dtype)
    return false;
  return x.dtype == DType::Float32 || x.dtype == DType::Int8 || (isMax && x.dtype == DType::UInt8);
}

std::vector<PoolRowAccess> poolRowAccess(const Node &node) {
  const Shape &x = node.input(0)->type.shape, &y = node.output()->type.shape;
  const shape_helpers::Window window =
      shape_helpers::resolveWindow(node, {x[2], x[3]}, node.attrs.getInts("kernel_shape"),
                                   node.attrs.getInt("ceil_mode", 0) != 0);
  const uint64_t es = dtypeSize(node.input(0)->type.dtype), H = uint64_t(x[2]), W = uint64_t(x[3]),
                 OH = uint64_t(y[2]), OW = uint64_t(y[3]);
  std::vector<PoolRowAccess> rows;
  for (uint64_t plane = 0; plane < uint64_t(x[0] * x[1]); ++plane)
    for (uint64_t oh = 0; oh < OH; ++oh) {
      // Later rows start no higher: strides are positive.
      const int64_t top = int64_t(oh) * window.strides[0] - window.padsBegin[0];
      const uint64_t firstRow = std::min<uint64_t>(H, uint64_t(std::max<int64_t>(0, top)));
      rows.push_back({(plane * OH * OW + (oh + 1) * OW) * es, (plane * H * W + firstRow * W) * es});
    }
  return rows;
}

} // namespace bundlefit
