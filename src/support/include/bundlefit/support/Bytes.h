//===- Bytes.h - Copying bytes out of possibly-empty buffers ----*- C++ -*-===//
//
// memcpy with a null pointer is undefined even when the count is zero, and an
// empty std::vector's data() may be null: a tensor with a zero dimension in a
// model file reaches every copy below. copyBytes is memcpy that allows both.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_SUPPORT_BYTES_H
#define BUNDLEFIT_SUPPORT_BYTES_H

#include <cstddef>
#include <cstring>

namespace bundlefit {

inline void copyBytes(void *to, const void *from, std::size_t count) {
  if (count != 0)
    std::memcpy(to, from, count);
}

} // namespace bundlefit

#endif
