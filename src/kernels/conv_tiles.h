/*===- conv_tiles.h - Register-tiled direct convolution, one tile width ---===*
 *
 * Included by conv.c once per tile width (no include guard): before each
 * inclusion conv.c defines BF_CONV_MB, BF_CONV_PB and the names BF_TILE_VEC,
 * BF_ROW_WINDOW, BF_CONV_TILE, BF_CONV_BLOCKS of this width's copies.
 *===----------------------------------------------------------------------===*/

/* BF_CONV_PB floats as one vector (GCC/Clang vector extension): AVX/NEON
 * registers on hosts; LLVM splits it into scalar FPU registers on Cortex-M. */
typedef float BF_TILE_VEC __attribute__((vector_size(4 * BF_CONV_PB)));

/* Lanes j of row[d + j], zero where d + j is outside [0, W); needs W >=
 * BF_CONV_PB. One in-bounds vector load, shifted across lanes when the
 * window sticks out of the row (the padded border of a "same" convolution).
 * Called with constant d (first and last tile of a row, unrolled taps), the
 * branch folds and the lane moves become one shuffle, so border tiles run as
 * fast as inner ones instead of lane-by-lane checked loads. */
BF_INLINE void BF_ROW_WINDOW(BF_TILE_VEC *restrict v, const float *restrict row, int32_t d,
                             int32_t W) {
  if (d >= 0 && d <= W - BF_CONV_PB) {
    __builtin_memcpy(v, row + d, sizeof *v);
    return;
  }
  const int32_t at = d < 0 ? 0 : W - BF_CONV_PB;
  BF_TILE_VEC u;
  __builtin_memcpy(&u, row + at, sizeof u);
  const int32_t s = d - at; /* lane j takes u[j + s] */
  for (int32_t j = 0; j < BF_CONV_PB; ++j)
    (*v)[j] = (j + s >= 0 && j + s < BF_CONV_PB) ? u[(j + s) & (BF_CONV_PB - 1)] : 0.0f;
}

/* One tile (`mode` above). `x` points at input channel 0 of the group, `w` at
 * output channel m's weights; `stride` is a literal at the call sites so the
 * loads are contiguous in the common stride-1 case. Lanes before `storeFrom`
 * are computed but not stored (the last tile of a row is shifted left to end
 * at the row's end and overlaps its neighbour). */
BF_INLINE void BF_CONV_TILE(const float *restrict x, const float *restrict w,
                            const float *restrict bias, float *restrict out, int32_t outPlane,
                            int32_t Cg, int32_t inPlane, int32_t W, int32_t KW, int32_t taps,
                            int32_t khBegin, int32_t khEnd, int32_t ihBase, int32_t dilH,
                            int32_t iwBase, int32_t dilW, int32_t stride, int32_t mode,
                            int32_t count, int32_t storeFrom) {
  const int32_t checked = mode == BF_TILE_CHECKED;
  /* Zeroed first: writing one lane reads the whole vector (gcc's
   * -Wmaybe-uninitialized); the optimiser drops the dead stores. */
  BF_TILE_VEC acc[BF_CONV_MB] = {{0}};
  for (int32_t mi = 0; mi < BF_CONV_MB; ++mi) {
    const float b = bias ? bias[mi] : 0.0f;
    for (int32_t j = 0; j < BF_CONV_PB; ++j)
      acc[mi][j] = b;
  }
  const int64_t wStrideM = (int64_t)Cg * taps;
  if (taps == 1 && stride == 1 && mode == BF_TILE_INSIDE) {
    /* Pointwise: one running pointer per operand keeps the loop tight. */
    const float *xp = x + (int64_t)ihBase * W + iwBase;
    const float *wp = w;
    BF_NO_VECTORIZE
    for (int32_t c = 0; c < Cg; ++c) {
      BF_TILE_VEC xv;
      __builtin_memcpy(&xv, xp, sizeof xv);
      for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)
        acc[mi] += wp[mi * wStrideM] * xv;
      xp += inPlane;
      wp += 1;
    }
    for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)
      __builtin_memcpy(out + (int64_t)mi * outPlane, &acc[mi], sizeof acc[mi]);
    return;
  }
  /* General taps: running pointers over channels, rows and columns. */
  const float *xc = x + (int64_t)(ihBase + khBegin * dilH) * W + iwBase;
  const float *wc = w + khBegin * KW;
  const int32_t rows = khEnd - khBegin, rowStep = dilH * W;
  BF_NO_VECTORIZE
  for (int32_t c = 0; c < Cg; ++c) {
    const float *xr = xc, *wr = wc;
    BF_NO_VECTORIZE
    for (int32_t r = 0; r < rows; ++r) {
      if (mode == BF_TILE_SHIFTED) {
        /* Unrolled so every window offset is a constant (its shuffle folds);
         * only speed builds take this mode, so Os code is not unrolled. */
        BF_NO_VECTORIZE_UNROLL
        for (int32_t kw = 0; kw < KW; ++kw) {
          BF_TILE_VEC xv;
          BF_ROW_WINDOW(&xv, xr - iwBase, iwBase + kw * dilW, W);
          for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)
            acc[mi] += wr[mi * wStrideM + kw] * xv;
        }
        xr += rowStep;
        wr += KW;
        continue;
      }
      BF_NO_VECTORIZE
      for (int32_t kw = 0; kw < KW; ++kw) {
        const float *xs = xr + kw * dilW;
        BF_TILE_VEC xv;
        if (checked) {
          /* Border / row-end tile: zeros where the tap falls outside. */
          const int32_t iw0 = iwBase + kw * dilW;
          for (int32_t j = 0; j < BF_CONV_PB; ++j) {
            const int32_t iw = iw0 + j * stride;
            xv[j] = (j < count && iw >= 0 && iw < W) ? xs[j * stride] : 0.0f;
          }
        } else if (stride == 1) {
          __builtin_memcpy(&xv, xs, sizeof xv);
        } else {
          for (int32_t j = 0; j < BF_CONV_PB; ++j)
            xv[j] = xs[j * stride];
        }
        for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)
          acc[mi] += wr[mi * wStrideM + kw] * xv;
      }
      xr += rowStep;
      wr += KW;
    }
    xc += inPlane;
    wc += taps;
  }
  for (int32_t mi = 0; mi < BF_CONV_MB; ++mi) {
    if (checked) {
      for (int32_t j = 0; j < count; ++j)
        out[(int64_t)mi * outPlane + j] = acc[mi][j];
    } else if (storeFrom > 0) {
      for (int32_t j = storeFrom; j < BF_CONV_PB; ++j)
        out[(int64_t)mi * outPlane + j] = acc[mi][j];
    } else {
      __builtin_memcpy(out + (int64_t)mi * outPlane, &acc[mi], sizeof acc[mi]);
    }
  }
}

/* `blocks` groups of BF_CONV_MB output channels of one image and group. The
 * pixel tile is the outer loop so its input columns stay in L1 while every
 * channel block consumes them. */
BF_INLINE void BF_CONV_BLOCKS(const float *restrict x, const float *restrict w,
                              const float *restrict bias, float *restrict out, int32_t blocks,
                              int32_t Cg, int32_t H, int32_t W, int32_t OH, int32_t OW, int32_t KH,
                              int32_t KW, int32_t strideH, int32_t strideW, int32_t padT,
                              int32_t padL, int32_t dilH, int32_t dilW) {
  const int32_t inPlane = H * W, outPlane = OH * OW, taps = KH * KW;
  /* Output columns whose taps are all inside the row. */
  int32_t owSafeBegin, owSafeEnd;
  bf_valid_range(OW, W - (KW - 1) * dilW, strideW, padL, 0, &owSafeBegin, &owSafeEnd);
  for (int32_t oh = 0; oh < OH; ++oh) {
    const int32_t ihBase = oh * strideH - padT;
    int32_t khBegin = 0, khEnd = KH;
    while (khBegin < KH && ihBase + khBegin * dilH < 0)
      ++khBegin;
    while (khEnd > khBegin && ihBase + (khEnd - 1) * dilH >= H)
      --khEnd;
    if (!bf_size_first && strideW == 1 && dilW == 1 && W >= BF_CONV_PB && OW >= BF_CONV_PB) {
      /* Stride 1: whole tiles only. The last one is shifted left to end at
       * the row's end; the first and last read the padded border through
       * shifted windows with constant offsets (BF_ROW_WINDOW). */
      const int32_t lastStart = OW - BF_CONV_PB;
      for (int32_t ow0 = 0;; ow0 += BF_CONV_PB) {
        const int32_t last = ow0 >= lastStart;
        const int32_t start = last ? lastStart : ow0;
        const int32_t iwBase = start - padL;
        const int inside = !last && iwBase >= 0 && iwBase + BF_CONV_PB + KW - 1 <= W;
        for (int32_t blk = 0; blk < blocks; ++blk) {
          const int32_t m = blk * BF_CONV_MB;
          const float *wm = w + (int64_t)m * Cg * taps;
          const float *bm = bias ? bias + m : 0;
          float *o = out + (int64_t)m * outPlane + (int64_t)oh * OW + start;
          if (inside && KW == 3)
            /* The most common kernel width, with its tap loop unrolled even in
             * a shared (unspecialised) copy of this kernel. */
            BF_CONV_TILE(x, wm, bm, o, outPlane, Cg, inPlane, W, 3, taps, khBegin, khEnd, ihBase,
                         dilH, iwBase, 1, 1, BF_TILE_INSIDE, BF_CONV_PB, 0);
          else if (inside)
            BF_CONV_TILE(x, wm, bm, o, outPlane, Cg, inPlane, W, KW, taps, khBegin, khEnd, ihBase,
                         dilH, iwBase, 1, 1, BF_TILE_INSIDE, BF_CONV_PB, 0);
          else if (ow0 == 0 && KW == 3)
            /* First tile: constant window offsets once specialised. */
            BF_CONV_TILE(x, wm, bm, o, outPlane, Cg, inPlane, W, 3, taps, khBegin, khEnd, ihBase,
                         dilH, -padL, 1, 1, BF_TILE_SHIFTED, BF_CONV_PB, 0);
          else if (ow0 == 0)
            BF_CONV_TILE(x, wm, bm, o, outPlane, Cg, inPlane, W, KW, taps, khBegin, khEnd, ihBase,
                         dilH, -padL, 1, 1, BF_TILE_SHIFTED, BF_CONV_PB, 0);
          else if (last && KW == 3)
            BF_CONV_TILE(x, wm, bm, o, outPlane, Cg, inPlane, W, 3, taps, khBegin, khEnd, ihBase,
                         dilH, lastStart - padL, 1, 1, BF_TILE_SHIFTED, BF_CONV_PB,
                         ow0 - lastStart);
          else if (last)
            BF_CONV_TILE(x, wm, bm, o, outPlane, Cg, inPlane, W, KW, taps, khBegin, khEnd, ihBase,
                         dilH, lastStart - padL, 1, 1, BF_TILE_SHIFTED, BF_CONV_PB,
                         ow0 - lastStart);
          else
            /* Padding wider than a tile: lane by lane. */
            BF_CONV_TILE(x, wm, bm, o, outPlane, Cg, inPlane, W, KW, taps, khBegin, khEnd, ihBase,
                         dilH, iwBase, 1, 1, BF_TILE_CHECKED, BF_CONV_PB, 0);
        }
        if (last)
          break;
      }
      continue;
    }
    for (int32_t ow0 = 0; ow0 < OW; ow0 += BF_CONV_PB) {
      const int32_t count = OW - ow0 < BF_CONV_PB ? OW - ow0 : BF_CONV_PB;
      const int32_t iwBase = ow0 * strideW - padL;
      const int interior =
          count == BF_CONV_PB && ow0 >= owSafeBegin && ow0 + BF_CONV_PB <= owSafeEnd;
      for (int32_t blk = 0; blk < blocks; ++blk) {
        const int32_t m = blk * BF_CONV_MB;
        const float *wm = w + (int64_t)m * Cg * taps;
        const float *bm = bias ? bias + m : 0;
        float *o = out + (int64_t)m * outPlane + (int64_t)oh * OW + ow0;
        if (interior && strideW == 1 && KW == 3)
          BF_CONV_TILE(x, wm, bm, o, outPlane, Cg, inPlane, W, 3, taps, khBegin, khEnd, ihBase,
                       dilH, iwBase, dilW, 1, BF_TILE_INSIDE, BF_CONV_PB, 0);
        else if (interior && strideW == 1)
          BF_CONV_TILE(x, wm, bm, o, outPlane, Cg, inPlane, W, KW, taps, khBegin, khEnd, ihBase,
                       dilH, iwBase, dilW, 1, BF_TILE_INSIDE, BF_CONV_PB, 0);
        else if (interior)
          BF_CONV_TILE(x, wm, bm, o, outPlane, Cg, inPlane, W, KW, taps, khBegin, khEnd, ihBase,
                       dilH, iwBase, dilW, strideW, BF_TILE_INSIDE, BF_CONV_PB, 0);
        else
          BF_CONV_TILE(x, wm, bm, o, outPlane, Cg, inPlane, W, KW, taps, khBegin, khEnd, ihBase,
                       dilH, iwBase, dilW, strideW, BF_TILE_CHECKED, count, 0);
      }
    }
  }
}
