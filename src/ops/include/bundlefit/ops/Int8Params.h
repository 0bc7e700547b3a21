//===- Int8Params.h - A quantized node's int8 kernel arguments -------------===//
//
// Turns an int8-quantized node (docs/quantized-ir.md) into the arguments of
// its int8 kernel (src/kernels/bundlefit_kernels_int8.h): offsets, Q31
// multipliers and shifts, clamp range, geometry, for the bundles' portable
// kernels and CMSIS-NN calls alike (the interpreter's int8 reference derives
// its own, common/Int8Reference.h). One builder per family, in
// src/ops/<family>/*Int8.cpp. The field names follow CMSIS-NN's parameter structs
// (cmsis_nn_conv_params, cmsis_nn_per_channel_quant_params, ...) so that a
// CMSIS-NN call can be emitted from the same structs.
//
// Errors: Error(Unsupported, "node 'x' (Op): ...") for a node the int8
// kernels do not cover (missing quantization parameters, non-symmetric
// weights, a fused activation other than Relu/Clip, ...).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ops/OpRegistry.h"

#include <array>
#include <cstdint>
#include <vector>

namespace bundlefit {

/// TFLM's QuantizeMultiplier: real = multiplier * 2^(shift - 31) with
/// multiplier in [2^30, 2^31) (0 for real == 0), shift in [-31, 30] (smaller
/// reals flush to 0). Throws Internal for a negative or too large real.
void quantizeMultiplier(double real, int32_t &multiplier, int &shift);
/// The same without the upper limit on shift (an Int8 bias brought up to the
/// accumulator scale may need a shift above 30; bf_i8_scale_bias takes it).
void quantizeMultiplierUnbounded(double real, int32_t &multiplier, int &shift);

/// TFLM's CalculateActivationRangeQuantized quantize step: zp + round(real /
/// scale) (float division, half away from zero), clamped to [-128, 127].
int32_t quantizeToInt8(double real, float scale, int32_t zeroPoint);

/// A requantization step: real ratio -> (mult, shift).
struct Int8Scale {
  int32_t mult = 0;
  int32_t shift = 0;
};

/// Conv (bf_conv2d_s8 / bf_depthwise_conv2d_s8) and Gemm
/// (bf_fully_connected_s8).
struct Int8ConvArgs {
  bool depthwise = false; ///< group == C and the kernel is bf_depthwise_conv2d_s8.
  // Geometry (Conv; 1-D convolutions have H = KH = 1).
  int32_t N = 1, C = 1, H = 1, W = 1, M = 1, OH = 1, OW = 1, KH = 1, KW = 1;
  int32_t strideH = 1, strideW = 1, padT = 0, padL = 0, dilH = 1, dilW = 1;
  int32_t groups = 1, chMult = 1;
  // Gemm geometry.
  int32_t batches = 1, accumDepth = 1, outDepth = 1, transB = 0;
  // cmsis_nn_conv_params / cmsis_nn_fc_params.
  int32_t inputOffset = 0, filterOffset = 0, outputOffset = 0;
  int32_t actMin = -128, actMax = 127;
  // cmsis_nn_per_channel_quant_params (one entry when !perChannel).
  std::vector<int32_t> outMult, outShift;
  bool perChannel = false;
  /// The output stage rounds once (BF_I8_SINGLE_ROUNDING): the node has
  /// kInt8RoundingAttr = "single" (setInt8SingleRounding).
  bool singleRounding = false;
  /// The kernels' quantFlags argument (BF_I8_PER_CHANNEL | BF_I8_SINGLE_ROUNDING).
  int32_t quantFlags() const { return (perChannel ? 1 : 0) | (singleRounding ? 2 : 0); }
  /// Int8 bias: multipliers to the accumulator scale (same perChannel rule).
  bool int8Bias = false;
  std::vector<int32_t> biasMult, biasShift;
};
Int8ConvArgs int8ConvArgs(const Node &node); ///< Conv
Int8ConvArgs int8GemmArgs(const Node &node); ///< Gemm

/// Sets (single) or removes (!single) kInt8RoundingAttr on every int8 node
/// whose op rounds differently in ONNX and TFLite (OpDef::int8.singleRounding:
/// Conv, Gemm, Quantize); returns how many nodes it set. Pre-quantized ONNX
/// models round as ONNX does; TFLite models as TFLite Micro; a --use-cmsis
/// build takes it away again, since CMSIS-NN as built by default rounds twice
/// and a bundle keeps one arithmetic.
size_t setInt8SingleRounding(Graph &graph, bool single);

/// MaxPool / AveragePool / GlobalAveragePool (bf_maxpool2d_s8,
/// bf_avgpool2d_s8, bf_global_avgpool_s8).
struct Int8PoolArgs {
  int32_t NC = 1, H = 1, W = 1, OH = 1, OW = 1, KH = 1, KW = 1;
  int32_t strideH = 1, strideW = 1, padT = 0, padL = 0, padB = 0, padR = 0;
  int32_t dilH = 1, dilW = 1;
  int32_t countIncludePad = 0, padValue = 0;
  int32_t actMin = -128, actMax = 127;
  /// AveragePool at other output parameters than its input's (a
  /// pre-quantized ONNX model's): bf_avgpool2d_requant_s8 with these.
  bool requant = false;
  float inScale = 1.0f, outScale = 1.0f;
  int32_t inZeroPoint = 0, outZeroPoint = 0;
};
Int8PoolArgs int8PoolArgs(const Node &node);

/// Add / Mul (bf_add_s8 / bf_mul_s8): 6-D dims and broadcast strides.
struct Int8BinaryArgs {
  std::array<int32_t, 6> dims{}, aStrides{}, bStrides{};
  int32_t aOffset = 0, bOffset = 0, outOffset = 0, leftShift = 0;
  Int8Scale a, b, out; ///< Add: a, b and out; Mul: out only.
  int32_t actMin = -128, actMax = 127;
  /// Mul of a pre-quantized ONNX model (kInt8RoundingAttr "single"):
  /// onnxruntime's float ratio, bf_mul_ratio_s8 (onnxMulRatio), not `out`.
  bool onnxMul = false;
};
Int8BinaryArgs int8BinaryArgs(const Node &node);

/// float(aScale * bScale) / outScale as onnxruntime computes it, = mant * 2^exp.
struct OnnxMulRatio {
  int32_t mant = 0, exp = 0;
};
OnnxMulRatio onnxMulRatio(const Node &node);

/// Relu / Clip / Rescale: bf_clamp_s8 when `clampOnly` (equal parameters),
/// else bf_requantize_table_s8 (the table from ops/common/RequantizeTable.h;
/// `scale` and the offsets describe the same map in fixed point).
struct Int8RescaleArgs {
  int32_t n = 0;
  bool clampOnly = false;
  int32_t inOffset = 0, outOffset = 0;
  Int8Scale scale;
  int32_t actMin = -128, actMax = 127;
};
Int8RescaleArgs int8RescaleArgs(const Node &node);

/// Quantize (bf_quantize_f32_s8) / Dequantize (bf_dequantize_s8_f32).
struct Int8ConvertArgs {
  int32_t n = 0;
  float scale = 1.0f;
  int32_t zeroPoint = 0;
};
Int8ConvertArgs int8ConvertArgs(const Node &node);

/// Concat: one strided copy per input into the output (elements), through
/// bf_requantize_table_strided_s8 when that input's parameters differ from
/// the output's (`rescale`), else a plain byte copy.
struct Int8ConcatPart {
  std::array<int32_t, 6> dims{}, srcStrides{}, dstStrides{};
  int64_t dstOffset = 0; ///< Elements into the output.
  bool rescale = false;
  int32_t inOffset = 0, outOffset = 0;
  Int8Scale scale;
};
std::vector<Int8ConcatPart> int8ConcatArgs(const Node &node);

} // namespace bundlefit
