/*===- cmsis_nn_abi.h - The CMSIS-NN s8 API bundles call (test copy) -------===
 *
 * bundlefit's own declarations of the part of CMSIS-NN's public API
 * (arm_nn_types.h, arm_nnfunctions.h) that `--use-cmsis` bundles call, written
 * from its documentation: the structs are laid out as there, the functions
 * take the same arguments. The test stub (cmsis_nn_stub.c) implements them;
 * a real firmware links CMSIS-NN itself.
 *===----------------------------------------------------------------------===*/
#ifndef BUNDLEFIT_CMSIS_NN_ABI_H
#define BUNDLEFIT_CMSIS_NN_ABI_H

#include <stdint.h>

typedef enum { ARM_CMSIS_NN_SUCCESS = 0, ARM_CMSIS_NN_ARG_ERROR = -1 } arm_cmsis_nn_status;

typedef struct {
  int32_t w, h;
} cmsis_nn_tile;
typedef struct {
  void *buf;
  int32_t size;
} cmsis_nn_context;
typedef struct {
  int32_t n, h, w, c;
} cmsis_nn_dims;
typedef struct {
  int32_t *multiplier, *shift;
} cmsis_nn_per_channel_quant_params;
typedef struct {
  int32_t multiplier, shift;
} cmsis_nn_per_tensor_quant_params;
typedef struct {
  int32_t min, max;
} cmsis_nn_activation;
typedef struct {
  int32_t input_offset, output_offset;
  cmsis_nn_tile stride, padding, dilation;
  cmsis_nn_activation activation;
} cmsis_nn_conv_params;
typedef struct {
  int32_t input_offset, output_offset, ch_mult;
  cmsis_nn_tile stride, padding, dilation;
  cmsis_nn_activation activation;
} cmsis_nn_dw_conv_params;
typedef struct {
  cmsis_nn_tile stride, padding;
  cmsis_nn_activation activation;
} cmsis_nn_pool_params;
typedef struct {
  int32_t input_offset, filter_offset, output_offset;
  cmsis_nn_activation activation;
} cmsis_nn_fc_params;

/* Activations NHWC; conv weights OHWI, depthwise 1HWC (C = in_ch * ch_mult),
 * fully connected [out, in]; bias int32 [C_OUT] (may be NULL). */
arm_cmsis_nn_status
arm_convolve_wrapper_s8(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
                        const cmsis_nn_per_channel_quant_params *quant_params,
                        const cmsis_nn_dims *input_dims, const int8_t *input_data,
                        const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
                        const cmsis_nn_dims *bias_dims, const int32_t *bias_data,
                        const cmsis_nn_dims *output_dims, int8_t *output_data);
arm_cmsis_nn_status arm_depthwise_conv_wrapper_s8(
    const cmsis_nn_context *ctx, const cmsis_nn_dw_conv_params *dw_conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data);
arm_cmsis_nn_status
arm_fully_connected_s8(const cmsis_nn_context *ctx, const cmsis_nn_fc_params *fc_params,
                       const cmsis_nn_per_tensor_quant_params *quant_params,
                       const cmsis_nn_dims *input_dims, const int8_t *input_data,
                       const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
                       const cmsis_nn_dims *bias_dims, const int32_t *bias_data,
                       const cmsis_nn_dims *output_dims, int8_t *output_data);
arm_cmsis_nn_status arm_max_pool_s8(const cmsis_nn_context *ctx,
                                    const cmsis_nn_pool_params *pool_params,
                                    const cmsis_nn_dims *input_dims, const int8_t *input_data,
                                    const cmsis_nn_dims *filter_dims,
                                    const cmsis_nn_dims *output_dims, int8_t *output_data);
arm_cmsis_nn_status arm_avgpool_s8(const cmsis_nn_context *ctx,
                                   const cmsis_nn_pool_params *pool_params,
                                   const cmsis_nn_dims *input_dims, const int8_t *input_data,
                                   const cmsis_nn_dims *filter_dims,
                                   const cmsis_nn_dims *output_dims, int8_t *output_data);
void arm_softmax_s8(const int8_t *input, int32_t num_rows, int32_t row_size, int32_t mult,
                    int32_t shift, int32_t diff_min, int8_t *output);

#endif
