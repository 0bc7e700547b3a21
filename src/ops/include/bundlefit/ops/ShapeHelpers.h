//===- ShapeHelpers.h - Geometry shared by type inference and kernels ------===//
//
// Header-only helpers used both by src/ops/<family>/*Ops.cpp (static shapes) and by
// src/interp/*Kernels.cpp (the reference loops), so that the padding a kernel
// applies is by construction the padding type inference assumed.
//
// Sliding windows (Conv, ConvTranspose, MaxPool, AveragePool) follow the ONNX
// operator documentation:
//   effective kernel  ek = (k - 1) * dilation + 1
//   explicit pads     out = floor((in + pb + pe - ek) / s) + 1
//                     (ceil instead of floor with ceil_mode, dropping a last
//                     window that would start inside the end padding)
//   SAME_UPPER/LOWER  out = ceil(in / s), total = max(0, (out-1)*s + ek - in),
//                     UPPER puts the odd pad at the end, LOWER at the start
//   VALID             pads 0, out = floor((in - ek) / s) + 1
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ops/FusedActivations.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {
namespace shape_helpers {

[[noreturn]] inline void unsupported(const Node &node, const std::string &what) {
  throw Error(ExitCode::Unsupported, node.describe() + ": " + what);
}

inline std::string intsToString(const std::vector<int64_t> &values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? "," : "") + std::to_string(values[i]);
  return text + "]";
}

/// Input `index` (must be present) or an Unsupported error naming it.
inline const Value &requireInput(const Node &node, size_t index, const char *what) {
  const Value *value = node.input(index);
  if (!value)
    unsupported(node, std::string("missing input ") + std::to_string(index) + " (" + what + ")");
  return *value;
}

/// Normalises `axis` into [0, rank) (ONNX negative axes count from the end).
inline int64_t normalizeAxis(const Node &node, int64_t axis, int64_t rank, const char *attr) {
  if (axis < -rank || axis >= rank)
    unsupported(node, std::string("attribute '") + attr + "'=" + std::to_string(axis) +
                          " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

/// Sets an output's dtype and shape only: quantization parameters the int8
/// pass chose for it (docs/quantized-ir.md) cannot be inferred and must stay.
inline void setDTypeAndShape(Value &output, DType dtype, const Shape &shape) {
  output.type.dtype = dtype;
  output.type.shape = shape;
}

/// Only output 0 is supported: error when the node asks for more.
inline void requireSingleOutput(const Node &node, const char *outputName) {
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i] && !node.outputs[i]->name.empty())
      unsupported(node, std::string("optional output ") + std::to_string(i) + " (" + outputName +
                            ") is not supported");
}

/// Resolved geometry of a sliding window over the spatial dims.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, padsBegin, padsEnd, outSpatial;
  size_t spatialRank() const { return kernel.size(); }
};

/// Reads an ints attribute of `count` entries (or `fallback` repeated).
inline std::vector<int64_t> spatialInts(const Node &node, const char *name, size_t count,
                                        int64_t fallback, bool positive) {
  std::vector<int64_t> values = node.attrs.getInts(name, std::vector<int64_t>(count, fallback));
  if (values.size() != count)
    unsupported(node, std::string("attribute '") + name + "' has " + std::to_string(values.size()) +
                          " entries, expected " + std::to_string(count));
  for (int64_t v : values)
    if (positive ? v < 1 : v < 0)
      unsupported(node, std::string("attribute '") + name + "'=" + intsToString(values) +
                            " must be " + (positive ? "positive" : "non-negative"));
  return values;
}

/// Validates 'auto_pad' and returns it ("NOTSET", "SAME_UPPER", ...).
inline std::string autoPad(const Node &node) {
  std::string mode = node.attrs.getString("auto_pad", "NOTSET");
  if (mode.empty())
    mode = "NOTSET";
  if (mode != "NOTSET" && mode != "SAME_UPPER" && mode != "SAME_LOWER" && mode != "VALID")
    unsupported(node, "attribute 'auto_pad'=\"" + mode + "\" is not supported");
  return mode;
}

/// Geometry of Conv / MaxPool / AveragePool over `inSpatial` with `kernel`.
inline Window resolveWindow(const Node &node, const std::vector<int64_t> &inSpatial,
                            const std::vector<int64_t> &kernel, bool ceilMode) {
  size_t n = kernel.size();
  Window w;
  w.kernel = kernel;
  w.strides = spatialInts(node, "strides", n, 1, true);
  w.dilations = spatialInts(node, "dilations", n, 1, true);
  std::vector<int64_t> pads = spatialInts(node, "pads", 2 * n, 0, false);
  std::string mode = autoPad(node);
  if (mode != "NOTSET" && node.attrs.has("pads")) {
    bool allZero = true;
    for (int64_t p : pads)
      allZero = allZero && p == 0;
    if (!allZero)
      unsupported(node, "attributes 'pads' and 'auto_pad'=\"" + mode + "\" are exclusive");
  }
  w.padsBegin.assign(n, 0);
  w.padsEnd.assign(n, 0);
  w.outSpatial.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t in = inSpatial[i], s = w.strides[i];
    int64_t ek = (kernel[i] - 1) * w.dilations[i] + 1;
    int64_t out;
    if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + ek - in);
      int64_t small = total / 2, big = total - small;
      w.padsBegin[i] = mode == "SAME_UPPER" ? small : big;
      w.padsEnd[i] = total - w.padsBegin[i];
    } else {
      if (mode == "NOTSET") {
        w.padsBegin[i] = pads[i];
        w.padsEnd[i] = pads[i + n];
      }
      int64_t span = in + w.padsBegin[i] + w.padsEnd[i] - ek;
      if (span < 0)
        unsupported(node, "kernel extent " + std::to_string(ek) + " exceeds padded input " +
                              std::to_string(in + w.padsBegin[i] + w.padsEnd[i]) +
                              " on spatial axis " + std::to_string(i));
      if (ceilMode) {
        out = (span + s - 1) / s + 1;
        // A last window starting in the end padding is dropped (PyTorch, ONNX).
        if ((out - 1) * s >= in + w.padsBegin[i])
          --out;
      } else {
        out = span / s + 1;
      }
    }
    w.outSpatial[i] = out;
  }
  return w;
}

/// Geometry of ConvTranspose: `kernel` spatial, `outSpatial` filled in.
struct TransposeWindow {
  std::vector<int64_t> kernel, strides, dilations, padsBegin, padsEnd, outputPadding, outSpatial;
};

inline TransposeWindow resolveTransposeWindow(const Node &node,
                                              const std::vector<int64_t> &inSpatial,
                                              const std::vector<int64_t> &kernel) {
  size_t n = kernel.size();
  TransposeWindow w;
  w.kernel = kernel;
  w.strides = spatialInts(node, "strides", n, 1, true);
  w.dilations = spatialInts(node, "dilations", n, 1, true);
  w.outputPadding = spatialInts(node, "output_padding", n, 0, false);
  std::vector<int64_t> pads = spatialInts(node, "pads", 2 * n, 0, false);
  std::string mode = autoPad(node);
  std::vector<int64_t> outputShape = node.attrs.getInts("output_shape");
  if (outputShape.size() == n + 2) // Some exporters give N,C too.
    outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
  if (!outputShape.empty() && outputShape.size() != n)
    unsupported(node, "attribute 'output_shape'=" + intsToString(outputShape) + " has " +
                          std::to_string(outputShape.size()) + " entries, expected " +
                          std::to_string(n));
  for (size_t i = 0; i < n; ++i)
    if (w.outputPadding[i] >= std::max(w.strides[i], w.dilations[i]))
      unsupported(node, "attribute 'output_padding'=" + intsToString(w.outputPadding) +
                            " must be smaller than the stride or dilation");
  w.padsBegin.assign(n, 0);
  w.padsEnd.assign(n, 0);
  w.outSpatial.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t ek = (kernel[i] - 1) * w.dilations[i] + 1;
    int64_t full = w.strides[i] * (inSpatial[i] - 1) + w.outputPadding[i] + ek;
    bool same = mode == "SAME_UPPER" || mode == "SAME_LOWER";
    if (!outputShape.empty() || same) {
      int64_t target = !outputShape.empty() ? outputShape[i] : inSpatial[i] * w.strides[i];
      // A negative total (output_shape beyond the full output) extends the
      // output with bias-only elements, as in the ONNX reference.
      int64_t total = full - target;
      if (target < 1)
        unsupported(node,
                    "attribute 'output_shape'=" + intsToString(outputShape) + " must be positive");
      // ONNX: SAME_UPPER puts the odd pad at the end, otherwise at the start
      // (floor division, like the reference, for negative totals).
      int64_t small = total >= 0 ? total / 2 : -((-total + 1) / 2), big = total - small;
      w.padsBegin[i] = mode == "SAME_UPPER" ? small : big;
      w.padsEnd[i] = total - w.padsBegin[i];
      w.outSpatial[i] = target;
    } else {
      if (mode == "NOTSET") {
        w.padsBegin[i] = pads[i];
        w.padsEnd[i] = pads[i + n];
      }
      w.outSpatial[i] = full - w.padsBegin[i] - w.padsEnd[i];
      if (w.outSpatial[i] < 1)
        unsupported(node, "attribute 'pads'=" + intsToString(pads) + " leaves an empty output");
    }
  }
  return w;
}

/// Validates the bundlefit fused-activation attributes (Conv, Gemm, MatMul).
inline void checkFusedActivation(const Node &node) {
  if (!node.attrs.has("activation"))
    return;
  fusedActivationOf(node); // throws on an unknown name
}

} // namespace shape_helpers
} // namespace bundlefit
