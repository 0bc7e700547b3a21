/*===- norm.c - BatchNorm, Softmax, LogSoftmax, ReduceMean/Max, float32 ----===*/
#include "kernel_util.h"

void bf_batchnorm_f32(const float *in, float *out, int32_t N, int32_t C, int32_t HW,
                      const float *scale, const float *bias, const float *mean, const float *var,
                      float epsilon) {
  for (int32_t n = 0; n < N; ++n) {
    for (int32_t c = 0; c < C; ++c) {
      const float k = scale[c] / bf_sqrtf(var[c] + epsilon);
      const float d = bias[c] - mean[c] * k;
      const float *x = in + ((int64_t)n * C + c) * HW;
      float *y = out + ((int64_t)n * C + c) * HW;
      for (int32_t i = 0; i < HW; ++i)
        y[i] = x[i] * k + d;
    }
  }
}

/* Safe in place: in[j] is read before out[j] is written. */
BF_INLINE void bf_softmax_common(const float *in, float *out, int32_t outer, int32_t axis,
                                 int32_t inner, int32_t logarithm) {
  for (int32_t o = 0; o < outer; ++o) {
    for (int32_t i = 0; i < inner; ++i) {
      const float *x = in + (int64_t)o * axis * inner + i;
      float *y = out + (int64_t)o * axis * inner + i;
      float mx = -BF_FLT_MAX;
      BF_VECTORIZE
      for (int32_t a = 0; a < axis; ++a)
        mx = bf_maxf(mx, x[(int64_t)a * inner]);
      float sum = 0.0f;
      /* The exp loops vectorize (vector_math.h) with their sums. */
      if (logarithm) {
        BF_VECTORIZE
        for (int32_t a = 0; a < axis; ++a) {
          const float v = x[(int64_t)a * inner] - mx;
          y[(int64_t)a * inner] = v;
          sum += bf_expf(v);
        }
        /* log(sum) without libm's logf: sum is in [1, axis]. */
        float lg = 0.0f;
        {
          /* Newton on exp(l) = sum, starting from a bit-level estimate. */
          union {
            float f;
            uint32_t u;
          } bits = {sum};
          lg = ((float)(int32_t)((bits.u >> 23) & 0xff) - 127.0f) * 0.69314718f;
          for (int it = 0; it < 4; ++it)
            lg = lg - 1.0f + sum * bf_expf(-lg);
        }
        for (int32_t a = 0; a < axis; ++a)
          y[(int64_t)a * inner] -= lg;
      } else {
        BF_VECTORIZE
        for (int32_t a = 0; a < axis; ++a) {
          const float e = bf_expf(x[(int64_t)a * inner] - mx);
          y[(int64_t)a * inner] = e;
          sum += e;
        }
        const float r = 1.0f / sum;
        for (int32_t a = 0; a < axis; ++a)
          y[(int64_t)a * inner] *= r;
      }
    }
  }
}

void bf_softmax_f32(const float *in, float *out, int32_t outer, int32_t axis, int32_t inner) {
  bf_softmax_common(in, out, outer, axis, inner, 0);
}

void bf_logsoftmax_f32(const float *in, float *out, int32_t outer, int32_t axis, int32_t inner) {
  bf_softmax_common(in, out, outer, axis, inner, 1);
}

/* Visits in[dims] in order; the output element is addressed through
 * outStrides (0 on reduced dimensions). */
#define BF_REDUCE_LOOPS(BODY)                                                                      \
  int64_t src = 0;                                                                                 \
  for (int32_t i0 = 0; i0 < dims[0]; ++i0)                                                         \
    for (int32_t i1 = 0; i1 < dims[1]; ++i1)                                                       \
      for (int32_t i2 = 0; i2 < dims[2]; ++i2)                                                     \
        for (int32_t i3 = 0; i3 < dims[3]; ++i3)                                                   \
          for (int32_t i4 = 0; i4 < dims[4]; ++i4) {                                               \
            float *y = out + (int64_t)i0 * outStrides[0] + (int64_t)i1 * outStrides[1] +           \
                       (int64_t)i2 * outStrides[2] + (int64_t)i3 * outStrides[3] +                 \
                       (int64_t)i4 * outStrides[4];                                                \
            const float *x = in + src;                                                             \
            const int32_t s5 = outStrides[5];                                                      \
            for (int32_t i5 = 0; i5 < dims[5]; ++i5) {                                             \
              BODY;                                                                                \
            }                                                                                      \
            src += dims[5];                                                                        \
          }

BF_INLINE float bf_reduce_step(float acc, float v, int32_t op) {
  switch (op) {
  case BF_REDUCE_MAX:
    return bf_maxf(acc, v);
  case BF_REDUCE_MIN:
    return bf_minf(acc, v);
  case BF_REDUCE_PROD:
    return acc * v;
  case BF_REDUCE_L1:
    return acc + __builtin_fabsf(v);
  case BF_REDUCE_L2:
  case BF_REDUCE_SUM_SQUARE:
    return acc + v * v;
  case BF_REDUCE_LOG_SUM_EXP:
    return acc + bf_expf(v);
  default:
    return acc + v; /* SUM, LOG_SUM */
  }
}

void bf_reduce_f32(const float *restrict in, float *restrict out, const int32_t *dims,
                   const int32_t *outStrides, int32_t outCount, int32_t op, float scale) {
  const float init = op == BF_REDUCE_MAX    ? -__builtin_inff()
                     : op == BF_REDUCE_MIN  ? __builtin_inff()
                     : op == BF_REDUCE_PROD ? 1.0f
                                            : 0.0f;
  for (int32_t i = 0; i < outCount; ++i)
    out[i] = init;
  BF_REDUCE_LOOPS(y[(int64_t)i5 * s5] = bf_reduce_step(y[(int64_t)i5 * s5], x[i5], op))
  for (int32_t i = 0; i < outCount; ++i) {
    if (op == BF_REDUCE_SUM)
      out[i] *= scale;
    else if (op == BF_REDUCE_L2)
      out[i] = bf_sqrtf(out[i]);
    else if (op == BF_REDUCE_LOG_SUM || op == BF_REDUCE_LOG_SUM_EXP)
      out[i] = __builtin_logf(out[i]);
  }
}

void bf_argmax_f32(const float *in, int64_t *out, int32_t outer, int32_t n, int32_t inner,
                   int32_t isMin, int32_t selectLast) {
  for (int32_t o = 0; o < outer; ++o)
    for (int32_t i = 0; i < inner; ++i) {
      const float *x = in + (int64_t)o * n * inner + i;
      int32_t best = 0;
      float bestValue = x[0];
      for (int32_t k = 1; k < n; ++k) {
        const float v = x[(int64_t)k * inner];
        const int better = isMin ? (v < bestValue || (selectLast && v == bestValue))
                                 : (v > bestValue || (selectLast && v == bestValue));
        if (better) {
          best = k;
          bestValue = v;
        }
      }
      out[(int64_t)o * inner + i] = best;
    }
}

void bf_hardmax_f32(const float *in, float *out, int32_t outer, int32_t n, int32_t inner) {
  for (int32_t o = 0; o < outer; ++o)
    for (int32_t i = 0; i < inner; ++i) {
      const float *x = in + (int64_t)o * n * inner + i;
      float *y = out + (int64_t)o * n * inner + i;
      int32_t best = 0;
      for (int32_t k = 1; k < n; ++k)
        if (x[(int64_t)k * inner] > x[(int64_t)best * inner])
          best = k;
      for (int32_t k = 0; k < n; ++k)
        y[(int64_t)k * inner] = k == best ? 1.0f : 0.0f;
    }
}

/* The mean and the (biased) variance of x[0, n), in two passes over it
 * (stable for the magnitudes activations have). */
BF_INLINE void bf_mean_variance(const float *x, int32_t n, float *mean, float *variance) {
  float sum = 0.0f;
  BF_VECTORIZE
  for (int32_t i = 0; i < n; ++i)
    sum += x[i];
  const float m = sum / (float)n;
  float var = 0.0f;
  BF_VECTORIZE
  for (int32_t i = 0; i < n; ++i)
    var += (x[i] - m) * (x[i] - m);
  *mean = m;
  *variance = var / (float)n;
}

/* Each row normalised by its own mean and variance; out may equal in. */
void bf_layernorm_f32(const float *in, const float *scale, const float *bias, float *out,
                      float *mean, float *invStd, int32_t outer, int32_t inner, float eps) {
  for (int32_t o = 0; o < outer; ++o) {
    const float *x = in + (int64_t)o * inner;
    float *y = out + (int64_t)o * inner;
    float m, var;
    bf_mean_variance(x, inner, &m, &var);
    const float r = 1.0f / bf_sqrtf(var + eps);
    for (int32_t i = 0; i < inner; ++i)
      y[i] = (x[i] - m) * r * scale[i] + (bias ? bias[i] : 0.0f);
    if (mean)
      mean[o] = m;
    if (invStd)
      invStd[o] = r;
  }
}

void bf_instancenorm_f32(const float *in, const float *scale, const float *bias, float *out,
                         int32_t N, int32_t C, int32_t plane, float eps) {
  for (int32_t n = 0; n < N; ++n)
    for (int32_t c = 0; c < C; ++c) {
      const int64_t base = ((int64_t)n * C + c) * plane;
      const float *x = in + base;
      float *y = out + base;
      float m, var;
      bf_mean_variance(x, plane, &m, &var);
      const float k = scale[c] / bf_sqrtf(var + eps);
      for (int32_t i = 0; i < plane; ++i)
        y[i] = (x[i] - m) * k + bias[c];
    }
}
