/*===- int8_softmax.c - int8 Softmax, TFLM / CMSIS-NN fixed point ----------===
 *
 * The fixed-point softmax of TFLM's int8 reference (and arm_softmax_s8,
 * bit-exact with it): differences to the row maximum are scaled to Q5.26
 * (mult/shift), exponentiated with gemmlowp's exp_on_negative_values,
 * summed in Q12.19, and the reciprocal of the sum computed with Newton-
 * Raphson iterations (one_over_one_plus_x_for_x_in_0_1). Differences below
 * diffMin give exp = 0 (output -128).
 *===----------------------------------------------------------------------===*/
#include "int8_util.h"

#define BF_I8_ACCUM_BITS 12

/* Saturating x * 2^exponent. */
BF_I8_INLINE int32_t bf_i8_mul_pot_sat(int32_t x, int32_t exponent) {
  const int32_t threshold = (int32_t)((1ll << (31 - exponent)) - 1);
  if (x > threshold)
    return BF_INT32_MAX;
  if (x < -threshold)
    return BF_INT32_MIN;
  return bf_i8_shl(x, exponent);
}

/* exp(x) for x in [-1/4, 0), Q0.31 in and out: a Taylor series around -1/8. */
BF_I8_INLINE int32_t bf_i8_exp_quarter(int32_t a) {
  const int32_t expMinusEighth = 1895147668; /* exp(-1/8) in Q0.31 */
  const int32_t oneThird = 715827883;        /* 1/3 in Q0.31 */
  const int32_t x = a + (1 << 28);           /* a + 1/8 */
  const int32_t x2 = bf_i8_srdhm(x, x);
  const int32_t x3 = bf_i8_srdhm(x2, x);
  const int32_t x4 = bf_i8_srdhm(x2, x2);
  const int32_t x4Over4 = bf_i8_rdbpot(x4, 2);
  const int32_t poly = bf_i8_rdbpot(bf_i8_srdhm(x4Over4 + x3, oneThird) + x2, 1);
  return expMinusEighth + bf_i8_srdhm(expMinusEighth, x + poly);
}

/* exp(a) for a <= 0 in Q5.26, result in Q0.31: exp of the remainder modulo
 * 1/4 times exp(-2^k / 4) for each set bit k of the multiple of 1/4. */
BF_I8_INLINE int32_t bf_i8_exp_on_negative(int32_t a) {
  if (a == 0)
    return BF_INT32_MAX;
  const int32_t quarter = 1 << 24; /* 1/4 in Q5.26 */
  const int32_t modMinusQuarter = (a & (quarter - 1)) - quarter;
  const int32_t remainder = modMinusQuarter - a;
  int32_t result = bf_i8_exp_quarter(bf_i8_shl(modMinusQuarter, 5)); /* Q5.26 -> Q0.31 */
  /* exp(-2^k / 4) in Q0.31 for k = 0..6 (unrolled: no table in memory). */
  if (remainder & (1 << 24))
    result = bf_i8_srdhm(result, 1672461947); /* exp(-1/4) */
  if (remainder & (1 << 25))
    result = bf_i8_srdhm(result, 1302514674); /* exp(-1/2) */
  if (remainder & (1 << 26))
    result = bf_i8_srdhm(result, 790015084); /* exp(-1) */
  if (remainder & (1 << 27))
    result = bf_i8_srdhm(result, 290630308); /* exp(-2) */
  if (remainder & (1 << 28))
    result = bf_i8_srdhm(result, 39332535); /* exp(-4) */
  if (remainder & (1 << 29))
    result = bf_i8_srdhm(result, 720401); /* exp(-8) */
  if (remainder & (1 << 30))
    result = bf_i8_srdhm(result, 242); /* exp(-16) */
  return result;
}

/* 1 / (1 + x) for x in [0, 1), Q0.31 in and out: Newton-Raphson for the
 * reciprocal of d = (1 + x) / 2 in Q2.29, from 48/17 - 32/17 * d, three
 * steps; 1 / (1 + x) = (1 / d) / 2, i.e. Q2.29 -> Q0.31 is one left shift. */
BF_I8_INLINE int32_t bf_i8_one_over_one_plus_x(int32_t x) {
  const int64_t sum = (int64_t)x + BF_INT32_MAX;
  const int32_t halfDenominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
  const int32_t c48over17 = 1515870810, cMinus32over17 = -1010580540; /* Q2.29 */
  int32_t r = c48over17 + bf_i8_srdhm(halfDenominator, cMinus32over17);
  const int32_t one = 1 << 29; /* 1.0 in Q2.29 */
  for (int32_t i = 0; i < 3; ++i) {
    const int32_t err = one - bf_i8_srdhm(halfDenominator, r);
    r += bf_i8_mul_pot_sat(bf_i8_srdhm(r, err), 2);
  }
  return bf_i8_mul_pot_sat(r, 1);
}

void bf_softmax_s8(const int8_t *in, int8_t *out, int32_t outer, int32_t axis, int32_t inner,
                   int32_t mult, int32_t shift, int32_t diffMin) {
  for (int32_t o = 0; o < outer; ++o) {
    for (int32_t j = 0; j < inner; ++j) {
      const int8_t *x = in + (int64_t)o * axis * inner + j;
      int8_t *y = out + (int64_t)o * axis * inner + j;
      int32_t maxValue = -128;
      for (int32_t i = 0; i < axis; ++i)
        maxValue = bf_i8_max(maxValue, x[(int64_t)i * inner]);
      int32_t sum = 0;
      for (int32_t i = 0; i < axis; ++i) {
        const int32_t diff = x[(int64_t)i * inner] - maxValue;
        if (diff >= diffMin)
          sum += bf_i8_rdbpot(bf_i8_exp_on_negative(bf_i8_srdhm(bf_i8_shl(diff, shift), mult)),
                              BF_I8_ACCUM_BITS);
      }
      /* sum > 0: the maximum itself contributes exp(0). */
      const int32_t headroom = __builtin_clz((uint32_t)sum);
      /* > 31 only for rows of hundreds of maxima; clamped (the shift would
       * be undefined) where the reference is undefined too. */
      const int32_t bitsOverUnit = bf_i8_min(BF_I8_ACCUM_BITS - headroom + 23, 31);
      const int32_t scale =
          bf_i8_one_over_one_plus_x((int32_t)(((uint32_t)sum << headroom) - (1u << 31)));
      for (int32_t i = 0; i < axis; ++i) {
        const int32_t diff = x[(int64_t)i * inner] - maxValue;
        int32_t q = -128;
        if (diff >= diffMin) {
          const int32_t e = bf_i8_exp_on_negative(bf_i8_srdhm(bf_i8_shl(diff, shift), mult));
          q = bf_i8_clamp(bf_i8_rdbpot(bf_i8_srdhm(scale, e), bitsOverUnit) - 128, -128, 127);
        }
        y[(int64_t)i * inner] = (int8_t)q;
      }
    }
  }
}
