// Older opsets arrive in the opset-13 operand form the IR uses.
#include "TestModel.h"

#include "SkipTest.h"
#include <doctest/doctest.h>

using namespace bundlefit;
using namespace bundlefit::testing;

namespace {

/// A one-node model: input x of `dims`, node `op` reading x (plus `extra`
/// operands), output y.
TestModel oneNode(int64_t opset, const std::string &op, const std::vector<int64_t> &dims,
                  const std::vector<std::string> &extra = {}, onnx::NodeProto **nodeOut = nullptr) {
  TestModel m(opset);
  m.input("x", dims);
  std::vector<std::string> inputs = {"x"};
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  onnx::NodeProto &node = m.node(op, inputs, {"y"}, "n");
  m.output("y");
  if (nodeOut)
    *nodeOut = &node;
  return m;
}

} // namespace

TEST_CASE("Clip < 11: min/max attributes become scalar operands") {
  onnx::NodeProto *node = nullptr;
  TestModel m = oneNode(6, "Clip", {4}, {}, &node);
  setFloat(*node, "min", -1.0f);
  setFloat(*node, "max", 6.0f);
  auto graph = m.import("clip6.onnx");
  const Node *clip = onlyNode(*graph, "Clip");
  REQUIRE(clip->inputs.size() == 3);
  CHECK(clip->inputs[1]->type.str() == "float32[]");
  CHECK(floatsOf(clip->inputs[1]) == std::vector<float>{-1.0f});
  CHECK(floatsOf(clip->inputs[2]) == std::vector<float>{6.0f});
  CHECK_FALSE(clip->attrs.has("min"));
  CHECK_FALSE(clip->attrs.has("max"));

  TestModel onlyMax = oneNode(10, "Clip", {4}, {}, &node);
  setFloat(*node, "max", 6.0f);
  auto graph2 = onlyMax.import("clip10.onnx");
  const Node *clip2 = onlyNode(*graph2, "Clip");
  REQUIRE(clip2->inputs.size() == 3);
  CHECK(clip2->inputs[1] == nullptr);
  CHECK(floatsOf(clip2->inputs[2]) == std::vector<float>{6.0f});
}

TEST_CASE("Clip 11+ from the backend test data keeps its operands" *
          doctest::test_suite("needs_onnx_testdata")) {
  std::string path = testData("node/test_clip_default_min/model.onnx");
  if (path.empty())
    BUNDLEFIT_SKIP_TEST("libonnx-testdata is not installed");
  ImportOptions options;
  options.rejectUnsupportedOps = false;
  auto graph = importOnnxModel(path, options);
  const Node *clip = onlyNode(*graph, "Clip");
  CHECK(clip->inputs.size() == 2); // x, min (max omitted)
  CHECK(clip->attrs.all().empty());
}

TEST_CASE("Squeeze/Unsqueeze < 13: axes attribute becomes an int64 operand") {
  onnx::NodeProto *node = nullptr;
  TestModel squeeze = oneNode(11, "Squeeze", {1, 3, 1}, {}, &node);
  setInts(*node, "axes", {0, -1});
  auto graph = squeeze.import("squeeze11.onnx");
  const Node *n = onlyNode(*graph, "Squeeze");
  REQUIRE(n->inputs.size() == 2);
  CHECK(n->inputs[1]->type.str() == "int64[2]");
  CHECK(intsOf(n->inputs[1]) == std::vector<int64_t>{0, -1});
  CHECK_FALSE(n->attrs.has("axes"));

  TestModel all = oneNode(11, "Squeeze", {1, 3, 1});
  CHECK(onlyNode(*all.import("squeeze_all.onnx"), "Squeeze")->inputs.size() == 1);

  TestModel unsqueeze = oneNode(9, "Unsqueeze", {3}, {}, &node);
  setInts(*node, "axes", {0});
  auto graph3 = unsqueeze.import("unsqueeze9.onnx");
  CHECK(intsOf(onlyNode(*graph3, "Unsqueeze")->inputs[1]) == std::vector<int64_t>{0});
}

TEST_CASE("Squeeze 13 from the backend test data keeps its axes operand" *
          doctest::test_suite("needs_onnx_testdata")) {
  std::string path = testData("node/test_squeeze/model.onnx");
  if (path.empty())
    BUNDLEFIT_SKIP_TEST("libonnx-testdata is not installed");
  ImportOptions options;
  options.rejectUnsupportedOps = false;
  auto graph = importOnnxModel(path, options);
  CHECK(onlyNode(*graph, "Squeeze")->inputs.size() == 2);
}

TEST_CASE("Split < 13: split attribute becomes an operand, axis stays") {
  TestModel m(11);
  m.input("x", {6});
  onnx::NodeProto &node = m.node("Split", {"x"}, {"a", "b"}, "split");
  setInts(node, "split", {2, 4});
  setInt(node, "axis", 0);
  m.output("a");
  m.output("b");
  auto graph = m.import("split11.onnx");
  const Node *split = onlyNode(*graph, "Split");
  CHECK(intsOf(split->inputs[1]) == std::vector<int64_t>{2, 4});
  CHECK(split->attrs.getInt("axis", -1) == 0);
  CHECK(split->outputs.size() == 2);
}

TEST_CASE("Pad < 11: pads and value become operands, mode stays") {
  onnx::NodeProto *node = nullptr;
  TestModel m = oneNode(2 + 8, "Pad", {1, 2}, {}, &node);
  setInts(*node, "pads", {0, 1, 0, 2});
  setFloat(*node, "value", 1.5f);
  setString(*node, "mode", "constant");
  auto graph = m.import("pad10.onnx");
  const Node *pad = onlyNode(*graph, "Pad");
  REQUIRE(pad->inputs.size() == 3);
  CHECK(intsOf(pad->inputs[1]) == std::vector<int64_t>{0, 1, 0, 2});
  CHECK(floatsOf(pad->inputs[2]) == std::vector<float>{1.5f});
  CHECK(pad->attrs.getString("mode", "") == "constant");
  CHECK_FALSE(pad->attrs.has("pads"));
  CHECK_FALSE(pad->attrs.has("value"));

  TestModel reflect = oneNode(7, "Pad", {1, 2}, {}, &node);
  setInts(*node, "pads", {0, 1, 0, 1});
  setString(*node, "mode", "reflect");
  auto pad2Graph = reflect.import("pad7.onnx");
  const Node *pad2 = onlyNode(*pad2Graph, "Pad");
  CHECK(pad2->inputs.size() == 2);
  CHECK(pad2->attrs.getString("mode", "") == "reflect");
}

TEST_CASE("Pad from an opset-6 PyTorch export is rewritten" *
          doctest::test_suite("needs_onnx_testdata")) {
  std::string path = testData("pytorch-operator/test_operator_pad/model.onnx");
  if (path.empty())
    BUNDLEFIT_SKIP_TEST("libonnx-testdata is not installed");
  ImportOptions options;
  options.rejectUnsupportedOps = false;
  auto graph = importOnnxModel(path, options);
  const Node *pad = onlyNode(*graph, "Pad");
  REQUIRE(pad->inputs.size() >= 2);
  CHECK(pad->inputs[1]->type.dtype == DType::Int64);
  CHECK_FALSE(pad->attrs.has("pads"));
}

TEST_CASE("Slice < 10: starts/ends/axes attributes become operands") {
  onnx::NodeProto *node = nullptr;
  TestModel m = oneNode(9, "Slice", {4, 6}, {}, &node);
  setInts(*node, "starts", {1});
  setInts(*node, "ends", {3});
  setInts(*node, "axes", {1});
  auto graph = m.import("slice9.onnx");
  const Node *slice = onlyNode(*graph, "Slice");
  REQUIRE(slice->inputs.size() == 4);
  CHECK(intsOf(slice->inputs[1]) == std::vector<int64_t>{1});
  CHECK(intsOf(slice->inputs[2]) == std::vector<int64_t>{3});
  CHECK(intsOf(slice->inputs[3]) == std::vector<int64_t>{1});
  CHECK(slice->attrs.all().empty());

  TestModel noAxes = oneNode(1 + 8, "Slice", {4}, {}, &node);
  setInts(*node, "starts", {0});
  setInts(*node, "ends", {2});
  CHECK(onlyNode(*noAxes.import("slice9b.onnx"), "Slice")->inputs.size() == 3);
}

TEST_CASE("Upsample-7 (scales attribute) becomes Resize with asymmetric coordinates") {
  onnx::NodeProto *node = nullptr;
  TestModel m = oneNode(7, "Upsample", {1, 1, 2, 2}, {}, &node);
  setFloats(*node, "scales", {1.0f, 1.0f, 2.0f, 3.0f});
  setString(*node, "mode", "linear");
  auto graph = m.import("upsample7.onnx");
  const Node *resize = onlyNode(*graph, "Resize");
  CHECK(resize->name == "n");
  REQUIRE(resize->inputs.size() == 3);
  CHECK(resize->inputs[1] == nullptr);
  CHECK(floatsOf(resize->inputs[2]) == std::vector<float>{1, 1, 2, 3});
  CHECK(resize->attrs.getString("mode", "") == "linear");
  CHECK(resize->attrs.getString("coordinate_transformation_mode", "") == "asymmetric");
  CHECK(resize->attrs.getString("nearest_mode", "") == "floor");
  CHECK_FALSE(resize->attrs.has("scales"));
}

TEST_CASE("Upsample-9 (scales operand) becomes Resize") {
  std::string path = testData("node/test_upsample_nearest/model.onnx");
  TestModel m = oneNode(9, "Upsample", {1, 1, 2, 2}, {"scales"});
  m.floatInit("scales", {4}, {1, 1, 2, 2});
  ImportOptions options;
  options.rejectUnsupportedOps = false;
  auto graph = path.empty() ? m.import("upsample9.onnx") : importOnnxModel(path, options);
  const Node *resize = onlyNode(*graph, "Resize");
  REQUIRE(resize->inputs.size() == 3);
  CHECK(resize->inputs[1] == nullptr);
  CHECK(resize->inputs[2] == graph->findValue("scales"));
  CHECK(resize->attrs.getString("mode", "") == "nearest");
  CHECK(resize->attrs.getString("coordinate_transformation_mode", "") == "asymmetric");
}

TEST_CASE("Resize-10 (X, scales) gains an omitted roi and opset-10 semantics") {
  TestModel m = oneNode(10, "Resize", {1, 1, 2, 2}, {"scales"});
  m.floatInit("scales", {4}, {1, 1, 2, 2});
  auto graph = m.import("resize10.onnx");
  const Node *resize = onlyNode(*graph, "Resize");
  REQUIRE(resize->inputs.size() == 3);
  CHECK(resize->inputs[1] == nullptr);
  CHECK(resize->inputs[2] == graph->findValue("scales"));
  CHECK(resize->attrs.getString("coordinate_transformation_mode", "") == "asymmetric");
}

TEST_CASE("Resize-11 empty roi and scales constants become omitted operands") {
  TestModel m = oneNode(11, "Resize", {1, 1, 2, 2}, {"roi", "scales", "sizes"});
  m.floatInit("roi", {0}, {});
  m.floatInit("scales", {0}, {});
  m.int64Init("sizes", {4}, {1, 1, 4, 4});
  auto graph = m.import("resize11.onnx");
  const Node *resize = onlyNode(*graph, "Resize");
  REQUIRE(resize->inputs.size() == 4);
  CHECK(resize->inputs[1] == nullptr);
  CHECK(resize->inputs[2] == nullptr);
  CHECK(resize->inputs[3] == graph->findValue("sizes"));
  CHECK_FALSE(resize->attrs.has("coordinate_transformation_mode"));
}

TEST_CASE("Softmax < 13 gets coerce_to_2d and an explicit axis; 13 an explicit axis") {
  TestModel old = oneNode(11, "Softmax", {2, 3, 4});
  auto softmaxGraph = old.import("softmax11.onnx");
  const Node *softmax = onlyNode(*softmaxGraph, "Softmax");
  CHECK(softmax->attrs.getInt("coerce_to_2d", 0) == 1);
  CHECK(softmax->attrs.getInt("axis", 99) == 1);

  onnx::NodeProto *node = nullptr;
  TestModel logOld = oneNode(9, "LogSoftmax", {2, 3, 4}, {}, &node);
  setInt(*node, "axis", 2);
  auto logSoftmaxGraph = logOld.import("logsoftmax9.onnx");
  const Node *logSoftmax = onlyNode(*logSoftmaxGraph, "LogSoftmax");
  CHECK(logSoftmax->attrs.getInt("coerce_to_2d", 0) == 1);
  CHECK(logSoftmax->attrs.getInt("axis", 99) == 2);

  TestModel current = oneNode(13, "Softmax", {2, 3, 4});
  auto softmax13Graph = current.import("softmax13.onnx");
  const Node *softmax13 = onlyNode(*softmax13Graph, "Softmax");
  CHECK_FALSE(softmax13->attrs.has("coerce_to_2d"));
  CHECK(softmax13->attrs.getInt("axis", 99) == -1);
}

TEST_CASE("Softmax from an opset-6 PyTorch export" * doctest::test_suite("needs_onnx_testdata")) {
  std::string path = testData("pytorch-converted/test_Softmax/model.onnx");
  if (path.empty())
    BUNDLEFIT_SKIP_TEST("libonnx-testdata is not installed");
  ImportOptions options;
  options.rejectUnsupportedOps = false;
  auto graph = importOnnxModel(path, options);
  CHECK(onlyNode(*graph, "Softmax")->attrs.getInt("coerce_to_2d", 0) == 1);
}

TEST_CASE("Dropout keeps only its data operand and output") {
  TestModel m(7);
  m.input("x", {3});
  onnx::NodeProto &node = m.node("Dropout", {"x"}, {"y", "mask"}, "drop");
  setFloat(node, "ratio", 0.3f);
  m.output("y");
  auto graph = m.import("dropout7.onnx");
  const Node *dropout = onlyNode(*graph, "Dropout");
  CHECK(dropout->inputs.size() == 1);
  CHECK(dropout->outputs.size() == 1);
  CHECK(dropout->attrs.all().empty());

  TestModel m12(12);
  m12.input("x", {3});
  m12.floatInit("r", {}, {0.5f});
  m12.node("Dropout", {"x", "r"}, {"y"}, "drop");
  m12.output("y");
  CHECK(onlyNode(*m12.import("dropout12.onnx"), "Dropout")->inputs.size() == 1);

  TestModel maskUsed(13);
  maskUsed.input("x", {3});
  maskUsed.node("Dropout", {"x"}, {"y", "mask"}, "drop");
  maskUsed.output("y");
  maskUsed.output("mask");
  auto [code, message] = errorOf([&] { maskUsed.import("dropout_mask.onnx"); });
  CHECK(code == ExitCode::Unsupported);
  CHECK(message.find("node 'drop' (Dropout): output 'mask' (the dropout mask) is used") !=
        std::string::npos);
}

TEST_CASE("BatchNormalization drops harmless legacy attributes and statistics outputs") {
  TestModel m(6);
  m.input("x", {1, 2, 2, 2});
  for (const char *name : {"scale", "bias", "mean", "var"})
    m.floatInit(name, {2}, {1, 1});
  onnx::NodeProto &node = m.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"},
                                 {"y", "running_mean", "", "", ""}, "bn");
  setInt(node, "is_test", 1);
  setInt(node, "spatial", 1);
  setFloat(node, "epsilon", 1e-3f);
  m.output("y");
  auto bnGraph = m.import("bn6.onnx");
  const Node *bn = onlyNode(*bnGraph, "BatchNormalization");
  CHECK(bn->outputs.size() == 1);
  CHECK(bn->attrs.all().size() == 1);
  CHECK(bn->attrs.getFloat("epsilon", 0) == doctest::Approx(1e-3f));

  TestModel perActivation(7);
  perActivation.input("x", {1, 2});
  for (const char *name : {"scale", "bias", "mean", "var"})
    perActivation.floatInit(name, {2}, {1, 1});
  onnx::NodeProto &node2 =
      perActivation.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn");
  setInt(node2, "spatial", 0);
  perActivation.output("y");
  auto [code, message] = errorOf([&] { perActivation.import("bn7.onnx"); });
  CHECK(code == ExitCode::Unsupported);
  CHECK(message.find("spatial=0") != std::string::npos);
}

TEST_CASE("MaxPool drops an unused Indices output") {
  TestModel m = oneNode(12, "MaxPool", {1, 1, 4, 4});
  m.graph().mutable_node(0)->add_output("indices");
  CHECK(onlyNode(*m.import("maxpool.onnx"), "MaxPool")->outputs.size() == 1);
}

TEST_CASE("ReduceSum-13 constant axes operand becomes the axes attribute") {
  TestModel m = oneNode(13, "ReduceSum", {2, 3}, {"axes"});
  m.int64Init("axes", {1}, {1});
  auto reduceGraph = m.import("reducesum13.onnx");
  const Node *reduce = onlyNode(*reduceGraph, "ReduceSum");
  CHECK(reduce->inputs.size() == 1);
  CHECK(reduce->attrs.getInts("axes") == std::vector<int64_t>{1});

  onnx::NodeProto *node = nullptr;
  TestModel mean = oneNode(13, "ReduceMean", {2, 3}, {}, &node);
  setInts(*node, "axes", {0});
  setInt(*node, "keepdims", 0);
  auto reduceMeanGraph = mean.import("reducemean13.onnx");
  const Node *reduceMean = onlyNode(*reduceMeanGraph, "ReduceMean");
  CHECK(reduceMean->attrs.getInts("axes") == std::vector<int64_t>{0});
  CHECK(reduceMean->attrs.getInt("keepdims", 1) == 0);
}

TEST_CASE("opset-6 broadcast attributes are resolved to numpy broadcasting") {
  TestModel trailing(6);
  trailing.input("a", {2, 3});
  trailing.input("b", {3});
  onnx::NodeProto &add = trailing.node("Add", {"a", "b"}, {"y"}, "add");
  setInt(add, "broadcast", 1);
  setInt(add, "axis", 1);
  trailing.output("y");
  auto nodeGraph = trailing.import("broadcast_trailing.onnx");
  const Node *node = onlyNode(*nodeGraph, "Add");
  CHECK(node->attrs.all().empty());

  TestModel channel(6);
  channel.input("a", {1, 3, 4, 4});
  channel.floatInit("bias", {3}, {1, 2, 3});
  onnx::NodeProto &add2 = channel.node("Add", {"a", "bias"}, {"y"}, "add");
  setInt(add2, "broadcast", 1);
  setInt(add2, "axis", 1);
  channel.output("y");
  auto node2Graph = channel.import("broadcast_channel.onnx");
  const Node *node2 = onlyNode(*node2Graph, "Add");
  CHECK(node2->inputs[1]->type.str() == "float32[3,1,1]");
  CHECK(floatsOf(node2->inputs[1]) == std::vector<float>{1, 2, 3});

  TestModel unknown(6);
  unknown.input("a", {1, 3, 4, 4});
  unknown.node("Relu", {"a"}, {"r"});
  unknown.input("b", {3});
  onnx::NodeProto &add3 = unknown.node("Mul", {"r", "b"}, {"y"}, "mul");
  setInt(add3, "broadcast", 1);
  setInt(add3, "axis", 1);
  unknown.output("y");
  auto [code, message] = errorOf([&] { unknown.import("broadcast_unknown.onnx"); });
  CHECK(code == ExitCode::Unsupported);
  CHECK(message.find("node 'mul' (Mul): opset-6 broadcast with axis=1") != std::string::npos);
}

TEST_CASE("an opset-6 PyTorch export with legacy broadcast imports" *
          doctest::test_suite("needs_onnx_testdata")) {
  std::string path = testData("pytorch-operator/test_operator_add_broadcast/model.onnx");
  if (path.empty())
    BUNDLEFIT_SKIP_TEST("libonnx-testdata is not installed");
  ImportOptions options;
  options.rejectUnsupportedOps = false;
  // Its inputs are float64: refused, naming the input, unless overridden.
  auto [code, message] = errorOf([&] { importOnnxModel(path, options); });
  CHECK(code == ExitCode::Unsupported);
  CHECK(message.find("input '0' has element type double") != std::string::npos);
  options.inputOverrides = {parseModelInputOption("0,float,[2,3]"),
                            parseModelInputOption("1,float,[3]")};
  auto graph = importOnnxModel(path, options);
  CHECK(onlyNode(*graph, "Add")->attrs.all().empty());
}

TEST_CASE("opset < 6: consumed_inputs dropped, Reshape/Concat/Pad/Cast spellings rewritten") {
  TestModel m(1);
  m.input("x", {2, 3});
  onnx::NodeProto &relu = m.node("Relu", {"x"}, {"r"}, "relu");
  setInts(relu, "consumed_inputs", {-1});
  onnx::NodeProto &reshape = m.node("Reshape", {"r"}, {"flat"}, "reshape");
  setInts(reshape, "shape", {6});
  m.node("Concat", {"flat", "flat"}, {"both"}, "concat");
  onnx::NodeProto &pad = m.node("Pad", {"both"}, {"padded"}, "pad");
  setInts(pad, "paddings", {1, 1});
  onnx::NodeProto &cast = m.node("Cast", {"padded"}, {"y"}, "cast");
  setString(cast, "to", "INT32");
  m.output("y");
  auto graph = m.import("opset1.onnx");
  CHECK(graph->findNode("relu")->attrs.all().empty());
  const Node *reshapeNode = graph->findNode("reshape");
  REQUIRE(reshapeNode->inputs.size() == 2);
  CHECK(intsOf(reshapeNode->inputs[1]) == std::vector<int64_t>{6});
  CHECK_FALSE(reshapeNode->attrs.has("shape"));
  CHECK(graph->findNode("concat")->attrs.getInt("axis", -1) == 1);
  const Node *padNode = graph->findNode("pad");
  CHECK(intsOf(padNode->inputs[1]) == std::vector<int64_t>{1, 1});
  CHECK_FALSE(padNode->attrs.has("paddings"));
  CHECK(graph->findNode("cast")->attrs.getInt("to", -1) == 6); // TensorProto::INT32

  TestModel tile(5);
  tile.input("x", {2});
  tile.int64Init("tiles", {}, {2});
  tile.int64Init("axis", {}, {0});
  tile.node("Tile", {"x", "tiles", "axis"}, {"y"}, "tile");
  tile.output("y");
  auto [code, message] = errorOf([&] { tile.import("tile1.onnx"); });
  CHECK(code == ExitCode::Unsupported);
  CHECK(message.find("node 'tile' (Tile): Tile-1") != std::string::npos);
}

TEST_CASE("an opset-1 backend test model imports" * doctest::test_suite("needs_onnx_testdata")) {
  std::string path = testData("node/test_globalaveragepool/model.onnx");
  if (path.empty())
    BUNDLEFIT_SKIP_TEST("libonnx-testdata is not installed");
  ImportOptions options;
  options.rejectUnsupportedOps = false;
  auto graph = importOnnxModel(path, options);
  CHECK(onlyNode(*graph, "GlobalAveragePool")->inputs.size() == 1);
}
