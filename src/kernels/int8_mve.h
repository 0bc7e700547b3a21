/*===- int8_mve.h - Helium (MVE) inner loops of the int8 kernels ----------===
 *
 * Cortex-M55/M85 (cmake/Kernels.cmake's thumbv81m_mve family, compiled with
 * __ARM_FEATURE_MVE) run the int8 kernels' hot loops on 128-bit vectors, the
 * way CMSIS-NN's MVE builds do:
 *  - dot products: VMLADAVA.S8 adds 16 int8 x int8 products to an int32 in one
 *    instruction. The input offset cannot join the int8 lanes, so it is added
 *    once per row as inputOffset * (sum of the row's weights) (VADDVA.S8):
 *    sum w (x + off) = sum w x + off sum w, exact in int32 (integer sums in
 *    another order, as the reference's).
 *  - requantization: VQRDMULH is gemmlowp's saturating rounding doubling high
 *    multiply (floor((ab + 2^30) / 2^31), INT32_MIN^2 saturating), VSHL the
 *    wrapping left shift, and VRSHL after a -1 fixup for negative values the
 *    round-half-away-from-zero divide by 2^e (CMSIS-NN's
 *    arm_divide_by_power_of_two_mve): bit for bit bf_i8_requantize.
 * Included by the kernels that use it; without MVE it defines nothing.
 *===----------------------------------------------------------------------===*/
#ifndef BUNDLEFIT_INT8_MVE_H
#define BUNDLEFIT_INT8_MVE_H

#include "int8_util.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define BF_I8_MVE 1
#include <arm_mve.h>

/* acc[i][j] += sum over k < K of w[i*K + k] * (col_j[k] + inputOffset), for
 * i < nm, j < np (1 or 2 each; literals at every call, so each is
 * specialised). The columns hold the raw input bytes. 16 taps per step: two
 * column and two weight loads, four VMLADAVAs (64 MACs), and with an input
 * offset two VADDVAs for the rows' weight sums; the last K % 16 taps load
 * zeros past the end (predicated loads), which add nothing. */
BF_I8_INLINE void bf_i8_mve_mat_2x2(int32_t acc[2][2], int32_t nm, int32_t np, const int8_t *w,
                                    const int8_t *col0, const int8_t *col1, int32_t K,
                                    int32_t inputOffset) {
  const int8_t *w0 = w, *w1 = w + K;
  int32_t a00 = acc[0][0], a01 = acc[0][1], a10 = acc[1][0], a11 = acc[1][1];
  int32_t s0 = 0, s1 = 0;
  int32_t k = 0;
#define BF_I8_MVE_STEP(LOAD, ...)                                                                  \
  do {                                                                                             \
    const int8x16_t c0 = LOAD(col0 + k, ##__VA_ARGS__);                                            \
    const int8x16_t v0 = LOAD(w0 + k, ##__VA_ARGS__);                                              \
    a00 = vmladavaq_s8(a00, v0, c0);                                                               \
    if (inputOffset)                                                                               \
      s0 = vaddvaq_s8(s0, v0);                                                                     \
    if (np == 2) {                                                                                 \
      const int8x16_t c1 = LOAD(col1 + k, ##__VA_ARGS__);                                          \
      a01 = vmladavaq_s8(a01, v0, c1);                                                             \
      if (nm == 2) {                                                                               \
        const int8x16_t v1 = LOAD(w1 + k, ##__VA_ARGS__);                                          \
        a10 = vmladavaq_s8(a10, v1, c0);                                                           \
        a11 = vmladavaq_s8(a11, v1, c1);                                                           \
        if (inputOffset)                                                                           \
          s1 = vaddvaq_s8(s1, v1);                                                                 \
      }                                                                                            \
    } else if (nm == 2) {                                                                          \
      const int8x16_t v1 = LOAD(w1 + k, ##__VA_ARGS__);                                            \
      a10 = vmladavaq_s8(a10, v1, c0);                                                             \
      if (inputOffset)                                                                             \
        s1 = vaddvaq_s8(s1, v1);                                                                   \
    }                                                                                              \
  } while (0)
  for (; k + 16 <= K; k += 16)
    BF_I8_MVE_STEP(vld1q_s8);
  if (k < K) {
    const mve_pred16_t tail = vctp8q((uint32_t)(K - k));
    BF_I8_MVE_STEP(vld1q_z_s8, tail);
  }
#undef BF_I8_MVE_STEP
  /* Wrapping products and sums (uint32_t): the reference's int32 sums. */
  const uint32_t o0 = (uint32_t)s0 * (uint32_t)inputOffset,
                 o1 = (uint32_t)s1 * (uint32_t)inputOffset;
  acc[0][0] = (int32_t)((uint32_t)a00 + o0), acc[0][1] = (int32_t)((uint32_t)a01 + o0);
  acc[1][0] = (int32_t)((uint32_t)a10 + o1), acc[1][1] = (int32_t)((uint32_t)a11 + o1);
}

/* *acc0 += sum over k < K of w0[k] * (x[k] + inputOffset), *acc1 the same
 * with w1 (a fully connected layer's two weight rows; the weights'
 * zero point is 0): per 16 taps one input and two weight loads, two
 * VMLADAVAs and, with an input offset, two VADDVAs for the weight sums. */
BF_I8_INLINE void bf_i8_mve_dot_rows2(const int8_t *x, const int8_t *w0, const int8_t *w1,
                                      int32_t K, int32_t inputOffset, int32_t *acc0,
                                      int32_t *acc1) {
  int32_t a0 = *acc0, a1 = *acc1, s0 = 0, s1 = 0, k = 0;
#define BF_I8_MVE_DOT(LOAD, ...)                                                                   \
  do {                                                                                             \
    const int8x16_t xv = LOAD(x + k, ##__VA_ARGS__);                                               \
    const int8x16_t v0 = LOAD(w0 + k, ##__VA_ARGS__), v1 = LOAD(w1 + k, ##__VA_ARGS__);            \
    a0 = vmladavaq_s8(a0, v0, xv);                                                                 \
    a1 = vmladavaq_s8(a1, v1, xv);                                                                 \
    if (inputOffset) {                                                                             \
      s0 = vaddvaq_s8(s0, v0);                                                                     \
      s1 = vaddvaq_s8(s1, v1);                                                                     \
    }                                                                                              \
  } while (0)
  for (; k + 16 <= K; k += 16)
    BF_I8_MVE_DOT(vld1q_s8);
  if (k < K) {
    const mve_pred16_t tail = vctp8q((uint32_t)(K - k));
    BF_I8_MVE_DOT(vld1q_z_s8, tail);
  }
#undef BF_I8_MVE_DOT
  *acc0 = (int32_t)((uint32_t)a0 + (uint32_t)s0 * (uint32_t)inputOffset);
  *acc1 = (int32_t)((uint32_t)a1 + (uint32_t)s1 * (uint32_t)inputOffset);
}

/* bf_i8_requantize (double rounding) of four lanes with their own multiplier
 * and shift, + outputOffset, clamped to [actMin, actMax]. */
BF_I8_INLINE int32x4_t bf_i8_mve_requantize(int32x4_t x, int32x4_t mult, int32x4_t shift,
                                            int32_t outputOffset, int32_t actMin, int32_t actMax) {
  const int32x4_t zero = vdupq_n_s32(0);
  const int32x4_t left = vmaxq_s32(shift, zero), right = vminq_s32(shift, zero); /* -e */
  const int32x4_t t = vqrdmulhq_s32(vshlq_s32(x, left), mult);
  /* -1 where t < 0 and e > 0: VRSHL's ties-up rounding becomes ties away
   * from zero (saturating: INT32_MIN - 1 divides as INT32_MIN does). */
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(t, right), 31);
  const int32x4_t r = vrshlq_s32(vqaddq_s32(t, fixup), right);
  return vminq_s32(vmaxq_s32(vaddq_n_s32(r, outputOffset), vdupq_n_s32(actMin)),
                   vdupq_n_s32(actMax));
}

/* The 2x2 block's outputs (acc[i][j] of channel m + i, pixel j) at
 * o[i * P + j], i < nm, j < np: bf_i8_output, four at a time in double
 * rounding (single rounding stays scalar). */
BF_I8_INLINE void bf_i8_mve_output_2x2(int8_t *o, int64_t P, const int32_t acc[2][2], int32_t nm,
                                       int32_t np, int32_t m, const int32_t *outMult,
                                       const int32_t *outShift, int32_t quantFlags,
                                       int32_t outputOffset, int32_t actMin, int32_t actMax) {
  if (quantFlags & BF_I8_SINGLE_ROUNDING) {
    for (int32_t i = 0; i < nm; ++i)
      for (int32_t j = 0; j < np; ++j)
        o[i * P + j] = bf_i8_output(acc[i][j], m + i, outMult, outShift, quantFlags, outputOffset,
                                    actMin, actMax);
    return;
  }
  const int32_t k0 = (quantFlags & BF_I8_PER_CHANNEL) ? m : 0;
  const int32_t k1 = (quantFlags & BF_I8_PER_CHANNEL) && nm == 2 ? m + 1 : k0;
  int32x4_t x = vdupq_n_s32(acc[0][0]);
  x = vsetq_lane_s32(acc[0][1], x, 1);
  x = vsetq_lane_s32(acc[1][0], x, 2);
  x = vsetq_lane_s32(acc[1][1], x, 3);
  int32x4_t mult = vdupq_n_s32(outMult[k0]), shift = vdupq_n_s32(outShift[k0]);
  mult = vsetq_lane_s32(outMult[k1], vsetq_lane_s32(outMult[k1], mult, 2), 3);
  shift = vsetq_lane_s32(outShift[k1], vsetq_lane_s32(outShift[k1], shift, 2), 3);
  const int32x4_t r = bf_i8_mve_requantize(x, mult, shift, outputOffset, actMin, actMax);
  o[0] = (int8_t)vgetq_lane_s32(r, 0);
  if (np == 2)
    o[1] = (int8_t)vgetq_lane_s32(r, 1);
  if (nm == 2) {
    o[P] = (int8_t)vgetq_lane_s32(r, 2);
    if (np == 2)
      o[P + 1] = (int8_t)vgetq_lane_s32(r, 3);
  }
}

#endif
#endif
