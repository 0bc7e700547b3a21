/* cmsis_kernels.c - one CMSIS-NN int8 workload, called REPS times, on a bare
 * Cortex-M under QEMU (bench/cost/measure_cmsis.py builds and runs it).
 *
 * The script builds each workload twice, with REPS=0 and REPS=N, and counts
 * the instructions QEMU executes for each (../shared/tools/qemu-insncount);
 * the difference over N is the instructions of one call, the MACs below turn
 * it into instructions per MAC. Data is constant (the kernels take the same
 * path whatever the values are), so the count does not depend on it.
 *
 * Workloads (WORKLOAD=...): 1 conv 3x3, 2 conv 1x1, 3 depthwise 3x3, 4 fully
 * connected, 5 LeNet's four layers (conv 5x5 1->20, conv 5x5 20->50 on the
 * pooled maps, fc 800->500, fc 500->10: the layers AN13001 times), and
 * layers without MACs, counted per output element: 6 max pool and 8 average
 * pool 2x2 stride 1 on 16x16x32 (15x15x32 out), 7 elementwise add of two
 * 16x16x32 tensors.
 */
#include "arm_nnfunctions.h"

#include <stdint.h>

#ifndef REPS
#define REPS 1
#endif

/* Large enough for every workload; static so QEMU's zeroed RAM holds them. */
static int8_t input[16 * 1024];
static int8_t output[16 * 1024];
static int8_t filter[400 * 1024];
static int32_t bias[512];
static int32_t multiplier[512];
static int32_t shift[512];
static int32_t scratch[4 * 1024]; /* conv im2col / fc kernel sums */
static int32_t fc_sums[512];
static int8_t input2[16 * 1024];

volatile int32_t sink;

static void conv(int h, int w, int cin, int cout, int k, int pad) {
  cmsis_nn_context ctx = {scratch, sizeof scratch};
  cmsis_nn_conv_params p = {0};
  p.input_offset = 128;
  p.output_offset = -128;
  p.stride.w = p.stride.h = 1;
  p.padding.w = p.padding.h = pad;
  p.dilation.w = p.dilation.h = 1;
  p.activation.min = -128;
  p.activation.max = 127;
  cmsis_nn_per_channel_quant_params q = {multiplier, shift};
  cmsis_nn_dims in = {1, h, w, cin}, f = {cout, k, k, cin}, b = {1, 1, 1, cout};
  cmsis_nn_dims out = {1, h + 2 * pad - k + 1, w + 2 * pad - k + 1, cout};
  sink = arm_convolve_wrapper_s8(&ctx, &p, &q, &in, input, &f, filter, &b, bias, &out, output);
}

static void depthwise(int h, int w, int c, int k, int pad) {
  cmsis_nn_context ctx = {scratch, sizeof scratch};
  cmsis_nn_dw_conv_params p = {0};
  p.input_offset = 128;
  p.output_offset = -128;
  p.ch_mult = 1;
  p.stride.w = p.stride.h = 1;
  p.padding.w = p.padding.h = pad;
  p.dilation.w = p.dilation.h = 1;
  p.activation.min = -128;
  p.activation.max = 127;
  cmsis_nn_per_channel_quant_params q = {multiplier, shift};
  cmsis_nn_dims in = {1, h, w, c}, f = {1, k, k, c}, b = {1, 1, 1, c};
  cmsis_nn_dims out = {1, h + 2 * pad - k + 1, w + 2 * pad - k + 1, c};
  sink =
      arm_depthwise_conv_wrapper_s8(&ctx, &p, &q, &in, input, &f, filter, &b, bias, &out, output);
}

static void fully_connected(int depth, int units) {
  cmsis_nn_dims in = {1, 1, 1, depth}, f = {depth, 1, 1, units}, b = {1, 1, 1, units},
                out = {1, 1, 1, units};
  cmsis_nn_context ctx = {0, 0};
  /* On Helium the kernel reads per-row sums of the weights (computed once per
   * model, outside the inference) from the context buffer. */
  if (arm_fully_connected_s8_get_buffer_size(&f) > 0) {
    ctx.buf = fc_sums;
    ctx.size = sizeof fc_sums;
  }
  cmsis_nn_fc_params p = {128, 0, -128, {-128, 127}};
  cmsis_nn_per_tensor_quant_params q = {1 << 30, -8};
  sink = arm_fully_connected_s8(&ctx, &p, &q, &in, input, &f, filter, &b, bias, &out, output);
}

static void pool(int h, int w, int c, int k, int max) {
  cmsis_nn_context ctx = {0, 0};
  cmsis_nn_pool_params p = {{1, 1}, {0, 0}, {-128, 127}};
  cmsis_nn_dims in = {1, h, w, c}, f = {1, k, k, 1}, out = {1, h - k + 1, w - k + 1, c};
  if (max) {
    sink = arm_max_pool_s8(&ctx, &p, &in, input, &f, &out, output);
  } else {
    ctx.buf = scratch;
    ctx.size = arm_avgpool_s8_get_buffer_size(out.w, c);
    sink = arm_avgpool_s8(&ctx, &p, &in, input, &f, &out, output);
  }
}

static void elementwise_add(int n) {
  /* TFLite's int8 ADD parameters: left shift 20, both inputs rescaled by 2^30 >> 1. */
  sink = arm_elementwise_add_s8(input, input2, 128, 1 << 30, -1, 128, 1 << 30, -1, 20, output, -128,
                                1 << 30, -19, -128, 127, n);
}

static void workload(void) {
#if WORKLOAD == 1
  conv(16, 16, 16, 16, 3, 1);
#elif WORKLOAD == 2
  conv(16, 16, 32, 32, 1, 0);
#elif WORKLOAD == 3
  depthwise(16, 16, 32, 3, 1);
#elif WORKLOAD == 4
  fully_connected(256, 64);
#elif WORKLOAD == 5
  conv(28, 28, 1, 20, 5, 0);
  conv(12, 12, 20, 50, 5, 0);
  fully_connected(800, 500);
  fully_connected(500, 10);
#elif WORKLOAD == 6
  pool(16, 16, 32, 2, 1);
#elif WORKLOAD == 7
  elementwise_add(16 * 16 * 32);
#elif WORKLOAD == 8
  pool(16, 16, 32, 2, 0);
#else
#error "WORKLOAD must be 1..8"
#endif
}

int main(void) {
  for (int i = 0; i < 512; ++i) {
    multiplier[i] = 1 << 30;
    shift[i] = -8;
  }
  for (int i = 0; i < REPS; ++i)
    workload();
  return 0;
}
