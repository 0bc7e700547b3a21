/*===- conv.c - 2-D convolution and transposed convolution, NCHW float32 ---===*/
#include "kernel_util.h"

/* First output index o in [0, outLen) whose input coordinate
 * o*stride - pad + k*dil is >= 0, and one past the last one that is < inLen. */
BF_INLINE void bf_valid_range(int32_t outLen, int32_t inLen, int32_t stride, int32_t pad,
                              int32_t offset, int32_t *first, int32_t *end) {
  int32_t lo = pad - offset; /* o*stride >= lo */
  int32_t start = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  int32_t hi = inLen - 1 + pad - offset; /* o*stride <= hi */
  int32_t stop = hi < 0 ? 0 : hi / stride + 1;
  if (stop > outLen)
    stop = outLen;
  if (start > stop)
    start = stop;
  *first = start;
  *end = stop;
}

/* Direct convolution. For each output channel (four at a time when possible,
 * so each input row load feeds four accumulating rows), every weight tap
 * adds weight * shifted input row to the output plane. The innermost loop
 * runs over contiguous output columns and vectorizes; bounds are computed
 * per tap, so there are no per-element padding checks. */
void bf_conv2d_f32(const float *restrict in, const float *restrict w,
                   const float *restrict bias, float *restrict out, int32_t N, int32_t C,
                   int32_t H, int32_t W, int32_t M, int32_t OH, int32_t OW, int32_t KH,
                   int32_t KW, int32_t strideH, int32_t strideW, int32_t padT, int32_t padL,
                   int32_t dilH, int32_t dilW, int32_t groups, int32_t act, float actA,
                   float actB) {
  /* A 1x1, stride-1, unpadded convolution is a matrix product over the whole
   * plane: treat each plane as one long row. */
  if (KH == 1 && KW == 1 && strideH == 1 && strideW == 1 && padT == 0 && padL == 0 &&
      OH == H && OW == W) {
    W = H * W;
    OW = W;
    H = 1;
    OH = 1;
  }
  const int32_t Cg = C / groups, Mg = M / groups;
  const int32_t inPlane = H * W, outPlane = OH * OW, taps = KH * KW;
  for (int32_t n = 0; n < N; ++n) {
    for (int32_t g = 0; g < groups; ++g) {
      const float *x0 = in + ((int64_t)n * C + (int64_t)g * Cg) * inPlane;
      int32_t mb = 0;
      /* Four output channels at a time. */
      for (; mb + 4 <= Mg; mb += 4) {
        const int32_t m = g * Mg + mb;
        float *o0 = out + ((int64_t)n * M + m) * outPlane;
        float *o1 = o0 + outPlane, *o2 = o1 + outPlane, *o3 = o2 + outPlane;
        for (int32_t i = 0; i < outPlane; ++i) {
          o0[i] = bias ? bias[m] : 0.0f;
          o1[i] = bias ? bias[m + 1] : 0.0f;
          o2[i] = bias ? bias[m + 2] : 0.0f;
          o3[i] = bias ? bias[m + 3] : 0.0f;
        }
        for (int32_t c = 0; c < Cg; ++c) {
          const float *x = x0 + (int64_t)c * inPlane;
          const float *w0 = w + ((int64_t)m * Cg + c) * taps;
          const float *w1 = w0 + (int64_t)Cg * taps, *w2 = w1 + (int64_t)Cg * taps,
                      *w3 = w2 + (int64_t)Cg * taps;
          for (int32_t kh = 0; kh < KH; ++kh) {
            int32_t ohBegin, ohEnd;
            bf_valid_range(OH, H, strideH, padT, kh * dilH, &ohBegin, &ohEnd);
            for (int32_t kw = 0; kw < KW; ++kw) {
              int32_t owBegin, owEnd;
              bf_valid_range(OW, W, strideW, padL, kw * dilW, &owBegin, &owEnd);
              const int32_t t = kh * KW + kw;
              const float k0 = w0[t], k1 = w1[t], k2 = w2[t], k3 = w3[t];
              for (int32_t oh = ohBegin; oh < ohEnd; ++oh) {
                const float *xr =
                    x + (int64_t)(oh * strideH - padT + kh * dilH) * W - padL + kw * dilW;
                const int32_t row = oh * OW;
                for (int32_t ow = owBegin; ow < owEnd; ++ow) {
                  const float v = xr[ow * strideW];
                  o0[row + ow] += k0 * v;
                  o1[row + ow] += k1 * v;
                  o2[row + ow] += k2 * v;
                  o3[row + ow] += k3 * v;
                }
              }
            }
          }
        }
        bf_activate_array(o0, 4 * outPlane, act, actA, actB);
      }
      /* Remaining output channels one at a time (depthwise lands here). */
      for (; mb < Mg; ++mb) {
        const int32_t m = g * Mg + mb;
        float *o = out + ((int64_t)n * M + m) * outPlane;
        const float b0 = bias ? bias[m] : 0.0f;
        for (int32_t i = 0; i < outPlane; ++i)
          o[i] = b0;
        for (int32_t c = 0; c < Cg; ++c) {
          const float *x = x0 + (int64_t)c * inPlane;
          const float *wk = w + ((int64_t)m * Cg + c) * taps;
          for (int32_t kh = 0; kh < KH; ++kh) {
            int32_t ohBegin, ohEnd;
            bf_valid_range(OH, H, strideH, padT, kh * dilH, &ohBegin, &ohEnd);
            for (int32_t kw = 0; kw < KW; ++kw) {
              int32_t owBegin, owEnd;
              bf_valid_range(OW, W, strideW, padL, kw * dilW, &owBegin, &owEnd);
              const float k = wk[kh * KW + kw];
              for (int32_t oh = ohBegin; oh < ohEnd; ++oh) {
                const float *xr =
                    x + (int64_t)(oh * strideH - padT + kh * dilH) * W - padL + kw * dilW;
                float *orow = o + oh * OW;
                for (int32_t ow = owBegin; ow < owEnd; ++ow)
                  orow[ow] += k * xr[ow * strideW];
              }
            }
          }
        }
        bf_activate_array(o, outPlane, act, actA, actB);
      }
    }
  }
}

/* Transposed convolution as a scatter: every input pixel adds weight *
 * value to the output taps it reaches. */
void bf_conv_transpose2d_f32(const float *restrict in, const float *restrict w,
                             const float *restrict bias, float *restrict out, int32_t N,
                             int32_t C, int32_t H, int32_t W, int32_t M, int32_t OH,
                             int32_t OW, int32_t KH, int32_t KW, int32_t strideH,
                             int32_t strideW, int32_t padT, int32_t padL, int32_t dilH,
                             int32_t dilW, int32_t groups, int32_t act, float actA,
                             float actB) {
  const int32_t Cg = C / groups, Mg = M / groups;
  const int32_t inPlane = H * W, outPlane = OH * OW, taps = KH * KW;
  for (int32_t n = 0; n < N; ++n) {
    for (int32_t m = 0; m < M; ++m) {
      float *o = out + ((int64_t)n * M + m) * outPlane;
      const float b0 = bias ? bias[m] : 0.0f;
      for (int32_t i = 0; i < outPlane; ++i)
        o[i] = b0;
    }
    for (int32_t g = 0; g < groups; ++g) {
      for (int32_t cg = 0; cg < Cg; ++cg) {
        const int32_t c = g * Cg + cg;
        const float *x = in + ((int64_t)n * C + c) * inPlane;
        for (int32_t mg = 0; mg < Mg; ++mg) {
          const int32_t m = g * Mg + mg;
          float *o = out + ((int64_t)n * M + m) * outPlane;
          const float *wk = w + ((int64_t)c * Mg + mg) * taps;
          for (int32_t ih = 0; ih < H; ++ih) {
            for (int32_t kh = 0; kh < KH; ++kh) {
              const int32_t oh = ih * strideH - padT + kh * dilH;
              if (oh < 0 || oh >= OH)
                continue;
              for (int32_t kw = 0; kw < KW; ++kw) {
                const float k = wk[kh * KW + kw];
                for (int32_t iw = 0; iw < W; ++iw) {
                  const int32_t ow = iw * strideW - padL + kw * dilW;
                  if (ow >= 0 && ow < OW)
                    o[oh * OW + ow] += k * x[ih * W + iw];
                }
              }
            }
          }
        }
      }
    }
    bf_activate_array(out + (int64_t)n * M * outPlane, M * outPlane, act, actA, actB);
  }
}
