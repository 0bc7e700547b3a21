/*===- int16x8.c - TFLite's int16x8 kernels (int16 activations) ------------===
 *
 * TFLM's reference arithmetic for int16 activations with int8 weights and
 * int64 biases (ops/int16x8 computes the parameters as TFLM's Prepare does):
 * the same fixed-point helpers as the int8 kernels (int8_util.h), and TFLM's
 * 64-bit MultiplyByQuantizedMultiplier for the convolution accumulators.
 *===----------------------------------------------------------------------===*/
#include "broadcast.h"
#include "int8_util.h"

BF_I8_INLINE int16_t bf_s16_clamp(int32_t x, int32_t lo, int32_t hi) {
  return (int16_t)(x < lo ? lo : x > hi ? hi : x);
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
  BF_FOR_EACH_BROADCAST_ROW(dims, a, sa, pa, b, sb, pb, out, po, {
    for (int32_t i = 0; i < dims[5]; ++i) {
      const int32_t x = bf_i8_requantize(bf_i8_shl(pa[(int64_t)i * sa[5]], 15), p[0], p[1]);
      const int32_t y = bf_i8_requantize(bf_i8_shl(pb[(int64_t)i * sb[5]], 15), p[2], p[3]);
      const int32_t raw = bf_i8_requantize(subtract ? x - y : x + y, p[4], p[5]);
      po[i] = bf_s16_clamp(raw, p[6], p[7]);
    }
  });
}

/* The input index a tap k of output index o reads along one axis, or -1
 * when it reads padding. A convolution reads o * stride - pad + k * dil; a
 * transposed one gathers what TFLM's reference scatters, the input i with
 * i * stride - pad + k == o (its dilation is 1). */
enum { BF_S16_CONV, BF_S16_TRANSPOSED, BF_S16_DEPTHWISE };

BF_I8_INLINE int32_t bf_s16_tap(int32_t o, int32_t k, int32_t stride, int32_t pad, int32_t dil,
                                int32_t size, int kind) {
  if (kind == BF_S16_TRANSPOSED) {
    const int32_t t = o + pad - k;
    return t < 0 || t % stride != 0 || t / stride >= size ? -1 : t / stride;
  }
  const int32_t i = o * stride - pad + k * dil;
  return i < 0 || i >= size ? -1 : i;
}

/* g: N, H, W, C, OH, OW, M, KH, KW, strideH, strideW, dilationH, dilationW,
 * padTop, padLeft, actMin, actMax (H, W: the input's; OH, OW: the
 * output's). NHWC x, OHWI w (TFLite's layouts); depthwise: w [1,KH,KW,M],
 * output channel m reads input channel m / (M / C). Each output is its int64
 * sum plus bias, requantized by TFLM's 64-bit rule and clamped. */
BF_I8_INLINE void bf_s16_conv(const int16_t *x, const int8_t *w, const int64_t *bias, int16_t *y,
                              const int32_t *mult, const int32_t *shift, const int32_t *g,
                              int kind) {
  const int32_t N = g[0], H = g[1], W = g[2], C = g[3], OH = g[4], OW = g[5], M = g[6];
  const int32_t KH = g[7], KW = g[8], SH = g[9], SW = g[10], DH = g[11], DW = g[12];
  const int32_t PT = g[13], PL = g[14], lo = g[15], hi = g[16];
  const int32_t depthMultiplier = kind == BF_S16_DEPTHWISE ? M / C : 0;
  for (int32_t n = 0; n < N; ++n)
    for (int32_t oy = 0; oy < OH; ++oy)
      for (int32_t ox = 0; ox < OW; ++ox)
        for (int32_t m = 0; m < M; ++m) {
          int64_t acc = 0;
          for (int32_t ky = 0; ky < KH; ++ky) {
            const int32_t iy = bf_s16_tap(oy, ky, SH, PT, DH, H, kind);
            if (iy < 0)
              continue;
            for (int32_t kx = 0; kx < KW; ++kx) {
              const int32_t ix = bf_s16_tap(ox, kx, SW, PL, DW, W, kind);
              if (ix < 0)
                continue;
              const int16_t *px = x + (((int64_t)n * H + iy) * W + ix) * C;
              if (depthMultiplier) {
                acc += (int32_t)px[m / depthMultiplier] * w[((int64_t)ky * KW + kx) * M + m];
                continue;
              }
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

void bf_conv2d_s16x8(const int16_t *x, const int8_t *w, const int64_t *bias, int16_t *y,
                     const int32_t *mult, const int32_t *shift, const int32_t *g) {
  bf_s16_conv(x, w, bias, y, mult, shift, g, BF_S16_CONV);
}

/* g as bf_conv2d_s16x8's, M a multiple of C. */
void bf_depthwise_conv2d_s16x8(const int16_t *x, const int8_t *w, const int64_t *bias, int16_t *y,
                               const int32_t *mult, const int32_t *shift, const int32_t *g) {
  bf_s16_conv(x, w, bias, y, mult, shift, g, BF_S16_DEPTHWISE);
}

/* g as bf_conv2d_s16x8's; its dilations are not read. */
void bf_transpose_conv2d_s16x8(const int16_t *x, const int8_t *w, const int64_t *bias, int16_t *y,
                               const int32_t *mult, const int32_t *shift, const int32_t *g) {
  bf_s16_conv(x, w, bias, y, mult, shift, g, BF_S16_TRANSPOSED);
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

void bf_pool_s16(const int16_t *x, int16_t *y, const int32_t *g) {
  const int32_t N = g[0], H = g[1], W = g[2], C = g[3], OH = g[4], OW = g[5];
  const int32_t KH = g[6], KW = g[7], SH = g[8], SW = g[9], PT = g[10], PL = g[11];
  const int32_t lo = g[12], hi = g[13], isMax = g[14];
  for (int32_t n = 0; n < N; ++n)
    for (int32_t oy = 0; oy < OH; ++oy)
      for (int32_t ox = 0; ox < OW; ++ox) {
        const int32_t y0 = oy * SH - PT, x0 = ox * SW - PL;
        const int32_t yBegin = y0 < 0 ? 0 : y0, yEnd = y0 + KH < H ? y0 + KH : H;
        const int32_t xBegin = x0 < 0 ? 0 : x0, xEnd = x0 + KW < W ? x0 + KW : W;
        const int32_t count = (yEnd - yBegin) * (xEnd - xBegin);
        int16_t *out = y + (((int64_t)n * OH + oy) * OW + ox) * C;
        for (int32_t c = 0; c < C; ++c) {
          int32_t acc = isMax ? -32768 : 0;
          for (int32_t iy = yBegin; iy < yEnd; ++iy)
            for (int32_t ix = xBegin; ix < xEnd; ++ix) {
              const int32_t v = x[(((int64_t)n * H + iy) * W + ix) * C + c];
              acc = isMax ? (v > acc ? v : acc) : acc + v;
            }
          out[c] = bf_s16_clamp(isMax ? acc : bf_i8_rounded_mean(acc, count), lo, hi);
        }
      }
}

/* TFLM's interpolating lookup of a 513-entry int16 table at a Q0.15 value:
 * the top 9 bits choose the entry, the low 7 interpolate to the next. */
BF_I8_INLINE int16_t bf_s16_table(int16_t v, const int16_t *table) {
  const int32_t index = 256 + (v >> 7), offset = v & 0x7f;
  const int16_t slope = (int16_t)(table[index + 1] - table[index]);
  return (int16_t)(table[index] + ((slope * offset + 64) >> 7));
}

void bf_softmax_s16(const int16_t *x, int16_t *y, int32_t rows, int32_t depth, int32_t mult,
                    int32_t shift, const int16_t *expTable, const int16_t *reciprocalTable) {
  for (int32_t r = 0; r < rows; ++r) {
    const int16_t *in = x + (int64_t)r * depth;
    int16_t *out = y + (int64_t)r * depth;
    int16_t max = -32768;
    for (int32_t i = 0; i < depth; ++i)
      max = in[i] > max ? in[i] : max;
    int32_t sum = 0; /* Q16.15; depth <= 65536 keeps it below 2^31 */
    for (int32_t i = 0; i < depth; ++i) {
      /* [-65535, 0] is [-10, 0], recentred to [-32768, 32767]. */
      const int32_t scaled = bf_i8_requantize(in[i] - max, mult, shift) + 32767;
      out[i] = bf_s16_table(bf_s16_clamp(scaled, -32768, 32767), expTable);
      sum += out[i];
    }
    const int32_t headroomPlusOne = __builtin_clz((uint32_t)sum);
    const int32_t shifted = (int32_t)((((int64_t)sum << (headroomPlusOne - 1)) + (1 << 13)) >> 14);
    /* 1 / (1 + x) of x = sum - 1, recentred from [0, 65535]. */
    const int32_t reciprocal = bf_s16_table(
        bf_s16_clamp(shifted - ((1 << 15) + (1 << 16)), -32768, 32767), reciprocalTable);
    const int32_t rightShift = 31 - headroomPlusOne;
    for (int32_t i = 0; i < depth; ++i) {
      const int64_t scaled = (int64_t)out[i] * reciprocal + ((int64_t)1 << (rightShift - 1));
      out[i] = bf_s16_clamp((int32_t)(scaled >> rightShift), 0, 32767);
    }
  }
}
