/*===- conv_pool.c - Conv (+activation) fused with Max/AveragePool, float32 ===
 *
 * The conv output is never stored whole. For each conv row r that some pool
 * window reads (in increasing r), and each chunk of output channels, the row
 * is computed into `scratch` ([chunk][CW]) by bf_conv2d_f32 itself (one
 * output row: OH = 1 and the top pad shifted by r*strideH, so the numbers are
 * those of the unfused conv), then folded into every pool output row whose
 * window contains r: max, or a running sum divided at the end.
 *
 * A pool output element receives its rows in increasing r and, within a row,
 * its columns in increasing order: the same order bf_maxpool2d_f32 /
 * bf_avgpool2d_f32 visit them, so the result equals conv-then-pool.
 * Scratch: chunk * CW floats (the ring of pool-window rows degenerates to one
 * row because partial results accumulate in the output itself).
 *===----------------------------------------------------------------------===*/
#include "conv_pool_rows.h"
#include "kernel_util.h"

/* Folds one computed conv row (mc channels starting at m0) into pool row ph. */
BF_INLINE void bf_pool_fold_row(const float *restrict row, float *restrict out, int32_t mc,
                                int32_t m0, int32_t CW, int32_t PH, int32_t PW, int32_t ph,
                                int32_t PKW, int32_t psW, int32_t ppadL, int32_t pdilW,
                                int32_t isMax) {
  for (int32_t mi = 0; mi < mc; ++mi) {
    const float *x = row + (int64_t)mi * CW;
    float *o = out + ((int64_t)(m0 + mi) * PH + ph) * PW;
    for (int32_t pw = 0; pw < PW; ++pw) {
      float v = o[pw];
      for (int32_t kw = 0; kw < PKW; ++kw) {
        const int32_t iw = pw * psW - ppadL + kw * pdilW;
        if (iw < 0 || iw >= CW)
          continue;
        v = isMax ? bf_maxf(v, x[iw]) : v + x[iw];
      }
      o[pw] = v;
    }
  }
}

void bf_conv_pool2d_f32(const float *restrict in, const float *restrict w,
                        const float *restrict bias, float *restrict out, float *restrict scratch,
                        const bf_conv_params *conv, const bf_pool_params *pool, int32_t act,
                        float actA, float actB) {
  const int32_t N = conv->n, C = conv->c, H = conv->h, W = conv->w, M = conv->m, CH = conv->oh,
                CW = conv->ow, KH = conv->kh, KW = conv->kw, strideH = conv->stride_h,
                padT = conv->pad_t, groups = conv->groups;
  const int32_t isMax = pool->is_max, PH = pool->oh, PW = pool->ow, PKH = pool->kh, PKW = pool->kw,
                psH = pool->stride_h, psW = pool->stride_w, ppadT = pool->pad_t,
                ppadL = pool->pad_l, ppadB = pool->pad_b, ppadR = pool->pad_r, pdilH = pool->dil_h,
                pdilW = pool->dil_w, countIncludePad = pool->count_include_pad;
  int32_t chunk = pool->chunk;
  const int32_t Cg = C / groups, taps = KH * KW;
  if (groups != 1)
    chunk = M; /* a chunk never straddles groups */
  for (int32_t n = 0; n < N; ++n) {
    const float *x = in + (int64_t)n * C * H * W;
    float *o = out + (int64_t)n * M * PH * PW;
    for (int32_t i = 0; i < M * PH * PW; ++i)
      o[i] = isMax ? -BF_FLT_MAX : 0.0f;
    for (int32_t r = 0; r < CH; ++r) {
      BF_POOL_ROW_USED(used, r, PH, PKH, psH, ppadT, pdilH);
      if (!used)
        continue;
      for (int32_t m0 = 0; m0 < M; m0 += chunk) {
        const int32_t mc = M - m0 < chunk ? M - m0 : chunk;
        bf_conv_params row = *conv; /* conv row r of channels m0 .. m0 + mc - 1 */
        row.n = 1, row.m = mc, row.oh = 1, row.pad_t = padT - r * strideH;
        bf_conv2d_f32(x, w + (int64_t)m0 * Cg * taps, bias ? bias + m0 : 0, scratch, &row, act,
                      actA, actB);
        for (int32_t kh = 0; kh < PKH; ++kh) {
          const int32_t t = r + ppadT - kh * pdilH;
          if (t < 0 || t % psH != 0 || t / psH >= PH)
            continue;
          bf_pool_fold_row(scratch, o, mc, m0, CW, PH, PW, t / psH, PKW, psW, ppadL, pdilW, isMax);
        }
      }
    }
    if (isMax)
      continue;
    /* Average: the divisor of bf_avgpool2d_f32. */
    for (int32_t ph = 0; ph < PH; ++ph) {
      const int32_t h0 = ph * psH - ppadT;
      const int32_t hb = h0 < 0 ? 0 : h0, he = h0 + PKH > CH ? CH : h0 + PKH;
      const int32_t pb = h0 < -ppadT ? -ppadT : h0;
      const int32_t pe = h0 + PKH > CH + ppadB ? CH + ppadB : h0 + PKH;
      for (int32_t pw = 0; pw < PW; ++pw) {
        const int32_t w0 = pw * psW - ppadL;
        const int32_t wb = w0 < 0 ? 0 : w0, we = w0 + PKW > CW ? CW : w0 + PKW;
        int32_t count;
        if (countIncludePad) {
          const int32_t qb = w0 < -ppadL ? -ppadL : w0;
          const int32_t qe = w0 + PKW > CW + ppadR ? CW + ppadR : w0 + PKW;
          count = (pe - pb) * (qe - qb);
        } else {
          count = (he - hb) * (we - wb);
        }
        for (int32_t m = 0; m < M; ++m) {
          float *v = o + ((int64_t)m * PH + ph) * PW + pw;
          *v = count > 0 ? *v / (float)count : 0.0f;
        }
      }
    }
  }
}
