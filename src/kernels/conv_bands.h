/*===- conv_bands.h - Narrow and stride-2 full convolutions, host paths --===*
 * Included once by conv.c: the flat runs of patch-stage tiles and the
 * zero-padded, phase-split bands. Hosts only (BF_DW_PAD_FLOATS > 0). */
/* ---- Narrow planes as flat runs, in place -----------------------------
 * Patch-stage tiles are a few columns wide (ResNet-8's second stage: 3 to 6
 * output columns). Without dilation and with stride 1, output (oh, ow)
 * reads offset (oh * P + ow) + kh * P + kw of a plane of pitch P, so the
 * outputs g = oh * P + ow form one flat run of whole unchecked tiles: the
 * P - OW wrap-around lanes of each row are computed and dropped. Interior
 * tiles need no padding, so the run reads the tile's own buffer in place
 * (no copy, unlike the phase-split bands below, which take the stride-2 and
 * the wider narrow planes); border tiles, and on AVX-512 runs shorter than
 * one 16-lane tile, read a zero-padded stack copy (hosts only). `plan -v`
 * says which patch stages take these (PatchStage.h's kFlatRunColumns is
 * BF_NARROW_PB on 64-bit hosts). */
#if BF_DW_PAD_FLOATS > 0
#define BF_FLAT_PAD_FLOATS 4096
/* Longer rows would drop more lanes than the checked tile leaves idle. */
#define BF_FLAT_MAX_PITCH (2 * BF_NARROW_PB)

/* Rows and columns from the first tap of output 0 to the last tap of the
 * last output. */
BF_INLINE int64_t bf_span(int32_t outLen, int32_t stride, int32_t K) {
  return (int64_t)(outLen - 1) * stride + K;
}

/* The pitch of the stride-1 flat run (0: the plane does not take it) and
 * whether it needs the padded copy. */
BF_INLINE int32_t bf_conv_flat_pitch(int32_t Cg, int32_t H, int32_t W, int32_t OH, int32_t OW,
                                     int32_t KH, int32_t KW, int32_t strideH, int32_t strideW,
                                     int32_t padT, int32_t padL, int32_t dilH, int32_t dilW,
                                     int *copy) {
  if (strideH != 1 || strideW != 1 || dilH != 1 || dilW != 1 || OW >= BF_NARROW_PB)
    return 0;
  const int64_t PH = bf_span(OH, 1, KH), PW = bf_span(OW, 1, KW);
  *copy = !(padT == 0 && padL == 0 && PH <= H && PW <= W);
  const int64_t pitch = *copy ? PW : W;
  if (pitch > BF_FLAT_MAX_PITCH || (OH - 1) * pitch + OW < BF_NARROW_PB)
    return 0;
  if (*copy && (int64_t)Cg * PH * PW > BF_FLAT_PAD_FLOATS)
    return 0;
  return (int32_t)pitch;
}

/* Keeps the lanes of a flat tile from `start` that are outputs:
 * g = oh * P + ow with ow < OW, the first `count` lanes (<= lanes). */
BF_INLINE void bf_flat_store(const float *restrict tile, int32_t lanes, int32_t count,
                             float *restrict out, int32_t outPlane, int32_t OW, int32_t P,
                             int32_t start) {
  int32_t oh = start / P, ow = start - oh * P;
  for (int32_t j = 0; j < count; ++j) {
    if (ow < OW)
      for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)
        out[(int64_t)mi * outPlane + oh * OW + ow] = tile[mi * lanes + j];
    if (++ow == P) {
      ow = 0;
      ++oh;
    }
  }
}

#if defined(BF_WIDE_TILES)
BF_INLINE void bf_phase_tile_wide2(const float *restrict x, const int32_t *restrict off,
                                   int32_t taps, const float *restrict w, int64_t wStrideM,
                                   const float *restrict bias, float *restrict o, int32_t oStride,
                                   int32_t Cg, int32_t chanStride);
#endif

/* Taps of the two-vector flat tile (bf_conv_blocks_flat). */
#define BF_FLAT_PAIR_TAPS 49

/* `blocks` groups of BF_CONV_MB output channels over the stride-1 flat run
 * of pitch P (bf_conv_flat_pitch). */
BF_INLINE void bf_conv_blocks_flat(const float *restrict x, const float *restrict w,
                                   const float *restrict bias, float *restrict out, int32_t blocks,
                                   int32_t Cg, int32_t H, int32_t W, int32_t OH, int32_t OW,
                                   int32_t KH, int32_t KW, int32_t padT, int32_t padL, int32_t P,
                                   int copy) {
  /* Room for one tile's lanes past the run (see `single` below). */
  float padded[BF_FLAT_PAD_FLOATS + 32];
  int32_t PH = H;
  /* The last tile is shifted left to end at the run's end, so no tile reads
   * past the plane (the run's last output reads its last input). */
  const int32_t runEnd = (OH - 1) * P + OW;
#if defined(BF_WIDE_TILES)
  /* A run shorter than 16 (ResNet-8's 3x3 patch-stage tiles, pitch 5: 13)
   * takes one 16-lane tile over the padded copy, whose lanes past the run
   * read the copy's zero tail or the next channel and are dropped: on
   * AVX-512 hosts an 8-lane tile costs as much as a 16-lane one, and two of
   * them ran. Planes the copy cannot hold keep the 8-lane tiles. */
  const int single =
      runEnd < BF_WIDE_PB && (int64_t)Cg * bf_span(OH, 1, KH) * P <= BF_FLAT_PAD_FLOATS;
  /* Runs of 17-32 (4-row tiles) likewise take one two-vector tile
   * (bf_phase_tile_wide2: 10 loads per 16 FMAs) instead of two overlapping
   * 16-lane ones (18). */
  const int pair = runEnd > BF_WIDE_PB && runEnd <= 2 * BF_WIDE_PB &&
                   KH * KW <= BF_FLAT_PAIR_TAPS &&
                   (int64_t)Cg * bf_span(OH, 1, KH) * P <= BF_FLAT_PAD_FLOATS;
#else
  const int single = 0, pair = 0;
#endif
  copy |= single | pair;
  if (copy) {
    PH = (int32_t)bf_span(OH, 1, KH);
    /* Input rows and columns that land inside the padded plane. */
    const int32_t ihBegin = padT < 0 ? -padT : 0, ihEnd = PH - padT < H ? PH - padT : H;
    const int32_t iwBegin = padL < 0 ? -padL : 0, iwEnd = P - padL < W ? P - padL : W;
    for (int32_t i = 0; i < Cg * PH * P + 32; ++i)
      padded[i] = 0.0f;
    for (int32_t c = 0; c < Cg; ++c)
      for (int32_t ih = ihBegin; ih < ihEnd; ++ih)
        for (int32_t iw = iwBegin; iw < iwEnd; ++iw)
          padded[(c * PH + ih + padT) * P + iw + padL] = x[((int64_t)c * H + ih) * W + iw];
    x = padded;
  }
  const int32_t inPlane = PH * P, outPlane = OH * OW, taps = KH * KW;
#if defined(BF_WIDE_TILES)
  if (single) {
    for (int32_t blk = 0; blk < blocks; ++blk) {
      const int32_t m = blk * BF_CONV_MB;
      float tile[BF_CONV_MB * BF_WIDE_PB];
      bf_conv_tile_wide(x, w + (int64_t)m * Cg * taps, bias ? bias + m : 0, tile, BF_WIDE_PB, Cg,
                        inPlane, P, KW, taps, 0, KH, 0, 1, 0, 1, 1, BF_TILE_INSIDE, BF_WIDE_PB, 0);
      bf_flat_store(tile, BF_WIDE_PB, runEnd, out + (int64_t)m * outPlane, outPlane, OW, P, 0);
    }
    return;
  }
  if (pair) {
    int32_t off[BF_FLAT_PAIR_TAPS];
    for (int32_t kh = 0; kh < KH; ++kh)
      for (int32_t kw = 0; kw < KW; ++kw)
        off[kh * KW + kw] = kh * P + kw;
    for (int32_t blk = 0; blk < blocks; ++blk) {
      const int32_t m = blk * BF_CONV_MB;
      float tile[BF_CONV_MB * 2 * BF_WIDE_PB];
      bf_phase_tile_wide2(x, off, taps, w + (int64_t)m * Cg * taps, (int64_t)Cg * taps,
                          bias ? bias + m : 0, tile, 2 * BF_WIDE_PB, Cg, inPlane);
      bf_flat_store(tile, 2 * BF_WIDE_PB, runEnd, out + (int64_t)m * outPlane, outPlane, OW, P, 0);
    }
    return;
  }
  /* Runs of 16 or more: the AVX-512 tiles, as for whole rows. */
  const int32_t lanes = runEnd >= BF_WIDE_PB ? BF_WIDE_PB : BF_NARROW_PB;
#else
  const int32_t lanes = BF_NARROW_PB;
#endif
  const int32_t lastStart = runEnd - lanes;
  for (int32_t g0 = 0;; g0 += lanes) {
    const int32_t start = g0 < lastStart ? g0 : lastStart;
    for (int32_t blk = 0; blk < blocks; ++blk) {
      const int32_t m = blk * BF_CONV_MB;
      float tile[BF_CONV_MB * 16];
#if defined(BF_WIDE_TILES)
      if (lanes == BF_WIDE_PB)
        bf_conv_tile_wide(x, w + (int64_t)m * Cg * taps, bias ? bias + m : 0, tile, BF_WIDE_PB, Cg,
                          inPlane, P, KW, taps, 0, KH, 0, 1, start, 1, 1, BF_TILE_INSIDE,
                          BF_WIDE_PB, 0);
      else
#endif
        bf_conv_tile(x, w + (int64_t)m * Cg * taps, bias ? bias + m : 0, tile, BF_NARROW_PB, Cg,
                     inPlane, P, KW, taps, 0, KH, 0, 1, start, 1, 1, BF_TILE_INSIDE, BF_NARROW_PB,
                     0);
      bf_flat_store(tile, lanes, lanes, out + (int64_t)m * outPlane, outPlane, OW, P, start);
    }
    if (start == lastStart)
      break;
  }
}
#endif

/* ---- Full convolutions through a zero-padded, phase-split copy ---------
 * Two shapes ran far below the row kernels' MAC rate: stride-1 rows
 * narrower than the widest tile (ResNet's 14x14 and 7x7 stages, SqueezeNet's
 * 13x13: 8-float tiles two thirds useful, or lane-by-lane checked tiles
 * below 8 columns) and every stride-2 convolution (a strided gather per tap
 * and lane; ResNet-8's two stride-2 3x3 layers took 38% of its time). Here a
 * band of output rows copies the input rows it reads into a zero-padded
 * stack buffer, split by the parity of row and column when the stride is 2
 * (phase (r % s, c % s) holds padded element (r, c) at (r / s, c / s)), so
 * that in every phase the tap (kh, kw) of output (oh, ow) is at row
 * oh + kh / s, column ow + kw / s: contiguous along ow for any stride. Each
 * BF_CONV_MB-channel block then runs whole tiles along one flat span over
 * the band (output pitch Q, the phase width; the Q - OW wrap-around outputs
 * per row are computed into a scratch span and dropped when it is copied
 * out), every tap of every lane inside. On AVX-512 the bands also take
 * stride-1 rows that whole row tiles would overrun (bf_conv_phase_rows).
 * Hosts only: the buffers take
 * BF_CONV_PAD_FLOATS + BF_CONV_MB * BF_CONV_FLAT_FLOATS floats of stack
 * (clang-16 -O2 -fstack-usage on x86-64: bf_conv_phase_blocks 296,280
 * bytes, its caller bf_conv2d_f32 45,496 more). They stay on the stack, not
 * in the planner's workspace as device scratch is: the band size is chosen
 * here at run time (bf_conv_phase_rows), so the lowering would need a C++
 * copy of that choice per host family, a new workspace argument through
 * bf_conv2d_f32, the fused ConvPool and the patch tiles, and every host
 * plan (memory.json, the README's host figures) would grow by it. Cortex-M
 * builds (BF_DW_PAD_FLOATS 0) never take this path. */
#if BF_DW_PAD_FLOATS > 0
#define BF_CONV_PAD_FLOATS 65536
#define BF_CONV_FLAT_FLOATS 1024
#define BF_CONV_PHASE_K 7
/* Floats after each stride-2 phase plane: bf_phase_split_row stores whole
 * 8-float chunks, up to 7 floats past a row. */
#define BF_CONV_PHASE_SLACK 8

/* Floats of one phase plane of `bandRows` rows of Q. */
BF_INLINE int64_t bf_phase_plane(int64_t bandRows, int32_t Q, int32_t s) {
  return bandRows * Q + (s == 2 ? BF_CONV_PHASE_SLACK : 0);
}

/* Phase width Q and the output rows per band (0: does not apply). */
BF_INLINE int32_t bf_conv_phase_rows(int32_t Cg, int32_t Mg, int32_t OH, int32_t OW, int32_t KH,
                                     int32_t KW, int32_t strideH, int32_t strideW, int32_t dilH,
                                     int32_t dilW, int32_t *Q) {
  const int32_t s = strideH;
  if (strideW != s || (s != 1 && s != 2) || dilH != 1 || dilW != 1 || Mg < BF_CONV_MB ||
      KH > BF_CONV_PHASE_K || KW > BF_CONV_PHASE_K || KH * KW == 1)
    return 0;
    /* Stride-1 rows at least as wide as the widest tile keep the row
     * kernels, except on AVX-512 where whole row tiles would compute more
     * lanes per row than the band's span (OW + KW - 1): rows of 55 take 64
     * lanes of row tiles against 57 here, and the band's two-vector tile
     * (bf_phase_tile_wide2) is FMA-bound where the row tile is load-bound.
     * Rows that are a multiple of 16 (ResNet-8's 32 and 16) stay on the row
     * tiles, which were faster there. */
#if defined(BF_WIDE_TILES)
  if (s == 1 && OW >= BF_WIDE_PB && (OW + BF_WIDE_PB - 1) / BF_WIDE_PB * BF_WIDE_PB <= OW + KW - 1)
    return 0;
#else
  if (s == 1 && OW >= BF_NARROW_PB)
    return 0;
#endif
  *Q = OW - 1 + (KW + s - 1) / s;
  int32_t rows = BF_CONV_FLAT_FLOATS / *Q;
  rows = rows < OH ? rows : OH;
  /* Cg * s^2 phases of ((rows - 1) * s + KH) / s rows, rounded up. */
  while (rows > 0 &&
         (int64_t)Cg * s * s * bf_phase_plane(((rows - 1) * s + KH + s - 1) / s, *Q, s) >
             BF_CONV_PAD_FLOATS)
    --rows;
  if (rows == 0 || (int64_t)(rows - 1) * *Q + OW < BF_NARROW_PB)
    return 0;
  /* A one-row stride-1 band is the row itself: the copy buys nothing (the
   * fused ConvPool computes one conv row per call). */
  if (s == 1 && rows == 1)
    return 0;
  return rows;
}

/* One padded row's two column phases for stride 2: even[j] = xr[2j] for j
 * in [jBegin[0], jEnd[0]), odd[j] = xr[2j + 1] for j in [jBegin[1],
 * jEnd[1]), zero elsewhere below Q; `at` is xr's offset from the first of
 * the `total` floats that may be read (negative with a left pad). Whole
 * 8-float chunks, de-interleaved from one 16-float load by two shuffles:
 * the two strided scalar loops were a third of the time of ResNet-8's
 * stride-2 patch-stage tiles (5-7 columns per phase). A chunk stores up to
 * 7 zeros past Q, into the next row of its phase plane (written after it,
 * or padding) or the plane's slack (BF_CONV_PHASE_SLACK). */
typedef float bf_phase_v16 __attribute__((vector_size(64)));
typedef float bf_phase_v8 __attribute__((vector_size(32)));
typedef int32_t bf_phase_i8 __attribute__((vector_size(32)));
BF_INLINE void bf_phase_split_row(const float *restrict xr, int64_t at, int64_t total,
                                  const int32_t *jBegin, const int32_t *jEnd, int32_t Q,
                                  float *restrict even, float *restrict odd) {
  const bf_phase_i8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
  for (int32_t j0 = 0; j0 < Q; j0 += 8) {
    /* Input floats xr[2 * j0 + k], k < 16, at offset first + k of the
     * readable ones. */
    const int64_t first = at + 2 * j0;
    bf_phase_v16 v;
    if (first >= 0 && first + 16 <= total) {
      __builtin_memcpy(&v, xr + 2 * j0, sizeof v);
    } else {
      for (int32_t k = 0; k < 16; ++k)
        v[k] = first + k >= 0 && first + k < total ? xr[2 * j0 + k] : 0.0f;
    }
    const bf_phase_v8 ev = __builtin_shufflevector(v, v, 0, 2, 4, 6, 8, 10, 12, 14);
    const bf_phase_v8 od = __builtin_shufflevector(v, v, 1, 3, 5, 7, 9, 11, 13, 15);
    const bf_phase_i8 j = lane + j0;
    const bf_phase_i8 keepE = (j >= jBegin[0]) & (j < jEnd[0]);
    const bf_phase_i8 keepO = (j >= jBegin[1]) & (j < jEnd[1]);
    const bf_phase_v8 e = (bf_phase_v8)((bf_phase_i8)ev & keepE);
    const bf_phase_v8 o = (bf_phase_v8)((bf_phase_i8)od & keepO);
    __builtin_memcpy(even + j0, &e, sizeof e);
    __builtin_memcpy(odd + j0, &o, sizeof o);
  }
}

/* One BF_CONV_MB x PB tile at x (a phase-split band): tap t of channel c
 * is at x + c * chanStride + off[t], summed channel by channel in tap order
 * as the row kernels do; taps == 9 has its loop unrolled. */
#define BF_DEFINE_PHASE_TILE(NAME, VEC, PB)                                                        \
  BF_INLINE void NAME(const float *restrict x, const int32_t *restrict off, int32_t taps,          \
                      const float *restrict w, int64_t wStrideM, const float *restrict bias,       \
                      float *restrict o, int32_t oStride, int32_t Cg, int32_t chanStride) {        \
    const VEC zero = {0};                                                                          \
    VEC acc[BF_CONV_MB];                                                                           \
    for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)                                                    \
      acc[mi] = (bias ? bias[mi] : 0.0f) - zero; /* a splat, as in bf_phase_tile_wide2 */          \
    BF_NO_VECTORIZE                                                                                \
    for (int32_t c = 0; c < Cg; ++c) {                                                             \
      if (taps == 9) {                                                                             \
        BF_NO_VECTORIZE_UNROLL                                                                     \
        for (int32_t t = 0; t < 9; ++t) {                                                          \
          VEC xv;                                                                                  \
          __builtin_memcpy(&xv, x + off[t], sizeof xv);                                            \
          for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)                                              \
            acc[mi] += w[mi * wStrideM + t] * xv;                                                  \
        }                                                                                          \
      } else {                                                                                     \
        BF_NO_VECTORIZE                                                                            \
        for (int32_t t = 0; t < taps; ++t) {                                                       \
          VEC xv;                                                                                  \
          __builtin_memcpy(&xv, x + off[t], sizeof xv);                                            \
          for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)                                              \
            acc[mi] += w[mi * wStrideM + t] * xv;                                                  \
        }                                                                                          \
      }                                                                                            \
      x += chanStride;                                                                             \
      w += taps;                                                                                   \
    }                                                                                              \
    for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)                                                    \
      __builtin_memcpy(o + (int64_t)mi * oStride, &acc[mi], sizeof acc[mi]);                       \
  }
BF_DEFINE_PHASE_TILE(bf_phase_tile, bf_tile_vec, BF_NARROW_PB)
#if defined(BF_WIDE_TILES)
BF_DEFINE_PHASE_TILE(bf_phase_tile_wide, bf_tile_vec_wide, BF_WIDE_PB)

/* Two wide vectors per channel (32 outputs): 16 accumulators of AVX-512's
 * 32 registers, and each broadcast weight feeds two FMAs, so a tap costs 10
 * loads per 16 FMAs instead of 9 per 8 (the single tile is load-bound). */
BF_INLINE void bf_phase_tile_wide2(const float *restrict x, const int32_t *restrict off,
                                   int32_t taps, const float *restrict w, int64_t wStrideM,
                                   const float *restrict bias, float *restrict o, int32_t oStride,
                                   int32_t Cg, int32_t chanStride) {
  /* The bias as a splat (b - 0 is b, signed zeros included): filled lane by
   * lane, the null test stayed in the loop (16 masked moves per channel). */
  const bf_tile_vec_wide zero = {0};
  bf_tile_vec_wide acc[BF_CONV_MB][2];
  for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)
    acc[mi][0] = acc[mi][1] = (bias ? bias[mi] : 0.0f) - zero;
  BF_NO_VECTORIZE
  for (int32_t c = 0; c < Cg; ++c) {
    BF_NO_VECTORIZE
    for (int32_t t = 0; t < taps; ++t) {
      bf_tile_vec_wide x0, x1;
      __builtin_memcpy(&x0, x + off[t], sizeof x0);
      __builtin_memcpy(&x1, x + off[t] + BF_WIDE_PB, sizeof x1);
      for (int32_t mi = 0; mi < BF_CONV_MB; ++mi) {
        const float k = w[mi * wStrideM + t];
        acc[mi][0] += k * x0;
        acc[mi][1] += k * x1;
      }
    }
    x += chanStride;
    w += taps;
  }
  for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)
    __builtin_memcpy(o + (int64_t)mi * oStride, acc[mi], sizeof acc[mi]);
}
#endif
#undef BF_DEFINE_PHASE_TILE

/* Whole tiles along the flat span [0, L); the last one is shifted left to
 * end at L (it recomputes a few outputs). */
#define BF_CONV_PHASE_SPAN(TILE, PB)                                                               \
  for (int32_t v0 = 0;; v0 += (PB)) {                                                              \
    const int32_t v = v0 + (PB) > L ? L - (PB) : v0;                                               \
    TILE(phases + v, off, taps, wm, wStrideM, bm, flat + v, BF_CONV_FLAT_FLOATS, Cg, chanStride);  \
    if (v0 + (PB) >= L)                                                                            \
      break;                                                                                       \
  }

/* n >= 1 floats in fixed-size moves, the last one overlapping: a memcpy
 * of a run-time size was a libc call per row and channel (5-7 floats in
 * ResNet-8's stride-2 patch-stage tiles: 10% of their time). */
BF_INLINE void bf_copy_row(float *restrict d, const float *restrict s, int32_t n) {
  if (n >= 8) {
    for (int32_t i = 0; i + 8 <= n; i += 8)
      __builtin_memcpy(d + i, s + i, 8 * sizeof(float));
    __builtin_memcpy(d + n - 8, s + n - 8, 8 * sizeof(float));
  } else if (n >= 4) {
    __builtin_memcpy(d, s, 4 * sizeof(float));
    __builtin_memcpy(d + n - 4, s + n - 4, 4 * sizeof(float));
  } else {
    for (int32_t i = 0; i < n; ++i)
      d[i] = s[i];
  }
}

/* Output channels [0, blocks * BF_CONV_MB) of one image and group, `rows`
 * output rows at a time (bf_conv_phase_rows). */
BF_SHARED void bf_conv_phase_blocks(const float *restrict x, const float *restrict w,
                                    const float *restrict bias, float *restrict out, int32_t blocks,
                                    int32_t Cg, int32_t H, int32_t W, int32_t OH, int32_t OW,
                                    int32_t KH, int32_t KW, int32_t s, int32_t padT, int32_t padL,
                                    int32_t rows, int32_t Q) {
  const int32_t taps = KH * KW;
  const int64_t wStrideM = (int64_t)Cg * taps;
  const int32_t bandRows = ((rows - 1) * s + KH + s - 1) / s;
  const int32_t phasePlane = (int32_t)bf_phase_plane(bandRows, Q, s);
  const int32_t chanStride = s * s * phasePlane;
  float phases[BF_CONV_PAD_FLOATS], flat[BF_CONV_MB * BF_CONV_FLAT_FLOATS];
  int32_t off[BF_CONV_PHASE_K * BF_CONV_PHASE_K];
  for (int32_t kh = 0; kh < KH; ++kh)
    for (int32_t kw = 0; kw < KW; ++kw)
      off[kh * KW + kw] = ((kh % s) * s + kw % s) * phasePlane + (kh / s) * Q + kw / s;
  /* Phase column j of phase p holds padded column p + j * s, input column
   * p + j * s - padL: inside the row for j in [jBegin[p], jEnd[p]), the
   * same for every row and channel. */
  int32_t jBegin[2] = {0, 0}, jEnd[2] = {0, 0};
  for (int32_t p = 0; p < s; ++p)
    bf_valid_range(Q, W, s, padL, p, &jBegin[p], &jEnd[p]);
#if defined(BF_WIDE_TILES)
  /* Floats past the last channel's phases that a two-vector tile over a
   * span of 17-31 may read (zeroed), if the buffer holds them. */
  const int32_t wide2Tail =
      (int64_t)Cg * chanStride + 2 * BF_WIDE_PB <= BF_CONV_PAD_FLOATS ? 2 * BF_WIDE_PB : 0;
#else
  const int32_t wide2Tail = 0;
#endif
  for (int32_t band = 0; band < OH; band += rows) {
    /* A last band too short for one tile moves up to end at OH (it
     * recomputes rows of the band before). */
    int32_t oh0 = band, R = OH - band < rows ? OH - band : rows;
    if ((int64_t)(R - 1) * Q + OW < BF_NARROW_PB) {
      oh0 = OH - rows;
      R = rows;
    }
    /* Padded rows [oh0 * s, oh0 * s + PR) are input rows less padT. */
    const int32_t PR = (R - 1) * s + KH, r0 = oh0 * s - padT;
    for (int32_t i = 0; i < Cg * chanStride + wide2Tail; ++i)
      phases[i] = 0.0f;
    for (int32_t c = 0; c < Cg; ++c) {
      const float *xc = x + (int64_t)c * H * W;
      float *pc = phases + (int64_t)c * chanStride;
      for (int32_t r = 0; r < PR; ++r) {
        const int32_t ih = r0 + r;
        if (ih < 0 || ih >= H)
          continue;
        const float *xr = xc + (int64_t)ih * W - padL;
        /* s is 1 or 2 (bf_conv_phase_rows): as literals the copies are
         * plain or shuffled wide loads and the row's phase plane a shift;
         * with s a variable they were gathers (12% of this function's time
         * in SqueezeNet 1.1) and divisions per row. */
        if (s == 1) {
          float *pr = pc + r * Q;
          for (int32_t j = jBegin[0]; j < jEnd[0]; ++j)
            pr[j] = xr[j];
        } else {
          float *even = pc + (r & 1) * 2 * phasePlane + (r >> 1) * Q;
          bf_phase_split_row(xr, ((int64_t)c * H + ih) * W - padL, (int64_t)Cg * H * W, jBegin,
                             jEnd, Q, even, even + phasePlane);
        }
      }
    }
    const int32_t L = (R - 1) * Q + OW;
    for (int32_t blk = 0; blk < blocks; ++blk) {
      const int32_t m = blk * BF_CONV_MB;
      const float *wm = w + (int64_t)m * wStrideM;
      const float *bm = bias ? bias + m : 0;
#if defined(BF_WIDE_TILES)
      if (L >= 2 * BF_WIDE_PB && L % (2 * BF_WIDE_PB) != 0 && L % (2 * BF_WIDE_PB) <= BF_WIDE_PB) {
        /* A remainder of at most 16 lanes takes one 16-lane tile ending at
         * L instead of a 32-lane one (SqueezeNet 1.1's 13x13 span of 193:
         * 208 lanes instead of 224); every lane sums in the same order. */
        const int32_t L2 = L - L % (2 * BF_WIDE_PB);
        for (int32_t v = 0; v < L2; v += 2 * BF_WIDE_PB)
          bf_phase_tile_wide2(phases + v, off, taps, wm, wStrideM, bm, flat + v,
                              BF_CONV_FLAT_FLOATS, Cg, chanStride);
        bf_phase_tile_wide(phases + L - BF_WIDE_PB, off, taps, wm, wStrideM, bm,
                           flat + L - BF_WIDE_PB, BF_CONV_FLAT_FLOATS, Cg, chanStride);
      } else if (L >= 2 * BF_WIDE_PB) {
        BF_CONV_PHASE_SPAN(bf_phase_tile_wide2, 2 * BF_WIDE_PB)
      } else if (L > BF_WIDE_PB && wide2Tail) {
        /* 17-31 lanes (stride-2 patch-stage tiles: 5x5 outputs span 29): one
         * two-vector tile, reading past the span into the zeroed tail,
         * instead of two overlapping 16-lane tiles (9 loads per 8 FMAs). */
        bf_phase_tile_wide2(phases, off, taps, wm, wStrideM, bm, flat, BF_CONV_FLAT_FLOATS, Cg,
                            chanStride);
      } else if (L >= BF_WIDE_PB) {
        BF_CONV_PHASE_SPAN(bf_phase_tile_wide, BF_WIDE_PB)
      } else
#endif
      {
        BF_CONV_PHASE_SPAN(bf_phase_tile, BF_NARROW_PB)
      }
      for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)
        for (int32_t r = 0; r < R; ++r)
          bf_copy_row(out + (int64_t)(m + mi) * OH * OW + (int64_t)(oh0 + r) * OW,
                      flat + mi * BF_CONV_FLAT_FLOATS + r * Q, OW);
    }
  }
}
#undef BF_CONV_PHASE_SPAN
#endif
