/*===- logic.c - Comparisons, logical ops and Where ------------------------===
 *
 * Bools are one byte, 0 or 1. The operands are read through broadcasting
 * strides over a 6-D loop nest (broadcast.h), as the binary kernels; the
 * code generator passes the operator as a constant.
 *===----------------------------------------------------------------------===*/
#include "broadcast.h"
#include "kernel_util.h"

#define BF_DEFINE_COMPARE(name, T)                                                                 \
  void bf_compare_##name(const T *a, const T *b, uint8_t *out, const int32_t *dims,                \
                         const int32_t *sa, const int32_t *sb, int32_t op) {                       \
    BF_FOR_EACH_BROADCAST_ROW(dims, a, sa, pa, b, sb, pb, out, po, {                               \
      for (int32_t i = 0; i < dims[5]; ++i) {                                                      \
        const T x = pa[(int64_t)i * sa[5]], y = pb[(int64_t)i * sb[5]];                            \
        int r;                                                                                     \
        switch (op) {                                                                              \
        case BF_CMP_EQ:                                                                            \
          r = x == y;                                                                              \
          break;                                                                                   \
        case BF_CMP_LT:                                                                            \
          r = x < y;                                                                               \
          break;                                                                                   \
        case BF_CMP_LE:                                                                            \
          r = x <= y;                                                                              \
          break;                                                                                   \
        case BF_CMP_GT:                                                                            \
          r = x > y;                                                                               \
          break;                                                                                   \
        default:                                                                                   \
          r = x >= y;                                                                              \
          break;                                                                                   \
        }                                                                                          \
        po[i] = (uint8_t)r;                                                                        \
      }                                                                                            \
    });                                                                                            \
  }
BF_DEFINE_COMPARE(f32, float)
BF_DEFINE_COMPARE(i8, int8_t)
BF_DEFINE_COMPARE(u8, uint8_t)
BF_DEFINE_COMPARE(i32, int32_t)
BF_DEFINE_COMPARE(i64, int64_t)

void bf_logical_u8(const uint8_t *a, const uint8_t *b, uint8_t *out, const int32_t *dims,
                   const int32_t *sa, const int32_t *sb, int32_t op) {
  BF_FOR_EACH_BROADCAST_ROW(dims, a, sa, pa, b, sb, pb, out, po, {
    for (int32_t i = 0; i < dims[5]; ++i) {
      const int x = pa[(int64_t)i * sa[5]] != 0, y = pb[(int64_t)i * sb[5]] != 0;
      po[i] = (uint8_t)(op == BF_LOGIC_AND ? (x & y) : op == BF_LOGIC_OR ? (x | y) : (x ^ y));
    }
  });
}

void bf_not_u8(const uint8_t *in, uint8_t *out, int32_t n) {
  for (int32_t i = 0; i < n; ++i)
    out[i] = (uint8_t)(in[i] == 0);
}

/* Where: out = cond ? x : y; cond, x and y broadcast (strides sc, sa, sb). */
#define BF_DEFINE_WHERE(name, T)                                                                   \
  void bf_where_##name(const uint8_t *cond, const T *a, const T *b, T *out, const int32_t *dims,   \
                       const int32_t *sc, const int32_t *sa, const int32_t *sb) {                  \
    BF_FOR_EACH_BROADCAST_ROW(dims, a, sa, pa, b, sb, pb, out, po, {                               \
      const uint8_t *pc = cond + BF_BROADCAST_OFFSET(sc);                                          \
      for (int32_t i = 0; i < dims[5]; ++i)                                                        \
        po[i] = pc[(int64_t)i * sc[5]] ? pa[(int64_t)i * sa[5]] : pb[(int64_t)i * sb[5]];          \
    });                                                                                            \
  }
BF_DEFINE_WHERE(u8, uint8_t)
BF_DEFINE_WHERE(u32, uint32_t)
BF_DEFINE_WHERE(u64, uint64_t)
