//===- CmsisBufferSizes.cpp - CMSIS-NN scratch sizes, per core extension ---===//
#include "bundlefit/ops/CmsisBufferSizes.h"

#include <algorithm>

namespace bundlefit {

namespace {

int32_t alignUp(int32_t value, int32_t to) { return (value + to - 1) / to * to; }

/// arm_convolve_s8_get_buffer_size: two im2col columns of int16 (DSP and
/// pure C), or four 16-byte-lane im2col rows of int8 (Helium).
int32_t generalConvSize(const CmsisConvShape &s, CmsisExtension extension) {
  const int32_t cols = s.kW * s.kH * s.inC;
  if (extension == CmsisExtension::Mve)
    return 4 * ((cols + 15) / 16) * 16;
  return 2 * alignUp(cols, 4) * 2;
}

/// Helium's 1xN kernel keeps one padded input window row.
int32_t oneByNSizeMve(const CmsisConvShape &s) {
  const int32_t totalPad = (s.outW - 1) * s.strideW + s.kW - s.inW;
  const int32_t asymPad = totalPad % 2;
  const int32_t rightPads =
      s.padW + asymPad != 0 ? std::max(1, (s.padW + asymPad + s.strideW - 1) / s.strideW) : 0;
  const int32_t leftPads = s.padW != 0 ? std::max(1, (s.padW + s.strideW - 1) / s.strideW) : 0;
  const int32_t noPads = std::max(s.outW - (rightPads + leftPads), 0);
  if (rightPads + noPads + leftPads != s.outW)
    return generalConvSize(s, CmsisExtension::Mve);
  const int32_t padLeft = s.padW * s.inC;
  const int32_t padRight = asymPad ? rightPads * s.inC : padLeft;
  const int32_t left = s.kW * s.inC;
  const int32_t right = left - s.inC;
  return std::max(left + padLeft, right + padRight);
}

} // namespace

const char *cmsisExtensionName(CmsisExtension extension) {
  switch (extension) {
  case CmsisExtension::None:
    return "none";
  case CmsisExtension::Dsp:
    return "dsp";
  case CmsisExtension::Mve:
    return "mve";
  }
  return "?";
}

CmsisExtension cmsisExtensionForCpu(const std::string &cpu) {
  for (const char *dsp : {"cortex-m4", "cortex-m7", "cortex-m33", "cortex-m35p"})
    if (cpu == dsp)
      return CmsisExtension::Dsp;
  if (cpu == "cortex-m55" || cpu == "cortex-m85")
    return CmsisExtension::Mve;
  return CmsisExtension::None;
}

CmsisConvKind cmsisConvKind(const CmsisConvShape &s) {
  // arm_nn_is_convolve_1x1 (filter c == input c: the wrapper is only called
  // for ungrouped convolutions here).
  if (s.kH == 1 && s.kW == 1 && s.padH == 0 && s.padW == 0 && s.dilH == 1 && s.dilW == 1)
    return CmsisConvKind::Fast1x1; // arm_convolve_1x1_s8(_fast): no buffer with GCC/clang
  // arm_nn_is_convolve_1_x_n since v4.1 (v4.0 asked output_w % 4 == 0).
  if (s.inH == 1 && s.kH == 1 && s.dilW == 1 && int64_t(s.strideW) * s.inC % 4 == 0)
    return CmsisConvKind::OneByN;
  return CmsisConvKind::General;
}

int32_t cmsisConvBufferSize(const CmsisConvShape &s, CmsisExtension extension) {
  switch (cmsisConvKind(s)) {
  case CmsisConvKind::Fast1x1:
    return 0;
  case CmsisConvKind::OneByN:
    return extension == CmsisExtension::Mve ? oneByNSizeMve(s) : generalConvSize(s, extension);
  case CmsisConvKind::General:
    return generalConvSize(s, extension);
  }
  return 0;
}

bool cmsisDepthwiseRunsAsConv(const CmsisConvShape &s, CmsisExtension extension) {
  // CONVERT_DW_CONV_WITH_ONE_INPUT_CH_AND_OUTPUT_CH_ABOVE_THRESHOLD is 1 for
  // GCC/clang builds (8 with armclang).
  return extension == CmsisExtension::Mve && s.inC == 1 && s.outC > 1;
}

int32_t cmsisDepthwiseBufferSize(const CmsisConvShape &s, CmsisExtension extension) {
  if (cmsisDepthwiseRunsAsConv(s, extension)) {
    // arm_depthwise_conv_to_conv_s8: the convolution's buffer, then the
    // filter transposed to OHWI behind it.
    CmsisConvShape conv = s;
    conv.inC = 1;
    return cmsisConvBufferSize(conv, extension) + s.outC * s.kH * s.kW;
  }
  // Only the ch_mult == 1, single-batch, undilated kernels use a buffer.
  if (s.inC != s.outC || s.n != 1 || s.dilH != 1 || s.dilW != 1)
    return 0;
  switch (extension) {
  case CmsisExtension::None:
    return 0;
  case CmsisExtension::Dsp:
    if (s.kW == 3 && s.kH == 3 && s.padH <= 1 && s.padW <= 1)
      return 0; // arm_depthwise_conv_3x3_s8
    return s.inC * s.kW * s.kH * 2;
  case CmsisExtension::Mve:
    return 4 * 124 * s.kW * s.kH; // CH_IN_BLOCK_MVE = 124
  }
  return 0;
}

int32_t cmsisFullyConnectedBufferSize(int32_t outDepth, CmsisExtension extension) {
  // Helium reads the per-row kernel sums (int32) from the buffer.
  return extension == CmsisExtension::Mve ? outDepth * 4 : 0;
}

bool cmsisFullyConnectedNeedsKernelSums(CmsisExtension extension) {
  return extension == CmsisExtension::Mve;
}

int32_t cmsisAvgPoolBufferSize(int32_t outW, int32_t channels, CmsisExtension extension) {
  (void)outW;
  return extension == CmsisExtension::Dsp ? channels * 4 : 0;
}

} // namespace bundlefit
