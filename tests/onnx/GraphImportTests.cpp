// Building the graph: constants, inputs, names, outputs, unsupported ops.
#include "TestModel.h"

#include "bundlefit/ops/OpRegistry.h"

#include "SkipTest.h"
#include <doctest/doctest.h>

#include <cstring>

using namespace bundlefit;
using namespace bundlefit::testing;

namespace {

onnx::TensorProto &typedInit(TestModel &m, const std::string &name, int32_t type,
                             const std::vector<int64_t> &dims) {
  onnx::TensorProto *tensor = m.graph().add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(type);
  for (int64_t dim : dims)
    tensor->add_dims(dim);
  return *tensor;
}

template <typename T> std::vector<T> elementsOf(const Value *value) {
  REQUIRE(value->data.size() == value->type.bytes());
  std::vector<T> result(size_t(value->type.numElements()));
  std::memcpy(result.data(), value->data.data(), value->data.size());
  return result;
}

} // namespace

TEST_CASE("initializers become typed constants from raw_data and typed fields") {
  TestModel m(13);
  m.input("x", {2, 2});
  m.floatInit("raw_f32", {2, 2}, {1.0f, -2.0f, 3.5f, 4.0f});
  onnx::TensorProto &f32 = typedInit(m, "typed_f32", onnx::TensorProto::FLOAT, {3});
  for (float v : {0.5f, 1.5f, 2.5f})
    f32.add_float_data(v);
  m.int64Init("typed_i64", {2}, {-7, 1LL << 40});
  onnx::TensorProto &i32 = typedInit(m, "typed_i32", onnx::TensorProto::INT32, {2});
  i32.add_int32_data(-3);
  i32.add_int32_data(99);
  onnx::TensorProto &i8 = typedInit(m, "typed_i8", onnx::TensorProto::INT8, {3});
  for (int v : {-128, 0, 127})
    i8.add_int32_data(v);
  onnx::TensorProto &u8 = typedInit(m, "raw_u8", onnx::TensorProto::UINT8, {2});
  u8.set_raw_data(std::string("\x00\xff", 2));
  onnx::TensorProto &flags = typedInit(m, "typed_bool", onnx::TensorProto::BOOL, {3});
  for (int v : {1, 0, 1})
    flags.add_int32_data(v);
  onnx::TensorProto &f16 = typedInit(m, "raw_f16", onnx::TensorProto::FLOAT16, {3});
  const uint16_t halves[] = {0x3c00, 0xc000, 0x3555}; // 1, -2, ~0.333
  f16.set_raw_data(halves, sizeof(halves));
  onnx::TensorProto &f64 = typedInit(m, "typed_f64", onnx::TensorProto::DOUBLE, {2});
  f64.add_double_data(0.25);
  f64.add_double_data(-8.0);
  onnx::TensorProto &scalar = typedInit(m, "scalar", onnx::TensorProto::FLOAT, {});
  scalar.add_float_data(42.0f);
  m.node("Add", {"x", "raw_f32"}, {"y"});
  m.output("y");

  auto graph = m.import("initializers.onnx");
  CHECK(floatsOf(graph->findValue("raw_f32")) == std::vector<float>{1.0f, -2.0f, 3.5f, 4.0f});
  CHECK(graph->findValue("raw_f32")->type.shape == Shape{2, 2});
  CHECK(floatsOf(graph->findValue("typed_f32")) == std::vector<float>{0.5f, 1.5f, 2.5f});
  CHECK(intsOf(graph->findValue("typed_i64")) == std::vector<int64_t>{-7, 1LL << 40});
  const Value *int32Value = graph->findValue("typed_i32");
  CHECK(int32Value->type.dtype == DType::Int32);
  CHECK(elementsOf<int32_t>(int32Value) == std::vector<int32_t>{-3, 99});
  CHECK(graph->findValue("typed_i8")->type.dtype == DType::Int8);
  CHECK(elementsOf<int8_t>(graph->findValue("typed_i8")) == std::vector<int8_t>{-128, 0, 127});
  CHECK(elementsOf<uint8_t>(graph->findValue("raw_u8")) == std::vector<uint8_t>{0, 255});
  CHECK(graph->findValue("typed_bool")->type.dtype == DType::Bool);
  CHECK(elementsOf<uint8_t>(graph->findValue("typed_bool")) == std::vector<uint8_t>{1, 0, 1});
  std::vector<float> widened = floatsOf(graph->findValue("raw_f16"));
  CHECK(widened[0] == 1.0f);
  CHECK(widened[1] == -2.0f);
  CHECK(widened[2] == doctest::Approx(1.0f / 3).epsilon(1e-3));
  CHECK(floatsOf(graph->findValue("typed_f64")) == std::vector<float>{0.25f, -8.0f});
  CHECK(graph->findValue("scalar")->type.shape.empty());
  CHECK(floatsOf(graph->findValue("scalar")) == std::vector<float>{42.0f});
  CHECK(graph->constants().size() == 10);
}

TEST_CASE("initializers of unsupported types or with wrong sizes name the tensor") {
  TestModel m(13);
  m.input("x", {2});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  SUBCASE("uint16 is unsupported") {
    typedInit(m, "u16", onnx::TensorProto::UINT16, {1}).add_int32_data(1);
    std::string path = m.save("u16.onnx");
    auto [code, message] = errorOf([&] { importOnnxModel(path); });
    CHECK(code == ExitCode::Unsupported);
    CHECK(message == path + ": initializer 'u16' has element type uint16, which bundlefit "
                            "does not support");
  }
  SUBCASE("raw_data of the wrong size is a bad file") {
    onnx::TensorProto &t = typedInit(m, "short", onnx::TensorProto::FLOAT, {4});
    t.set_raw_data(std::string(12, '\0'));
    std::string path = m.save("short.onnx");
    auto [code, message] = errorOf([&] { importOnnxModel(path); });
    CHECK(code == ExitCode::BadInputFile);
    CHECK(message == path + ": initializer 'short' of type float[4] needs 4 elements, "
                            "raw_data holds 3");
  }
}

TEST_CASE("graph inputs that are also initializers are constants") {
  TestModel m(8);
  m.model.set_ir_version(3);
  m.input("x", {1, 3});
  m.input("w", {1, 3});
  m.floatInit("w", {1, 3}, {1, 2, 3});
  m.node("Add", {"x", "w"}, {"y"});
  m.output("y");
  auto graph = m.import("input_initializer.onnx");
  REQUIRE(graph->inputs().size() == 1);
  CHECK(graph->inputs()[0]->name == "x");
  CHECK(graph->inputs()[0]->type.str() == "float32[1,3]");
  CHECK(graph->findValue("w")->isConstant());
  CHECK(onlyNode(*graph, "Add")->inputs[1] == graph->findValue("w"));
}

TEST_CASE("Constant nodes become constants, not nodes") {
  TestModel m(13);
  m.input("x", {3});
  onnx::TensorProto &t = setTensor(m.node("Constant", {}, {"c_tensor"}), "value");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(3);
  for (float v : {1.0f, 2.0f, 3.0f})
    t.add_float_data(v);
  setFloat(m.node("Constant", {}, {"c_float"}), "value_float", 0.5f);
  setFloats(m.node("Constant", {}, {"c_floats"}), "value_floats", {1.5f, 2.5f});
  setInt(m.node("Constant", {}, {"c_int"}), "value_int", 7);
  setInts(m.node("Constant", {}, {"c_ints"}), "value_ints", {1, -1});
  m.node("Add", {"x", "c_tensor"}, {"y"}, "add");
  m.output("y");

  auto graph = m.import("constants.onnx");
  CHECK(graph->numNodes() == 1);
  CHECK(floatsOf(graph->findValue("c_tensor")) == std::vector<float>{1, 2, 3});
  CHECK(graph->findValue("c_float")->type.str() == "float32[]");
  CHECK(floatsOf(graph->findValue("c_float")) == std::vector<float>{0.5f});
  CHECK(graph->findValue("c_floats")->type.str() == "float32[2]");
  CHECK(graph->findValue("c_int")->type.str() == "int64[]");
  CHECK(intsOf(graph->findValue("c_int")) == std::vector<int64_t>{7});
  CHECK(intsOf(graph->findValue("c_ints")) == std::vector<int64_t>{1, -1});
  CHECK(onlyNode(*graph, "Add")->inputs[1] == graph->findValue("c_tensor"));
}

TEST_CASE("string Constant nodes are unsupported") {
  TestModel m(13);
  m.node("Constant", {}, {"s"}, "label");
  onnx::AttributeProto *attr = m.graph().mutable_node(0)->add_attribute();
  attr->set_name("value_string");
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s("hello");
  m.output("s");
  auto [code, message] = errorOf([&] { m.import("string_constant.onnx"); });
  CHECK(code == ExitCode::Unsupported);
  CHECK(message.find("node 'label' (Constant): attribute 'value_string'") != std::string::npos);
}

TEST_CASE("symbolic dimensions take --define-symbol values") {
  TestModel m(13);
  m.input("x", {-1, 3, -1}, onnx::TensorProto::FLOAT, {"N", "", "T"});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  std::string path = m.save("symbols.onnx");

  ImportOptions options;
  options.rejectUnsupportedOps = false;
  auto [code, message] = errorOf([&] { importOnnxModel(path, options); });
  CHECK(code == ExitCode::Unsupported);
  CHECK(message == path + ": input 'x' dimension 0 is the undefined symbol 'N'; set it with "
                          "--define-symbol N=<value>");

  options.symbols["N"] = 4;
  CHECK(errorOf([&] { importOnnxModel(path, options); }).second ==
        path + ": input 'x' dimension 2 is the undefined symbol 'T'; set it with "
               "--define-symbol T=<value>");

  options.symbols["T"] = 16;
  auto graph = importOnnxModel(path, options);
  CHECK(graph->inputs()[0]->type.str() == "float32[4,3,16]");
}

TEST_CASE("unknown dimensions, missing shapes and float16 inputs name the input") {
  TestModel m(13);
  m.input("img", {1, -1, 8});
  m.node("Relu", {"img"}, {"y"});
  m.output("y");
  auto [code, message] = errorOf([&] { m.import("unknown_dim.onnx"); });
  CHECK(code == ExitCode::Unsupported);
  CHECK(message.find(": input 'img' dimension 1 has no size; give its type and shape with "
                     "--model-input img,float,[d0,d1,...]") != std::string::npos);

  TestModel half(13);
  half.input("h", {2}, onnx::TensorProto::FLOAT16);
  half.node("Relu", {"h"}, {"y"});
  half.output("y");
  CHECK(errorOf([&] {
          half.import("half_input.onnx");
        }).second.find("input 'h' has element type float16") != std::string::npos);
}

TEST_CASE("--model-input overrides replace an input's type and shape") {
  TestModel m(13);
  m.input("data", {-1, 3, 224, 224}, onnx::TensorProto::FLOAT, {"batch"});
  m.input("mask", {1, 10}, onnx::TensorProto::BOOL);
  m.node("Relu", {"data"}, {"y"});
  m.output("y");

  ImportOptions options;
  options.inputOverrides.push_back(parseModelInputOption("data,int8q,0.5,-3,[1,3,96,96]"));
  auto graph = m.import("override.onnx", options);
  const Value *data = graph->findValue("data");
  CHECK(data->type.str() == "int8[1,3,96,96]");
  CHECK(data->type.quant.scales == std::vector<float>{0.5f});
  CHECK(data->type.quant.zeroPoints == std::vector<int32_t>{-3});
  CHECK(graph->findValue("mask")->type.str() == "bool[1,10]");

  options.inputOverrides.push_back(parseModelInputOption("image,float,[1,3,96,96]"));
  auto [code, message] = errorOf([&] { m.import("override.onnx", options); });
  CHECK(code == ExitCode::Usage);
  CHECK(message == "--model-input 'image': " + tempPath("override.onnx") +
                       " has no input named 'image' (its inputs: 'data', 'mask')");
}

TEST_CASE("node names: ONNX names, generated names, made unique") {
  TestModel m(13);
  m.input("x", {2});
  m.node("Relu", {"x"}, {"a"}, "act");
  m.node("Relu", {"a"}, {"b"});
  m.node("Sigmoid", {"b"}, {"c"}, "act");
  m.output("c");
  auto graph = m.import("names.onnx");
  std::vector<Node *> nodes = graph->nodes();
  REQUIRE(nodes.size() == 3);
  CHECK(nodes[0]->name == "act");
  CHECK(nodes[1]->name == "Relu_1");
  CHECK(nodes[2]->name != "act");
  CHECK(nodes[2]->name.find("act") == 0);
  CHECK(nodes[2]->output(0)->name == "c");
}

TEST_CASE("attributes of every simple kind are converted") {
  TestModel m(13);
  m.input("x", {1, 1, 4, 4});
  m.floatInit("w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  onnx::NodeProto &conv = m.node("Conv", {"x", "w"}, {"y"}, "conv");
  setInts(conv, "pads", {1, 1, 1, 1});
  setInt(conv, "group", 1);
  setString(conv, "auto_pad", "NOTSET");
  setFloats(conv, "made_up_floats", {0.5f});
  setFloat(conv, "made_up_float", 2.0f);
  onnx::AttributeProto *strings = conv.add_attribute();
  strings->set_name("made_up_strings");
  strings->set_type(onnx::AttributeProto::STRINGS);
  strings->add_strings("a");
  strings->add_strings("b");
  m.output("y");
  auto graph = m.import("attrs.onnx");
  const Node *node = onlyNode(*graph, "Conv");
  CHECK(node->attrs.getInts("pads") == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(node->attrs.getInt("group", 0) == 1);
  CHECK(node->attrs.getString("auto_pad", "") == "NOTSET");
  CHECK(node->attrs.getFloats("made_up_floats") == std::vector<float>{0.5f});
  CHECK(node->attrs.getFloat("made_up_float", 0) == 2.0f);
  REQUIRE(node->attrs.find("made_up_strings"));
  CHECK(node->attrs.find("made_up_strings")->strings == std::vector<std::string>{"a", "b"});
  CHECK(node->inputs.size() == 2); // No bias: nothing appended.
}

TEST_CASE("omitted optional operands are nullptr, trailing ones dropped") {
  TestModel m(13);
  m.input("x", {4});
  m.floatInit("hi", {}, {6.0f});
  m.node("Clip", {"x", "", "hi"}, {"a"}, "clip_max");
  m.node("Clip", {"a", "", ""}, {"b"}, "clip_none");
  m.output("b");
  auto graph = m.import("omitted.onnx");
  const Node *clipMax = graph->findNode("clip_max");
  REQUIRE(clipMax->inputs.size() == 3);
  CHECK(clipMax->inputs[1] == nullptr);
  CHECK(clipMax->inputs[2] == graph->findValue("hi"));
  CHECK(graph->findNode("clip_none")->inputs.size() == 1);
}

TEST_CASE("outputs that are inputs or constants get an Identity node") {
  TestModel m(13);
  m.input("x", {2});
  m.floatInit("k", {2}, {1, 2});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  m.output("x");
  m.output("k");
  auto graph = m.import("identity_outputs.onnx");
  REQUIRE(graph->outputs().size() == 3);
  CHECK(graph->outputs()[0]->name == "y");
  for (const Value *output : graph->outputs()) {
    REQUIRE(output->producer != nullptr);
    CHECK(output->isGraphOutput);
  }
  const Value *passthrough = graph->outputs()[1];
  CHECK(passthrough->producer->opType == "Identity");
  CHECK(passthrough->producer->inputs[0] == graph->findValue("x"));
  const Value *constantOut = graph->outputs()[2];
  CHECK(constantOut->name == "k"); // The output keeps its ONNX name.
  CHECK(constantOut->producer->opType == "Identity");
  CHECK(constantOut->producer->inputs[0]->isConstant());
  CHECK(constantOut->producer->inputs[0]->name == "k_value");
  graph->verify();
}

TEST_CASE("nodes out of order are imported in topological order") {
  TestModel m(13);
  m.input("x", {2});
  m.node("Sigmoid", {"a"}, {"b"}, "second");
  m.node("Relu", {"x"}, {"a"}, "first");
  m.output("b");
  auto graph = m.import("unordered.onnx");
  std::vector<Node *> nodes = graph->nodes();
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0]->name == "first");
  CHECK(nodes[1]->name == "second");
  graph->verify();
}

TEST_CASE("every unsupported operator is listed in one error") {
  TestModel m(13);
  m.input("x", {1, 2, 3});
  m.node("Einsum", {"x"}, {"y1"}, "einsum_1");
  m.node("NonMaxSuppression", {"x", "x"}, {"s1"}, "nms");
  m.node("NonMaxSuppression", {"x", "x"}, {"s2"}, "nms_2");
  m.output("y1");
  m.output("s1");
  m.output("s2");
  std::string path = m.save("unsupported.onnx");
  auto [code, message] = errorOf([&] { importOnnxModel(path); });
  CHECK(code == ExitCode::Unsupported);
  CHECK(message == path + ": 3 unsupported operators: Einsum (node 'einsum_1'), "
                          "NonMaxSuppression (nodes 'nms', 'nms_2')");
  // The same operators as data, for callers that group models by them (the
  // conformance harness's skip table).
  std::vector<std::string> ops;
  try {
    importOnnxModel(path);
  } catch (const UnsupportedOperatorsError &error) {
    ops = error.ops();
  }
  CHECK(ops == std::vector<std::string>{"Einsum", "NonMaxSuppression"});
}

TEST_CASE("operators of other domains are unsupported, with their domain") {
  TestModel m(13);
  onnx::OperatorSetIdProto *ms = m.model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  m.input("x", {4});
  onnx::NodeProto &fused = m.node("FusedConv", {"x"}, {"y"}, "fc");
  fused.set_domain("com.microsoft");
  onnx::AttributeProto *graphAttr = fused.add_attribute(); // Ignored, not fatal.
  graphAttr->set_name("body");
  graphAttr->set_type(onnx::AttributeProto::GRAPH);
  m.node("Relu", {"y"}, {"z"}, "relu"); // Supported or not, depending on the registry.
  m.output("z");
  std::string path = m.save("foreign.onnx");
  auto [code, message] = errorOf([&] { importOnnxModel(path); });
  CHECK(code == ExitCode::Unsupported);
  if (OpRegistry::get().find("Relu"))
    CHECK(message == path + ": 1 unsupported operator: com.microsoft.FusedConv (node 'fc')");
  else
    CHECK(message == path + ": 2 unsupported operators: Relu (node 'relu'), "
                            "com.microsoft.FusedConv (node 'fc')");

  auto graph = m.import("foreign.onnx"); // Without the check: kept, domain-qualified.
  CHECK(onlyNode(*graph, "com.microsoft.FusedConv")->name == "fc");
}

TEST_CASE("long lists of unsupported nodes are shortened") {
  TestModel m(13);
  m.input("x", {4});
  std::string previous = "x";
  for (int i = 0; i < 6; ++i) {
    std::string out = "t" + std::to_string(i);
    m.node("Einsum", {previous}, {out}, "einsum_" + std::to_string(i));
    previous = out;
  }
  m.output(previous);
  std::string path = m.save("many.onnx");
  CHECK(errorOf([&] { importOnnxModel(path); }).second ==
        path + ": 6 unsupported operators: Einsum (nodes 'einsum_0', 'einsum_1', "
               "'einsum_2', 'einsum_3' and 2 more)");
}

TEST_CASE("models whose operators are all registered import with the check on") {
  TestModel m(13);
  m.input("x", {1, 4});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  std::string path = m.save("supported.onnx");
  if (OpRegistry::get().find("Relu")) {
    auto graph = importOnnxModel(path);
    CHECK(graph->numNodes() == 1);
    CHECK(graph->name == "test_graph");
  } else {
    CHECK(errorOf([&] { importOnnxModel(path); }).second ==
          path + ": 1 unsupported operator: Relu (node 'relu')");
  }
}

TEST_CASE("ConstantOfShape keeps its fill value as attributes value and value_dtype") {
  TestModel m(13);
  m.int64Init("shape", {2}, {2, 3});
  onnx::NodeProto &ones = m.node("ConstantOfShape", {"shape"}, {"ones"}, "ones");
  onnx::TensorProto &value = setTensor(ones, "value");
  value.set_data_type(onnx::TensorProto::INT64);
  value.add_dims(1);
  value.add_int64_data(1);
  m.node("ConstantOfShape", {"shape"}, {"zeros"}, "zeros");
  m.output("ones");
  m.output("zeros");
  auto graph = m.import("constantofshape.onnx");
  const Node *onesNode = graph->findNode("ones");
  CHECK(onesNode->attrs.getFloat("value", -1) == 1.0f);
  CHECK(onesNode->attrs.getInt("value_dtype", -1) == int(DType::Int64));
  const Node *zerosNode = graph->findNode("zeros");
  CHECK(zerosNode->attrs.getFloat("value", -1) == 0.0f);
  CHECK(zerosNode->attrs.getInt("value_dtype", -1) == int(DType::Float32));
}

TEST_CASE("a real backend-test model imports with its initializer-free inputs" *
          doctest::test_suite("needs_onnx_testdata")) {
  std::string path = testData("node/test_conv_with_strides_padding/model.onnx");
  if (path.empty())
    BUNDLEFIT_SKIP_TEST("libonnx-testdata is not installed");
  ImportOptions options;
  options.rejectUnsupportedOps = false;
  auto graph = importOnnxModel(path, options);
  REQUIRE(graph->inputs().size() == 2);
  CHECK(graph->inputs()[0]->type.str() == "float32[1,1,7,5]");
  const Node *conv = onlyNode(*graph, "Conv");
  CHECK(conv->attrs.getInts("strides") == std::vector<int64_t>{2, 2});
  CHECK(conv->inputs.size() == 2);
  REQUIRE(graph->outputs().size() == 1);
  CHECK(graph->outputs()[0] == conv->output(0));
}
