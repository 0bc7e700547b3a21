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
#include "bundlefit_kernels_int8.h"

/* `in` and `out` may be the same address (not restrict). */
void bf_depthwise_inplace_s8(const int8_t *in, const int8_t *w, const int32_t *bias,
                             int8_t *out, int8_t *scratch, int32_t N, int32_t C, int32_t H,
                             int32_t W, int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                             int32_t strideH, int32_t strideW, int32_t padT, int32_t padL,
                             int32_t dilH, int32_t dilW, int32_t inputOffset,
                             int32_t outputOffset, const int32_t *outMult,
                             const int32_t *outShift, int32_t perChannel, int32_t actMin,
                             int32_t actMax, const int8_t *bias8, const int32_t *biasMult,
                             const int32_t *biasShift) {
  const int32_t inPlane = H * W, outPlane = OH * OW, taps = KH * KW;
  for (int32_t p = 0; p < N * C; ++p) {
    const int32_t m = p % C, k = perChannel ? m : 0;
    bf_depthwise_conv2d_s8(in + (int64_t)p * inPlane, w + (int64_t)m * taps,
                           bias ? bias + m : 0, scratch, 1, 1, H, W, 1, OH, OW, KH, KW,
                           strideH, strideW, padT, padL, dilH, dilW, inputOffset, outputOffset,
                           outMult + k, outShift + k, perChannel, actMin, actMax,
                           bias8 ? bias8 + m : 0, biasMult ? biasMult + k : 0,
                           biasShift ? biasShift + k : 0);
    int8_t *o = out + (int64_t)p * outPlane;
    for (int32_t i = 0; i < outPlane; ++i)
      o[i] = scratch[i];
  }
}

/* The int8 twin of bf_pointwise_inplace_f32 (conv_inplace.c: the same
 * blocks and the same proof, 1-byte elements). Each block is one
 * bf_conv2d_s8 call on a C x 1 x n image, so the numbers are the
 * whole-tensor call's: every output depends on its own pixel only. */
void bf_pointwise_inplace_s8(const int8_t *in, const int8_t *w, const int32_t *bias,
                             int8_t *out, int8_t *scratch, int32_t C, int32_t HW, int32_t M,
                             int32_t block, int32_t inputOffset, int32_t outputOffset,
                             const int32_t *outMult, const int32_t *outShift,
                             int32_t perChannel, int32_t actMin, int32_t actMax,
                             const int8_t *bias8, const int32_t *biasMult,
                             const int32_t *biasShift) {
  int8_t *const gathered = scratch, *const result = scratch + (int64_t)C * block;
  for (int32_t p0 = 0; p0 < HW; p0 += block) {
    const int32_t n = HW - p0 < block ? HW - p0 : block;
    for (int32_t c = 0; c < C; ++c)
      for (int32_t j = 0; j < n; ++j)
        gathered[(int64_t)c * n + j] = in[(int64_t)c * HW + p0 + j];
    bf_conv2d_s8(gathered, w, bias, result, 1, C, 1, n, M, 1, n, 1, 1, 1, 1, 0, 0, 1, 1, 1,
                 inputOffset, outputOffset, outMult, outShift, perChannel, actMin, actMax,
                 bias8, biasMult, biasShift);
    for (int32_t m = 0; m < M; ++m)
      for (int32_t j = 0; j < n; ++j)
        out[(int64_t)m * HW + p0 + j] = result[(int64_t)m * n + j];
  }
}
