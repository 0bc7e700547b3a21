/*===- int8_conv_im2col.c - int8 Conv (groups == 1) as a matrix product ====
 *
 * bf_conv2d_s8's sums, computed the way CMSIS-NN's arm_convolve_s8 does on
 * the DSP extension: the windows of two output pixels are gathered into a
 * planned scratch (im2col: two columns of K = C*KH*KW input bytes), then two
 * output channels meet the two columns four taps at a time: two column and
 * two weight loads, eight SXTB16/SXTAB16 and eight SMLADs (16 MACs), each
 * column shared by all M output channels.
 *
 * The columns stay int8 (half of CMSIS-NN's int16 buffer) and widen with the
 * input offset to {x0, x2} and, rotated by 8, {x1, x3} (exact in int16); the
 * weights' word widens the same way with SXTB16, so each pair meets its pair
 * in one SMLAD, in ONNX order, with no repacking. The common offsets need no
 * register for it (Thumb has few): 0 is SXTB16, and 128 (zero point -128,
 * after a ReLU) stores x ^ 0x80, which is x + 128 as a uint8, for UXTB16;
 * others take SXTAB16. A padded tap is stored as the zero point
 * (-inputOffset, so flipped too): it adds 0, as in the reference.
 * The int32 sums are the reference's (integer additions in another order),
 * so results are bit-identical; without the DSP extension, with groups != 1
 * or without scratch this is bf_conv2d_s8 itself.
 *
 * Code size: a call is specialised for its shapes (K, M, the windows), which
 * a KxK convolution needs (its column gathering), but a 1x1 stride-1 one
 * does not: in a bundle of several 1x1 shapes (MobileNets have a dozen
 * layers), every such layer calls one shared pointwise function per
 * input-offset kind (bf_i8_pointwise_*), with C, M and the pixel count at
 * run time, and its matrix product's loop in shared functions too
 * (bf_i8_dot*), with the cheaper exact output stage (bf_i8_fast_rq_setup)
 * where the layer's numbers allow. MobileNetV1-0.25 on Cortex-M7: .text
 * 33.0 -> 21.6 KB, 0.76x -> 0.81x of CMSIS-NN's instructions.
 *===----------------------------------------------------------------------===*/
#include "int8_mve.h"

/* Whether the 1x1 convolutions take the shared pointwise function (below):
 * the code generator sets it per bundle (KernelClasses.cpp,
 * choosePointwiseSharing), 1 when it has enough distinct 1x1 shapes. */
__attribute__((weak)) const int32_t bf_pointwise_shared = 1;

#if defined(BF_I8_DSP)

/* The byte a column stores for input x: x ^ 0x80 (x + 128 as a uint8) when
 * the input offset is 128, else x. */
BF_I8_INLINE int32_t bf_i8_col_flip(int32_t inputOffset) {
#if defined(BF_I8_MVE)
  return 0; /* bf_i8_mve_mat_2x2 adds the offset through the weight sums */
#endif
  return inputOffset == 128 ? 0x80 : 0;
}

/* A column word's taps {0, 2} and, with rot = 8, {1, 3}, plus the input
 * offset, in int16 lanes (off: the offset in both lanes). */
BF_I8_INLINE uint32_t bf_i8_col_lanes(uint32_t c, int32_t inputOffset, uint32_t off) {
  if (inputOffset == 0)
    return __sxtb16(c);
  if (inputOffset == 128)
    return __uxtb16(c);
  return __sxtab16(off, c);
}

/* Column of the output pixel whose window starts at input (ih0, iw0):
 * col[k] = x ^ flip at tap k = (c, kh, kw), the ONNX weight order; `pad`
 * where the tap falls outside the input. */
BF_I8_INLINE void bf_i8_im2col(int8_t *col, const int8_t *x, int32_t C, int32_t H, int32_t W,
                               int32_t KH, int32_t KW, int32_t ih0, int32_t iw0, int32_t dilH,
                               int32_t dilW, int32_t flip, int8_t pad) {
  const int64_t HW = (int64_t)H * W;
  const int inside = ih0 >= 0 && iw0 >= 0 && ih0 + (KH - 1) * dilH < H && iw0 + (KW - 1) * dilW < W;
  int8_t *d = col;
  for (int32_t c = 0; c < C; ++c)
    for (int32_t kh = 0; kh < KH; ++kh) {
      const int32_t ih = ih0 + kh * dilH;
      const int8_t *xr = x + c * HW + (int64_t)ih * W;
      if (inside) {
        for (int32_t kw = 0; kw < KW; ++kw)
          d[kw] = (int8_t)(xr[iw0 + kw * dilW] ^ flip);
      } else {
        for (int32_t kw = 0; kw < KW; ++kw) {
          const int32_t iw = iw0 + kw * dilW;
          d[kw] = ih >= 0 && ih < H && iw >= 0 && iw < W ? (int8_t)(xr[iw] ^ flip) : pad;
        }
      }
      d += KW;
    }
}

/* A 1x1 stride-1 convolution's two neighbouring pixels: for four channels,
 * their halfwords (both pixels) of channels c, c + 2 and c + 1, c + 3 as two
 * words, whose even and odd bytes interleave into the two columns' words
 * (each byte ^ flip). */
BF_I8_INLINE void bf_i8_im2col_1x1_pair(int8_t *col0, int8_t *col1, const int8_t *x, int32_t C,
                                        int64_t HW, int32_t flip) {
  const uint32_t flip4 = (uint32_t)flip * 0x01010101u;
  int32_t c = 0;
  for (; c + 4 <= C; c += 4) {
    const int8_t *xc = x + c * HW;
    uint16_t h0, h1, h2, h3;
    __builtin_memcpy(&h0, xc, 2);
    __builtin_memcpy(&h1, xc + HW, 2);
    __builtin_memcpy(&h2, xc + 2 * HW, 2);
    __builtin_memcpy(&h3, xc + 3 * HW, 2);
    const uint32_t t02 = (h0 | ((uint32_t)h2 << 16)) ^ flip4;
    const uint32_t t13 = (h1 | ((uint32_t)h3 << 16)) ^ flip4;
    const uint32_t c0 = (t02 & 0x00FF00FFu) | ((t13 & 0x00FF00FFu) << 8);
    const uint32_t c1 = ((t02 >> 8) & 0x00FF00FFu) | (t13 & 0xFF00FF00u);
    __builtin_memcpy(col0 + c, &c0, 4);
    __builtin_memcpy(col1 + c, &c1, 4);
  }
  for (; c < C; ++c) {
    col0[c] = (int8_t)(x[c * HW] ^ flip);
    col1[c] = (int8_t)(x[c * HW + 1] ^ flip);
  }
}

/* Four taps: a00 (a01 if np == 2) += the weight word at w0 times the
 * column word at c0 (c1), and with nm == 2 a10 (a11) the same for the one
 * at w1.
 * Both columns are widened first (their words then dead), then one weight
 * row at a time: few live registers (Thumb has 13 for 4 sums). */
BF_I8_INLINE void bf_i8_mac_4taps(int32_t *a00, int32_t *a01, int32_t *a10, int32_t *a11,
                                  int32_t nm, int32_t np, const int8_t *col0, const int8_t *col1,
                                  const int8_t *w0, const int8_t *w1, int32_t inputOffset,
                                  uint32_t off) {
  const uint32_t c0 = bf_i8_load4(col0), c1 = np == 2 ? bf_i8_load4(col1) : 0;
  const uint32_t x002 = bf_i8_col_lanes(c0, inputOffset, off);
  const uint32_t x013 = bf_i8_col_lanes(__ror(c0, 8), inputOffset, off);
  const uint32_t x102 = bf_i8_col_lanes(c1, inputOffset, off);
  const uint32_t x113 = bf_i8_col_lanes(__ror(c1, 8), inputOffset, off);
  const uint32_t v0 = bf_i8_load4(w0);
  uint32_t wl = __sxtb16(v0), wh = __sxtb16(__ror(v0, 8));
  *a00 = __smlad(wl, x002, *a00);
  *a00 = __smlad(wh, x013, *a00);
  if (np == 2) {
    *a01 = __smlad(wl, x102, *a01);
    *a01 = __smlad(wh, x113, *a01);
  }
  if (nm == 2) {
    const uint32_t v1 = bf_i8_load4(w1);
    wl = __sxtb16(v1), wh = __sxtb16(__ror(v1, 8));
    *a10 = __smlad(wl, x002, *a10);
    *a10 = __smlad(wh, x013, *a10);
    if (np == 2) {
      *a11 = __smlad(wl, x102, *a11);
      *a11 = __smlad(wh, x113, *a11);
    }
  }
}

/* acc[i][j] += sum over k of w[i*K + k] * (col_j[k] + inputOffset), i < nm,
 * j < np (1 or 2 each): the specialised calls' form (K a constant, the
 * loop unrolled); bf_i8_dot_2x2 is the shared one's. */
BF_I8_INLINE void bf_i8_mat_2x2(int32_t acc[2][2], int32_t nm, int32_t np, const int8_t *w,
                                const int8_t *col0, const int8_t *col1, int32_t K,
                                int32_t inputOffset) {
#if defined(BF_I8_MVE)
  bf_i8_mve_mat_2x2(acc, nm, np, w, col0, col1, K, inputOffset);
  return;
#endif
  const uint32_t off = bf_i8_pack16(inputOffset, inputOffset);
  const int8_t *w0 = w, *w1 = w + K;
  int32_t a00 = acc[0][0], a01 = acc[0][1], a10 = acc[1][0], a11 = acc[1][1];
  int32_t k = 0;
  for (; k + 4 <= K; k += 4) {
    bf_i8_mac_4taps(&a00, &a01, &a10, &a11, nm, np, col0 + k, col1 + k, w0 + k, w1 + k, inputOffset,
                    off);
  }
  for (; k < K; ++k) {
    const int32_t x0 = inputOffset == 128 ? (uint8_t)col0[k] : col0[k] + inputOffset;
    const int32_t x1 = inputOffset == 128 ? (uint8_t)col1[k] : col1[k] + inputOffset;
    a00 += w0[k] * x0;
    if (np == 2)
      a01 += w0[k] * x1;
    if (nm == 2) {
      a10 += w1[k] * x0;
      if (np == 2)
        a11 += w1[k] * x1;
    }
  }
  acc[0][0] = a00, acc[0][1] = a01, acc[1][0] = a10, acc[1][1] = a11;
}

#if !defined(BF_I8_MVE) /* Helium: bf_i8_dot inlines bf_i8_mve_mat_2x2 */
/* acc[i][j] += sum over k < K of w_i[k] * (col_j[k] + inputOffset), i < nm,
 * j < np (1 or 2 each; the callers pass np = 2), with weight rows w_0 = w,
 * w_1 = w + K and columns col_0 = cols, col_1 = cols + K. Each second
 * operand sits K bytes after the first, so one register holds both
 * distances and the loop walks two pointers: with the four sums and the
 * end, few enough live registers for K to be a run-time value, four taps
 * per iteration. */
BF_I8_INLINE void bf_i8_dot_2x2(int32_t acc[2][2], int32_t nm, int32_t np, const int8_t *w,
                                const int8_t *cols, int32_t K, int32_t inputOffset) {
  const uint32_t off = bf_i8_pack16(inputOffset, inputOffset);
  int32_t a00 = acc[0][0], a01 = acc[0][1], a10 = acc[1][0], a11 = acc[1][1];
  const int8_t *c = cols, *wp = w;
  const int8_t *const end = cols + (K & ~3);
#pragma clang loop unroll(disable)
  for (; c != end; c += 4, wp += 4) {
    bf_i8_mac_4taps(&a00, &a01, &a10, &a11, nm, np, c, c + K, wp, wp + K, inputOffset, off);
  }
  for (int32_t k = 0; k < (K & 3); ++k) {
    const int32_t x0 = inputOffset == 128 ? (uint8_t)c[k] : c[k] + inputOffset;
    const int32_t x1 = inputOffset == 128 ? (uint8_t)c[K + k] : c[K + k] + inputOffset;
    a00 += wp[k] * x0;
    if (np == 2)
      a01 += wp[k] * x1;
    if (nm == 2) {
      a10 += wp[K + k] * x0;
      if (np == 2)
        a11 += wp[K + k] * x1;
    }
  }
  acc[0][0] = a00, acc[0][1] = a01, acc[1][0] = a10, acc[1][1] = a11;
}

/* bf_i8_dot_2x2 for np = 2 as shared functions, per weight row count (NM)
 * and input-offset kind (OFF: the offset, or -1 for any other, passed). Out
 * of line, the loop has the registers to itself: inlined into the loop nest
 * around it, LLVM kept two of its pointers and its end on the stack (27
 * instructions per four taps instead of 25). */
#define BF_I8_DOT_KIND(NAME, NM, OFF)                                                              \
  __attribute__((noinline)) static void NAME(int32_t acc[2][2], const int8_t *w,                   \
                                             const int8_t *cols, int32_t K, int32_t inputOffset) { \
    bf_i8_dot_2x2(acc, NM, 2, w, cols, K, OFF < 0 ? inputOffset : OFF);                            \
  }
BF_I8_DOT_KIND(bf_i8_dot2_off0, 2, 0)
BF_I8_DOT_KIND(bf_i8_dot1_off0, 1, 0)
BF_I8_DOT_KIND(bf_i8_dot2_off128, 2, 128)
BF_I8_DOT_KIND(bf_i8_dot1_off128, 1, 128)
BF_I8_DOT_KIND(bf_i8_dot2_offx, 2, -1)
BF_I8_DOT_KIND(bf_i8_dot1_offx, 1, -1)
#endif
#undef BF_I8_DOT_KIND

/* conv.c: 1 at Os (the code generator sets it), where kernels are not
 * specialised per call. */
extern const int32_t bf_size_first;

/* Whether inputOffset is known to be v where the code is compiled (a
 * specialised call): else the kind for any offset, so that an unspecialised
 * copy (Os) does not keep all three. */
#define BF_I8_OFFSET_IS(v) (__builtin_constant_p(inputOffset) && inputOffset == (v))

/* acc += the dot products of nm (a literal) weight rows and the two
 * columns: the kind for inputOffset. */
BF_I8_INLINE void bf_i8_dot(int32_t acc[2][2], int32_t nm, const int8_t *w, const int8_t *cols,
                            int32_t K, int32_t inputOffset) {
#if defined(BF_I8_MVE) /* inline: no call per channel pair */
  bf_i8_mve_dot_2x2(acc, nm, w, cols, K, inputOffset);
#else
  if (BF_I8_OFFSET_IS(0))
    nm == 2 ? bf_i8_dot2_off0(acc, w, cols, K, inputOffset)
            : bf_i8_dot1_off0(acc, w, cols, K, inputOffset);
  else if (BF_I8_OFFSET_IS(128))
    nm == 2 ? bf_i8_dot2_off128(acc, w, cols, K, inputOffset)
            : bf_i8_dot1_off128(acc, w, cols, K, inputOffset);
  else
    nm == 2 ? bf_i8_dot2_offx(acc, w, cols, K, inputOffset)
            : bf_i8_dot1_offx(acc, w, cols, K, inputOffset);
#endif
}

/* The output stage's tables and numbers of one convolution
 * (bundlefit_kernels_int8.h), passed by address to the shared functions
 * below; the arguments that choose code (bias, bias8 null or not,
 * quantFlags) are passed as themselves, so that LLVM drops the paths no
 * call of the bundle takes (interprocedural constant propagation).
 * Per-tensor double rounding also sets up the exact cheaper form
 * (bf_i8_fast_rq_setup) once per call, `fast`, for every channel whose
 * |bias| < biasLimit (0: none). */
typedef struct {
  const int32_t *biasMult, *biasShift, *outMult, *outShift;
  int32_t outputOffset, actMin, actMax;
  uint32_t biasLimit;
  const int8_t *lut; /* a fused activation's table (bf_i8_lut), or null */
  bf_i8_fast_rq fast;
} bf_i8_rq;

/* rq's numbers, and its fast form where the layer allows: acc = bias + a
 * sum of K products w * (x + inputOffset), each at most 128 * max|x +
 * inputOffset| in magnitude (K < 2^16 keeps that bound in uint32), must
 * stay below 2^(31 - s) once shifted. A constant in a specialised call. */
BF_I8_INLINE void bf_i8_rq_init(bf_i8_rq *rq, int32_t K, int32_t inputOffset, int32_t outputOffset,
                                const int32_t *outMult, const int32_t *outShift, int32_t quantFlags,
                                int32_t actMin, int32_t actMax, const int32_t *biasMult,
                                const int32_t *biasShift, const int8_t *lut) {
  rq->lut = lut;
  rq->biasMult = biasMult, rq->biasShift = biasShift, rq->outMult = outMult;
  rq->outShift = outShift, rq->outputOffset = outputOffset, rq->actMin = actMin;
  rq->actMax = actMax, rq->biasLimit = 0;
  const int32_t xMax = bf_i8_max(bf_i8_abs(inputOffset - 128), bf_i8_abs(inputOffset + 127));
  const uint32_t tapBound = (uint32_t)K * 128u * (uint32_t)xMax;
  if (!(quantFlags & (BF_I8_PER_CHANNEL | BF_I8_SINGLE_ROUNDING)) && K < 65536 && outMult[0] > 0 &&
      bf_i8_fast_rq_setup(&rq->fast, outMult[0], outShift[0], outputOffset, actMin, actMax, 0,
                          tapBound, lut))
    rq->biasLimit = (1u << (31 - rq->fast.s)) - tapBound;
}

/* Output channel m's values of a0 at o[0] and, if np == 2, a1 at o[1] (b:
 * its bias): the fast form where rq has it and |b| < rq->biasLimit (acc *
 * 2^s, one SMMULR, add, shift, both outputs clamped at once), else
 * bf_i8_output. */
BF_I8_INLINE void bf_i8_output_pair(int8_t *o, int32_t np, int32_t a0, int32_t a1, int32_t m,
                                    int32_t b, const bf_i8_rq *rq, int32_t quantFlags) {
  if ((b < 0 ? 0u - (uint32_t)b : (uint32_t)b) < rq->biasLimit) {
    bf_i8_fast_store2(o, np, bf_i8_shl(a0, rq->fast.s), bf_i8_shl(a1, rq->fast.s), &rq->fast);
    return;
  }
  o[0] = bf_i8_lut(bf_i8_output(a0, m, rq->outMult, rq->outShift, quantFlags, rq->outputOffset,
                                rq->actMin, rq->actMax),
                   rq->lut);
  if (np == 2)
    o[1] = bf_i8_lut(bf_i8_output(a1, m, rq->outMult, rq->outShift, quantFlags, rq->outputOffset,
                                  rq->actMin, rq->actMax),
                     rq->lut);
}

/* The outputs of a block of two output channels (m, m + 1: nm of them, b0,
 * b1 their biases) and np pixels, acc[i][j] at o[i * P + j]. */
BF_I8_INLINE void bf_i8_output_2x2(int8_t *o, int32_t P, const int32_t acc[2][2], int32_t nm,
                                   int32_t np, int32_t m, int32_t b0, int32_t b1,
                                   const bf_i8_rq *rq, int32_t quantFlags) {
#if defined(BF_I8_MVE)
  bf_i8_mve_output_2x2(o, P, acc, nm, np, m, rq->outMult, rq->outShift, quantFlags,
                       rq->outputOffset, rq->actMin, rq->actMax);
  return;
#endif
  bf_i8_output_pair(o, np, acc[0][0], acc[0][1], m, b0, rq, quantFlags);
  if (nm == 2)
    bf_i8_output_pair(o + P, np, acc[1][0], acc[1][1], m + 1, b1, rq, quantFlags);
}

#if defined(BF_I8_MVE)
/* bf_i8_mat_cols on Helium with a per-tensor double-rounding output stage:
 * its numbers, the 2x2 block's store offsets ({0, 1, P, P + 1}) and lanes
 * set up once per call, not per block (MobileNetV1-0.25 has 31k blocks,
 * most with K <= 64: their setup outweighed the dot products). */
BF_I8_INLINE void bf_i8_mve_mat_cols1(const int8_t *cols, int32_t K, const int8_t *w, int32_t M,
                                      int8_t *o, int32_t P, int32_t np, const int32_t *bias,
                                      const int8_t *bias8, const bf_i8_rq *rq, int32_t quantFlags,
                                      int32_t inputOffset) {
  const bf_i8_mve_rq1 r1 = bf_i8_mve_rq1_init(rq->outMult[0], rq->outShift[0]);
  const int32_t outputOffset = rq->outputOffset, actMin = rq->actMin, actMax = rq->actMax;
  const uint32x4_t lane = vidupq_n_u32(0, 1);
  const uint32x4_t at =
      vaddq_u32(vandq_u32(lane, vdupq_n_u32(1)), vmulq_n_u32(vshrq_n_u32(lane, 1), (uint32_t)P));
  const mve_pred16_t live = np == 2 ? 0xFFFF : 0x0F0F; /* lane 2i + j: channel i, pixel j */
  int32_t m = 0;
  for (; m < M; m += 2) {
    const int32_t nm = M - m >= 2 ? 2 : 1;
    const int32_t b0 = bf_i8_bias(m, bias, bias8, rq->biasMult, rq->biasShift, quantFlags);
    const int32_t b1 =
        nm == 2 ? bf_i8_bias(m + 1, bias, bias8, rq->biasMult, rq->biasShift, quantFlags) : 0;
    int32_t acc[2][2] = {{b0, b0}, {b1, b1}};
    if (nm == 2)
      bf_i8_dot(acc, 2, w + m * K, cols, K, inputOffset);
    else
      bf_i8_dot(acc, 1, w + m * K, cols, K, inputOffset);
    int32x4_t x = vdupq_n_s32(acc[0][0]);
    x = vsetq_lane_s32(acc[0][1], x, 1);
    x = vsetq_lane_s32(acc[1][0], x, 2);
    x = vsetq_lane_s32(acc[1][1], x, 3);
    const int32x4_t r = bf_i8_mve_requantize1(x, &r1, outputOffset, actMin, actMax);
    vstrbq_scatter_offset_p_s32(o + m * P, at, r, nm == 2 ? live : (mve_pred16_t)(live & 0x00FF));
  }
}
#endif

/* Every output channel (M of them, weight rows of K) of the two columns at
 * cols (cols + K the second): o[m * P] and, if np == 2, o[m * P + 1].
 * Channels go in pairs, an odd last one alone. */
BF_I8_INLINE void bf_i8_mat_cols(const int8_t *cols, int32_t K, const int8_t *w, int32_t M,
                                 int8_t *o, int32_t P, int32_t np, const int32_t *bias,
                                 const int8_t *bias8, const bf_i8_rq *rq, int32_t quantFlags,
                                 int32_t inputOffset) {
#if defined(BF_I8_MVE)
  if (!(quantFlags & (BF_I8_PER_CHANNEL | BF_I8_SINGLE_ROUNDING))) {
    bf_i8_mve_mat_cols1(cols, K, w, M, o, P, np, bias, bias8, rq, quantFlags, inputOffset);
    return;
  }
#endif
  int32_t m = 0;
  for (; m + 2 <= M; m += 2) {
    const int32_t b0 = bf_i8_bias(m, bias, bias8, rq->biasMult, rq->biasShift, quantFlags);
    const int32_t b1 = bf_i8_bias(m + 1, bias, bias8, rq->biasMult, rq->biasShift, quantFlags);
    int32_t acc[2][2] = {{b0, b0}, {b1, b1}};
    bf_i8_dot(acc, 2, w + m * K, cols, K, inputOffset);
    bf_i8_output_2x2(o + m * P, P, acc, 2, np, m, b0, b1, rq, quantFlags);
  }
  if (m < M) {
    const int32_t b0 = bf_i8_bias(m, bias, bias8, rq->biasMult, rq->biasShift, quantFlags);
    int32_t acc[2][2] = {{b0, b0}, {0, 0}};
    bf_i8_dot(acc, 1, w + m * K, cols, K, inputOffset);
    bf_i8_output_2x2(o + m * P, P, acc, 1, np, m, b0, 0, rq, quantFlags);
  }
}

/* A 1x1 stride-1 convolution of P pixels (x: the first one's channel 0,
 * HW: the channel stride; consecutive pixels are neighbours in memory,
 * whichever rows they are in), C channels, M outputs into o (channel stride
 * P): pixels in pairs, an odd last one gathered into both columns. */
BF_I8_INLINE void bf_i8_pointwise(const int8_t *x, int32_t HW, int32_t C, int32_t P, int8_t *cols,
                                  const int8_t *w, int32_t M, int8_t *o, const int32_t *bias,
                                  const int8_t *bias8, const bf_i8_rq *rq, int32_t quantFlags,
                                  int32_t inputOffset) {
  const int32_t flip = bf_i8_col_flip(inputOffset);
  for (int32_t p = 0; p < P; p += 2) {
    const int32_t np = P - p >= 2 ? 2 : 1;
    if (np == 2) {
      bf_i8_im2col_1x1_pair(cols, cols + C, x + p, C, HW, flip);
    } else {
      for (int32_t c = 0; c < C; ++c)
        cols[c] = cols[C + c] = (int8_t)(x[c * HW + p] ^ flip);
    }
    bf_i8_mat_cols(cols, C, w, M, o + p, P, np, bias, bias8, rq, quantFlags, inputOffset);
  }
}

/* Shared copies, one per input-offset kind (the column widening differs;
 * OFF: the offset, or -1 for any other, passed), chosen by the specialised
 * caller, so a bundle keeps only the kinds its layers use. The loops need
 * no constant shapes: C, M, P and the pointers are run-time values. `lut`
 * comes as itself, not in *rq, so that a bundle whose calls all pass null
 * drops the table's test (interprocedural constant propagation). */
#define BF_I8_POINTWISE_KIND1(NAME, OFF, LUT, HAS_LUT)                                             \
  __attribute__((noinline)) static void NAME(                                                      \
      const int8_t *restrict x, int32_t HW, int32_t C, int32_t P, int8_t *restrict cols,           \
      const int8_t *restrict w, int32_t M, int8_t *restrict o, const int32_t *restrict bias,       \
      const int8_t *restrict bias8, const bf_i8_rq *restrict rq, int32_t quantFlags,               \
      int32_t inputOffset, const int8_t *lut) {                                                    \
    if (HAS_LUT)                                                                                   \
      BF_I8_LUT_NONNULL(lut);                                                                      \
    bf_i8_rq r = *rq;                                                                              \
    r.lut = r.fast.lut = LUT;                                                                      \
    bf_i8_pointwise(x, HW, C, P, cols, w, M, o, bias, bias8, &r, quantFlags,                       \
                    OFF < 0 ? inputOffset : OFF);                                                  \
  }
/* Each kind without a table (a literal null) and with one (NAME_lut). */
#define BF_I8_POINTWISE_KIND(NAME, OFF)                                                            \
  BF_I8_POINTWISE_KIND1(NAME, OFF, (const int8_t *)0, 0)                                           \
  BF_I8_POINTWISE_KIND1(NAME##_lut, OFF, lut, 1)
BF_I8_POINTWISE_KIND(bf_i8_pointwise_off0, 0)
BF_I8_POINTWISE_KIND(bf_i8_pointwise_off128, 128)
BF_I8_POINTWISE_KIND(bf_i8_pointwise_offx, -1)
#undef BF_I8_POINTWISE_KIND
#undef BF_I8_POINTWISE_KIND1

#endif

void bf_i8_conv2d_im2col(const int8_t *restrict in, const int8_t *restrict w,
                         const int32_t *restrict bias, int8_t *restrict out, int32_t N, int32_t C,
                         int32_t H, int32_t W, int32_t M, int32_t OH, int32_t OW, int32_t KH,
                         int32_t KW, int32_t strideH, int32_t strideW, int32_t padT, int32_t padL,
                         int32_t dilH, int32_t dilW, int32_t groups, int32_t inputOffset,
                         int32_t outputOffset, const int32_t *outMult, const int32_t *outShift,
                         int32_t quantFlags, int32_t actMin, int32_t actMax, const int8_t *bias8,
                         const int32_t *biasMult, const int32_t *biasShift, int8_t *restrict im2col,
                         const int8_t *lut) {
#if defined(BF_I8_DSP)
  if (groups == 1 && im2col) {
    const int32_t K = C * KH * KW, P = OH * OW;
    const int64_t HW = (int64_t)H * W;
    /* 1x1, stride 1, whole input rows (bf_pointwise_inplace_s8 passes a
     * top pad of -r0): output pixel p reads input pixel p - padT * W. */
    const int pointwise = KH == 1 && KW == 1 && strideH == 1 && strideW == 1 && padL == 0 &&
                          OW == W && padT <= 0 && OH - padT <= H;
    /* Then, in a bundle of several 1x1 shapes (bf_pointwise_shared), one
     * shared function per input-offset kind for every such layer
     * (bf_i8_pointwise), but at Os (conv.c's bf_size_first), where the
     * calls are not specialised and the loop below serves them all. */
    const int shared = pointwise && !bf_size_first && bf_pointwise_shared;
    int8_t *col0 = im2col, *col1 = im2col + K;
    const int32_t flip = bf_i8_col_flip(inputOffset);
    const int8_t pad = (int8_t)(-inputOffset ^ flip); /* the zero point: adds 0 */
    for (int32_t n = 0; n < N; ++n) {
      const int8_t *x = in + (int64_t)n * C * HW;
      int8_t *o = out + (int64_t)n * M * P;
      if (shared) {
        const int8_t *x0 = x - (int64_t)padT * W;
        bf_i8_rq rq;
        bf_i8_rq_init(&rq, K, inputOffset, outputOffset, outMult, outShift, quantFlags, actMin,
                      actMax, biasMult, biasShift, lut);
        /* Direct calls (a literal null or the table), so that interprocedural
         * constant propagation still sees each kind's callers. */
#define BF_I8_POINTWISE_CALL(NAME)                                                                 \
  do {                                                                                             \
    if (lut)                                                                                       \
      NAME##_lut(x0, HW, C, P, im2col, w, M, o, bias, bias8, &rq, quantFlags, inputOffset, lut);   \
    else                                                                                           \
      NAME(x0, HW, C, P, im2col, w, M, o, bias, bias8, &rq, quantFlags, inputOffset, 0);           \
  } while (0)
        if (BF_I8_OFFSET_IS(0))
          BF_I8_POINTWISE_CALL(bf_i8_pointwise_off0);
        else if (BF_I8_OFFSET_IS(128))
          BF_I8_POINTWISE_CALL(bf_i8_pointwise_off128);
        else
          BF_I8_POINTWISE_CALL(bf_i8_pointwise_offx);
#undef BF_I8_POINTWISE_CALL
        continue;
      }
      for (int32_t p = 0; p < P; p += 2) {
        const int32_t np = P - p >= 2 ? 2 : 1;
        if (pointwise && np == 2) {
          bf_i8_im2col_1x1_pair(col0, col1, x + p - (int64_t)padT * W, C, HW, flip);
        } else {
          for (int32_t j = 0; j < np; ++j) {
            const int32_t oh = (p + j) / OW, ow = (p + j) % OW;
            bf_i8_im2col(j ? col1 : col0, x, C, H, W, KH, KW, oh * strideH - padT,
                         ow * strideW - padL, dilH, dilW, flip, pad);
          }
        }
        for (int32_t m = 0; m < M; m += 2) {
          const int32_t nm = M - m >= 2 ? 2 : 1;
          const int32_t b0 = bf_i8_bias(m, bias, bias8, biasMult, biasShift, quantFlags);
          const int32_t b1 =
              nm == 2 ? bf_i8_bias(m + 1, bias, bias8, biasMult, biasShift, quantFlags) : 0;
          int32_t acc[2][2] = {{b0, b0}, {b1, b1}};
          const int8_t *wm = w + (int64_t)m * K;
          /* nm, np as literals: each call is specialised. */
          if (nm == 2 && np == 2)
            bf_i8_mat_2x2(acc, 2, 2, wm, col0, col1, K, inputOffset);
          else if (nm == 2)
            bf_i8_mat_2x2(acc, 2, 1, wm, col0, col1, K, inputOffset);
          else if (np == 2)
            bf_i8_mat_2x2(acc, 1, 2, wm, col0, col1, K, inputOffset);
          else
            bf_i8_mat_2x2(acc, 1, 1, wm, col0, col1, K, inputOffset);
#if defined(BF_I8_MVE)
          bf_i8_mve_output_2x2(o + (int64_t)m * P + p, P, acc, nm, np, m, outMult, outShift,
                               quantFlags, outputOffset, actMin, actMax);
#else
          for (int32_t i = 0; i < nm; ++i)
            for (int32_t j = 0; j < np; ++j)
              o[(int64_t)(m + i) * P + p + j] =
                  bf_i8_lut(bf_i8_output(acc[i][j], m + i, outMult, outShift, quantFlags,
                                         outputOffset, actMin, actMax),
                            lut);
#endif
        }
      }
    }
    return;
  }
#endif
  (void)im2col;
  bf_i8_conv2d(in, w, bias, out, N, C, H, W, M, OH, OW, KH, KW, strideH, strideW, padT, padL, dilH,
               dilW, groups, inputOffset, outputOffset, outMult, outShift, quantFlags, actMin,
               actMax, bias8, biasMult, biasShift, lut);
}

/* The entry point (abi.h's structs): bf_i8_conv2d_im2col's arguments. */
void bf_conv2d_im2col_s8(const int8_t *restrict in, const int8_t *restrict w,
                         const int32_t *restrict bias, int8_t *restrict out,
                         const bf_conv_params *conv, const bf_quant_params *quant,
                         const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                         const int32_t *biasMult, const int32_t *biasShift, const int8_t *lut,
                         int8_t *restrict im2col) {
  const bf_i8_conv_args a = BF_I8_CONV_ARGS_OF(conv, quant);
  bf_i8_conv2d_im2col(in, w, bias, out, BF_I8_CONV_FIELDS(a), a.groups, BF_I8_QUANT_OFFSETS(a),
                      outMult, outShift, BF_I8_QUANT_CLAMP(a), bias8, biasMult, biasShift, im2col,
                      BF_I8_STORE_LUT(lut));
  bf_i8_lut_after(out, (int64_t)a.N * a.M * a.OH * a.OW, lut);
}
