/*===- abi.h - The kernel ABI: enums and parameters of the bf_ kernels ----===
 *
 * Layer 0 of bundlefit: the constants the C kernels (src/kernels) and the
 * C++ code that calls them (operator lowering in src/ops, code generation)
 * agree on. Plain C, no functions, included by both.
 *===----------------------------------------------------------------------===*/
#ifndef BUNDLEFIT_KERNELS_ABI_H
#define BUNDLEFIT_KERNELS_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BF_MAX_RANK 6

/* Activation fused into Conv/ConvTranspose/Gemm/MatMul (ops/OpRegistry.h:
 * attribute "activation"). a/b are activation_min/max (Clip) or
 * activation_alpha/beta (LeakyRelu alpha; HardSigmoid alpha, beta). */
enum bf_activation {
  BF_ACT_NONE = 0,
  BF_ACT_RELU = 1,
  BF_ACT_CLIP = 2,
  BF_ACT_LEAKY_RELU = 3,
  BF_ACT_SIGMOID = 4,
  BF_ACT_TANH = 5,
  BF_ACT_HARD_SIGMOID = 6,
  BF_ACT_HARD_SWISH = 7,
  BF_ACT_SILU = 8,           /* x * sigmoid(x) */
  BF_ACT_MISH = 9,           /* x * tanh(softplus(x)) */
  BF_ACT_X_HARD_SIGMOID = 10 /* x * hard_sigmoid(x; a, b) */
};

/* Binary operators of the integer kernels (bf_binary_<type>). */
enum bf_binary_op {
  BF_OP_ADD = 0,
  BF_OP_SUB = 1,
  BF_OP_MUL = 2,
  BF_OP_DIV = 3,
  BF_OP_MAX = 4,
  BF_OP_MIN = 5,
  BF_OP_PRELU = 6, /* float only */
  BF_OP_POW = 7,
  BF_OP_FMOD = 8, /* remainder with the dividend's sign (C fmod) */
  BF_OP_MOD = 9   /* integers: remainder with the divisor's sign */
};

/* Functions of bf_unary_f32 (math.c); the rows of src/ops/math/UnaryMathOps.cpp
 * name the ONNX operator and the attributes passed as a and b. */
enum bf_unary_op {
  BF_UNARY_NEG = 0,
  BF_UNARY_ABS = 1,
  BF_UNARY_SIGN = 2,
  BF_UNARY_RECIPROCAL = 3,
  BF_UNARY_LOG = 4,
  BF_UNARY_SIN = 5,
  BF_UNARY_COS = 6,
  BF_UNARY_TAN = 7,
  BF_UNARY_ASIN = 8,
  BF_UNARY_ACOS = 9,
  BF_UNARY_ATAN = 10,
  BF_UNARY_SINH = 11,
  BF_UNARY_COSH = 12,
  BF_UNARY_ASINH = 13,
  BF_UNARY_ACOSH = 14,
  BF_UNARY_ATANH = 15,
  BF_UNARY_ERF = 16,
  BF_UNARY_ROUND = 17, /* half to even */
  BF_UNARY_CEIL = 18,
  BF_UNARY_FLOOR = 19,
  BF_UNARY_ELU = 20,  /* a: alpha */
  BF_UNARY_SELU = 21, /* a: alpha, b: gamma */
  BF_UNARY_CELU = 22, /* a: alpha */
  BF_UNARY_SOFTPLUS = 23,
  BF_UNARY_SOFTSIGN = 24,
  BF_UNARY_MISH = 25,
  BF_UNARY_THRESHOLDED_RELU = 26, /* a: alpha */
  BF_UNARY_SHRINK = 27,           /* a: lambd, b: bias */
  BF_UNARY_SILU = 28,             /* x * sigmoid(x) */
  BF_UNARY_SCALE = 29,            /* a * x (Mean's division) */
  BF_UNARY_GELU = 30              /* a: 0 erf form, 1 tanh form (approximate) */
};

/* Comparisons (bf_compare_<type>) and logical ops (bf_logical_u8). */
enum bf_compare_op { BF_CMP_EQ = 0, BF_CMP_LT = 1, BF_CMP_LE = 2, BF_CMP_GT = 3, BF_CMP_GE = 4 };
enum bf_logic_op { BF_LOGIC_AND = 0, BF_LOGIC_OR = 1, BF_LOGIC_XOR = 2 };

/* Reductions of bf_reduce_f32. */
enum bf_reduce_op {
  BF_REDUCE_SUM = 0, /* times scale: Sum (1), Mean (1/count) */
  BF_REDUCE_MAX = 1,
  BF_REDUCE_MIN = 2,
  BF_REDUCE_PROD = 3,
  BF_REDUCE_L1 = 4,
  BF_REDUCE_L2 = 5,
  BF_REDUCE_SUM_SQUARE = 6,
  BF_REDUCE_LOG_SUM = 7,
  BF_REDUCE_LOG_SUM_EXP = 8
};

/* Pad modes. */
enum bf_pad_mode { BF_PAD_CONSTANT = 0, BF_PAD_REFLECT = 1, BF_PAD_EDGE = 2 };

/* Reductions of bf_scatter_elements_<index type>. */
enum bf_scatter_reduction { BF_SCATTER_NONE = 0, BF_SCATTER_ADD = 1, BF_SCATTER_MUL = 2 };

/* quantFlags of the int8 Conv and Gemm kernels (bundlefit_kernels_int8.h). */
#define BF_I8_PER_CHANNEL 1
#define BF_I8_SINGLE_ROUNDING 2

#ifdef __cplusplus
}
#endif

#endif /* BUNDLEFIT_KERNELS_ABI_H */
