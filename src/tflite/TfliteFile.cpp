//===- TfliteFile.cpp - Read and verify a .tflite file ---------------------===//
#include "TfliteFile.h"

#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/InputFile.h"
#include "bundlefit/support/MemoryBudget.h"

#include <algorithm>

#include <climits>
#include <cstring>

namespace bundlefit::tflite_import {

namespace {

/// TFLite's flatbuffers are 32-bit: larger models keep their buffers after
/// the flatbuffer (Buffer.offset), which bundlefit reads up to 2 GB in all.
constexpr uint64_t kMaxFileBytes = uint64_t(INT_MAX);
/// More than any microcontroller model has; keeps every count small.
constexpr size_t kMaxRank = 8;

/// The file's bytes, read the one way bundlefit reads an input
/// (support/InputFile.h): a regular file within the memory budget and 2 GB.
std::vector<uint8_t> readFile(const std::string &path) {
  const std::string bytes =
      readInputFile(path, "model", std::min<uint64_t>(kMaxFileBytes, memoryBudget()));
  if (bytes.empty())
    throw Error(ExitCode::BadInputFile, path + ": is empty, not a TFLite model");
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

} // namespace

bool hasTfliteIdentifier(const uint8_t *head, size_t size) {
  return size >= 8 && std::memcmp(head + 4, tflite::ModelIdentifier(), 4) == 0;
}

TfliteFile::TfliteFile(const std::string &path) : path_(path), bytes_(readFile(path)) {
  if (!hasTfliteIdentifier(bytes_.data(), bytes_.size()))
    throw bad("is not a TFLite model (no 'TFL3' file identifier at byte 4)");
  // The Verifier checks every offset, vector and string of the flatbuffer
  // against the file's bounds before anything reads them.
  flatbuffers::Verifier verifier(bytes_.data(), bytes_.size());
  if (!tflite::VerifyModelBuffer(verifier))
    throw bad("is not a valid TFLite flatbuffer (the flatbuffers verifier rejects it: truncated, "
              "or an offset out of range)");
  model_ = tflite::GetModel(bytes_.data());
  checkStructure();
}

void TfliteFile::checkStructure() {
  const auto *subgraphs = model_->subgraphs();
  if (!subgraphs || subgraphs->size() == 0)
    throw bad("has no subgraph");
  if (subgraphs->size() > 1)
    throw unsupported("has " + std::to_string(subgraphs->size()) +
                      " subgraphs (control flow: WHILE, IF, CALL_ONCE...); bundlefit compiles "
                      "single-subgraph models");
  subgraph_ = subgraphs->Get(0);
  if (!subgraph_->tensors())
    throw bad("subgraph 0 has no tensor list");
  const int64_t count = int64_t(subgraph_->tensors()->size());
  auto checkIndex = [&](int32_t index, const std::string &where, bool optional) {
    if (optional && index == -1)
      return;
    if (index < 0 || index >= count)
      throw bad(where + " names tensor " + std::to_string(index) + ", but the subgraph has " +
                std::to_string(count) + " tensors");
  };
  if (!subgraph_->inputs() || !subgraph_->outputs() || subgraph_->outputs()->size() == 0)
    throw bad("subgraph 0 has no inputs or no outputs list");
  for (int32_t index : *subgraph_->inputs())
    checkIndex(index, "the subgraph's input list", false);
  for (int32_t index : *subgraph_->outputs())
    checkIndex(index, "the subgraph's output list", false);
  const size_t codes = model_->operator_codes() ? model_->operator_codes()->size() : 0;
  if (const auto *ops = subgraph_->operators()) {
    for (size_t i = 0; i < ops->size(); ++i) {
      const tflite::Operator &op = *ops->Get(unsigned(i));
      const std::string where = "operator " + std::to_string(i);
      if (op.opcode_index() >= codes)
        throw bad(where + " has operator code " + std::to_string(op.opcode_index()) +
                  ", but the model has " + std::to_string(codes));
      if (!op.outputs() || op.outputs()->size() == 0)
        throw bad(describeOperator(i) + " has no outputs");
      if (op.inputs())
        for (int32_t index : *op.inputs())
          checkIndex(index, describeOperator(i) + "'s input list", true);
      for (int32_t index : *op.outputs())
        checkIndex(index, describeOperator(i) + "'s output list", false);
    }
  }
  for (int32_t i = 0; i < int32_t(count); ++i)
    checkTensor(i);
}

void TfliteFile::checkTensor(int32_t index) {
  const tflite::Tensor &t = tensor(index);
  const size_t buffers = model_->buffers() ? model_->buffers()->size() : 0;
  if (t.buffer() >= buffers && !(t.buffer() == 0 && buffers == 0))
    throw bad(describeTensor(index) + " names buffer " + std::to_string(t.buffer()) +
              ", but the model has " + std::to_string(buffers));
  if (t.shape() && t.shape()->size() > kMaxRank)
    throw unsupported(describeTensor(index) + " has rank " + std::to_string(t.shape()->size()) +
                      "; bundlefit takes up to " + std::to_string(kMaxRank));
}

const tflite::Tensor &TfliteFile::tensor(int32_t index) const {
  if (index < 0 || size_t(index) >= numTensors())
    fatalInternal("tensor index " + std::to_string(index) + " was not checked");
  return *subgraph_->tensors()->Get(unsigned(index));
}

size_t TfliteFile::numTensors() const { return subgraph_->tensors()->size(); }

std::string TfliteFile::describeTensor(int32_t index) const {
  const tflite::Tensor &t = tensor(index);
  std::string name = t.name() ? t.name()->str() : "";
  return "tensor " + std::to_string(index) + (name.empty() ? "" : " ('" + name + "')");
}

Shape TfliteFile::shapeOf(int32_t index) const {
  const tflite::Tensor &t = tensor(index);
  Shape shape;
  if (t.shape())
    for (int32_t dim : *t.shape()) {
      if (dim < 1)
        throw unsupported(describeTensor(index) + " has dimension " + std::to_string(dim) +
                          (dim < 0 ? " (a dynamic shape)" : "") +
                          "; bundlefit compiles static shapes of at least 1");
      shape.push_back(dim);
    }
  if (!checkedTensorBytes(shape, 8))
    throw bad(describeTensor(index) + " of shape " + shapeToString(shape) +
              " is larger than bundlefit's limit of " + std::to_string(kMaxTensorBytes >> 30) +
              " GiB per tensor");
  return shape;
}

ByteSpan TfliteFile::dataOf(int32_t index) const {
  const tflite::Tensor &t = tensor(index);
  if (!model_->buffers() || t.buffer() == 0)
    return {};
  const tflite::Buffer &buffer = *model_->buffers()->Get(t.buffer());
  if (buffer.data() && buffer.data()->size() > 0)
    return {buffer.data()->data(), buffer.data()->size()};
  // Buffers of models above 2 GB live after the flatbuffer: offset counts
  // from the start of the file (0 and 1 mean "none").
  if (buffer.offset() > 1) {
    std::optional<uint64_t> end = checkedAdd(buffer.offset(), buffer.size());
    if (!end || *end > bytes_.size())
      throw bad(describeTensor(index) + ": its buffer " + std::to_string(t.buffer()) + " (offset " +
                std::to_string(buffer.offset()) + ", " + std::to_string(buffer.size()) +
                " bytes) lies beyond the end of the file (" + std::to_string(bytes_.size()) +
                " bytes)");
    return {bytes_.data() + buffer.offset(), size_t(buffer.size())};
  }
  return {};
}

int32_t TfliteFile::builtinCodeOf(const tflite::Operator &op) const {
  const tflite::OperatorCode &code = *model_->operator_codes()->Get(op.opcode_index());
  // TFLite's GetBuiltinCode: the int32 field arrived with code 127; older
  // files only have the byte.
  return std::max<int32_t>(code.builtin_code(), code.deprecated_builtin_code());
}

std::string TfliteFile::operatorName(const tflite::Operator &op) const {
  int32_t builtin = builtinCodeOf(op);
  if (builtin == tflite::BuiltinOperator_CUSTOM) {
    const tflite::OperatorCode &code = *model_->operator_codes()->Get(op.opcode_index());
    return "custom '" + (code.custom_code() ? code.custom_code()->str() : std::string()) + "'";
  }
  if (builtin < tflite::BuiltinOperator_MIN || builtin > tflite::BuiltinOperator_MAX)
    return "builtin " + std::to_string(builtin);
  const char *name = tflite::EnumNameBuiltinOperator(tflite::BuiltinOperator(builtin));
  return name && *name ? name : "builtin " + std::to_string(builtin);
}

std::string TfliteFile::describeOperator(size_t index) const {
  const auto *ops = subgraph_->operators();
  if (!ops || index >= ops->size())
    fatalInternal("operator index " + std::to_string(index) + " out of range");
  return "operator " + std::to_string(index) + " (" + operatorName(*ops->Get(unsigned(index))) +
         ")";
}

} // namespace bundlefit::tflite_import
