/*===- bundlefit_kernels_int8.h - Portable int8 kernels for bundles --------===
 *
 * The int8 half of the kernel library: the arithmetic of TensorFlow Lite
 * Micro's int8 reference kernels and of CMSIS-NN (bit-exact with both), in
 * NCHW layout. The same rules as bundlefit_kernels.h apply (freestanding,
 * int32_t shapes that constant-fold, no globals). docs/quantized-ir.md is the
 * contract they implement; the interpreter's int8 reference (src/ops, plain
 * C++ from the same formulas, no shared code) must agree with them bit for
 * bit.
 *
 * Quantized arithmetic, in CMSIS-NN's names:
 *  - a tensor is real = scale * (q - zeroPoint);
 *  - inputOffset = -input zero point, outputOffset = +output zero point,
 *    filterOffset = -weight zero point (0: weights are symmetric);
 *  - (mult, shift) is a Q31 multiplier in [2^30, 2^31) and a shift in
 *    [-31, 30], positive = left (TFLM's QuantizeMultiplier); requantize(x) =
 *    RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x << max(shift,0),
 *    mult), max(-shift,0));
 *  - actMin/actMax clamp the int8 output (a fused Relu/Clip, else -128/127).
 *
 * `quantFlags` of the Conv and Gemm kernels (constant per call, so a bundle's
 * specialised kernel keeps one branch):
 *  - BF_I8_PER_CHANNEL: `outMult`/`outShift` (and biasMult/biasShift) hold
 *    one entry per output channel; without it, one entry for all channels.
 *  - BF_I8_SINGLE_ROUNDING: the output stage rounds once,
 *    floor((acc * mult + 2^(30 - shift)) / 2^(31 - shift)) in 64 bits (CMSIS-NN
 *    built with CMSIS_NN_USE_SINGLE_ROUNDING, TFLM's TFLITE_SINGLE_ROUNDING),
 *    instead of the double rounding above. Double rounding first rounds
 *    acc * mult / 2^31 to an integer, so an exact value within 2^(shift-1) of
 *    a half becomes an exact tie, which the second rounding sends away from
 *    zero: wrong for about one output in 2^(1-shift) (1 in 160-530 in the
 *    QDQ test models). ONNX's QLinearConv / QDQ semantics (and onnxruntime)
 *    round the exact value once; pre-quantized models set this flag unless
 *    built with --use-cmsis (docs/quantized-ir.md).
 * The flags' values are in bundlefit/kernels/abi.h.
 *
 * Bias: `bias` is int32 at the accumulator scale (inputScale * weightScale[c])
 * or NULL. Instead, an int8 bias (`--quantization-precision-bias Int8`) comes
 * as `bias8` with its own multiplier/shift per channel (biasMult/biasShift,
 * same BF_I8_PER_CHANNEL rule): the kernel brings it to the accumulator scale with
 * round-half-away(bias8 * biasMult * 2^(biasShift - 31)) (exact for the
 * power-of-two scales of symmetric_with_power2_scale). At most one of bias
 * and bias8 is non-NULL.
 *
 * Which CMSIS-NN function each kernel's arguments correspond to is noted at
 * each declaration ("CMSIS-NN: ...").
 *===----------------------------------------------------------------------===*/
#ifndef BUNDLEFIT_KERNELS_INT8_H
#define BUNDLEFIT_KERNELS_INT8_H

#include "bundlefit/kernels/abi.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- int8_conv.c ------------------------------------------------------- */
/* in [N,C,H,W], w [M,C/groups,KH,KW] (symmetric), out [N,M,OH,OW]: the
 * geometry in conv (abi.h), the requantization scalars in quant, then the
 * per-channel tables and the int8 bias; `lut`, null or the 256-entry table
 * of an activation fused into the conv (src/codegen/LutFusion.cpp), maps
 * every stored output v to lut[v + 128], as bf_lut_s8 would after it; the
 * im2col, depthwise and in-place forms below take it too (last before
 * their scratch). CMSIS-NN: arm_convolve_wrapper_s8 (cmsis_nn_conv_params:
 * input_offset, output_offset, stride, padding, dilation, activation;
 * cmsis_nn_per_channel_quant_params: multiplier, shift). */
void bf_conv2d_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                  const bf_conv_params *conv, const bf_quant_params *quant, const int32_t *outMult,
                  const int32_t *outShift, const int8_t *bias8, const int32_t *biasMult,
                  const int32_t *biasShift, const int8_t *lut);
/* int8_conv_im2col.c: bf_conv2d_s8 (same arguments, same results) with
 * `im2col`, a planned scratch of two int8 columns of C*KH*KW values
 * (2*C*KH*KW bytes, every target), used when groups == 1 on the DSP
 * extension; null, or elsewhere, it is bf_conv2d_s8. CMSIS-NN:
 * arm_convolve_s8 (whose int16 columns take twice the bytes). */
void bf_conv2d_im2col_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                         const bf_conv_params *conv, const bf_quant_params *quant,
                         const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                         const int32_t *biasMult, const int32_t *biasShift, const int8_t *lut,
                         int8_t *im2col);
/* ---- int8_depthwise.c -------------------------------------------------- */
/* Depthwise: conv->groups == conv->c, conv->m = C * chMult, w [M,1,KH,KW];
 * output channel c * chMult + k reads input channel c. 3x3 kernels have a planar row kernel
 * of their own; other shapes are bf_conv2d_s8 with groups = C.
 * CMSIS-NN: arm_depthwise_conv_wrapper_s8 (cmsis_nn_dw_conv_params adds
 * ch_mult). */
void bf_depthwise_conv2d_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                            const bf_conv_params *conv, const bf_quant_params *quant,
                            const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                            const int32_t *biasMult, const int32_t *biasShift, const int8_t *lut);

/* --memory-opt >= 1: Conv (+activation) then MaxPool without the full conv
 * output: conv rows of pool->chunk channels in scratch (int8_conv_pool.c).
 * conv, quant and the tables are bf_conv2d_s8's (conv->oh, ow: the conv
 * output CH, CW); pool: oh, ow, kh, kw, strides, pad_t, pad_l, dilations and
 * the clamp act_min/act_max (bf_maxpool2d_s8's). */
void bf_conv_pool2d_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                       int8_t *scratch, const bf_conv_params *conv, const bf_quant_params *quant,
                       const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                       const int32_t *biasMult, const int32_t *biasShift,
                       const bf_pool_params *pool);
/* The same conv with an AveragePool whose windows do not overlap vertically
 * (stride_h >= kh); pool also reads pad_b, pad_r, count_include_pad and
 * pad_value (bf_avgpool2d_s8's). Scratch: chunk*CW bytes rounded up to 4,
 * then chunk*PW int32 sums. */
void bf_conv_avgpool2d_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                          int8_t *scratch, const bf_conv_params *conv, const bf_quant_params *quant,
                          const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                          const int32_t *biasMult, const int32_t *biasShift,
                          const bf_pool_params *pool);

/* --memory-opt >= 1: depthwise (chMult 1: conv->m == conv->c) with `out` ==
 * `in` allowed; one output plane of scratch (int8_conv_inplace.c). */
void bf_depthwise_inplace_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                             int8_t *scratch, const bf_conv_params *conv,
                             const bf_quant_params *quant, const int32_t *outMult,
                             const int32_t *outShift, const int8_t *bias8, const int32_t *biasMult,
                             const int32_t *biasShift, const int8_t *lut);
/* 1x1 conv (stride 1, no pad, N = 1; reads conv's c, h, w, m) with `out` ==
 * `in` allowed, `rows` whole rows at a time; scratch: M * rows * W bytes
 * (int8_conv_inplace.c). */
void bf_pointwise_inplace_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                             int8_t *scratch, const bf_conv_params *conv, int32_t rows,
                             const bf_quant_params *quant, const int32_t *outMult,
                             const int32_t *outShift, const int8_t *bias8, const int32_t *biasMult,
                             const int32_t *biasShift, const int8_t *lut);
/* Gemm: out[batches, outDepth] from in[batches, accumDepth]; w is
 * [outDepth, accumDepth] when transB (CMSIS-NN's layout), else
 * [accumDepth, outDepth]. CMSIS-NN: arm_fully_connected_s8 (per tensor) /
 * arm_fully_connected_per_channel_s8 (cmsis_nn_fc_params: input_offset,
 * filter_offset, output_offset, activation). */
void bf_fully_connected_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                           const bf_fc_params *fc, const bf_quant_params *quant,
                           const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                           const int32_t *biasMult, const int32_t *biasShift);

/* ---- int8_conv_wzp.c --------------------------------------------------- */
/* Asymmetric weights (a zero point per output channel, wOffset[c] = -zero
 * point): bf_conv2d_s8's and bf_fully_connected_s8's arguments (fc's
 * filter_offset unread) and the M / outDepth offsets last. Plain loops, exact; no
 * CMSIS-NN counterpart (its kernels take symmetric weights). */
void bf_conv2d_wzp_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                      const bf_conv_params *conv, const bf_quant_params *quant,
                      const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                      const int32_t *biasMult, const int32_t *biasShift, const int32_t *wOffset);
void bf_fully_connected_wzp_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                               const bf_fc_params *fc, const bf_quant_params *quant,
                               const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                               const int32_t *biasMult, const int32_t *biasShift,
                               const int32_t *wOffset);

/* ---- int8_pool.c ------------------------------------------------------- */
/* n*c planes h x w -> oh x ow (the fields of `pool`, abi.h); output
 * parameters equal the input's; the result clamped to act_min..act_max.
 * CMSIS-NN: arm_max_pool_s8 (cmsis_nn_pool_params: stride, padding,
 * activation). MaxPool reads the geometry and the clamp; padding never wins. */
void bf_maxpool2d_s8(const int8_t *in, int8_t *out, const bf_pool_params *pool);
/* Average of the window's int8 values rounded half away from zero (TFLM and
 * arm_avgpool_s8); dilations 1. count_include_pad 0 divides by the valid
 * elements (CMSIS-NN); 1 (ONNX count_include_pad) counts padded positions
 * inside [-pad_t, h+pad_b) x [-pad_l, w+pad_r) as `pad_value` (the zero
 * point). CMSIS-NN: arm_avgpool_s8 (count_include_pad 0 only). */
void bf_avgpool2d_s8(const int8_t *in, int8_t *out, const bf_pool_params *pool);
/* AveragePool to other output parameters, as onnxruntime's
 * QLinearAveragePool: in float, one rounding (half to even). Reads `pool`'s
 * geometry (pad_b, pad_r unused), count_include_pad, the clamp and pad_value
 * as the input's zero point; the scales (float) and the output's zero point
 * are the arguments after it. */
void bf_avgpool2d_requant_s8(const int8_t *in, int8_t *out, const bf_pool_params *pool,
                             float inScale, float outScale, int32_t outZeroPoint);
/* GlobalAveragePool: arm_avgpool_s8 with an h x w window over each of the
 * n*c planes; reads `pool`'s n, c, h, w and the clamp. */
void bf_global_avgpool_s8(const int8_t *in, int8_t *out, const bf_pool_params *pool);

/* ---- int8_elementwise.c ------------------------------------------------ */
/* out[dims] (dense, 6-D) = a + b read through strides (0 broadcasts), TFLM's
 * scheme (bf_add_params): each input (q + offset) << left_shift (20) is
 * requantized to a common scale, summed, requantized to the output. Safe in
 * place. CMSIS-NN: arm_elementwise_add_s8 (no broadcasting). */
void bf_add_s8(const int8_t *a, const int8_t *b, int8_t *out, const int32_t *dims,
               const int32_t *aStrides, const int32_t *bStrides, const bf_add_params *p);
/* out = requantize((a + a_offset) * (b + b_offset)) + out_offset, clamped
 * (bf_mul_params). CMSIS-NN: arm_elementwise_mul_s8. Safe in place. */
void bf_mul_s8(const int8_t *a, const int8_t *b, int8_t *out, const int32_t *dims,
               const int32_t *aStrides, const int32_t *bStrides, const bf_mul_params *p);
/* Mul as onnxruntime's QLinearMul: (a + a_offset) * (b + b_offset) times the
 * float ratio aScale * bScale / outScale = out_mult * 2^out_shift, rounded
 * as float then half to even (exact integer emulation). */
void bf_mul_ratio_s8(const int8_t *a, const int8_t *b, int8_t *out, const int32_t *dims,
                     const int32_t *aStrides, const int32_t *bStrides, const bf_mul_params *p);
/* Relu/Clip with equal input/output parameters: out = clamp(in). Safe in place. */
void bf_clamp_s8(const int8_t *in, int8_t *out, int32_t n, int32_t actMin, int32_t actMax);
/* int8_requantize_table.c: out = table[in + 128] (64 words of four
 * little-endian int8 entries), the table ONNX's DequantizeLinear ->
 * QuantizeLinear in float32 (half to even) with any clamp folded in: Rescale,
 * Relu/Clip whose parameters change (flat, safe in place), and a Concat
 * input at other parameters than the output's (strided, as
 * bf_copy_strided_u8). */
void bf_requantize_table_s8(const int8_t *in, int8_t *out, int32_t n, const int32_t *table);
void bf_requantize_table_strided_s8(const int8_t *src, int8_t *dst, const int32_t *dims,
                                    const int32_t *srcStrides, const int32_t *dstStrides,
                                    const int32_t *table);
/* Quantize: q = clamp(round_half_away(x / scale) + zeroPoint, -128, 127)
 * (TFLM AffineQuantize; NaN gives zeroPoint). */
void bf_quantize_f32_s8(const float *in, int8_t *out, int32_t n, float scale, int32_t zeroPoint);
/* The same rounded half to even (ONNX QuantizeLinear, as onnxruntime). */
void bf_quantize_even_f32_s8(const float *in, int8_t *out, int32_t n, float scale,
                             int32_t zeroPoint);
/* Dequantize: x = scale * (q - zeroPoint). */
void bf_dequantize_s8_f32(const int8_t *in, float *out, int32_t n, float scale, int32_t zeroPoint);

/* ---- int8_resize.c ----------------------------------------------------- */
/* Linear Resize of the planes of p, as onnxruntime's
 * DequantizeLinear -> Resize -> QuantizeLinear: rows h0/h1 with weights
 * hw0/hw1, columns w0/w1 with ww0/ww1, blended in float, one rounding (half
 * to even) at the output parameters (outScale, p->out_zero_point). */
void bf_resize_linear_s8(const int8_t *in, int8_t *out, const bf_resize_params *p,
                         const int32_t *h0, const int32_t *h1, const float *hw0, const float *hw1,
                         const int32_t *w0, const int32_t *w1, const float *ww0, const float *ww1,
                         float inScale, float outScale);

/* ---- int8_softmax.c ---------------------------------------------------- */
/* Softmax over `axis` elements spaced `inner` apart, for `outer` blocks;
 * output scale 1/256, zero point -128. mult/shift/diffMin as TFLM's
 * PreprocessSoftmaxScaling (beta 1, 5 integer bits) and CalculateInputRadius.
 * CMSIS-NN: arm_softmax_s8(input, num_rows = outer, row_size = axis, mult,
 * shift, diff_min, output) when inner == 1. Safe in place. */
void bf_softmax_s8(const int8_t *in, int8_t *out, int32_t outer, int32_t axis, int32_t inner,
                   int32_t mult, int32_t shift, int32_t diffMin);

/* ---- int8_lstm.c ------------------------------------------------------- */
/* TFLite's integer UNIDIRECTIONAL_SEQUENCE_LSTM (TFLM's 8x8->16 kernel, no
 * CIFG/peephole/projection/layer norm) over the whole sequence: x int8
 * [batch][steps][inputs] ([steps][batch][inputs] when timeMajor), weights
 * w [4][cells][inputs] and r [4][cells][cells] int8 and bias [4][cells]
 * int32, gates in TFLite's order i, f, c, o; y int8 like x with `cells`
 * columns, the hidden state. p: the BF_LSTM_* parameters (kernels/abi.h);
 * cell: int16 [batch][cells] scratch. Zero initial state. */
void bf_lstm_s8(const int8_t *x, const int8_t *w, const int8_t *r, const int32_t *bias,
                const int32_t *p, int8_t *y, int16_t *cell, int32_t batch, int32_t steps,
                int32_t inputs, int32_t cells, int32_t timeMajor);
/* The int16x8 LSTM (TFLM's, int64 sums requantized by the 64-bit rule): x
 * and y int16 (zero point 0), bias int64 [4][cells]; otherwise bf_lstm_s8. */
void bf_lstm_s16(const int16_t *x, const int8_t *w, const int8_t *r, const int64_t *bias,
                 const int32_t *p, int16_t *y, int16_t *cell, int32_t batch, int32_t steps,
                 int32_t inputs, int32_t cells, int32_t timeMajor);

/* An elementwise activation as a lookup: out[i] = table[in[i] + 128], the
 * 256-entry table being f(dequantize(q)) quantized to the output's parameters
 * (TFLite's LUT kernels for Logistic/Tanh/HardSwish/LeakyRelu/Elu/Gelu). Safe
 * in place. */
void bf_lut_s8(const int8_t *in, int8_t *out, int32_t n, const int8_t *table);

/* ---- int16x8.c ---------------------------------------------------------- */
/* TFLite's int16x8 kernels (TFLM reference arithmetic; int16 zero points 0;
 * multipliers and shifts from TFLM's Prepare, ops/int16x8). */
/* LEAKY_RELU: x >= 0 requantized by the identity multiplier, else by alpha's. */
void bf_leaky_relu_s16(const int16_t *in, int16_t *out, int32_t n, int32_t identityMult,
                       int32_t identityShift, int32_t alphaMult, int32_t alphaShift);
/* ADD / SUB over 6-D dims, a and b through strides (0: broadcast); p: aMult,
 * aShift, bMult, bShift, outMult, outShift, actMin, actMax, subtract. */
void bf_addsub_s16(const int16_t *a, const int16_t *b, int16_t *out, const int32_t *dims,
                   const int32_t *aStrides, const int32_t *bStrides, const int32_t *p);
/* CONV_2D 16x8: NHWC x int16, OHWI w int8, int64 bias [M], per-channel
 * mult/shift; g: N, H, W, C, OH, OW, M, KH, KW, strideH, strideW, dilationH,
 * dilationW, padTop, padLeft, actMin, actMax. int64 accumulators. */
void bf_conv2d_s16x8(const int16_t *x, const int8_t *w, const int64_t *bias, int16_t *y,
                     const int32_t *mult, const int32_t *shift, const int32_t *g);
/* DEPTHWISE_CONV_2D 16x8: g as above, w [1,KH,KW,M] (TFLite's layout), M a
 * multiple of C; output channel m reads input channel m / (M / C). */
void bf_depthwise_conv2d_s16x8(const int16_t *x, const int8_t *w, const int64_t *bias, int16_t *y,
                               const int32_t *mult, const int32_t *shift, const int32_t *g);
/* QUANTIZE int16 <-> int32 (TFLM Requantize); p: mult, shift, input and
 * output zero points. */
void bf_requantize_s16_s32(const int16_t *in, int32_t *out, int32_t n, const int32_t *p);
void bf_requantize_s32_s16(const int32_t *in, int16_t *out, int32_t n, const int32_t *p);
/* TRANSPOSE_CONV 16x8: g as above, H/W the input's, OH/OW the output's,
 * padTop/padLeft TFLite's; dilation 1. */
void bf_transpose_conv2d_s16x8(const int16_t *x, const int8_t *w, const int64_t *bias, int16_t *y,
                               const int32_t *mult, const int32_t *shift, const int32_t *g);
/* AVERAGE_POOL_2D / MAX_POOL_2D int16: NHWC; g: N, H, W, C, OH, OW, KH, KW,
 * strideH, strideW, padTop, padLeft, actMin, actMax, isMax. The window is
 * clipped to the input; an average divides by its valid taps, rounding half
 * away from zero (TFLM). */
void bf_pool_s16(const int16_t *x, int16_t *y, const int32_t *g);
/* SOFTMAX int16 over rows of `depth` (TFLM SoftmaxInt16): exp of the scaled
 * difference to the row's maximum through a 513-entry int16 table, their
 * sum's reciprocal through another; y is the exp cache, so it must not alias
 * x. */
void bf_softmax_s16(const int16_t *x, int16_t *y, int32_t rows, int32_t depth, int32_t mult,
                    int32_t shift, const int16_t *expTable, const int16_t *reciprocalTable);

#ifdef __cplusplus
}
#endif

#endif /* BUNDLEFIT_KERNELS_INT8_H */
