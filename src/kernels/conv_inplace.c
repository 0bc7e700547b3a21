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
 * planes of H x W into M planes, `rows` whole rows at a time: the block's
 * rows of every output channel are computed by bf_conv2d_f32 itself (OH =
 * rows, top pad -r0, so it reads input rows r0.. only) into `scratch`
 * (M x rows x W floats), then copied to those rows of every output plane.
 *
 * Why it is safe with the output at the input's address: output row r of
 * plane m lands on input row r of plane m (planes are H*W floats in both),
 * and every input row of the block has been read for the last time before
 * any of them is written; planes m >= C lie past the input. MemoryPlan
 * hands this access pattern to the planner's checker (InPlacePlanning.cpp),
 * which proves it for every plan rather than trusting this comment. */
void bf_pointwise_inplace_f32(const float *in, const float *restrict w, const float *restrict bias,
                              float *out, float *restrict scratch, const bf_conv_params *conv,
                              int32_t rows, int32_t act, float actA, float actB) {
  /* Read once, through the argument itself: KernelParamsFold folds those
   * loads (conv is the node's whole 1x1 convolution: n 1, oh = h, ow = w). */
  const int32_t C = conv->c, H = conv->h, W = conv->w, M = conv->m;
  const int64_t plane = (int64_t)H * W;
  for (int32_t r0 = 0; r0 < H; r0 += rows) {
    const int32_t n = H - r0 < rows ? H - r0 : rows;
    const bf_conv_params band = {.n = 1,
                                 .c = C,
                                 .h = H,
                                 .w = W,
                                 .m = M,
                                 .oh = n,
                                 .ow = W,
                                 .kh = 1,
                                 .kw = 1,
                                 .stride_h = 1,
                                 .stride_w = 1,
                                 .pad_t = -r0,
                                 .pad_l = 0,
                                 .dil_h = 1,
                                 .dil_w = 1,
                                 .groups = 1};
    bf_conv2d_f32(in, w, bias, scratch, &band, act, actA, actB);
    for (int32_t m = 0; m < M; ++m)
      for (int32_t i = 0; i < n * W; ++i)
        out[m * plane + (int64_t)r0 * W + i] = scratch[(int64_t)m * n * W + i];
  }
}
