// End-to-end: `bundlefit compile` and `model-compiler` write a complete,
// Glow-compatible bundle, and nothing at all when they fail.
#include "CliTestSupport.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace bundlefit::test;
namespace fs = std::filesystem;

static std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

/// Parses weights.txt (" 0X12, 0XAB,...") back into bytes.
static std::string parseWeightsText(const std::string &text) {
  std::string bytes;
  for (size_t at = text.find("0X"); at != std::string::npos; at = text.find("0X", at + 2))
    bytes += char(std::stoi(text.substr(at + 2, 2), nullptr, 16));
  return bytes;
}

static fs::path freshDir(const std::string &name) {
  fs::path dir = fs::path(BUNDLEFIT_TEST_TMP) / name;
  fs::remove_all(dir);
  return dir;
}

TEST_CASE("compile writes the five bundle files with Glow's sizes and conventions") {
  fs::path dir = freshDir("lenet_bundle");
  CommandResult result = runBundlefit("compile " + modelPath("lenet") + " -o " + dir.string() +
                                      " --network-name lenet_mnist");
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  for (const char *suffix : {".o", ".h", ".weights.bin", ".weights.txt", ".memory.json"})
    CHECK_MESSAGE(fs::exists(dir / (std::string("lenet_mnist") + suffix)), suffix);

  // CONSTANT 1,724,608 (the eight 64-aligned weights), MUTABLE 3,200 (data's 784 floats = 3,136 at
  // 0, softmax's 10 floats at 3,136, padded to 64): LeNet by hand: tests/models/README.md.
  std::string header = readFile(dir / "lenet_mnist.h");
  CHECK(header.find("#define LENET_MNIST_CONSTANT_MEM_SIZE     1724608") != std::string::npos);
  CHECK(header.find("#define LENET_MNIST_MUTABLE_MEM_SIZE      3200") != std::string::npos);
  CHECK(header.find("#define LENET_MNIST_data     0") != std::string::npos);
  CHECK(header.find("#define LENET_MNIST_softmax  3136") != std::string::npos);
  CHECK(header.find("#define LENET_MNIST_MEM_ALIGN  64") != std::string::npos);
  CHECK(header.find("int lenet_mnist(uint8_t *constantWeight, uint8_t *mutableWeight, "
                    "uint8_t *activations);") != std::string::npos);

  std::string weights = readFile(dir / "lenet_mnist.weights.bin");
  CHECK(weights.size() == 1724608);
  std::string text = readFile(dir / "lenet_mnist.weights.txt");
  CHECK(parseWeightsText(text) == weights);
  CHECK(text.substr(0, 6) == " 0X" + text.substr(3, 2) + ",");
  CHECK(text.find('\n') == 20 * 6); // 20 bytes per line

  nlohmann::json report = nlohmann::json::parse(readFile(dir / "lenet_mnist.memory.json"));
  CHECK(report["sizes"]["constant"] == 1724608);
  CHECK(report["code_size"]["text"].get<uint64_t>() > 0);
}

TEST_CASE("the header compiles as C11 and C++17 with -Wall -Werror") {
  fs::path dir = freshDir("header_check");
  REQUIRE(runBundlefit("compile " + modelPath("lenet") + " -o " + dir.string()).exitCode == 0);
  std::string use =
      "#include \"lenet.h\"\n"
      "GLOW_MEM_ALIGN(LENET_MEM_ALIGN) uint8_t mutableWeight[LENET_MUTABLE_MEM_SIZE];\n"
      "float *output(void) { return (float *)GLOW_GET_ADDR(mutableWeight, LENET_softmax); }\n"
      "int run(uint8_t *c, uint8_t *a) { return lenet(c, mutableWeight, a); }\n";
  std::ofstream(dir / "use.c") << use;
  std::ofstream(dir / "use.cpp") << use;
  std::string dirText = dir.string();
  CHECK(std::system(
            ("cc -std=c11 -Wall -Wextra -Werror -pedantic -c -o /dev/null " + dirText + "/use.c")
                .c_str()) == 0);
  CHECK(std::system(("c++ -std=c++17 -Wall -Wextra -Werror -c -o /dev/null " + dirText + "/use.cpp")
                        .c_str()) == 0);
}

TEST_CASE("model-compiler accepts Glow's single-dash command line") {
  fs::path dir = freshDir("glow_cli");
  std::string command =
      std::string(MODEL_COMPILER_EXE) + " -backend=CPU -model=" + modelPath("lenet") +
      " -emit-bundle=" + dir.string() +
      " -target=arm -mcpu=cortex-m7 -float-abi=hard -network-name=lenet_mnist 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  CHECK(fs::file_size(dir / "lenet_mnist.weights.bin") == 1724608); // CONSTANT, as above
  std::string object = readFile(dir / "lenet_mnist.o");
  REQUIRE(object.size() > 20);
  CHECK(object.substr(1, 3) == "ELF");
  CHECK(uint8_t(object[4]) == 1);   // ELFCLASS32: a Cortex-M object
  CHECK(uint8_t(object[18]) == 40); // EM_ARM
  // Glow's layout unless asked: a drop-in keeps Glow's ACTIVATIONS.
  auto activations = [&](const std::string &extra) {
    fs::path out = freshDir("glow_cli_memory_opt");
    std::string run = std::string(MODEL_COMPILER_EXE) +
                      " -backend=CPU -model=" + modelPath("lenet") +
                      " -emit-bundle=" + out.string() + extra + " 2>&1";
    REQUIRE(std::system(run.c_str()) == 0);
    return nlohmann::json::parse(readFile(out / "lenet.memory.json"))["sizes"]["activations"];
  };
  // By hand: conv1's output 20x24x24 floats and pool1's 20x12x12 live
  // together at level 0 (46,080 + 11,520). At level 2 conv2+pool2 runs as one
  // ConvPool step: pool1's 11,520, its output 50x4x4 floats (3,200) and a
  // scratch row of 8 channels x 8 columns (256).
  CHECK(activations("") == 46080 + 11520);                    // 57,600
  CHECK(activations(" -memory-opt=2") == 11520 + 3200 + 256); // 14,976
}

TEST_CASE("a failed compile leaves no bundle behind") {
  fs::path dir = freshDir("failed_bundle");
  CommandResult badTarget = runBundlefit("compile " + modelPath("lenet") + " -o " + dir.string() +
                                         " --target cortex-z99");
  CHECK(badTarget.exitCode == 2);
  CHECK(badTarget.output.find("cortex-z99") != std::string::npos);
  CHECK_FALSE(fs::exists(dir));

  CommandResult unwritable = runBundlefit("compile " + modelPath("lenet") + " -o /proc/bundle");
  CHECK(unwritable.exitCode == 6);
  CHECK(unwritable.output.find("/proc/bundle") != std::string::npos);
}

TEST_CASE("the dynamic bundle API exports <net>_config with sizes and a symbol table") {
  fs::path dir = freshDir("dynamic_api");
  CommandResult result = runBundlefit("compile " + modelPath("lenet") + " -o " + dir.string() +
                                      " --bundle-api dynamic");
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  std::string header = readFile(dir / "lenet.h");
  CHECK(header.find("extern const struct BundleConfig lenet_config;") != std::string::npos);
  CHECK(header.find("LENET_CONSTANT_MEM_SIZE") == std::string::npos);

  std::ofstream(dir / "main.c") << R"(#include "lenet.h"
#include <stdio.h>
#include <string.h>
int main(void) {
  const struct BundleConfig *c = &lenet_config;
  /* CONSTANT, MUTABLE and the offsets derived in the first test; data is 784 floats. */
  if (c->constantWeightVarsMemSize != 1724608 || c->mutableWeightVarsMemSize != 3200 ||
      c->alignment != 64 || c->numSymbols != 2)
    return 1;
  if (strcmp(c->symbolTable[0].name, "data") || c->symbolTable[0].offset != 0 ||
      c->symbolTable[0].size != 784 || c->symbolTable[0].kind != 1)
    return 2;
  if (strcmp(c->symbolTable[1].name, "softmax") || c->symbolTable[1].offset != 3136)
    return 3;
  printf("%llu\n", (unsigned long long)c->activationsMemSize);
  return 0;
}
)";
  std::string d = dir.string();
  REQUIRE(std::system(("cc -std=c11 -Wall -Werror -no-pie -o " + d + "/main " + d + "/main.c " + d +
                       "/lenet.o -lm")
                          .c_str()) == 0);
  CHECK(std::system((d + "/main > " + d + "/out.txt").c_str()) == 0);
  // --memory-opt 2 (default): 11,520 + 3,200 + 256, derived in the test above.
  CHECK(readFile(dir / "out.txt") == "14976\n");
}
