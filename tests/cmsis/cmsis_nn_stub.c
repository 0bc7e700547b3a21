/*===- cmsis_nn_stub.c - Test-only stand-in for CMSIS-NN's s8 functions ----===
 *
 * Straightforward NHWC reference loops behind CMSIS-NN's entry points
 * (cmsis_nn_abi.h), with CMSIS-NN's arithmetic written out here
 * (arm_nn_requantize and the softmax helpers of arm_nnsupportfunctions.h,
 * pure C build), sharing no code with bundlefit's kernels: a `--use-cmsis`
 * bundle runs without CMSIS-NN, and its outputs must equal the portable
 * bundle's bit for bit. Each call:
 *  - fills its context buffer with 0xA5 first (a workspace the planner let
 *    overlap a live tensor would corrupt the result);
 *  - with BF_STUB_LOG (host builds), appends one line with every dimension
 *    and parameter it received to the file named by $BF_CMSIS_STUB_LOG.
 *===----------------------------------------------------------------------===*/
#include "cmsis_nn_abi.h"

#include <stdint.h>
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

static int32_t clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* arm_nn_doubling_high_mult: round(a * b / 2^31), the nudge by sign, the
 * one overflowing product saturated. */
static int32_t doubling_high_mult(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN)
    return INT32_MAX;
  int64_t mult = (a < 0) ^ (b < 0) ? 1 - (1ll << 30) : (1ll << 30);
  mult += (int64_t)a * b;
  return (int32_t)(mult / (1ll << 31));
}

/* arm_nn_divide_by_power_of_two: midpoints away from zero. */
static int32_t divide_by_power_of_two(int32_t dividend, int32_t exponent) {
  const int32_t remainder_mask = (int32_t)((1ll << exponent) - 1);
  const int32_t remainder = remainder_mask & dividend;
  int32_t result = dividend >> exponent;
  int32_t threshold = remainder_mask >> 1;
  if (result < 0)
    threshold++;
  return remainder > threshold ? result + 1 : result;
}

/* arm_nn_requantize, double rounding (CMSIS-NN's default build). */
static int32_t requantize(int32_t val, int32_t multiplier, int32_t shift) {
  const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  return divide_by_power_of_two(doubling_high_mult((int32_t)((uint32_t)val << left), multiplier),
                                right);
}

static int8_t finish(int32_t acc, int32_t mult, int32_t shift, int32_t outOffset,
                     cmsis_nn_activation act) {
  return (int8_t)clamp(requantize(acc, mult, shift) + outOffset, act.min, act.max);
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
        out[(oy * od->w + ox) * od->c + c] = (int8_t)clamp(v, p->activation.min, p->activation.max);
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

/* The softmax helpers of arm_nnsupportfunctions.h (5 integer bits for the
 * scaled differences, 12 for the sum): exp on [-1/4, 0) by its Taylor
 * expansion around -1/8, times exp(-2^k) for each set bit of the rest. */
static int32_t mult_by_power_of_two(int32_t val, int32_t exp) {
  const int32_t thresh = (int32_t)((1ll << (31 - exp)) - 1);
  if (val > thresh)
    return INT32_MAX;
  if (val < -thresh)
    return INT32_MIN;
  return (int32_t)((uint32_t)val << exp);
}

static int32_t exp_on_negative_values(int32_t val) {
  const int32_t shift = 24;
  const int32_t val_mod_minus_quarter = (val & ((1 << shift) - 1)) - (1 << shift);
  const int32_t remainder = val_mod_minus_quarter - val;
  const int32_t x = (int32_t)((uint32_t)val_mod_minus_quarter << 5) + (1 << 28);
  const int32_t x2 = doubling_high_mult(x, x);
  int32_t result =
      1895147668 +
      doubling_high_mult(
          1895147668,
          x + divide_by_power_of_two(
                  doubling_high_mult(divide_by_power_of_two(doubling_high_mult(x2, x2), 2) +
                                         doubling_high_mult(x2, x),
                                     715827883) +
                      x2,
                  1));
  static const int32_t factors[7] = {1672461947, 1302514674, 790015084, 290630308,
                                     39332535,   720401,     242};
  for (int32_t k = 0; k < 7; ++k)
    if (remainder & (1 << (shift + k)))
      result = doubling_high_mult(result, factors[k]);
  return val == 0 ? INT32_MAX : result;
}

static int32_t one_over_one_plus_x_for_x_in_0_1(int32_t val) {
  const int64_t sum = (int64_t)val + (int64_t)INT32_MAX;
  const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
  int32_t x = 1515870810 + doubling_high_mult(half_denominator, -1010580540);
  const int32_t one = 1 << 29;
  for (int32_t i = 0; i < 3; ++i)
    x += mult_by_power_of_two(doubling_high_mult(x, one - doubling_high_mult(half_denominator, x)),
                              2);
  return mult_by_power_of_two(x, 1);
}

/* arm_nn_softmax_common_s8 with int8 output. */
void arm_softmax_s8(const int8_t *input, int32_t num_rows, int32_t row_size, int32_t mult,
                    int32_t shift, int32_t diff_min, int8_t *output) {
  LOG("softmax rows=%d row_size=%d mult=%d shift=%d diff_min=%d\n", num_rows, row_size, mult, shift,
      diff_min);
  for (int32_t row = 0; row < num_rows; ++row, input += row_size, output += row_size) {
    int32_t max = input[0];
    for (int32_t col = 1; col < row_size; ++col)
      max = input[col] > max ? input[col] : max;
    int32_t sum = 0;
    for (int32_t col = 0; col < row_size; ++col) {
      const int32_t diff = input[col] - max;
      if (diff >= diff_min)
        sum += divide_by_power_of_two(
            exp_on_negative_values(doubling_high_mult((int32_t)((uint32_t)diff << shift), mult)),
            12);
    }
    const int32_t headroom = __builtin_clz((uint32_t)sum);
    const int32_t shifted_scale =
        one_over_one_plus_x_for_x_in_0_1((int32_t)(((uint32_t)sum << headroom) - (1u << 31)));
    const int32_t bits = 12 - headroom + 23 > 31 ? 31 : 12 - headroom + 23;
    for (int32_t col = 0; col < row_size; ++col) {
      const int32_t diff = input[col] - max;
      output[col] = -128;
      if (diff >= diff_min)
        output[col] = (int8_t)clamp(
            divide_by_power_of_two(
                doubling_high_mult(shifted_scale, exp_on_negative_values(doubling_high_mult(
                                                      (int32_t)((uint32_t)diff << shift), mult))),
                bits) -
                128,
            -128, 127);
    }
  }
}
