/*===- conv.c - 2-D convolution and transposed convolution, NCHW float32 ---===*/
#include "kernel_util.h"

/* First output index o in [0, outLen) whose input coordinate
 * o*stride - pad + k*dil is >= 0, and one past the last one that is < inLen. */
BF_INLINE void bf_valid_range(int32_t outLen, int32_t inLen, int32_t stride, int32_t pad,
                              int32_t offset, int32_t *first, int32_t *end) {
  int32_t lo = pad - offset; /* o*stride >= lo */
  int32_t start = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  int32_t hi = inLen - 1 + pad - offset; /* o*stride <= hi */
  int32_t stop = hi < 0 ? 0 : hi / stride + 1;
  if (stop > outLen)
    stop = outLen;
  if (start > stop)
    start = stop;
  *first = start;
  *end = stop;
}

/* Register tile of the direct convolution (conv_tiles.h): BF_CONV_MB output
 * channels x BF_CONV_PB neighbouring output pixels of one row are accumulated
 * in local arrays (registers once vectorized) over all input channels and
 * taps. The sizes are constants so the tile vectorizes and stays in registers
 * whatever the layer's shape: 8x8 for x86-64/AArch64 vector units (plus 8x16
 * for AVX-512, below), 4x4 for the 32 single-precision registers of a
 * Cortex-M FPU (BF_SMALL_TILES forces those on a host, for testing). */
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(BF_SMALL_TILES)
#define BF_CONV_MB 8
#define BF_NARROW_PB 8
#else
#define BF_CONV_MB 4
#define BF_NARROW_PB 4
#endif

/* 1 in size-first (Os) bundles: the code generator replaces this weak 0 with
 * a constant (BundleCodegen.cpp), so the speed-only convolution paths
 * (depthwise KxK rows and padded copies, pointwise GEMM tiles, whole-tile stride-1 rows) fold
 * away and only the general direct convolution is compiled. */
__attribute__((weak)) const int32_t bf_size_first = 0;

/* How a tile reads its input columns. */
enum {
  BF_TILE_INSIDE = 0,  /* every tap inside the row: plain (vector) loads */
  BF_TILE_CHECKED = 1, /* lane by lane, zero outside the row; `count` lanes */
  BF_TILE_SHIFTED = 2  /* stride 1, dilation 1, W >= BF_CONV_PB: see bf_row_window */
};

/* The tile code, once per width: 8 (4 on Cortex-M) pixels for every target,
 * and 16 for AVX-512 (BF_WIDE_TILES), taken by stride-1 rows at least 16
 * wide (16 on the 8-wide planes of LeNet or ResNet stages would waste half of
 * every tile). */
#define BF_CONV_PB BF_NARROW_PB
#define BF_TILE_VEC bf_tile_vec
#define BF_ROW_WINDOW bf_row_window
#define BF_CONV_TILE bf_conv_tile
#define BF_CONV_BLOCKS bf_conv_blocks
#include "conv_tiles.h"
#undef BF_TILE_VEC
#undef BF_ROW_WINDOW
#undef BF_CONV_TILE
#undef BF_CONV_BLOCKS
#undef BF_CONV_PB

#if defined(BF_WIDE_TILES)
#define BF_WIDE_PB 16
#define BF_CONV_PB BF_WIDE_PB
#define BF_TILE_VEC bf_tile_vec_wide
#define BF_ROW_WINDOW bf_row_window_wide
#define BF_CONV_TILE bf_conv_tile_wide
#define BF_CONV_BLOCKS bf_conv_blocks_wide
#include "conv_tiles.h"
#undef BF_TILE_VEC
#undef BF_ROW_WINDOW
#undef BF_CONV_TILE
#undef BF_CONV_BLOCKS
#undef BF_CONV_PB
#endif

/* One output channel by scattering each weight tap over the output plane:
 * used for the channels left over after the BF_CONV_MB blocks and the
 * depthwise shapes without a row kernel below (other kernel sizes,
 * dilations, column strides above 2). The inner loop runs over contiguous
 * output columns. */
BF_INLINE void bf_conv_channel(const float *restrict x, const float *restrict wk, float b0,
                               float *restrict o, int32_t Cg, int32_t H, int32_t W, int32_t OH,
                               int32_t OW, int32_t KH, int32_t KW, int32_t strideH, int32_t strideW,
                               int32_t padT, int32_t padL, int32_t dilH, int32_t dilW) {
  const int32_t inPlane = H * W, outPlane = OH * OW, taps = KH * KW;
  for (int32_t i = 0; i < outPlane; ++i)
    o[i] = b0;
  for (int32_t c = 0; c < Cg; ++c) {
    const float *xc = x + (int64_t)c * inPlane;
    for (int32_t kh = 0; kh < KH; ++kh) {
      int32_t ohBegin, ohEnd;
      bf_valid_range(OH, H, strideH, padT, kh * dilH, &ohBegin, &ohEnd);
      for (int32_t kw = 0; kw < KW; ++kw) {
        int32_t owBegin, owEnd;
        bf_valid_range(OW, W, strideW, padL, kw * dilW, &owBegin, &owEnd);
        const float k = wk[(int64_t)c * taps + kh * KW + kw];
        for (int32_t oh = ohBegin; oh < ohEnd; ++oh) {
          const float *xr = xc + (int64_t)(oh * strideH - padT + kh * dilH) * W - padL + kw * dilW;
          float *orow = o + oh * OW;
          if (strideW == 1) {
            for (int32_t ow = owBegin; ow < owEnd; ++ow)
              orow[ow] += k * xr[ow];
          } else {
            for (int32_t ow = owBegin; ow < owEnd; ++ow)
              orow[ow] += k * xr[ow * strideW];
          }
        }
      }
    }
  }
}

/* The hot loops below are compiled once per bundle (noinline, which the code
 * generator keeps) rather than once per call site: they run as fast with
 * run-time bounds, and a network with 50 convolutions then compiles in a
 * few seconds even when every call is specialised. */
#define BF_SHARED static __attribute__((noinline))

/* ---- Depthwise K x K (K = 3, 5, 7), dilation 1 ----------------------------
 * One channel and one output row at a time: every tap of an output column is
 * summed in registers (one partial sum per kernel row: K short FMA chains
 * instead of one of K * K) and the loop runs over output columns, so it
 * vectorizes across columns (contiguous loads for stride 1, de-interleaved
 * for stride 2) and each output is written once. K and the stride are
 * constants in each shared helper, so the K x K taps unroll. Rows cut by the
 * top/bottom padding add their valid kernel rows one pass at a time; columns
 * cut by the left/right padding take the checked loop. Other strides and
 * dilations use the per-tap scatter (bf_conv_channel). */
BF_INLINE void bf_dwk_span(const float *restrict x0, int32_t rowStep, const float *restrict k,
                           int32_t K, float b, float *restrict o, int32_t begin, int32_t end,
                           int32_t stride, int32_t iwOff) {
  for (int32_t ow = begin; ow < end; ++ow) {
    const int32_t iw = ow * stride + iwOff;
    float acc = 0.0f;
    BF_NO_VECTORIZE_UNROLL
    for (int32_t r = 0; r < K; ++r) {
      const float *xr = x0 + (int64_t)r * rowStep + iw;
      float s = r == 0 ? b : 0.0f; /* the bias opens row 0's chain */
      BF_NO_VECTORIZE_UNROLL
      for (int32_t kw = 0; kw < K; ++kw)
        s += k[r * K + kw] * xr[kw];
      acc += s;
    }
    o[ow] = acc;
  }
}

/* Adds one kernel row's K taps to o[begin, end). */
BF_INLINE void bf_dwk_row(const float *restrict xr, const float *restrict k, int32_t K,
                          float *restrict o, int32_t begin, int32_t end, int32_t stride,
                          int32_t iwOff) {
  for (int32_t ow = begin; ow < end; ++ow) {
    const float *xs = xr + ow * stride + iwOff;
    float s = 0.0f;
    BF_NO_VECTORIZE_UNROLL
    for (int32_t kw = 0; kw < K; ++kw)
      s += k[kw] * xs[kw];
    o[ow] += s;
  }
}

#define BF_DEFINE_DWK(K, S)                                                                        \
  BF_SHARED void bf_dw##K##_span_s##S(const float *restrict x0, int32_t rowStep,                   \
                                      const float *restrict k, float b, float *restrict o,         \
                                      int32_t begin, int32_t end, int32_t iwOff) {                 \
    bf_dwk_span(x0, rowStep, k, K, b, o, begin, end, S, iwOff);                                    \
  }                                                                                                \
  BF_SHARED void bf_dw##K##_row_s##S(const float *restrict xr, const float *restrict k,            \
                                     float *restrict o, int32_t begin, int32_t end,                \
                                     int32_t iwOff) {                                              \
    bf_dwk_row(xr, k, K, o, begin, end, S, iwOff);                                                 \
  }
BF_DEFINE_DWK(3, 1)
BF_DEFINE_DWK(3, 2)
BF_DEFINE_DWK(5, 1)
BF_DEFINE_DWK(5, 2)
BF_DEFINE_DWK(7, 1)
BF_DEFINE_DWK(7, 2)
#undef BF_DEFINE_DWK

/* The shared helper for (K, stride); bf_depthwise_kxk_applies() holds. */
BF_INLINE void bf_dwk_span_any(const float *restrict x0, int32_t rowStep, const float *restrict k,
                               int32_t K, float b, float *restrict o, int32_t begin, int32_t end,
                               int32_t stride, int32_t iwOff) {
  if (K == 3)
    (stride == 1 ? bf_dw3_span_s1 : bf_dw3_span_s2)(x0, rowStep, k, b, o, begin, end, iwOff);
  else if (K == 5)
    (stride == 1 ? bf_dw5_span_s1 : bf_dw5_span_s2)(x0, rowStep, k, b, o, begin, end, iwOff);
  else
    (stride == 1 ? bf_dw7_span_s1 : bf_dw7_span_s2)(x0, rowStep, k, b, o, begin, end, iwOff);
}

BF_INLINE void bf_dwk_row_any(const float *restrict xr, const float *restrict k, int32_t K,
                              float *restrict o, int32_t begin, int32_t end, int32_t stride,
                              int32_t iwOff) {
  if (K == 3)
    (stride == 1 ? bf_dw3_row_s1 : bf_dw3_row_s2)(xr, k, o, begin, end, iwOff);
  else if (K == 5)
    (stride == 1 ? bf_dw5_row_s1 : bf_dw5_row_s2)(xr, k, o, begin, end, iwOff);
  else
    (stride == 1 ? bf_dw7_row_s1 : bf_dw7_row_s2)(xr, k, o, begin, end, iwOff);
}

BF_INLINE int bf_depthwise_kxk_applies(int32_t KH, int32_t KW, int32_t strideW, int32_t dilH,
                                       int32_t dilW) {
  return KH == KW && (KH == 3 || KH == 5 || KH == 7) && (strideW == 1 || strideW == 2) &&
         dilH == 1 && dilW == 1;
}

/* ---- Depthwise on small planes, through a zero-padded copy --------------
 * On 7x7 and 14x14 planes most outputs touch the padding, and the checked
 * border code dominated (EfficientNet-B0's 1152 channels at 7x7: 28 of 49
 * outputs per channel). Each channel is copied into a zero-padded stack
 * buffer instead, so every output takes the unchecked row kernel: for
 * stride 1 as one flat span over the padded rows (outputs at the PW - OW
 * wrap-around columns are computed and dropped; long vectors even at 7
 * columns), for stride 2 row by row. Only where stacks are large (hosts):
 * the two buffers take 2 x BF_DW_PAD_FLOATS floats. */
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(BF_SMALL_TILES)
#define BF_DW_PAD_FLOATS 4096
#else
#define BF_DW_PAD_FLOATS 0
#endif

#if BF_DW_PAD_FLOATS > 0
/* Padded extents: rows and columns from the first tap of output 0 to the
 * last tap of the last output. */
BF_INLINE int bf_depthwise_padded_fits(int32_t OH, int32_t OW, int32_t K, int32_t strideH,
                                       int32_t strideW) {
  const int64_t PH = (int64_t)(OH - 1) * strideH + K, PW = (int64_t)(OW - 1) * strideW + K;
  return strideH == strideW && (strideH == 1 || strideH == 2) && (K == 3 || K == 5 || K == 7) &&
         PH * PW <= BF_DW_PAD_FLOATS && (int64_t)OH * PW <= BF_DW_PAD_FLOATS;
}

BF_INLINE void bf_depthwise_padded(const float *restrict x, const float *restrict w,
                                   const float *restrict bias, float *restrict out, int32_t C,
                                   int32_t H, int32_t W, int32_t OH, int32_t OW, int32_t K,
                                   int32_t stride, int32_t padT, int32_t padL, int32_t act,
                                   float actA, float actB) {
  const int32_t PH = (OH - 1) * stride + K, PW = (OW - 1) * stride + K;
  /* Input rows and columns that land inside the padded plane. */
  const int32_t ihBegin = padT < 0 ? -padT : 0, ihEnd = PH - padT < H ? PH - padT : H;
  const int32_t iwBegin = padL < 0 ? -padL : 0, iwEnd = PW - padL < W ? PW - padL : W;
  float padded[BF_DW_PAD_FLOATS], flat[BF_DW_PAD_FLOATS];
  for (int32_t c = 0; c < C; ++c) {
    const float *xc = x + (int64_t)c * H * W;
    const float *kc = w + (int64_t)c * K * K;
    const float b = bias ? bias[c] : 0.0f;
    float *oc = out + (int64_t)c * OH * OW;
    for (int32_t i = 0; i < PH * PW; ++i)
      padded[i] = 0.0f;
    for (int32_t ih = ihBegin; ih < ihEnd; ++ih)
      for (int32_t iw = iwBegin; iw < iwEnd; ++iw)
        padded[(ih + padT) * PW + iw + padL] = xc[(int64_t)ih * W + iw];
    if (stride == 1) {
      /* flat[g] for g = oh * PW + ow reads padded[g + r * PW + kw]. */
      bf_dwk_span_any(padded, PW, kc, K, b, flat, 0, (OH - 1) * PW + OW, 1, 0);
      for (int32_t oh = 0; oh < OH; ++oh)
        for (int32_t ow = 0; ow < OW; ++ow)
          oc[oh * OW + ow] = flat[oh * PW + ow];
    } else {
      for (int32_t oh = 0; oh < OH; ++oh)
        bf_dwk_span_any(padded + oh * stride * PW, PW, kc, K, b, oc + oh * OW, 0, OW, stride, 0);
    }
    bf_activate_array(oc, OH * OW, act, actA, actB);
  }
}
#endif

/* Output columns [begin, end) of one row, skipping taps outside the plane
 * (ih0: the input row of kernel row 0). */
BF_INLINE void bf_dwk_checked(const float *restrict xc, const float *restrict kc, int32_t K,
                              float b, float *restrict o, int32_t begin, int32_t end, int32_t ih0,
                              int32_t H, int32_t W, int32_t stride, int32_t iwOff) {
  for (int32_t ow = begin; ow < end; ++ow) {
    float acc = b;
    for (int32_t r = 0; r < K; ++r) {
      const int32_t ih = ih0 + r;
      if (ih < 0 || ih >= H)
        continue;
      for (int32_t kw = 0; kw < K; ++kw) {
        const int32_t iw = ow * stride + iwOff + kw;
        if (iw >= 0 && iw < W)
          acc += kc[r * K + kw] * xc[(int64_t)ih * W + iw];
      }
    }
    o[ow] = acc;
  }
}

/* `C` channels of a depthwise K x K convolution, dilation 1, stride 1 or 2
 * across columns (any stride down rows). */
BF_INLINE void bf_depthwise_kxk(const float *restrict x, const float *restrict w,
                                const float *restrict bias, float *restrict out, int32_t C,
                                int32_t H, int32_t W, int32_t OH, int32_t OW, int32_t K,
                                int32_t strideH, int32_t strideW, int32_t padT, int32_t padL,
                                int32_t act, float actA, float actB) {
  int32_t owSafeBegin, owSafeEnd;
  bf_valid_range(OW, W - (K - 1), strideW, padL, 0, &owSafeBegin, &owSafeEnd);
  if (owSafeEnd < owSafeBegin)
    owSafeEnd = owSafeBegin;
  /* Stride 1 with "same" columns: the rows whose taps are all inside form
   * one flat span (long vectors even for 7x7 planes); the P columns at each row end,
   * whose windows wrap, are redone checked. */
  const int32_t P = (K - 1) / 2;
  int32_t flatBegin = 0, flatEnd = 0;
  if (strideH == 1 && strideW == 1 && padL == P && OW == W && W >= K) {
    bf_valid_range(OH, H - (K - 1), 1, padT, 0, &flatBegin, &flatEnd);
    if (flatEnd - flatBegin < 2)
      flatBegin = flatEnd = 0;
  }
  for (int32_t c = 0; c < C; ++c) {
    const float *xc = x + (int64_t)c * H * W;
    const float *kc = w + (int64_t)c * K * K;
    const float b = bias ? bias[c] : 0.0f;
    float *oc = out + (int64_t)c * OH * OW;
    if (flatEnd > flatBegin) {
      float *o = oc + (int64_t)flatBegin * OW;
      const int32_t n = (flatEnd - flatBegin) * OW;
      bf_dwk_span_any(xc + (int64_t)(flatBegin - padT) * W, W, kc, K, b, o, P, n - P, 1, -P);
      for (int32_t oh = flatBegin; oh < flatEnd; ++oh) {
        float *orow = oc + (int64_t)oh * OW;
        bf_dwk_checked(xc, kc, K, b, orow, 0, P, oh - padT, H, W, 1, -P);
        bf_dwk_checked(xc, kc, K, b, orow, OW - P, OW, oh - padT, H, W, 1, -P);
      }
      bf_activate_array(o, n, act, actA, actB);
    }
    for (int32_t oh = 0; oh < OH; ++oh) {
      if (oh == flatBegin && flatEnd > flatBegin) {
        oh = flatEnd - 1;
        continue;
      }
      const int32_t ih = oh * strideH - padT;
      float *o = oc + (int64_t)oh * OW;
      bf_dwk_checked(xc, kc, K, b, o, 0, owSafeBegin, ih, H, W, strideW, -padL);
      if (ih >= 0 && ih + K <= H) {
        bf_dwk_span_any(xc + (int64_t)ih * W, W, kc, K, b, o, owSafeBegin, owSafeEnd, strideW,
                        -padL);
      } else {
        /* Top/bottom border: the kernel rows inside, one pass each. */
        for (int32_t ow = owSafeBegin; ow < owSafeEnd; ++ow)
          o[ow] = b;
        for (int32_t r = 0; r < K; ++r)
          if (ih + r >= 0 && ih + r < H)
            bf_dwk_row_any(xc + (int64_t)(ih + r) * W, kc + r * K, K, o, owSafeBegin, owSafeEnd,
                           strideW, -padL);
      }
      bf_dwk_checked(xc, kc, K, b, o, owSafeEnd, OW, ih, H, W, strideW, -padL);
      /* Activation while the row is in L1. */
      bf_activate_array(o, OW, act, actA, actB);
    }
  }
}

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
      bf_pw_vec acc0 = {0}, acc1 = {0};
      int32_t c = 0;
      for (; c + 2 * BF_PW_VL <= kv; c += 2 * BF_PW_VL) {
        bf_pw_vec w0, w1, x0, x1;
        __builtin_memcpy(&w0, wm + c, sizeof w0);
        __builtin_memcpy(&w1, wm + c + BF_PW_VL, sizeof w1);
        __builtin_memcpy(&x0, &xcol[j][c], sizeof x0);
        __builtin_memcpy(&x1, &xcol[j][c + BF_PW_VL], sizeof x1);
        acc0 += w0 * x0;
        acc1 += w1 * x1;
      }
      if (c < kv) {
        bf_pw_vec w0, x0;
        __builtin_memcpy(&w0, wm + c, sizeof w0);
        __builtin_memcpy(&x0, &xcol[j][c], sizeof x0);
        acc0 += w0 * x0;
      }
      acc0 += acc1;
      float s = bf_pw_hsum(&acc0);
      for (c = kv; c < kc; ++c)
        s += wm[c] * xcol[j][c];
      o[j] = first ? s + (bias ? bias[m] : 0.0f) : o[j] + s;
    }
    if (last)
      bf_activate_array(o, r, act, actA, actB);
  }
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

/* out [M][P] = w [M][C] x [C][P] (+ bias, activation); input channels are
 * xs floats apart (P for a whole plane, more for a band of its rows). Needs
 * P >= BF_PW_VL. */
BF_INLINE void bf_pointwise(const float *restrict x, const float *restrict w,
                            const float *restrict bias, float *restrict out, int32_t C, int32_t M,
                            int32_t P, int64_t xs, int32_t act, float actA, float actB) {
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

/* ---- Narrow planes as flat runs, in place -----------------------------
 * Patch-stage tiles are a few columns wide (ResNet-8's second stage: 3 to 6
 * output columns). Without dilation and with stride 1, output (oh, ow)
 * reads offset (oh * P + ow) + kh * P + kw of a plane of pitch P, so the
 * outputs g = oh * P + ow form one flat run of whole unchecked tiles: the
 * P - OW wrap-around lanes of each row are computed and dropped. Interior
 * tiles need no padding, so the run reads the tile's own buffer in place
 * (no copy, unlike the phase-split bands below, which take the stride-2 and
 * the wider narrow planes); border tiles read a zero-padded stack copy (hosts
 * only). `plan -v` says which patch stages take these (PatchStage.h's
 * kFlatRunColumns is BF_NARROW_PB on 64-bit hosts). */
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
 * g = oh * P + ow with ow < OW. */
BF_INLINE void bf_flat_store(const float *restrict tile, int32_t lanes, float *restrict out,
                             int32_t outPlane, int32_t OW, int32_t P, int32_t start) {
  int32_t oh = start / P, ow = start - oh * P;
  for (int32_t j = 0; j < lanes; ++j) {
    if (ow < OW)
      for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)
        out[(int64_t)mi * outPlane + oh * OW + ow] = tile[mi * lanes + j];
    if (++ow == P) {
      ow = 0;
      ++oh;
    }
  }
}

/* `blocks` groups of BF_CONV_MB output channels over the stride-1 flat run
 * of pitch P (bf_conv_flat_pitch). */
BF_INLINE void bf_conv_blocks_flat(const float *restrict x, const float *restrict w,
                                   const float *restrict bias, float *restrict out, int32_t blocks,
                                   int32_t Cg, int32_t H, int32_t W, int32_t OH, int32_t OW,
                                   int32_t KH, int32_t KW, int32_t padT, int32_t padL, int32_t P,
                                   int copy) {
  float padded[BF_FLAT_PAD_FLOATS];
  int32_t PH = H;
  if (copy) {
    PH = (int32_t)bf_span(OH, 1, KH);
    /* Input rows and columns that land inside the padded plane. */
    const int32_t ihBegin = padT < 0 ? -padT : 0, ihEnd = PH - padT < H ? PH - padT : H;
    const int32_t iwBegin = padL < 0 ? -padL : 0, iwEnd = P - padL < W ? P - padL : W;
    for (int32_t i = 0; i < Cg * PH * P; ++i)
      padded[i] = 0.0f;
    for (int32_t c = 0; c < Cg; ++c)
      for (int32_t ih = ihBegin; ih < ihEnd; ++ih)
        for (int32_t iw = iwBegin; iw < iwEnd; ++iw)
          padded[(c * PH + ih + padT) * P + iw + padL] = x[((int64_t)c * H + ih) * W + iw];
    x = padded;
  }
  const int32_t inPlane = PH * P, outPlane = OH * OW, taps = KH * KW;
  /* The last tile is shifted left to end at the run's end, so no tile reads
   * past the plane (the run's last output reads its last input). */
  const int32_t runEnd = (OH - 1) * P + OW;
#if defined(BF_WIDE_TILES)
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
        bf_conv_tile_wide(x, w + (int64_t)m * Cg * taps, bias ? bias + m : 0, tile, BF_WIDE_PB,
                          Cg, inPlane, P, KW, taps, 0, KH, 0, 1, start, 1, 1, BF_TILE_INSIDE,
                          BF_WIDE_PB, 0);
      else
#endif
        bf_conv_tile(x, w + (int64_t)m * Cg * taps, bias ? bias + m : 0, tile, BF_NARROW_PB, Cg,
                     inPlane, P, KW, taps, 0, KH, 0, 1, start, 1, 1, BF_TILE_INSIDE, BF_NARROW_PB,
                     0);
      bf_flat_store(tile, lanes, out + (int64_t)m * outPlane, outPlane, OW, P, start);
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
 * out), every tap of every lane inside. Hosts only: the buffers take
 * BF_CONV_PAD_FLOATS + BF_CONV_MB * BF_CONV_FLAT_FLOATS floats of stack. */
#if BF_DW_PAD_FLOATS > 0
#define BF_CONV_PAD_FLOATS 65536
#define BF_CONV_FLAT_FLOATS 1024
#define BF_CONV_PHASE_K 7

/* Phase width Q and the output rows per band (0: does not apply). */
BF_INLINE int32_t bf_conv_phase_rows(int32_t Cg, int32_t Mg, int32_t OH, int32_t OW, int32_t KH,
                                     int32_t KW, int32_t strideH, int32_t strideW, int32_t dilH,
                                     int32_t dilW, int32_t *Q) {
  const int32_t s = strideH;
  if (strideW != s || (s != 1 && s != 2) || dilH != 1 || dilW != 1 || Mg < BF_CONV_MB ||
      KH > BF_CONV_PHASE_K || KW > BF_CONV_PHASE_K || KH * KW == 1)
    return 0;
  /* Stride-1 rows at least as wide as the widest tile keep the row kernels. */
#if defined(BF_WIDE_TILES)
  if (s == 1 && OW >= BF_WIDE_PB)
    return 0;
#else
  if (s == 1 && OW >= BF_NARROW_PB)
    return 0;
#endif
  *Q = OW - 1 + (KW + s - 1) / s;
  int32_t rows = BF_CONV_FLAT_FLOATS / *Q;
  rows = rows < OH ? rows : OH;
  /* Cg * s^2 phases of ((rows - 1) * s + KH) / s rows, rounded up. */
  while (rows > 0 && (int64_t)Cg * s * s * (((rows - 1) * s + KH + s - 1) / s) * *Q >
                         BF_CONV_PAD_FLOATS)
    --rows;
  if (rows == 0 || (int64_t)(rows - 1) * *Q + OW < BF_NARROW_PB)
    return 0;
  return rows;
}

/* One BF_CONV_MB x PB tile at x (a phase-split band): tap t of channel c
 * is at x + c * chanStride + off[t], summed channel by channel in tap order
 * as the row kernels do; taps == 9 has its loop unrolled. */
#define BF_DEFINE_PHASE_TILE(NAME, VEC, PB)                                                        \
  BF_INLINE void NAME(const float *restrict x, const int32_t *restrict off, int32_t taps,          \
                      const float *restrict w, int64_t wStrideM, const float *restrict bias,       \
                      float *restrict o, int32_t oStride, int32_t Cg, int32_t chanStride) {        \
    VEC acc[BF_CONV_MB] = {{0}};                                                                   \
    for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)                                                    \
      for (int32_t j = 0; j < (PB); ++j)                                                           \
        acc[mi][j] = bias ? bias[mi] : 0.0f;                                                       \
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
  bf_tile_vec_wide acc[BF_CONV_MB][2] = {{{0}}};
  for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)
    for (int32_t j = 0; j < BF_WIDE_PB; ++j)
      acc[mi][0][j] = acc[mi][1][j] = bias ? bias[mi] : 0.0f;
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

/* Output channels [0, blocks * BF_CONV_MB) of one image and group, `rows`
 * output rows at a time (bf_conv_phase_rows). */
BF_SHARED void bf_conv_phase_blocks(const float *restrict x, const float *restrict w,
                                    const float *restrict bias, float *restrict out,
                                    int32_t blocks, int32_t Cg, int32_t H, int32_t W, int32_t OH,
                                    int32_t OW, int32_t KH, int32_t KW, int32_t s, int32_t padT,
                                    int32_t padL, int32_t rows, int32_t Q) {
  const int32_t taps = KH * KW;
  const int64_t wStrideM = (int64_t)Cg * taps;
  const int32_t bandRows = ((rows - 1) * s + KH + s - 1) / s, phasePlane = bandRows * Q;
  const int32_t chanStride = s * s * phasePlane;
  float phases[BF_CONV_PAD_FLOATS], flat[BF_CONV_MB * BF_CONV_FLAT_FLOATS];
  int32_t off[BF_CONV_PHASE_K * BF_CONV_PHASE_K];
  for (int32_t kh = 0; kh < KH; ++kh)
    for (int32_t kw = 0; kw < KW; ++kw)
      off[kh * KW + kw] = ((kh % s) * s + kw % s) * phasePlane + (kh / s) * Q + kw / s;
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
    for (int32_t i = 0; i < Cg * chanStride; ++i)
      phases[i] = 0.0f;
    for (int32_t c = 0; c < Cg; ++c) {
      const float *xc = x + (int64_t)c * H * W;
      float *pc = phases + (int64_t)c * chanStride;
      for (int32_t r = 0; r < PR; ++r) {
        const int32_t ih = r0 + r;
        if (ih < 0 || ih >= H)
          continue;
        const float *xr = xc + (int64_t)ih * W;
        float *pr = pc + (r % s) * s * phasePlane + (r / s) * Q;
        for (int32_t p = 0; p < s; ++p) {
          /* Phase column j holds padded column p + j * s, input column
           * p + j * s - padL: inside the row for j in [jBegin, jEnd). */
          int32_t jBegin, jEnd;
          bf_valid_range(Q, W, s, padL, p, &jBegin, &jEnd);
          float *pp = pr + p * phasePlane;
          const float *xp = xr + p - padL;
          for (int32_t j = jBegin; j < jEnd; ++j)
            pp[j] = xp[j * s];
        }
      }
    }
    const int32_t L = (R - 1) * Q + OW;
    for (int32_t blk = 0; blk < blocks; ++blk) {
      const int32_t m = blk * BF_CONV_MB;
      const float *wm = w + (int64_t)m * wStrideM;
      const float *bm = bias ? bias + m : 0;
#if defined(BF_WIDE_TILES)
      if (L >= 2 * BF_WIDE_PB) {
        BF_CONV_PHASE_SPAN(bf_phase_tile_wide2, 2 * BF_WIDE_PB)
      } else if (L >= BF_WIDE_PB) {
        BF_CONV_PHASE_SPAN(bf_phase_tile_wide, BF_WIDE_PB)
      } else
#endif
      {
        BF_CONV_PHASE_SPAN(bf_phase_tile, BF_NARROW_PB)
      }
      for (int32_t mi = 0; mi < BF_CONV_MB; ++mi)
        for (int32_t r = 0; r < R; ++r)
          __builtin_memcpy(out + (int64_t)(m + mi) * OH * OW + (int64_t)(oh0 + r) * OW,
                           flat + mi * BF_CONV_FLAT_FLOATS + r * Q, sizeof(float) * OW);
    }
  }
}
#undef BF_CONV_PHASE_SPAN
#endif

/* Direct convolution, no scratch memory. Output channels go BF_CONV_MB at
 * a time through register tiles (bf_conv_blocks); depthwise 3x3, 5x5 and
 * 7x7 through bf_depthwise_kxk; other depthwise shapes and leftover
 * channels use the per-tap scatter (bf_conv_channel). */
void bf_conv2d_f32(const float *restrict in, const float *restrict w, const float *restrict bias,
                   float *restrict out, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                   int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t strideH, int32_t strideW,
                   int32_t padT, int32_t padL, int32_t dilH, int32_t dilW, int32_t groups,
                   int32_t act, float actA, float actB) {
  /* A 1x1, stride-1 convolution over a band of whole rows (rows -padT ..
   * -padT + OH - 1: all of them, or the few bf_pointwise_inplace_f32 computes
   * at a time) is a matrix product over those rows, input channels a plane
   * apart. The only pointwise path: smaller or size-first ones take the
   * direct loops below. */
  if (!bf_size_first && KH == 1 && KW == 1 && (strideH == 1 || OH == 1) && strideW == 1 &&
      padL == 0 && padT <= 0 && OW == W && OH - padT <= H && OH * OW >= BF_PW_VL) {
    const int64_t inPlane = (int64_t)H * W, outPlane = (int64_t)OH * OW;
    for (int32_t n = 0; n < N; ++n)
      for (int32_t g = 0; g < groups; ++g)
        bf_pointwise(in + ((int64_t)n * C + (int64_t)g * (C / groups)) * inPlane - padT * W,
                     w + (int64_t)g * (M / groups) * (C / groups),
                     bias ? bias + g * (M / groups) : 0,
                     out + ((int64_t)n * M + (int64_t)g * (M / groups)) * outPlane, C / groups,
                     M / groups, OH * OW, inPlane, act, actA, actB);
    return;
  }
  /* Otherwise a 1x1, stride-1, unpadded convolution over the whole plane
   * still runs best as one long row through the direct loops. */
  if (KH == 1 && KW == 1 && strideH == 1 && strideW == 1 && padT == 0 && padL == 0 && OH == H &&
      OW == W) {
    W = H * W;
    OW = W;
    H = 1;
    OH = 1;
  }
  const int32_t Cg = C / groups, Mg = M / groups;
  const int32_t inPlane = H * W, outPlane = OH * OW, taps = KH * KW;
#if BF_DW_PAD_FLOATS > 0
  if (!bf_size_first && Cg == 1 && Mg == 1 && KH == KW && dilH == 1 && dilW == 1 &&
      bf_depthwise_padded_fits(OH, OW, KH, strideH, strideW)) {
    for (int32_t n = 0; n < N; ++n)
      bf_depthwise_padded(in + (int64_t)n * C * inPlane, w, bias, out + (int64_t)n * M * outPlane,
                          C, H, W, OH, OW, KH, strideH, padT, padL, act, actA, actB);
    return;
  }
#endif
  if (!bf_size_first && Cg == 1 && Mg == 1 &&
      bf_depthwise_kxk_applies(KH, KW, strideW, dilH, dilW)) {
    for (int32_t n = 0; n < N; ++n)
      bf_depthwise_kxk(in + (int64_t)n * C * inPlane, w, bias, out + (int64_t)n * M * outPlane, C,
                       H, W, OH, OW, KH, strideH, strideW, padT, padL, act, actA, actB);
    return;
  }
  for (int32_t n = 0; n < N; ++n) {
    for (int32_t g = 0; g < groups; ++g) {
      const float *x = in + ((int64_t)n * C + (int64_t)g * Cg) * inPlane;
      const int32_t blocks = Mg / BF_CONV_MB;
#if BF_DW_PAD_FLOATS > 0
      int copy = 0;
      const int32_t flatPitch =
          blocks > 0 && !bf_size_first
              ? bf_conv_flat_pitch(Cg, H, W, OH, OW, KH, KW, strideH, strideW, padT, padL, dilH,
                                   dilW, &copy)
              : 0;
      int32_t Q = 0;
      const int32_t rows = bf_size_first ? 0
                                         : bf_conv_phase_rows(Cg, Mg, OH, OW, KH, KW, strideH,
                                                              strideW, dilH, dilW, &Q);
      if (flatPitch)
        bf_conv_blocks_flat(x, w + (int64_t)g * Mg * Cg * taps, bias ? bias + g * Mg : 0,
                            out + ((int64_t)n * M + g * Mg) * outPlane, blocks, Cg, H, W, OH, OW,
                            KH, KW, padT, padL, flatPitch, copy);
      else if (rows > 0)
        bf_conv_phase_blocks(x, w + (int64_t)g * Mg * Cg * taps, bias ? bias + g * Mg : 0,
                             out + ((int64_t)n * M + g * Mg) * outPlane, blocks, Cg, H, W, OH, OW,
                             KH, KW, strideH, padT, padL, rows, Q);
      else
#endif
#if defined(BF_WIDE_TILES)
      if (blocks > 0 && !bf_size_first && strideW == 1 && dilW == 1 && W >= BF_WIDE_PB &&
          OW >= BF_WIDE_PB)
        bf_conv_blocks_wide(x, w + (int64_t)g * Mg * Cg * taps, bias ? bias + g * Mg : 0,
                            out + ((int64_t)n * M + g * Mg) * outPlane, blocks, Cg, H, W, OH, OW,
                            KH, KW, strideH, strideW, padT, padL, dilH, dilW);
      else
#endif
          if (blocks > 0)
        bf_conv_blocks(x, w + (int64_t)g * Mg * Cg * taps, bias ? bias + g * Mg : 0,
                       out + ((int64_t)n * M + g * Mg) * outPlane, blocks, Cg, H, W, OH, OW, KH, KW,
                       strideH, strideW, padT, padL, dilH, dilW);
      int32_t mb = blocks * BF_CONV_MB;
      for (; mb < Mg; ++mb) {
        const int32_t m = g * Mg + mb;
        bf_conv_channel(x, w + (int64_t)m * Cg * taps, bias ? bias[m] : 0.0f,
                        out + ((int64_t)n * M + m) * outPlane, Cg, H, W, OH, OW, KH, KW, strideH,
                        strideW, padT, padL, dilH, dilW);
      }
    }
  }
  bf_activate_array(out, N * M * outPlane, act, actA, actB);
}

/* Transposed convolution as a scatter: every input pixel adds weight *
 * value to the output taps it reaches. */
void bf_conv_transpose2d_f32(const float *restrict in, const float *restrict w,
                             const float *restrict bias, float *restrict out, int32_t N, int32_t C,
                             int32_t H, int32_t W, int32_t M, int32_t OH, int32_t OW, int32_t KH,
                             int32_t KW, int32_t strideH, int32_t strideW, int32_t padT,
                             int32_t padL, int32_t dilH, int32_t dilW, int32_t groups, int32_t act,
                             float actA, float actB) {
  const int32_t Cg = C / groups, Mg = M / groups;
  const int32_t inPlane = H * W, outPlane = OH * OW, taps = KH * KW;
  for (int32_t n = 0; n < N; ++n) {
    for (int32_t m = 0; m < M; ++m) {
      float *o = out + ((int64_t)n * M + m) * outPlane;
      const float b0 = bias ? bias[m] : 0.0f;
      for (int32_t i = 0; i < outPlane; ++i)
        o[i] = b0;
    }
    for (int32_t g = 0; g < groups; ++g) {
      for (int32_t cg = 0; cg < Cg; ++cg) {
        const int32_t c = g * Cg + cg;
        const float *x = in + ((int64_t)n * C + c) * inPlane;
        for (int32_t mg = 0; mg < Mg; ++mg) {
          const int32_t m = g * Mg + mg;
          float *o = out + ((int64_t)n * M + m) * outPlane;
          const float *wk = w + ((int64_t)c * Mg + mg) * taps;
          for (int32_t ih = 0; ih < H; ++ih) {
            for (int32_t kh = 0; kh < KH; ++kh) {
              const int32_t oh = ih * strideH - padT + kh * dilH;
              if (oh < 0 || oh >= OH)
                continue;
              for (int32_t kw = 0; kw < KW; ++kw) {
                const float k = wk[kh * KW + kw];
                for (int32_t iw = 0; iw < W; ++iw) {
                  const int32_t ow = iw * strideW - padL + kw * dilW;
                  if (ow >= 0 && ow < OW)
                    o[oh * OW + ow] += k * x[ih * W + iw];
                }
              }
            }
          }
        }
      }
    }
    bf_activate_array(out + (int64_t)n * M * outPlane, M * outPlane, act, actA, actB);
  }
}

/* ---- 3-D (NCDHW) ---------------------------------------------------------
 * Rare in MCU models, so plain direct loops without register tiles. The
 * spatial vectors are {D, H, W}: in/out extents, kernel, strides, padsBegin
 * (may be negative for ConvTranspose with output_shape), dilations. */
void bf_conv3d_f32(const float *restrict in, const float *restrict w, const float *restrict bias,
                   float *restrict out, int32_t N, int32_t C, int32_t M, const int32_t *inDims,
                   const int32_t *outDims, const int32_t *kernel, const int32_t *strides,
                   const int32_t *pads, const int32_t *dilations, int32_t groups, int32_t act,
                   float actA, float actB) {
  const int32_t D = inDims[0], H = inDims[1], W = inDims[2];
  const int32_t OD = outDims[0], OH = outDims[1], OW = outDims[2];
  const int32_t KD = kernel[0], KH = kernel[1], KW = kernel[2];
  const int32_t Cg = C / groups, Mg = M / groups;
  const int64_t inVol = (int64_t)D * H * W, outVol = (int64_t)OD * OH * OW;
  const int32_t taps = KD * KH * KW;
  for (int32_t n = 0; n < N; ++n) {
    for (int32_t m = 0; m < M; ++m) {
      const int32_t g = m / Mg;
      float *o = out + ((int64_t)n * M + m) * outVol;
      for (int32_t od = 0; od < OD; ++od)
        for (int32_t oh = 0; oh < OH; ++oh)
          for (int32_t ow = 0; ow < OW; ++ow) {
            float acc = bias ? bias[m] : 0.0f;
            for (int32_t cg = 0; cg < Cg; ++cg) {
              const float *x = in + ((int64_t)n * C + g * Cg + cg) * inVol;
              const float *wk = w + ((int64_t)m * Cg + cg) * taps;
              for (int32_t kd = 0; kd < KD; ++kd) {
                const int32_t id = od * strides[0] - pads[0] + kd * dilations[0];
                if (id < 0 || id >= D)
                  continue;
                for (int32_t kh = 0; kh < KH; ++kh) {
                  const int32_t ih = oh * strides[1] - pads[1] + kh * dilations[1];
                  if (ih < 0 || ih >= H)
                    continue;
                  for (int32_t kw = 0; kw < KW; ++kw) {
                    const int32_t iw = ow * strides[2] - pads[2] + kw * dilations[2];
                    if (iw >= 0 && iw < W)
                      acc += wk[(kd * KH + kh) * KW + kw] * x[((int64_t)id * H + ih) * W + iw];
                  }
                }
              }
            }
            o[((int64_t)od * OH + oh) * OW + ow] = acc;
          }
      bf_activate_array(o, (int32_t)outVol, act, actA, actB);
    }
  }
}

/* w [C, M/groups, KD, KH, KW]; scatters every input element (the definition
 * of the transposed convolution), then adds the bias and the activation. */
void bf_conv_transpose3d_f32(const float *restrict in, const float *restrict w,
                             const float *restrict bias, float *restrict out, int32_t N, int32_t C,
                             int32_t M, const int32_t *inDims, const int32_t *outDims,
                             const int32_t *kernel, const int32_t *strides, const int32_t *pads,
                             const int32_t *dilations, int32_t groups, int32_t act, float actA,
                             float actB) {
  const int32_t D = inDims[0], H = inDims[1], W = inDims[2];
  const int32_t OD = outDims[0], OH = outDims[1], OW = outDims[2];
  const int32_t KD = kernel[0], KH = kernel[1], KW = kernel[2];
  const int32_t Cg = C / groups, Mg = M / groups;
  const int64_t inVol = (int64_t)D * H * W, outVol = (int64_t)OD * OH * OW;
  const int32_t taps = KD * KH * KW;
  for (int32_t n = 0; n < N; ++n) {
    float *y = out + (int64_t)n * M * outVol;
    for (int64_t i = 0; i < (int64_t)M * outVol; ++i)
      y[i] = 0.0f;
    for (int32_t c = 0; c < C; ++c) {
      const int32_t g = c / Cg;
      const float *x = in + ((int64_t)n * C + c) * inVol;
      for (int32_t id = 0; id < D; ++id)
        for (int32_t ih = 0; ih < H; ++ih)
          for (int32_t iw = 0; iw < W; ++iw) {
            const float xv = x[((int64_t)id * H + ih) * W + iw];
            for (int32_t kd = 0; kd < KD; ++kd) {
              const int32_t od = id * strides[0] - pads[0] + kd * dilations[0];
              if (od < 0 || od >= OD)
                continue;
              for (int32_t kh = 0; kh < KH; ++kh) {
                const int32_t oh = ih * strides[1] - pads[1] + kh * dilations[1];
                if (oh < 0 || oh >= OH)
                  continue;
                for (int32_t kw = 0; kw < KW; ++kw) {
                  const int32_t ow = iw * strides[2] - pads[2] + kw * dilations[2];
                  if (ow < 0 || ow >= OW)
                    continue;
                  const int64_t at = ((int64_t)od * OH + oh) * OW + ow;
                  const int32_t tap = (kd * KH + kh) * KW + kw;
                  for (int32_t mg = 0; mg < Mg; ++mg)
                    y[(int64_t)(g * Mg + mg) * outVol + at] +=
                        xv * w[((int64_t)c * Mg + mg) * taps + tap];
                }
              }
            }
          }
    }
    for (int32_t m = 0; m < M; ++m) {
      const float b0 = bias ? bias[m] : 0.0f;
      for (int64_t i = 0; i < outVol; ++i)
        y[(int64_t)m * outVol + i] += b0;
    }
    bf_activate_array(y, (int32_t)(M * outVol), act, actA, actB);
  }
}
