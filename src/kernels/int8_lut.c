/*===- int8_lut.c - int8 activations through a 256-entry table -------------===*/
#include "int8_util.h"

/* The table holds f at every int8 input, computed at compile time from the
 * input's and output's scale and zero point (src/ops/lut/): one load per
 * element, whatever f is (Sigmoid, Tanh, HardSwish, LeakyRelu, Elu...). */
void bf_lut_s8(const int8_t *in, int8_t *out, int32_t n, const int8_t *table) {
  for (int32_t i = 0; i < n; ++i)
    out[i] = table[(int32_t)in[i] + 128];
}
