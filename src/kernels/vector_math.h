/*===- vector_math.h - Branch-free exp and the activations built on it ----===
 *
 * exp, expm1, sigmoid, SiLU, tanh, ELU and erf without libm: Cody-Waite range
 * reduction, a degree-5 minimax polynomial (Cephes' expf coefficients) and
 * the power of two built in the exponent bits. Every step is a select or an
 * arithmetic/bit operation with no branch and no call, so a loop over them
 * vectorizes (AVX2/AVX-512 on hosts, Helium on Cortex-M55/M85) and a scalar
 * FPU (Cortex-M4/M7) runs it without newlib's expf.
 *
 * Accuracy against the correctly rounded result (libm in double precision),
 * measured on every 97th float bit pattern (44 million inputs per function,
 * all exponents and signs) with and without FMA contraction: exp, ELU and
 * erf within 1 ULP, expm1 within 2, tanh within 2, sigmoid and SiLU within 3,
 * wherever the result is a normal float; subnormal results within one
 * subnormal step. tests/codegen/VectorMathTests.cpp checks these bounds on
 * a stride through every float bit pattern and the edge cases. Limits as
 * libm: exp(+inf) = +inf, exp(-inf) = 0, overflow to +inf above 88.72,
 * underflow to 0 below -103.97, NaN in gives NaN out, tanh(-0) = -0;
 * SiLU(-inf) = -0 (the limit; numpy's x * sigmoid(x) gives NaN there).
 *
 * Included by kernel_util.h only.
 *===----------------------------------------------------------------------===*/
#ifndef BUNDLEFIT_VECTOR_MATH_H
#define BUNDLEFIT_VECTOR_MATH_H

#include <stdint.h>

BF_INLINE uint32_t bf_float_bits(float x) {
  uint32_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  return u;
}

BF_INLINE float bf_bits_float(uint32_t u) {
  float x;
  __builtin_memcpy(&x, &u, sizeof x);
  return x;
}

/* The reduced argument of e^x: x = n ln2 + r, |r| <= ln2/2, and e^r - 1 =
 * r + r^2 P(r). x is clamped to [-150, 89] first (beyond, e^x is 0 or +inf,
 * and SiLU's x e^x is 0 from -110 down) so that n fits the two-step scaling
 * below; NaN passes the
 * clamps (every comparison with it is false) and propagates through r. n is
 * rounded by the 1.5 * 2^23 shift (no rint call, no float-to-int conversion
 * of a NaN) and read back from the mantissa bits. */
BF_INLINE float bf_exp_reduce(float x, int32_t *n) {
  x = x < -150.0f ? -150.0f : x;
  x = x > 89.0f ? 89.0f : x;
  const float shift = 12582912.0f; /* 1.5 * 2^23 */
  const float kf = x * 1.44269504088896341f + shift;
  *n = (int32_t)(bf_float_bits(kf) - bf_float_bits(shift));
  const float nf = kf - shift;
  /* Cody-Waite: ln2 = 0.693359375 (9 bits, so nf * it is exact) - 2.12194440e-4. */
  return (x - nf * 0.693359375f) + nf * 2.12194440e-4f;
}

/* e^r - 1 on |r| <= ln2/2 without cancellation. */
BF_INLINE float bf_expm1_reduced(float r) {
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return r + (r * r) * p;
}

/* 2^n as a float for n in [-126, 127]. */
BF_INLINE float bf_pow2i(int32_t n) { return bf_bits_float((uint32_t)(n + 127) << 23); }

/* m e^x, with m a normal float: m times the polynomial, then the two
 * powers of two (n is in [-217, 129]: each factor stays normal), so the
 * last product rounds once into the subnormals or overflows to +inf. */
BF_INLINE float bf_exp_scaled(float x, float m) {
  int32_t n;
  const float r = bf_exp_reduce(x, &n);
  const float p = 1.0f + bf_expm1_reduced(r);
  const int32_t n1 = n / 2;
  return p * m * bf_pow2i(n1) * bf_pow2i(n - n1);
}

BF_INLINE float bf_expf(float x) { return bf_exp_scaled(x, 1.0f); }

/* e^x - 1, accurate near 0 (ELU and tanh need the small values). For x
 * above 89 it is +inf, below -17 it is -1 (e^x is below half an ULP of 1). */
BF_INLINE float bf_expm1f(float x) {
  int32_t n;
  const float xc = x < -20.0f ? -20.0f : x;
  const float r = bf_exp_reduce(xc, &n);
  const float q = bf_expm1_reduced(r);
  /* e^x - 1 = 2^n q + (2^n - 1); 2^n - 1 is exact for n in [-29, 24] and the
   * two terms share a sign for n >= 0. n = 128 or more overflows to +inf. */
  const int32_t n1 = n / 2;
  const float t1 = bf_pow2i(n1), t2 = bf_pow2i(n - n1);
  const float t = t1 * t2;
  const float small = (t - 1.0f) + t * q;
  const float large = (q + 1.0f) * t1 * t2 - 1.0f;
  /* Past 2^24 the -1 no longer matters; the product form also overflows
   * correctly. */
  const float y = n > 24 ? large : small;
  /* -0 stays -0 (a multiplier of 0 adds +0). */
  return x == 0.0f ? x : y;
}

/* e^a for a in [-110, 0] as p t 2^-64, p = e^r in [0.7, 1.42] and t = 2^(n + 64)
 * a normal float (n is in [-159, 0]): one power of two instead of
 * bf_exp_scaled's two, because sigmoid and SiLU only need e^-|x| and below
 * -110 both round to (-)0. A product m p t then rounds once at the last
 * multiply by 2^-64, into the subnormals if it must. */
#define BF_EXP_NONPOS_UNSCALE 5.42101086242752217e-20f /* 2^-64 */
BF_INLINE float bf_exp_nonpos_parts(float a, float *t) {
  const float shift = 12582912.0f; /* 1.5 * 2^23, as in bf_exp_reduce */
  const float kf = a * 1.44269504088896341f + shift;
  const float nf = kf - shift;
  const float r = (a - nf * 0.693359375f) + nf * 2.12194440e-4f;
  *t = bf_bits_float((bf_float_bits(kf) - bf_float_bits(shift) + 127u + 64u) << 23);
  return 1.0f + bf_expm1_reduced(r);
}

/* sigmoid(x) = 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, so
 * the far negative tail keeps its tiny values instead of 1 / inf = 0.
 * |x| is clamped at 110 (sigmoid is 1 or rounds to 0 beyond 104); NaN
 * passes the clamp. */
BF_INLINE float bf_sigmoidf(float x) {
  float a = __builtin_fabsf(x);
  a = a > 110.0f ? -110.0f : -a;
  float t;
  const float p = bf_exp_nonpos_parts(a, &t);
  const float e = p * t * BF_EXP_NONPOS_UNSCALE;
  const float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

/* x * sigmoid(x), the same way; below 0 the factor x/(1 + e^x) is applied
 * before the power of two, so x e^x keeps its precision where e^x alone
 * would be subnormal (x < -87.3). x is clamped at -110 first (x e^x is
 * below half the least subnormal from there: the result is -0, also for
 * -inf) and |x| at 110 in the exponent (+inf stays +inf in the quotient). */
BF_INLINE float bf_siluf(float x) {
  const float xc = x < -110.0f ? -110.0f : x;
  const float a = xc > 110.0f ? -110.0f : -__builtin_fabsf(xc);
  float t;
  const float p = bf_exp_nonpos_parts(a, &t);
  const float s = xc / (1.0f + p * t * BF_EXP_NONPOS_UNSCALE);
  return x >= 0.0f ? s : s * p * t * BF_EXP_NONPOS_UNSCALE;
}

/* tanh |x| = q / (q + 2) with q = e^(2|x|) - 1 (no cancellation near 0);
 * the sign bit of x is put back, so tanh(-0) = -0 and tanh is odd exactly.
 * |x| is clamped at 10, where tanh is 1 in float (from 9.01 on). */
BF_INLINE float bf_tanhf(float x) {
  const uint32_t sign = bf_float_bits(x) & 0x80000000u;
  float a = bf_bits_float(bf_float_bits(x) & 0x7fffffffu);
  a = a > 10.0f ? 10.0f : a;
  const float q = bf_expm1f(2.0f * a);
  return bf_bits_float(bf_float_bits(q / (q + 2.0f)) | sign);
}

/* ELU with alpha a: x for x >= 0, a (e^x - 1) below. */
BF_INLINE float bf_eluf(float x, float a) { return x >= 0.0f ? x : a * bf_expm1f(x); }

/* erf in two branch-free pieces, both evaluated and one selected (so the
 * loop vectorizes). |x| < 0.875: x + x q(x^2), q of degree 5 fitted to
 * erf(x)/x - 1 (least squares on Chebyshev nodes, relative error 1.1e-8);
 * the small correction x q keeps the sum within about 1 ULP. Above:
 * +-(1 - e^P(|x|)), P of degree 10 fitted to log erfc on [0.875, 3.92]
 * (absolute error 7e-10; monomials in |x| lost less to float rounding than
 * ones centred on the interval). From 3.92 on erfc is below half an ULP of
 * 1, so |x| is clamped there and the result is +-1 (also for +-inf); NaN
 * passes the clamp and propagates, erf(-0) = -0. Within 1 ULP of the
 * correctly rounded erf over the whole float range (VectorMathTests.cpp),
 * subnormal results within a subnormal step. */
BF_INLINE float bf_erff(float x) {
  const float s = x * x;
  float q = -6.254293257e-4f;
  q = q * s + 5.042351317e-3f;
  q = q * s - 2.679867297e-2f;
  q = q * s + 1.128267050e-1f;
  q = q * s - 3.761257529e-1f;
  q = q * s + 1.283791661e-1f;
  const float small = x + x * q;
  float a = __builtin_fabsf(x);
  const int inner = a < 0.875f;
  a = a > 3.92f ? 3.92f : a;
  float p = -6.698299870e-8f;
  p = p * a + 1.602803650e-6f;
  p = p * a - 1.524626805e-5f;
  p = p * a + 5.693273488e-5f;
  p = p * a + 1.942671952e-4f;
  p = p * a - 3.707063850e-3f;
  p = p * a + 2.455756068e-2f;
  p = p * a - 1.078744754e-1f;
  p = p * a - 6.334959865e-1f;
  p = p * a - 1.129502892e+0f;
  p = p * a + 1.798685262e-4f;
  const float outer = 1.0f - bf_expf(p);
  const float large = bf_bits_float(bf_float_bits(outer) | (bf_float_bits(x) & 0x80000000u));
  return inner ? small : large;
}

#endif
