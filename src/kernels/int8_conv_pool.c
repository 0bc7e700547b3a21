/*===- int8_conv_pool.c - int8 Conv (+activation) fused with a pool =======
 *
 * The int8 twins of conv_pool.c (the quantizer gives the pool the conv
 * output's parameters, so pooling works on the conv's int8 values).
 * For each conv row r some pool window reads, and each chunk of output
 * channels, the row is computed into `scratch` ([chunk][conv ow] int8) by
 * bf_conv2d_s8 itself (OH = 1, top pad shifted by r*strideH, the channel
 * tables from the chunk's first channel), so every value equals the unfused
 * conv's; it is then folded into the pool rows whose windows contain r.
 * Max is order-free and bf_maxpool2d_s8 starts from -128 and clamps at the
 * end, as this does: the result equals conv-then-pool bit for bit.
 *===----------------------------------------------------------------------===*/
#include "conv_pool_rows.h"
#include "int8_util.h"

/* The parameter list both entry points share (bundlefit_kernels_int8.h):
 * bf_conv2d_s8's, the scratch row and the pool's struct. */
#define BF_CONV_POOL_S8_PARAMS                                                                     \
  const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out, int8_t *scratch,            \
      const bf_conv_params *conv, const bf_quant_params *quant, const int32_t *outMult,            \
      const int32_t *outShift, const int8_t *bias8, const int32_t *biasMult,                       \
      const int32_t *biasShift, const bf_pool_params *pool

void bf_conv_pool2d_s8(BF_CONV_POOL_S8_PARAMS) {
  const bf_i8_conv_args a = BF_I8_CONV_ARGS_OF(conv, quant);
  const int32_t PH = pool->oh, PW = pool->ow, PKH = pool->kh, PKW = pool->kw, psH = pool->stride_h,
                psW = pool->stride_w, ppadT = pool->pad_t, ppadL = pool->pad_l, pdilH = pool->dil_h,
                pdilW = pool->dil_w, poolMin = pool->act_min, poolMax = pool->act_max;
  int32_t chunk = pool->chunk;
  const int32_t Cg = a.C / a.groups, taps = a.KH * a.KW;
  if (a.groups != 1)
    chunk = a.M; /* a chunk never straddles groups */
  /* group 1: the conv's im2col columns after the row (nodeScratchBytes). */
  int8_t *im2col = a.groups == 1 ? scratch + (((int64_t)chunk * a.OW + 3) & ~(int64_t)3) : 0;
  for (int32_t n = 0; n < a.N; ++n) {
    const int8_t *x = in + (int64_t)n * a.C * a.H * a.W;
    int8_t *o = out + (int64_t)n * a.M * PH * PW;
    for (int32_t i = 0; i < a.M * PH * PW; ++i)
      o[i] = -128;
    for (int32_t r = 0; r < a.OH; ++r) {
      BF_POOL_ROW_USED(used, r, PH, PKH, psH, ppadT, pdilH);
      if (!used)
        continue;
      for (int32_t m0 = 0; m0 < a.M; m0 += chunk) {
        const int32_t mc = a.M - m0 < chunk ? a.M - m0 : chunk,
                      k0 = (a.quantFlags & BF_I8_PER_CHANNEL) ? m0 : 0;
        bf_i8_conv2d_im2col(x, w + (int64_t)m0 * Cg * taps, bias ? bias + m0 : 0, scratch, 1, a.C,
                            a.H, a.W, mc, 1, a.OW, a.KH, a.KW, a.strideH, a.strideW,
                            a.padT - r * a.strideH, a.padL, a.dilH, a.dilW, a.groups, a.inputOffset,
                            a.outputOffset, outMult + k0, outShift + k0, a.quantFlags, a.actMin,
                            a.actMax, bias8 ? bias8 + m0 : 0, biasMult ? biasMult + k0 : 0,
                            biasShift ? biasShift + k0 : 0, im2col, 0);
        for (int32_t kh = 0; kh < PKH; ++kh) {
          const int32_t t = r + ppadT - kh * pdilH;
          if (t < 0 || t % psH != 0 || t / psH >= PH)
            continue;
          const int32_t ph = t / psH;
          for (int32_t mi = 0; mi < mc; ++mi) {
            const int8_t *row = scratch + (int64_t)mi * a.OW;
            int8_t *op = o + ((int64_t)(m0 + mi) * PH + ph) * PW;
            for (int32_t pw = 0; pw < PW; ++pw) {
              int32_t best = op[pw];
              for (int32_t kw = 0; kw < PKW; ++kw) {
                const int32_t iw = pw * psW - ppadL + kw * pdilW;
                if (iw >= 0 && iw < a.OW && row[iw] > best)
                  best = row[iw];
              }
              op[pw] = (int8_t)best;
            }
          }
        }
      }
    }
    for (int32_t i = 0; i < a.M * PH * PW; ++i)
      o[i] = (int8_t)(o[i] < poolMin ? poolMin : o[i] > poolMax ? poolMax : o[i]);
  }
}

/* AveragePool whose windows do not overlap vertically (psH >= PKH; the
 * fusion pass checks it), so each conv row feeds one pooled row: for each
 * pooled row and chunk of channels, its conv rows are computed into the
 * `scratch` row as above and their window sums added to int32 accumulators
 * ([chunk][PW], after the row, 4-aligned); the pooled row is then finished
 * by bf_i8_window_mean, bf_avgpool2d_s8's rule. Sums of integers do not
 * depend on order, so the result equals conv-then-pool bit for bit. Scratch:
 * chunk * conv ow bytes rounded up to 4, plus chunk*PW int32 (plus, group 1, the
 * conv's im2col columns). */
void bf_conv_avgpool2d_s8(BF_CONV_POOL_S8_PARAMS) {
  const bf_i8_conv_args a = BF_I8_CONV_ARGS_OF(conv, quant);
  const int32_t PH = pool->oh, PW = pool->ow, PKH = pool->kh, PKW = pool->kw, psH = pool->stride_h,
                psW = pool->stride_w, ppadT = pool->pad_t, ppadL = pool->pad_l, ppadB = pool->pad_b,
                ppadR = pool->pad_r, countIncludePad = pool->count_include_pad,
                padValue = pool->pad_value, poolMin = pool->act_min, poolMax = pool->act_max;
  int32_t chunk = pool->chunk;
  const int32_t Cg = a.C / a.groups, taps = a.KH * a.KW;
  if (a.groups != 1)
    chunk = a.M; /* a chunk never straddles groups */
  int8_t *row = scratch;
  int32_t *acc = (int32_t *)(scratch + (((int64_t)chunk * a.OW + 3) & ~(int64_t)3));
  int8_t *im2col = a.groups == 1 ? (int8_t *)(acc + (int64_t)chunk * PW) : 0;
  for (int32_t n = 0; n < a.N; ++n) {
    const int8_t *x = in + (int64_t)n * a.C * a.H * a.W;
    int8_t *o = out + (int64_t)n * a.M * PH * PW;
    for (int32_t ph = 0; ph < PH; ++ph) {
      int32_t hb, he;
      const int32_t hTotal = bf_i8_pool_span(ph, psH, ppadT, ppadB, PKH, a.OH, &hb, &he);
      for (int32_t m0 = 0; m0 < a.M; m0 += chunk) {
        const int32_t mc = a.M - m0 < chunk ? a.M - m0 : chunk,
                      k0 = (a.quantFlags & BF_I8_PER_CHANNEL) ? m0 : 0;
        for (int32_t i = 0; i < mc * PW; ++i)
          acc[i] = 0;
        for (int32_t r = hb; r < he; ++r) {
          bf_i8_conv2d_im2col(
              x, w + (int64_t)m0 * Cg * taps, bias ? bias + m0 : 0, row, 1, a.C, a.H, a.W, mc, 1,
              a.OW, a.KH, a.KW, a.strideH, a.strideW, a.padT - r * a.strideH, a.padL, a.dilH,
              a.dilW, a.groups, a.inputOffset, a.outputOffset, outMult + k0, outShift + k0,
              a.quantFlags, a.actMin, a.actMax, bias8 ? bias8 + m0 : 0,
              biasMult ? biasMult + k0 : 0, biasShift ? biasShift + k0 : 0, im2col, 0);
          for (int32_t mi = 0; mi < mc; ++mi)
            for (int32_t pw = 0; pw < PW; ++pw) {
              int32_t wb, we;
              bf_i8_pool_span(pw, psW, ppadL, ppadR, PKW, a.OW, &wb, &we);
              for (int32_t iw = wb; iw < we; ++iw)
                acc[mi * PW + pw] += row[(int64_t)mi * a.OW + iw];
            }
        }
        for (int32_t mi = 0; mi < mc; ++mi)
          for (int32_t pw = 0; pw < PW; ++pw) {
            int32_t wb, we;
            const int32_t wTotal = bf_i8_pool_span(pw, psW, ppadL, ppadR, PKW, a.OW, &wb, &we);
            const int32_t count = bf_i8_max(he - hb, 0) * bf_i8_max(we - wb, 0);
            const int32_t total = hTotal * wTotal;
            o[((int64_t)(m0 + mi) * PH + ph) * PW + pw] = (int8_t)bf_i8_clamp(
                bf_i8_window_mean(acc[mi * PW + pw], count, total, countIncludePad, padValue),
                poolMin, poolMax);
          }
      }
    }
  }
}
