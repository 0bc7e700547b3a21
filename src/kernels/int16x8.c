/*===- int16x8.c - TFLite's int16x8 kernels (int16 activations) ------------===
 *
 * TFLM's reference arithmetic for int16 activations with int8 weights and
 * int64 biases (ops/int16x8 computes the parameters as TFLM's Prepare does):
 * the same fixed-point helpers as the int8 kernels (int8_util.h), and TFLM's
 * 64-bit MultiplyByQuantizedMultiplier for the convolution accumulators.
 *===----------------------------------------------------------------------===*/
#include "int8_util.h"

BF_I8_INLINE int16_t bf_s16_clamp(int32_t x, int32_t lo, int32_t hi) {
  return (int16_t)(x < lo ? lo : x > hi ? hi : x);
}

/* TFLM MultiplyByQuantizedMultiplier(int64_t x, ...): the multiplier
 * rounded to 16 bits, one rounding shift; |x| < 2^47, shift in [-31, 7]. */
BF_I8_INLINE int32_t bf_s16_requantize64(int64_t x, int32_t mult, int32_t shift) {
  const int64_t reduced = mult < 0x7FFF0000 ? (mult + (1 << 15)) >> 16 : 0x7FFF;
  const int32_t total = 15 - shift;
  return (int32_t)((x * reduced + ((int64_t)1 << (total - 1))) >> total);
}

void bf_leaky_relu_s16(const int16_t *in, int16_t *out, int32_t n, int32_t identityMult,
                       int32_t identityShift, int32_t alphaMult, int32_t alphaShift) {
  for (int32_t i = 0; i < n; ++i) {
    const int32_t x = in[i];
    const int32_t y = x >= 0 ? bf_i8_requantize(x, identityMult, identityShift)
                             : bf_i8_requantize(x, alphaMult, alphaShift);
    out[i] = bf_s16_clamp(y, -32768, 32767);
  }
}

void bf_addsub_s16(const int16_t *a, const int16_t *b, int16_t *out, const int32_t *dims,
                   const int32_t *sa, const int32_t *sb, const int32_t *p) {
  /* p: aMult, aShift, bMult, bShift, outMult, outShift, actMin, actMax,
   * subtract. Zero points are 0 (int16); inputs get 15 bits of headroom. */
  const int32_t subtract = p[8];
  int64_t dst = 0;
  for (int32_t i0 = 0; i0 < dims[0]; ++i0)
    for (int32_t i1 = 0; i1 < dims[1]; ++i1)
      for (int32_t i2 = 0; i2 < dims[2]; ++i2)
        for (int32_t i3 = 0; i3 < dims[3]; ++i3)
          for (int32_t i4 = 0; i4 < dims[4]; ++i4) {
            const int64_t oa = (int64_t)i0 * sa[0] + (int64_t)i1 * sa[1] + (int64_t)i2 * sa[2] +
                               (int64_t)i3 * sa[3] + (int64_t)i4 * sa[4];
            const int64_t ob = (int64_t)i0 * sb[0] + (int64_t)i1 * sb[1] + (int64_t)i2 * sb[2] +
                               (int64_t)i3 * sb[3] + (int64_t)i4 * sb[4];
            for (int32_t i = 0; i < dims[5]; ++i) {
              const int32_t x =
                  bf_i8_requantize(bf_i8_shl(a[oa + (int64_t)i * sa[5]], 15), p[0], p[1]);
              const int32_t y =
                  bf_i8_requantize(bf_i8_shl(b[ob + (int64_t)i * sb[5]], 15), p[2], p[3]);
              const int32_t raw = bf_i8_requantize(subtract ? x - y : x + y, p[4], p[5]);
              out[dst + i] = bf_s16_clamp(raw, p[6], p[7]);
            }
            dst += dims[5];
          }
}

void bf_conv2d_s16x8(const int16_t *x, const int8_t *w, const int64_t *bias, int16_t *y,
                     const int32_t *mult, const int32_t *shift, const int32_t *g) {
  /* g: N, H, W, C, OH, OW, M, KH, KW, strideH, strideW, dilationH, dilationW,
   * padTop, padLeft, actMin, actMax. NHWC x, OHWI w (TFLite's layouts). */
  const int32_t N = g[0], H = g[1], W = g[2], C = g[3], OH = g[4], OW = g[5], M = g[6];
  const int32_t KH = g[7], KW = g[8], SH = g[9], SW = g[10], DH = g[11], DW = g[12];
  const int32_t PT = g[13], PL = g[14], lo = g[15], hi = g[16];
  for (int32_t n = 0; n < N; ++n)
    for (int32_t oy = 0; oy < OH; ++oy)
      for (int32_t ox = 0; ox < OW; ++ox)
        for (int32_t m = 0; m < M; ++m) {
          int64_t acc = 0;
          for (int32_t ky = 0; ky < KH; ++ky) {
            const int32_t iy = oy * SH - PT + ky * DH;
            if (iy < 0 || iy >= H)
              continue;
            for (int32_t kx = 0; kx < KW; ++kx) {
              const int32_t ix = ox * SW - PL + kx * DW;
              if (ix < 0 || ix >= W)
                continue;
              const int16_t *px = x + (((int64_t)n * H + iy) * W + ix) * C;
              const int8_t *pw = w + (((int64_t)m * KH + ky) * KW + kx) * C;
              for (int32_t c = 0; c < C; ++c)
                acc += (int32_t)px[c] * pw[c];
            }
          }
          acc += bias[m];
          const int32_t v = bf_s16_requantize64(acc, mult[m], shift[m]);
          y[(((int64_t)n * OH + oy) * OW + ox) * M + m] = bf_s16_clamp(v, lo, hi);
        }
}

void bf_transpose_conv2d_s16x8(const int16_t *x, const int8_t *w, const int64_t *bias, int16_t *y,
                               const int32_t *mult, const int32_t *shift, const int32_t *g) {
  /* g as bf_conv2d_s16x8's (H, W: the input's; OH, OW: the output's). Each
   * output pixel gathers the input pixels TFLM's reference scatters into it:
   * oy = iy * strideH - padTop + ky. */
  const int32_t N = g[0], H = g[1], W = g[2], C = g[3], OH = g[4], OW = g[5], M = g[6];
  const int32_t KH = g[7], KW = g[8], SH = g[9], SW = g[10];
  const int32_t PT = g[13], PL = g[14], lo = g[15], hi = g[16];
  for (int32_t n = 0; n < N; ++n)
    for (int32_t oy = 0; oy < OH; ++oy)
      for (int32_t ox = 0; ox < OW; ++ox)
        for (int32_t m = 0; m < M; ++m) {
          int64_t acc = 0;
          for (int32_t ky = 0; ky < KH; ++ky) {
            const int32_t ty = oy + PT - ky;
            if (ty < 0 || ty % SH != 0 || ty / SH >= H)
              continue;
            for (int32_t kx = 0; kx < KW; ++kx) {
              const int32_t tx = ox + PL - kx;
              if (tx < 0 || tx % SW != 0 || tx / SW >= W)
                continue;
              const int16_t *px = x + (((int64_t)n * H + ty / SH) * W + tx / SW) * C;
              const int8_t *pw = w + (((int64_t)m * KH + ky) * KW + kx) * C;
              for (int32_t c = 0; c < C; ++c)
                acc += (int32_t)px[c] * pw[c];
            }
          }
          acc += bias[m];
          const int32_t v = bf_s16_requantize64(acc, mult[m], shift[m]);
          y[(((int64_t)n * OH + oy) * OW + ox) * M + m] = bf_s16_clamp(v, lo, hi);
        }
}

/* QUANTIZE between int16 and int32 (TFLM's Requantize): p = mult, shift,
 * input zero point, output zero point. */
void bf_requantize_s16_s32(const int16_t *in, int32_t *out, int32_t n, const int32_t *p) {
  for (int32_t i = 0; i < n; ++i) {
    const int64_t y = (int64_t)bf_i8_requantize(in[i] - p[2], p[0], p[1]) + p[3];
    out[i] = (int32_t)(y < BF_INT32_MIN ? BF_INT32_MIN : y > BF_INT32_MAX ? BF_INT32_MAX : y);
  }
}

void bf_requantize_s32_s16(const int32_t *in, int16_t *out, int32_t n, const int32_t *p) {
  for (int32_t i = 0; i < n; ++i)
    out[i] = bf_s16_clamp(
        bf_i8_requantize((int32_t)((uint32_t)in[i] - (uint32_t)p[2]), p[0], p[1]) + p[3], -32768,
        32767);
}
