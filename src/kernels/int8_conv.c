/*===- int8_conv.c - int8 Conv (grouped, depthwise) and fully connected ----===
 *
 * TFLM's int8 reference arithmetic: acc = bias[c] + sum((x + inputOffset) *
 * (w + filterOffset)) over the window's *valid* positions (a padded position
 * is the zero point, so it adds nothing), then requantize per channel, add
 * outputOffset and clamp to [actMin, actMax].
 *===----------------------------------------------------------------------===*/
#include "int8_util.h"

/* The k in [0, K) with 0 <= origin + k * dil < size, as [*begin, *end). */
BF_I8_INLINE void bf_i8_valid_taps(int32_t origin, int32_t size, int32_t K, int32_t dil,
                                   int32_t *begin, int32_t *end) {
  int32_t lo = origin < 0 ? (-origin + dil - 1) / dil : 0;
  const int32_t limit = size - origin;
  int32_t hi = limit <= 0 ? 0 : (limit + dil - 1) / dil;
  if (hi > K)
    hi = K;
  if (lo > hi)
    lo = hi;
  *begin = lo;
  *end = hi;
}

BF_I8_INLINE int8_t bf_i8_output(int32_t acc, int32_t c, const int32_t *outMult,
                                 const int32_t *outShift, int32_t perChannel,
                                 int32_t outputOffset, int32_t actMin, int32_t actMax) {
  const int32_t k = perChannel ? c : 0;
  return bf_i8_clamp(bf_i8_requantize(acc, outMult[k], outShift[k]) + outputOffset, actMin,
                     actMax);
}

void bf_conv2d_s8(const int8_t *restrict in, const int8_t *restrict w,
                  const int32_t *restrict bias, int8_t *restrict out, int32_t N, int32_t C,
                  int32_t H, int32_t W, int32_t M, int32_t OH, int32_t OW, int32_t KH,
                  int32_t KW, int32_t strideH, int32_t strideW, int32_t padT, int32_t padL,
                  int32_t dilH, int32_t dilW, int32_t groups, int32_t inputOffset,
                  int32_t outputOffset, const int32_t *outMult, const int32_t *outShift,
                  int32_t perChannel, int32_t actMin, int32_t actMax, const int8_t *bias8,
                  const int32_t *biasMult, const int32_t *biasShift) {
  const int32_t Cg = C / groups, Mg = M / groups;
  for (int32_t n = 0; n < N; ++n) {
    for (int32_t m = 0; m < M; ++m) {
      const int32_t g = m / Mg;
      const int8_t *x0 = in + ((int64_t)n * C + (int64_t)g * Cg) * H * W;
      const int8_t *wm = w + (int64_t)m * Cg * KH * KW;
      int8_t *o = out + ((int64_t)n * M + m) * OH * OW;
      const int32_t b = bf_i8_bias(m, bias, bias8, biasMult, biasShift, perChannel);
      for (int32_t oh = 0; oh < OH; ++oh) {
        const int32_t ih0 = oh * strideH - padT;
        int32_t khb, khe;
        bf_i8_valid_taps(ih0, H, KH, dilH, &khb, &khe);
        for (int32_t ow = 0; ow < OW; ++ow) {
          const int32_t iw0 = ow * strideW - padL;
          int32_t kwb, kwe;
          bf_i8_valid_taps(iw0, W, KW, dilW, &kwb, &kwe);
          int32_t acc = b;
          for (int32_t cg = 0; cg < Cg; ++cg) {
            const int8_t *x = x0 + (int64_t)cg * H * W;
            const int8_t *wc = wm + (int64_t)cg * KH * KW;
            for (int32_t kh = khb; kh < khe; ++kh) {
              const int8_t *xr = x + (int64_t)(ih0 + kh * dilH) * W + iw0;
              const int8_t *wr = wc + kh * KW;
              for (int32_t kw = kwb; kw < kwe; ++kw)
                acc += ((int32_t)xr[kw * dilW] + inputOffset) * (int32_t)wr[kw];
            }
          }
          o[oh * OW + ow] =
              bf_i8_output(acc, m, outMult, outShift, perChannel, outputOffset, actMin, actMax);
        }
      }
    }
  }
}

void bf_depthwise_conv2d_s8(const int8_t *restrict in, const int8_t *restrict w,
                            const int32_t *restrict bias, int8_t *restrict out, int32_t N,
                            int32_t C, int32_t H, int32_t W, int32_t chMult, int32_t OH,
                            int32_t OW, int32_t KH, int32_t KW, int32_t strideH,
                            int32_t strideW, int32_t padT, int32_t padL, int32_t dilH,
                            int32_t dilW, int32_t inputOffset, int32_t outputOffset,
                            const int32_t *outMult, const int32_t *outShift,
                            int32_t perChannel, int32_t actMin, int32_t actMax,
                            const int8_t *bias8, const int32_t *biasMult,
                            const int32_t *biasShift) {
  /* A depthwise convolution is the grouped one with one input channel per
   * group (groups = C, chMult outputs each): same channel mapping, same
   * accumulation order, so the results are identical. */
  bf_conv2d_s8(in, w, bias, out, N, C, H, W, C * chMult, OH, OW, KH, KW, strideH, strideW,
               padT, padL, dilH, dilW, /*groups=*/C, inputOffset, outputOffset, outMult,
               outShift, perChannel, actMin, actMax, bias8, biasMult, biasShift);
}

void bf_fully_connected_s8(const int8_t *restrict in, const int8_t *restrict w,
                           const int32_t *restrict bias, int8_t *restrict out,
                           int32_t batches, int32_t accumDepth, int32_t outDepth,
                           int32_t transB, int32_t inputOffset, int32_t filterOffset,
                           int32_t outputOffset, const int32_t *outMult,
                           const int32_t *outShift, int32_t perChannel, int32_t actMin,
                           int32_t actMax, const int8_t *bias8, const int32_t *biasMult,
                           const int32_t *biasShift) {
  /* Weight element (k, o): stride 1 along k when transB ([outDepth, K]). */
  const int32_t kStride = transB ? 1 : outDepth, oStride = transB ? accumDepth : 1;
  for (int32_t bt = 0; bt < batches; ++bt) {
    const int8_t *x = in + (int64_t)bt * accumDepth;
    for (int32_t o = 0; o < outDepth; ++o) {
      const int8_t *wo = w + (int64_t)o * oStride;
      int32_t acc = bf_i8_bias(o, bias, bias8, biasMult, biasShift, perChannel);
      for (int32_t k = 0; k < accumDepth; ++k)
        acc += ((int32_t)x[k] + inputOffset) * ((int32_t)wo[(int64_t)k * kStride] + filterOffset);
      out[(int64_t)bt * outDepth + o] =
          bf_i8_output(acc, o, outMult, outShift, perChannel, outputOffset, actMin, actMax);
    }
  }
}
