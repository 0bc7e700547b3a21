/*===- int8_conv.c - int8 Conv (grouped, depthwise) and fully connected ----===
 *
 * TFLM's int8 reference arithmetic: acc = bias[c] + sum((x + inputOffset) *
 * (w + filterOffset)) over the window's *valid* positions (a padded position
 * is the zero point, so it adds nothing), then requantize per channel, add
 * outputOffset and clamp to [actMin, actMax].
 *===----------------------------------------------------------------------===*/
#include "int8_mve.h"

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

/* acc[i][j] += (xa[j*sw] + inputOffset) * wa[i*wsM] + (xb[j*sw] + inputOffset)
 * * wb[i*wsM], i < nm (1 or 2 output channels), j < np (4 or 1): two taps of
 * np neighbouring output pixels, column stride sw = 1 or 2. DSP, np = 4: the inputs
 * widen (with the offset, still exact in int16) to two words of two pixels
 * each - {p0, p2} and {p1, p3} from one load at stride 1, {p0, p1} and
 * {p2, p3} from two at stride 2 (never reading past xa[3*sw]) - and are
 * regrouped into one {tap a, tap b} pair per pixel, once for all nm channels;
 * each meets a channel's packed weights {wa, wb} in one SMLAD. */
BF_I8_INLINE void bf_i8_mac4_taps2(int32_t acc[][4], int32_t nm, int32_t np, const int8_t *xa,
                                   const int8_t *xb, const int8_t *wa, const int8_t *wb,
                                   int64_t wsM, int32_t inputOffset, int32_t sw) {
#if defined(BF_I8_DSP)
  if (np == 4) { /* for one pixel, the portable code is as short */
    const uint32_t off = bf_i8_pack16(inputOffset, inputOffset);
    uint32_t aL, aM, bL, bM; /* lanes: lo(L) = p0, hi(M) = p3; hi(L), lo(M) = p1, p2 */
    if (sw == 1) {
      const uint32_t a = bf_i8_load4(xa), b = bf_i8_load4(xb);
      aL = __sxtab16(off, a), aM = __sxtab16(off, __ror(a, 8));
      bL = __sxtab16(off, b), bM = __sxtab16(off, __ror(b, 8));
    } else {
      aL = __sxtab16(off, bf_i8_load4(xa)), aM = __sxtab16(off, __ror(bf_i8_load4(xa + 3), 8));
      bL = __sxtab16(off, bf_i8_load4(xb)), bM = __sxtab16(off, __ror(bf_i8_load4(xb + 3), 8));
    }
    const int32_t hiL = sw == 1 ? 2 : 1, loM = 3 - hiL;
    const uint32_t p0 = bf_i8_pack16((int32_t)aL, (int32_t)bL);
    const uint32_t pHiL = (aL >> 16) | (bL & 0xFFFF0000u);
    const uint32_t pLoM = bf_i8_pack16((int32_t)aM, (int32_t)bM);
    const uint32_t p3 = (aM >> 16) | (bM & 0xFFFF0000u);
    for (int32_t i = 0; i < nm; ++i) {
      const uint32_t wab = bf_i8_pack16(wa[i * wsM], wb[i * wsM]);
      acc[i][0] = __smlad(p0, wab, acc[i][0]);
      acc[i][hiL] = __smlad(pHiL, wab, acc[i][hiL]);
      acc[i][loM] = __smlad(pLoM, wab, acc[i][loM]);
      acc[i][3] = __smlad(p3, wab, acc[i][3]);
    }
    return;
  }
#endif
  for (int32_t i = 0; i < nm; ++i)
    for (int32_t j = 0; j < np; ++j)
      acc[i][j] += ((int32_t)xa[j * sw] + inputOffset) * wa[i * wsM] +
                   ((int32_t)xb[j * sw] + inputOffset) * wb[i * wsM];
}

/* acc[i][j] += (x[j*sw] + inputOffset) * w[i*wsM]: one tap, nm channels. */
BF_I8_INLINE void bf_i8_mac4_tap(int32_t acc[][4], int32_t nm, int32_t np, const int8_t *x,
                                 const int8_t *w, int64_t wsM, int32_t inputOffset, int32_t sw) {
  for (int32_t i = 0; i < nm; ++i)
    for (int32_t j = 0; j < np; ++j)
      acc[i][j] += ((int32_t)x[j * sw] + inputOffset) * w[i * wsM];
}

/* np = 4 (or 1) output pixels, column stride sw (1 or 2), of nm output
 * channels (1 or 2, sharing the input loads; weights wm and wm + Cg*KH*KW):
 * the window taps of rows [khb, khe) and columns [kwb, kwe), which read np
 * inputs each (from column iw0 of the group's channels x0) in bounds.
 * Taps go in pairs of channels (cg, cg+1) at the same window position, which
 * suits any kernel size; an odd last channel (all of a depthwise one) pairs
 * (kw, kw+1) along each row and the odd last column down the rows. The int32
 * sums equal the reference's: only the order of additions differs. */
BF_I8_INLINE void bf_i8_conv_px4(int32_t acc[][4], int32_t nm, int32_t np, const int8_t *x0,
                                 const int8_t *wm, int32_t Cg, int32_t H, int32_t W, int32_t KH,
                                 int32_t KW, int32_t ih0, int32_t iw0, int32_t khb, int32_t khe,
                                 int32_t kwb, int32_t kwe, int32_t dilH, int32_t dilW,
                                 int32_t inputOffset, int32_t sw) {
  const int64_t HW = (int64_t)H * W;
  const int32_t taps = KH * KW;
  const int64_t wsM = (int64_t)Cg * taps;
  int32_t cg = 0;
  for (; cg + 2 <= Cg; cg += 2) {
    const int8_t *x = x0 + cg * HW;
    const int8_t *wc = wm + cg * taps;
    for (int32_t kh = khb; kh < khe; ++kh) {
      const int8_t *xr = x + (int64_t)(ih0 + kh * dilH) * W + iw0;
      const int8_t *wr = wc + kh * KW;
      for (int32_t kw = kwb; kw < kwe; ++kw)
        bf_i8_mac4_taps2(acc, nm, np, xr + kw * dilW, xr + kw * dilW + HW, wr + kw, wr + kw + taps,
                         wsM, inputOffset, sw);
    }
  }
  if (cg == Cg)
    return;
  const int8_t *x = x0 + cg * HW;
  const int8_t *wc = wm + cg * taps;
  const int32_t kwLast = kwe - 1, dilRow = dilH * W;
  for (int32_t kh = khb; kh < khe; ++kh) {
    const int8_t *xr = x + (int64_t)(ih0 + kh * dilH) * W + iw0;
    const int8_t *wr = wc + kh * KW;
    for (int32_t kw = kwb; kw + 2 <= kwe; kw += 2)
      bf_i8_mac4_taps2(acc, nm, np, xr + kw * dilW, xr + (kw + 1) * dilW, wr + kw, wr + kw + 1, wsM,
                       inputOffset, sw);
  }
  if (((kwe - kwb) & 1) == 0)
    return;
  const int8_t *wcol = wc + kwLast;
  int32_t kh = khb;
  for (; kh + 2 <= khe; kh += 2) {
    const int8_t *xa = x + (int64_t)(ih0 + kh * dilH) * W + iw0 + kwLast * dilW;
    bf_i8_mac4_taps2(acc, nm, np, xa, xa + dilRow, wcol + kh * KW, wcol + (kh + 1) * KW, wsM,
                     inputOffset, sw);
  }
  if (kh < khe)
    bf_i8_mac4_tap(acc, nm, np, x + (int64_t)(ih0 + kh * dilH) * W + iw0 + kwLast * dilW,
                   wcol + kh * KW, wsM, inputOffset, sw);
}

/* Output channels m and, if nm = 2, m + 1 (same group): np pixels,
 * requantized into their planes from o. */
BF_I8_INLINE void bf_i8_conv_block(int8_t *o, int32_t nm, int32_t np, int32_t m, int32_t b0,
                                   int32_t b1, const int8_t *x0, const int8_t *wm, int32_t Cg,
                                   int32_t H, int32_t W, int32_t KH, int32_t KW, int32_t ih0,
                                   int32_t iw0, int32_t khb, int32_t khe, int32_t kwb, int32_t kwe,
                                   int32_t dilH, int32_t dilW, int32_t inputOffset, int32_t sw,
                                   int64_t plane, const int32_t *outMult, const int32_t *outShift,
                                   int32_t quantFlags, int32_t outputOffset, int32_t actMin,
                                   int32_t actMax, const int8_t *lut) {
  int32_t acc[2][4] = {{b0, b0, b0, b0}, {b1, b1, b1, b1}};
  bf_i8_conv_px4(acc, nm, np, x0, wm, Cg, H, W, KH, KW, ih0, iw0, khb, khe, kwb, kwe, dilH, dilW,
                 inputOffset, sw);
  for (int32_t i = 0; i < nm; ++i)
    for (int32_t j = 0; j < np; ++j)
      o[i * plane + j] = bf_i8_lut(bf_i8_output(acc[i][j], m + i, outMult, outShift, quantFlags,
                                                outputOffset, actMin, actMax),
                                   lut);
}

void bf_i8_conv2d(const int8_t *restrict in, const int8_t *restrict w, const int32_t *restrict bias,
                  int8_t *restrict out, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                  int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t strideH, int32_t strideW,
                  int32_t padT, int32_t padL, int32_t dilH, int32_t dilW, int32_t groups,
                  int32_t inputOffset, int32_t outputOffset, const int32_t *outMult,
                  const int32_t *outShift, int32_t quantFlags, int32_t actMin, int32_t actMax,
                  const int8_t *bias8, const int32_t *biasMult, const int32_t *biasShift,
                  const int8_t *lut) {
  if (KH == 1 && KW == 1 && strideH == 1 && strideW == 1 && padL == 0 && OW == W) {
    /* A 1x1 convolution maps output row oh to input row oh - padT, whole: as
     * one row of H*W inputs (top pad becoming a left one), all its pixels
     * fill blocks of four, however narrow the rows. */
    padL = padT * W;
    W *= H;
    OW *= OH;
    H = OH = 1;
    padT = 0;
  }
  const int32_t Cg = C / groups, Mg = M / groups;
  /* Output columns [owBegin, owEnd) have their whole window inside the
   * input's width: there, at stride 1 or 2, blocks of four pixels take
   * bf_i8_conv_px4; the last block ends at owEnd, recomputing up to three
   * pixels of the one before (cheaper than single pixels). */
  const int32_t owBegin = strideW <= 2 ? (bf_i8_max(padL, 0) + strideW - 1) / strideW : OW;
  const int32_t lastIw0 = W - 1 + padL - (KW - 1) * dilW; /* of the last such column */
  const int32_t owEnd = lastIw0 < 0 ? 0 : bf_i8_min(OW, lastIw0 / strideW + 1);
  /* Two output channels of a group at a time (when Mg is even) share the
   * blocks' input loads. Not for rows of 5+ taps over channel pairs: their
   * unrolled taps and eight accumulators spill registers on Thumb (LeNet's
   * 5x5 conv got slower, ResNet's 3x3 and DS-CNN's 10x4 one-channel faster). */
  const int32_t nm = Mg % 2 == 0 && (KW <= 4 || Cg == 1) ? 2 : 1;
  const int64_t plane = (int64_t)OH * OW;
  for (int32_t n = 0; n < N; ++n) {
    for (int32_t m = 0; m < M; m += nm) {
      const int32_t g = m / Mg;
      const int8_t *x0 = in + ((int64_t)n * C + (int64_t)g * Cg) * H * W;
      const int8_t *wm = w + (int64_t)m * Cg * KH * KW;
      int8_t *o = out + ((int64_t)n * M + m) * plane;
      const int32_t b0 = bf_i8_bias(m, bias, bias8, biasMult, biasShift, quantFlags);
      const int32_t b1 =
          nm == 2 ? bf_i8_bias(m + 1, bias, bias8, biasMult, biasShift, quantFlags) : 0;
      for (int32_t oh = 0; oh < OH; ++oh) {
        const int32_t ih0 = oh * strideH - padT;
        int32_t khb, khe;
        bf_i8_valid_taps(ih0, H, KH, dilH, &khb, &khe);
        for (int32_t ow = 0; ow < OW;) {
          /* Four pixels inside the width, else one with its valid columns.
           * nm, np and the full window's columns as literals: each call is
           * specialised for them. */
          const int32_t np = ow >= owBegin && ow < owEnd && owEnd - owBegin >= 4 ? 4 : 1;
          if (np == 4)
            ow = bf_i8_min(ow, owEnd - 4);
          int8_t *ob = o + oh * OW + ow;
          const int32_t iw0 = ow * strideW - padL;
          int32_t kwb, kwe;
          bf_i8_valid_taps(iw0, W, KW, dilW, &kwb, &kwe);
#define BF_I8_CONV_BLOCK(NM, NP, KWB, KWE)                                                         \
  bf_i8_conv_block(ob, NM, NP, m, b0, b1, x0, wm, Cg, H, W, KH, KW, ih0, iw0, khb, khe, KWB, KWE,  \
                   dilH, dilW, inputOffset, strideW, plane, outMult, outShift, quantFlags,         \
                   outputOffset, actMin, actMax, lut)
          if (np == 4 && nm == 2)
            BF_I8_CONV_BLOCK(2, 4, 0, KW);
          else if (np == 4)
            BF_I8_CONV_BLOCK(1, 4, 0, KW);
          else if (nm == 2)
            BF_I8_CONV_BLOCK(2, 1, kwb, kwe);
          else
            BF_I8_CONV_BLOCK(1, 1, kwb, kwe);
#undef BF_I8_CONV_BLOCK
          ow += np;
        }
      }
    }
  }
}

/* acc{0,1} += sum over k < K of (x[k] + inputOffset) * (w{0,1}[k] + filterOffset):
 * two weight rows share each input load. DSP: four inputs widen (offset
 * added, exact in int16) to {x0, x2} and {x1, x3} once, and meet each row's
 * widened weights in two SMLADs, as CMSIS-NN's vector-matrix product does. */
BF_I8_INLINE void bf_i8_dot_rows2(const int8_t *x, const int8_t *w0, const int8_t *w1, int32_t K,
                                  int32_t inputOffset, int32_t filterOffset, int32_t *acc0,
                                  int32_t *acc1) {
#if defined(BF_I8_MVE)
  if (filterOffset == 0) {
    bf_i8_mve_dot_rows2(x, w0, w1, K, inputOffset, acc0, acc1);
    return;
  }
#endif
  int32_t a0 = *acc0, a1 = *acc1, k = 0;
#if defined(BF_I8_DSP)
  const uint32_t xOff = bf_i8_pack16(inputOffset, inputOffset);
  const uint32_t wOff = bf_i8_pack16(filterOffset, filterOffset);
  for (; k + 4 <= K; k += 4) {
    const uint32_t xv = bf_i8_load4(x + k), v0 = bf_i8_load4(w0 + k), v1 = bf_i8_load4(w1 + k);
    const uint32_t x02 = __sxtab16(xOff, xv), x13 = __sxtab16(xOff, __ror(xv, 8));
    a0 = __smlad(x02, __sxtab16(wOff, v0), a0);
    a0 = __smlad(x13, __sxtab16(wOff, __ror(v0, 8)), a0);
    a1 = __smlad(x02, __sxtab16(wOff, v1), a1);
    a1 = __smlad(x13, __sxtab16(wOff, __ror(v1, 8)), a1);
  }
#endif
  for (; k < K; ++k) {
    const int32_t xk = (int32_t)x[k] + inputOffset;
    a0 += xk * ((int32_t)w0[k] + filterOffset);
    a1 += xk * ((int32_t)w1[k] + filterOffset);
  }
  *acc0 = a0;
  *acc1 = a1;
}

void bf_fully_connected_s8(const int8_t *restrict in, const int8_t *restrict w,
                           const int32_t *restrict bias, int8_t *restrict out,
                           const bf_fc_params *fc, const bf_quant_params *quant,
                           const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                           const int32_t *biasMult, const int32_t *biasShift) {
  const int32_t batches = fc->batches, accumDepth = fc->accum_depth, outDepth = fc->out_depth;
  const int32_t transB = fc->trans_b, filterOffset = fc->filter_offset;
  const int32_t inputOffset = quant->input_offset, outputOffset = quant->output_offset;
  const int32_t quantFlags = quant->quant_flags, actMin = quant->act_min, actMax = quant->act_max;
  /* Weight element (k, o): stride 1 along k when transB ([outDepth, K]). */
  const int32_t kStride = transB ? 1 : outDepth, oStride = transB ? accumDepth : 1;
  for (int32_t bt = 0; bt < batches; ++bt) {
    const int8_t *x = in + (int64_t)bt * accumDepth;
    int8_t *y = out + (int64_t)bt * outDepth;
    int32_t o = 0;
    /* Contiguous rows: two outputs at a time (the last, if odd, pairs with itself). */
    for (; transB && o < outDepth; o += 2) {
      const int32_t o1 = o + 1 < outDepth ? o + 1 : o;
      int32_t acc0 = bf_i8_bias(o, bias, bias8, biasMult, biasShift, quantFlags);
      int32_t acc1 = bf_i8_bias(o1, bias, bias8, biasMult, biasShift, quantFlags);
      bf_i8_dot_rows2(x, w + (int64_t)o * accumDepth, w + (int64_t)o1 * accumDepth, accumDepth,
                      inputOffset, filterOffset, &acc0, &acc1);
      y[o] = bf_i8_output(acc0, o, outMult, outShift, quantFlags, outputOffset, actMin, actMax);
      y[o1] = bf_i8_output(acc1, o1, outMult, outShift, quantFlags, outputOffset, actMin, actMax);
    }
    for (; o < outDepth; ++o) {
      const int8_t *wo = w + (int64_t)o * oStride;
      int32_t acc = bf_i8_bias(o, bias, bias8, biasMult, biasShift, quantFlags);
      for (int32_t k = 0; k < accumDepth; ++k)
        acc += ((int32_t)x[k] + inputOffset) * ((int32_t)wo[(int64_t)k * kStride] + filterOffset);
      y[o] = bf_i8_output(acc, o, outMult, outShift, quantFlags, outputOffset, actMin, actMax);
    }
  }
}

/* The entry point (abi.h's structs): bf_i8_conv2d's arguments. */
void bf_conv2d_s8(const int8_t *restrict in, const int8_t *restrict w, const int32_t *restrict bias,
                  int8_t *restrict out, const bf_conv_params *conv, const bf_quant_params *quant,
                  const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                  const int32_t *biasMult, const int32_t *biasShift, const int8_t *lut) {
  const bf_i8_conv_args a = BF_I8_CONV_ARGS_OF(conv, quant);
  bf_i8_conv2d(in, w, bias, out, BF_I8_CONV_FIELDS(a), a.groups, BF_I8_QUANT_OFFSETS(a), outMult,
               outShift, BF_I8_QUANT_CLAMP(a), bias8, biasMult, biasShift, BF_I8_STORE_LUT(lut));
  bf_i8_lut_after(out, (int64_t)a.N * a.M * a.OH * a.OW, lut);
}
