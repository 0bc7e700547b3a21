//===- PositionalKernels.h - The struct-taking float kernels, positionally -===//
//
// The kernel tests were written against the positional argument lists the
// float convolutions and pools took before bundlefit/kernels/abi.h's
// parameter structs; these wrappers fill the structs field by field, so the
// tests still read as the geometry they check.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit_kernels.h"

namespace kernel_tests {

inline bf_conv_params convParams(int32_t N, int32_t C, int32_t H, int32_t W, int32_t M, int32_t OH,
                                 int32_t OW, int32_t KH, int32_t KW, int32_t strideH,
                                 int32_t strideW, int32_t padT, int32_t padL, int32_t dilH,
                                 int32_t dilW, int32_t groups) {
  bf_conv_params p;
  p.n = N, p.c = C, p.h = H, p.w = W, p.m = M, p.oh = OH, p.ow = OW, p.kh = KH, p.kw = KW;
  p.stride_h = strideH, p.stride_w = strideW, p.pad_t = padT, p.pad_l = padL;
  p.dil_h = dilH, p.dil_w = dilW, p.groups = groups;
  return p;
}

inline bf_pool_params poolParams(int32_t NC, int32_t H, int32_t W, int32_t OH, int32_t OW,
                                 int32_t KH, int32_t KW, int32_t strideH, int32_t strideW,
                                 int32_t padT, int32_t padL, int32_t padB, int32_t padR,
                                 int32_t dilH, int32_t dilW, int32_t countIncludePad) {
  bf_pool_params p;
  p.n = 1, p.c = NC, p.h = H, p.w = W, p.oh = OH, p.ow = OW, p.kh = KH, p.kw = KW;
  p.stride_h = strideH, p.stride_w = strideW, p.pad_t = padT, p.pad_l = padL;
  p.pad_b = padB, p.pad_r = padR, p.dil_h = dilH, p.dil_w = dilW;
  p.is_max = 0, p.count_include_pad = countIncludePad, p.pad_value = 0;
  p.act_min = 0, p.act_max = 0, p.chunk = 0;
  return p;
}

inline void conv2d(const float *in, const float *w, const float *bias, float *out, int32_t N,
                   int32_t C, int32_t H, int32_t W, int32_t M, int32_t OH, int32_t OW, int32_t KH,
                   int32_t KW, int32_t strideH, int32_t strideW, int32_t padT, int32_t padL,
                   int32_t dilH, int32_t dilW, int32_t groups, int32_t act, float actA,
                   float actB) {
  const bf_conv_params p =
      convParams(N, C, H, W, M, OH, OW, KH, KW, strideH, strideW, padT, padL, dilH, dilW, groups);
  bf_conv2d_f32(in, w, bias, out, &p, act, actA, actB);
}

inline void convTranspose2d(const float *in, const float *w, const float *bias, float *out,
                            int32_t N, int32_t C, int32_t H, int32_t W, int32_t M, int32_t OH,
                            int32_t OW, int32_t KH, int32_t KW, int32_t strideH, int32_t strideW,
                            int32_t padT, int32_t padL, int32_t dilH, int32_t dilW, int32_t groups,
                            int32_t act, float actA, float actB) {
  const bf_conv_params p =
      convParams(N, C, H, W, M, OH, OW, KH, KW, strideH, strideW, padT, padL, dilH, dilW, groups);
  bf_conv_transpose2d_f32(in, w, bias, out, &p, act, actA, actB);
}

template <typename T, typename Kernel>
void maxpool2d(Kernel kernel, const T *in, T *out, int32_t NC, int32_t H, int32_t W, int32_t OH,
               int32_t OW, int32_t KH, int32_t KW, int32_t strideH, int32_t strideW, int32_t padT,
               int32_t padL, int32_t dilH, int32_t dilW) {
  bf_pool_params p =
      poolParams(NC, H, W, OH, OW, KH, KW, strideH, strideW, padT, padL, 0, 0, dilH, dilW, 0);
  p.is_max = 1;
  kernel(in, out, &p);
}

inline void avgpool2d(const float *in, float *out, int32_t NC, int32_t H, int32_t W, int32_t OH,
                      int32_t OW, int32_t KH, int32_t KW, int32_t strideH, int32_t strideW,
                      int32_t padT, int32_t padL, int32_t padB, int32_t padR,
                      int32_t countIncludePad) {
  const bf_pool_params p = poolParams(NC, H, W, OH, OW, KH, KW, strideH, strideW, padT, padL, padB,
                                      padR, 1, 1, countIncludePad);
  bf_avgpool2d_f32(in, out, &p);
}

} // namespace kernel_tests
