/*===- int8_util.h - Fixed-point helpers of the int8 kernels (not exported) ===
 *
 * The integer arithmetic TFLM (gemmlowp) and CMSIS-NN share, written once so
 * every int8 kernel rounds the same way. Signed overflow is avoided by doing
 * shifts and wrapping sums in uint32_t; right shifts of negative values are
 * arithmetic on every compiler bundlefit uses (gcc, clang).
 *===----------------------------------------------------------------------===*/
#ifndef BUNDLEFIT_INT8_UTIL_H
#define BUNDLEFIT_INT8_UTIL_H

#include "bundlefit_kernels_int8.h"

#define BF_I8_INLINE static inline __attribute__((always_inline))

/* The positional forms of the convolution entry points (whose arguments are
 * the parameter structs of abi.h): the kernels call one another with
 * run-time shapes (a chunk of channels, a block of rows), which these take
 * without building a struct. Each entry point unpacks its structs once. */
void bf_i8_conv2d(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out, int32_t N,
                  int32_t C, int32_t H, int32_t W, int32_t M, int32_t OH, int32_t OW, int32_t KH,
                  int32_t KW, int32_t strideH, int32_t strideW, int32_t padT, int32_t padL,
                  int32_t dilH, int32_t dilW, int32_t groups, int32_t inputOffset,
                  int32_t outputOffset, const int32_t *outMult, const int32_t *outShift,
                  int32_t quantFlags, int32_t actMin, int32_t actMax, const int8_t *bias8,
                  const int32_t *biasMult, const int32_t *biasShift, const int8_t *lut);
void bf_i8_conv2d_im2col(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                         int32_t N, int32_t C, int32_t H, int32_t W, int32_t M, int32_t OH,
                         int32_t OW, int32_t KH, int32_t KW, int32_t strideH, int32_t strideW,
                         int32_t padT, int32_t padL, int32_t dilH, int32_t dilW, int32_t groups,
                         int32_t inputOffset, int32_t outputOffset, const int32_t *outMult,
                         const int32_t *outShift, int32_t quantFlags, int32_t actMin,
                         int32_t actMax, const int8_t *bias8, const int32_t *biasMult,
                         const int32_t *biasShift, int8_t *im2col, const int8_t *lut);
void bf_i8_depthwise_conv2d(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out,
                            int32_t N, int32_t C, int32_t H, int32_t W, int32_t chMult, int32_t OH,
                            int32_t OW, int32_t KH, int32_t KW, int32_t strideH, int32_t strideW,
                            int32_t padT, int32_t padL, int32_t dilH, int32_t dilW,
                            int32_t inputOffset, int32_t outputOffset, const int32_t *outMult,
                            const int32_t *outShift, int32_t quantFlags, int32_t actMin,
                            int32_t actMax, const int8_t *bias8, const int32_t *biasMult,
                            const int32_t *biasShift, const int8_t *lut);

/* An activation table fused into a convolution's stores (`lut`, the
 * 256-entry table of src/ops/lut, chosen by src/codegen/LutFusion.cpp): v,
 * the clamped int8 output, becomes lut[v + 128], exactly what bf_lut_s8
 * would have made of it in a pass of its own. A null lut is a constant in
 * every unfused call (or in every call of a shared helper, which
 * interprocedural constant propagation then sees), so the test folds away
 * and unfused code is unchanged. Helium's vector stores take no table: an
 * MVE build gives the store paths a null one (BF_I8_STORE_LUT) and the entry
 * point applies the table over its output afterwards (bf_i8_lut_after). */
BF_I8_INLINE int8_t bf_i8_lut(int32_t v, const int8_t *lut) {
  return lut ? lut[v + 128] : (int8_t)v;
}
/* In the shared copies that take a table (NAME_lut): it is never null
 * there, and saying so drops bf_i8_lut's test from their stores. */
#define BF_I8_LUT_NONNULL(lut)                                                                     \
  do {                                                                                             \
    if (!(lut))                                                                                    \
      __builtin_unreachable();                                                                     \
  } while (0)
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1) /* int8_mve.h's BF_I8_MVE */
#define BF_I8_LUT_AFTER 1
#define BF_I8_STORE_LUT(lut) ((const int8_t *)0)
#else
#define BF_I8_STORE_LUT(lut) (lut)
#endif
/* The table (when not null) over n outputs already stored. */
BF_I8_INLINE void bf_i8_lut_over(int8_t *out, int64_t n, const int8_t *lut) {
  if (lut)
    for (int64_t i = 0; i < n; ++i)
      out[i] = lut[out[i] + 128];
}
BF_I8_INLINE void bf_i8_lut_after(int8_t *out, int64_t n, const int8_t *lut) {
#if defined(BF_I8_LUT_AFTER)
  bf_i8_lut_over(out, n, lut);
#else
  (void)out, (void)n, (void)lut;
#endif
}

/* The scalars of a convolution entry point's structs (abi.h's
 * bf_conv_params and bf_quant_params) under the positional forms' names.
 * Every int8 convolution entry point reads its structs once into one of
 * these, `const bf_i8_conv_args a = BF_I8_CONV_ARGS_OF(conv, quant);`: an
 * int8 store may alias a field read through the pointer, which would then
 * be reloaded in every loop. A macro, not a function: KernelParamsFold.cpp
 * folds the loads a kernel makes through its own struct argument (the
 * bitcode is unoptimised, so loads in an inlined helper are not its own), and
 * the folded fields are what lets each kernel specialise. */
typedef struct bf_i8_conv_args {
  int32_t N, C, H, W, M, OH, OW, KH, KW, strideH, strideW, padT, padL, dilH, dilW, groups;
  int32_t inputOffset, outputOffset, quantFlags, actMin, actMax;
} bf_i8_conv_args;
#define BF_I8_CONV_ARGS_OF(p, q)                                                                   \
  {                                                                                                \
    (p)->n, (p)->c, (p)->h, (p)->w, (p)->m, (p)->oh, (p)->ow, (p)->kh, (p)->kw, (p)->stride_h,     \
        (p)->stride_w, (p)->pad_t, (p)->pad_l, (p)->dil_h, (p)->dil_w, (p)->groups,                \
        (q)->input_offset, (q)->output_offset, (q)->quant_flags, (q)->act_min, (q)->act_max        \
  }

/* An unpacked bf_i8_conv_args as the positional forms' arguments: N .. dilW
 * (groups follows, or not for depthwise), then inputOffset, outputOffset
 * (the tables follow them), then quantFlags, actMin, actMax. */
#define BF_I8_CONV_FIELDS(a)                                                                       \
  (a).N, (a).C, (a).H, (a).W, (a).M, (a).OH, (a).OW, (a).KH, (a).KW, (a).strideH, (a).strideW,     \
      (a).padT, (a).padL, (a).dilH, (a).dilW
#define BF_I8_QUANT_OFFSETS(a) (a).inputOffset, (a).outputOffset
#define BF_I8_QUANT_CLAMP(a) (a).quantFlags, (a).actMin, (a).actMax

/* The Arm DSP extension (Cortex-M4/M7/M33/M55): SXTAB16 widens two int8 lanes
 * to int16 and adds an offset, SMLAD does two 16x16 MACs in one instruction,
 * as CMSIS-NN does. cmake/Kernels.cmake compiles the thumbv7em,
 * thumbv8m_main and thumbv81m_mve (Helium: int8_mve.h) families with it;
 * the code generator gives Thumb CPUs without it (Cortex-M3, M23, M0+) the portable thumbv6m
 * family. The portable paths compute the same int32 sums, so results are bit-identical. */
#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32)
#define BF_I8_DSP 1
#include <arm_acle.h>
#endif

/* Four int8 at p (any alignment) as one little-endian word. */
BF_I8_INLINE uint32_t bf_i8_load4(const int8_t *p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}
/* Two 16-bit lanes: lo in bits 0-15, hi in bits 16-31 (PKHBT). */
BF_I8_INLINE uint32_t bf_i8_pack16(int32_t lo, int32_t hi) {
  return ((uint32_t)lo & 0xFFFFu) | ((uint32_t)hi << 16);
}
#define BF_INT32_MAX 2147483647
#define BF_INT32_MIN (-2147483647 - 1)

BF_I8_INLINE int32_t bf_i8_min(int32_t a, int32_t b) { return a < b ? a : b; }
BF_I8_INLINE int32_t bf_i8_max(int32_t a, int32_t b) { return a > b ? a : b; }

/* x / scale bounded to +-1e6 (an out-of-range float->int is undefined; NaN
 * fails both tests and becomes 0), rounded to an integer without libm:
 * half away from zero (TFLM's AffineQuantize) or half to even (ONNX's
 * QuantizeLinear, onnxruntime's nearbyint). v - t is exact below 2^23. */
BF_I8_INLINE int32_t bf_i8_round_quotient(float x, float scale, int halfEven) {
  float v = x / scale;
  v = v > 1.0e6f ? 1.0e6f : v;
  v = v >= -1.0e6f ? v : (v < -1.0e6f ? -1.0e6f : 0.0f);
  int32_t t = (int32_t)v;
  const float frac = v - (float)t;
  if (frac > 0.5f || (frac == 0.5f && (!halfEven || (t & 1))))
    ++t;
  else if (frac < -0.5f || (frac == -0.5f && (!halfEven || (t & 1))))
    --t;
  return t;
}
BF_I8_INLINE int32_t bf_i8_abs(int32_t a) { return a < 0 ? -a : a; }
BF_I8_INLINE int8_t bf_i8_clamp(int32_t x, int32_t lo, int32_t hi) {
  return (int8_t)(x < lo ? lo : x > hi ? hi : x);
}
/* x << s without signed-overflow UB (wraps like the hardware). */
BF_I8_INLINE int32_t bf_i8_shl(int32_t x, int32_t s) { return (int32_t)((uint32_t)x << s); }

/* gemmlowp SaturatingRoundingDoublingHighMul: round(a * b / 2^31), the one
 * overflowing case (INT32_MIN * INT32_MIN) saturating. The reference adds a
 * sign-dependent nudge (2^30, or 1 - 2^30 when ab < 0) and divides truncating
 * toward zero; for ab < 0 that is ceil((ab + 1 - 2^30) / 2^31), which equals
 * floor((ab + 2^30) / 2^31): one add and an arithmetic shift, as CMSIS-NN's
 * arm_nn_doubling_high_mult_no_sat does (a third of the instructions). */
BF_I8_INLINE int32_t bf_i8_srdhm(int32_t a, int32_t b) {
  if (a == b && a == BF_INT32_MIN)
    return BF_INT32_MAX;
  return (int32_t)(((int64_t)a * (int64_t)b + (1ll << 30)) >> 31);
}

/* gemmlowp RoundingDivideByPOT: x / 2^exponent, ties away from zero;
 * exponent in [0, 31]. */
BF_I8_INLINE int32_t bf_i8_rdbpot(int32_t x, int32_t exponent) {
  const int32_t mask = (int32_t)((1ll << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* TFLM MultiplyByQuantizedMultiplier / CMSIS-NN arm_nn_requantize (double
 * rounding): shift > 0 is a left shift applied before the multiply. */
BF_I8_INLINE int32_t bf_i8_requantize(int32_t x, int32_t mult, int32_t shift) {
  const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  return bf_i8_rdbpot(bf_i8_srdhm(bf_i8_shl(x, left), mult), right);
}

/* TFLM MultiplyByQuantizedMultiplier(int64_t x, ...) of the int16x8
 * kernels' int64 sums: the multiplier rounded to 16 bits, one rounding
 * shift; |x| < 2^47, shift in [-31, 7]. */
BF_I8_INLINE int32_t bf_s16_requantize64(int64_t x, int32_t mult, int32_t shift) {
  const int64_t reduced = mult < 0x7FFF0000 ? (mult + (1 << 15)) >> 16 : 0x7FFF;
  const int32_t total = 15 - shift;
  return (int32_t)((x * reduced + ((int64_t)1 << (total - 1))) >> total);
}

/* BF_I8_SINGLE_ROUNDING: round(x * mult * 2^(shift - 31)) with one rounding
 * (half up), CMSIS-NN's arm_nn_requantize under CMSIS_NN_USE_SINGLE_ROUNDING.
 * |x * mult| < 2^62 and 31 - shift is in [1, 62], so the sum fits int64; the
 * result is held to +-2^30 (a multiplier above 1 can leave int32), which no
 * int8 output or zero point offset can tell apart. */
BF_I8_INLINE int32_t bf_i8_requantize_single(int32_t x, int32_t mult, int32_t shift) {
  const int32_t right = 31 - shift;
  const int64_t r = ((int64_t)x * (int64_t)mult + (1ll << (right - 1))) >> right;
  return (int32_t)(r > (1ll << 30) ? (1ll << 30) : r < -(1ll << 30) ? -(1ll << 30) : r);
}

/* An int8 bias at the accumulator scale: round-half-away(b * mult *
 * 2^(shift-31)) in 64 bits (once per output channel), saturated to int32. */
BF_I8_INLINE int32_t bf_i8_scale_bias(int32_t b, int32_t mult, int32_t shift) {
  int64_t p = (int64_t)b * (int64_t)mult;
  const int32_t right = 31 - shift;
  if (right > 0) {
    const int64_t half = 1ll << (right - 1);
    p = p >= 0 ? (p + half) >> right : -((-p + half) >> right);
  } else if (right < 0) {
    /* |p| < 2^38: up to 24 more bits fit int64; beyond, any b != 0 saturates. */
    const int32_t left = -right > 24 ? 24 : -right;
    p = p >= 0 ? p << left : -((-p) << left);
  }
  if (p > BF_INT32_MAX)
    return BF_INT32_MAX;
  if (p < BF_INT32_MIN)
    return BF_INT32_MIN;
  return (int32_t)p;
}

/* Bias of output channel c at the accumulator scale (see the header). */
BF_I8_INLINE int32_t bf_i8_bias(int32_t c, const int32_t *bias, const int8_t *bias8,
                                const int32_t *biasMult, const int32_t *biasShift,
                                int32_t quantFlags) {
  if (bias)
    return bias[c];
  if (bias8) {
    const int32_t k = (quantFlags & BF_I8_PER_CHANNEL) ? c : 0;
    return bf_i8_scale_bias(bias8[c], biasMult[k], biasShift[k]);
  }
  return 0;
}

/* Output channel c's int8 value of accumulator acc: requantized (per channel
 * or per tensor, single or double rounding), offset and clamped. */
BF_I8_INLINE int8_t bf_i8_output(int32_t acc, int32_t c, const int32_t *outMult,
                                 const int32_t *outShift, int32_t quantFlags, int32_t outputOffset,
                                 int32_t actMin, int32_t actMax) {
  const int32_t k = (quantFlags & BF_I8_PER_CHANNEL) ? c : 0;
  const int32_t r = (quantFlags & BF_I8_SINGLE_ROUNDING)
                        ? bf_i8_requantize_single(acc, outMult[k], outShift[k])
                        : bf_i8_requantize(acc, outMult[k], outShift[k]);
  return bf_i8_clamp(r + outputOffset, actMin, actMax);
}

/* TFLM/CMSIS-NN rounding of sum / count (count > 0). */
BF_I8_INLINE int32_t bf_i8_rounded_mean(int32_t sum, int32_t count) {
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

/* An average pool window's int8 result (before clamping): `sum` of its
 * `count` in-bounds values; with countIncludePad its `total - count` padded
 * positions count as padValue (the zero point). An all-padding window
 * (possible only with ceil_mode) gives padValue, i.e. 0.0, as the float
 * kernel's 0/0 guard does. bf_avgpool2d_s8 and bf_conv_avgpool2d_s8 share it. */
BF_I8_INLINE int32_t bf_i8_window_mean(int32_t sum, int32_t count, int32_t total,
                                       int32_t countIncludePad, int32_t padValue) {
  if (countIncludePad) {
    sum += (total - count) * padValue;
    count = total;
  }
  return count > 0 ? bf_i8_rounded_mean(sum, count) : padValue;
}

/* One axis of output o's average-pool window, taps [o * stride - padLo,
 * + k): those inside the input [0, size) as [*begin, *end) (empty when
 * *end <= *begin), and the return value, how many lie inside the padded
 * input [-padLo, size + padHi) (the divisor with count_include_pad). The
 * int8 average pools (bf_avgpool2d_s8, its requantizing form and
 * bf_conv_avgpool2d_s8) share it. */
BF_I8_INLINE int32_t bf_i8_pool_span(int32_t o, int32_t stride, int32_t padLo, int32_t padHi,
                                     int32_t k, int32_t size, int32_t *begin, int32_t *end) {
  const int32_t first = o * stride - padLo;
  *begin = bf_i8_max(first, 0);
  *end = bf_i8_min(first + k, size);
  return bf_i8_max(bf_i8_min(first + k, size + padHi) - bf_i8_max(first, -padLo), 0);
}

/* A channel's output stage in an exact cheaper form (the depthwise and
 * im2col kernels'): clamp((mulhi_r(acc * 2^s, mult) + add + sign) >> e),
 * with acc * 2^s formed by the caller (the depthwise kernel folds 2^s into
 * its weights and bias, the im2col one shifts the sum). */
typedef struct {
  int32_t mult, add, e, lo, hi, s;
  uint32_t lo2, hi2; /* {lo, lo}, {hi, hi} */
  const int8_t *lut; /* a fused activation's table (bf_i8_lut), or null */
} bf_i8_fast_rq;

/* round(a * b / 2^32), ties up: one SMMULR on Arm (LLVM matches the
 * pattern; the bundle's in-process backend takes no inline asm). */
BF_I8_INLINE int32_t bf_i8_mulhi_r(int32_t a, int32_t b) {
  return (int32_t)(((int64_t)a * (int64_t)b + (1ll << 31)) >> 32);
}

/* bf_i8_requantize (double rounding) + outputOffset, clamped, for an acc
 * already multiplied by 2^s = 2^(left + 1) with |acc * 2^s| < 2^31:
 *  - srdhm(x << left, mult) = floor((x 2^left mult + 2^30) / 2^31)
 *    = floor((x 2^s mult + 2^31) / 2^32) = SMMULR(x 2^s, mult) = t, |t| <= 2^30
 *    (and the reference's INT32_MIN * INT32_MIN case cannot arise);
 *  - rdbpot(t, e), e >= 1: with t = q 2^e + rem, the reference adds 1 to q
 *    when rem > 2^(e-1) - 1 + [t < 0], which is floor((t + 2^(e-1) - [t < 0]) /
 *    2^e); outputOffset * 2^e joins the constant (exact: a multiple of 2^e).
 * Returns 0 when the channel does not qualify (e = 0, or a bound fails);
 * the caller checks mult > 0 (bf_i8_fast_scale). */
BF_I8_INLINE int32_t bf_i8_fast_rq_setup(bf_i8_fast_rq *q, int32_t mult, int32_t shift,
                                         int32_t outputOffset, int32_t actMin, int32_t actMax,
                                         uint32_t absBias, uint32_t tapBound, const int8_t *lut) {
  const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  q->s = left + 1;
  q->e = right;
  q->mult = mult;
  q->lo = actMin;
  q->hi = actMax;
  q->lo2 = bf_i8_pack16(actMin, actMin);
  q->hi2 = bf_i8_pack16(actMax, actMax);
  q->lut = lut;
  if (right < 1 || right > 24 || q->s > 8 || actMin < -128 || actMax > 127 || actMin > actMax)
    return 0;
  /* |acc| <= |bias| + tapBound must stay below 2^(31 - s). */
  const uint32_t limit = 1u << (31 - q->s);
  if (absBias >= limit || tapBound >= limit - absBias)
    return 0;
  const int64_t add = (1ll << (right - 1)) + (int64_t)outputOffset * (1ll << right);
  if (add >= (1ll << 30) || add <= -(1ll << 30))
    return 0;
  q->add = (int32_t)add;
  return 1;
}

/* (mulhi_r(acc, mult) + add - [acc < 0]) >> e: bf_i8_requantize +
 * outputOffset. With mult > 0, t = mulhi_r(acc, mult) < 0 only if acc < 0,
 * and where acc < 0 but t = 0 both signs give (add - 1) >> e = outputOffset
 * (add = 2^(e-1) + outputOffset 2^e), so acc's sign can stand for t's. */
BF_I8_INLINE int32_t bf_i8_fast_scale(int32_t acc, const bf_i8_fast_rq *q) {
  return (bf_i8_mulhi_r(acc, q->mult) + q->add + (acc >> 31)) >> q->e;
}

BF_I8_INLINE int8_t bf_i8_fast_requant(int32_t acc, const bf_i8_fast_rq *q) {
  return bf_i8_lut(bf_i8_clamp(bf_i8_fast_scale(acc, q), q->lo, q->hi), q->lut);
}

/* o[0] and, if n == 2, o[1]: the outputs of a0 and a1. DSP: both saturate
 * to int8 (SSAT), pack into halfwords and clamp to [lo, hi] together
 * (SSUB16 sets each lane's GE flags, SEL picks): lo, hi are int8, so the
 * result is bf_i8_clamp's. */
BF_I8_INLINE void bf_i8_fast_store2(int8_t *o, int32_t n, int32_t a0, int32_t a1,
                                    const bf_i8_fast_rq *q) {
#if defined(BF_I8_DSP)
  uint32_t p = bf_i8_pack16(__ssat(bf_i8_fast_scale(a0, q), 8), __ssat(bf_i8_fast_scale(a1, q), 8));
  (void)__ssub16(p, q->lo2);
  p = __sel(p, q->lo2);
  (void)__ssub16(q->hi2, p);
  p = __sel(p, q->hi2);
  o[0] = bf_i8_lut((int8_t)p, q->lut);
  if (n == 2)
    o[1] = bf_i8_lut((int8_t)(p >> 16), q->lut);
#else
  o[0] = bf_i8_fast_requant(a0, q);
  if (n == 2)
    o[1] = bf_i8_fast_requant(a1, q);
#endif
}

#endif
