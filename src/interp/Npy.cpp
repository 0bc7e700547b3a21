#include "bundlefit/interp/Npy.h"

#include "bundlefit/support/Bytes.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace bundlefit {

namespace {

const char kMagic[] = "\x93NUMPY";

const char *descrOf(DType type) {
  switch (type) {
  case DType::Float32:
    return "<f4";
  case DType::Int8:
    return "|i1";
  case DType::UInt8:
    return "|u1";
  case DType::Int16:
    return "<i2";
  case DType::Int32:
    return "<i4";
  case DType::Int64:
    return "<i8";
  case DType::Bool:
    return "|b1";
  }
  return "?";
}

bool dtypeOfDescr(const std::string &descr, DType &out) {
  if (descr.size() < 2)
    return false; // a byte-order mark and a type code at least ('' came from a fuzzer)
  for (DType type : {DType::Float32, DType::Int8, DType::UInt8, DType::Int16, DType::Int32,
                     DType::Int64, DType::Bool})
    if (descr == descrOf(type) || descr.substr(1) == std::string(descrOf(type)).substr(1)) {
      if (descr[0] == '>')
        return false; // big-endian data is not converted
      out = type;
      return true;
    }
  return false;
}

/// The value text after `'key':` in the header dictionary.
std::string headerField(const std::string &header, const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return "";
  size_t colon = header.find(':', at);
  return colon == std::string::npos ? "" : header.substr(colon + 1);
}

} // namespace

Tensor decodeNpy(const std::string &bytes, const std::string &origin) {
  auto fail = [&](const std::string &why) -> Error {
    return Error(ExitCode::BadInputFile, origin + ": not a supported .npy file: " + why);
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    throw fail("wrong magic");
  int major = uint8_t(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      throw fail("truncated header");
    headerLength = 0;
    for (int i = 0; i < 4; ++i)
      headerLength |= size_t(uint8_t(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    throw fail("format version " + std::to_string(major));
  }
  if (bytes.size() < headerStart + headerLength)
    throw fail("truncated header");
  std::string header = bytes.substr(headerStart, headerLength);

  std::string descrText = headerField(header, "descr");
  size_t q1 = descrText.find('\''), q2 = descrText.find('\'', q1 + 1);
  DType dtype;
  if (q1 == std::string::npos || q2 == std::string::npos ||
      !dtypeOfDescr(descrText.substr(q1 + 1, q2 - q1 - 1), dtype))
    throw fail("unsupported dtype " + descrText.substr(0, descrText.find(',')));
  if (headerField(header, "fortran_order").find("True") <
      headerField(header, "fortran_order").find(','))
    throw fail("Fortran order");

  std::string shapeText = headerField(header, "shape");
  size_t open = shapeText.find('('), close = shapeText.find(')');
  if (open == std::string::npos || close == std::string::npos)
    throw fail("no shape");
  Shape shape;
  std::stringstream dims(shapeText.substr(open + 1, close - open - 1));
  std::string dim;
  while (std::getline(dims, dim, ',')) {
    size_t first = dim.find_first_not_of(' ');
    if (first == std::string::npos)
      continue;
    size_t last = dim.find_last_not_of(' ');
    std::string digits = dim.substr(first, last - first + 1);
    char *end = nullptr;
    errno = 0;
    long long value = std::strtoll(digits.c_str(), &end, 10);
    if (errno || *end != '\0' || value < 0)
      throw fail("shape dimension '" + digits + "' is not a non-negative integer");
    shape.push_back(value);
  }

  // The header's shape is checked against the data before allocating.
  std::optional<uint64_t> needed = checkedTensorBytes(shape, dtypeSize(dtype));
  if (!needed)
    throw fail("shape " + shapeToString(shape) + " is larger than bundlefit's limit of " +
               std::to_string(kMaxTensorBytes >> 30) + " GiB per tensor");
  size_t dataStart = headerStart + headerLength;
  if (bytes.size() - dataStart < *needed)
    throw fail("truncated data (" + std::to_string(bytes.size() - dataStart) + " of " +
               std::to_string(*needed) + " bytes)");
  Tensor tensor(TensorType{dtype, shape, {}});
  if (!tensor.bytes.empty())
    copyBytes(tensor.bytes.data(), bytes.data() + dataStart, tensor.bytes.size());
  return tensor;
}

Tensor loadNpy(const std::string &path) {
  return decodeNpy(readInputFile(path, ".npy file"), path);
}

std::string encodeNpy(const Tensor &tensor) {
  std::string shape = "(";
  for (int64_t dim : tensor.type.shape)
    shape += std::to_string(dim) + ", ";
  if (tensor.type.shape.size() > 1)
    shape.erase(shape.size() - 2);
  else if (tensor.type.shape.size() == 1)
    shape.erase(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" + std::string(descrOf(tensor.type.dtype)) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so the data starts on a 64-byte boundary, ending with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string bytes(kMagic, 6);
  bytes += char(1);
  bytes += char(0);
  bytes += char(header.size() & 0xff);
  bytes += char(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char *>(tensor.bytes.data()), tensor.bytes.size());
  return bytes;
}

} // namespace bundlefit
