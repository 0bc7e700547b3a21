/*===- pool.c - Max / average pooling, NCHW float32 ------------------------===*/
#include "kernel_util.h"

void bf_maxpool2d_f32(const float *restrict in, float *restrict out, int32_t NC, int32_t H,
                      int32_t W, int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                      int32_t strideH, int32_t strideW, int32_t padT, int32_t padL,
                      int32_t dilH, int32_t dilW) {
  for (int32_t p = 0; p < NC; ++p) {
    const float *x = in + (int64_t)p * H * W;
    float *o = out + (int64_t)p * OH * OW;
    for (int32_t oh = 0; oh < OH; ++oh) {
      for (int32_t ow = 0; ow < OW; ++ow) {
        float best = -BF_FLT_MAX;
        for (int32_t kh = 0; kh < KH; ++kh) {
          const int32_t ih = oh * strideH - padT + kh * dilH;
          if (ih < 0 || ih >= H)
            continue;
          for (int32_t kw = 0; kw < KW; ++kw) {
            const int32_t iw = ow * strideW - padL + kw * dilW;
            if (iw >= 0 && iw < W)
              best = bf_maxf(best, x[ih * W + iw]);
          }
        }
        o[oh * OW + ow] = best;
      }
    }
  }
}

/* Integer MaxPool: the same loop, starting from the type's lowest value so
 * a window lying entirely in the padding gives it (the interpreter saturates
 * -inf to it). Max of integers is exact, so the result equals the input's. */
#define BF_DEFINE_MAXPOOL_INT(name, T, lowest)                                         \
  void bf_maxpool2d_##name(const T *restrict in, T *restrict out, int32_t NC, int32_t H, \
                           int32_t W, int32_t OH, int32_t OW, int32_t KH, int32_t KW,    \
                           int32_t strideH, int32_t strideW, int32_t padT, int32_t padL, \
                           int32_t dilH, int32_t dilW) {                                 \
    for (int32_t p = 0; p < NC; ++p) {                                                   \
      const T *x = in + (int64_t)p * H * W;                                              \
      T *o = out + (int64_t)p * OH * OW;                                                 \
      for (int32_t oh = 0; oh < OH; ++oh) {                                              \
        for (int32_t ow = 0; ow < OW; ++ow) {                                            \
          T best = (lowest);                                                             \
          for (int32_t kh = 0; kh < KH; ++kh) {                                          \
            const int32_t ih = oh * strideH - padT + kh * dilH;                          \
            if (ih < 0 || ih >= H)                                                       \
              continue;                                                                  \
            for (int32_t kw = 0; kw < KW; ++kw) {                                        \
              const int32_t iw = ow * strideW - padL + kw * dilW;                        \
              if (iw >= 0 && iw < W && x[ih * W + iw] > best)                            \
                best = x[ih * W + iw];                                                   \
            }                                                                            \
          }                                                                              \
          o[oh * OW + ow] = best;                                                        \
        }                                                                                \
      }                                                                                  \
    }                                                                                    \
  }
BF_DEFINE_MAXPOOL_INT(u8, uint8_t, 0)
BF_DEFINE_MAXPOOL_INT(i8, int8_t, -128)

void bf_avgpool2d_f32(const float *restrict in, float *restrict out, int32_t NC, int32_t H,
                      int32_t W, int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                      int32_t strideH, int32_t strideW, int32_t padT, int32_t padL,
                      int32_t padB, int32_t padR, int32_t countIncludePad) {
  for (int32_t p = 0; p < NC; ++p) {
    const float *x = in + (int64_t)p * H * W;
    float *o = out + (int64_t)p * OH * OW;
    for (int32_t oh = 0; oh < OH; ++oh) {
      const int32_t h0 = oh * strideH - padT;
      int32_t hb = h0 < 0 ? 0 : h0, he = h0 + KH > H ? H : h0 + KH;
      int32_t pb = h0 < -padT ? -padT : h0, pe = h0 + KH > H + padB ? H + padB : h0 + KH;
      for (int32_t ow = 0; ow < OW; ++ow) {
        const int32_t w0 = ow * strideW - padL;
        int32_t wb = w0 < 0 ? 0 : w0, we = w0 + KW > W ? W : w0 + KW;
        float sum = 0.0f;
        for (int32_t ih = hb; ih < he; ++ih)
          for (int32_t iw = wb; iw < we; ++iw)
            sum += x[ih * W + iw];
        int32_t count;
        if (countIncludePad) {
          int32_t qb = w0 < -padL ? -padL : w0, qe = w0 + KW > W + padR ? W + padR : w0 + KW;
          count = (pe - pb) * (qe - qb);
        } else {
          count = (he - hb) * (we - wb);
        }
        o[oh * OW + ow] = count > 0 ? sum / (float)count : 0.0f;
      }
    }
  }
}

void bf_global_avgpool_f32(const float *restrict in, float *restrict out, int32_t NC,
                           int32_t HW) {
  const float scale = 1.0f / (float)HW;
  for (int32_t p = 0; p < NC; ++p) {
    const float *x = in + (int64_t)p * HW;
    float sum = 0.0f;
    BF_VECTORIZE
    for (int32_t i = 0; i < HW; ++i)
      sum += x[i];
    out[p] = sum * scale;
  }
}

void bf_global_maxpool_f32(const float *restrict in, float *restrict out, int32_t NC,
                           int32_t HW) {
  for (int32_t p = 0; p < NC; ++p) {
    const float *x = in + (int64_t)p * HW;
    float best = -BF_FLT_MAX;
    for (int32_t i = 0; i < HW; ++i)
      best = bf_maxf(best, x[i]);
    out[p] = best;
  }
}
