/*===- math.c - Float math functions behind one kernel ---------------------===
 *
 * bf_unary_f32 evaluates the function `op` (bf_unary_op) on every element.
 * The code generator passes `op` as a constant, so once the call is inlined
 * LLVM keeps one case and vectorizes its loop where the function allows.
 * exp-based ones and erf use vector_math.h (no libm); the other
 * transcendentals call newlib's libm (logf, sinf...) on the MCUs.
 *===----------------------------------------------------------------------===*/
#include "kernel_util.h"

BF_INLINE float bf_softplusf(float x) {
  /* log(1 + e^x) without overflow for large x. */
  return x > 0.0f ? x + __builtin_log1pf(bf_expf(-x)) : __builtin_log1pf(bf_expf(x));
}

BF_INLINE float bf_unary(float x, int32_t op, float a, float b) {
  switch (op) {
  case BF_UNARY_NEG:
    return -x;
  case BF_UNARY_ABS:
    return __builtin_fabsf(x);
  case BF_UNARY_SIGN:
    return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x; /* keeps 0 and NaN */
  case BF_UNARY_RECIPROCAL:
    return 1.0f / x;
  case BF_UNARY_LOG:
    return __builtin_logf(x);
  case BF_UNARY_SIN:
    return __builtin_sinf(x);
  case BF_UNARY_COS:
    return __builtin_cosf(x);
  case BF_UNARY_TAN:
    return __builtin_tanf(x);
  case BF_UNARY_ASIN:
    return __builtin_asinf(x);
  case BF_UNARY_ACOS:
    return __builtin_acosf(x);
  case BF_UNARY_ATAN:
    return __builtin_atanf(x);
  case BF_UNARY_SINH:
    return __builtin_sinhf(x);
  case BF_UNARY_COSH:
    return __builtin_coshf(x);
  case BF_UNARY_ASINH:
    return __builtin_asinhf(x);
  case BF_UNARY_ACOSH:
    return __builtin_acoshf(x);
  case BF_UNARY_ATANH:
    return __builtin_atanhf(x);
  case BF_UNARY_ERF:
    return bf_erff(x);
  case BF_UNARY_ROUND:
    return __builtin_rintf(x); /* the default mode: half to even */
  case BF_UNARY_CEIL:
    return __builtin_ceilf(x);
  case BF_UNARY_FLOOR:
    return __builtin_floorf(x);
  case BF_UNARY_ELU:
    return bf_eluf(x, a);
  case BF_UNARY_SELU:
    return x > 0.0f ? b * x : b * (a * bf_expm1f(x));
  case BF_UNARY_CELU:
    return bf_maxf(0.0f, x) + bf_minf(0.0f, a * bf_expm1f(x / a));
  case BF_UNARY_SOFTPLUS:
    return bf_softplusf(x);
  case BF_UNARY_SOFTSIGN:
    return x / (1.0f + __builtin_fabsf(x));
  case BF_UNARY_MISH:
    return bf_mishf(x);
  case BF_UNARY_THRESHOLDED_RELU:
    return x > a ? x : 0.0f;
  case BF_UNARY_SHRINK:
    return x < -a ? x + b : x > a ? x - b : 0.0f;
  case BF_UNARY_SILU:
    return bf_siluf(x);
  case BF_UNARY_SCALE:
    return a * x;
  case BF_UNARY_GELU:
    /* vector_math.h's erf and tanh: the loop vectorizes, no libm. */
    if (a != 0.0f)
      return 0.5f * x * (1.0f + bf_tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    return 0.5f * x * (1.0f + bf_erff(x * 0.70710678118654752f));
  default:
    return x;
  }
}

void bf_unary_f32(const float *in, float *out, int32_t n, int32_t op, float a, float b) {
  for (int32_t i = 0; i < n; ++i)
    out[i] = bf_unary(in[i], op, a, b);
}
