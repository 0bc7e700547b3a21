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
                             const int32_t *biasShift) {
  const int32_t N = conv->n, C = conv->c, H = conv->h, W = conv->w, OH = conv->oh, OW = conv->ow,
                KH = conv->kh, KW = conv->kw, strideH = conv->stride_h, strideW = conv->stride_w,
                padT = conv->pad_t, padL = conv->pad_l, dilH = conv->dil_h, dilW = conv->dil_w;
  const int32_t inputOffset = quant->input_offset, outputOffset = quant->output_offset,
                quantFlags = quant->quant_flags, actMin = quant->act_min, actMax = quant->act_max;
  const int32_t inPlane = H * W, outPlane = OH * OW, taps = KH * KW;
  for (int32_t p = 0; p < N * C; ++p) {
    const int32_t m = p % C, k = (quantFlags & BF_I8_PER_CHANNEL) ? m : 0;
    bf_i8_depthwise_conv2d(in + (int64_t)p * inPlane, w + (int64_t)m * taps, bias ? bias + m : 0,
                           scratch, 1, 1, H, W, 1, OH, OW, KH, KW, strideH, strideW, padT, padL,
                           dilH, dilW, inputOffset, outputOffset, outMult + k, outShift + k,
                           quantFlags, actMin, actMax, bias8 ? bias8 + m : 0,
                           biasMult ? biasMult + k : 0, biasShift ? biasShift + k : 0);
    int8_t *o = out + (int64_t)p * outPlane;
    for (int32_t i = 0; i < outPlane; ++i)
      o[i] = scratch[i];
  }
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
                             const int32_t *biasShift) {
  const int32_t C = conv->c, H = conv->h, W = conv->w, M = conv->m;
  const int32_t inputOffset = quant->input_offset, outputOffset = quant->output_offset,
                quantFlags = quant->quant_flags, actMin = quant->act_min, actMax = quant->act_max;
  const int64_t plane = (int64_t)H * W;
  /* The planned workspace is never null (so the call below needs no
   * fallback for a missing one); the im2col columns follow the block
   * (pointwiseInPlaceScratch). */
  if (!scratch)
    __builtin_unreachable();
  int8_t *im2col = scratch + (((int64_t)M * rows * W + 3) & ~(int64_t)3);
  for (int32_t r0 = 0; r0 < H; r0 += rows) {
    const int32_t n = H - r0 < rows ? H - r0 : rows;
    bf_i8_conv2d_im2col(in, w, bias, scratch, 1, C, H, W, M, n, W, 1, 1, 1, 1, -r0, 0, 1, 1, 1,
                        inputOffset, outputOffset, outMult, outShift, quantFlags, actMin, actMax,
                        bias8, biasMult, biasShift, im2col);
    bf_i8_copy_planes(out + (int64_t)r0 * W, plane, scratch, (int64_t)n * W, M);
  }
}
