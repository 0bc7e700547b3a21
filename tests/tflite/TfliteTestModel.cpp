//===- TfliteTestModel.cpp - Tiny .tflite models built in C++ --------------===//
#include "TfliteTestModel.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace bundlefit::testing {

namespace {

struct ScratchDirectory {
  std::filesystem::path path;
  ScratchDirectory() {
    path = std::filesystem::temp_directory_path() /
           ("bundlefit-tflite-tests-" + std::to_string(getpid()));
    std::filesystem::create_directories(path);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

} // namespace

std::string tflitePath(const std::string &name) {
  static ScratchDirectory directory;
  return (directory.path / name).string();
}

std::string writeBytes(const std::string &name, const std::vector<uint8_t> &bytes) {
  std::string path = tflitePath(name);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  return path;
}

int32_t TfliteTestModel::tensor(const std::string &name, tflite::TensorType type,
                                const std::vector<int32_t> &shape, const TestQuant &quant,
                                const std::vector<uint8_t> &data) {
  uint32_t buffer = 0;
  if (!data.empty()) {
    buffer = uint32_t(buffers_.size());
    buffers_.push_back(data);
  }
  tensors_.push_back({name, type, shape, quant, buffer});
  return int32_t(tensors_.size() - 1);
}

int32_t TfliteTestModel::externalTensor(const std::string &name, const std::vector<int32_t> &shape,
                                        uint64_t offset, uint64_t size) {
  const uint32_t buffer = uint32_t(buffers_.size());
  buffers_.push_back({});
  external_[buffer] = {offset, size};
  tensors_.push_back({name, tflite::TensorType_FLOAT32, shape, {}, buffer});
  return int32_t(tensors_.size() - 1);
}

int32_t TfliteTestModel::floatTensor(const std::string &name, const std::vector<int32_t> &shape,
                                     const std::vector<float> &values) {
  return tensor(name, tflite::TensorType_FLOAT32, shape, {}, bytesOf(values));
}

int32_t TfliteTestModel::int8Tensor(const std::string &name, const std::vector<int32_t> &shape,
                                    const TestQuant &quant, const std::vector<int8_t> &values) {
  return tensor(name, tflite::TensorType_INT8, shape, quant, bytesOf(values));
}

int32_t TfliteTestModel::int32Tensor(const std::string &name, const std::vector<int32_t> &shape,
                                     const std::vector<int32_t> &values, const TestQuant &quant) {
  return tensor(name, tflite::TensorType_INT32, shape, quant, bytesOf(values));
}

void TfliteTestModel::op(tflite::BuiltinOperator code, const std::vector<int32_t> &inputs,
                         const std::vector<int32_t> &outputs, tflite::BuiltinOptions optionsType,
                         flatbuffers::Offset<void> options, const std::string &customCode) {
  std::pair<int32_t, std::string> key{int32_t(code), customCode};
  uint32_t index = 0;
  while (index < codes_.size() && codes_[index] != key)
    ++index;
  if (index == codes_.size())
    codes_.push_back(key);
  ops_.push_back({index, inputs, outputs, optionsType, options});
}

std::vector<uint8_t> TfliteTestModel::bytes() {
  flatbuffers::FlatBufferBuilder &b = builder_;
  std::vector<flatbuffers::Offset<tflite::Buffer>> buffers;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    auto external = external_.find(uint32_t(i));
    if (external != external_.end())
      buffers.push_back(
          tflite::CreateBuffer(b, 0, external->second.first, external->second.second));
    else
      buffers.push_back(
          tflite::CreateBuffer(b, buffers_[i].empty() ? 0 : b.CreateVector(buffers_[i])));
  }
  std::vector<flatbuffers::Offset<tflite::Tensor>> tensors;
  for (const PendingTensor &t : tensors_) {
    flatbuffers::Offset<tflite::QuantizationParameters> quant = 0;
    if (!t.quant.scales.empty())
      quant = tflite::CreateQuantizationParameters(
          b, 0, 0, b.CreateVector(t.quant.scales), b.CreateVector(t.quant.zeroPoints),
          tflite::QuantizationDetails_NONE, 0, t.quant.axis);
    tensors.push_back(tflite::CreateTensor(b, b.CreateVector(t.shape), t.type, t.buffer,
                                           b.CreateString(t.name), quant));
  }
  std::vector<flatbuffers::Offset<tflite::Operator>> ops;
  for (const PendingOp &op : ops_)
    ops.push_back(tflite::CreateOperator(b, op.code, b.CreateVector(op.inputs),
                                         b.CreateVector(op.outputs), op.optionsType, op.options));
  std::vector<flatbuffers::Offset<tflite::OperatorCode>> codes;
  for (const auto &[code, custom] : codes_) {
    int8_t deprecated = int8_t(code < 127 ? code : 127);
    codes.push_back(tflite::CreateOperatorCode(b, deprecated,
                                               custom.empty() ? 0 : b.CreateString(custom), 1,
                                               tflite::BuiltinOperator(code)));
  }
  auto subgraph =
      tflite::CreateSubGraph(b, b.CreateVector(tensors), b.CreateVector(inputs_),
                             b.CreateVector(outputs_), b.CreateVector(ops), b.CreateString("main"));
  auto model = tflite::CreateModel(b, 3, b.CreateVector(codes), b.CreateVector(&subgraph, 1),
                                   b.CreateString("bundlefit test"), b.CreateVector(buffers));
  tflite::FinishModelBuffer(b, model);
  std::vector<uint8_t> out(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  return out;
}

std::string TfliteTestModel::save(const std::string &fileName) {
  return writeBytes(fileName, bytes());
}

} // namespace bundlefit::testing
