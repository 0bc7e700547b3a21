/*===- index.c - GatherElements, ScatterElements, GatherND, OneHot ----------===
 *
 * Elements move as elemSize bytes, so one kernel per index type serves every
 * dtype. Negative indices count from the end of their axis; an index still
 * outside the axis reads zeros (gathers) or writes nothing (scatter), never
 * memory outside the tensors.
 *===----------------------------------------------------------------------===*/
#include "kernel_util.h"

BF_INLINE void bf_copy_element(uint8_t *dst, const uint8_t *src, int32_t elemSize) {
  for (int32_t b = 0; b < elemSize; ++b)
    dst[b] = src[b];
}

BF_INLINE void bf_zero_element(uint8_t *dst, int32_t elemSize) {
  for (int32_t b = 0; b < elemSize; ++b)
    dst[b] = 0;
}

/* The index into an axis of length dim, or -1 when outside it. */
BF_INLINE int64_t bf_axis_index(int64_t index, int64_t dim) {
  if (index < 0)
    index += dim;
  return index >= 0 && index < dim ? index : -1;
}

#define BF_DEFINE_INDEX_KERNELS(name, I)                                                           \
  void bf_gather_elements_##name(const uint8_t *data, const I *indices, uint8_t *out,              \
                                 int32_t outer, int32_t dataDim, int32_t indexDim, int32_t inner,  \
                                 int32_t elemSize) {                                               \
    for (int32_t o = 0; o < outer; ++o)                                                            \
      for (int32_t j = 0; j < indexDim; ++j)                                                       \
        for (int32_t i = 0; i < inner; ++i) {                                                      \
          const int64_t at = ((int64_t)o * indexDim + j) * inner + i;                              \
          const int64_t k = bf_axis_index((int64_t)indices[at], dataDim);                          \
          if (k < 0)                                                                               \
            bf_zero_element(out + at * elemSize, elemSize);                                        \
          else                                                                                     \
            bf_copy_element(out + at * elemSize,                                                   \
                            data + (((int64_t)o * dataDim + k) * inner + i) * elemSize, elemSize); \
        }                                                                                          \
  }                                                                                                \
  void bf_scatter_elements_##name(uint8_t *out, const I *indices, const uint8_t *updates,          \
                                  int32_t outer, int32_t dataDim, int32_t indexDim, int32_t inner, \
                                  int32_t elemSize, int32_t reduction) {                           \
    for (int32_t o = 0; o < outer; ++o)                                                            \
      for (int32_t j = 0; j < indexDim; ++j)                                                       \
        for (int32_t i = 0; i < inner; ++i) {                                                      \
          const int64_t at = ((int64_t)o * indexDim + j) * inner + i;                              \
          const int64_t k = bf_axis_index((int64_t)indices[at], dataDim);                          \
          if (k < 0)                                                                               \
            continue;                                                                              \
          uint8_t *dst = out + (((int64_t)o * dataDim + k) * inner + i) * elemSize;                \
          const uint8_t *src = updates + at * elemSize;                                            \
          if (reduction == BF_SCATTER_NONE) {                                                      \
            bf_copy_element(dst, src, elemSize);                                                   \
          } else { /* float32 */                                                                   \
            float *d = (float *)dst;                                                               \
            const float u = *(const float *)src;                                                   \
            *d = reduction == BF_SCATTER_ADD ? *d + u : *d * u;                                    \
          }                                                                                        \
        }                                                                                          \
  }                                                                                                \
  void bf_gather_nd_##name(const uint8_t *data, const I *indices, uint8_t *out, int32_t batches,   \
                           int32_t tuples, int32_t k, const int32_t *dims, const int32_t *strides, \
                           int32_t batchStride, int32_t slice, int32_t elemSize) {                 \
    int64_t o = 0;                                                                                 \
    for (int32_t b = 0; b < batches; ++b)                                                          \
      for (int32_t t = 0; t < tuples; ++t) {                                                       \
        const I *tuple = indices + ((int64_t)b * tuples + t) * k;                                  \
        int64_t from = (int64_t)b * batchStride;                                                   \
        int valid = 1;                                                                             \
        for (int32_t j = 0; j < k; ++j) {                                                          \
          const int64_t index = bf_axis_index((int64_t)tuple[j], dims[j]);                         \
          valid &= index >= 0;                                                                     \
          from += (index < 0 ? 0 : index) * strides[j];                                            \
        }                                                                                          \
        for (int32_t e = 0; e < slice; ++e, ++o) {                                                 \
          if (valid)                                                                               \
            bf_copy_element(out + o * elemSize, data + (from + e) * elemSize, elemSize);           \
          else                                                                                     \
            bf_zero_element(out + o * elemSize, elemSize);                                         \
        }                                                                                          \
      }                                                                                            \
  }                                                                                                \
  void bf_one_hot_##name(const I *indices, const uint8_t *values, uint8_t *out, int32_t outer,     \
                         int32_t depth, int32_t inner, int32_t elemSize) {                         \
    for (int32_t o = 0; o < outer; ++o)                                                            \
      for (int32_t j = 0; j < depth; ++j)                                                          \
        for (int32_t i = 0; i < inner; ++i) {                                                      \
          int64_t index = (int64_t)indices[(int64_t)o * inner + i];                                \
          if (index < 0)                                                                           \
            index += depth;                                                                        \
          bf_copy_element(out + (((int64_t)o * depth + j) * inner + i) * elemSize,                 \
                          values + (index == j ? elemSize : 0), elemSize);                         \
        }                                                                                          \
  }
BF_DEFINE_INDEX_KERNELS(i32, int32_t)
BF_DEFINE_INDEX_KERNELS(i64, int64_t)
BF_DEFINE_INDEX_KERNELS(f32, float)

void bf_isnan_f32(const float *in, uint8_t *out, int32_t n) {
  for (int32_t i = 0; i < n; ++i)
    out[i] = (uint8_t)(in[i] != in[i]);
}

void bf_isinf_f32(const float *in, uint8_t *out, int32_t n, int32_t negative, int32_t positive) {
  for (int32_t i = 0; i < n; ++i)
    out[i] = (uint8_t)((negative && in[i] == -__builtin_inff()) ||
                       (positive && in[i] == __builtin_inff()));
}
