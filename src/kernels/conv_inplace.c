/*===- conv_inplace.c - Depthwise convolution over its own input, float32 ====
 *
 * Depthwise (group == C == M): output plane p depends only on input plane p.
 * The planner may give the output the input's offset (--memory-opt >= 1);
 * then plane p is computed into a one-plane `scratch` (OH*OW floats) and
 * copied to output plane p, for p = 0, 1, ... (p runs over N*C planes).
 *
 * Why it is safe whenever OH*OW <= H*W (the planner checks this), including
 * stride 2 where output planes are smaller than input planes: measured in
 * floats from the shared base, output plane p occupies
 *     [p*OHW, (p+1)*OHW)   and input plane q occupies [q*HW, (q+1)*HW).
 * When plane p is written, input planes 0..p have been read for the last time
 * (plane p into scratch just now), and the write ends at
 *     (p+1)*OHW <= (p+1)*HW,
 * the start of input plane p+1: no plane that is still to be read is touched.
 * Scratch is a separate buffer, so computing plane p never reads a byte it
 * has written. The arithmetic is bf_conv2d_f32's for one channel, the very
 * path (bf_conv_channel) it takes for every depthwise channel.
 *===----------------------------------------------------------------------===*/
#include "kernel_util.h"

void bf_conv2d_f32(const float *in, const float *w, const float *bias, float *out, int32_t N,
                   int32_t C, int32_t H, int32_t W, int32_t M, int32_t OH, int32_t OW,
                   int32_t KH, int32_t KW, int32_t strideH, int32_t strideW, int32_t padT,
                   int32_t padL, int32_t dilH, int32_t dilW, int32_t groups, int32_t act,
                   float actA, float actB);

/* `in` and `out` may be the same address (not restrict). */
void bf_depthwise_inplace_f32(const float *in, const float *restrict w,
                              const float *restrict bias, float *out,
                              float *restrict scratch, int32_t N, int32_t C, int32_t H,
                              int32_t W, int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                              int32_t strideH, int32_t strideW, int32_t padT, int32_t padL,
                              int32_t dilH, int32_t dilW, int32_t act, float actA,
                              float actB) {
  const int32_t inPlane = H * W, outPlane = OH * OW, taps = KH * KW;
  for (int32_t p = 0; p < N * C; ++p) {
    const int32_t m = p % C;
    bf_conv2d_f32(in + (int64_t)p * inPlane, w + (int64_t)m * taps, bias ? bias + m : 0,
                  scratch, 1, 1, H, W, 1, OH, OW, KH, KW, strideH, strideW, padT, padL, dilH,
                  dilW, 1, act, actA, actB);
    float *o = out + (int64_t)p * outPlane;
    for (int32_t i = 0; i < outPlane; ++i)
      o[i] = scratch[i];
  }
}

/* 1x1 convolution over its own input (--memory-opt >= 1), one image of
 * C planes of HW pixels into M planes. Pixels are taken `block` at a time:
 * the block of every input plane is copied to scratch (C*block floats), the
 * convolution of that little C x 1 x block image goes to the rest of scratch
 * (M*block floats), and is copied to the block of every output plane.
 *
 * Why it is safe with the output at the input's address: output pixel p of
 * plane m lands on input pixel p of plane m (planes are HW floats in both),
 * and input pixels up to the end of the current block have been read for the
 * last time before any of them is written; planes m >= C lie past the input.
 * MemoryPlan.cpp hands this access pattern to the planner's checker, which
 * proves it for every plan rather than trusting this comment. */
void bf_pointwise_inplace_f32(const float *in, const float *restrict w,
                              const float *restrict bias, float *out,
                              float *restrict scratch, int32_t C, int32_t HW, int32_t M,
                              int32_t block, int32_t act, float actA, float actB) {
  float *const gathered = scratch, *const result = scratch + (int64_t)C * block;
  for (int32_t p0 = 0; p0 < HW; p0 += block) {
    const int32_t n = HW - p0 < block ? HW - p0 : block;
    for (int32_t c = 0; c < C; ++c)
      for (int32_t j = 0; j < n; ++j)
        gathered[(int64_t)c * n + j] = in[(int64_t)c * HW + p0 + j];
    bf_conv2d_f32(gathered, w, bias, result, 1, C, 1, n, M, 1, n, 1, 1, 1, 1, 0, 0, 1, 1, 1,
                  act, actA, actB);
    for (int32_t m = 0; m < M; ++m)
      for (int32_t j = 0; j < n; ++j)
        out[(int64_t)m * HW + p0 + j] = result[(int64_t)m * n + j];
  }
}
