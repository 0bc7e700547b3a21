/*===- int8_requantize_table.c - int8 -> int8 through a 256-entry table ---===
 *
 * An int8 value read at other parameters (Concat inputs, Rescale, Relu/Clip
 * changing parameters): out = table[in + 128], the table computed at compile
 * time as ONNX's DequantizeLinear -> QuantizeLinear in float32, rounding half
 * to even (ops/common/RequantizeTable.h), so the result equals onnxruntime's
 * on every value. `table` is 64 words of four little-endian entries. The
 * flat form is safe in place (Relu, Clip).
 *===----------------------------------------------------------------------===*/
#include "int8_util.h"

void bf_requantize_table_s8(const int8_t *in, int8_t *out, int32_t n, const int32_t *table) {
  const int8_t *t = (const int8_t *)table + 128;
  for (int32_t i = 0; i < n; ++i)
    out[i] = t[in[i]];
}

void bf_requantize_table_strided_s8(const int8_t *restrict src, int8_t *restrict dst,
                                    const int32_t *dims, const int32_t *ss, const int32_t *ds,
                                    const int32_t *table) {
  const int8_t *t = (const int8_t *)table + 128;
  for (int32_t i0 = 0; i0 < dims[0]; ++i0)
    for (int32_t i1 = 0; i1 < dims[1]; ++i1)
      for (int32_t i2 = 0; i2 < dims[2]; ++i2)
        for (int32_t i3 = 0; i3 < dims[3]; ++i3)
          for (int32_t i4 = 0; i4 < dims[4]; ++i4) {
            const int8_t *s = src + (int64_t)i0 * ss[0] + (int64_t)i1 * ss[1] +
                              (int64_t)i2 * ss[2] + (int64_t)i3 * ss[3] + (int64_t)i4 * ss[4];
            int8_t *d = dst + (int64_t)i0 * ds[0] + (int64_t)i1 * ds[1] + (int64_t)i2 * ds[2] +
                        (int64_t)i3 * ds[3] + (int64_t)i4 * ds[4];
            for (int32_t i = 0; i < dims[5]; ++i)
              d[(int64_t)i * ds[5]] = t[s[(int64_t)i * ss[5]]];
          }
}
