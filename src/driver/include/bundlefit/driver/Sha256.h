//===- Sha256.h - SHA-256 of a file, for the model hash in reports ---------===//
//
// Reports name the model they describe by the SHA-256 of its file, so a CI
// log can be matched to the exact model (`sha256sum model.onnx`).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace bundlefit {

/// Lower-case hex digest of `size` bytes.
std::string sha256Hex(const uint8_t *data, size_t size);

/// Lower-case hex digest of a file's bytes; Error(BadInputFile) if unreadable.
std::string sha256OfFile(const std::string &path);

} // namespace bundlefit
