// Inputs made to break bundlefit (issue 16): sizes that overflow, numbers that
// do not fit, output paths that are not regular files, names that collide in
// C. Each was a crash, an internal error or a plausible wrong answer before;
// each must now be a one-line error with the documented exit code, or the
// right result.
#include "SkipTest.h"
#include "TestModel.h"
#include "ToolRun.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace fs = std::filesystem;
using bundlefit::testing::TestModel;
using namespace bundlefit::badinput;

namespace {

constexpr int64_t k2To62 = int64_t(1) << 62;

/// A float32 .npy (v1.0) with the given header shape text and data.
void writeNpy(const fs::path &path, const std::string &shapeText, const std::vector<float> &data) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shapeText + ", }";
  header.resize(128 - 10 - 1, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out << std::string("\x93NUMPY\x01\x00", 8) << char(header.size() & 255)
      << char(header.size() >> 8) << header;
  out.write(reinterpret_cast<const char *>(data.data()), std::streamsize(data.size() * 4));
}

/// The float data of a .npy file written by bundlefit (header skipped).
std::vector<float> readNpyFloats(const fs::path &path) {
  std::string bytes = slurp(path);
  REQUIRE(bytes.size() >= 10);
  size_t start = 10 + (uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8));
  std::vector<float> values((bytes.size() - start) / 4);
  std::memcpy(values.data(), bytes.data() + start, values.size() * 4);
  return values;
}

/// x[1,4] -> Relu for every name in `outputs`.
std::string reluModel(const std::string &file, const std::vector<std::string> &outputs) {
  TestModel m;
  m.input("x", {1, 4});
  for (const std::string &output : outputs) {
    m.node("Relu", {"x"}, {output}, "relu_" + output);
    m.output(output);
  }
  return m.save(file);
}

bool isSymlink(const fs::path &path) { return fs::is_symlink(fs::symlink_status(path)); }

} // namespace

TEST_CASE("ConstantOfShape of [2^31, 2^31]: exit 4 naming the model and the node") {
  TestModel m;
  m.int64Init("shape", {2}, {int64_t(1) << 31, int64_t(1) << 31});
  m.node("ConstantOfShape", {"shape"}, {"filled"}, "huge_fill");
  m.output("filled");
  std::string model = m.save("huge_fill.onnx");
  checkFailure(runTool("plan " + q(model)), 4, {model, "'huge_fill'", "'filled'"});
}

TEST_CASE("element and byte counts that overflow: exit 4 naming the model and the tensor") {
  TestModel wide;
  wide.input("x", {INT64_MAX, 2});
  wide.node("Relu", {"x"}, {"y"}, "relu");
  wide.output("y");
  std::string wideModel = wide.save("wide.onnx");
  checkFailure(runTool("fit " + q(wideModel) + " --device rt1062"), 4, {wideModel, "'x'"});

  // An initializer that claims 2^62 floats and holds none (wrapped to 0 bytes
  // before), and one that claims 2^40 floats with 4 bytes (bad_alloc before).
  for (int64_t claimed : {k2To62, int64_t(1) << 40}) {
    CAPTURE(claimed);
    TestModel m;
    m.input("x", {1, 4});
    m.floatInit("w", {claimed}, claimed == k2To62 ? std::vector<float>{} : std::vector<float>{1});
    m.node("Relu", {"x"}, {"y"}, "relu");
    m.output("y");
    std::string model = m.save("claims.onnx");
    checkFailure(runTool("plan " + q(model)), 4, {model, "initializer 'w'"});
  }
  // Claimed and held sizes differ below the limit: refused before allocating.
  TestModel m;
  m.input("x", {1, 4});
  m.floatInit("w", {int64_t(1) << 29}, {1});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  std::string model = m.save("short.onnx");
  checkFailure(runTool("plan " + q(model)), 4, {model, "initializer 'w'", "raw_data holds 1"});
}

TEST_CASE("huge --define-symbol and --model-input dims are refused") {
  TestModel m;
  m.input("x", {-1, 4}, onnx::TensorProto::FLOAT, {"N", ""});
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  std::string model = m.save("symbolic.onnx");
  checkFailure(runTool("plan " + q(model) + " --define-symbol N=" + std::to_string(k2To62)), 4,
               {model, "'x'", "--define-symbol"});
  checkFailure(
      runTool("plan " + q(model) + " --model-input 'x,float,[" + std::to_string(k2To62) + ",4]'"),
      2, {"--model-input", "'x'", model});
  // Still fine at a size a part could hold.
  CHECK(runTool("-q plan " + q(model) + " --define-symbol N=16").exitCode == 0);
}

TEST_CASE("a Slice step of -2^62 compiles and picks the right element") {
  TestModel m;
  m.input("x", {1, 8});
  m.int64Init("starts", {1}, {7});
  m.int64Init("ends", {1}, {INT64_MIN});
  m.int64Init("axes", {1}, {1});
  m.int64Init("steps", {1}, {-k2To62});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "far_step");
  m.output("y");
  std::string model = m.save("far_step.onnx");
  fs::path dir = scratch("far_step");
  writeNpy(dir / "x.npy", "(1, 8)", {0, 1, 2, 3, 4, 5, 6, 7.5f});
  Outcome o = runTool("-q run " + q(model) + " --input " + q(dir / "x.npy") + " --output-dir " +
                      q(dir / "out"));
  INFO(o.err);
  REQUIRE(o.exitCode == 0);
  CHECK(readNpyFloats(dir / "out" / "y.npy") == std::vector<float>{7.5f});
}

TEST_CASE(".npy files with a negative, non-numeric or huge dimension: exit 4 naming the file") {
  std::string model = reluModel("relu.onnx", {"y"});
  fs::path dir = scratch("npy_dims");
  for (const char *shape : {"(1, -4)", "(1, four)", "(4611686018427387904, 4)"}) {
    CAPTURE(shape);
    fs::path npy = dir / "x.npy";
    writeNpy(npy, shape, {1, 2, 3, 4});
    checkFailure(
        runTool("-q run " + q(model) + " --input " + q(npy) + " --output-dir " + q(dir / "out")), 4,
        {npy.string()});
  }
}

TEST_CASE("device files with numbers that do not fit: exit 4 naming the file and the field") {
  std::string model = reluModel("relu.onnx", {"y"});
  fs::path dir = scratch("device_numbers");
  nlohmann::json base =
      nlohmann::json::parse(slurp(fs::path(BUNDLEFIT_SOURCE_DIR) / "device_db/parts/rt1062.json"));
  base["id"] = "hostile";
  base.erase("aliases");
  REQUIRE(base.contains("flexram"));
  // Each case: a JSON path, the number as written in the file, what the
  // error must name.
  struct Case {
    nlohmann::json::json_pointer where;
    std::string number, field;
  };
  const Case cases[] = {
      {nlohmann::json::json_pointer("/memory/0/size"), "18446744073709551616", "size"},
      {nlohmann::json::json_pointer("/memory/0/size"), "1.5e300", "size"},
      {nlohmann::json::json_pointer("/memory/0/size"), "1e999", "1e999"},
      {nlohmann::json::json_pointer("/sdk_baseline/ram"), "18446744073709551615",
       "sdk_baseline.ram"},
      {nlohmann::json::json_pointer("/flexram/banks"), "4096", "flexram.banks"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.number);
    nlohmann::json doc = base;
    doc[c.where] = 123456789012345; // a marker replaced by the raw number text
    std::string text = doc.dump(2);
    text.replace(text.find("123456789012345"), 15, c.number);
    fs::path file = dir / "hostile.json";
    std::ofstream(file) << text;
    Outcome o = runTool("fit " + q(model) + " --device hostile --device-file " + q(file));
    INFO(o.err);
    CHECK(o.exitCode == 4);
    REQUIRE_FALSE(o.errLines.empty());
    CHECK(o.errLines[0].rfind("bundlefit: error: " + file.string() + ": ", 0) == 0);
    CHECK(o.err.find(c.field) != std::string::npos);
    CHECK(o.out.empty());
  }
}

TEST_CASE("stdout that cannot be written: exit 6, not 0" * doctest::test_suite("needs_dev_full")) {
  if (!fs::exists("/dev/full"))
    BUNDLEFIT_SKIP_TEST("no /dev/full here");
  std::string model = reluModel("relu.onnx", {"y"});
  Outcome o = runTool("plan " + q(model), "/dev/full");
  INFO("stderr: " << o.err);
  CHECK(o.exitCode == 6);
  REQUIRE(o.errLines.size() == 1);
  CHECK(o.errLines[0].find("standard output") != std::string::npos);
}

TEST_CASE("report targets that are links, FIFOs or devices are refused and left alone") {
  std::string model = reluModel("relu.onnx", {"y"});
  fs::path dir = scratch("special_targets");
  fs::path real = dir / "real.json";
  std::ofstream(real) << "keep me\n";
  fs::path link = dir / "link.json";
  fs::create_symlink(real, link);
  checkFailure(runTool("-q plan " + q(model) + " --json " + q(link)), 6,
               {link.string(), "symbolic link"});
  CHECK(isSymlink(link));
  CHECK(slurp(real) == "keep me\n");

  fs::path fifo = dir / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  checkFailure(runTool("-q plan " + q(model) + " --json " + q(fifo)), 6, {fifo.string(), "FIFO"});
  CHECK(fs::is_fifo(fs::symlink_status(fifo)));

  checkFailure(runTool("-q plan " + q(model) + " --json /dev/null"), 6, {"/dev/null", "device"});
  CHECK(fs::is_character_file(fs::symlink_status("/dev/null")));

  // A bundle directory given as a symbolic link is not replaced either.
  fs::create_directories(dir / "real_bundle");
  fs::create_directory_symlink(dir / "real_bundle", dir / "bundle_link");
  checkFailure(runTool("-q compile " + q(model) + " -o " + q(dir / "bundle_link")), 6,
               {(dir / "bundle_link").string(), "symbolic link"});
  CHECK(isSymlink(dir / "bundle_link"));
  CHECK(fs::is_empty(dir / "real_bundle"));
}

TEST_CASE("a 32-bit target refuses a bundle of 4 GiB or more") {
  TestModel m;
  m.input("x", {1, int64_t(1) << 30}); // 4 GiB of float input
  m.node("Relu", {"x"}, {"y"}, "relu");
  m.output("y");
  std::string model = m.save("four_gib.onnx");
  fs::path out = scratch("four_gib") / "bundle";
  checkFailure(runTool("-q compile " + q(model) + " --target cortex-m7 -o " + q(out)), 3,
               {model, "4 GiB", "thumbv7em"});
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("C names that collide after sanitising stay unique, and the header compiles") {
  std::string model =
      reluModel("collide.onnx", {"a.b", "a_b", "1x", "_1x", "MUTABLE_MEM_SIZE", "int"});
  fs::path dir = scratch("collide");
  for (const std::string network : {"int", "uint8_t", "GLOW_SUCCESS", "main"}) {
    CAPTURE(network);
    fs::path out = dir / network;
    Outcome o = runTool("-q compile " + q(model) + " --target host --network-name " + network +
                        " -o " + q(out));
    INFO(o.err);
    REQUIRE(o.exitCode == 0);
    const std::string header = (out / (network + "_.h")).string();
    REQUIRE(fs::exists(header));
    std::set<std::string> defined;
    std::ifstream in(header);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("#define ", 0) == 0) {
        std::string name = line.substr(8, line.find_first_of(" (", 8) - 8);
        CHECK_MESSAGE(defined.insert(name).second, "defined twice: " << name);
      }
    for (const char *compiler : {"cc -x c", "c++ -x c++"}) {
      CAPTURE(compiler);
      std::string command = std::string(compiler) + " -fsyntax-only -Wall -Werror " + q(header) +
                            " 2>" + q(dir / "cc.txt");
      CHECK_MESSAGE(std::system(command.c_str()) == 0, slurp(dir / "cc.txt"));
    }
  }
  std::string header = slurp(dir / "int" / "int_.h");
  CHECK(header.find("#define INT__a_b ") != std::string::npos);
  CHECK(header.find("#define INT__a_b_1 ") != std::string::npos);
  CHECK(header.find("#define INT___1x ") != std::string::npos);
  CHECK(header.find("#define INT___1x_1 ") != std::string::npos);
  CHECK(header.find("#define INT__MUTABLE_MEM_SIZE_1 ") != std::string::npos);
  CHECK(header.find("int int_(uint8_t *constantWeight") != std::string::npos);
}

TEST_CASE("run writes one .npy per output even when their names collide") {
  std::string model = reluModel("two_outputs.onnx", {"a.b", "a-b"});
  fs::path dir = scratch("run_collide");
  writeNpy(dir / "x.npy", "(1, 4)", {-1, 2, -3, 4});
  Outcome o = runTool("-q run " + q(model) + " --input " + q(dir / "x.npy") + " --output-dir " +
                      q(dir / "out"));
  INFO(o.err);
  REQUIRE(o.exitCode == 0);
  CHECK(readNpyFloats(dir / "out" / "a_b.npy") == std::vector<float>{0, 2, 0, 4});
  CHECK(readNpyFloats(dir / "out" / "a_b_1.npy") == std::vector<float>{0, 2, 0, 4});
}
