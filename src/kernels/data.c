/*===- data.c - Data movement: strided copy, pad, resize, gather -----------===*/
#include "kernel_util.h"

#define BF_DEFINE_COPY_STRIDED(name, T)                                                            \
  void bf_copy_strided_##name(const T *restrict src, T *restrict dst, const int32_t *dims,         \
                              const int32_t *ss, const int32_t *ds) {                              \
    const int32_t n5 = dims[5], s5 = ss[5], d5 = ds[5];                                            \
    for (int32_t i0 = 0; i0 < dims[0]; ++i0)                                                       \
      for (int32_t i1 = 0; i1 < dims[1]; ++i1)                                                     \
        for (int32_t i2 = 0; i2 < dims[2]; ++i2)                                                   \
          for (int32_t i3 = 0; i3 < dims[3]; ++i3)                                                 \
            for (int32_t i4 = 0; i4 < dims[4]; ++i4) {                                             \
              const T *s = src + (int64_t)i0 * ss[0] + (int64_t)i1 * ss[1] + (int64_t)i2 * ss[2] + \
                           (int64_t)i3 * ss[3] + (int64_t)i4 * ss[4];                              \
              T *d = dst + (int64_t)i0 * ds[0] + (int64_t)i1 * ds[1] + (int64_t)i2 * ds[2] +       \
                     (int64_t)i3 * ds[3] + (int64_t)i4 * ds[4];                                    \
              if (s5 == 1 && d5 == 1) {                                                            \
                for (int32_t i = 0; i < n5; ++i)                                                   \
                  d[i] = s[i];                                                                     \
              } else {                                                                             \
                for (int32_t i = 0; i < n5; ++i)                                                   \
                  d[(int64_t)i * d5] = s[(int64_t)i * s5];                                         \
              }                                                                                    \
            }                                                                                      \
  }
BF_DEFINE_COPY_STRIDED(f32, float)
BF_DEFINE_COPY_STRIDED(u8, uint8_t)
BF_DEFINE_COPY_STRIDED(u16, uint16_t)
BF_DEFINE_COPY_STRIDED(i64, int64_t)

void bf_concat_table(const uint8_t *constantWeight, const uint8_t *mutableWeight,
                     const uint8_t *activations, uint8_t *dst, int32_t rows, int32_t count,
                     const int32_t *pieces) {
  const uint8_t *const bases[3] = {constantWeight, mutableWeight, activations};
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t i = 0; i < count; ++i) {
      const int32_t *piece = pieces + 3 * (int64_t)i;
      const int32_t bytes = piece[2];
      __builtin_memcpy(dst, bases[piece[0]] + piece[1] + (int64_t)r * bytes, (uint32_t)bytes);
      dst += bytes;
    }
}

void bf_split_table(const uint8_t *src, uint8_t *mutableWeight, uint8_t *activations, int32_t rows,
                    int32_t count, const int32_t *pieces) {
  uint8_t *const bases[3] = {0, mutableWeight, activations};
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t i = 0; i < count; ++i) {
      const int32_t *piece = pieces + 3 * (int64_t)i;
      const int32_t bytes = piece[2];
      if (piece[0] > 0)
        __builtin_memcpy(bases[piece[0]] + piece[1] + (int64_t)r * bytes, src, (uint32_t)bytes);
      src += bytes;
    }
}

/* Source coordinate of output coordinate o (already shifted by the pad), or
 * -1 for "use the constant". */
BF_INLINE int32_t bf_pad_source(int32_t i, int32_t n, int32_t mode) {
  if (i >= 0 && i < n)
    return i;
  if (mode == BF_PAD_CONSTANT)
    return -1;
  if (mode == BF_PAD_EDGE)
    return i < 0 ? 0 : n - 1;
  /* reflect (n >= 2 for reflect pads > 0) */
  if (n == 1)
    return 0;
  const int32_t period = 2 * (n - 1);
  i = i < 0 ? -i : i;
  i %= period;
  return i < n ? i : period - i;
}

/* Pad only moves elements, so one instance per element size serves every
 * type (the code generator passes the constant's bit pattern as `value`). */
#define BF_DEFINE_PAD(name, T)                                                                     \
  void bf_pad_##name(const T *restrict in, T *restrict out, const int32_t *inDims,                 \
                     const int32_t *outDims, const int32_t *padBegin, int32_t mode, T value) {     \
    int32_t inStride[BF_MAX_RANK];                                                                 \
    inStride[BF_MAX_RANK - 1] = 1;                                                                 \
    for (int d = BF_MAX_RANK - 2; d >= 0; --d)                                                     \
      inStride[d] = inStride[d + 1] * inDims[d + 1];                                               \
    int64_t dst = 0;                                                                               \
    for (int32_t i0 = 0; i0 < outDims[0]; ++i0) {                                                  \
      const int32_t s0 = bf_pad_source(i0 - padBegin[0], inDims[0], mode);                         \
      for (int32_t i1 = 0; i1 < outDims[1]; ++i1) {                                                \
        const int32_t s1 = bf_pad_source(i1 - padBegin[1], inDims[1], mode);                       \
        for (int32_t i2 = 0; i2 < outDims[2]; ++i2) {                                              \
          const int32_t s2 = bf_pad_source(i2 - padBegin[2], inDims[2], mode);                     \
          for (int32_t i3 = 0; i3 < outDims[3]; ++i3) {                                            \
            const int32_t s3 = bf_pad_source(i3 - padBegin[3], inDims[3], mode);                   \
            for (int32_t i4 = 0; i4 < outDims[4]; ++i4) {                                          \
              const int32_t s4 = bf_pad_source(i4 - padBegin[4], inDims[4], mode);                 \
              T *o = out + dst;                                                                    \
              dst += outDims[5];                                                                   \
              if (s0 < 0 || s1 < 0 || s2 < 0 || s3 < 0 || s4 < 0) {                                \
                for (int32_t i5 = 0; i5 < outDims[5]; ++i5)                                        \
                  o[i5] = value;                                                                   \
                continue;                                                                          \
              }                                                                                    \
              const T *x = in + (int64_t)s0 * inStride[0] + (int64_t)s1 * inStride[1] +            \
                           (int64_t)s2 * inStride[2] + (int64_t)s3 * inStride[3] +                 \
                           (int64_t)s4 * inStride[4];                                              \
              for (int32_t i5 = 0; i5 < outDims[5]; ++i5) {                                        \
                const int32_t s5 = bf_pad_source(i5 - padBegin[5], inDims[5], mode);               \
                o[i5] = s5 < 0 ? value : x[s5];                                                    \
              }                                                                                    \
            }                                                                                      \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }
BF_DEFINE_PAD(f32, float)
BF_DEFINE_PAD(u8, uint8_t)
BF_DEFINE_PAD(u16, uint16_t)
BF_DEFINE_PAD(u32, uint32_t)
BF_DEFINE_PAD(u64, uint64_t)

/* Nearest resize copies elements by the precomputed source row and column:
 * one body for float and for 1-byte codes (int8 Resize). The sizes are read
 * here, in the entry function, where code generation folds a constant
 * struct's fields; the zero points are unread (a copy keeps the codes). */
#define BF_DEFINE_RESIZE_NEAREST(NAME, T)                                                          \
  void NAME(const T *restrict in, T *restrict out, const bf_resize_params *p, const int32_t *srcH, \
            const int32_t *srcW) {                                                                 \
    const int32_t NC = p->nc, IH = p->ih, IW = p->iw, OH = p->oh, OW = p->ow;                      \
    for (int32_t plane = 0; plane < NC; ++plane) {                                                 \
      const T *x = in + (int64_t)plane * IH * IW;                                                  \
      T *o = out + (int64_t)plane * OH * OW;                                                       \
      for (int32_t oh = 0; oh < OH; ++oh) {                                                        \
        const T *xr = x + (int64_t)srcH[oh] * IW;                                                  \
        for (int32_t ow = 0; ow < OW; ++ow)                                                        \
          o[oh * OW + ow] = xr[srcW[ow]];                                                          \
      }                                                                                            \
    }                                                                                              \
  }
BF_DEFINE_RESIZE_NEAREST(bf_resize_nearest_f32, float)
BF_DEFINE_RESIZE_NEAREST(bf_resize_nearest_u8, uint8_t)

void bf_resize_linear_f32(const float *restrict in, float *restrict out, const bf_resize_params *p,
                          const int32_t *h0, const int32_t *h1, const float *hw, const int32_t *w0,
                          const int32_t *w1, const float *ww) {
  const int32_t NC = p->nc, IH = p->ih, IW = p->iw, OH = p->oh, OW = p->ow;
  for (int32_t plane = 0; plane < NC; ++plane) {
    const float *x = in + (int64_t)plane * IH * IW;
    float *o = out + (int64_t)plane * OH * OW;
    for (int32_t oh = 0; oh < OH; ++oh) {
      const float *r0 = x + (int64_t)h0[oh] * IW, *r1 = x + (int64_t)h1[oh] * IW;
      const float fh = hw[oh];
      for (int32_t ow = 0; ow < OW; ++ow) {
        const float fw = ww[ow];
        const float top = r0[w0[ow]] + (r0[w1[ow]] - r0[w0[ow]]) * fw;
        const float bottom = r1[w0[ow]] + (r1[w1[ow]] - r1[w0[ow]]) * fw;
        o[oh * OW + ow] = top + (bottom - top) * fh;
      }
    }
  }
}

/* Sets every pixel of the NC planes OHxOW outside rows [hBegin, hEnd) x
 * columns [wBegin, wEnd) to `value` (Resize tf_crop_and_resize's
 * extrapolation_value). */
void bf_fill_outside_f32(float *restrict out, int32_t NC, int32_t OH, int32_t OW, int32_t hBegin,
                         int32_t hEnd, int32_t wBegin, int32_t wEnd, float value) {
  for (int32_t p = 0; p < NC; ++p) {
    float *o = out + (int64_t)p * OH * OW;
    for (int32_t oh = 0; oh < OH; ++oh) {
      float *row = o + (int64_t)oh * OW;
      const int inside = oh >= hBegin && oh < hEnd;
      for (int32_t ow = 0; ow < OW; ++ow)
        if (!inside || ow < wBegin || ow >= wEnd)
          row[ow] = value;
    }
  }
}

#define BF_DEFINE_GATHER(name, I)                                                                  \
  void bf_gather_##name(const uint8_t *restrict data, const I *indices, uint8_t *restrict out,     \
                        int32_t outer, int32_t axisDim, int32_t innerBytes, int32_t numIndices) {  \
    for (int32_t o = 0; o < outer; ++o) {                                                          \
      const uint8_t *block = data + (int64_t)o * axisDim * innerBytes;                             \
      for (int32_t k = 0; k < numIndices; ++k) {                                                   \
        int64_t idx = (int64_t)indices[k];                                                         \
        if (idx < 0)                                                                               \
          idx += axisDim;                                                                          \
        if (idx < 0)                                                                               \
          idx = 0;                                                                                 \
        if (idx >= axisDim)                                                                        \
          idx = axisDim - 1;                                                                       \
        const uint8_t *s = block + idx * innerBytes;                                               \
        for (int32_t i = 0; i < innerBytes; ++i)                                                   \
          out[i] = s[i];                                                                           \
        out += innerBytes;                                                                         \
      }                                                                                            \
    }                                                                                              \
  }
BF_DEFINE_GATHER(i64, int64_t)
BF_DEFINE_GATHER(i32, int32_t)

void bf_copy_bytes(const uint8_t *src, uint8_t *dst, int32_t n) {
  if (src == dst)
    return;
  for (int32_t i = 0; i < n; ++i)
    dst[i] = src[i];
}

/* Col2Im: out[planes][height][width] = the sum, over the kernelH x kernelW
 * columns of in[planes][kernelH * kernelW][blocksH * blocksW], of each block's
 * value at the pixel it covers (y = by * strideH - padTop + i * dilationH, x
 * likewise); pixels outside the image are dropped, uncovered ones are 0. */
void bf_col2im_f32(const float *in, float *out, const bf_col2im_params *p) {
  const int32_t planes = p->planes, height = p->height, width = p->width;
  const int32_t kernelH = p->kernel_h, kernelW = p->kernel_w;
  const int32_t dilationH = p->dil_h, dilationW = p->dil_w, padTop = p->pad_t, padLeft = p->pad_l;
  const int32_t strideH = p->stride_h, strideW = p->stride_w;
  const int32_t blocksH = p->blocks_h, blocksW = p->blocks_w;
  const int64_t plane = (int64_t)height * width, blocks = (int64_t)blocksH * blocksW;
  for (int64_t i = 0; i < (int64_t)planes * plane; ++i)
    out[i] = 0.0f;
  for (int32_t p = 0; p < planes; ++p)
    for (int32_t i = 0; i < kernelH; ++i)
      for (int32_t j = 0; j < kernelW; ++j) {
        const float *column = in + (((int64_t)p * kernelH + i) * kernelW + j) * blocks;
        float *image = out + (int64_t)p * plane;
        for (int32_t by = 0; by < blocksH; ++by) {
          const int64_t y = (int64_t)by * strideH - padTop + (int64_t)i * dilationH;
          if (y < 0 || y >= height)
            continue;
          for (int32_t bx = 0; bx < blocksW; ++bx) {
            const int64_t x = (int64_t)bx * strideW - padLeft + (int64_t)j * dilationW;
            if (x >= 0 && x < width)
              image[y * width + x] += column[(int64_t)by * blocksW + bx];
          }
        }
      }
}

/* Trilu: in[batch][rows][cols] with the elements off the kept triangle
 * (col - row >= k when upper, <= k otherwise) set to zero; safe in place. */
#define BF_DEFINE_TRILU(name, T)                                                                   \
  void bf_trilu_##name(const T *in, T *out, int32_t batch, int32_t rows, int32_t cols, int32_t k,  \
                       int32_t upper) {                                                            \
    for (int32_t b = 0; b < batch; ++b)                                                            \
      for (int32_t r = 0; r < rows; ++r)                                                           \
        for (int32_t c = 0; c < cols; ++c) {                                                       \
          const int64_t i = ((int64_t)b * rows + r) * cols + c;                                    \
          const int keep = upper ? c - r >= k : c - r <= k;                                        \
          out[i] = keep ? in[i] : (T)0;                                                            \
        }                                                                                          \
  }
BF_DEFINE_TRILU(u8, uint8_t)
BF_DEFINE_TRILU(u32, uint32_t)
BF_DEFINE_TRILU(u64, uint64_t)
