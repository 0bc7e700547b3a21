//===- LinearQuant.cpp - Checking QuantizeLinear/DequantizeLinear operands -===//
#include "bundlefit/ir/LinearQuant.h"

#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace bundlefit {

namespace {

[[noreturn]] void bad(const Node &node, const std::string &what) {
  throw Error(ExitCode::BadInputFile, node.describe() + ": " + what);
}

std::string operandName(const Node &node, size_t index, const char *fallback) {
  const Value *value = node.input(index);
  return "'" + (value ? value->name : std::string(fallback)) + "'";
}

} // namespace

int64_t dtypeMin(DType dtype) {
  switch (dtype) {
  case DType::Int8:
    return -128;
  case DType::UInt8:
    return 0;
  case DType::Int16:
    return -32768;
  case DType::Int32:
    return std::numeric_limits<int32_t>::min();
  default:
    return 0;
  }
}

int64_t dtypeMax(DType dtype) {
  switch (dtype) {
  case DType::Int8:
    return 127;
  case DType::UInt8:
    return 255;
  case DType::Int16:
    return 32767;
  case DType::Int32:
    return std::numeric_limits<int32_t>::max();
  default:
    return 0;
  }
}

size_t LinearQuant::channelOf(int64_t flatIndex, const Shape &shape) const {
  if (axis < 0)
    return 0;
  int64_t inner = 1;
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d)
    inner *= shape[d];
  return size_t(flatIndex / inner % shape[size_t(axis)]);
}

LinearQuant readLinearQuant(const Node &node, const Shape &xShape, DType quantized,
                            const Tensor *scale, const Tensor *zeroPoint) {
  LinearQuant q;
  if (!scale)
    bad(node, "missing scale operand");
  const std::string scaleName = operandName(node, 1, "scale");
  if (scale->type.dtype != DType::Float32)
    throw Error(ExitCode::Unsupported, node.describe() + ": scale " + scaleName + " is " +
                                           dtypeName(scale->type.dtype) + "; only float32 scales");
  if (scale->type.rank() > 1)
    bad(node, "scale " + scaleName + " has rank " + std::to_string(scale->type.rank()) +
                  "; expected a scalar or a 1-D tensor");
  const int64_t count = scale->numElements();
  if (count < 1)
    bad(node, "scale " + scaleName + " is empty");
  // A 1-element 1-D scale is per tensor, as in onnxruntime.
  const bool perAxis = scale->type.rank() == 1 && count > 1;
  if (perAxis) {
    const int64_t rank = int64_t(xShape.size());
    int64_t axis = node.attrs.getInt("axis", 1);
    if (axis < -rank || axis >= rank)
      bad(node, "axis " + std::to_string(axis) + " is out of range for input rank " +
                    std::to_string(rank) + " (per-axis scale " + scaleName + ")");
    q.axis = axis < 0 ? axis + rank : axis;
    if (xShape[size_t(q.axis)] != count)
      bad(node, "per-axis scale " + scaleName + " has " + std::to_string(count) +
                    " elements but axis " + std::to_string(q.axis) + " of the input has " +
                    std::to_string(xShape[size_t(q.axis)]));
  }
  for (int64_t i = 0; i < count; ++i) {
    float s = scale->data<float>()[i];
    if (!std::isfinite(s) || !(s > 0.0f))
      bad(node, "scale " + scaleName + "[" + std::to_string(i) + "] = " + std::to_string(s) +
                    "; scales must be finite and > 0");
    q.scales.push_back(s);
  }
  if (!zeroPoint) {
    q.zeroPointType = quantized == DType::Float32 ? DType::UInt8 : quantized;
    if (q.zeroPointType != DType::Int8 && q.zeroPointType != DType::UInt8 &&
        q.zeroPointType != DType::Int32)
      throw Error(ExitCode::Unsupported, node.describe() + ": input is " + dtypeName(quantized) +
                                             "; expected int8, uint8 or int32");
    q.zeroPoints.assign(size_t(count), 0);
    return q;
  }
  const std::string zpName = operandName(node, 2, "zero_point");
  q.zeroPointType = zeroPoint->type.dtype;
  if (q.zeroPointType != DType::Int8 && q.zeroPointType != DType::UInt8 &&
      q.zeroPointType != DType::Int32)
    throw Error(ExitCode::Unsupported, node.describe() + ": zero point " + zpName + " is " +
                                           dtypeName(q.zeroPointType) +
                                           "; expected int8, uint8 or int32");
  if (quantized != DType::Float32 && quantized != q.zeroPointType)
    bad(node, "zero point " + zpName + " is " + dtypeName(q.zeroPointType) + " but the input is " +
                  dtypeName(quantized) + "; ONNX requires the same type");
  if (zeroPoint->type.shape != scale->type.shape)
    bad(node, "zero point " + zpName + " has shape " + shapeToString(zeroPoint->type.shape) +
                  " but scale " + scaleName + " has " + shapeToString(scale->type.shape));
  for (int64_t i = 0; i < count; ++i)
    q.zeroPoints.push_back(int64_t(zeroPoint->at(i)));
  return q;
}

int64_t quantizeLinear(float x, float scale, int64_t zeroPoint, DType dtype) {
  const double lo = double(dtypeMin(dtype)), hi = double(dtypeMax(dtype));
  if (std::isnan(x))
    return zeroPoint; // ONNX leaves NaN undefined; the zero point is the value 0.
  // float division as onnxruntime does it, then round half to even.
  double q = double(std::nearbyint(x / scale)) + double(zeroPoint);
  return int64_t(std::min(hi, std::max(lo, q)));
}

} // namespace bundlefit
