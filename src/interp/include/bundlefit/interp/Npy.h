//===- Npy.h - NumPy .npy files in and out ----------------------------------===//
//
// Inputs for `bundlefit run`/`profile` and outputs they write are .npy
// (format 1.0/2.0, little-endian, C order): the format users already have.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Tensor.h"

#include <string>

namespace bundlefit {

/// Reads float32/int8/uint8/int32/int64/bool arrays. Throws
/// Error(BadInputFile) naming the file for anything else.
Tensor loadNpy(const std::string &path);

/// Encodes a tensor as .npy bytes.
std::string encodeNpy(const Tensor &tensor);

/// Decodes .npy bytes; `origin` names the source in error messages.
Tensor decodeNpy(const std::string &bytes, const std::string &origin);

} // namespace bundlefit
