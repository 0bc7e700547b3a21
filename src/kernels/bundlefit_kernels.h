/*===- bundlefit_kernels.h - Portable float32 kernels for bundles ----------===
 *
 * One readable C function per operator, NCHW layout, float32 (plus small
 * integer variants of the elementwise ops, Clip, MaxPool and Pad). The build
 * compiles these files once per target family to LLVM bitcode (clang-16,
 * -O2 -ffreestanding -fno-math-errno); the code generator links that bitcode
 * into each bundle, calls the kernels with constant shapes and offsets and
 * lets LLVM inline and specialise them, the way Glow's libjit works.
 *
 * Rules for kernels:
 *  - no malloc, no globals, no libc headers (freestanding);
 *  - shapes are int32_t scalars so that, once inlined, they constant-fold;
 *    small shape/stride vectors are `const int32_t[6]` (rank padded to 6 at
 *    the front with 1s / 0 strides), emitted as constant globals;
 *  - math: __builtin_sqrtf (an FPU instruction on M4F/M7/M33); exp and the
 *    activations built on it are polynomials (vector_math.h); the rarer
 *    functions (log, trig, erf, Mish's log1pf/tanhf) call newlib's libm
 *    (-lm). memcpy/memset may be emitted by LLVM for copy loops. On
 *    Cortex-M0+ float arithmetic calls libgcc's __aeabi_f* helpers.
 *  - kernels that may run in place (elementwise, unary, softmax, batchnorm,
 *    cast between same-size types) only read an element before writing it.
 *
 * Every exported symbol starts with `bf_`; the code generator marks them
 * internal in each bundle so unused kernels disappear.
 *===----------------------------------------------------------------------===*/
#ifndef BUNDLEFIT_KERNELS_H
#define BUNDLEFIT_KERNELS_H

#include "bundlefit/kernels/abi.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- conv.c ------------------------------------------------------------ */
/* in [n,c,h,w], w [m,c/groups,kh,kw], bias [m] or NULL, out [n,m,oh,ow]
 * (the fields of `conv`, abi.h). */
void bf_conv2d_f32(const float *in, const float *w, const float *bias, float *out,
                   const bf_conv_params *conv, int32_t act, float actA, float actB);
/* in [n,c,h,w], w [c,m/groups,kh,kw], bias [m] or NULL, out [n,m,oh,ow]
 * (oh/ow already include output_padding; pad_t/pad_l are the pads). */
void bf_conv_transpose2d_f32(const float *in, const float *w, const float *bias, float *out,
                             const bf_conv_params *conv, int32_t act, float actA, float actB);
/* 3-D (NCDHW), the geometry in `conv` (abi.h). Weights as above with a KD
 * dimension. */
void bf_conv3d_f32(const float *in, const float *w, const float *bias, float *out,
                   const bf_window3d_params *conv, int32_t act, float actA, float actB);
void bf_conv_transpose3d_f32(const float *in, const float *w, const float *bias, float *out,
                             const bf_window3d_params *conv, int32_t act, float actA, float actB);

/* ---- conv_pool.c / conv_inplace.c (--memory-opt) ------------------------ */
/* ConvPool (ops/FusedOps.h): conv [N,C,H,W] -> [N,M,CH,CW] (conv: oh, ow =
 * CH, CW) pooled to [N,M,PH,PW] (pool: is_max, count_include_pad, chunk;
 * pad_value and act_min/max unused) without storing the conv output;
 * scratch: chunk*CW floats. */
void bf_conv_pool2d_f32(const float *in, const float *w, const float *bias, float *out,
                        float *scratch, const bf_conv_params *conv, const bf_pool_params *pool,
                        int32_t act, float actA, float actB);
/* Depthwise conv (conv: m = groups = c) whose output may share the input's
 * address (needs oh*ow <= h*w); scratch: oh*ow floats. */
void bf_depthwise_inplace_f32(const float *in, const float *w, const float *bias, float *out,
                              float *scratch, const bf_conv_params *conv, int32_t act, float actA,
                              float actB);
/* 1x1 conv (conv: stride 1, no pad, n = 1) whose output may share the
 * input's address, `block` pixels at a time (the first block P % block of
 * them, or a whole block); scratch: m * min(block, h * w) floats. */
void bf_pointwise_inplace_f32(const float *in, const float *w, const float *bias, float *out,
                              float *scratch, const bf_conv_params *conv, int32_t block,
                              int32_t act, float actA, float actB);
/* The matrix product behind it (conv.c): out [m][p] = w [m][c] x [c][p]
 * (+ bias, activation), input channels xs floats apart, p >= 16. */
void bf_pointwise_block_f32(const float *x, const float *w, const float *bias, float *out,
                            int32_t c, int32_t m, int32_t p, int64_t xs, int32_t act, float actA,
                            float actB);

/* ---- pool.c ------------------------------------------------------------ */
/* n*c planes of h x w -> oh x ow (the fields of `pool`, abi.h; MaxPool reads
 * the geometry only). */
void bf_maxpool2d_f32(const float *in, float *out, const bf_pool_params *pool);
/* The same for integer planes (padding never wins: it is the type's lowest). */
void bf_maxpool2d_u8(const uint8_t *in, uint8_t *out, const bf_pool_params *pool);
void bf_maxpool2d_i8(const int8_t *in, int8_t *out, const bf_pool_params *pool);
/* 3-D max (pool->is_max) or average pooling of n*c planes (abi.h). */
void bf_pool3d_f32(const float *in, float *out, const bf_window3d_params *pool);
/* count_include_pad: the divisor counts padded positions inside
 * [-pad_t, h+pad_b) x [-pad_l, w+pad_r) (ONNX count_include_pad=1);
 * dilations must be 1. */
void bf_avgpool2d_f32(const float *in, float *out, const bf_pool_params *pool);
void bf_global_avgpool_f32(const float *in, float *out, int32_t NC, int32_t HW);
void bf_global_maxpool_f32(const float *in, float *out, int32_t NC, int32_t HW);

/* ---- matmul.c ---------------------------------------------------------- */
/* Y[M,N] = alpha * op(A) * op(B) + beta * C, then the activation.
 * op(A) is [M,K] (A stored [K,M] when transA), op(B) is [K,N] (stored [N,K]
 * when transB). C may be NULL; C(i,j) = C[i*cStrideM + j*cStrideN] (strides
 * 0 broadcast). */
void bf_gemm_f32(const float *A, const float *B, const float *C, float *Y,
                 const bf_gemm_params *gemm, float alpha, float beta, int32_t act, float actA,
                 float actB);
/* Batched Y[b] = A[b] * B[b]; A[b] starts at A + b*aBatchStride (0 broadcasts). */
void bf_matmul_f32(const float *A, const float *B, float *Y, const bf_matmul_params *mm,
                   int32_t act, float actA, float actB);

/* ---- norm.c ------------------------------------------------------------ */
void bf_batchnorm_f32(const float *in, float *out, int32_t N, int32_t C, int32_t HW,
                      const float *scale, const float *bias, const float *mean, const float *var,
                      float epsilon);
/* Normalises over `axis` elements spaced `inner` apart, for `outer` blocks. */
void bf_softmax_f32(const float *in, float *out, int32_t outer, int32_t axis, int32_t inner);
void bf_logsoftmax_f32(const float *in, float *out, int32_t outer, int32_t axis, int32_t inner);
/* Reduces in[dims] into out; outStrides has 0 on reduced dimensions.
 * outCount = number of output elements. Mean multiplies by `scale`. */
/* Any bf_reduce_op; the result is multiplied by scale for BF_REDUCE_SUM. */
void bf_reduce_f32(const float *in, float *out, const int32_t *dims, const int32_t *outStrides,
                   int32_t outCount, int32_t op, float scale);
/* ArgMax (isMin 0) / ArgMin over the middle dim of in[outer][n][inner]; ties
 * keep the first index, or the last with selectLast. */
void bf_argmax_f32(const float *in, int64_t *out, int32_t outer, int32_t n, int32_t inner,
                   int32_t isMin, int32_t selectLast);
/* Hardmax: 1 at the first maximum along the middle dim, 0 elsewhere. */
void bf_hardmax_f32(const float *in, float *out, int32_t outer, int32_t n, int32_t inner);
/* LayerNormalization of each of `outer` rows of `inner` elements; mean and
 * invStd (outer each) may be NULL. bias may be NULL. */
void bf_layernorm_f32(const float *in, const float *scale, const float *bias, float *out,
                      float *mean, float *invStd, int32_t outer, int32_t inner, float eps);
/* InstanceNormalization of in[N][C][plane]. */
void bf_instancenorm_f32(const float *in, const float *scale, const float *bias, float *out,
                         int32_t N, int32_t C, int32_t plane, float eps);

/* ---- elementwise.c ----------------------------------------------------- */
/* out[dims] = a op b, with a/b read through strides (0 = broadcast). */
#define BF_DECLARE_BINARY(name)                                                                    \
  void bf_##name##_f32(const float *a, const float *b, float *out, const int32_t *dims,            \
                       const int32_t *aStrides, const int32_t *bStrides);
BF_DECLARE_BINARY(add)
BF_DECLARE_BINARY(sub)
BF_DECLARE_BINARY(mul)
BF_DECLARE_BINARY(div)
BF_DECLARE_BINARY(max)
BF_DECLARE_BINARY(min)
BF_DECLARE_BINARY(prelu)
BF_DECLARE_BINARY(pow)
BF_DECLARE_BINARY(fmod)
#undef BF_DECLARE_BINARY
/* out[i] = f(in[i]) for n elements; a/b are the operator's parameters
 * (clip: min,max; leaky_relu/elu: alpha; hard_sigmoid: alpha,beta). */
#define BF_DECLARE_UNARY(name)                                                                     \
  void bf_##name##_f32(const float *in, float *out, int32_t n, float a, float b);
BF_DECLARE_UNARY(relu)
BF_DECLARE_UNARY(clip)
BF_DECLARE_UNARY(leaky_relu)
BF_DECLARE_UNARY(sigmoid)
BF_DECLARE_UNARY(tanh)
BF_DECLARE_UNARY(hard_sigmoid)
BF_DECLARE_UNARY(hard_swish)
BF_DECLARE_UNARY(exp)
BF_DECLARE_UNARY(sqrt)
BF_DECLARE_UNARY(neg)
BF_DECLARE_UNARY(abs)
BF_DECLARE_UNARY(elu)
BF_DECLARE_UNARY(reciprocal)
#undef BF_DECLARE_UNARY
/* ---- logic.c ----------------------------------------------------------- */
/* out[dims] (bool bytes) = a op b (bf_compare_op), strides as the binary ops. */
#define BF_DECLARE_COMPARE(name, T)                                                                \
  void bf_compare_##name(const T *a, const T *b, uint8_t *out, const int32_t *dims,                \
                         const int32_t *sa, const int32_t *sb, int32_t op);
BF_DECLARE_COMPARE(f32, float)
BF_DECLARE_COMPARE(i8, int8_t)
BF_DECLARE_COMPARE(u8, uint8_t)
BF_DECLARE_COMPARE(i32, int32_t)
BF_DECLARE_COMPARE(i64, int64_t)
#undef BF_DECLARE_COMPARE
void bf_logical_u8(const uint8_t *a, const uint8_t *b, uint8_t *out, const int32_t *dims,
                   const int32_t *sa, const int32_t *sb, int32_t op);
void bf_not_u8(const uint8_t *in, uint8_t *out, int32_t n);
/* out[dims] = cond ? a : b, elements of 1, 4 or 8 bytes. */
#define BF_DECLARE_WHERE(name, T)                                                                  \
  void bf_where_##name(const uint8_t *cond, const T *a, const T *b, T *out, const int32_t *dims,   \
                       const int32_t *sc, const int32_t *sa, const int32_t *sb);
BF_DECLARE_WHERE(u8, uint8_t)
BF_DECLARE_WHERE(u32, uint32_t)
BF_DECLARE_WHERE(u64, uint64_t)
#undef BF_DECLARE_WHERE

/* ---- index.c ----------------------------------------------------------- */
/* Elements of elemSize bytes; indices int32, int64 or (OneHot) float. The
 * indexed axis has dataDim entries in data, indexDim in indices/updates;
 * outer/inner are the dims before/after it. */
#define BF_DECLARE_INDEX_KERNELS(name, I)                                                          \
  void bf_gather_elements_##name(const uint8_t *data, const I *indices, uint8_t *out,              \
                                 int32_t outer, int32_t dataDim, int32_t indexDim, int32_t inner,  \
                                 int32_t elemSize);                                                \
  /* out already holds data; reduction add/mul on float32 only. */                                 \
  void bf_scatter_elements_##name(uint8_t *out, const I *indices, const uint8_t *updates,          \
                                  int32_t outer, int32_t dataDim, int32_t indexDim, int32_t inner, \
                                  int32_t elemSize, int32_t reduction);                            \
  /* Tuples of k indices into data dims (dims, element strides) per batch. */                      \
  void bf_gather_nd_##name(const uint8_t *data, const I *indices, uint8_t *out, int32_t batches,   \
                           int32_t tuples, int32_t k, const int32_t *dims, const int32_t *strides, \
                           int32_t batchStride, int32_t slice, int32_t elemSize);                  \
  /* values = [off, on]; the one-hot axis has depth entries. */                                    \
  void bf_one_hot_##name(const I *indices, const uint8_t *values, uint8_t *out, int32_t outer,     \
                         int32_t depth, int32_t inner, int32_t elemSize);
BF_DECLARE_INDEX_KERNELS(i32, int32_t)
BF_DECLARE_INDEX_KERNELS(i64, int64_t)
BF_DECLARE_INDEX_KERNELS(f32, float)
#undef BF_DECLARE_INDEX_KERNELS
void bf_isnan_f32(const float *in, uint8_t *out, int32_t n);
void bf_isinf_f32(const float *in, uint8_t *out, int32_t n, int32_t negative, int32_t positive);

/* ---- math.c ------------------------------------------------------------ */
/* out[i] = f(in[i]; a, b) for n elements, f = op (bf_unary_op); safe in place. */
void bf_unary_f32(const float *in, float *out, int32_t n, int32_t op, float a, float b);

/* Integer out[dims] = a op b (op: bf_binary_op except PRelu), strides as above.
 * Add/Sub/Mul wrap; Div truncates toward zero, x / 0 = 0. */
#define BF_DECLARE_INT_BINARY(name, T)                                                             \
  void bf_binary_##name(const T *a, const T *b, T *out, const int32_t *dims,                       \
                        const int32_t *aStrides, const int32_t *bStrides, int32_t op);
BF_DECLARE_INT_BINARY(i8, int8_t)
BF_DECLARE_INT_BINARY(u8, uint8_t)
BF_DECLARE_INT_BINARY(i32, int32_t)
BF_DECLARE_INT_BINARY(i64, int64_t)
#undef BF_DECLARE_INT_BINARY
/* out[i] = min(max(in[i], *lo), *hi); a NULL bound is absent. */
#define BF_DECLARE_CLIP_BOUNDS(name, T)                                                            \
  void bf_clip_bounds_##name(const T *in, T *out, int32_t n, const T *lo, const T *hi);
BF_DECLARE_CLIP_BOUNDS(f32, float)
BF_DECLARE_CLIP_BOUNDS(i8, int8_t)
BF_DECLARE_CLIP_BOUNDS(u8, uint8_t)
BF_DECLARE_CLIP_BOUNDS(i32, int32_t)
BF_DECLARE_CLIP_BOUNDS(i64, int64_t)
#undef BF_DECLARE_CLIP_BOUNDS
void bf_cast_i64_f32(const int64_t *in, float *out, int32_t n);
void bf_cast_i32_f32(const int32_t *in, float *out, int32_t n);
void bf_cast_i8_f32(const int8_t *in, float *out, int32_t n);
void bf_cast_u8_f32(const uint8_t *in, float *out, int32_t n);
void bf_cast_f32_i32(const float *in, int32_t *out, int32_t n);
void bf_cast_f32_i64(const float *in, int64_t *out, int32_t n);

/* ---- lstm.c ------------------------------------------------------------ */
/* TFLite's float UNIDIRECTIONAL_SEQUENCE_LSTM (TFLM's, no CIFG/peephole/
 * projection/layer norm) over the whole sequence: x [batch][steps][inputs]
 * ([steps][batch][inputs] when timeMajor), w [4][cells][inputs],
 * r [4][cells][cells], bias [4][cells], gates i, f, c, o; y like x with
 * `cells` columns, the hidden state of every step. p[0]: cell_clip (0: none).
 * cell: [batch][cells] scratch. Zero initial state. */
void bf_lstm_f32(const float *x, const float *w, const float *r, const float *bias, const float *p,
                 float *y, float *cell, int32_t batch, int32_t steps, int32_t inputs, int32_t cells,
                 int32_t timeMajor);

/* ---- data.c ------------------------------------------------------------ */
/* dst[i0..i5 * dstStrides] = src[i0..i5 * srcStrides] over dims (6-D).
 * Transpose, Concat (one call per input), Split (one per output) and Slice
 * (start folded into src, steps into srcStrides) are all this copy. */
void bf_copy_strided_f32(const float *src, float *dst, const int32_t *dims,
                         const int32_t *srcStrides, const int32_t *dstStrides);
void bf_copy_strided_u8(const uint8_t *src, uint8_t *dst, const int32_t *dims,
                        const int32_t *srcStrides, const int32_t *dstStrides);
void bf_copy_strided_u16(const uint16_t *src, uint16_t *dst, const int32_t *dims,
                         const int32_t *srcStrides, const int32_t *dstStrides);
void bf_copy_strided_i64(const int64_t *src, int64_t *dst, const int32_t *dims,
                         const int32_t *srcStrides, const int32_t *dstStrides);
/* Concat of `count` pieces by table, for Concats with many inputs (one
 * specialised copy per input would grow the code and compile time with the
 * input count): each of `rows` output rows is piece 0's row, then piece 1's,
 * ...; piece i starts in region pieces[3i] (0 constantWeight, 1
 * mutableWeight, 2 activations) at byte offset pieces[3i+1], and its rows
 * are pieces[3i+2] bytes. */
void bf_concat_table(const uint8_t *constantWeight, const uint8_t *mutableWeight,
                     const uint8_t *activations, uint8_t *dst, int32_t rows, int32_t count,
                     const int32_t *pieces);
/* Split of src into `count` pieces by table, Concat's inverse: each of `rows`
 * source rows is piece 0's row, then piece 1's, ...; piece i goes to region
 * pieces[3i] (1 mutableWeight, 2 activations; -1: nobody reads it, skip its
 * bytes) at byte offset pieces[3i+1], and its rows are pieces[3i+2] bytes. */
void bf_split_table(const uint8_t *src, uint8_t *mutableWeight, uint8_t *activations, int32_t rows,
                    int32_t count, const int32_t *pieces);
/* out[outDims] from in[inDims] padded by padBegin (6-D), mode bf_pad_mode.
 * Pad only moves elements: u8/u16/u32/u64 serve every type of that size (value
 * is the constant's bit pattern). */
void bf_pad_f32(const float *in, float *out, const int32_t *inDims, const int32_t *outDims,
                const int32_t *padBegin, int32_t mode, float value);
void bf_pad_u8(const uint8_t *in, uint8_t *out, const int32_t *inDims, const int32_t *outDims,
               const int32_t *padBegin, int32_t mode, uint8_t value);
void bf_pad_u16(const uint16_t *in, uint16_t *out, const int32_t *inDims, const int32_t *outDims,
                const int32_t *padBegin, int32_t mode, uint16_t value);
void bf_pad_u32(const uint32_t *in, uint32_t *out, const int32_t *inDims, const int32_t *outDims,
                const int32_t *padBegin, int32_t mode, uint32_t value);
void bf_pad_u64(const uint64_t *in, uint64_t *out, const int32_t *inDims, const int32_t *outDims,
                const int32_t *padBegin, int32_t mode, uint64_t value);
/* 2-D resize of the p->nc planes p->ih x p->iw -> p->oh x p->ow with
 * precomputed source indices (the code generator applies the coordinate
 * transformation and rounding); the zero points are unread. */
void bf_resize_nearest_f32(const float *in, float *out, const bf_resize_params *p,
                           const int32_t *srcH, const int32_t *srcW);
/* The same copy of 1-byte elements (int8 Resize: the codes themselves). */
void bf_resize_nearest_u8(const uint8_t *in, uint8_t *out, const bf_resize_params *p,
                          const int32_t *srcH, const int32_t *srcW);
/* Bilinear: row oh blends input rows h0[oh], h1[oh] with weight hw[oh] on h1. */
void bf_resize_linear_f32(const float *in, float *out, const bf_resize_params *p, const int32_t *h0,
                          const int32_t *h1, const float *hw, const int32_t *w0, const int32_t *w1,
                          const float *ww);
/* Writes `value` to every pixel outside rows [hBegin, hEnd) x columns
 * [wBegin, wEnd) of NC planes OHxOW (Resize tf_crop_and_resize). */
void bf_fill_outside_f32(float *out, int32_t NC, int32_t OH, int32_t OW, int32_t hBegin,
                         int32_t hEnd, int32_t wBegin, int32_t wEnd, float value);
/* out[outer, numIndices, inner] = data[outer, indices[k], inner]; innerBytes
 * = inner * element size; negative indices count from axisDim. */
void bf_gather_i64(const uint8_t *data, const int64_t *indices, uint8_t *out, int32_t outer,
                   int32_t axisDim, int32_t innerBytes, int32_t numIndices);
void bf_gather_i32(const uint8_t *data, const int32_t *indices, uint8_t *out, int32_t outer,
                   int32_t axisDim, int32_t innerBytes, int32_t numIndices);
/* Plain byte copy (a view whose storage could not be shared). */
void bf_copy_bytes(const uint8_t *src, uint8_t *dst, int32_t n);
void bf_col2im_f32(const float *in, float *out, const bf_col2im_params *p);
/* Trilu on in[batch][rows][cols] (elements of 1, 4 or 8 bytes). */
#define BF_DECLARE_TRILU(name, T)                                                                  \
  void bf_trilu_##name(const T *in, T *out, int32_t batch, int32_t rows, int32_t cols, int32_t k,  \
                       int32_t upper);
BF_DECLARE_TRILU(u8, uint8_t)
BF_DECLARE_TRILU(u32, uint32_t)
BF_DECLARE_TRILU(u64, uint64_t)
#undef BF_DECLARE_TRILU

#ifdef __cplusplus
}
#endif

#endif /* BUNDLEFIT_KERNELS_H */
