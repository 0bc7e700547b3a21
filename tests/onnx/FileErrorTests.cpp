// Files the importer must refuse with one line naming the file.
#include "TestModel.h"

#include <doctest/doctest.h>

using namespace bundlefit;
using namespace bundlefit::testing;

namespace {

TestModel reluModel(int64_t opset = 13) {
  TestModel m(opset);
  m.input("x", {1, 4});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  return m;
}

bool startsWith(const std::string &text, const std::string &prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

} // namespace

TEST_CASE("a missing file is a bad input file naming the path") {
  auto [code, message] = errorOf([] { importOnnxModel("/nonexistent/model.onnx"); });
  CHECK(code == ExitCode::BadInputFile);
  CHECK(message == "/nonexistent/model.onnx: no such file");
}

TEST_CASE("a directory is not a model") {
  std::string dir = tempPath("");
  auto [code, message] = errorOf([&] { importOnnxModel(dir); });
  CHECK(code == ExitCode::BadInputFile);
  CHECK(message.find("is a directory") != std::string::npos);
}

TEST_CASE("a text file is refused as not an ONNX model") {
  std::string path = writeFile("notes.onnx", "this is not a model, just some notes\n");
  auto [code, message] = errorOf([&] { importOnnxModel(path); });
  CHECK(code == ExitCode::BadInputFile);
  CHECK(startsWith(message, path + ": is not an ONNX model"));
  CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("an empty file and other formats are named") {
  std::string empty = writeFile("empty.onnx", "");
  CHECK(errorOf([&] { importOnnxModel(empty); }).second == empty + ": is empty, not an ONNX model");

  std::string tflite = writeFile("model.tflite", std::string("\x1c\0\0\0TFL3\0\0", 10));
  auto [code, message] = errorOf([&] { importOnnxModel(tflite); });
  CHECK(code == ExitCode::BadInputFile);
  CHECK(message == tflite + ": is a TensorFlow Lite model, not an ONNX model");

  std::string zip = writeFile("model.pt", "PK\x03\x04rest of a zip");
  CHECK(errorOf([&] { importOnnxModel(zip); }).second.find("zip archive") != std::string::npos);
}

TEST_CASE("a truncated model is a bad input file") {
  // Half of a real model when the test data is installed, else of our own.
  std::string source = testData("node/test_conv_with_strides_padding/model.onnx");
  std::string bytes;
  if (source.empty()) {
    TestModel m = reluModel();
    m.floatInit("w", {64, 64}, std::vector<float>(64 * 64, 1.0f));
    bytes = readFile(m.save("whole.onnx"));
  } else {
    bytes = readFile(source);
  }
  REQUIRE(bytes.size() > 100);
  std::string path = writeFile("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  auto [code, message] = errorOf([&] { importOnnxModel(path); });
  CHECK(code == ExitCode::BadInputFile);
  CHECK(startsWith(message, path + ": "));
  CHECK(message.find("truncated") != std::string::npos);
}

TEST_CASE("a model without a graph or outputs is refused") {
  onnx::ModelProto noGraph;
  noGraph.set_ir_version(7);
  std::string bytes;
  REQUIRE(noGraph.SerializeToString(&bytes));
  std::string path = writeFile("nograph.onnx", bytes);
  auto [code, message] = errorOf([&] { importOnnxModel(path); });
  CHECK(code == ExitCode::BadInputFile);
  CHECK(message.find("no ir_version or graph") != std::string::npos);

  TestModel noOutputs = reluModel();
  noOutputs.graph().clear_output();
  std::string path2 = noOutputs.save("nooutputs.onnx");
  CHECK(errorOf([&] { importOnnxModel(path2); }).second ==
        path2 + ": the ONNX graph has no outputs (truncated file?)");
}

TEST_CASE("external data is refused naming the tensor") {
  TestModel m = reluModel();
  onnx::TensorProto *weight = m.graph().add_initializer();
  weight->set_name("big_weight");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  weight->add_dims(1000);
  weight->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto *location = weight->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  std::string path = m.save("external.onnx");
  auto [code, message] = errorOf([&] { importOnnxModel(path); });
  CHECK(code == ExitCode::BadInputFile);
  CHECK(
      startsWith(message, path + ": initializer 'big_weight' keeps its data in an external file"));
}

TEST_CASE("external data inside a Constant node is refused too") {
  TestModel m(13);
  onnx::NodeProto &constant = m.node("Constant", {}, {"c"}, "const0");
  onnx::TensorProto &value = setTensor(constant, "value");
  value.set_data_type(onnx::TensorProto::FLOAT);
  value.set_data_location(onnx::TensorProto::EXTERNAL);
  m.output("c");
  std::string path = m.save("external_constant.onnx");
  auto [code, message] = errorOf([&] { importOnnxModel(path); });
  CHECK(code == ExitCode::BadInputFile);
  CHECK(message.find("attribute 'value' of node 'const0' (Constant)") != std::string::npos);
}

TEST_CASE("opsets newer than 21 and missing opsets are reported") {
  CHECK(reluModel(21).import("opset21.onnx")->numNodes() == 1);
  TestModel newer = reluModel(22);
  std::string path = newer.save("opset22.onnx");
  auto [code, message] = errorOf([&] { importOnnxModel(path); });
  CHECK(code == ExitCode::Unsupported);
  CHECK(message == path + ": the model uses ONNX opset 22; bundlefit imports opsets 1..21: the "
                          "operator changes of opset 22 and newer are not implemented (re-export "
                          "with opset_version=21)");

  TestModel older = reluModel(1);
  CHECK(older.import("opset1.onnx")->numNodes() == 1);

  TestModel none = reluModel();
  none.model.clear_opset_import();
  auto [code2, message2] = errorOf([&] { none.import("noopset.onnx"); });
  CHECK(code2 == ExitCode::BadInputFile);
  CHECK(message2.find("imports no ONNX operator set") != std::string::npos);

  TestModel aiOnnx(11, "ai.onnx");
  aiOnnx.input("x", {2});
  aiOnnx.node("Relu", {"x"}, {"y"});
  aiOnnx.output("y");
  CHECK(aiOnnx.import("aionnx.onnx")->numNodes() == 1);
}

TEST_CASE("a node reading an undefined value is a bad input file") {
  TestModel m(13);
  m.input("x", {2});
  m.node("Add", {"x", "ghost"}, {"y"}, "add");
  m.output("y");
  std::string path = m.save("undefined.onnx");
  auto [code, message] = errorOf([&] { importOnnxModel(path); });
  CHECK(code == ExitCode::BadInputFile);
  CHECK(message == path + ": node 'add' (Add) reads 'ghost', which no node, graph input or "
                          "initializer defines");
}

TEST_CASE("a graph output nothing computes is a bad input file") {
  TestModel m = reluModel();
  m.output("nowhere");
  std::string path = m.save("nooutput.onnx");
  CHECK(errorOf([&] { importOnnxModel(path, {}); }).second ==
        path + ": graph output 'nowhere' is computed by no node");
}

TEST_CASE("a cycle is a bad input file") {
  TestModel m(13);
  m.input("x", {2});
  m.node("Add", {"x", "b"}, {"a"}, "first");
  m.node("Relu", {"a"}, {"b"}, "second");
  m.output("b");
  auto [code, message] = errorOf([&] { m.import("cycle.onnx"); });
  CHECK(code == ExitCode::BadInputFile);
  CHECK(message.find("cycle through node 'first' (Add)") != std::string::npos);
}

TEST_CASE("opset-21 QuantizeLinear: output_dtype gives the zero point, block_size is refused") {
  TestModel typed(21);
  typed.input("x", {1, 4});
  typed.floatInit("s", {}, {0.5f});
  setInt(typed.node("QuantizeLinear", {"x", "s"}, {"q"}, "quant"), "output_dtype", 3); // INT8
  typed.node("DequantizeLinear", {"q", "s"}, {"y"}, "dequant");
  typed.output("y");
  std::unique_ptr<Graph> graph = typed.import("q21.onnx");
  const Node *quant = graph->findNode("quant");
  REQUIRE(quant);
  REQUIRE(quant->input(2));
  CHECK(quant->input(2)->type.str() == "int8[]");
  CHECK(!quant->attrs.has("output_dtype"));

  TestModel blocked(21);
  blocked.input("x", {1, 4});
  blocked.floatInit("s", {2}, {0.5f, 0.25f});
  setInt(blocked.node("QuantizeLinear", {"x", "s"}, {"y"}, "quant"), "block_size", 2);
  blocked.output("y");
  std::string path = blocked.save("blocked.onnx");
  auto [code, message] = errorOf([&] { importOnnxModel(path); });
  CHECK(code == ExitCode::Unsupported);
  CHECK(message == path + ": node 'quant' (QuantizeLinear): block_size=2 (blocked quantization, "
                          "opset 21) is not supported; quantize per tensor or per axis");
}
