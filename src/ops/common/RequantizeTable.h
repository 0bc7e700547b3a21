//===- RequantizeTable.h - int8 -> int8 at other parameters, as ONNX does --===//
//
// An int8 value read at other parameters (Concat of inputs at other scales
// than the output's, Rescale, Relu/Clip whose output parameters differ) is
// ONNX's DequantizeLinear -> QuantizeLinear: y = clamp(round_half_even(
// float(s_in * float(x - zp_in)) / s_out) + zp_out), in float32, which is
// what onnxruntime computes (QLinearConcat's lookup table, MLAS's
// QuantizeLinear). 256 inputs: computed once at compile time (and by the
// reference interpreter, the same function) instead of a fixed-point
// multiplier, whose rounding differs on about one value in 30.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_OPS_COMMON_REQUANTIZETABLE_H
#define BUNDLEFIT_OPS_COMMON_REQUANTIZETABLE_H

#include <array>
#include <cstdint>
#include <vector>

namespace bundlefit {

/// y for x = -128 .. 127 at index x + 128, clamped to [lo, hi].
std::array<int8_t, 256> requantizeTable(float inScale, int32_t inZeroPoint, float outScale,
                                        int32_t outZeroPoint, int32_t lo = -128, int32_t hi = 127);

/// The table as the kernels take it (bf_requantize_table_s8): 64 words of
/// four entries each, little-endian (entry x + 128 is byte x + 128).
std::vector<int32_t> packTable(const std::array<int8_t, 256> &table);

} // namespace bundlefit

#endif // BUNDLEFIT_OPS_COMMON_REQUANTIZETABLE_H
