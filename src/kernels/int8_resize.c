/*===- int8_resize.c - Linear (bilinear) Resize of int8 planes -------------===
 *
 * A pre-quantized model's DequantizeLinear -> Resize(linear) -> QuantizeLinear
 * as onnxruntime computes it: the four neighbours dequantized in float,
 * blended with the per-row and per-column weights of its bilinear setup (the
 * lower neighbour's weight first), divided by the output scale and rounded
 * half to even. The index and weight tables are computed at compile time
 * (src/ops/resize/ResizeInt8.cpp). Every product and sum is its own
 * statement: FMA contraction would round differently.
 *===----------------------------------------------------------------------===*/
#include "int8_util.h"

void bf_resize_linear_s8(const int8_t *restrict in, int8_t *restrict out, const bf_resize_params *p,
                         const int32_t *h0, const int32_t *h1, const float *hw0, const float *hw1,
                         const int32_t *w0, const int32_t *w1, const float *ww0, const float *ww1,
                         float inScale, float outScale) {
  /* Read here, in the entry function: code generation folds a constant
   * struct's fields only where the kernel itself loads them. */
  const int32_t NC = p->nc, IH = p->ih, IW = p->iw, OH = p->oh, OW = p->ow;
  const int32_t inZeroPoint = p->in_zero_point, outZeroPoint = p->out_zero_point;
  for (int32_t plane = 0; plane < NC; ++plane) {
    const int8_t *x = in + (int64_t)plane * IH * IW;
    int8_t *o = out + (int64_t)plane * OH * OW;
    for (int32_t oh = 0; oh < OH; ++oh) {
      const int8_t *r0 = x + (int64_t)h0[oh] * IW, *r1 = x + (int64_t)h1[oh] * IW;
      for (int32_t ow = 0; ow < OW; ++ow) {
        const float a = inScale * (float)((int32_t)r0[w0[ow]] - inZeroPoint);
        const float b = inScale * (float)((int32_t)r0[w1[ow]] - inZeroPoint);
        const float c = inScale * (float)((int32_t)r1[w0[ow]] - inZeroPoint);
        const float d = inScale * (float)((int32_t)r1[w1[ow]] - inZeroPoint);
        const float ka = ww0[ow] * hw0[oh], kb = ww1[ow] * hw0[oh];
        const float kc = ww0[ow] * hw1[oh], kd = ww1[ow] * hw1[oh];
        const float ta = ka * a, tb = kb * b, tc = kc * c, td = kd * d;
        float sum = ta + tb;
        sum = sum + tc;
        sum = sum + td;
        o[oh * OW + ow] =
            bf_i8_clamp(bf_i8_round_quotient(sum, outScale, 1) + outZeroPoint, -128, 127);
      }
    }
  }
}
