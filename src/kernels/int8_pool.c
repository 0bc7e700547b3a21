/*===- int8_pool.c - int8 max / average pooling, NCHW ----------------------===
 *
 * Output parameters equal the input's (the quantizer guarantees it), so
 * pooling works on the raw int8 values: max is exact, the average is TFLM's
 * and CMSIS-NN's integer mean rounded half away from zero. Not `restrict`:
 * the output may overlap the input's consumed part (pool.c says why).
 *===----------------------------------------------------------------------===*/
#include "int8_util.h"

/* The geometry of an int8 pool's loops, read once through the kernel's own
 * argument (KernelParamsFold folds such loads; a helper taking the pointer
 * would hide them): n * c planes of h x w -> oh x ow. */
#define BF_I8_POOL_GEOMETRY(p)                                                                     \
  const int32_t NC = (p)->n * (p)->c, H = (p)->h, W = (p)->w, OH = (p)->oh, OW = (p)->ow,          \
                KH = (p)->kh, KW = (p)->kw, strideH = (p)->stride_h, strideW = (p)->stride_w,      \
                padT = (p)->pad_t, padL = (p)->pad_l, actMin = (p)->act_min, actMax = (p)->act_max

void bf_maxpool2d_s8(const int8_t *in, int8_t *out, const bf_pool_params *pool) {
  BF_I8_POOL_GEOMETRY(pool);
  const int32_t dilH = pool->dil_h, dilW = pool->dil_w;
  for (int32_t p = 0; p < NC; ++p) {
    const int8_t *x = in + (int64_t)p * H * W;
    int8_t *o = out + (int64_t)p * OH * OW;
    for (int32_t oh = 0; oh < OH; ++oh) {
      for (int32_t ow = 0; ow < OW; ++ow) {
        int32_t best = -128;
        for (int32_t kh = 0; kh < KH; ++kh) {
          const int32_t ih = oh * strideH - padT + kh * dilH;
          if (ih < 0 || ih >= H)
            continue;
          for (int32_t kw = 0; kw < KW; ++kw) {
            const int32_t iw = ow * strideW - padL + kw * dilW;
            if (iw >= 0 && iw < W)
              best = bf_i8_max(best, x[ih * W + iw]);
          }
        }
        o[oh * OW + ow] = bf_i8_clamp(best, actMin, actMax);
      }
    }
  }
}

void bf_avgpool2d_s8(const int8_t *in, int8_t *out, const bf_pool_params *pool) {
  BF_I8_POOL_GEOMETRY(pool); /* dilations 1 (the lowering refuses others) */
  const int32_t padB = pool->pad_b, padR = pool->pad_r, countIncludePad = pool->count_include_pad,
                padValue = pool->pad_value;
  for (int32_t p = 0; p < NC; ++p) {
    const int8_t *x = in + (int64_t)p * H * W;
    int8_t *o = out + (int64_t)p * OH * OW;
    for (int32_t oh = 0; oh < OH; ++oh) {
      int32_t hb, he;
      const int32_t hTotal = bf_i8_pool_span(oh, strideH, padT, padB, KH, H, &hb, &he);
      for (int32_t ow = 0; ow < OW; ++ow) {
        int32_t wb, we;
        const int32_t wTotal = bf_i8_pool_span(ow, strideW, padL, padR, KW, W, &wb, &we);
        int32_t sum = 0;
        for (int32_t ih = hb; ih < he; ++ih)
          for (int32_t iw = wb; iw < we; ++iw)
            sum += x[ih * W + iw];
        const int32_t count = bf_i8_max(he - hb, 0) * bf_i8_max(we - wb, 0);
        const int32_t total = hTotal * wTotal;
        o[oh * OW + ow] = bf_i8_clamp(
            bf_i8_window_mean(sum, count, total, countIncludePad, padValue), actMin, actMax);
      }
    }
  }
}

/* An AveragePool whose output parameters are not its input's (a
 * pre-quantized ONNX model's), computed as onnxruntime's QLinearAveragePool:
 * each input dequantized in float, summed in window order, divided by the
 * count, divided by the output scale, the zero point added, rounded half to
 * even. Every step its own statement: FMA contraction would round
 * differently. */
void bf_avgpool2d_requant_s8(const int8_t *in, int8_t *out, const bf_pool_params *pool,
                             float inScale, float outScale, int32_t outZeroPoint) {
  BF_I8_POOL_GEOMETRY(pool); /* dilations 1 (the lowering refuses others) */
  const int32_t countIncludePad = pool->count_include_pad, inZeroPoint = pool->pad_value;
  const float rounder = 12582912.0f; /* 1.5 * 2^23: adding it rounds half to even */
  const float zero = (float)outZeroPoint;
  for (int32_t p = 0; p < NC; ++p) {
    const int8_t *x = in + (int64_t)p * H * W;
    int8_t *o = out + (int64_t)p * OH * OW;
    for (int32_t oh = 0; oh < OH; ++oh) {
      int32_t hb, he;
      bf_i8_pool_span(oh, strideH, padT, 0, KH, H, &hb, &he);
      for (int32_t ow = 0; ow < OW; ++ow) {
        int32_t wb, we;
        bf_i8_pool_span(ow, strideW, padL, 0, KW, W, &wb, &we);
        float sum = 0.0f;
        for (int32_t ih = hb; ih < he; ++ih)
          for (int32_t iw = wb; iw < we; ++iw) {
            const float real = inScale * (float)((int32_t)x[ih * W + iw] - inZeroPoint);
            sum += real;
          }
        const int32_t count =
            countIncludePad ? KH * KW : bf_i8_max(he - hb, 0) * bf_i8_max(we - wb, 0);
        const float mean = count > 0 ? sum / (float)count : 0.0f;
        const float scaled = mean / outScale;
        float v = scaled + zero;
        v = v > 4.0e6f ? 4.0e6f : (v < -4.0e6f ? -4.0e6f : v);
        const float shifted = v + rounder;
        const float rounded = shifted - rounder;
        o[oh * OW + ow] = bf_i8_clamp((int32_t)rounded, actMin, actMax);
      }
    }
  }
}

void bf_global_avgpool_s8(const int8_t *restrict in, int8_t *restrict out,
                          const bf_pool_params *pool) {
  /* One window over each whole plane (h x w; the lowering flattens the
   * spatial dimensions into w). */
  const int32_t NC = pool->n * pool->c, HW = pool->h * pool->w, actMin = pool->act_min,
                actMax = pool->act_max;
  for (int32_t p = 0; p < NC; ++p) {
    const int8_t *x = in + (int64_t)p * HW;
    int32_t sum = 0;
    for (int32_t i = 0; i < HW; ++i)
      sum += x[i];
    out[p] = bf_i8_clamp(bf_i8_rounded_mean(sum, HW), actMin, actMax);
  }
}
