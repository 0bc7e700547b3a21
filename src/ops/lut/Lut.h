//===- Lut.h - int8 activations as 256-entry tables (internal) -------------===//
//
// Every elementwise activation y = f(x) has, in int8, only 256 possible
// inputs: its kernel is a table computed at compile time from the input's
// and output's scale and zero point, table[q + 128] = quantize(f(
// dequantize(q))), and one kernel (bf_lut_s8) runs them all (TFLite's and
// CMSIS-NN's approach for Logistic, Tanh, HardSwish...). An activation
// joins by one row in LutOps.cpp: its name and its float function.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"

#include <array>
#include <cstdint>
#include <vector>

namespace bundlefit::lut {

/// The float function of an activation node (LutOps.cpp), or nullptr when
/// `node` is not one with a table.
using Function = float (*)(float x, const Node &node);
Function functionOf(const Node &node);

/// The operand a table reads: 0, or for Sub with a scalar constant the
/// other one (GRU's 1 - z).
size_t activationOperand(const Node &node);

/// quantize(f(dequantize(q))) for q = -128..127, as onnxruntime computes a
/// QDQ activation: dequantize in float ((q - zp) * scale), f in float,
/// quantize in float (y / scale, rounded half to even, + zp, saturated).
std::array<int8_t, 256> buildTable(const Node &node, Function f, float inScale, int32_t inZeroPoint,
                                   float outScale, int32_t outZeroPoint);

/// The operators of LutOps.cpp's rows, whose int8 build is a table
/// (LutInt8.cpp) and whose int8 reference is f element by element
/// (LutReference.cpp).
std::vector<const char *> tableOps();

} // namespace bundlefit::lut
