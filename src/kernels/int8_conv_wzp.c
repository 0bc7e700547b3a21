/*===- int8_conv_wzp.c - int8 Conv and fully connected, asymmetric weights ===
 *
 * Weights with zero points (ONNX's asymmetric int8 and uint8 weights, kept as
 * int8 minus 128): acc = bias[c] + sum((x + inputOffset) * (w + wOffset[c]))
 * over the window's valid positions, exactly the integer sum QLinearConv /
 * QLinearMatMul and onnxruntime compute, then the usual output stage
 * (bf_i8_output). w + wOffset[c] spans [-255, 255]: no int8 SIMD lane holds
 * it, so these are plain loops, used only for asymmetric weights (bf_conv2d_s8
 * and friends, and CMSIS-NN, take symmetric weights).
 *===----------------------------------------------------------------------===*/
#include "int8_util.h"

void bf_conv2d_wzp_s8(const int8_t *restrict in, const int8_t *restrict w,
                      const int32_t *restrict bias, int8_t *restrict out,
                      const bf_conv_params *conv, const bf_quant_params *quant,
                      const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                      const int32_t *biasMult, const int32_t *biasShift, const int32_t *wOffset) {
  const int32_t N = conv->n, C = conv->c, H = conv->h, W = conv->w, M = conv->m, OH = conv->oh,
                OW = conv->ow, KH = conv->kh, KW = conv->kw, strideH = conv->stride_h,
                strideW = conv->stride_w, padT = conv->pad_t, padL = conv->pad_l,
                dilH = conv->dil_h, dilW = conv->dil_w, groups = conv->groups;
  const int32_t inputOffset = quant->input_offset, outputOffset = quant->output_offset,
                quantFlags = quant->quant_flags, actMin = quant->act_min, actMax = quant->act_max;
  const int32_t Cg = C / groups, Mg = M / groups;
  for (int32_t n = 0; n < N; ++n)
    for (int32_t m = 0; m < M; ++m) {
      const int8_t *x0 = in + ((int64_t)n * C + (int64_t)(m / Mg) * Cg) * H * W;
      const int8_t *wm = w + (int64_t)m * Cg * KH * KW;
      const int32_t base = bf_i8_bias(m, bias, bias8, biasMult, biasShift, quantFlags);
      const int32_t wo = wOffset[m];
      int8_t *y = out + ((int64_t)n * M + m) * OH * OW;
      for (int32_t oh = 0; oh < OH; ++oh)
        for (int32_t ow = 0; ow < OW; ++ow) {
          int32_t acc = base;
          for (int32_t cg = 0; cg < Cg; ++cg)
            for (int32_t kh = 0; kh < KH; ++kh) {
              const int32_t ih = oh * strideH - padT + kh * dilH;
              if (ih < 0 || ih >= H)
                continue; /* padding is the zero point: adds nothing */
              for (int32_t kw = 0; kw < KW; ++kw) {
                const int32_t iw = ow * strideW - padL + kw * dilW;
                if (iw < 0 || iw >= W)
                  continue;
                acc += ((int32_t)x0[((int64_t)cg * H + ih) * W + iw] + inputOffset) *
                       ((int32_t)wm[((int64_t)cg * KH + kh) * KW + kw] + wo);
              }
            }
          y[(int64_t)oh * OW + ow] =
              bf_i8_output(acc, m, outMult, outShift, quantFlags, outputOffset, actMin, actMax);
        }
    }
}

void bf_fully_connected_wzp_s8(const int8_t *restrict in, const int8_t *restrict w,
                               const int32_t *restrict bias, int8_t *restrict out, int32_t batches,
                               int32_t accumDepth, int32_t outDepth, int32_t transB,
                               int32_t inputOffset, int32_t outputOffset, const int32_t *outMult,
                               const int32_t *outShift, int32_t quantFlags, int32_t actMin,
                               int32_t actMax, const int8_t *bias8, const int32_t *biasMult,
                               const int32_t *biasShift, const int32_t *wOffset) {
  /* Weight element (k, o): stride 1 along k when transB ([outDepth, K]). */
  const int32_t kStride = transB ? 1 : outDepth, oStride = transB ? accumDepth : 1;
  for (int32_t bt = 0; bt < batches; ++bt) {
    const int8_t *x = in + (int64_t)bt * accumDepth;
    int8_t *y = out + (int64_t)bt * outDepth;
    for (int32_t o = 0; o < outDepth; ++o) {
      const int8_t *wo = w + (int64_t)o * oStride;
      int32_t acc = bf_i8_bias(o, bias, bias8, biasMult, biasShift, quantFlags);
      for (int32_t k = 0; k < accumDepth; ++k)
        acc += ((int32_t)x[k] + inputOffset) * ((int32_t)wo[(int64_t)k * kStride] + wOffset[o]);
      y[o] = bf_i8_output(acc, o, outMult, outShift, quantFlags, outputOffset, actMin, actMax);
    }
  }
}
