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
/* sqrtf is an instruction; exp and the activations built on it are
 * branch-free polynomials (vector_math.h), so their loops vectorize and
 * bundles need no libm expf. */
BF_INLINE float bf_sqrtf(float x) { return __builtin_sqrtf(x); }
#include "vector_math.h"

BF_INLINE float bf_mishf(float x) {
  const float softplus =
      x > 0.0f ? x + __builtin_log1pf(bf_expf(-x)) : __builtin_log1pf(bf_expf(x));
  return x * __builtin_tanhf(softplus);
}

/* One loop per activation kind: the switch runs once per call, never per
 * element, so each loop is straight-line code the vectorizer takes, also in
 * the shared (noinline) kernels where `kind` is not a constant. */
#define BF_ACTIVATE_LOOP(expr)                                                                     \
  for (int32_t i = 0; i < n; ++i) {                                                                \
    const float v = x[i];                                                                          \
    x[i] = (expr);                                                                                 \
  }                                                                                                \
  return

/* The exp-based kinds loop in one shared (noinline) copy per kernel file:
 * their loops need no constant shape, and a copy inlined at every call site
 * cost EfficientNet-B0-tiny 26 KB of Cortex-M7 code. */
#define BF_DEFINE_ACTIVATE_SHARED(name, expr)                                                      \
  static __attribute__((noinline, unused)) void name(float *x, int32_t n) {                        \
    BF_ACTIVATE_LOOP(expr);                                                                        \
  }
BF_DEFINE_ACTIVATE_SHARED(bf_sigmoid_array, bf_sigmoidf(v))
BF_DEFINE_ACTIVATE_SHARED(bf_tanh_array, bf_tanhf(v))
BF_DEFINE_ACTIVATE_SHARED(bf_silu_array, bf_siluf(v))
BF_DEFINE_ACTIVATE_SHARED(bf_mish_array, bf_mishf(v))
#undef BF_DEFINE_ACTIVATE_SHARED

/* Applies an activation to n contiguous values in place. */
BF_INLINE void bf_activate_array(float *x, int32_t n, int32_t kind, float a, float b) {
  switch (kind) {
  case BF_ACT_RELU:
    BF_ACTIVATE_LOOP(v > 0.0f ? v : 0.0f);
  case BF_ACT_CLIP:
    BF_ACTIVATE_LOOP(bf_minf(bf_maxf(v, a), b));
  case BF_ACT_LEAKY_RELU:
    BF_ACTIVATE_LOOP(v >= 0.0f ? v : v * a);
  case BF_ACT_SIGMOID:
    bf_sigmoid_array(x, n);
    return;
  case BF_ACT_TANH:
    bf_tanh_array(x, n);
    return;
  case BF_ACT_HARD_SIGMOID:
    BF_ACTIVATE_LOOP(bf_minf(bf_maxf(a * v + b, 0.0f), 1.0f));
  case BF_ACT_HARD_SWISH:
    BF_ACTIVATE_LOOP(v * bf_minf(bf_maxf(v * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f));
  case BF_ACT_SILU:
    bf_silu_array(x, n);
    return;
  case BF_ACT_MISH:
    bf_mish_array(x, n);
    return;
  case BF_ACT_X_HARD_SIGMOID:
    BF_ACTIVATE_LOOP(v * bf_minf(bf_maxf(a * v + b, 0.0f), 1.0f));
  default: /* BF_ACT_NONE */
    return;
  }
}
#undef BF_ACTIVATE_LOOP

#endif
