//===- TfliteTestModel.h - Tiny .tflite models built in C++ for tests ------===//
//
// Writes TFLite flatbuffers with the generated schema's builders, so the
// importer tests (and the fuzzer's seeds) need no file from outside the
// repository: each test states its model in a few lines, and the hostile
// ones break exactly one field.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "schema_generated.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bundlefit::testing {

/// Quantization of one tensor (empty scales: none).
struct TestQuant {
  std::vector<float> scales;
  std::vector<int64_t> zeroPoints;
  int32_t axis = 0;
};

class TfliteTestModel {
public:
  /// A tensor without data (an activation) or with `data` (a constant).
  int32_t tensor(const std::string &name, tflite::TensorType type,
                 const std::vector<int32_t> &shape, const TestQuant &quant = {},
                 const std::vector<uint8_t> &data = {});
  int32_t floatTensor(const std::string &name, const std::vector<int32_t> &shape,
                      const std::vector<float> &values = {});
  int32_t int8Tensor(const std::string &name, const std::vector<int32_t> &shape,
                     const TestQuant &quant, const std::vector<int8_t> &values = {});
  int32_t int32Tensor(const std::string &name, const std::vector<int32_t> &shape,
                      const std::vector<int32_t> &values, const TestQuant &quant = {});

  /// A constant whose buffer lies outside the flatbuffer (TFLite's layout
  /// for models over 2 GB): Buffer.offset and Buffer.size as given.
  int32_t externalTensor(const std::string &name, const std::vector<int32_t> &shape,
                         uint64_t offset, uint64_t size);
  /// An operator; `options` builds its builtin options with builder().
  void op(tflite::BuiltinOperator code, const std::vector<int32_t> &inputs,
          const std::vector<int32_t> &outputs,
          tflite::BuiltinOptions optionsType = tflite::BuiltinOptions_NONE,
          flatbuffers::Offset<void> options = 0, const std::string &customCode = "");
  void inputs(const std::vector<int32_t> &indices) { inputs_ = indices; }
  void outputs(const std::vector<int32_t> &indices) { outputs_ = indices; }

  flatbuffers::FlatBufferBuilder &builder() { return builder_; }
  /// The finished flatbuffer.
  std::vector<uint8_t> bytes();
  /// Writes bytes() to a per-process temp directory; returns the path.
  std::string save(const std::string &fileName);

private:
  struct PendingTensor {
    std::string name;
    tflite::TensorType type;
    std::vector<int32_t> shape;
    TestQuant quant;
    uint32_t buffer;
  };
  struct PendingOp {
    uint32_t code;
    std::vector<int32_t> inputs, outputs;
    tflite::BuiltinOptions optionsType;
    flatbuffers::Offset<void> options;
  };
  flatbuffers::FlatBufferBuilder builder_;
  std::vector<std::vector<uint8_t>> buffers_{{}};              // buffer 0: empty, as TFLite writes
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> external_; // buffer -> offset, size
  std::vector<PendingTensor> tensors_;
  std::vector<PendingOp> ops_;
  std::vector<std::pair<int32_t, std::string>> codes_; // builtin, custom name
  std::vector<int32_t> inputs_, outputs_;
};

/// A per-process scratch directory's file `name`.
std::string tflitePath(const std::string &name);
std::string writeBytes(const std::string &name, const std::vector<uint8_t> &bytes);

/// Bytes of `values`.
template <typename T> std::vector<uint8_t> bytesOf(const std::vector<T> &values) {
  const auto *p = reinterpret_cast<const uint8_t *>(values.data());
  return std::vector<uint8_t>(p, p + values.size() * sizeof(T));
}

} // namespace bundlefit::testing
