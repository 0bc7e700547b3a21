/*===- elementwise.c - Broadcasting binary ops, unary ops, casts ----------===*/
#include "broadcast.h"
#include "kernel_util.h"

BF_INLINE float bf_binary_op(float x, float y, int op) {
  switch (op) {
  case BF_OP_ADD:
    return x + y;
  case BF_OP_SUB:
    return x - y;
  case BF_OP_MUL:
    return x * y;
  case BF_OP_DIV:
    return x / y;
  case BF_OP_MAX:
    return bf_maxf(x, y);
  case BF_OP_MIN:
    return bf_minf(x, y);
  case BF_OP_POW:
    return __builtin_powf(x, y);
  case BF_OP_FMOD:
    return __builtin_fmodf(x, y);
  default: /* PRelu: y is the slope */
    return x < 0.0f ? x * y : x;
  }
}

/* out is dense over dims; a and b are read through their strides. The
 * innermost dimension gets dedicated loops for the common stride patterns
 * (both contiguous, one broadcast) so they vectorize even when the kernel is
 * not specialised. Safe in place (out may equal a or b when shapes match). */
BF_INLINE void bf_binary_nd(const float *a, const float *b, float *out, const int32_t *dims,
                            const int32_t *sa, const int32_t *sb, int op) {
  const int32_t n5 = dims[5], sa5 = sa[5], sb5 = sb[5];
  BF_FOR_EACH_BROADCAST_ROW(dims, a, sa, pa, b, sb, pb, out, po, {
    if (sa5 == 1 && sb5 == 1) {
      for (int32_t i = 0; i < n5; ++i)
        po[i] = bf_binary_op(pa[i], pb[i], op);
    } else if (sa5 == 1 && sb5 == 0) {
      const float y = pb[0];
      for (int32_t i = 0; i < n5; ++i)
        po[i] = bf_binary_op(pa[i], y, op);
    } else if (sa5 == 0 && sb5 == 1) {
      const float x = pa[0];
      for (int32_t i = 0; i < n5; ++i)
        po[i] = bf_binary_op(x, pb[i], op);
    } else {
      for (int32_t i = 0; i < n5; ++i)
        po[i] = bf_binary_op(pa[(int64_t)i * sa5], pb[(int64_t)i * sb5], op);
    }
  });
}

#define BF_DEFINE_BINARY(name, op)                                                                 \
  void bf_##name##_f32(const float *a, const float *b, float *out, const int32_t *dims,            \
                       const int32_t *aStrides, const int32_t *bStrides) {                         \
    bf_binary_nd(a, b, out, dims, aStrides, bStrides, op);                                         \
  }
BF_DEFINE_BINARY(add, BF_OP_ADD)
BF_DEFINE_BINARY(sub, BF_OP_SUB)
BF_DEFINE_BINARY(mul, BF_OP_MUL)
BF_DEFINE_BINARY(div, BF_OP_DIV)
BF_DEFINE_BINARY(max, BF_OP_MAX)
BF_DEFINE_BINARY(min, BF_OP_MIN)
BF_DEFINE_BINARY(prelu, BF_OP_PRELU)
BF_DEFINE_BINARY(pow, BF_OP_POW)
BF_DEFINE_BINARY(fmod, BF_OP_FMOD)

#define BF_DEFINE_UNARY(name, expr)                                                                \
  void bf_##name##_f32(const float *in, float *out, int32_t n, float a, float b) {                 \
    for (int32_t i = 0; i < n; ++i) {                                                              \
      const float x = in[i];                                                                       \
      out[i] = (expr);                                                                             \
    }                                                                                              \
  }
BF_DEFINE_UNARY(relu, x > 0.0f ? x : 0.0f)
BF_DEFINE_UNARY(clip, bf_minf(bf_maxf(x, a), b))
BF_DEFINE_UNARY(leaky_relu, x >= 0.0f ? x : x * a)
BF_DEFINE_UNARY(sigmoid, bf_sigmoidf(x))
BF_DEFINE_UNARY(tanh, bf_tanhf(x))
BF_DEFINE_UNARY(hard_sigmoid, bf_minf(bf_maxf(a *x + b, 0.0f), 1.0f))
BF_DEFINE_UNARY(hard_swish, x *bf_minf(bf_maxf(x *(1.0f / 6.0f) + 0.5f, 0.0f), 1.0f))
BF_DEFINE_UNARY(exp, bf_expf(x))
BF_DEFINE_UNARY(sqrt, bf_sqrtf(x))
BF_DEFINE_UNARY(neg, -x)
BF_DEFINE_UNARY(abs, x < 0.0f ? -x : x)
BF_DEFINE_UNARY(elu, bf_eluf(x, a))
BF_DEFINE_UNARY(reciprocal, 1.0f / x)

#define BF_DEFINE_CAST(name, From, To)                                                             \
  void bf_cast_##name(const From *in, To *out, int32_t n) {                                        \
    for (int32_t i = 0; i < n; ++i)                                                                \
      out[i] = (To)in[i];                                                                          \
  }
BF_DEFINE_CAST(i64_f32, int64_t, float)
BF_DEFINE_CAST(i32_f32, int32_t, float)
BF_DEFINE_CAST(i8_f32, int8_t, float)
BF_DEFINE_CAST(u8_f32, uint8_t, float)
BF_DEFINE_CAST(f32_i32, float, int32_t)
BF_DEFINE_CAST(f32_i64, float, int64_t)

/* ---- Integer arithmetic (int8, uint8, int32, int64) --------------------
 * Rare in float models (shape arithmetic, quantised glue), so one compact
 * kernel per element type takes the operator as an argument: the code
 * generator passes a constant and LLVM folds the switch once inlined.
 * Semantics follow the interpreter (src/interp/ElementwiseKernels.cpp):
 *  - Add/Sub/Mul wrap; they are computed in the unsigned type of the same
 *    width because signed overflow is undefined behaviour in C;
 *  - Div truncates toward zero (C division); x / 0 gives 0 and, for signed
 *    types, x / -1 is a wrapping negation so INT_MIN / -1 does not trap. */
/* One macro for signed and unsigned element types: its sign tests are
 * constant false for the unsigned instances, as intended. */
#pragma GCC diagnostic ignored "-Wtype-limits"
#define BF_DEFINE_INT_BINARY(name, T, U)                                                           \
  /* x^y by squaring, wrapping; a negative exponent truncates 1/x^|y|. */                          \
  BF_INLINE T bf_int_pow_##name(T x, T y) {                                                        \
    if (y < 0)                                                                                     \
      return x == 1 ? 1 : x == (T)-1 ? ((y & 1) ? x : 1) : 0;                                      \
    U result = 1, base = (U)x;                                                                     \
    for (T e = y; e > 0; e >>= 1) {                                                                \
      if (e & 1)                                                                                   \
        result *= base;                                                                            \
      base *= base;                                                                                \
    }                                                                                              \
    return (T)result;                                                                              \
  }                                                                                                \
  BF_INLINE T bf_int_op_##name(T x, T y, int32_t op) {                                             \
    switch (op) {                                                                                  \
    case BF_OP_ADD:                                                                                \
      return (T)((U)x + (U)y);                                                                     \
    case BF_OP_SUB:                                                                                \
      return (T)((U)x - (U)y);                                                                     \
    case BF_OP_MUL:                                                                                \
      return (T)((U)x * (U)y);                                                                     \
    case BF_OP_DIV:                                                                                \
      if (y == 0)                                                                                  \
        return 0;                                                                                  \
      if ((T)-1 < (T)0 && y == (T)-1)                                                              \
        return (T)(0 - (U)x);                                                                      \
      return (T)(x / y);                                                                           \
    case BF_OP_MAX:                                                                                \
      return x < y ? y : x;                                                                        \
    case BF_OP_POW:                                                                                \
      return bf_int_pow_##name(x, y);                                                              \
    case BF_OP_FMOD:                                                                               \
    case BF_OP_MOD: {                                                                              \
      if (y == 0 || ((T)-1 < (T)0 && y == (T)-1))                                                  \
        return 0;                                                                                  \
      const T r = (T)(x % y);                                                                      \
      return op == BF_OP_MOD && r != 0 && ((r < 0) != (y < 0)) ? (T)(r + y) : r;                   \
    }                                                                                              \
    default: /* BF_OP_MIN */                                                                       \
      return y < x ? y : x;                                                                        \
    }                                                                                              \
  }                                                                                                \
  /* Same loop nest and broadcasting strides as the float kernels. */                              \
  void bf_binary_##name(const T *a, const T *b, T *out, const int32_t *dims, const int32_t *sa,    \
                        const int32_t *sb, int32_t op) {                                           \
    BF_FOR_EACH_BROADCAST_ROW(dims, a, sa, pa, b, sb, pb, out, po, {                               \
      for (int32_t i = 0; i < dims[5]; ++i)                                                        \
        po[i] = bf_int_op_##name(pa[(int64_t)i * sa[5]], pb[(int64_t)i * sb[5]], op);              \
    });                                                                                            \
  }
BF_DEFINE_INT_BINARY(i8, int8_t, uint8_t)
BF_DEFINE_INT_BINARY(u8, uint8_t, uint8_t)
BF_DEFINE_INT_BINARY(i32, int32_t, uint32_t)
BF_DEFINE_INT_BINARY(i64, int64_t, uint64_t)

/* Clip with bounds read from memory (a runtime tensor, or a constant the code
 * generator emitted); NULL means no bound on that side. As the interpreter:
 * min(max(x, lo), hi). Float Clip with constant bounds uses bf_clip_f32. */
#define BF_DEFINE_CLIP_BOUNDS(name, T)                                                             \
  void bf_clip_bounds_##name(const T *in, T *out, int32_t n, const T *lo, const T *hi) {           \
    for (int32_t i = 0; i < n; ++i) {                                                              \
      T x = in[i];                                                                                 \
      if (lo && x < *lo)                                                                           \
        x = *lo;                                                                                   \
      if (hi && *hi < x)                                                                           \
        x = *hi;                                                                                   \
      out[i] = x;                                                                                  \
    }                                                                                              \
  }
BF_DEFINE_CLIP_BOUNDS(f32, float)
BF_DEFINE_CLIP_BOUNDS(i8, int8_t)
BF_DEFINE_CLIP_BOUNDS(u8, uint8_t)
BF_DEFINE_CLIP_BOUNDS(i32, int32_t)
BF_DEFINE_CLIP_BOUNDS(i64, int64_t)
