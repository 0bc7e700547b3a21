/*===- kernel_util.h - Helpers shared by the kernel files (not exported) ---===*/
#ifndef BUNDLEFIT_KERNEL_UTIL_H
#define BUNDLEFIT_KERNEL_UTIL_H

#include "bundlefit_kernels.h"

#define BF_INLINE static inline __attribute__((always_inline))

/* Lets clang vectorize float reductions (reassociation) in the marked loop;
 * gcc (used for the host unit tests) ignores it. */
#if defined(__clang__)
#define BF_VECTORIZE _Pragma("clang loop vectorize(enable) interleave(enable)")
/* Keeps the loop vectorizer off a reduction loop whose body already holds
 * a register tile (SLP vectorizes the tile; LV would transpose gathers). */
#define BF_NO_VECTORIZE _Pragma("clang loop vectorize(disable) interleave(disable)")
/* The same, and unrolled in full when the trip count is a constant (a
 * kernel's tap loop: constant tap offsets fold its border shuffles). */
#define BF_NO_VECTORIZE_UNROLL                                                                     \
  _Pragma("clang loop vectorize(disable) interleave(disable) unroll(full)")
#else
#define BF_VECTORIZE
#define BF_NO_VECTORIZE
#define BF_NO_VECTORIZE_UNROLL
#endif

#define BF_FLT_MAX 3.402823466e+38f

BF_INLINE float bf_maxf(float a, float b) { return a > b ? a : b; }
BF_INLINE float bf_minf(float a, float b) { return a < b ? a : b; }
/* expf comes from libm (newlib on the MCUs); sqrtf is an instruction. */
BF_INLINE float bf_expf(float x) { return __builtin_expf(x); }
BF_INLINE float bf_sqrtf(float x) { return __builtin_sqrtf(x); }
BF_INLINE float bf_sigmoidf(float x) { return 1.0f / (1.0f + bf_expf(-x)); }
/* tanh through expf keeps libm needs to one function. */
BF_INLINE float bf_tanhf(float x) {
  if (x > 15.0f)
    return 1.0f;
  if (x < -15.0f)
    return -1.0f;
  float e = bf_expf(2.0f * x);
  return (e - 1.0f) / (e + 1.0f);
}

BF_INLINE float bf_activate(float x, int32_t kind, float a, float b) {
  switch (kind) {
  case BF_ACT_RELU:
    return x > 0.0f ? x : 0.0f;
  case BF_ACT_CLIP:
    return bf_minf(bf_maxf(x, a), b);
  case BF_ACT_LEAKY_RELU:
    return x >= 0.0f ? x : x * a;
  case BF_ACT_SIGMOID:
    return bf_sigmoidf(x);
  case BF_ACT_TANH:
    return bf_tanhf(x);
  case BF_ACT_HARD_SIGMOID:
    return bf_minf(bf_maxf(a * x + b, 0.0f), 1.0f);
  case BF_ACT_HARD_SWISH:
    return x * bf_minf(bf_maxf(x * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f);
  case BF_ACT_SILU:
    return x * bf_sigmoidf(x);
  case BF_ACT_MISH: {
    const float softplus =
        x > 0.0f ? x + __builtin_log1pf(bf_expf(-x)) : __builtin_log1pf(bf_expf(x));
    return x * __builtin_tanhf(softplus);
  }
  case BF_ACT_X_HARD_SIGMOID:
    return x * bf_minf(bf_maxf(a * x + b, 0.0f), 1.0f);
  default:
    return x;
  }
}

/* Applies an activation to n contiguous values; the switch sits outside the
 * loop so each case vectorizes. */
BF_INLINE void bf_activate_array(float *x, int32_t n, int32_t kind, float a, float b) {
  switch (kind) {
  case BF_ACT_NONE:
    return;
  case BF_ACT_RELU:
    for (int32_t i = 0; i < n; ++i)
      x[i] = x[i] > 0.0f ? x[i] : 0.0f;
    return;
  case BF_ACT_CLIP:
    for (int32_t i = 0; i < n; ++i)
      x[i] = bf_minf(bf_maxf(x[i], a), b);
    return;
  default:
    for (int32_t i = 0; i < n; ++i)
      x[i] = bf_activate(x[i], kind, a, b);
    return;
  }
}

#endif
