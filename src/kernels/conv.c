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
 * buffer instead, so every output takes the unchecked row kernel as one
 * flat span over the padded rows (outputs at the wrap-around columns are
 * computed and dropped; long vectors even at 7 columns). For stride 1 the
 * copy is the padded plane; for stride 2 it is the padded plane's four
 * row/column phases (even/odd rows x even/odd columns), each tap reading
 * one phase at a stride-1 offset, so stride 2 also runs as one flat span
 * (row by row, a 7-column output row never filled a vector: 672 channels
 * of 5x5 stride 2 at 14x14 ran 0.21 outputs/ns). Only where stacks are
 * large (hosts): the two buffers take 2 x BF_DW_PAD_FLOATS floats. */
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(BF_SMALL_TILES)
#define BF_DW_PAD_FLOATS 4096
#else
#define BF_DW_PAD_FLOATS 0
#endif

#if BF_DW_PAD_FLOATS > 0
/* Flat output span of the phased stride-2 plane: output (oh, ow) is
 * o[oh * QW + ow] and tap (r, kw) reads phase (r & 1, kw & 1) of `q` (four
 * planes of qPlane floats) at row oh + r / 2, column ow + kw / 2. The sums
 * run in bf_dwk_span's order, so results equal the row-by-row kernel's. */
BF_INLINE void bf_dwk_span_phased(const float *restrict q, int32_t qPlane, int32_t QW,
                                  const float *restrict k, int32_t K, float b, float *restrict o,
                                  int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    float acc = 0.0f;
    BF_NO_VECTORIZE_UNROLL
    for (int32_t r = 0; r < K; ++r) {
      const float *qr = q + ((r & 1) * 2) * qPlane + (r >> 1) * QW + i;
      float s = r == 0 ? b : 0.0f;
      BF_NO_VECTORIZE_UNROLL
      for (int32_t kw = 0; kw < K; ++kw)
        s += k[r * K + kw] * qr[(kw & 1) * qPlane + (kw >> 1)];
      acc += s;
    }
    o[i] = acc;
  }
}

#define BF_DEFINE_DWK_PHASED(K)                                                                    \
  BF_SHARED void bf_dw##K##_phased(const float *restrict q, int32_t qPlane, int32_t QW,            \
                                   const float *restrict k, float b, float *restrict o,            \
                                   int32_t n) {                                                    \
    bf_dwk_span_phased(q, qPlane, QW, k, K, b, o, n);                                              \
  }
BF_DEFINE_DWK_PHASED(3)
BF_DEFINE_DWK_PHASED(5)
BF_DEFINE_DWK_PHASED(7)
#undef BF_DEFINE_DWK_PHASED

/* Padded extents: rows and columns from the first tap of output 0 to the
 * last tap of the last output; stride 2 keeps four phases of half of each
 * (rounded up). */
BF_INLINE int bf_depthwise_padded_fits(int32_t OH, int32_t OW, int32_t K, int32_t strideH,
                                       int32_t strideW) {
  const int64_t PH = (int64_t)(OH - 1) * strideH + K, PW = (int64_t)(OW - 1) * strideW + K;
  if (strideH != strideW || (K != 3 && K != 5 && K != 7))
    return 0;
  if (strideH == 1)
    return PH * PW <= BF_DW_PAD_FLOATS && (int64_t)OH * PW <= BF_DW_PAD_FLOATS;
  const int64_t QH = (PH + 1) / 2, QW = (PW + 1) / 2;
  return strideH == 2 && 4 * QH * QW <= BF_DW_PAD_FLOATS && (int64_t)OH * QW <= BF_DW_PAD_FLOATS;
}

/* Phases of the zero-padded plane for stride 2: q[(pr * 2 + pc) * QH * QW
 * + i * QW + j] = padded[2i + pr][2j + pc], 0 past the padded extents. */
BF_INLINE void bf_depthwise_phases(const float *restrict xc, float *restrict q, int32_t H,
                                   int32_t W, int32_t PH, int32_t PW, int32_t padT, int32_t padL) {
  const int32_t QH = (PH + 1) / 2, QW = (PW + 1) / 2, qPlane = QH * QW;
  float row[BF_DW_PAD_FLOATS / 2 + 2];
  for (int32_t pr = 0; pr < 2 * QH; ++pr) {
    const int32_t ih = pr - padT;
    for (int32_t j = 0; j < 2 * QW; ++j)
      row[j] = 0.0f;
    if (pr < PH && ih >= 0 && ih < H) {
      const int32_t iwBegin = padL < 0 ? -padL : 0, iwEnd = PW - padL < W ? PW - padL : W;
      for (int32_t iw = iwBegin; iw < iwEnd; ++iw)
        row[iw + padL] = xc[(int64_t)ih * W + iw];
    }
    float *even = q + (pr & 1) * 2 * qPlane + (pr >> 1) * QW, *odd = even + qPlane;
    for (int32_t j = 0; j < QW; ++j) {
      even[j] = row[2 * j];
      odd[j] = row[2 * j + 1];
    }
  }
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
    if (stride == 1) {
      for (int32_t i = 0; i < PH * PW; ++i)
        padded[i] = 0.0f;
      for (int32_t ih = ihBegin; ih < ihEnd; ++ih)
        for (int32_t iw = iwBegin; iw < iwEnd; ++iw)
          padded[(ih + padT) * PW + iw + padL] = xc[(int64_t)ih * W + iw];
      /* flat[g] for g = oh * PW + ow reads padded[g + r * PW + kw]. */
      bf_dwk_span_any(padded, PW, kc, K, b, flat, 0, (OH - 1) * PW + OW, 1, 0);
      for (int32_t oh = 0; oh < OH; ++oh)
        for (int32_t ow = 0; ow < OW; ++ow)
          oc[oh * OW + ow] = flat[oh * PW + ow];
    } else {
      const int32_t QH = (PH + 1) / 2, QW = (PW + 1) / 2, n = (OH - 1) * QW + OW;
      bf_depthwise_phases(xc, padded, H, W, PH, PW, padT, padL);
      if (K == 3)
        bf_dw3_phased(padded, QH * QW, QW, kc, b, flat, n);
      else if (K == 5)
        bf_dw5_phased(padded, QH * QW, QW, kc, b, flat, n);
      else
        bf_dw7_phased(padded, QH * QW, QW, kc, b, flat, n);
      for (int32_t oh = 0; oh < OH; ++oh)
        for (int32_t ow = 0; ow < OW; ++ow)
          oc[oh * OW + ow] = flat[oh * QW + ow];
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

#include "conv_pointwise.h"

#include "conv_bands.h"

/* bf_pointwise for bf_pointwise_inplace_f32 (conv_inplace.c): out [M][P] =
 * w [M][C] x [C][P] (+ bias, activation), input channels xs floats apart,
 * P >= BF_PW_VL. Size-first builds take one dot product per output. */
void bf_pointwise_block_f32(const float *restrict x, const float *restrict w,
                            const float *restrict bias, float *restrict out, int32_t C, int32_t M,
                            int32_t P, int64_t xs, int32_t act, float actA, float actB) {
  if (!bf_size_first) {
    bf_pointwise(x, w, bias, out, C, M, P, xs, act, actA, actB);
    return;
  }
  for (int32_t m = 0; m < M; ++m)
    for (int32_t p = 0; p < P; ++p) {
      float s = bias ? bias[m] : 0.0f;
      for (int32_t c = 0; c < C; ++c)
        s += w[(int64_t)m * C + c] * x[(int64_t)c * xs + p];
      out[(int64_t)m * P + p] = s;
    }
  bf_activate_array(out, M * P, act, actA, actB);
}

/* Direct convolution, no scratch memory. Output channels go BF_CONV_MB at
 * a time through register tiles (bf_conv_blocks); depthwise 3x3, 5x5 and
 * 7x7 through bf_depthwise_kxk; other depthwise shapes and leftover
 * channels use the per-tap scatter (bf_conv_channel). */
void bf_conv2d_f32(const float *restrict in, const float *restrict w, const float *restrict bias,
                   float *restrict out, const bf_conv_params *p, int32_t act, float actA,
                   float actB) {
  const int32_t N = p->n, C = p->c, M = p->m, KH = p->kh, KW = p->kw, strideH = p->stride_h,
                strideW = p->stride_w, padT = p->pad_t, padL = p->pad_l, dilH = p->dil_h,
                dilW = p->dil_w, groups = p->groups;
  int32_t H = p->h, W = p->w, OH = p->oh, OW = p->ow; /* a whole-plane 1x1 flattens them */
  /* A 1x1, stride-1 convolution over a band of whole rows (rows -padT ..
   * -padT + OH - 1: all of them, or a band) is a matrix product over those
   * rows, input channels a plane apart. The only pointwise path: smaller or
   * size-first ones take the direct loops below. */
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
#if BF_PW_NV == 3
  if (!bf_size_first && KH == 1 && KW == 1 && H == 1 && W == 1 && OH == 1 && OW == 1 && padT == 0 &&
      padL == 0) {
    const int32_t Cg = C / groups, Mg = M / groups;
    for (int32_t n = 0; n < N; ++n)
      for (int32_t g = 0; g < groups; ++g)
        bf_pw_matvec(in + (int64_t)n * C + (int64_t)g * Cg, w + (int64_t)g * Mg * Cg,
                     bias ? bias + g * Mg : 0, out + (int64_t)n * M + (int64_t)g * Mg, Cg, Mg, act,
                     actA, actB);
    return;
  }
#endif
#if defined(BF_WIDE_TILES)
  if (!bf_size_first && KH == 1 && KW == 1 && strideH == 1 && strideW == 1 && padT == 0 &&
      padL == 0 && OH == H && OW == W && bf_pw_small_applies(OH * OW)) {
    const int32_t P = OH * OW, Cg = C / groups, Mg = M / groups;
    for (int32_t n = 0; n < N; ++n)
      for (int32_t g = 0; g < groups; ++g)
        bf_pw_small(in + ((int64_t)n * C + (int64_t)g * Cg) * P, w + (int64_t)g * Mg * Cg,
                    bias ? bias + g * Mg : 0, out + ((int64_t)n * M + (int64_t)g * Mg) * P, Cg, Mg,
                    P, act, actA, actB);
    return;
  }
#endif
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
      const int32_t flatPitch = blocks > 0 && !bf_size_first
                                    ? bf_conv_flat_pitch(Cg, H, W, OH, OW, KH, KW, strideH, strideW,
                                                         padT, padL, dilH, dilW, &copy)
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
                             const float *restrict bias, float *restrict out,
                             const bf_conv_params *p, int32_t act, float actA, float actB) {
  const int32_t N = p->n, C = p->c, H = p->h, W = p->w, M = p->m, OH = p->oh, OW = p->ow,
                KH = p->kh, KW = p->kw, strideH = p->stride_h, strideW = p->stride_w,
                padT = p->pad_t, padL = p->pad_l, dilH = p->dil_h, dilW = p->dil_w,
                groups = p->groups;
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
 * geometry is a bf_window3d_params (abi.h); its leading pads may be negative
 * for ConvTranspose with output_shape. */

/* The fields both 3-D kernels read, once, through their own argument
 * (KernelParamsFold folds such loads), and the extents they derive. */
#define BF_CONV3D_GEOMETRY(p)                                                                      \
  const int32_t N = (p)->n, C = (p)->c, M = (p)->m, groups = (p)->groups;                          \
  const int32_t D = (p)->d, H = (p)->h, W = (p)->w, OD = (p)->od, OH = (p)->oh, OW = (p)->ow;      \
  const int32_t KD = (p)->kd, KH = (p)->kh, KW = (p)->kw;                                          \
  const int32_t strides[3] = {(p)->stride_d, (p)->stride_h, (p)->stride_w};                        \
  const int32_t pads[3] = {(p)->pad_d, (p)->pad_h, (p)->pad_w};                                    \
  const int32_t dilations[3] = {(p)->dil_d, (p)->dil_h, (p)->dil_w};                               \
  const int32_t Cg = C / groups, Mg = M / groups;                                                  \
  const int64_t inVol = (int64_t)D * H * W, outVol = (int64_t)OD * OH * OW;                        \
  const int32_t taps = KD * KH * KW

void bf_conv3d_f32(const float *restrict in, const float *restrict w, const float *restrict bias,
                   float *restrict out, const bf_window3d_params *conv, int32_t act, float actA,
                   float actB) {
  BF_CONV3D_GEOMETRY(conv);
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
                             const float *restrict bias, float *restrict out,
                             const bf_window3d_params *conv, int32_t act, float actA, float actB) {
  BF_CONV3D_GEOMETRY(conv);
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
