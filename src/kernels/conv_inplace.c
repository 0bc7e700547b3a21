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

/* `in` and `out` may be the same address (not restrict). */
void bf_depthwise_inplace_f32(const float *in, const float *restrict w, const float *restrict bias,
                              float *out, float *restrict scratch, const bf_conv_params *conv,
                              int32_t act, float actA, float actB) {
  const int32_t N = conv->n, C = conv->c;
  const int32_t inPlane = conv->h * conv->w, outPlane = conv->oh * conv->ow,
                taps = conv->kh * conv->kw;
  bf_conv_params plane = *conv; /* one channel of one image */
  plane.n = 1, plane.c = 1, plane.m = 1, plane.groups = 1;
  for (int32_t p = 0; p < N * C; ++p) {
    const int32_t m = p % C;
    bf_conv2d_f32(in + (int64_t)p * inPlane, w + (int64_t)m * taps, bias ? bias + m : 0, scratch,
                  &plane, act, actA, actB);
    float *o = out + (int64_t)p * outPlane;
    for (int32_t i = 0; i < outPlane; ++i)
      o[i] = scratch[i];
  }
}

/* 1x1 convolution over its own input (--memory-opt >= 1), one image of C
 * planes of P = H x W pixels into M planes, `block` pixels at a time (a
 * whole plane when block >= P): the block of every output channel is
 * computed by bf_pointwise_block_f32 (conv.c) into `scratch` (M x block
 * floats), then copied to those pixels of every output plane. The first
 * block holds the P % block pixels left over (or a whole block): it is
 * computed over a whole block from pixel 0 and only its first pixels are
 * kept, so every block is a full vector tile and no read passes pixel P.
 *
 * Why it is safe with the output at the input's address: output pixel p of
 * plane m lands on input pixel p of plane m (planes are P floats in both),
 * every input pixel of the block has been read for the last time before any
 * of them is written, and a block reads no pixel before its own; planes
 * m >= C lie past the input. MemoryPlan hands this access pattern to the
 * planner's checker (InPlacePlanning.cpp), which proves it for every plan
 * rather than trusting this comment. */
void bf_pointwise_inplace_f32(const float *in, const float *restrict w, const float *restrict bias,
                              float *out, float *restrict scratch, const bf_conv_params *conv,
                              int32_t block, int32_t act, float actA, float actB) {
  /* Read once, through the argument itself: KernelParamsFold folds those
   * loads (conv is the node's whole 1x1 convolution: n 1, oh = h, ow = w). */
  const int32_t C = conv->c, M = conv->m, P = conv->h * conv->w;
  if (block >= P) {
    bf_conv2d_f32(in, w, bias, scratch, conv, act, actA, actB);
    for (int64_t i = 0; i < (int64_t)M * P; ++i)
      out[i] = scratch[i];
    return;
  }
  const int32_t lead = P % block ? P % block : block;
  for (int32_t p0 = 0, n = lead; p0 < P; p0 += n, n = block) {
    bf_pointwise_block_f32(in + p0, w, bias, scratch, C, M, block, P, act, actA, actB);
    for (int32_t m = 0; m < M; ++m)
      for (int32_t i = 0; i < n; ++i)
        out[(int64_t)m * P + p0 + i] = scratch[(int64_t)m * block + i];
  }
}
