//===- TestModel.h - Tiny ONNX models built in C++ for importer tests ------===//
#pragma once

#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/support/Error.h"

#include "ErrorOf.h" // errorOf, shared with the TFLite importer tests

#include <onnx/onnx_pb.h> // Defines ONNX_API, then includes onnx-ml.pb.h.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bundlefit {
namespace testing {

/// A ModelProto under construction, saved to a per-process temp directory.
class TestModel {
public:
  explicit TestModel(int64_t opset = 13, const std::string &domainOpset = "");

  onnx::GraphProto &graph() { return *model.mutable_graph(); }

  /// A graph input; a dim of -1 with `symbols[i]` set becomes dim_param.
  void input(const std::string &name, const std::vector<int64_t> &dims,
             int32_t elemType = onnx::TensorProto::FLOAT,
             const std::vector<std::string> &symbols = {});
  void output(const std::string &name);
  onnx::NodeProto &node(const std::string &opType, const std::vector<std::string> &inputs,
                        const std::vector<std::string> &outputs, const std::string &name = "");
  onnx::TensorProto &floatInit(const std::string &name, const std::vector<int64_t> &dims,
                               const std::vector<float> &values);
  onnx::TensorProto &int64Init(const std::string &name, const std::vector<int64_t> &dims,
                               const std::vector<int64_t> &values);

  /// Serialises to `<tempdir>/<fileName>` and returns the path.
  std::string save(const std::string &fileName) const;
  /// save() + importOnnxModel without the unsupported-operator check.
  std::unique_ptr<Graph> import(const std::string &fileName, ImportOptions options = {}) const;

  onnx::ModelProto model;
};

void setInt(onnx::NodeProto &node, const std::string &name, int64_t value);
void setInts(onnx::NodeProto &node, const std::string &name, const std::vector<int64_t> &v);
void setFloat(onnx::NodeProto &node, const std::string &name, float value);
void setFloats(onnx::NodeProto &node, const std::string &name, const std::vector<float> &v);
void setString(onnx::NodeProto &node, const std::string &name, const std::string &value);
onnx::TensorProto &setTensor(onnx::NodeProto &node, const std::string &name);

/// A per-process scratch directory, removed at exit.
std::string tempPath(const std::string &fileName);
std::string writeFile(const std::string &fileName, const std::string &bytes);
std::string readFile(const std::string &path);

/// The libonnx-testdata file `relative` (e.g. "node/test_clip/model.onnx"),
/// or "" when the package is not installed.
std::string testData(const std::string &relative);

/// The constant values of a Value, as the tests compare them.
std::vector<float> floatsOf(const Value *value);
std::vector<int64_t> intsOf(const Value *value);

/// The single node of op type `opType` (fails the test if not exactly one).
Node *onlyNode(const Graph &graph, const std::string &opType);

} // namespace testing
} // namespace bundlefit
