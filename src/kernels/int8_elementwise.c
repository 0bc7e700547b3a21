/*===- int8_elementwise.c - int8 Add/Mul, clamp, rescale, (de)quantize -----===*/
#include "broadcast.h"
#include "int8_util.h"

enum { BF_I8_ADD = 0, BF_I8_MUL = 1, BF_I8_MUL_RATIO = 2 };

/* round(a / 2^s) half to even, for a < 2^42 and s >= 1. */
BF_I8_INLINE uint64_t bf_i8_shift_even(uint64_t a, int32_t s) {
  if (s > 42)
    return 0;
  const uint64_t q = a >> s, rem = a & ((1ull << s) - 1), half = 1ull << (s - 1);
  return q + (rem > half || (rem == half && (q & 1)));
}

/* onnxruntime's QLinearMul (MLAS): nearbyint(ratio * (float)product), the
 * float multiply rounded to 24 bits, emulated exactly in integers so that no
 * target depends on an FPU or on FMA contraction. ratio = mant * 2^exp with
 * mant < 2^24; |product| <= 255 * 255. */
BF_I8_INLINE int32_t bf_i8_mul_ratio(int32_t product, int32_t mant, int32_t exp) {
  const uint64_t magnitude = (uint64_t)(product < 0 ? -product : product);
  uint64_t a = magnitude * (uint32_t)mant;
  int32_t e = exp;
  if (a >= (1ull << 24)) { /* the float product keeps 24 significant bits */
    const int32_t drop = 40 - __builtin_clzll(a);
    a = bf_i8_shift_even(a, drop);
    e += drop;
  }
  int64_t r;
  if (e >= 0)
    r = e > 16 ? (a ? 1 << 20 : 0) : (int64_t)(a << e);
  else
    r = (int64_t)bf_i8_shift_even(a, -e);
  r = r > (1 << 20) ? (1 << 20) : r;
  return (int32_t)(product < 0 ? -r : r);
}

/* Add's parameters; Mul's in bf_add_params (the others 0). */
BF_I8_INLINE int8_t bf_i8_binary(int32_t a, int32_t b, const bf_add_params *p, int op) {
  int32_t raw;
  if (op == BF_I8_ADD) {
    /* TFLM: both inputs to a common scale with 20 bits of headroom. */
    const int32_t sa =
        bf_i8_requantize(bf_i8_shl(a + p->a_offset, p->left_shift), p->a_mult, p->a_shift);
    const int32_t sb =
        bf_i8_requantize(bf_i8_shl(b + p->b_offset, p->left_shift), p->b_mult, p->b_shift);
    raw = bf_i8_requantize(sa + sb, p->out_mult, p->out_shift);
  } else if (op == BF_I8_MUL) {
    raw = bf_i8_requantize((a + p->a_offset) * (b + p->b_offset), p->out_mult, p->out_shift);
  } else {
    raw = bf_i8_mul_ratio((a + p->a_offset) * (b + p->b_offset), p->out_mult, p->out_shift);
  }
  return bf_i8_clamp(raw + p->out_offset, p->act_min, p->act_max);
}

/* Dense out over 6-D dims; a and b through strides (0 = broadcast). Each
 * output element reads its inputs before it is written: safe in place. */
BF_I8_INLINE void bf_i8_binary_nd(const int8_t *a, const int8_t *b, int8_t *out,
                                  const int32_t *dims, const int32_t *sa, const int32_t *sb,
                                  const bf_add_params *p, int op) {
  const int32_t n5 = dims[5], sa5 = sa[5], sb5 = sb[5];
  BF_FOR_EACH_BROADCAST_ROW(dims, a, sa, pa, b, sb, pb, out, po, {
    for (int32_t i = 0; i < n5; ++i)
      po[i] = bf_i8_binary(pa[(int64_t)i * sa5], pb[(int64_t)i * sb5], p, op);
  });
}

/* Entry points read their struct field by field into a local, in their own
 * body: an int8 store may alias a field read through the pointer (reloaded
 * after every element), and KernelParamsFold.cpp folds only the loads a kernel
 * makes through its own struct argument (not a struct copy, not an inlined
 * helper's); with the fields folded, clang turns the clamp into one SSAT on
 * Cortex-M (own_insns: 25.1 instructions per element, 31.4 without). */
#define BF_I8_FIELD_OF_P(field) p->field,

void bf_add_s8(const int8_t *a, const int8_t *b, int8_t *out, const int32_t *dims,
               const int32_t *aStrides, const int32_t *bStrides, const bf_add_params *p) {
  const bf_add_params q = {BF_ADD_PARAMS_FIELDS(BF_I8_FIELD_OF_P)};
  bf_i8_binary_nd(a, b, out, dims, aStrides, bStrides, &q, BF_I8_ADD);
}

/* Mul's parameters in Add's struct, for the one element loop (a macro, for
 * the reason above). */
#define BF_I8_MUL_AS_ADD(p)                                                                        \
  {                                                                                                \
    (p)->a_offset, 0, 0, (p)->b_offset, 0, 0, 0, (p)->out_offset, (p)->out_mult, (p)->out_shift,   \
        (p)->act_min, (p)->act_max                                                                 \
  }

void bf_mul_s8(const int8_t *a, const int8_t *b, int8_t *out, const int32_t *dims,
               const int32_t *aStrides, const int32_t *bStrides, const bf_mul_params *p) {
  const bf_add_params q = BF_I8_MUL_AS_ADD(p);
  bf_i8_binary_nd(a, b, out, dims, aStrides, bStrides, &q, BF_I8_MUL);
}

void bf_mul_ratio_s8(const int8_t *a, const int8_t *b, int8_t *out, const int32_t *dims,
                     const int32_t *aStrides, const int32_t *bStrides, const bf_mul_params *p) {
  const bf_add_params q = BF_I8_MUL_AS_ADD(p);
  bf_i8_binary_nd(a, b, out, dims, aStrides, bStrides, &q, BF_I8_MUL_RATIO);
}

void bf_clamp_s8(const int8_t *in, int8_t *out, int32_t n, int32_t actMin, int32_t actMax) {
  for (int32_t i = 0; i < n; ++i)
    out[i] = bf_i8_clamp(in[i], actMin, actMax);
}

void bf_quantize_f32_s8(const float *restrict in, int8_t *restrict out, int32_t n, float scale,
                        int32_t zeroPoint) {
  for (int32_t i = 0; i < n; ++i)
    out[i] = bf_i8_clamp(bf_i8_round_quotient(in[i], scale, 0) + zeroPoint, -128, 127);
}

void bf_quantize_even_f32_s8(const float *restrict in, int8_t *restrict out, int32_t n, float scale,
                             int32_t zeroPoint) {
  for (int32_t i = 0; i < n; ++i)
    out[i] = bf_i8_clamp(bf_i8_round_quotient(in[i], scale, 1) + zeroPoint, -128, 127);
}

void bf_dequantize_s8_f32(const int8_t *restrict in, float *restrict out, int32_t n, float scale,
                          int32_t zeroPoint) {
  /* The scale through a register the optimiser cannot see into: with a
   * power-of-two constant, clang 16 folds int->float and multiply into an
   * MVE fixed-point VCVT whose fraction bits it got wrong on Cortex-M55 for
   * some buffer offsets (ResNet-8's output: 8 of 10 values 16x too small,
   * own and --use-cmsis bundles alike). A plain convert and multiply are
   * exact here everywhere. */
  uint32_t bits;
  __builtin_memcpy(&bits, &scale, 4);
  __asm__("" : "+r"(bits));
  __builtin_memcpy(&scale, &bits, 4);
  for (int32_t i = 0; i < n; ++i)
    out[i] = scale * (float)((int32_t)in[i] - zeroPoint);
}
