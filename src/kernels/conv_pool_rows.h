/*===- conv_pool_rows.h - Which conv rows a fused pool reads --------------===
 *
 * The fused Conv+pool kernels (conv_pool.c, int8_conv_pool.c) compute the
 * conv one output row at a time and skip the rows no pool window reads
 * (a stride larger than the window). The test is written once here.
 *===----------------------------------------------------------------------===*/
#ifndef BUNDLEFIT_KERNELS_CONV_POOL_ROWS_H
#define BUNDLEFIT_KERNELS_CONV_POOL_ROWS_H

#include <stdint.h>

/* Declares `used`: whether some window of a pool (PH output rows, PKH
 * taps, stride psH, top pad ppadT, dilation pdilH) reads conv row r. A
 * macro, not an always-inline function: the function form changed the
 * Cortex-M7 float code (DS-CNN level 2 .text +16 B), the macro is the
 * loop the kernels had. */
#define BF_POOL_ROW_USED(used, r, PH, PKH, psH, ppadT, pdilH)                                      \
  int32_t used = 0;                                                                                \
  for (int32_t kh_ = 0; kh_ < (PKH) && !used; ++kh_) {                                             \
    const int32_t t_ = (r) + (ppadT)-kh_ * (pdilH);                                                \
    used = t_ >= 0 && t_ % (psH) == 0 && t_ / (psH) < (PH);                                        \
  }

#endif
