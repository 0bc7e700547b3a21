//===- OnnxTensors.h - ONNX TensorProto decoding (importer-private) --------===//
//
// Private to src/onnx: the only place, with OnnxImporter.cpp, that includes
// the generated protobuf headers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/TensorType.h"

#include <onnx/onnx_pb.h> // Defines ONNX_API, then includes onnx-ml.pb.h.

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {
namespace onnximport {

/// The element type names ONNX uses ("float", "float16", "string"...).
const char *onnxTypeName(int32_t onnxType);

/// Maps an ONNX TensorProto::DataType to the DType that holds it after
/// import. float16, bfloat16 and double are widened/narrowed to Float32 (the
/// `converted` flag says so); types bundlefit cannot hold return false.
bool dtypeFromOnnx(int32_t onnxType, DType &out, bool *converted = nullptr);

struct DecodedTensor {
  TensorType type;
  std::vector<uint8_t> bytes; ///< type.bytes() little-endian bytes.
};

/// Decodes a TensorProto's dims and data (raw_data or the typed repeated
/// fields). `what` names the tensor in errors, e.g. "model.onnx: initializer
/// 'conv1.weight'". Throws Error(BadInputFile) for external or inconsistent
/// data, Error(Unsupported) for element types bundlefit cannot hold.
DecodedTensor decodeTensor(const onnx::TensorProto &tensor, const std::string &what);

/// Whether the tensor keeps its data in a separate file.
bool hasExternalData(const onnx::TensorProto &tensor);

} // namespace onnximport
} // namespace bundlefit
