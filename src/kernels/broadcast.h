/*===- broadcast.h - The row traversal of broadcasting binary kernels -----===
 *
 * Every broadcasting binary kernel (float, int8, int16) walks the same 6-D
 * iteration: its output is dense over dims, its inputs are read through
 * per-dimension element strides (0 where an input is broadcast). The walk is
 * written once here; each kernel says only what it does with one row of the
 * innermost dimension.
 *===----------------------------------------------------------------------===*/
#ifndef BUNDLEFIT_KERNELS_BROADCAST_H
#define BUNDLEFIT_KERNELS_BROADCAST_H

#include <stdint.h>

/* Runs the statements ROW (the trailing arguments) once for each row of the
 * outer five dimensions of dims, in order, with pointers to the row's first
 * element declared as pa (in a, through element strides sa), pb (in b,
 * through sb) and po (in the dense output out; rows are dims[5] long). A
 * macro rather than a function so that each kernel's row loop, with its
 * element types and operation, is inlined into the loop nest unchanged.
 * Inside ROW, BF_BROADCAST_OFFSET(s) is the row's first element offset
 * through strides s, for a third operand (a sum left unparenthesised: a
 * pointer plus it steps term by term, as the kernels always did). */
#define BF_FOR_EACH_BROADCAST_ROW(dims, a, sa, pa, b, sb, pb, out, po, ...)                        \
  do {                                                                                             \
    const int32_t bf_n5 = (dims)[5];                                                               \
    int64_t bf_dst = 0;                                                                            \
    for (int32_t bf_i0 = 0; bf_i0 < (dims)[0]; ++bf_i0)                                            \
      for (int32_t bf_i1 = 0; bf_i1 < (dims)[1]; ++bf_i1)                                          \
        for (int32_t bf_i2 = 0; bf_i2 < (dims)[2]; ++bf_i2)                                        \
          for (int32_t bf_i3 = 0; bf_i3 < (dims)[3]; ++bf_i3)                                      \
            for (int32_t bf_i4 = 0; bf_i4 < (dims)[4]; ++bf_i4) {                                  \
              __typeof__(a) pa = (a) + BF_BROADCAST_OFFSET(sa);                                    \
              __typeof__(b) pb = (b) + BF_BROADCAST_OFFSET(sb);                                    \
              __typeof__(out) po = (out) + bf_dst;                                                 \
              __VA_ARGS__                                                                          \
              bf_dst += bf_n5;                                                                     \
            }                                                                                      \
  } while (0)
#define BF_BROADCAST_OFFSET(s)                                                                     \
  (int64_t) bf_i0 *(s)[0] + (int64_t)bf_i1 *(s)[1] + (int64_t)bf_i2 *(s)[2] +                      \
      (int64_t)bf_i3 *(s)[3] + (int64_t)bf_i4 *(s)[4]

#endif /* BUNDLEFIT_KERNELS_BROADCAST_H */
