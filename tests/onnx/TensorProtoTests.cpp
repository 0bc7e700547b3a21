// loadTensorProtoFile: the backend test data's input_N.pb / output_N.pb.
#include "TestModel.h"

#include "SkipTest.h"
#include <doctest/doctest.h>

using namespace bundlefit;
using namespace bundlefit::testing;

TEST_CASE("a backend test-data TensorProto loads with its name" *
          doctest::test_suite("needs_onnx_testdata")) {
  std::string path = testData("node/test_conv_with_strides_padding/test_data_set_0/input_0.pb");
  if (path.empty())
    BUNDLEFIT_SKIP_TEST("libonnx-testdata is not installed");
  std::string name;
  Tensor tensor = loadTensorProtoFile(path, &name);
  CHECK(name == "x");
  CHECK(tensor.type.str() == "float32[1,1,7,5]");
  REQUIRE(tensor.bytes.size() == 35 * sizeof(float));
  for (int i = 0; i < 35; ++i) // The test input is 0, 1, ..., 34.
    CHECK(tensor.data<float>()[i] == float(i));

  Tensor output = loadTensorProtoFile(
      testData("node/test_conv_with_strides_padding/test_data_set_0/output_0.pb"));
  CHECK(output.type.str() == "float32[1,1,4,3]");
}

TEST_CASE("TensorProto files we write round-trip, typed fields and all") {
  onnx::TensorProto proto;
  proto.set_name("ids");
  proto.set_data_type(onnx::TensorProto::INT64);
  proto.add_dims(3);
  for (int64_t v : {5, -6, 7})
    proto.add_int64_data(v);
  std::string bytes;
  REQUIRE(proto.SerializeToString(&bytes));
  std::string name;
  Tensor tensor = loadTensorProtoFile(writeFile("ids.pb", bytes), &name);
  CHECK(name == "ids");
  CHECK(tensor.type.str() == "int64[3]");
  CHECK(tensor.data<int64_t>()[1] == -6);
}

TEST_CASE("a file that is not a TensorProto is a bad input file") {
  std::string path = writeFile("garbage.pb", "this is text, not a tensor\n");
  auto [code, message] = errorOf([&] { loadTensorProtoFile(path); });
  CHECK(code == ExitCode::BadInputFile);
  CHECK(message.rfind(path + ": ", 0) == 0);
  CHECK(errorOf([] { loadTensorProtoFile("/nonexistent/input_0.pb"); }).second ==
        "/nonexistent/input_0.pb: no such file");
}
