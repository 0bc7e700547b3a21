/*===- conv_pointwise.h - 1x1 convolution as a register-tiled product ---===*
 * Included once by conv.c, inside its translation unit, so the BF_INLINE
 * routines still specialise with the caller's constants; a file of its own
 * so that conv.c reads as the direct convolution. */
/* ---- Pointwise (1x1, stride 1, unpadded) as a matrix product -------------
 * out[M][P] = w[M][C] * x[C][P] (+ bias), P = the output plane. A register
 * tile of BF_PW_MB output channels x BF_PW_NV vectors of BF_PW_VL columns
 * accumulates over a chunk of BF_PW_KC input channels (so the chunk's
 * columns stay in L1 while every channel block reads them); later chunks
 * add to the stored partial sums. Column tails reuse full vectors shifted
 * left to end at the plane's last column, so every load stays in bounds;
 * lanes left of the tail are recomputed but not stored; on hosts a few
 * columns left over after whole vectors go as dot products instead
 * (bf_pw_dot_cols). Relu and Clip clamp the registers at the store.
 * Host: 4 x 3 vectors of 8 (12 accumulators, 16 AVX registers); AVX-512:
 * 4 x 3 vectors of 16; Cortex-M: 4 x 4 scalars. */
#if defined(BF_WIDE_TILES)
/* 128 channels x 48 columns: the chunk's 24 KB of x stay in a 32-48 KB L1
 * with the weights streaming past (256 filled it: C = 480 at 14x14 ran
 * 20% slower). */
#define BF_PW_VL 16
#define BF_PW_MB 4
#define BF_PW_NV 3
#define BF_PW_KC 128
#elif (defined(__x86_64__) || defined(__aarch64__)) && !defined(BF_SMALL_TILES)
#define BF_PW_VL 8
#define BF_PW_MB 4
#define BF_PW_NV 3
#define BF_PW_KC 256
#else
#define BF_PW_VL 4
#define BF_PW_MB 4
#define BF_PW_NV 1
#define BF_PW_KC 128
#endif
typedef float bf_pw_vec __attribute__((vector_size(4 * BF_PW_VL)));

/* One tile: `mb` (<= BF_PW_MB) channels x `nv` vectors starting at columns
 * col[j] (relative to x/out); lanes of vector 0 before column `storeFrom`
 * are not stored. Output channels are P floats apart, input channels xs. */
BF_INLINE void bf_pw_tile(const float *restrict x, const float *restrict w,
                          const float *restrict bias, float *restrict out, int32_t P, int64_t xs,
                          int32_t C, int32_t kc, int32_t mb, int32_t nv, const int32_t *col,
                          int32_t storeFrom, int32_t first, int32_t last, int32_t act, float actA,
                          float actB) {
  bf_pw_vec acc[BF_PW_MB][BF_PW_NV];
  for (int32_t mi = 0; mi < mb; ++mi)
    for (int32_t j = 0; j < nv; ++j) {
      if (first) {
        const float b = bias ? bias[mi] : 0.0f;
        for (int32_t t = 0; t < BF_PW_VL; ++t)
          acc[mi][j][t] = b;
      } else {
        __builtin_memcpy(&acc[mi][j], out + (int64_t)mi * P + col[j], sizeof(bf_pw_vec));
      }
    }
  const float *xp = x, *wp = w;
  BF_NO_VECTORIZE
  for (int32_t c = 0; c < kc; ++c) {
    bf_pw_vec xv[BF_PW_NV];
    for (int32_t j = 0; j < nv; ++j)
      __builtin_memcpy(&xv[j], xp + col[j], sizeof(bf_pw_vec));
    for (int32_t mi = 0; mi < mb; ++mi) {
      const float wv = wp[(int64_t)mi * C];
      for (int32_t j = 0; j < nv; ++j)
        acc[mi][j] += wv * xv[j];
    }
    xp += xs;
    wp += 1;
  }
  /* Relu and Clip clamp the registers before the store; the other
   * activations run over the stored columns. */
  const int32_t clamp = last && (act == BF_ACT_RELU || act == BF_ACT_CLIP);
  if (clamp) {
    const float lo = act == BF_ACT_RELU ? 0.0f : actA;
    for (int32_t mi = 0; mi < mb; ++mi)
      for (int32_t j = 0; j < nv; ++j)
        for (int32_t t = 0; t < BF_PW_VL; ++t)
          acc[mi][j][t] = bf_maxf(acc[mi][j][t], lo);
    if (act == BF_ACT_CLIP)
      for (int32_t mi = 0; mi < mb; ++mi)
        for (int32_t j = 0; j < nv; ++j)
          for (int32_t t = 0; t < BF_PW_VL; ++t)
            acc[mi][j][t] = bf_minf(acc[mi][j][t], actB);
  }
  for (int32_t mi = 0; mi < mb; ++mi) {
    float *o = out + (int64_t)mi * P;
    for (int32_t j = 0; j < nv; ++j) {
      if (col[j] >= storeFrom) {
        __builtin_memcpy(o + col[j], &acc[mi][j], sizeof(bf_pw_vec));
      } else {
        for (int32_t t = storeFrom - col[j]; t < BF_PW_VL; ++t)
          o[col[j] + t] = acc[mi][j][t];
      }
    }
    if (last && !clamp) {
      const int32_t lo = col[0] > storeFrom ? col[0] : storeFrom;
      bf_activate_array(o + lo, col[nv - 1] + BF_PW_VL - lo, act, actA, actB);
    }
  }
}

/* Every channel block of one column tile (`nv` vectors at col[]). */
BF_INLINE void bf_pw_columns(const float *restrict x, const float *restrict w,
                             const float *restrict bias, float *restrict out, int32_t P, int64_t xs,
                             int32_t C, int32_t M, int32_t kc, int32_t nv, const int32_t *col,
                             int32_t storeFrom, int32_t first, int32_t last, int32_t act,
                             float actA, float actB) {
  int32_t m = 0;
  for (; m + BF_PW_MB <= M; m += BF_PW_MB)
    bf_pw_tile(x, w + (int64_t)m * C, bias ? bias + m : 0, out + (int64_t)m * P, P, xs, C, kc,
               BF_PW_MB, nv, col, storeFrom, first, last, act, actA, actB);
  for (; m < M; ++m)
    bf_pw_tile(x, w + (int64_t)m * C, bias ? bias + m : 0, out + (int64_t)m * P, P, xs, C, kc, 1,
               nv, col, storeFrom, first, last, act, actA, actB);
}

BF_SHARED void bf_pw_cols1(const float *restrict x, const float *restrict w,
                           const float *restrict bias, float *restrict out, int32_t P, int64_t xs,
                           int32_t C, int32_t M, int32_t kc, const int32_t *col, int32_t storeFrom,
                           int32_t first, int32_t last, int32_t act, float actA, float actB) {
  bf_pw_columns(x, w, bias, out, P, xs, C, M, kc, 1, col, storeFrom, first, last, act, actA, actB);
}
#if BF_PW_NV == 3
BF_SHARED void bf_pw_cols2(const float *restrict x, const float *restrict w,
                           const float *restrict bias, float *restrict out, int32_t P, int64_t xs,
                           int32_t C, int32_t M, int32_t kc, const int32_t *col, int32_t storeFrom,
                           int32_t first, int32_t last, int32_t act, float actA, float actB) {
  bf_pw_columns(x, w, bias, out, P, xs, C, M, kc, 2, col, storeFrom, first, last, act, actA, actB);
}
BF_SHARED void bf_pw_cols3(const float *restrict x, const float *restrict w,
                           const float *restrict bias, float *restrict out, int32_t P, int64_t xs,
                           int32_t C, int32_t M, int32_t kc, const int32_t *col, int32_t storeFrom,
                           int32_t first, int32_t last, int32_t act, float actA, float actB) {
  bf_pw_columns(x, w, bias, out, P, xs, C, M, kc, 3, col, storeFrom, first, last, act, actA, actB);
}
#define bf_pw_colsN bf_pw_cols3

/* Sum of a vector's lanes, halving it in a tree. */
BF_INLINE float bf_pw_hsum(const bf_pw_vec *a) {
  bf_pw_vec v = *a;
#if BF_PW_VL == 16
  v += __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3);
#else
  v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);
#endif
  return (v[0] + v[2]) + (v[1] + v[3]);
}

/* w . x over n floats (a multiple of BF_PW_VL) in two vector accumulators. */
BF_INLINE float bf_pw_dot(const float *restrict w, const float *restrict x, int32_t n) {
  bf_pw_vec acc0 = {0}, acc1 = {0};
  int32_t c = 0;
  for (; c + 2 * BF_PW_VL <= n; c += 2 * BF_PW_VL) {
    bf_pw_vec w0, w1, x0, x1;
    __builtin_memcpy(&w0, w + c, sizeof w0);
    __builtin_memcpy(&w1, w + c + BF_PW_VL, sizeof w1);
    __builtin_memcpy(&x0, x + c, sizeof x0);
    __builtin_memcpy(&x1, x + c + BF_PW_VL, sizeof x1);
    acc0 += w0 * x0;
    acc1 += w1 * x1;
  }
  if (c < n) {
    bf_pw_vec w0, x0;
    __builtin_memcpy(&w0, w + c, sizeof w0);
    __builtin_memcpy(&x0, x + c, sizeof x0);
    acc0 += w0 * x0;
  }
  acc0 += acc1;
  return bf_pw_hsum(&acc0);
}

/* Column tail: the `r` (< BF_PW_VL) columns from `p0` as dot products over
 * the input channels (vectors along the chunk's kc channels, the column
 * gathered once into `xcol`), so a 7x7 plane's 49th column costs kc / VL
 * vector operations per output channel instead of the kc of a whole vector
 * of which one lane is kept. Chosen by bf_pw_dot_pays. */
BF_SHARED void bf_pw_dot_cols(const float *restrict x, const float *restrict w,
                              const float *restrict bias, float *restrict out, int32_t P,
                              int64_t xs, int32_t C, int32_t M, int32_t kc, int32_t p0, int32_t r,
                              int32_t first, int32_t last, int32_t act, float actA, float actB) {
  float xcol[BF_PW_VL - 1][BF_PW_KC];
  for (int32_t j = 0; j < r; ++j)
    for (int32_t c = 0; c < kc; ++c)
      xcol[j][c] = x[(int64_t)c * xs + p0 + j];
  const int32_t kv = kc - kc % BF_PW_VL;
  for (int32_t m = 0; m < M; ++m) {
    const float *wm = w + (int64_t)m * C;
    float *o = out + (int64_t)m * P + p0;
    for (int32_t j = 0; j < r; ++j) {
      float s = bf_pw_dot(wm, xcol[j], kv);
      for (int32_t c = kv; c < kc; ++c)
        s += wm[c] * xcol[j][c];
      o[j] = first ? s + (bias ? bias[m] : 0.0f) : o[j] + s;
    }
    if (last)
      bf_activate_array(o, r, act, actA, actB);
  }
}

/* A 1x1 plane (the FC layers of squeeze-and-excitation blocks): out[m] =
 * w[m] . x + bias[m], one dot product per weight row, the rows read in
 * order (one sequential stream through the weights, which come from L3 at
 * this size: the direct loops' 8-pixel tiles used one lane in 8, and
 * bf_pw_dot_cols' channel chunks stride across the rows). */
BF_SHARED void bf_pw_matvec(const float *restrict x, const float *restrict w,
                            const float *restrict bias, float *restrict out, int32_t C, int32_t M,
                            int32_t act, float actA, float actB) {
  const int32_t cv = C - C % BF_PW_VL;
  for (int32_t m = 0; m < M; ++m) {
    const float *wm = w + (int64_t)m * C;
    float s = bf_pw_dot(wm, x, cv);
    for (int32_t c = cv; c < C; ++c)
      s += wm[c] * x[c];
    out[m] = s + (bias ? bias[m] : 0.0f);
  }
  bf_activate_array(out, M, act, actA, actB);
}

/* Whether r tail columns cost less as dot products (about kc / VL + 3
 * vector operations each per output channel, the reduction included) than
 * as one more vector column (kc). */
BF_INLINE int bf_pw_dot_pays(int32_t r, int32_t kc) {
  return r > 0 && (int64_t)r * (kc / BF_PW_VL + 3) < kc;
}
#else
#define bf_pw_colsN bf_pw_cols1
#endif

#if defined(BF_WIDE_TILES)
/* ---- Pointwise on planes of 9-15 floats (3x3 under AVX-512) ------------
 * One 16-lane vector holds a channel's whole plane, so every FMA does P
 * useful lanes, where the direct loops' 8-wide tiles take two vectors per
 * plane (the second shifted back over the first) at half the width: 3.3x
 * slower on MobileNetV1-0.25's 256 -> 256 at 3x3. The lanes past P read the
 * next channel's first columns and are never kept; the last channel, whose
 * vector would pass the end of the input, is read from a zero-padded copy.
 * A row is stored as a whole vector whose lanes past P land on the next
 * row, which is stored after it; only the last row stores P lanes. */
#define BF_PW_SMALL_MB 16

BF_INLINE int bf_pw_small_applies(int32_t P) { return P > BF_PW_VL / 2 && P < BF_PW_VL; }

/* `mb` (<= BF_PW_SMALL_MB) output channels of one vector each, input
 * channels xs floats apart (the last read from `tail` when given), output
 * channels P floats apart; the last `lastRows` store only P lanes. */
BF_INLINE void bf_pw_small_tile(const float *restrict x, int64_t xs, const float *restrict tail,
                                const float *restrict w, const float *restrict bias,
                                float *restrict out, int32_t C, int32_t P, int32_t mb,
                                int32_t lastRows, int32_t act, float actA, float actB) {
  bf_pw_vec acc[BF_PW_SMALL_MB];
  for (int32_t mi = 0; mi < mb; ++mi) {
    const float b = bias ? bias[mi] : 0.0f;
    for (int32_t t = 0; t < BF_PW_VL; ++t)
      acc[mi][t] = b;
  }
  BF_NO_VECTORIZE
  for (int32_t c = 0; c < C; ++c) {
    bf_pw_vec xv;
    __builtin_memcpy(&xv, tail && c == C - 1 ? tail : x + (int64_t)c * xs, sizeof xv);
    BF_NO_VECTORIZE_UNROLL
    for (int32_t mi = 0; mi < mb; ++mi)
      acc[mi] += w[(int64_t)mi * C + c] * xv;
  }
  if (act == BF_ACT_RELU || act == BF_ACT_CLIP) {
    const float lo = act == BF_ACT_RELU ? 0.0f : actA;
    for (int32_t mi = 0; mi < mb; ++mi)
      for (int32_t t = 0; t < BF_PW_VL; ++t)
        acc[mi][t] = bf_maxf(acc[mi][t], lo);
    if (act == BF_ACT_CLIP)
      for (int32_t mi = 0; mi < mb; ++mi)
        for (int32_t t = 0; t < BF_PW_VL; ++t)
          acc[mi][t] = bf_minf(acc[mi][t], actB);
  }
  for (int32_t mi = 0; mi < mb; ++mi) {
    float *o = out + (int64_t)mi * P;
    if (mi < mb - lastRows) {
      __builtin_memcpy(o, &acc[mi], sizeof(bf_pw_vec));
    } else {
      for (int32_t t = 0; t < P; ++t)
        o[t] = acc[mi][t];
    }
  }
  if (act != BF_ACT_RELU && act != BF_ACT_CLIP)
    bf_activate_array(out, mb * P, act, actA, actB);
}

/* out [M][P] = w [M][C] x [C][P] (+ bias, activation) for
 * bf_pw_small_applies(P); input channels P floats apart. */
BF_SHARED void bf_pw_small(const float *restrict x, const float *restrict w,
                           const float *restrict bias, float *restrict out, int32_t C, int32_t M,
                           int32_t P, int32_t act, float actA, float actB) {
  float tail[BF_PW_VL] = {0};
  for (int32_t t = 0; t < P; ++t)
    tail[t] = x[(int64_t)(C - 1) * P + t];
  int32_t m = 0;
  for (; m + BF_PW_SMALL_MB <= M; m += BF_PW_SMALL_MB)
    bf_pw_small_tile(x, P, tail, w + (int64_t)m * C, bias ? bias + m : 0, out + (int64_t)m * P, C,
                     P, BF_PW_SMALL_MB, m + BF_PW_SMALL_MB == M, act, actA, actB);
  for (; m < M; ++m)
    bf_pw_small_tile(x, P, tail, w + (int64_t)m * C, bias ? bias + m : 0, out + (int64_t)m * P, C,
                     P, 1, m + 1 == M, act, actA, actB);
}

/* ---- Pointwise on exactly one vector of columns (P == 16, AVX-512) -------
 * bf_pointwise_inplace_f32's 16-pixel blocks (input channels a plane apart)
 * and 4x4 planes. The column tiles take 4 channels x 1 vector there: 4 FMA
 * chains, too few to cover the FMA latency (DS-CNN's in-place 1x1s spent
 * twice level 0's time); here bf_pw_small_tile's 16 channels x 1 vector,
 * each input channel's vector loaded once per 16 outputs. The sums run in
 * the column tiles' order (bias, then channel 0, 1, ...), so the results
 * are theirs. out [M][16] = w [M][C] x [C][16] (+ bias, activation), input
 * channels xs floats apart: 16 output channels at a time, then 4, then 1. */
BF_SHARED void bf_pw_one_vec(const float *restrict x, const float *restrict w,
                             const float *restrict bias, float *restrict out, int32_t C, int32_t M,
                             int64_t xs, int32_t act, float actA, float actB) {
  int32_t m = 0;
  for (; m + BF_PW_SMALL_MB <= M; m += BF_PW_SMALL_MB)
    bf_pw_small_tile(x, xs, 0, w + (int64_t)m * C, bias ? bias + m : 0, out + (int64_t)m * BF_PW_VL,
                     C, BF_PW_VL, BF_PW_SMALL_MB, 0, act, actA, actB);
  for (; m + 4 <= M; m += 4)
    bf_pw_small_tile(x, xs, 0, w + (int64_t)m * C, bias ? bias + m : 0, out + (int64_t)m * BF_PW_VL,
                     C, BF_PW_VL, 4, 0, act, actA, actB);
  for (; m < M; ++m)
    bf_pw_small_tile(x, xs, 0, w + (int64_t)m * C, bias ? bias + m : 0, out + (int64_t)m * BF_PW_VL,
                     C, BF_PW_VL, 1, 0, act, actA, actB);
}
#endif

/* out [M][P] = w [M][C] x [C][P] (+ bias, activation); input channels are
 * xs floats apart (P for a whole plane, more for a band of its rows). Needs
 * P >= BF_PW_VL. */
BF_INLINE void bf_pointwise(const float *restrict x, const float *restrict w,
                            const float *restrict bias, float *restrict out, int32_t C, int32_t M,
                            int32_t P, int64_t xs, int32_t act, float actA, float actB) {
#if defined(BF_WIDE_TILES)
  if (P == BF_PW_VL) {
    bf_pw_one_vec(x, w, bias, out, C, M, xs, act, actA, actB);
    return;
  }
#endif
  const int32_t NB = BF_PW_NV * BF_PW_VL;
  const int32_t pFull = P - P % NB, rest = P - pFull;
  /* Tail vectors: ceil(rest / VL) of them, the last ending at column P. */
  const int32_t tailNv = (rest + BF_PW_VL - 1) / BF_PW_VL;
  int32_t tailCol[BF_PW_NV], fullCol[BF_PW_NV];
  for (int32_t j = 0; j < BF_PW_NV; ++j) {
    const int32_t c = pFull + j * BF_PW_VL;
    tailCol[j] = c + BF_PW_VL > P ? P - BF_PW_VL : c;
    fullCol[j] = j * BF_PW_VL;
  }
  for (int32_t c0 = 0; c0 < C; c0 += BF_PW_KC) {
    const int32_t kc = C - c0 < BF_PW_KC ? C - c0 : BF_PW_KC;
    const int32_t first = c0 == 0, last = c0 + kc == C;
    const float *xk = x + (int64_t)c0 * xs, *wk = w + c0;
    for (int32_t p0 = 0; p0 < pFull; p0 += NB)
      bf_pw_colsN(xk + p0, wk, bias, out + p0, P, xs, C, M, kc, fullCol, 0, first, last, act, actA,
                  actB);
#if BF_PW_NV == 3
    if (bf_pw_dot_pays(rest % BF_PW_VL, kc)) {
      /* Whole vectors at their own columns (tailCol's first ones), the few
       * left as dot products. */
      const int32_t exactNv = rest / BF_PW_VL;
      if (exactNv == 2)
        bf_pw_cols2(xk, wk, bias, out, P, xs, C, M, kc, tailCol, pFull, first, last, act, actA,
                    actB);
      else if (exactNv == 1)
        bf_pw_cols1(xk, wk, bias, out, P, xs, C, M, kc, tailCol, pFull, first, last, act, actA,
                    actB);
      bf_pw_dot_cols(xk, wk, bias, out, P, xs, C, M, kc, pFull + exactNv * BF_PW_VL,
                     rest % BF_PW_VL, first, last, act, actA, actB);
    } else if (tailNv == 3)
      bf_pw_cols3(xk, wk, bias, out, P, xs, C, M, kc, tailCol, pFull, first, last, act, actA, actB);
    else if (tailNv == 2)
      bf_pw_cols2(xk, wk, bias, out, P, xs, C, M, kc, tailCol, pFull, first, last, act, actA, actB);
    else
#endif
        if (tailNv >= 1)
      bf_pw_cols1(xk, wk, bias, out, P, xs, C, M, kc, tailCol, pFull, first, last, act, actA, actB);
  }
}
