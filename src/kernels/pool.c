/*===- pool.c - Max / average pooling, NCHW float32 ------------------------===
 *
 * The 2-D kernels are not `restrict`: at --memory-opt >= 1 the plan may
 * start the output just before the input (a partial overlap). They walk
 * planes, output rows and columns in order, and write an element only after
 * reading its window, so every write lands on input bytes no later window
 * reads; MemoryPlan.cpp describes that order to the planner's checker
 * (InPlaceOps.h, poolRowAccess), which proves each overlap it plans.
 *===----------------------------------------------------------------------===*/
#include "kernel_util.h"

/* The geometry of a 2-D pool's loops: n * c planes of h x w -> oh x ow. */
#define BF_POOL_GEOMETRY(p)                                                                        \
  const int32_t NC = (p)->n * (p)->c, H = (p)->h, W = (p)->w, OH = (p)->oh, OW = (p)->ow,          \
                KH = (p)->kh, KW = (p)->kw, strideH = (p)->stride_h, strideW = (p)->stride_w,      \
                padT = (p)->pad_t, padL = (p)->pad_l, dilH = (p)->dil_h, dilW = (p)->dil_w;        \
  (void)dilH, (void)dilW

/* Row-first float MaxPool (hosts): for each output row, the element-wise
 * max of the KH input rows it reads goes into a stack row (contiguous, so it
 * vectorises), then each output takes the max of KW entries of that row, the
 * interior outputs without bounds checks. The window-by-window loop below
 * checked every tap and ran scalar: 6% of SqueezeNet 1.1's time in its
 * 111x111x64 pool. Every input row an output row reads is read before that
 * output row is written (no later than in the loop below), so the overlaps
 * the planner proves for that loop stay safe. The max is exact, so the
 * result is the same whatever the order. Hosts only: the row takes
 * BF_POOL_ROW_FLOATS floats of stack. */
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(BF_SMALL_TILES)
#define BF_POOL_ROW_FLOATS 4096
#else
#define BF_POOL_ROW_FLOATS 0
#endif

#if BF_POOL_ROW_FLOATS > 0
/* Max of the KW taps from iw0 that fall inside the row of W. */
BF_INLINE float bf_pool_row_max_checked(const float *row, int32_t W, int32_t iw0, int32_t KW,
                                        int32_t dilW) {
  float best = -BF_FLT_MAX;
  for (int32_t kw = 0; kw < KW; ++kw) {
    const int32_t iw = iw0 + kw * dilW;
    if (iw >= 0 && iw < W)
      best = bf_maxf(best, row[iw]);
  }
  return best;
}

BF_INLINE void bf_maxpool2d_rows_f32(const float *in, float *out, int32_t NC, int32_t H, int32_t W,
                                     int32_t OH, int32_t OW, int32_t KH, int32_t KW,
                                     int32_t strideH, int32_t strideW, int32_t padT, int32_t padL,
                                     int32_t dilH, int32_t dilW) {
  float row[BF_POOL_ROW_FLOATS];
  /* Outputs [owBegin, owEnd) have every tap inside the row. */
  int32_t owBegin = 0, owEnd = OW;
  while (owBegin < OW && owBegin * strideW - padL < 0)
    ++owBegin;
  while (owEnd > owBegin && (owEnd - 1) * strideW - padL + (KW - 1) * dilW >= W)
    --owEnd;
  for (int32_t p = 0; p < NC; ++p) {
    const float *x = in + (int64_t)p * H * W;
    float *o = out + (int64_t)p * OH * OW;
    for (int32_t oh = 0; oh < OH; ++oh) {
      for (int32_t iw = 0; iw < W; ++iw)
        row[iw] = -BF_FLT_MAX;
      for (int32_t kh = 0; kh < KH; ++kh) {
        const int32_t ih = oh * strideH - padT + kh * dilH;
        if (ih < 0 || ih >= H)
          continue;
        const float *xr = x + (int64_t)ih * W;
        for (int32_t iw = 0; iw < W; ++iw)
          row[iw] = bf_maxf(row[iw], xr[iw]);
      }
      /* Border outputs checked, the interior in a loop of its own (it
       * vectorises for stride 1). */
      float *orow = o + (int64_t)oh * OW;
      int32_t ow = 0;
      for (; ow < owBegin; ++ow)
        orow[ow] = bf_pool_row_max_checked(row, W, ow * strideW - padL, KW, dilW);
      for (; ow < owEnd; ++ow) {
        const float *r = row + ow * strideW - padL;
        float best = -BF_FLT_MAX;
        for (int32_t kw = 0; kw < KW; ++kw)
          best = bf_maxf(best, r[kw * dilW]);
        orow[ow] = best;
      }
      for (; ow < OW; ++ow)
        orow[ow] = bf_pool_row_max_checked(row, W, ow * strideW - padL, KW, dilW);
    }
  }
}
#endif

void bf_maxpool2d_f32(const float *in, float *out, const bf_pool_params *params) {
  BF_POOL_GEOMETRY(params);
#if BF_POOL_ROW_FLOATS > 0
  if (W <= BF_POOL_ROW_FLOATS) {
    bf_maxpool2d_rows_f32(in, out, NC, H, W, OH, OW, KH, KW, strideH, strideW, padT, padL, dilH,
                          dilW);
    return;
  }
#endif
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
#define BF_DEFINE_MAXPOOL_INT(name, T, lowest)                                                     \
  void bf_maxpool2d_##name(const T *in, T *out, const bf_pool_params *params) {                    \
    BF_POOL_GEOMETRY(params);                                                                      \
    for (int32_t p = 0; p < NC; ++p) {                                                             \
      const T *x = in + (int64_t)p * H * W;                                                        \
      T *o = out + (int64_t)p * OH * OW;                                                           \
      for (int32_t oh = 0; oh < OH; ++oh) {                                                        \
        for (int32_t ow = 0; ow < OW; ++ow) {                                                      \
          T best = (lowest);                                                                       \
          for (int32_t kh = 0; kh < KH; ++kh) {                                                    \
            const int32_t ih = oh * strideH - padT + kh * dilH;                                    \
            if (ih < 0 || ih >= H)                                                                 \
              continue;                                                                            \
            for (int32_t kw = 0; kw < KW; ++kw) {                                                  \
              const int32_t iw = ow * strideW - padL + kw * dilW;                                  \
              if (iw >= 0 && iw < W && x[ih * W + iw] > best)                                      \
                best = x[ih * W + iw];                                                             \
            }                                                                                      \
          }                                                                                        \
          o[oh * OW + ow] = best;                                                                  \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }
BF_DEFINE_MAXPOOL_INT(u8, uint8_t, 0)
BF_DEFINE_MAXPOOL_INT(i8, int8_t, -128)

void bf_avgpool2d_f32(const float *in, float *out, const bf_pool_params *params) {
  BF_POOL_GEOMETRY(params); /* dilations 1 (the lowering refuses others) */
  const int32_t padB = params->pad_b, padR = params->pad_r,
                countIncludePad = params->count_include_pad;
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

void bf_global_avgpool_f32(const float *restrict in, float *restrict out, int32_t NC, int32_t HW) {
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

void bf_global_maxpool_f32(const float *restrict in, float *restrict out, int32_t NC, int32_t HW) {
  for (int32_t p = 0; p < NC; ++p) {
    const float *x = in + (int64_t)p * HW;
    float best = -BF_FLT_MAX;
    for (int32_t i = 0; i < HW; ++i)
      best = bf_maxf(best, x[i]);
    out[p] = best;
  }
}

/* 3-D (NCDHW) max / average pooling, direct loops as in the interpreter:
 * geometry is a bf_window3d_params (abi.h). Average divides by the taps inside
 * the input or, with count_include_pad, inside [-pad, in + pad_end) per axis
 * (so a ceil_mode window hanging past the end padding does not count those
 * taps). */
void bf_pool3d_f32(const float *restrict in, float *restrict out, const bf_window3d_params *pool) {
  /* Read once, through the argument itself: KernelParamsFold folds these. */
  const int32_t NC = pool->n * pool->c, D = pool->d, H = pool->h, W = pool->w;
  const int32_t OD = pool->od, OH = pool->oh, OW = pool->ow;
  const int32_t kernel[3] = {pool->kd, pool->kh, pool->kw};
  const int32_t strides[3] = {pool->stride_d, pool->stride_h, pool->stride_w};
  const int32_t padsBegin[3] = {pool->pad_d, pool->pad_h, pool->pad_w};
  const int32_t padsEnd[3] = {pool->pad_d_end, pool->pad_h_end, pool->pad_w_end};
  const int32_t dilations[3] = {pool->dil_d, pool->dil_h, pool->dil_w};
  const int32_t isMax = pool->is_max, countIncludePad = pool->count_include_pad;
  const int64_t inVol = (int64_t)D * H * W, outVol = (int64_t)OD * OH * OW;
  for (int32_t p = 0; p < NC; ++p) {
    const float *x = in + (int64_t)p * inVol;
    float *o = out + (int64_t)p * outVol;
    for (int32_t od = 0; od < OD; ++od)
      for (int32_t oh = 0; oh < OH; ++oh)
        for (int32_t ow = 0; ow < OW; ++ow) {
          float best = -BF_FLT_MAX, sum = 0.0f;
          int32_t count = 0;
          for (int32_t kd = 0; kd < kernel[0]; ++kd) {
            const int32_t id = od * strides[0] - padsBegin[0] + kd * dilations[0];
            const int dIn = id >= 0 && id < D;
            const int dPad = id >= -padsBegin[0] && id < D + padsEnd[0];
            for (int32_t kh = 0; kh < kernel[1]; ++kh) {
              const int32_t ih = oh * strides[1] - padsBegin[1] + kh * dilations[1];
              const int hIn = ih >= 0 && ih < H;
              const int hPad = ih >= -padsBegin[1] && ih < H + padsEnd[1];
              for (int32_t kw = 0; kw < kernel[2]; ++kw) {
                const int32_t iw = ow * strides[2] - padsBegin[2] + kw * dilations[2];
                const int inside = dIn && hIn && iw >= 0 && iw < W;
                const int insidePadded = dPad && hPad && iw >= -padsBegin[2] && iw < W + padsEnd[2];
                if (inside) {
                  const float v = x[((int64_t)id * H + ih) * W + iw];
                  best = bf_maxf(best, v);
                  sum += v;
                }
                if (countIncludePad ? insidePadded : inside)
                  ++count;
              }
            }
          }
          o[((int64_t)od * OH + oh) * OW + ow] = isMax ? best : (count ? sum / (float)count : 0.0f);
        }
  }
}
