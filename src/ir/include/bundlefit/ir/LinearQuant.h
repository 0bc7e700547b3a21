//===- LinearQuant.h - ONNX QuantizeLinear/DequantizeLinear operands ------===//
//
// One reading of the scale / zero-point operands of ONNX's QuantizeLinear and
// DequantizeLinear, shared by type inference, the reference interpreter and
// the pass that folds Q/DQ pairs into the int8 IR (quant/FoldQdq.h), so the
// three agree on what a malformed operand is. Every problem is an Error
// naming the node and the tensor (BadInputFile: the model contradicts the
// ONNX spec; Unsupported: legal ONNX bundlefit does not take).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ir/Tensor.h"

#include <cstdint>
#include <vector>

namespace bundlefit {

/// The checked operands: `scales.size() == zeroPoints.size()`, one entry per
/// tensor (axis == -1) or one per index of `axis` of X.
struct LinearQuant {
  std::vector<float> scales;          ///< Each finite and > 0.
  std::vector<int64_t> zeroPoints;    ///< In the zero point's own dtype's range.
  DType zeroPointType = DType::UInt8; ///< ONNX's default without a zero point.
  int64_t axis = -1;                  ///< Normalised; -1 per tensor.

  size_t channelOf(int64_t flatIndex, const Shape &shape) const;
};

/// Reads operands 1 (scale, float32) and 2 (zero point, int8/uint8/int32;
/// optional) of `node` given as tensors. `xShape` is X's shape; `quantized`
/// is the quantized side's dtype when known (DequantizeLinear's X; the
/// zero point must match it), else DType::Float32 for "any".
LinearQuant readLinearQuant(const Node &node, const Shape &xShape, DType quantized,
                            const Tensor *scale, const Tensor *zeroPoint);

/// `x / scale` rounded half to even (ONNX), plus the zero point, saturated
/// to `dtype`'s range (int8, uint8 or int32).
int64_t quantizeLinear(float x, float scale, int64_t zeroPoint, DType dtype);

/// The smallest and largest value of integer dtype `dtype`.
int64_t dtypeMin(DType dtype);
int64_t dtypeMax(DType dtype);

} // namespace bundlefit
