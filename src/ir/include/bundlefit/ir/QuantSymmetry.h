//===- QuantSymmetry.h - Does a quantized tensor have zero points? --------===//
//
// int8 weights with a zero point (asymmetric int8, uint8 as int8 minus 128)
// run only the int8 kernels' exact zero-point path (bf_conv2d_wzp_s8,
// bf_fully_connected_wzp_s8): no CMSIS-NN call, fused or in-place form.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_IR_QUANTSYMMETRY_H
#define BUNDLEFIT_IR_QUANTSYMMETRY_H

#include "bundlefit/ir/TensorType.h"

namespace bundlefit {

/// Every zero point of `q` is 0 (true, too, when it has none).
inline bool isSymmetric(const QuantParams &q) {
  for (int32_t zp : q.zeroPoints)
    if (zp != 0)
      return false;
  return true;
}

} // namespace bundlefit

#endif // BUNDLEFIT_IR_QUANTSYMMETRY_H
