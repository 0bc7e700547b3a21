/*===- cmsis_nn_stub.c - Test-only stand-in for CMSIS-NN's s8 functions ----===
 *
 * Straightforward NHWC reference loops behind CMSIS-NN's entry points
 * (cmsis_nn_abi.h), with TFLM's arithmetic (int8_util.h), so that a
 * `--use-cmsis` bundle can run without CMSIS-NN: its outputs must equal the
 * portable bundle's bit for bit. Each call:
 *  - fills its context buffer with 0xA5 first (a workspace the planner let
 *    overlap a live tensor would corrupt the result);
 *  - with BF_STUB_LOG (host builds), appends one line with every dimension
 *    and parameter it received to the file named by $BF_CMSIS_STUB_LOG.
 * Softmax is bundlefit's own bf_softmax_s8 (arm_softmax_s8's algorithm).
 *===----------------------------------------------------------------------===*/
#include "bundlefit_kernels_int8.h"
#include "cmsis_nn_abi.h"
#include "int8_util.h"

#include <string.h>
#ifdef BF_STUB_LOG
#include <stdio.h>
#include <stdlib.h>
#define LOG(...)                                                                                   \
  do {                                                                                             \
    const char *path = getenv("BF_CMSIS_STUB_LOG");                                                \
    FILE *f = path ? fopen(path, "a") : NULL;                                                      \
    if (f) {                                                                                       \
      fprintf(f, __VA_ARGS__);                                                                     \
      fclose(f);                                                                                   \
    }                                                                                              \
  } while (0)
#else
#define LOG(...) ((void)0)
#endif

#define DIMS(d) (d)->n, (d)->h, (d)->w, (d)->c
#define DIMS_FMT "%d,%d,%d,%d"

static void poison(const cmsis_nn_context *ctx) {
  if (ctx && ctx->buf && ctx->size > 0)
    memset(ctx->buf, 0xA5, (size_t)ctx->size);
}

static int8_t finish(int32_t acc, int32_t mult, int32_t shift, int32_t outOffset,
                     cmsis_nn_activation act) {
  const int32_t v = bf_i8_requantize(acc, mult, shift) + outOffset;
  return (int8_t)bf_i8_clamp(v, act.min, act.max);
}

arm_cmsis_nn_status arm_convolve_wrapper_s8(const cmsis_nn_context *ctx,
                                            const cmsis_nn_conv_params *p,
                                            const cmsis_nn_per_channel_quant_params *q,
                                            const cmsis_nn_dims *id, const int8_t *in,
                                            const cmsis_nn_dims *fd, const int8_t *w,
                                            const cmsis_nn_dims *bd, const int32_t *bias,
                                            const cmsis_nn_dims *od, int8_t *out) {
  LOG("conv in=" DIMS_FMT " filter=" DIMS_FMT " bias=" DIMS_FMT " out=" DIMS_FMT
      " offsets=%d,%d stride=%d,%d pad=%d,%d dil=%d,%d act=%d,%d ctx=%d buf=%d mult0=%d "
      "shift0=%d\n",
      DIMS(id), DIMS(fd), DIMS(bd), DIMS(od), p->input_offset, p->output_offset, p->stride.w,
      p->stride.h, p->padding.w, p->padding.h, p->dilation.w, p->dilation.h, p->activation.min,
      p->activation.max, ctx->size, ctx->buf != NULL, q->multiplier[0], q->shift[0]);
  poison(ctx);
  for (int32_t n = 0; n < id->n; ++n)
    for (int32_t oy = 0; oy < od->h; ++oy)
      for (int32_t ox = 0; ox < od->w; ++ox)
        for (int32_t m = 0; m < od->c; ++m) {
          int32_t acc = bias ? bias[m] : 0;
          for (int32_t ky = 0; ky < fd->h; ++ky) {
            const int32_t iy = oy * p->stride.h - p->padding.h + ky * p->dilation.h;
            if (iy < 0 || iy >= id->h)
              continue;
            for (int32_t kx = 0; kx < fd->w; ++kx) {
              const int32_t ix = ox * p->stride.w - p->padding.w + kx * p->dilation.w;
              if (ix < 0 || ix >= id->w)
                continue;
              const int8_t *x = in + ((n * id->h + iy) * id->w + ix) * id->c;
              const int8_t *k = w + ((m * fd->h + ky) * fd->w + kx) * fd->c;
              for (int32_t c = 0; c < id->c; ++c)
                acc += (x[c] + p->input_offset) * k[c];
            }
          }
          out[((n * od->h + oy) * od->w + ox) * od->c + m] =
              finish(acc, q->multiplier[m], q->shift[m], p->output_offset, p->activation);
        }
  return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_depthwise_conv_wrapper_s8(const cmsis_nn_context *ctx,
                                                  const cmsis_nn_dw_conv_params *p,
                                                  const cmsis_nn_per_channel_quant_params *q,
                                                  const cmsis_nn_dims *id, const int8_t *in,
                                                  const cmsis_nn_dims *fd, const int8_t *w,
                                                  const cmsis_nn_dims *bd, const int32_t *bias,
                                                  const cmsis_nn_dims *od, int8_t *out) {
  LOG("dwconv in=" DIMS_FMT " filter=" DIMS_FMT " bias=" DIMS_FMT " out=" DIMS_FMT
      " offsets=%d,%d ch_mult=%d stride=%d,%d pad=%d,%d dil=%d,%d act=%d,%d ctx=%d buf=%d\n",
      DIMS(id), DIMS(fd), DIMS(bd), DIMS(od), p->input_offset, p->output_offset, p->ch_mult,
      p->stride.w, p->stride.h, p->padding.w, p->padding.h, p->dilation.w, p->dilation.h,
      p->activation.min, p->activation.max, ctx->size, ctx->buf != NULL);
  poison(ctx);
  for (int32_t n = 0; n < id->n; ++n)
    for (int32_t oy = 0; oy < od->h; ++oy)
      for (int32_t ox = 0; ox < od->w; ++ox)
        for (int32_t c = 0; c < id->c; ++c)
          for (int32_t k = 0; k < p->ch_mult; ++k) {
            const int32_t m = c * p->ch_mult + k;
            int32_t acc = bias ? bias[m] : 0;
            for (int32_t ky = 0; ky < fd->h; ++ky) {
              const int32_t iy = oy * p->stride.h - p->padding.h + ky * p->dilation.h;
              if (iy < 0 || iy >= id->h)
                continue;
              for (int32_t kx = 0; kx < fd->w; ++kx) {
                const int32_t ix = ox * p->stride.w - p->padding.w + kx * p->dilation.w;
                if (ix < 0 || ix >= id->w)
                  continue;
                acc += (in[((n * id->h + iy) * id->w + ix) * id->c + c] + p->input_offset) *
                       w[(ky * fd->w + kx) * fd->c + m];
              }
            }
            out[((n * od->h + oy) * od->w + ox) * od->c + m] =
                finish(acc, q->multiplier[m], q->shift[m], p->output_offset, p->activation);
          }
  return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_fully_connected_s8(const cmsis_nn_context *ctx, const cmsis_nn_fc_params *p,
                                           const cmsis_nn_per_tensor_quant_params *q,
                                           const cmsis_nn_dims *id, const int8_t *in,
                                           const cmsis_nn_dims *fd, const int8_t *w,
                                           const cmsis_nn_dims *bd, const int32_t *bias,
                                           const cmsis_nn_dims *od, int8_t *out) {
  LOG("fc in=" DIMS_FMT " filter=" DIMS_FMT " bias=" DIMS_FMT " out=" DIMS_FMT
      " offsets=%d,%d,%d act=%d,%d mult=%d shift=%d ctx=%d buf=%d\n",
      DIMS(id), DIMS(fd), DIMS(bd), DIMS(od), p->input_offset, p->filter_offset, p->output_offset,
      p->activation.min, p->activation.max, q->multiplier, q->shift, ctx->size, ctx->buf != NULL);
  poison(ctx);
  const int32_t depth = fd->n, outs = od->c;
  for (int32_t b = 0; b < id->n; ++b)
    for (int32_t o = 0; o < outs; ++o) {
      int32_t acc = bias ? bias[o] : 0;
      for (int32_t k = 0; k < depth; ++k)
        acc += (in[b * depth + k] + p->input_offset) * (w[o * depth + k] + p->filter_offset);
      out[b * outs + o] = finish(acc, q->multiplier, q->shift, p->output_offset, p->activation);
    }
  return ARM_CMSIS_NN_SUCCESS;
}

static arm_cmsis_nn_status pool(const char *name, int average, const cmsis_nn_context *ctx,
                                const cmsis_nn_pool_params *p, const cmsis_nn_dims *id,
                                const int8_t *in, const cmsis_nn_dims *fd, const cmsis_nn_dims *od,
                                int8_t *out) {
  LOG("%s in=" DIMS_FMT " filter=" DIMS_FMT " out=" DIMS_FMT
      " stride=%d,%d pad=%d,%d act=%d,%d ctx=%d buf=%d\n",
      name, DIMS(id), DIMS(fd), DIMS(od), p->stride.w, p->stride.h, p->padding.w, p->padding.h,
      p->activation.min, p->activation.max, ctx->size, ctx->buf != NULL);
  (void)name;
  poison(ctx);
  for (int32_t oy = 0; oy < od->h; ++oy)
    for (int32_t ox = 0; ox < od->w; ++ox)
      for (int32_t c = 0; c < id->c; ++c) {
        int32_t best = -128, sum = 0, count = 0;
        for (int32_t ky = 0; ky < fd->h; ++ky) {
          const int32_t iy = oy * p->stride.h - p->padding.h + ky;
          if (iy < 0 || iy >= id->h)
            continue;
          for (int32_t kx = 0; kx < fd->w; ++kx) {
            const int32_t ix = ox * p->stride.w - p->padding.w + kx;
            if (ix < 0 || ix >= id->w)
              continue;
            const int32_t v = in[(iy * id->w + ix) * id->c + c];
            best = v > best ? v : best;
            sum += v, ++count;
          }
        }
        int32_t v = best;
        if (average)
          v = count == 0 ? 0 : sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
        out[(oy * od->w + ox) * od->c + c] =
            (int8_t)bf_i8_clamp(v, p->activation.min, p->activation.max);
      }
  return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_max_pool_s8(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *p,
                                    const cmsis_nn_dims *id, const int8_t *in,
                                    const cmsis_nn_dims *fd, const cmsis_nn_dims *od, int8_t *out) {
  return pool("maxpool", 0, ctx, p, id, in, fd, od, out);
}

arm_cmsis_nn_status arm_avgpool_s8(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *p,
                                   const cmsis_nn_dims *id, const int8_t *in,
                                   const cmsis_nn_dims *fd, const cmsis_nn_dims *od, int8_t *out) {
  return pool("avgpool", 1, ctx, p, id, in, fd, od, out);
}

void arm_softmax_s8(const int8_t *input, int32_t num_rows, int32_t row_size, int32_t mult,
                    int32_t shift, int32_t diff_min, int8_t *output) {
  LOG("softmax rows=%d row_size=%d mult=%d shift=%d diff_min=%d\n", num_rows, row_size, mult, shift,
      diff_min);
  bf_softmax_s8(input, output, num_rows, row_size, 1, mult, shift, diff_min);
}
