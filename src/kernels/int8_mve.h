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

/* The 2x2 products' epilogue: each row's weight sum times the input offset
 * added to its two accumulators, wrapping (uint32_t) as the reference's
 * int32 sums do. */
BF_I8_INLINE void bf_i8_mve_store_2x2(int32_t acc[2][2], int32_t a00, int32_t a01, int32_t a10,
                                      int32_t a11, int32_t s0, int32_t s1, int32_t inputOffset) {
  const uint32_t o0 = (uint32_t)s0 * (uint32_t)inputOffset,
                 o1 = (uint32_t)s1 * (uint32_t)inputOffset;
  acc[0][0] = (int32_t)((uint32_t)a00 + o0), acc[0][1] = (int32_t)((uint32_t)a01 + o0);
  acc[1][0] = (int32_t)((uint32_t)a10 + o1), acc[1][1] = (int32_t)((uint32_t)a11 + o1);
}

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
  /* Not unrolled: with K a constant LLVM would unroll the loop and hoist
   * the column loads out of the caller's channel loop, spilling them. */
#pragma clang loop unroll_count(2)
  for (; k + 16 <= K; k += 16)
    BF_I8_MVE_STEP(vld1q_s8);
  if (k < K) {
    const mve_pred16_t tail = vctp8q((uint32_t)(K - k));
    BF_I8_MVE_STEP(vld1q_z_s8, tail);
  }
#undef BF_I8_MVE_STEP
  bf_i8_mve_store_2x2(acc, a00, a01, a10, a11, s0, s1, inputOffset);
}

/* bf_i8_mve_mat_2x2 for np = 2 with K a run-time value (the shared 1x1
 * path, int8_conv_im2col.c): weight rows w and w + K, columns cols and
 * cols + K. One tail-predicated loop (VCTP, DLSTP/LETP): 16 taps per step,
 * the last one's lanes past K off, so no unrolled body, remainder or tail
 * block per call, and few enough live registers for no spills. */
BF_I8_INLINE void bf_i8_mve_dot_2x2(int32_t acc[2][2], int32_t nm, const int8_t *w,
                                    const int8_t *cols, int32_t K, int32_t inputOffset) {
  const int8_t *w0 = w, *c0 = cols;
  int32_t a00 = acc[0][0], a01 = acc[0][1], a10 = acc[1][0], a11 = acc[1][1];
  int32_t s0 = 0, s1 = 0;
  int32_t k = K; /* K = 0 would run one step with no lanes live: adds 0 */
  do {
    const mve_pred16_t p = vctp8q((uint32_t)k);
    const int8x16_t x0 = vld1q_z_s8(c0, p), x1 = vld1q_z_s8(c0 + K, p);
    const int8x16_t v0 = vld1q_z_s8(w0, p);
    a00 = vmladavaq_p_s8(a00, v0, x0, p);
    a01 = vmladavaq_p_s8(a01, v0, x1, p);
    if (inputOffset)
      s0 = vaddvaq_p_s8(s0, v0, p);
    if (nm == 2) {
      const int8x16_t v1 = vld1q_z_s8(w0 + K, p);
      a10 = vmladavaq_p_s8(a10, v1, x0, p);
      a11 = vmladavaq_p_s8(a11, v1, x1, p);
      if (inputOffset)
        s1 = vaddvaq_p_s8(s1, v1, p);
    }
    k -= 16, w0 += 16, c0 += 16;
  } while (k > 0);
  bf_i8_mve_store_2x2(acc, a00, a01, a10, a11, s0, s1, inputOffset);
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

/* The depthwise output stage: bf_dw_scale, clamped, into o[0, n). */
BF_I8_INLINE void bf_i8_mve_dw_store(int8_t *o, int32_t n, int32x4_t acc, int32_t mult, int32_t add,
                                     int32_t e, int32_t lo, int32_t hi) {
  int32x4_t t = vaddq_n_s32(vqrdmulhq_n_s32(acc, mult), add);
  t = vshlq_r_s32(vaddq_s32(t, vshrq_n_s32(acc, 31)), -e);
  t = vminq_s32(vmaxq_s32(t, vdupq_n_s32(lo)), vdupq_n_s32(hi));
  vstrbq_p_s32(o, t, vctp32q((uint32_t)n));
}

/* One output row of a 3x3 depthwise kernel (int8_depthwise.c's fast path),
 * four outputs per step in int32 lanes: per kernel tap one widening load
 * (VLDRB.S32; stride 2 a gather of every other byte) and one VMLA by the
 * tap's weight w[3 * kernel row + column] (already times 2^s, zero for a
 * kernel row outside the input; the input offset is in the bias b, as in
 * bf_dw3_row). A step whose columns leave [0, W) loads only the columns
 * inside (predicated gathers) and the zero point zp elsewhere. The output
 * stage is bf_dw_scale's (mulhi_r(acc, mult) + add + [acc < 0]) >> e with
 * VRMULH, clamped to [lo, hi]; the last step stores only the lanes < OW. */
BF_I8_INLINE void bf_i8_mve_dw3_row(int8_t *o, const int8_t *const r[3], const int32_t w[9],
                                    int32_t b, int32_t mult, int32_t add, int32_t e, int32_t lo,
                                    int32_t hi, int32_t W, int32_t OW, int32_t padL, int8_t zp,
                                    int32_t s2) {
  const int32_t sw = s2 ? 2 : 1;
  const int32x4_t lanes =
      vmulq_n_s32(vreinterpretq_s32_u32(vidupq_n_u32(0, 1)) /* {0,1,2,3} */, sw);
  const int32x4_t zpv = vdupq_n_s32(zp);
  for (int32_t ow = 0; ow < OW; ow += 4) {
    const int32_t c0 = ow * sw - padL;
    int32x4_t acc = vdupq_n_s32(b);
    if (c0 >= 0 && c0 + 3 * sw + 2 < W && ow + 4 <= OW) {
      for (int32_t k = 0; k < 3; ++k)
        for (int32_t kw = 0; kw < 3; ++kw) {
          const int8_t *p = r[k] + c0 + kw;
          const int32x4_t xv =
              s2 ? vldrbq_gather_offset_s32(p, vreinterpretq_u32_s32(lanes)) : vldrbq_s32(p);
          acc = vmlaq_n_s32(acc, xv, w[3 * k + kw]);
        }
    } else {
      const mve_pred16_t live = vctp32q((uint32_t)(OW - ow));
      for (int32_t kw = 0; kw < 3; ++kw) {
        const int32x4_t col = vaddq_n_s32(lanes, c0 + kw);
        mve_pred16_t in = vcmpgeq_n_s32(col, 0);
        in = vcmpltq_m_n_s32(col, W, in) & live;
        for (int32_t k = 0; k < 3; ++k) {
          const int32x4_t xv = vldrbq_gather_offset_z_s32(r[k], vreinterpretq_u32_s32(col), in);
          acc = vmlaq_n_s32(acc, vpselq_s32(xv, zpv, in), w[3 * k + kw]);
        }
      }
    }
    bf_i8_mve_dw_store(o + ow, OW - ow, acc, mult, add, e, lo, hi);
  }
}

/* A whole plane of a 3x3 depthwise kernel with stride 1, dilation 1, padL =
 * 1 and OW = W >= 4 (the "same" rows, vertical pad padT): output pixel p =
 * oh * W + ow reads input x[p + (kh - padT) * W + kw - 1], so four
 * consecutive pixels of the flattened plane are one step even where they
 * straddle rows (DS-CNN's planes are 5 wide). In steps whose reads stay in
 * the plane only the columns left of ow = 0 and right of ow = W - 1 are
 * outside: their loads are predicated off (0) and their taps' share of the
 * folded input offset is taken out of those lanes' bias (b = bias' with all
 * nine taps' off * w); other steps gather with every outside tap reading
 * zp. Per pixel the same sums as bf_dw3_row's. */
BF_I8_INLINE void bf_i8_mve_dw3_plane_flat(int8_t *o, const int8_t *x, const int32_t w[9],
                                           int32_t b, int32_t inputOffset, int32_t mult,
                                           int32_t add, int32_t e, int32_t lo, int32_t hi,
                                           int32_t H, int32_t W, int32_t OH, int32_t padT,
                                           int8_t zp) {
  const int32_t P = OH * W, HW = H * W;
  const uint32_t off = (uint32_t)inputOffset;
  const int32_t bLeft = (int32_t)((uint32_t)b - off * (uint32_t)(w[0] + w[3] + w[6]));
  const int32_t bRight = (int32_t)((uint32_t)b - off * (uint32_t)(w[2] + w[5] + w[8]));
  const int32x4_t lanes = vreinterpretq_s32_u32(vidupq_n_u32(0, 1)); /* {0,1,2,3} */
  const int32x4_t zpv = vdupq_n_s32(zp);
  /* Steps [pLo, pHi] read rows inside the plane only. */
  const int32_t pLo = padT * W + 1, pHi = bf_i8_min(HW - (2 - padT) * W - 5, P - 4);
  int32x4_t owv = lanes; /* each lane's ow (W >= 4) */
  for (int32_t p = 0; p < P; p += 4) {
    const mve_pred16_t left = vcmpeqq_n_s32(owv, 0), right = vcmpeqq_n_s32(owv, W - 1);
    const mve_pred16_t notLeft = (mve_pred16_t)~left, notRight = (mve_pred16_t)~right;
    int32x4_t acc;
    if (p >= pLo && p <= pHi) {
      acc = vpselq_s32(vdupq_n_s32(bLeft), vdupq_n_s32(b), left);
      acc = vpselq_s32(vdupq_n_s32(bRight), acc, right);
      const int8_t *rp = x + p - padT * W - 1;
      /* Column by column: one predicate per column (Helium has one VPR). */
      for (int32_t kh = 0; kh < 3; ++kh)
        acc = vmlaq_n_s32(acc, vldrbq_z_s32(rp + kh * W, notLeft), w[3 * kh]);
      for (int32_t kh = 0; kh < 3; ++kh)
        acc = vmlaq_n_s32(acc, vldrbq_s32(rp + kh * W + 1), w[3 * kh + 1]);
      for (int32_t kh = 0; kh < 3; ++kh)
        acc = vmlaq_n_s32(acc, vldrbq_z_s32(rp + kh * W + 2, notRight), w[3 * kh + 2]);
    } else {
      acc = vdupq_n_s32(b);
      const mve_pred16_t live = vctp32q((uint32_t)(P - p));
      for (int32_t kh = 0; kh < 3; ++kh)
        for (int32_t kw = 0; kw < 3; ++kw) {
          const int32x4_t idx = vaddq_n_s32(lanes, p + (kh - padT) * W + kw - 1);
          mve_pred16_t in = vcmpgeq_n_s32(idx, 0);
          in = vcmpltq_m_n_s32(idx, HW, in) & live;
          in &= kw == 0 ? notLeft : kw == 2 ? notRight : (mve_pred16_t)0xFFFF;
          const int32x4_t xv = vldrbq_gather_offset_z_s32(x, vreinterpretq_u32_s32(idx), in);
          acc = vmlaq_n_s32(acc, vpselq_s32(xv, zpv, in), w[3 * kh + kw]);
        }
    }
    bf_i8_mve_dw_store(o + p, P - p, acc, mult, add, e, lo, hi);
    owv = vaddq_n_s32(owv, 4);
    owv = vsubq_m_n_s32(owv, owv, W, vcmpgeq_n_s32(owv, W));
  }
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

/* The output stage of one layer with a per-tensor multiplier and shift
 * (double rounding), set up once per call: the shared 1x1 path's per-block
 * bf_i8_mve_output_2x2 reloaded and split the shift for every block (its
 * stores may alias the tables). */
typedef struct {
  int32x4_t left, right; /* max(shift, 0), min(shift, 0) = -e */
  int32_t mult;
} bf_i8_mve_rq1;

BF_I8_INLINE bf_i8_mve_rq1 bf_i8_mve_rq1_init(int32_t outMult, int32_t outShift) {
  bf_i8_mve_rq1 r;
  r.left = vdupq_n_s32(bf_i8_max(outShift, 0)), r.right = vdupq_n_s32(bf_i8_min(outShift, 0));
  r.mult = outMult;
  return r;
}

/* bf_i8_mve_requantize with rq's multiplier and shift in every lane. */
BF_I8_INLINE int32x4_t bf_i8_mve_requantize1(int32x4_t x, const bf_i8_mve_rq1 *rq,
                                             int32_t outputOffset, int32_t actMin, int32_t actMax) {
  const int32x4_t t = vqrdmulhq_n_s32(vshlq_s32(x, rq->left), rq->mult);
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(t, rq->right), 31);
  const int32x4_t r = vrshlq_s32(vqaddq_s32(t, fixup), rq->right);
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
  /* Lane l = 2i + j: channel m + i, pixel j. Multipliers and shifts by
   * one gather each ({m, m, m + 1, m + 1} per channel), the four bytes by
   * one scatter to {0, 1, P, P + 1}, lanes outside nm x np predicated off. */
  const uint32x4_t lane = vidupq_n_u32(0, 1), row = vshrq_n_u32(lane, 1);
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
  const uint32x4_t at = vaddq_u32(vandq_u32(lane, vdupq_n_u32(1)), vmulq_n_u32(row, (uint32_t)P));
  const mve_pred16_t live =
      (mve_pred16_t)(0x000F | (np == 2 ? 0x00F0 : 0) | (nm == 2 ? 0x0F00 : 0) |
                     (np == 2 && nm == 2 ? 0xF000 : 0));
  vstrbq_scatter_offset_p_s32(o, at, r, live);
}

#endif
#endif
