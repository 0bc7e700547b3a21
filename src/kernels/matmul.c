/*===- matmul.c - Gemm (fully connected) and batched MatMul, float32 -------===*/
#include "kernel_util.h"

/* Y[M,N] = op(A) * op(B) for row-major storage. Without transB the inner
 * loop streams a row of B into a row of Y (axpy); with transB each output is
 * a dot product of two contiguous rows (the usual fully-connected layout). */
BF_INLINE void bf_gemm_core(const float *restrict A, const float *restrict B, float *restrict Y,
                            int32_t M, int32_t N, int32_t K, int32_t transA, int32_t transB) {
  for (int32_t i = 0; i < M; ++i) {
    float *y = Y + (int64_t)i * N;
    if (!transB) {
      for (int32_t j = 0; j < N; ++j)
        y[j] = 0.0f;
      for (int32_t k = 0; k < K; ++k) {
        const float a = transA ? A[(int64_t)k * M + i] : A[(int64_t)i * K + k];
        const float *b = B + (int64_t)k * N;
        for (int32_t j = 0; j < N; ++j)
          y[j] += a * b[j];
      }
    } else if (!transA) {
      const float *a = A + (int64_t)i * K;
      for (int32_t j = 0; j < N; ++j) {
        const float *b = B + (int64_t)j * K;
        float sum = 0.0f;
        BF_VECTORIZE
        for (int32_t k = 0; k < K; ++k)
          sum += a[k] * b[k];
        y[j] = sum;
      }
    } else {
      for (int32_t j = 0; j < N; ++j) {
        const float *b = B + (int64_t)j * K;
        float sum = 0.0f;
        for (int32_t k = 0; k < K; ++k)
          sum += A[(int64_t)k * M + i] * b[k];
        y[j] = sum;
      }
    }
  }
}

void bf_gemm_f32(const float *restrict A, const float *restrict B, const float *restrict C,
                 float *restrict Y, const bf_gemm_params *gemm, float alpha, float beta,
                 int32_t act, float actA, float actB) {
  /* Read once, through the argument itself: KernelParamsFold folds these. */
  const int32_t M = gemm->m, N = gemm->n, K = gemm->k, transA = gemm->trans_a,
                transB = gemm->trans_b, cStrideM = gemm->c_stride_m, cStrideN = gemm->c_stride_n;
  bf_gemm_core(A, B, Y, M, N, K, transA, transB);
  for (int32_t i = 0; i < M; ++i) {
    float *y = Y + (int64_t)i * N;
    if (alpha != 1.0f)
      for (int32_t j = 0; j < N; ++j)
        y[j] *= alpha;
    if (C) {
      const float *c = C + (int64_t)i * cStrideM;
      for (int32_t j = 0; j < N; ++j)
        y[j] += beta * c[(int64_t)j * cStrideN];
    }
  }
  bf_activate_array(Y, M * N, act, actA, actB);
}

void bf_matmul_f32(const float *restrict A, const float *restrict B, float *restrict Y,
                   const bf_matmul_params *mm, int32_t act, float actA, float actB) {
  const int32_t batch = mm->batch, M = mm->m, K = mm->k, N = mm->n,
                aBatchStride = mm->a_batch_stride, bBatchStride = mm->b_batch_stride;
  for (int32_t b = 0; b < batch; ++b)
    bf_gemm_core(A + (int64_t)b * aBatchStride, B + (int64_t)b * bBatchStride,
                 Y + (int64_t)b * M * N, M, N, K, 0, 0);
  bf_activate_array(Y, batch * M * N, act, actA, actB);
}
