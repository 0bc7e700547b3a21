/*===- int8_lstm.c - TFLite's integer LSTM (int8 and int16x8) ---------------===
 *
 * UNIDIRECTIONAL_SEQUENCE_LSTM as TFLM's integer kernel computes it (no
 * CIFG, peephole, projection or layer norm): each gate is two fully
 * connected products (the input with its bias, the previous hidden state
 * without), each requantized to int16 at scale 2^-12 and clamped, added with
 * int16 saturation, then TFLite's int16 sigmoid (input, forget, output gates)
 * or tanh (cell gate); the int16 cell state (scale 2^power) is
 * forget * cell + input * cellGate (two int16 multiplies, a saturating add,
 * the optional clip), the int8 hidden state tanh(cell) * output.
 *
 * The loop over steps, rows and cells is lstm_kernel.h's (bf_lstm_f32's
 * too): the only scratch is the int16 cell state [batch][cells]. Both states
 * start at zero (the hidden state's zero point), as a fresh TFLM
 * interpreter's.
 *
 * bf_lstm_s16 is TFLM's int16x8 LSTM (EvalLstm<int16_t, int8_t, int16_t,
 * int64_t>): int16 input and hidden state, int64 biases; the fully connected
 * products sum in int64 and requantize by the 64-bit rule, the hidden state
 * is clamped to int16. The rest of the step is the int8 kernel's.
 *===----------------------------------------------------------------------===*/
#include "int8_util.h"
#include "lstm_kernel.h"

/* reference_integer_ops::Logistic, int16, power-of-two input scale 2^-12
 * (input multiplier 3, no shift): Q3.12 in, Q0.15 out. */
static int16_t bf_lstm_sigmoid(int16_t x) {
  const int32_t in = (int32_t)x * 3;
  const uint32_t a = (uint32_t)bf_i8_abs(in);
  const uint32_t uh = a >> 9;
  uint32_t r;
  if (uh >= 255) {
    r = 0x7FFFu << 10;
  } else {
    const uint32_t ua = bf_sigmoid_table_u16[uh], ub = bf_sigmoid_table_u16[uh + 1];
    r = (ua << 9) + (a & 0x1FFu) * (ub - ua);
  }
  r = in >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
  return (int16_t)(r >> 10);
}

/* reference_integer_ops::Tanh, int16, Q0.15 out. `mult` and `shift` are
 * TFLM's for the input's power-of-two scale (lstm_eval.cc Tanh): the input is
 * (x * mult + round) >> shift. */
static int16_t bf_lstm_tanh(int16_t x, int32_t mult, int32_t shift) {
  const int32_t round = shift > 0 ? 1 << (shift - 1) : 0;
  const int32_t in = ((int32_t)x * mult + round) >> shift;
  const uint32_t a = (uint32_t)bf_i8_abs(in);
  const uint32_t uh = a >> 8;
  int32_t r;
  if (uh >= 255) {
    r = 0xFFFF << 8;
  } else {
    const uint32_t ua = bf_sigmoid_table_u16[uh], ub = bf_sigmoid_table_u16[uh + 1];
    r = (int32_t)((ua << 8) + (a & 0xFFu) * (ub - ua));
  }
  r = in >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
  return (int16_t)(r >> 8);
}

BF_I8_INLINE int32_t bf_lstm_clamp16(int32_t v) { return bf_i8_min(32767, bf_i8_max(-32768, v)); }

/* One fully connected row to int16: sum((v[k] + offset) * w[k]) (+ bias),
 * requantized, clamped to int16. int8: int32 sums and bias, the 32-bit
 * requantization. */
static int32_t bf_lstm_row_s8(const int8_t *v, const int8_t *w, int32_t n, int32_t offset,
                              int32_t bias, int32_t mult, int32_t shift) {
  int32_t acc = 0;
  for (int32_t k = 0; k < n; ++k)
    acc += ((int32_t)v[k] + offset) * (int32_t)w[k];
  return bf_lstm_clamp16(bf_i8_requantize(acc + bias, mult, shift));
}

/* int16x8 (TFLM's int16 FullyConnected): int64 sums and bias, TFLM's 64-bit
 * requantization; the offset is 0 (int16 zero points are 0). */
static int32_t bf_lstm_row_s16(const int16_t *v, const int8_t *w, int32_t n, int32_t offset,
                               int64_t bias, int32_t mult, int32_t shift) {
  int64_t acc = 0;
  (void)offset;
  for (int32_t k = 0; k < n; ++k)
    acc += (int32_t)v[k] * (int32_t)w[k];
  return bf_lstm_clamp16(bf_s16_requantize64(acc + bias, mult, shift));
}

/* Cell j's step from its four gate pre-activations (int16 Q3.12, i f c o):
 * the gates' sigmoid/tanh, the cell update into *c, and tanh(cell) x output
 * gate requantized to the hidden state's scale (its zero point and clamp
 * are the caller's). */
static int32_t bf_lstm_cell(const int16_t pre[4], int16_t *c, const int32_t *p) {
  const int16_t in = bf_lstm_sigmoid(pre[0]), forget = bf_lstm_sigmoid(pre[1]);
  const int16_t cellGate = bf_lstm_tanh(pre[2], 3, 0), out = bf_lstm_sigmoid(pre[3]);
  const int32_t clip = p[BF_LSTM_CELL_CLIP];
  const int32_t kept = bf_lstm_clamp16(
      bf_i8_requantize((int32_t)forget * *c, p[BF_LSTM_FORGET_MULT], p[BF_LSTM_FORGET_SHIFT]));
  const int32_t added = bf_lstm_clamp16(
      bf_i8_requantize((int32_t)in * cellGate, p[BF_LSTM_INPUT_MULT], p[BF_LSTM_INPUT_SHIFT]));
  int32_t next = bf_lstm_clamp16(kept + added);
  if (clip > 0)
    next = bf_i8_max(-clip, bf_i8_min(clip, next));
  *c = (int16_t)next;
  const int16_t squashed = bf_lstm_tanh(*c, p[BF_LSTM_TANH_MULT], p[BF_LSTM_TANH_SHIFT]);
  return bf_i8_requantize((int32_t)squashed * out, p[BF_LSTM_OUTPUT_MULT], p[BF_LSTM_OUTPUT_SHIFT]);
}

/* Gate g's pre-activation (int16 Q3.12): the two fully connected products
 * `ROW` (the input with its bias, the hidden state without), added with
 * int16 saturation. */
#define BF_LSTM_INT_GATE(NAME, Act, Bias, ROW)                                                     \
  static int16_t NAME(const Act *xt, const int8_t *w, int32_t inputs, const Act *hPrev,            \
                      const int8_t *r, int32_t cells, Bias bias, const int32_t *p, int32_t g) {    \
    const int32_t *q = p + 4 * g;                                                                  \
    const int32_t fromInput = ROW(xt, w, inputs, -p[BF_LSTM_INPUT_ZP], bias, q[0], q[1]);          \
    /* The initial hidden state is its zero point: the product is 0. */                            \
    const int32_t fromHidden =                                                                     \
        hPrev ? ROW(hPrev, r, cells, -p[BF_LSTM_HIDDEN_ZP], 0, q[2], q[3]) : 0;                    \
    return (int16_t)bf_lstm_clamp16(fromInput + fromHidden);                                       \
  }

BF_LSTM_INT_GATE(bf_lstm_gate_s8, int8_t, int32_t, bf_lstm_row_s8)
BF_LSTM_INT_GATE(bf_lstm_gate_s16, int16_t, int64_t, bf_lstm_row_s16)

/* The hidden state: the cell's step plus the zero point, clamped to Act. */
static int8_t bf_lstm_step_s8(const int16_t pre[4], int16_t *c, const int32_t *p) {
  return (int8_t)bf_i8_max(-128, bf_i8_min(127, p[BF_LSTM_HIDDEN_ZP] + bf_lstm_cell(pre, c, p)));
}
static int16_t bf_lstm_step_s16(const int16_t pre[4], int16_t *c, const int32_t *p) {
  return (int16_t)bf_lstm_clamp16(p[BF_LSTM_HIDDEN_ZP] + bf_lstm_cell(pre, c, p));
}

BF_LSTM_KERNEL(bf_lstm_s8, int8_t, int8_t, int32_t, int32_t, int16_t, int16_t, bf_lstm_gate_s8,
               bf_lstm_step_s8)
BF_LSTM_KERNEL(bf_lstm_s16, int16_t, int8_t, int64_t, int32_t, int16_t, int16_t, bf_lstm_gate_s16,
               bf_lstm_step_s16)
