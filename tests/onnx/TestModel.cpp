#include "TestModel.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace bundlefit {
namespace testing {

namespace {

struct ScratchDirectory {
  std::filesystem::path path;
  ScratchDirectory() {
    path = std::filesystem::temp_directory_path() /
           ("bundlefit_onnx_tests_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

onnx::AttributeProto &addAttr(onnx::NodeProto &node, const std::string &name,
                              onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto *attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(type);
  return *attr;
}

} // namespace

std::string tempPath(const std::string &fileName) {
  static ScratchDirectory directory;
  return (directory.path / fileName).string();
}

std::string writeFile(const std::string &fileName, const std::string &bytes) {
  std::string path = tempPath(fileName);
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  return path;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string testData(const std::string &relative) {
  std::string path = std::string(BUNDLEFIT_ONNX_TESTDATA) + "/" + relative;
  return std::filesystem::exists(path) ? path : "";
}

TestModel::TestModel(int64_t opset, const std::string &domainOpset) {
  model.set_ir_version(7);
  model.set_producer_name("bundlefit-tests");
  onnx::OperatorSetIdProto *entry = model.add_opset_import();
  entry->set_domain(domainOpset);
  entry->set_version(opset);
  graph().set_name("test_graph");
}

void TestModel::input(const std::string &name, const std::vector<int64_t> &dims, int32_t elemType,
                      const std::vector<std::string> &symbols) {
  onnx::ValueInfoProto *info = graph().add_input();
  info->set_name(name);
  onnx::TypeProto_Tensor *tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elemType);
  onnx::TensorShapeProto *shape = tensor->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    onnx::TensorShapeProto_Dimension *dim = shape->add_dim();
    if (dims[i] >= 0)
      dim->set_dim_value(dims[i]);
    else if (i < symbols.size() && !symbols[i].empty())
      dim->set_dim_param(symbols[i]);
  }
}

void TestModel::output(const std::string &name) { graph().add_output()->set_name(name); }

onnx::NodeProto &TestModel::node(const std::string &opType, const std::vector<std::string> &inputs,
                                 const std::vector<std::string> &outputs, const std::string &name) {
  onnx::NodeProto *node = graph().add_node();
  node->set_op_type(opType);
  node->set_name(name);
  for (const std::string &input : inputs)
    node->add_input(input);
  for (const std::string &output : outputs)
    node->add_output(output);
  return *node;
}

onnx::TensorProto &TestModel::floatInit(const std::string &name, const std::vector<int64_t> &dims,
                                        const std::vector<float> &values) {
  onnx::TensorProto *tensor = graph().add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims)
    tensor->add_dims(dim);
  tensor->set_raw_data(values.data(), values.size() * sizeof(float));
  return *tensor;
}

onnx::TensorProto &TestModel::int64Init(const std::string &name, const std::vector<int64_t> &dims,
                                        const std::vector<int64_t> &values) {
  onnx::TensorProto *tensor = graph().add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  for (int64_t dim : dims)
    tensor->add_dims(dim);
  for (int64_t value : values)
    tensor->add_int64_data(value);
  return *tensor;
}

std::string TestModel::save(const std::string &fileName) const {
  std::string bytes;
  REQUIRE(model.SerializeToString(&bytes));
  return writeFile(fileName, bytes);
}

std::unique_ptr<Graph> TestModel::import(const std::string &fileName, ImportOptions options) const {
  options.rejectUnsupportedOps = false;
  return importOnnxModel(save(fileName), options);
}

void setInt(onnx::NodeProto &node, const std::string &name, int64_t value) {
  addAttr(node, name, onnx::AttributeProto::INT).set_i(value);
}

void setInts(onnx::NodeProto &node, const std::string &name, const std::vector<int64_t> &values) {
  onnx::AttributeProto &attr = addAttr(node, name, onnx::AttributeProto::INTS);
  for (int64_t value : values)
    attr.add_ints(value);
}

void setFloat(onnx::NodeProto &node, const std::string &name, float value) {
  addAttr(node, name, onnx::AttributeProto::FLOAT).set_f(value);
}

void setFloats(onnx::NodeProto &node, const std::string &name, const std::vector<float> &values) {
  onnx::AttributeProto &attr = addAttr(node, name, onnx::AttributeProto::FLOATS);
  for (float value : values)
    attr.add_floats(value);
}

void setString(onnx::NodeProto &node, const std::string &name, const std::string &value) {
  addAttr(node, name, onnx::AttributeProto::STRING).set_s(value);
}

onnx::TensorProto &setTensor(onnx::NodeProto &node, const std::string &name) {
  return *addAttr(node, name, onnx::AttributeProto::TENSOR).mutable_t();
}

std::vector<float> floatsOf(const Value *value) {
  REQUIRE(value != nullptr);
  REQUIRE(value->isConstant());
  REQUIRE(value->type.dtype == DType::Float32);
  const float *data = value->dataAs<float>();
  return std::vector<float>(data, data + value->type.numElements());
}

std::vector<int64_t> intsOf(const Value *value) {
  REQUIRE(value != nullptr);
  REQUIRE(value->isConstant());
  REQUIRE(value->type.dtype == DType::Int64);
  const int64_t *data = value->dataAs<int64_t>();
  return std::vector<int64_t>(data, data + value->type.numElements());
}

Node *onlyNode(const Graph &graph, const std::string &opType) {
  Node *found = nullptr;
  int count = 0;
  for (Node *node : graph.nodes())
    if (node->opType == opType) {
      found = node;
      ++count;
    }
  REQUIRE_MESSAGE(count == 1, "expected one " << opType << " node, found " << count);
  return found;
}

} // namespace testing
} // namespace bundlefit
