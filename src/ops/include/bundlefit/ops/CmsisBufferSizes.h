//===- CmsisBufferSizes.h - CMSIS-NN scratch sizes, per core extension -----===//
//
// The bytes CMSIS-NN's *_get_buffer_size functions return for the s8 wrapper
// API, computed on the host for the build of CMSIS-NN the core will run:
//
//   None  pure C (Cortex-M0/M0+/M3/M23, and host builds)
//   Dsp   ARM_MATH_DSP (Cortex-M4, M7, M33/M35P with the DSP extension)
//   Mve   ARM_MATH_MVEI, Helium (Cortex-M55, M85)
//
// Formulas re-derived from CMSIS-NN's arm_convolve_get_buffer_sizes_s8.c,
// arm_depthwise_conv_get_buffer_sizes_s8.c, arm_fully_connected_get_buffer_sizes_s8.c
// and arm_avgpool_get_buffer_sizes_s8.c of the version bundlefit is checked
// against: CMSIS-NN v7.0.0-43 (commit 99f736a6; arm_nnfunctions.h V.19.1.0).
// They hold for v4.1 and later (the 1xN rule changed in v4.1, the Helium
// fully connected kernel sums arrived in v5.0), for GCC/clang builds: the
// armclang-only 1x1 buffer is not counted. Shapes use CMSIS-NN's NHWC names.
// Max pooling and softmax need no buffer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace bundlefit {

enum class CmsisExtension : uint8_t { None, Dsp, Mve };
const char *cmsisExtensionName(CmsisExtension extension);

/// The CMSIS-NN build for an LLVM CPU name: cortex-m4/m7/m33/m35p -> Dsp,
/// cortex-m55/m85 -> Mve, anything else (M0+, M3, M23, hosts) -> None.
CmsisExtension cmsisExtensionForCpu(const std::string &cpu);

/// The geometry every getter reads (cmsis_nn_dims / conv_params fields).
struct CmsisConvShape {
  int32_t n = 1, inH = 1, inW = 1, inC = 1; ///< input_dims
  int32_t kH = 1, kW = 1;                   ///< filter_dims h, w
  int32_t outH = 1, outW = 1, outC = 1;     ///< output_dims
  int32_t strideH = 1, strideW = 1, padH = 0, padW = 0, dilH = 1, dilW = 1;
};

/// arm_convolve_wrapper_s8_get_buffer_size{,_dsp,_mve}.
int32_t cmsisConvBufferSize(const CmsisConvShape &s, CmsisExtension extension);
/// arm_depthwise_conv_wrapper_s8_get_buffer_size{,_dsp,_mve}.
int32_t cmsisDepthwiseBufferSize(const CmsisConvShape &s, CmsisExtension extension);
/// arm_fully_connected_s8_get_buffer_size{,_dsp,_mve}(filter_dims): filter
/// c = output depth.
int32_t cmsisFullyConnectedBufferSize(int32_t outDepth, CmsisExtension extension);
/// Whether arm_fully_connected_s8 reads per-row kernel sums from its context
/// (Helium, since v5.0: what arm_vector_sum_s8 computes). bundlefit computes
/// them at compile time and stores them with the weights, so the buffer is a
/// constant, not arena scratch.
bool cmsisFullyConnectedNeedsKernelSums(CmsisExtension extension);
/// Helium runs a depthwise convolution with one input channel and several
/// outputs as an ordinary convolution (arm_depthwise_conv_to_conv_s8).
bool cmsisDepthwiseRunsAsConv(const CmsisConvShape &s, CmsisExtension extension);
/// arm_avgpool_s8_get_buffer_size{,_dsp,_mve}(output width, channels).
int32_t cmsisAvgPoolBufferSize(int32_t outW, int32_t channels, CmsisExtension extension);

/// Which kernel arm_convolve_wrapper_s8 dispatches to (the buffer differs).
enum class CmsisConvKind : uint8_t { Fast1x1, OneByN, General };
CmsisConvKind cmsisConvKind(const CmsisConvShape &s);

} // namespace bundlefit
