/*===- int8_depthwise.c - int8 depthwise convolution, planar 3x3 rows ------===
 *
 * Depthwise in NCHW is a 2D correlation of each channel's plane with its own
 * kernel. 3x3 kernels (stride 1 or 2 along rows, any vertical stride and
 * dilation, double rounding) take a row kernel here; every other shape, and
 * a channel whose numbers do not meet the fast path's bounds, is the grouped
 * convolution bf_conv2d_s8 computes (groups = C: the same sums, bit for bit).
 *
 * The fast path computes the reference's acc = bias + sum over valid taps of
 * (x + inputOffset) * w as bias' + sum x * w, with the input offset folded
 * into bias' = bias + inputOffset * (sum of the valid rows' weights): the
 * algebra is exact in int32 as long as acc itself fits (checked per channel
 * with a bound). Kernel rows outside the input get zero weights; columns
 * outside it read the input zero point zp = -inputOffset, whose product
 * zp * w cancels the folded inputOffset * w. Two neighbouring outputs of one
 * row share each input row's 4-byte load: with {x0,x2} and {x1,x3} widened
 * (SXTB16), {w0,w2} and {w0,w1} packed, one row costs one load, two SXTB16
 * and four 16x16 MACs for six products (stride 2: a fifth byte and five
 * MACs). The output stage is bf_i8_requantize's in an exact cheaper form
 * (bf_i8_fast_rq_setup).
 *===----------------------------------------------------------------------===*/
#include "int8_mve.h"

/* One kernel row of two neighbouring outputs: a0 += x0 w0 + x1 w1 + x2 w2,
 * a1 += xs w0 + x(s+1) w1 + x(s+2) w2 (s = stride 1 or 2), the bytes x0..x3
 * in the word v, x4 in `x4` (stride 2 only); A = {w0, w2}, C = {w0, w1}.
 * The portable path wraps like the DSP one (the total is exact). */
BF_I8_INLINE void bf_dw_row2(int32_t *a0, int32_t *a1, uint32_t v, int32_t x4, uint32_t A,
                             uint32_t C, int32_t s2) {
#if defined(BF_I8_DSP)
  const uint32_t e = __sxtb16(v), o = __sxtb16(__ror(v, 8)); /* {x0,x2}, {x1,x3} */
  *a0 = __smlad(e, A, *a0);
  *a0 = __smlabt(o, C, *a0);
  if (s2) {
    *a1 = __smlatb(e, C, *a1);
    *a1 = __smlatt(o, C, *a1);
    *a1 = __smlabt((uint32_t)x4, A, *a1);
  } else {
    *a1 = __smlad(o, A, *a1);
    *a1 = __smlatt(e, C, *a1);
  }
#else
  const int32_t x0 = (int8_t)v, x1 = (int8_t)(v >> 8), x2 = (int8_t)(v >> 16),
                x3 = (int8_t)(v >> 24);
  const int32_t w0 = (int16_t)A, w2 = (int16_t)(A >> 16), w1 = (int16_t)(C >> 16);
  *a0 = (int32_t)((uint32_t)*a0 + (uint32_t)(x0 * w0 + x1 * w1 + x2 * w2));
  *a1 = (int32_t)((uint32_t)*a1 +
                  (uint32_t)(s2 ? x2 * w0 + x3 * w1 + x4 * w2 : x1 * w0 + x2 * w1 + x3 * w2));
#endif
}

/* n (1 or 2) outputs at o from the three kernel rows' words (and fifth
 * bytes, stride 2). */
BF_I8_INLINE void bf_dw3_pair(int8_t *o, int32_t n, uint32_t v0, uint32_t v1, uint32_t v2,
                              int32_t x40, int32_t x41, int32_t x42, uint32_t A0, uint32_t A1,
                              uint32_t A2, uint32_t C0, uint32_t C1, uint32_t C2, int32_t b,
                              const bf_i8_fast_rq *q, int32_t s2) {
  int32_t a0 = b, a1 = b;
  bf_dw_row2(&a0, &a1, v0, x40, A0, C0, s2);
  bf_dw_row2(&a0, &a1, v1, x41, A1, C1, s2);
  bf_dw_row2(&a0, &a1, v2, x42, A2, C2, s2);
  bf_i8_fast_store2(o, n, a0, a1, q);
}

/* The bytes [c0, c0 + n) of an input row, zp outside [0, W). */
BF_I8_INLINE void bf_dw_gather(int8_t *dst, const int8_t *row, int32_t c0, int32_t n, int32_t W,
                               int8_t zp) {
  for (int32_t i = 0; i < n; ++i)
    dst[i] = c0 + i >= 0 && c0 + i < W ? row[c0 + i] : zp;
}

/* The two outputs o[p], o[p + 1] (the second only if p + 1 < OW) of one
 * output row from kernel rows r[0..2], starting at input column c0 =
 * p * stride - padL, where some byte read is outside [0, W) (and not the
 * shifted-word cases of bf_dw3_row): bytes gathered, zp outside. */
__attribute__((noinline)) static void
bf_dw3_edge_pair(int8_t *o, int32_t p, int32_t OW, const int8_t *const r[3], int32_t c0, int32_t W,
                 int8_t zp, const uint32_t A[3], const uint32_t C[3], int32_t b,
                 const bf_i8_fast_rq *q, int32_t s2, const int8_t *lut) {
  bf_i8_fast_rq qq = *q; /* the table as itself: see bf_i8_lut */
  qq.lut = lut;
  int32_t a0 = b, a1 = b;
  for (int32_t k = 0; k < 3; ++k) {
    int8_t g[8];
    bf_dw_gather(g, r[k], c0, s2 ? 5 : 4, W, zp);
    bf_dw_row2(&a0, &a1, bf_i8_load4(g), g[4], A[k], C[k], s2);
  }
  bf_i8_fast_store2(o + p, p + 1 < OW ? 2 : 1, a0, a1, &qq);
}

/* One output row of a 3x3 kernel, stride 1 or 2 (s2, a literal) along it:
 * kernel rows r[0..2] (a valid row, with zero weights A/C, where the kernel
 * row lies outside the input), bias' b, into o[0, OW). Pairs (p, p + 1) from
 * p = 0, the last one ending at OW (recomputing one output when OW is odd);
 * pairs with every byte inside [0, W) take the plain loop. */
BF_I8_INLINE void bf_dw3_row(int8_t *o, const int8_t *const r[3], const uint32_t A[3],
                             const uint32_t C[3], int32_t b, const bf_i8_fast_rq *q, int32_t W,
                             int32_t OW, int32_t padL, int8_t zp, int32_t s2) {
  const int32_t sw = s2 ? 2 : 1, span = s2 ? 5 : 4;
  const int32_t first = padL > 0 ? (padL + sw - 1) / sw : 0;
  const int32_t lastInside = W - span + padL < 0 ? -1 : (W - span + padL) / sw;
  const int32_t last = bf_i8_min(lastInside, OW - 2);
  const int8_t *r0 = r[0] - padL, *r1 = r[1] - padL, *r2 = r[2] - padL;
  const uint32_t A0 = A[0], A1 = A[1], A2 = A[2], C0 = C[0], C1 = C[1], C2 = C[2];
  const bf_i8_fast_rq qq = *q;
  const uint32_t zpLo = (uint8_t)zp, zpHi = zpLo << 24;
  for (int32_t ow = 0; ow < OW;) {
    const int32_t p = OW < 2 ? 0 : bf_i8_min(ow, OW - 2), c0 = p * sw - padL;
    if (p >= first && p <= last) {
      for (ow = p; ow <= last; ow += 2) {
        const int32_t c = ow * sw;
        bf_dw3_pair(o + ow, 2, bf_i8_load4(r0 + c), bf_i8_load4(r1 + c), bf_i8_load4(r2 + c),
                    s2 ? r0[c + 4] : 0, s2 ? r1[c + 4] : 0, s2 ? r2[c + 4] : 0, A0, A1, A2, C0, C1,
                    C2, b, &qq, s2);
      }
      continue;
    }
    const int32_t n = p + 1 < OW ? 2 : 1;
    if (c0 == -1 && W >= 4) /* left padding of 1: zp, then the row's first 3 (4) bytes */
      bf_dw3_pair(o + p, n, (bf_i8_load4(r[0]) << 8) | zpLo, (bf_i8_load4(r[1]) << 8) | zpLo,
                  (bf_i8_load4(r[2]) << 8) | zpLo, s2 ? r[0][3] : 0, s2 ? r[1][3] : 0,
                  s2 ? r[2][3] : 0, A0, A1, A2, C0, C1, C2, b, &qq, s2);
    else if (!s2 && c0 == W - 3 && W >= 4) /* the row's last 3 bytes, then zp */
      bf_dw3_pair(o + p, n, (bf_i8_load4(r[0] + W - 4) >> 8) | zpHi,
                  (bf_i8_load4(r[1] + W - 4) >> 8) | zpHi, (bf_i8_load4(r[2] + W - 4) >> 8) | zpHi,
                  0, 0, 0, A0, A1, A2, C0, C1, C2, b, &qq, 0);
    else if (s2 && c0 == W - 4 && W >= 4) /* the row's last 4 bytes, then zp */
      bf_dw3_pair(o + p, n, bf_i8_load4(r[0] + W - 4), bf_i8_load4(r[1] + W - 4),
                  bf_i8_load4(r[2] + W - 4), zp, zp, zp, A0, A1, A2, C0, C1, C2, b, &qq, 1);
    else
      bf_dw3_edge_pair(o, p, OW, r, c0, W, zp, A, C, b, q, s2, q->lut);
    ow = p + 2;
  }
}

/* bf_dw3_row for the common "same" case, stride 1, padL = 1, OW = W >= 4:
 * the pair at 0 (zp, then each row's first 3 bytes), interior pairs from 2
 * while they end inside the row, and the pair at W - 2 (the last 3 bytes,
 * then zp), which recomputes output W - 3 when W is odd. Straight-line: a
 * narrow plane (DS-CNN's W = 5) is mostly edges. */
BF_I8_INLINE void bf_dw3_row_same(int8_t *o, const int8_t *r0, const int8_t *r1, const int8_t *r2,
                                  uint32_t A0, uint32_t A1, uint32_t A2, uint32_t C0, uint32_t C1,
                                  uint32_t C2, int32_t b, const bf_i8_fast_rq *q, int32_t W,
                                  uint32_t zpLo) {
  const uint32_t zpHi = zpLo << 24;
  bf_dw3_pair(o, 2, (bf_i8_load4(r0) << 8) | zpLo, (bf_i8_load4(r1) << 8) | zpLo,
              (bf_i8_load4(r2) << 8) | zpLo, 0, 0, 0, A0, A1, A2, C0, C1, C2, b, q, 0);
  for (int32_t p = 2; p <= W - 3; p += 2)
    bf_dw3_pair(o + p, 2, bf_i8_load4(r0 + p - 1), bf_i8_load4(r1 + p - 1), bf_i8_load4(r2 + p - 1),
                0, 0, 0, A0, A1, A2, C0, C1, C2, b, q, 0);
  bf_dw3_pair(o + W - 2, 2, (bf_i8_load4(r0 + W - 4) >> 8) | zpHi,
              (bf_i8_load4(r1 + W - 4) >> 8) | zpHi, (bf_i8_load4(r2 + W - 4) >> 8) | zpHi, 0, 0, 0,
              A0, A1, A2, C0, C1, C2, b, q, 0);
}

/* bf_dw3_row_same for W = OW = 3 (MobileNet's last planes): each row's 3
 * bytes as one word, read byte by byte (a 4-byte load would leave the row,
 * and past the last one the tensor); pairs (0, 1) and (1, 2). */
BF_I8_INLINE uint32_t bf_dw_load3(const int8_t *r) {
  return (uint8_t)r[0] | (uint32_t)(uint8_t)r[1] << 8 | (uint32_t)(uint8_t)r[2] << 16;
}
BF_I8_INLINE void bf_dw3_row_same3(int8_t *o, const int8_t *r0, const int8_t *r1, const int8_t *r2,
                                   uint32_t A0, uint32_t A1, uint32_t A2, uint32_t C0, uint32_t C1,
                                   uint32_t C2, int32_t b, const bf_i8_fast_rq *q, uint32_t zpLo) {
  const uint32_t zpHi = zpLo << 24;
  const uint32_t v0 = bf_dw_load3(r0), v1 = bf_dw_load3(r1), v2 = bf_dw_load3(r2);
  bf_dw3_pair(o, 2, (v0 << 8) | zpLo, (v1 << 8) | zpLo, (v2 << 8) | zpLo, 0, 0, 0, A0, A1, A2, C0,
              C1, C2, b, q, 0);
  bf_dw3_pair(o + 1, 2, v0 | zpHi, v1 | zpHi, v2 | zpHi, 0, 0, 0, A0, A1, A2, C0, C1, C2, b, q, 0);
}

/* One channel plane x (H x W) into o (OH x OW), kernel wk (3x3), bias b:
 * returns 0, computing nothing, when the channel's bounds do not allow the
 * fast path. `same` (a literal): 1 for bf_dw3_row_same's rows, 3 for
 * bf_dw3_row_same3's, 0 for bf_dw3_row. */
BF_I8_INLINE int32_t bf_dw3_plane(const int8_t *x, const int8_t *wk, int32_t b, int8_t *o,
                                  int32_t H, int32_t W, int32_t OH, int32_t OW, int32_t strideH,
                                  int32_t padT, int32_t padL, int32_t dilH, int32_t s2,
                                  int32_t same, int32_t inputOffset, int32_t outputOffset,
                                  int32_t mult, int32_t shift, int32_t actMin, int32_t actMax,
                                  const int8_t *lut) {
  /* The largest |x + inputOffset| of an int8 x. */
  const int32_t xLo = inputOffset - 128, xHi = inputOffset + 127;
  const int32_t xMax = bf_i8_max(xLo < 0 ? -xLo : xLo, xHi < 0 ? -xHi : xHi);
  int32_t sumAbs = 0; /* <= 9 * 128, times xMax <= 256: int32 */
  for (int32_t i = 0; i < 9; ++i)
    sumAbs += wk[i] < 0 ? -wk[i] : wk[i];
  bf_i8_fast_rq q;
  if (!bf_i8_fast_rq_setup(&q, mult, shift, outputOffset, actMin, actMax,
                           b < 0 ? 0u - (uint32_t)b : (uint32_t)b, (uint32_t)(sumAbs * xMax), lut))
    return 0;
  /* Weights times 2^s (|w| <= 128, s <= 8: int16), packed per kernel row. */
  uint32_t Af[3], Cf[3];
  int32_t rowSum[3];
  for (int32_t k = 0; k < 3; ++k) {
    const int32_t w0 = bf_i8_shl(wk[3 * k], q.s), w1 = bf_i8_shl(wk[3 * k + 1], q.s),
                  w2 = bf_i8_shl(wk[3 * k + 2], q.s);
    Af[k] = bf_i8_pack16(w0, w2);
    Cf[k] = bf_i8_pack16(w0, w1);
    rowSum[k] = w0 + w1 + w2;
  }
  /* bias' (wrapping: the fast path's sums are exact mod 2^32, and the
   * bound keeps the true value in range). */
  const uint32_t bs = (uint32_t)bf_i8_shl(b, q.s), off = (uint32_t)inputOffset;
  const int32_t bFull = (int32_t)(bs + off * (uint32_t)(rowSum[0] + rowSum[1] + rowSum[2]));
  const int8_t zp = (int8_t)-inputOffset;
  const int64_t rs = (int64_t)dilH * W;
#if defined(BF_I8_MVE)
  int32_t w9[9], wz[9]; /* the taps times 2^s; wz: a row's zeroed where it is outside */
  for (int32_t i = 0; i < 9; ++i)
    w9[i] = bf_i8_shl(wk[i], q.s - 1);
  if (!s2 && strideH == 1 && dilH == 1 && padL == 1 && OW == W && W >= 4) {
    bf_i8_mve_dw3_plane_flat(o, x, w9, bFull >> 1, inputOffset, q.mult, q.add, q.e, q.lo, q.hi, H,
                             W, OH, padT, zp);
    return 1;
  }
#endif
  /* One call of the row kernel per row (inlined once, not once for inner
   * rows and again for border ones): a kernel row outside the input gets
   * zero weights and reads row 0. */
  for (int32_t oh = 0; oh < OH; ++oh) {
    const int32_t ih0 = oh * strideH - padT;
    int8_t *orow = o + (int64_t)oh * OW;
    const int8_t *r[3];
    uint32_t A[3], C[3];
    int32_t bRow;
    if (ih0 >= 0 && ih0 + 2 * dilH < H) {
      for (int32_t k = 0; k < 3; ++k) {
        r[k] = x + (int64_t)ih0 * W + k * rs;
        A[k] = Af[k];
        C[k] = Cf[k];
      }
      bRow = bFull;
    } else {
      uint32_t sum = 0;
      for (int32_t k = 0; k < 3; ++k) {
        const int32_t ih = ih0 + k * dilH, valid = ih >= 0 && ih < H;
        r[k] = x + (valid ? (int64_t)ih * W : 0);
        A[k] = valid ? Af[k] : 0u;
        C[k] = valid ? Cf[k] : 0u;
        sum += valid ? (uint32_t)rowSum[k] : 0;
      }
      bRow = (int32_t)(bs + off * sum);
    }
#if defined(BF_I8_MVE)
    const int32_t *wr = w9;
    if (A[0] != Af[0] || A[1] != Af[1] || A[2] != Af[2] || C[0] != Cf[0] || C[1] != Cf[1] ||
        C[2] != Cf[2]) {
      for (int32_t i = 0; i < 9; ++i)
        wz[i] = A[i / 3] || C[i / 3] ? w9[i] : 0;
      wr = wz;
    }
    bf_i8_mve_dw3_row(orow, r, wr, bRow >> 1, q.mult, q.add, q.e, q.lo, q.hi, W, OW, padL, zp, s2);
    continue;
#endif
    if (same == 1)
      bf_dw3_row_same(orow, r[0], r[1], r[2], A[0], A[1], A[2], C[0], C[1], C[2], bRow, &q, W,
                      (uint8_t)zp);
    else if (same == 3)
      bf_dw3_row_same3(orow, r[0], r[1], r[2], A[0], A[1], A[2], C[0], C[1], C[2], bRow, &q,
                       (uint8_t)zp);
    else
      bf_dw3_row(orow, r, A, C, bRow, &q, W, OW, padL, zp, s2);
  }
  return 1;
}

/* bf_conv2d_s8 with groups = C (one input channel per group): the general
 * path. One shared copy, not inlined into every depthwise call beside the
 * fast path. It takes no table: code generation fuses tables only into
 * calls of the fast path (src/ops/conv/ConvInt8.cpp), and a call that still
 * gets here with one applies it after (bf_i8_lut_over). */
__attribute__((noinline)) static void
bf_dw_general(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out, int32_t N,
              int32_t C, int32_t H, int32_t W, int32_t M, int32_t OH, int32_t OW, int32_t KH,
              int32_t KW, int32_t strideH, int32_t strideW, int32_t padT, int32_t padL,
              int32_t dilH, int32_t dilW, int32_t inputOffset, int32_t outputOffset,
              const int32_t *outMult, const int32_t *outShift, int32_t quantFlags, int32_t actMin,
              int32_t actMax, const int8_t *bias8, const int32_t *biasMult,
              const int32_t *biasShift) {
  bf_i8_conv2d(in, w, bias, out, N, C, H, W, M, OH, OW, KH, KW, strideH, strideW, padT, padL, dilH,
               dilW, /*groups=*/C, inputOffset, outputOffset, outMult, outShift, quantFlags, actMin,
               actMax, bias8, biasMult, biasShift, 0);
}

/* One shared copy per row kind (the row loops need no constant shapes),
 * chosen by the caller: a bundle keeps only the kinds its layers use. Each
 * kind twice, without a table (a literal null: its stores as before) and
 * with one (NAME_lut), so that one fused call does not put a test in every
 * other call's stores. */
#define BF_DW3_PLANE_KIND1(NAME, S2, SAME, LUT, HAS_LUT)                                           \
  __attribute__((noinline)) static int32_t NAME(                                                   \
      const int8_t *x, const int8_t *wk, int32_t b, int8_t *o, int32_t H, int32_t W, int32_t OH,   \
      int32_t OW, int32_t strideH, int32_t padT, int32_t padL, int32_t dilH, int32_t inputOffset,  \
      int32_t outputOffset, int32_t mult, int32_t shift, int32_t actMin, int32_t actMax,           \
      const int8_t *lut) {                                                                         \
    if (HAS_LUT)                                                                                   \
      BF_I8_LUT_NONNULL(lut);                                                                      \
    return bf_dw3_plane(x, wk, b, o, H, W, OH, OW, strideH, padT, padL, dilH, S2, SAME,            \
                        inputOffset, outputOffset, mult, shift, actMin, actMax, LUT);              \
  }
#define BF_DW3_PLANE_KIND(NAME, S2, SAME)                                                          \
  BF_DW3_PLANE_KIND1(NAME, S2, SAME, (const int8_t *)0, 0)                                         \
  BF_DW3_PLANE_KIND1(NAME##_lut, S2, SAME, lut, 1)
BF_DW3_PLANE_KIND(bf_dw3_plane_s2, 1, 0)
#if !defined(BF_I8_MVE) /* MVE: bf_dw3_plane_rows for every stride-1 row */
BF_DW3_PLANE_KIND(bf_dw3_plane_same, 0, 1)
BF_DW3_PLANE_KIND(bf_dw3_plane_same3, 0, 3)
#endif
BF_DW3_PLANE_KIND(bf_dw3_plane_rows, 0, 0)
#undef BF_DW3_PLANE_KIND
#undef BF_DW3_PLANE_KIND1

void bf_i8_depthwise_conv2d(const int8_t *restrict in, const int8_t *restrict w,
                            const int32_t *restrict bias, int8_t *restrict out, int32_t N,
                            int32_t C, int32_t H, int32_t W, int32_t chMult, int32_t OH, int32_t OW,
                            int32_t KH, int32_t KW, int32_t strideH, int32_t strideW, int32_t padT,
                            int32_t padL, int32_t dilH, int32_t dilW, int32_t inputOffset,
                            int32_t outputOffset, const int32_t *outMult, const int32_t *outShift,
                            int32_t quantFlags, int32_t actMin, int32_t actMax, const int8_t *bias8,
                            const int32_t *biasMult, const int32_t *biasShift, const int8_t *lut) {
  const int32_t M = C * chMult;
  const int32_t fast = KH == 3 && KW == 3 && dilW == 1 && (strideW == 1 || strideW == 2) &&
                       !(quantFlags & BF_I8_SINGLE_ROUNDING) && inputOffset >= -127 &&
                       inputOffset <= 128 && H > 0 && W > 0;
  if (!fast) {
    /* The grouped convolution with one input channel per group (groups =
     * C, chMult outputs each): same channel mapping, same sums. */
    bf_dw_general(in, w, bias, out, N, C, H, W, M, OH, OW, KH, KW, strideH, strideW, padT, padL,
                  dilH, dilW, inputOffset, outputOffset, outMult, outShift, quantFlags, actMin,
                  actMax, bias8, biasMult, biasShift);
    bf_i8_lut_over(out, (int64_t)N * M * OH * OW, lut);
    return;
  }
  const int64_t inPlane = (int64_t)H * W, outPlane = (int64_t)OH * OW;
  for (int32_t n = 0; n < N; ++n)
    for (int32_t m = 0; m < M; ++m) {
      const int32_t k = (quantFlags & BF_I8_PER_CHANNEL) ? m : 0;
      const int8_t *x = in + ((int64_t)n * C + m / chMult) * inPlane;
      int8_t *o = out + ((int64_t)n * M + m) * outPlane;
      const int32_t b = bf_i8_bias(m, bias, bias8, biasMult, biasShift, quantFlags);
      const int8_t *wk = w + (int64_t)m * 9;
#define BF_DW3_PLANE_ARGS                                                                          \
  (x, wk, b, o, H, W, OH, OW, strideH, padT, padL, dilH, inputOffset, outputOffset, outMult[k],    \
   outShift[k], actMin, actMax, lut)
#define BF_DW3_PLANE(FN) (lut ? FN##_lut BF_DW3_PLANE_ARGS : FN BF_DW3_PLANE_ARGS)
      /* The row kind, from the call's (constant) shape. */
      int32_t done = 0;
      if (outMult[k] > 0) {
        if (strideW == 2)
          done = BF_DW3_PLANE(bf_dw3_plane_s2);
#if defined(BF_I8_MVE)
        else /* one MVE row kernel for every stride-1 row */
          done = BF_DW3_PLANE(bf_dw3_plane_rows);
#else
        else if (padL == 1 && OW == W && W >= 4) /* the "same" rows */
          done = BF_DW3_PLANE(bf_dw3_plane_same);
        else if (padL == 1 && OW == W && W == 3)
          done = BF_DW3_PLANE(bf_dw3_plane_same3);
        else
          done = BF_DW3_PLANE(bf_dw3_plane_rows);
#endif
      }
#undef BF_DW3_PLANE
#undef BF_DW3_PLANE_ARGS
      if (done)
        continue;
      /* This channel's numbers exceed the fast path's bounds: the exact
       * general kernel on its plane alone (tables from channel m on). */
      bf_dw_general(x, wk, bias ? bias + m : 0, o, 1, 1, H, W, 1, OH, OW, 3, 3, strideH, strideW,
                    padT, padL, dilH, dilW, inputOffset, outputOffset, outMult + k, outShift + k,
                    quantFlags, actMin, actMax, bias8 ? bias8 + m : 0, biasMult ? biasMult + k : 0,
                    biasShift ? biasShift + k : 0);
      bf_i8_lut_over(o, outPlane, lut);
    }
}

/* The entry point (abi.h's structs): chMult is conv->m / conv->c (groups is
 * conv->c, implied). */
void bf_depthwise_conv2d_s8(const int8_t *restrict in, const int8_t *restrict w,
                            const int32_t *restrict bias, int8_t *restrict out,
                            const bf_conv_params *conv, const bf_quant_params *quant,
                            const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                            const int32_t *biasMult, const int32_t *biasShift, const int8_t *lut) {
  const bf_i8_conv_args a = BF_I8_CONV_ARGS_OF(conv, quant);
  bf_i8_depthwise_conv2d(in, w, bias, out, a.N, a.C, a.H, a.W, a.M / a.C, a.OH, a.OW, a.KH, a.KW,
                         a.strideH, a.strideW, a.padT, a.padL, a.dilH, a.dilW,
                         BF_I8_QUANT_OFFSETS(a), outMult, outShift, BF_I8_QUANT_CLAMP(a), bias8,
                         biasMult, biasShift, BF_I8_STORE_LUT(lut));
  bf_i8_lut_after(out, (int64_t)a.N * a.M * a.OH * a.OW, lut);
}
