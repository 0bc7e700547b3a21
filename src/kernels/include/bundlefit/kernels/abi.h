/*===- abi.h - The kernel ABI: enums and parameters of the bf_ kernels ----===
 *
 * Layer 0 of bundlefit: the constants the C kernels (src/kernels) and the
 * C++ code that calls them (operator lowering in src/ops, code generation)
 * agree on. Plain C, no functions (one data table), included by both.
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

/* TFLite's sigmoid(i / 24) in 0.16 fixed point (tanh(x) = 2 sigmoid(2x) - 1
 * reads it too): the table TFLM's int16 Logistic/Tanh and CMSIS-NN share, read by
 * bf_lstm_s8 and by the interpreter's reference of it. */
static const uint16_t bf_sigmoid_table_u16[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
};

/* bf_lstm_s8's parameter table (TFLM's integer LSTM Prepare() arithmetic,
 * ops/recurrent/TfliteLstmInt8.cpp). */
enum bf_lstm_param {
  /* p[4 * gate + 0..3]: input mult, shift, recurrent mult, shift (to 2^-12). */
  BF_LSTM_FORGET_MULT = 16, /* forget gate x cell -> cell */
  BF_LSTM_FORGET_SHIFT,
  BF_LSTM_INPUT_MULT, /* input gate x cell gate -> cell */
  BF_LSTM_INPUT_SHIFT,
  BF_LSTM_OUTPUT_MULT, /* tanh(cell) x output gate -> hidden */
  BF_LSTM_OUTPUT_SHIFT,
  BF_LSTM_TANH_MULT, /* tanh(cell)'s input scaling (TFLM lstm_eval.cc Tanh) */
  BF_LSTM_TANH_SHIFT,
  BF_LSTM_INPUT_ZP,
  BF_LSTM_HIDDEN_ZP,
  BF_LSTM_CELL_CLIP, /* quantized; 0: none */
  BF_LSTM_PARAM_COUNT
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

/* ---- Parameter structs (CMSIS-NN style: `const bf_conv_params *p`) ------
 * Kernels whose argument lists were long take these instead of positional
 * integers. Every field is an int32_t, so the layout is the same on every
 * target, and code generation passes each one as a private constant global:
 * after inlining LLVM folds every field as it folded the integers.
 *
 * Each struct is declared through its field list (an X-macro) so that the
 * C++ side (bundlefit/ops/KernelParams.h) knows the fields' names: the
 * lowering sets them by name, and a field it did not set is reported by
 * name. Add a field only to its list.
 *
 * A new struct is also added to BF_ABI_PARAMS_STRUCTS (the end of this
 * file). Two structs may have the same fields: code generation never looks a
 * struct type up by name in the kernel bitcode (llvm-link merges
 * structurally identical types under one name), it reads each struct's size
 * from the global abi.c defines for it (codegen/KernelParamsCheck.cpp). */
#define BF_ABI_INT32_FIELD(name) int32_t name;

/* A 2-D convolution [n, c, h, w] -> [n, m, oh, ow] with a kernel of kh x kw
 * taps; pad_t/pad_l are the leading pads (trailing ones follow from oh, ow);
 * groups divides c and m. */
// clang-format off
#define BF_CONV_PARAMS_FIELDS(X)                                                    \
  X(n) X(c) X(h) X(w) X(m) X(oh) X(ow) X(kh) X(kw)                                  \
  X(stride_h) X(stride_w) X(pad_t) X(pad_l) X(dil_h) X(dil_w) X(groups)
// clang-format on
typedef struct bf_conv_params {
  BF_CONV_PARAMS_FIELDS(BF_ABI_INT32_FIELD)
} bf_conv_params;

/* A 2-D pool [n, c, h, w] -> [n, c, oh, ow] (in the fused kernels its input
 * is the conv's output: n, m, oh, ow). is_max: MaxPool, else AveragePool
 * (count_include_pad and, int8, pad_value: the input's zero point).
 * act_min/act_max: the int8 output clamp (0 in float). chunk: output
 * channels per computed conv row in a fused conv + pool kernel
 * (bf_conv_pool2d_*; 0 elsewhere). */
// clang-format off
#define BF_POOL_PARAMS_FIELDS(X)                                                    \
  X(n) X(c) X(h) X(w) X(oh) X(ow) X(kh) X(kw)                                      \
  X(stride_h) X(stride_w) X(pad_t) X(pad_l) X(pad_b) X(pad_r) X(dil_h) X(dil_w)     \
  X(is_max) X(count_include_pad) X(pad_value) X(act_min) X(act_max) X(chunk)
// clang-format on
typedef struct bf_pool_params {
  BF_POOL_PARAMS_FIELDS(BF_ABI_INT32_FIELD)
} bf_pool_params;

/* A 3-D window [n, c, d, h, w] -> [n, m, od, oh, ow] of kd x kh x kw taps,
 * shared by the 3-D convolutions (groups divides c and m; the leading pads
 * pad_d/pad_h/pad_w are negative for a ConvTranspose with output_shape) and
 * pools (m = c, groups 1; is_max, else AveragePool, whose
 * count_include_pad counts the taps inside the trailing pads *_end too). */
// clang-format off
#define BF_WINDOW3D_PARAMS_FIELDS(X)                                                \
  X(n) X(c) X(d) X(h) X(w) X(m) X(od) X(oh) X(ow) X(kd) X(kh) X(kw)                 \
  X(stride_d) X(stride_h) X(stride_w) X(pad_d) X(pad_h) X(pad_w)                    \
  X(pad_d_end) X(pad_h_end) X(pad_w_end) X(dil_d) X(dil_h) X(dil_w)                 \
  X(groups) X(is_max) X(count_include_pad)
// clang-format on
typedef struct bf_window3d_params {
  BF_WINDOW3D_PARAMS_FIELDS(BF_ABI_INT32_FIELD)
} bf_window3d_params;

/* Gemm Y[m, n] = alpha * op(A) op(B) + beta * C (bf_gemm_f32): k is the
 * inner extent; C(i, j) = C[i * c_stride_m + j * c_stride_n] (0
 * broadcasts). */
#define BF_GEMM_PARAMS_FIELDS(X) X(m) X(n) X(k) X(trans_a) X(trans_b) X(c_stride_m) X(c_stride_n)
typedef struct bf_gemm_params {
  BF_GEMM_PARAMS_FIELDS(BF_ABI_INT32_FIELD)
} bf_gemm_params;

/* Batched MatMul Y[b] = A[b] B[b] of [m, k] x [k, n] (bf_matmul_f32);
 * A[b] starts at A + b * a_batch_stride (0 broadcasts), B[b] likewise. */
#define BF_MATMUL_PARAMS_FIELDS(X) X(batch) X(m) X(k) X(n) X(a_batch_stride) X(b_batch_stride)
typedef struct bf_matmul_params {
  BF_MATMUL_PARAMS_FIELDS(BF_ABI_INT32_FIELD)
} bf_matmul_params;

/* The int8 requantization's scalars (TFLM's Prepare(), ops/Int8Params.h):
 * input_offset = -input zero point, output_offset = output zero point,
 * quant_flags (BF_I8_*), the clamp of the fused activation. The per-channel
 * tables stay pointer arguments of the kernels. */
#define BF_QUANT_PARAMS_FIELDS(X)                                                                  \
  X(input_offset) X(output_offset) X(quant_flags) X(act_min) X(act_max)
typedef struct bf_quant_params {
  BF_QUANT_PARAMS_FIELDS(BF_ABI_INT32_FIELD)
} bf_quant_params;

/* int8 Add (bf_add_s8, TFLM's scheme): each input plus its offset (-zero
 * point), shifted left by left_shift and requantized by its mult/shift to a
 * common scale; the sum requantized by out_mult/out_shift, plus out_offset,
 * clamped to [act_min, act_max]. */
// clang-format off
#define BF_ADD_PARAMS_FIELDS(X)                                                     \
  X(a_offset) X(a_mult) X(a_shift) X(b_offset) X(b_mult) X(b_shift) X(left_shift)   \
  X(out_offset) X(out_mult) X(out_shift) X(act_min) X(act_max)
// clang-format on
typedef struct bf_add_params {
  BF_ADD_PARAMS_FIELDS(BF_ABI_INT32_FIELD)
} bf_add_params;

/* int8 Mul: (a + a_offset) * (b + b_offset) requantized by out_mult /
 * out_shift (bf_mul_s8, TFLM), or times the float ratio out_mult *
 * 2^out_shift rounded as onnxruntime's QLinearMul (bf_mul_ratio_s8); plus
 * out_offset, clamped to [act_min, act_max]. As many fields as
 * bf_gemm_params: llvm-link gives the two one type (KernelParamsCheck.h). */
#define BF_MUL_PARAMS_FIELDS(X)                                                                    \
  X(a_offset) X(b_offset) X(out_offset) X(out_mult) X(out_shift) X(act_min) X(act_max)
typedef struct bf_mul_params {
  BF_MUL_PARAMS_FIELDS(BF_ABI_INT32_FIELD)
} bf_mul_params;

/* An int8 fully connected layer (bf_fully_connected_s8, _wzp_s8):
 * out[batches, out_depth] from in[batches, accum_depth]; the weights are
 * [out_depth, accum_depth] when trans_b, else [accum_depth, out_depth];
 * filter_offset = -the weights' zero point (0 in the _wzp_ kernel, which
 * takes one per output). The requantization is a bf_quant_params. */
#define BF_FC_PARAMS_FIELDS(X) X(batches) X(accum_depth) X(out_depth) X(trans_b) X(filter_offset)
typedef struct bf_fc_params {
  BF_FC_PARAMS_FIELDS(BF_ABI_INT32_FIELD)
} bf_fc_params;

/* Col2Im (bf_col2im_f32): `planes` images of height x width summed from
 * columns of kernel_h x kernel_w taps over a blocks_h x blocks_w grid. */
// clang-format off
#define BF_COL2IM_PARAMS_FIELDS(X)                                                  \
  X(planes) X(height) X(width) X(kernel_h) X(kernel_w) X(dil_h) X(dil_w)            \
  X(pad_t) X(pad_l) X(stride_h) X(stride_w) X(blocks_h) X(blocks_w)
// clang-format on
typedef struct bf_col2im_params {
  BF_COL2IM_PARAMS_FIELDS(BF_ABI_INT32_FIELD)
} bf_col2im_params;

/* A Resize of nc planes ih x iw to oh x ow: the nearest kernels
 * (bf_resize_nearest_f32, _u8) copy by, the linear ones (bf_resize_linear_f32,
 * _s8) blend the source rows and columns of the index and weight tables,
 * pointer arguments computed at compile time. int8 linear: each neighbour
 * less in_zero_point, the blend plus out_zero_point (0 in float; a nearest
 * copy reads neither). */
// clang-format off
#define BF_RESIZE_PARAMS_FIELDS(X)                                                  \
  X(nc) X(ih) X(iw) X(oh) X(ow) X(in_zero_point) X(out_zero_point)
// clang-format on
typedef struct bf_resize_params {
  BF_RESIZE_PARAMS_FIELDS(BF_ABI_INT32_FIELD)
} bf_resize_params;

/* Every parameter struct with its field list: KernelParams.h (the C++ side)
 * and abi.c (the struct's size in the kernel bitcode) iterate over it. */
#define BF_ABI_PARAMS_STRUCTS(X)                                                                   \
  X(bf_conv_params, BF_CONV_PARAMS_FIELDS)                                                         \
  X(bf_pool_params, BF_POOL_PARAMS_FIELDS)                                                         \
  X(bf_quant_params, BF_QUANT_PARAMS_FIELDS)                                                       \
  X(bf_window3d_params, BF_WINDOW3D_PARAMS_FIELDS)                                                 \
  X(bf_gemm_params, BF_GEMM_PARAMS_FIELDS)                                                         \
  X(bf_matmul_params, BF_MATMUL_PARAMS_FIELDS)                                                     \
  X(bf_add_params, BF_ADD_PARAMS_FIELDS)                                                           \
  X(bf_mul_params, BF_MUL_PARAMS_FIELDS)                                                           \
  X(bf_fc_params, BF_FC_PARAMS_FIELDS)                                                             \
  X(bf_col2im_params, BF_COL2IM_PARAMS_FIELDS)                                                     \
  X(bf_resize_params, BF_RESIZE_PARAMS_FIELDS)

/* The name of the int32 global abi.c defines with sizeof(type). */
#define BF_ABI_SIZEOF_PREFIX "bf_abi_sizeof_"

#ifdef __cplusplus
}
#endif

#endif /* BUNDLEFIT_KERNELS_ABI_H */
