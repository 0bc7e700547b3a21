/*===- lstm.c - TFLite's float LSTM ------------------------------------------===
 *
 * UNIDIRECTIONAL_SEQUENCE_LSTM in float as TFLM's kernel computes it (no
 * CIFG, peephole, projection or layer norm; lstm_eval.cc with float
 * operands): each gate is two fully connected products (the input's summed
 * in order plus its bias, the previous hidden state's) added, then sigmoid
 * (input, forget, output gates) or tanh (cell gate); the cell state is
 * forget * cell + input * cellGate, clipped to +-cell_clip when it is > 0;
 * the hidden state tanh(cell) * output. The loop is lstm_kernel.h's, shared
 * with the integer kernels: each step's hidden state is written straight
 * into the output sequence, the only scratch the float cell state.
 * Sigmoid and tanh are vector_math.h's (no libm), as the float Sigmoid and
 * Tanh kernels'.
 *===----------------------------------------------------------------------===*/
#include "kernel_util.h" /* bundlefit_kernels.h, vector_math.h */
#include "lstm_kernel.h"

/* sum(v[k] * w[k]) in order, as TFLM's reference FullyConnected. */
static float bf_lstm_dot_f32(const float *v, const float *w, int32_t n) {
  float acc = 0.0f;
  for (int32_t k = 0; k < n; ++k)
    acc += v[k] * w[k];
  return acc;
}

static float bf_lstm_gate_f32(const float *xt, const float *w, int32_t inputs, const float *hPrev,
                              const float *r, int32_t cells, float bias, const float *p,
                              int32_t g) {
  const float fromInput = bf_lstm_dot_f32(xt, w, inputs) + bias;
  (void)p, (void)g;
  /* The initial hidden state is zero: the product adds nothing. */
  return hPrev ? fromInput + bf_lstm_dot_f32(hPrev, r, cells) : fromInput;
}

/* p[0]: cell_clip (0: none). */
static float bf_lstm_step_f32(const float pre[4], float *c, const float *p) {
  const float in = bf_sigmoidf(pre[0]), forget = bf_sigmoidf(pre[1]);
  const float cellGate = bf_tanhf(pre[2]), out = bf_sigmoidf(pre[3]);
  const float clip = p[0];
  /* TFLM's order, one product per statement (no fused multiply-add across
   * them): forget * cell, then + input * cellGate. */
  const float kept = forget * *c;
  const float added = in * cellGate;
  float next = kept + added;
  if (clip > 0.0f)
    next = next > clip ? clip : next < -clip ? -clip : next;
  *c = next;
  return bf_tanhf(next) * out;
}

BF_LSTM_KERNEL(bf_lstm_f32, float, float, float, float, float, float, bf_lstm_gate_f32,
               bf_lstm_step_f32)
