/*===- int8_conv_inplace.c - Depthwise convolution over its own input, int8 ==
 *
 * The int8 twin of conv_inplace.c (same proof, with 1-byte elements):
 * depthwise with chMult == 1, output plane p computed into a one-plane
 * `scratch` (OH*OW bytes) by bf_depthwise_conv2d_s8 itself, then copied over
 * output plane p. Output plane p ends at (p+1)*OH*OW <= (p+1)*H*W, the start
 * of input plane p+1, so nothing still to be read is overwritten. The
 * per-channel tables are passed from channel m on, so the numbers are those
 * of the whole-tensor call.
 *===----------------------------------------------------------------------===*/
#include "int8_util.h"

/* `in` and `out` may be the same address (not restrict). */
void bf_depthwise_inplace_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                             int8_t *scratch, const bf_conv_params *conv,
                             const bf_quant_params *quant, const int32_t *outMult,
                             const int32_t *outShift, const int8_t *bias8, const int32_t *biasMult,
                             const int32_t *biasShift, const int8_t *lut) {
  const bf_i8_conv_args a = BF_I8_CONV_ARGS_OF(conv, quant);
  const int32_t inPlane = a.H * a.W, outPlane = a.OH * a.OW, taps = a.KH * a.KW;
  for (int32_t p = 0; p < a.N * a.C; ++p) {
    const int32_t m = p % a.C, k = (a.quantFlags & BF_I8_PER_CHANNEL) ? m : 0;
    bf_i8_depthwise_conv2d(in + (int64_t)p * inPlane, w + (int64_t)m * taps, bias ? bias + m : 0,
                           scratch, 1, 1, a.H, a.W, 1, a.OH, a.OW, a.KH, a.KW, a.strideH, a.strideW,
                           a.padT, a.padL, a.dilH, a.dilW, a.inputOffset, a.outputOffset,
                           outMult + k, outShift + k, a.quantFlags, a.actMin, a.actMax,
                           bias8 ? bias8 + m : 0, biasMult ? biasMult + k : 0,
                           biasShift ? biasShift + k : 0, BF_I8_STORE_LUT(lut));
    int8_t *o = out + (int64_t)p * outPlane;
    for (int32_t i = 0; i < outPlane; ++i)
      o[i] = scratch[i];
  }
  bf_i8_lut_after(out, (int64_t)a.N * a.C * outPlane, lut);
}

/* M planes of n bytes from src (back to back) to dst, plane stride
 * `stride`: one shared copy (a specialised one per layer unrolled into
 * memcpy calls, 0.4-2 KB each). */
__attribute__((noinline)) static void bf_i8_copy_planes(int8_t *dst, int64_t stride,
                                                        const int8_t *src, int64_t n, int32_t M) {
  for (int32_t m = 0; m < M; ++m)
    __builtin_memcpy(dst + m * stride, src + m * n, n);
}

/* The int8 twin of bf_pointwise_inplace_f32 (conv_inplace.c: the same
 * blocks of rows and the same proof, 1-byte elements). Each block is one
 * bf_conv2d_im2col_s8 call on the whole input with OH = rows and top pad
 * -r0, so the numbers are the whole-tensor call's; its im2col columns follow
 * the block in scratch, from a multiple of 4. */
void bf_pointwise_inplace_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                             int8_t *scratch, const bf_conv_params *conv, int32_t rows,
                             const bf_quant_params *quant, const int32_t *outMult,
                             const int32_t *outShift, const int8_t *bias8, const int32_t *biasMult,
                             const int32_t *biasShift, const int8_t *lut) {
  const bf_i8_conv_args a = BF_I8_CONV_ARGS_OF(conv, quant);
  const int64_t plane = (int64_t)a.H * a.W;
  /* The planned workspace is never null (so the call below needs no
   * fallback for a missing one); the im2col columns follow the block
   * (pointwiseInPlaceScratch). */
  if (!scratch)
    __builtin_unreachable();
  int8_t *im2col = scratch + (((int64_t)a.M * rows * a.W + 3) & ~(int64_t)3);
  for (int32_t r0 = 0; r0 < a.H; r0 += rows) {
    const int32_t n = a.H - r0 < rows ? a.H - r0 : rows;
    bf_i8_conv2d_im2col(in, w, bias, scratch, 1, a.C, a.H, a.W, a.M, n, a.W, 1, 1, 1, 1, -r0, 0, 1,
                        1, 1, a.inputOffset, a.outputOffset, outMult, outShift, a.quantFlags,
                        a.actMin, a.actMax, bias8, biasMult, biasShift, im2col,
                        BF_I8_STORE_LUT(lut));
    bf_i8_copy_planes(out + (int64_t)r0 * a.W, plane, scratch, (int64_t)n * a.W, a.M);
  }
  bf_i8_lut_after(out, (int64_t)a.M * plane, lut);
}
