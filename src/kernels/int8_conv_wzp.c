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
  const bf_i8_conv_args a = BF_I8_CONV_ARGS_OF(conv, quant);
  const int32_t Cg = a.C / a.groups, Mg = a.M / a.groups;
  for (int32_t n = 0; n < a.N; ++n)
    for (int32_t m = 0; m < a.M; ++m) {
      const int8_t *x0 = in + ((int64_t)n * a.C + (int64_t)(m / Mg) * Cg) * a.H * a.W;
      const int8_t *wm = w + (int64_t)m * Cg * a.KH * a.KW;
      const int32_t base = bf_i8_bias(m, bias, bias8, biasMult, biasShift, a.quantFlags);
      const int32_t wo = wOffset[m];
      int8_t *y = out + ((int64_t)n * a.M + m) * a.OH * a.OW;
      for (int32_t oh = 0; oh < a.OH; ++oh)
        for (int32_t ow = 0; ow < a.OW; ++ow) {
          int32_t acc = base;
          for (int32_t cg = 0; cg < Cg; ++cg)
            for (int32_t kh = 0; kh < a.KH; ++kh) {
              const int32_t ih = oh * a.strideH - a.padT + kh * a.dilH;
              if (ih < 0 || ih >= a.H)
                continue; /* padding is the zero point: adds nothing */
              for (int32_t kw = 0; kw < a.KW; ++kw) {
                const int32_t iw = ow * a.strideW - a.padL + kw * a.dilW;
                if (iw < 0 || iw >= a.W)
                  continue;
                acc += ((int32_t)x0[((int64_t)cg * a.H + ih) * a.W + iw] + a.inputOffset) *
                       ((int32_t)wm[((int64_t)cg * a.KH + kh) * a.KW + kw] + wo);
              }
            }
          y[(int64_t)oh * a.OW + ow] = bf_i8_output(acc, m, outMult, outShift, a.quantFlags,
                                                    a.outputOffset, a.actMin, a.actMax);
        }
    }
}

void bf_fully_connected_wzp_s8(const int8_t *restrict in, const int8_t *restrict w,
                               const int32_t *restrict bias, int8_t *restrict out,
                               const bf_fc_params *fc, const bf_quant_params *quant,
                               const int32_t *outMult, const int32_t *outShift, const int8_t *bias8,
                               const int32_t *biasMult, const int32_t *biasShift,
                               const int32_t *wOffset) {
  const int32_t batches = fc->batches, accumDepth = fc->accum_depth, outDepth = fc->out_depth;
  const int32_t transB = fc->trans_b;
  const int32_t inputOffset = quant->input_offset, outputOffset = quant->output_offset;
  const int32_t quantFlags = quant->quant_flags, actMin = quant->act_min, actMax = quant->act_max;
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
