/*===- lstm_kernel.h - The loop of TFLite's LSTM kernels ------------------===
 *
 * bf_lstm_s8, bf_lstm_s16 (int8_lstm.c) and bf_lstm_f32 (lstm.c) share one
 * loop: for each step and batch row, cell j's four gate pre-activations
 * (i, f, c, o) from the input row, the previous hidden state and the bias,
 * then the cell update and the hidden state. Each cell's step needs only the
 * whole previous hidden state and its own cell state, so the kernel runs cell
 * by cell: no gate buffers. The previous hidden state is read from the
 * output (step t - 1), which the kernel writes in place, step by step, as
 * TFLM does: the only scratch is the cell state [batch][cells], zero at the
 * start as a fresh TFLM interpreter's.
 *
 * BF_LSTM_KERNEL(NAME, Act, Weight, Bias, Param, Cell, Pre, GATE, STEP):
 *  - GATE(xt, w, inputs, hPrev, r, cells, bias, p, g): gate g's
 *    pre-activation (type Pre) from input row xt and weight row w, and from
 *    hPrev and recurrent row r (hPrev is 0 at the first step: the initial
 *    hidden state contributes nothing);
 *  - STEP(pre, cell, p): the gates' activations, the update of *cell and the
 *    hidden state (type Act).
 *===----------------------------------------------------------------------===*/
#ifndef BUNDLEFIT_LSTM_KERNEL_H
#define BUNDLEFIT_LSTM_KERNEL_H

#include <stdint.h>

#define BF_LSTM_KERNEL(NAME, Act, Weight, Bias, Param, Cell, Pre, GATE, STEP)                      \
  void NAME(const Act *x, const Weight *w, const Weight *r, const Bias *bias, const Param *p,      \
            Act *y, Cell *cell, int32_t batch, int32_t steps, int32_t inputs, int32_t cells,       \
            int32_t timeMajor) {                                                                   \
    for (int32_t i = 0; i < batch * cells; ++i)                                                    \
      cell[i] = 0;                                                                                 \
    for (int32_t t = 0; t < steps; ++t) {                                                          \
      for (int32_t b = 0; b < batch; ++b) {                                                        \
        const int32_t row = timeMajor ? t * batch + b : b * steps + t;                             \
        const int32_t prevRow = timeMajor ? (t - 1) * batch + b : b * steps + t - 1;               \
        const Act *xt = x + row * inputs;                                                          \
        const Act *hPrev = t > 0 ? y + prevRow * cells : 0;                                        \
        Act *h = y + row * cells;                                                                  \
        for (int32_t j = 0; j < cells; ++j) {                                                      \
          Pre pre[4]; /* i, f, c, o */                                                             \
          for (int32_t g = 0; g < 4; ++g) {                                                        \
            const int32_t gj = g * cells + j;                                                      \
            pre[g] =                                                                               \
                GATE(xt, w + gj * inputs, inputs, hPrev, r + gj * cells, cells, bias[gj], p, g);   \
          }                                                                                        \
          h[j] = STEP(pre, cell + b * cells + j, p);                                               \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

#endif
