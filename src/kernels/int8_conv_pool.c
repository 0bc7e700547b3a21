/*===- int8_conv_pool.c - int8 Conv (+activation) fused with MaxPool ======
 *
 * The int8 twin of conv_pool.c for MaxPool (the quantizer gives the pool the
 * conv output's parameters, so pooling is a max over the conv's int8 values).
 * For each conv row r some pool window reads, and each chunk of output
 * channels, the row is computed into `scratch` ([chunk][CW] int8) by
 * bf_conv2d_s8 itself (OH = 1, top pad shifted by r*strideH, the channel
 * tables from the chunk's first channel), so every value equals the unfused
 * conv's; it is then folded into the pool rows whose windows contain r.
 * Max is order-free and bf_maxpool2d_s8 starts from -128 and clamps at the
 * end, as this does: the result equals conv-then-pool bit for bit.
 *===----------------------------------------------------------------------===*/
#include "bundlefit_kernels_int8.h"

void bf_conv_pool2d_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                       int8_t *scratch, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                       int32_t CH, int32_t CW, int32_t KH, int32_t KW, int32_t strideH,
                       int32_t strideW, int32_t padT, int32_t padL, int32_t dilH, int32_t dilW,
                       int32_t groups, int32_t inputOffset, int32_t outputOffset,
                       const int32_t *outMult, const int32_t *outShift, int32_t perChannel,
                       int32_t actMin, int32_t actMax, const int8_t *bias8,
                       const int32_t *biasMult, const int32_t *biasShift, int32_t chunk,
                       int32_t PH, int32_t PW, int32_t PKH, int32_t PKW, int32_t psH,
                       int32_t psW, int32_t ppadT, int32_t ppadL, int32_t pdilH, int32_t pdilW,
                       int32_t poolMin, int32_t poolMax) {
  const int32_t Cg = C / groups, taps = KH * KW;
  if (groups != 1)
    chunk = M; /* a chunk never straddles groups */
  for (int32_t n = 0; n < N; ++n) {
    const int8_t *x = in + (int64_t)n * C * H * W;
    int8_t *o = out + (int64_t)n * M * PH * PW;
    for (int32_t i = 0; i < M * PH * PW; ++i)
      o[i] = -128;
    for (int32_t r = 0; r < CH; ++r) {
      int32_t used = 0;
      for (int32_t kh = 0; kh < PKH && !used; ++kh) {
        const int32_t t = r + ppadT - kh * pdilH;
        used = t >= 0 && t % psH == 0 && t / psH < PH;
      }
      if (!used)
        continue;
      for (int32_t m0 = 0; m0 < M; m0 += chunk) {
        const int32_t mc = M - m0 < chunk ? M - m0 : chunk, k0 = perChannel ? m0 : 0;
        bf_conv2d_s8(x, w + (int64_t)m0 * Cg * taps, bias ? bias + m0 : 0, scratch, 1, C, H, W,
                     mc, 1, CW, KH, KW, strideH, strideW, padT - r * strideH, padL, dilH, dilW,
                     groups, inputOffset, outputOffset, outMult + k0, outShift + k0, perChannel,
                     actMin, actMax, bias8 ? bias8 + m0 : 0, biasMult ? biasMult + k0 : 0,
                     biasShift ? biasShift + k0 : 0);
        for (int32_t kh = 0; kh < PKH; ++kh) {
          const int32_t t = r + ppadT - kh * pdilH;
          if (t < 0 || t % psH != 0 || t / psH >= PH)
            continue;
          const int32_t ph = t / psH;
          for (int32_t mi = 0; mi < mc; ++mi) {
            const int8_t *row = scratch + (int64_t)mi * CW;
            int8_t *op = o + ((int64_t)(m0 + mi) * PH + ph) * PW;
            for (int32_t pw = 0; pw < PW; ++pw) {
              int32_t best = op[pw];
              for (int32_t kw = 0; kw < PKW; ++kw) {
                const int32_t iw = pw * psW - ppadL + kw * pdilW;
                if (iw >= 0 && iw < CW && row[iw] > best)
                  best = row[iw];
              }
              op[pw] = (int8_t)best;
            }
          }
        }
      }
    }
    for (int32_t i = 0; i < M * PH * PW; ++i)
      o[i] = (int8_t)(o[i] < poolMin ? poolMin : o[i] > poolMax ? poolMax : o[i]);
  }
}
