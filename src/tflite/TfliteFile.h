//===- TfliteFile.h - A verified TFLite flatbuffer in memory -----*- C++ -*-===//
//
// The file's bytes, checked by the flatbuffers Verifier (every offset,
// vector and string inside the file) and then by the checks the schema
// cannot express: tensor, buffer and operator-code indices in range, shapes
// whose byte sizes fit, buffers whose data lies inside the file and is as
// long as the tensor needs. Only this file and the converters see the
// generated flatbuffers types.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "schema_generated.h"

#include "bundlefit/ir/TensorType.h"
#include "bundlefit/support/Error.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace bundlefit::tflite_import {

/// The bytes of one constant tensor (empty span: the tensor has no data).
struct ByteSpan {
  const uint8_t *data = nullptr;
  size_t size = 0;
};

class TfliteFile {
public:
  /// Reads and verifies `path`; Error(BadInputFile) naming the file otherwise.
  explicit TfliteFile(const std::string &path);

  const std::string &path() const { return path_; }
  const tflite::Model &model() const { return *model_; }
  const tflite::SubGraph &subgraph() const { return *subgraph_; }

  /// Tensor `index` of the subgraph (checked in range by the constructor for
  /// every operator operand and graph input/output).
  const tflite::Tensor &tensor(int32_t index) const;
  size_t numTensors() const;
  /// "tensor 5 ('conv1/weights')": how errors name a tensor.
  std::string describeTensor(int32_t index) const;
  /// The tensor's shape (checked: every dimension >= 1, byte size within
  /// bundlefit's limit).
  Shape shapeOf(int32_t index) const;
  /// The tensor's constant data, or an empty span when its buffer has none.
  ByteSpan dataOf(int32_t index) const;

  /// TFLite's builtin code of operator `index` (the larger of the deprecated
  /// byte and the int32 field, as TFLite reads it; BuiltinOperator_CUSTOM
  /// for a custom op; any int32 in a hostile file).
  int32_t builtinCodeOf(const tflite::Operator &op) const;
  /// "CONV_2D", or "custom 'Foo'".
  std::string operatorName(const tflite::Operator &op) const;
  /// "operator 3 (CONV_2D)".
  std::string describeOperator(size_t index) const;

  Error bad(const std::string &problem) const {
    return Error(ExitCode::BadInputFile, path_ + ": " + problem);
  }
  Error unsupported(const std::string &problem) const {
    return Error(ExitCode::Unsupported, path_ + ": " + problem);
  }

private:
  void checkStructure();
  void checkTensor(int32_t index);

  std::string path_;
  std::vector<uint8_t> bytes_;
  const tflite::Model *model_ = nullptr;
  const tflite::SubGraph *subgraph_ = nullptr;
};

/// The file identifier check alone (no verification).
bool hasTfliteIdentifier(const uint8_t *head, size_t size);

/// Element `i` of a `[long]` vector (a tensor's zero points). The flatbuffers
/// Verifier (2.0.8) checks only the 4-byte length prefix's alignment, so a
/// file it accepts may put the 8-byte elements 4 bytes off their alignment:
/// copy them, never a typed load.
inline int64_t int64At(const flatbuffers::Vector<int64_t> &vector, size_t i) {
  int64_t value;
  std::memcpy(&value, vector.Data() + i * sizeof(int64_t), sizeof(value));
  return flatbuffers::EndianScalar(value);
}

} // namespace bundlefit::tflite_import
