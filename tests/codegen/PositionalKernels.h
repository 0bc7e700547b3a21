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

/// The 3-D kernels' {D, H, W} vectors as their structs.
inline bf_window3d_params conv3dParams(int32_t N, int32_t C, int32_t M, const int32_t *in,
                                       const int32_t *out, const int32_t *kernel,
                                       const int32_t *strides, const int32_t *pads,
                                       const int32_t *dil, int32_t groups) {
  bf_window3d_params p;
  p.n = N, p.c = C, p.m = M, p.d = in[0], p.h = in[1], p.w = in[2];
  p.od = out[0], p.oh = out[1], p.ow = out[2], p.kd = kernel[0], p.kh = kernel[1];
  p.kw = kernel[2], p.stride_d = strides[0], p.stride_h = strides[1], p.stride_w = strides[2];
  p.pad_d = pads[0], p.pad_h = pads[1], p.pad_w = pads[2];
  p.pad_d_end = 0, p.pad_h_end = 0, p.pad_w_end = 0; // unread by the convolutions
  p.dil_d = dil[0], p.dil_h = dil[1], p.dil_w = dil[2], p.groups = groups;
  p.is_max = 0, p.count_include_pad = 0;
  return p;
}
inline void pool3d(const float *in, float *out, int32_t NC, const int32_t *inDims,
                   const int32_t *outDims, const int32_t *kernel, const int32_t *strides,
                   const int32_t *padsBegin, const int32_t *padsEnd, const int32_t *dil,
                   int32_t isMax, int32_t countIncludePad) {
  bf_window3d_params p;
  p.n = 1, p.c = NC, p.m = NC, p.groups = 1, p.d = inDims[0], p.h = inDims[1], p.w = inDims[2];
  p.od = outDims[0], p.oh = outDims[1], p.ow = outDims[2];
  p.kd = kernel[0], p.kh = kernel[1], p.kw = kernel[2];
  p.stride_d = strides[0], p.stride_h = strides[1], p.stride_w = strides[2];
  p.pad_d = padsBegin[0], p.pad_h = padsBegin[1], p.pad_w = padsBegin[2];
  p.pad_d_end = padsEnd[0], p.pad_h_end = padsEnd[1], p.pad_w_end = padsEnd[2];
  p.dil_d = dil[0], p.dil_h = dil[1], p.dil_w = dil[2];
  p.is_max = isMax, p.count_include_pad = countIncludePad;
  bf_pool3d_f32(in, out, &p);
}
} // namespace kernel_tests
