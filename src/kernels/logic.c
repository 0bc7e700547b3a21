/*===- logic.c - Comparisons, logical ops and Where ------------------------===
 *
 * Bools are one byte, 0 or 1. The operands are read through broadcasting
 * strides over a 6-D loop nest, as the binary kernels in elementwise.c; the
 * code generator passes the operator as a constant.
 *===----------------------------------------------------------------------===*/
#include "kernel_util.h"

/* The 6-D loop over dims with operands a, b (and c) read through strides
 * sa, sb (sc); `dst` counts the dense output elements. */
#define BF_BROADCAST_LOOPS(...)                                                                    \
  int64_t dst = 0;                                                                                 \
  for (int32_t i0 = 0; i0 < dims[0]; ++i0)                                                         \
    for (int32_t i1 = 0; i1 < dims[1]; ++i1)                                                       \
      for (int32_t i2 = 0; i2 < dims[2]; ++i2)                                                     \
        for (int32_t i3 = 0; i3 < dims[3]; ++i3)                                                   \
          for (int32_t i4 = 0; i4 < dims[4]; ++i4) {                                               \
            const int64_t oa = (int64_t)i0 * sa[0] + (int64_t)i1 * sa[1] + (int64_t)i2 * sa[2] +   \
                               (int64_t)i3 * sa[3] + (int64_t)i4 * sa[4];                          \
            const int64_t ob = (int64_t)i0 * sb[0] + (int64_t)i1 * sb[1] + (int64_t)i2 * sb[2] +   \
                               (int64_t)i3 * sb[3] + (int64_t)i4 * sb[4];                          \
            for (int32_t i = 0; i < dims[5]; ++i) {                                                \
              const int64_t ia = oa + (int64_t)i * sa[5], ib = ob + (int64_t)i * sb[5];            \
              __VA_ARGS__;                                                                         \
            }                                                                                      \
            dst += dims[5];                                                                        \
          }

#define BF_DEFINE_COMPARE(name, T)                                                                 \
  void bf_compare_##name(const T *a, const T *b, uint8_t *out, const int32_t *dims,                \
                         const int32_t *sa, const int32_t *sb, int32_t op) {                       \
    BF_BROADCAST_LOOPS({                                                                           \
      const T x = a[ia], y = b[ib];                                                                \
      int r;                                                                                       \
      switch (op) {                                                                                \
      case BF_CMP_EQ:                                                                              \
        r = x == y;                                                                                \
        break;                                                                                     \
      case BF_CMP_LT:                                                                              \
        r = x < y;                                                                                 \
        break;                                                                                     \
      case BF_CMP_LE:                                                                              \
        r = x <= y;                                                                                \
        break;                                                                                     \
      case BF_CMP_GT:                                                                              \
        r = x > y;                                                                                 \
        break;                                                                                     \
      default:                                                                                     \
        r = x >= y;                                                                                \
        break;                                                                                     \
      }                                                                                            \
      out[dst + i] = (uint8_t)r;                                                                   \
    })                                                                                             \
  }
BF_DEFINE_COMPARE(f32, float)
BF_DEFINE_COMPARE(i8, int8_t)
BF_DEFINE_COMPARE(u8, uint8_t)
BF_DEFINE_COMPARE(i32, int32_t)
BF_DEFINE_COMPARE(i64, int64_t)

void bf_logical_u8(const uint8_t *a, const uint8_t *b, uint8_t *out, const int32_t *dims,
                   const int32_t *sa, const int32_t *sb, int32_t op) {
  BF_BROADCAST_LOOPS({
    const int x = a[ia] != 0, y = b[ib] != 0;
    out[dst + i] = (uint8_t)(op == BF_LOGIC_AND ? (x & y) : op == BF_LOGIC_OR ? (x | y) : (x ^ y));
  })
}

void bf_not_u8(const uint8_t *in, uint8_t *out, int32_t n) {
  for (int32_t i = 0; i < n; ++i)
    out[i] = (uint8_t)(in[i] == 0);
}

/* Where: out = cond ? x : y; cond, x and y broadcast (strides sc, sa, sb). */
#define BF_DEFINE_WHERE(name, T)                                                                   \
  void bf_where_##name(const uint8_t *cond, const T *a, const T *b, T *out, const int32_t *dims,   \
                       const int32_t *sc, const int32_t *sa, const int32_t *sb) {                  \
    BF_BROADCAST_LOOPS({                                                                           \
      const int64_t ic = (int64_t)i0 * sc[0] + (int64_t)i1 * sc[1] + (int64_t)i2 * sc[2] +         \
                         (int64_t)i3 * sc[3] + (int64_t)i4 * sc[4] + (int64_t)i * sc[5];           \
      out[dst + i] = cond[ic] ? a[ia] : b[ib];                                                     \
    })                                                                                             \
  }
BF_DEFINE_WHERE(u8, uint8_t)
BF_DEFINE_WHERE(u32, uint32_t)
BF_DEFINE_WHERE(u64, uint64_t)
