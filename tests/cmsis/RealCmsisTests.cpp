// --use-cmsis against the real CMSIS-NN (../shared/third_party/CMSIS-NN, the
// pinned v7.0.0-43), one core per process (`cmsis_real_tests --core=cortex-m55`):
//  (a) a firmware calls every *_get_buffer_size the bundle relies on, with the
//      arguments the bundle passes (describeCmsisCall), linked with the
//      library built for the core; each result must equal the node's scratch
//      in <net>.memory.json of `bundlefit compile --use-cmsis` (Helium fully
//      connected layers: the kernel sums constant the bundle passes instead);
//  (b) `bundlefit run --use-cmsis --cmsis-nn DIR` under QEMU gives, byte for
//      byte, the outputs of `bundlefit run` with bundlefit's own int8 kernels
//      on the same core, on LeNet, DS-CNN, MobileNetV1-0.25, ResNet-8 and the
//      probe net (make_probe_net.py), four samples each.
// Without ../shared (or qemu-system-arm, arm-none-eabi-gcc, cmake) the
// process exits 77: a ctest SKIP.
#include "../cli/CliTestSupport.h"
#include "LowerInt8.h"

#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/bundle/CmsisNnLibrary.h"
#include "bundlefit/interp/Npy.h"
#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/quant/CmsisLayout.h"
#include "bundlefit/quant/Profile.h"
#include "bundlefit/quant/QuantizeGraph.h"

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

using namespace bundlefit;
namespace fs = std::filesystem;

namespace {

std::string gCore;     // --core=
std::string gCmsisDir; // the pinned CMSIS-NN source checkout
fs::path gWork;

const std::vector<std::string> &modelNames() {
  static const std::vector<std::string> names = {"lenet", "ds_cnn", "mobilenet_v1_025", "resnet8",
                                                 "cmsis_probe"};
  return names;
}

std::string modelFile(const std::string &name, const std::string &suffix) {
  const std::string dir = name == "cmsis_probe" ? CMSIS_PROBE_DIR : BUNDLEFIT_MODELS_DIR;
  return dir + "/" + name + suffix;
}

/// The profile of `name` (made once per process, from its fixed input).
std::string profileOf(const std::string &name) {
  const fs::path profile = gWork / (name + ".yaml");
  if (!fs::exists(profile)) {
    test::CommandResult r =
        test::runBundlefit("-q profile " + modelFile(name, ".onnx") + " " +
                           modelFile(name, ".input.npy") + " -o " + profile.string());
    INFO(r.output);
    REQUIRE(r.exitCode == 0);
  }
  return profile.string();
}

/// Four samples: the model's input and three seeded perturbations of it.
std::string batchOf(const std::string &name) {
  const fs::path path = gWork / (name + ".batch.npy");
  if (fs::exists(path))
    return path.string();
  const Tensor one = loadNpy(modelFile(name, ".input.npy"));
  std::vector<float> values;
  std::mt19937 rng(15);
  std::normal_distribution<float> noise(0.0f, 0.25f);
  for (int sample = 0; sample < 4; ++sample)
    for (int64_t i = 0; i < one.numElements(); ++i)
      values.push_back(float(one.at(i)) + (sample ? noise(rng) : 0.0f));
  Shape shape = one.type.shape;
  shape[0] *= 4;
  std::ofstream(path, std::ios::binary) << encodeNpy(Tensor::fromFloats(shape, values));
  return path.string();
}

std::unique_ptr<Graph> preparedGraph(const std::string &name) {
  std::unique_ptr<Graph> graph = importOnnxModel(modelFile(name, ".onnx"));
  runDefaultPasses(*graph);
  const std::string profile = profileOf(name);
  quantizeGraph(*graph, loadProfile(profile), QuantizationOptions{}, profile);
  prepareCmsisGraph(*graph, cmsisExtensionForCpu(gCore));
  return graph;
}

std::string tableC(const KernelArg &arg) {
  REQUIRE(arg.kind == KernelArg::I32Table);
  std::string text;
  for (int32_t v : arg.table)
    text += (text.empty() ? "" : ", ") + std::to_string(v);
  return "{" + text + "}";
}

/// One getter call, in C, for the call the bundle makes; "" for functions
/// without a buffer (max pooling, softmax).
std::string getterCall(const KernelCall &call, int index) {
  const std::string i = std::to_string(index);
  auto dims = [&](const char *name, size_t arg) {
    return "  static const int32_t " + std::string(name) + i +
           "[4] = " + tableC(call.args.at(arg)) + ";\n";
  };
  auto as = [&](const char *type, const char *name) {
    return std::string("(const ") + type + " *)" + name + i;
  };
  std::string c;
  if (call.kernel == "arm_convolve_wrapper_s8" || call.kernel == "arm_depthwise_conv_wrapper_s8") {
    const bool dw = call.kernel == "arm_depthwise_conv_wrapper_s8";
    c += "  static const int32_t p" + i + "[] = " + tableC(call.args.at(1)) + ";\n";
    c += dims("in", 3) + dims("f", 5) + dims("out", 9);
    c += "  sizes[" + i + "] = " + call.kernel + "_get_buffer_size(" +
         as(dw ? "cmsis_nn_dw_conv_params" : "cmsis_nn_conv_params", "p") + ", " +
         as("cmsis_nn_dims", "in") + ", " + as("cmsis_nn_dims", "f") + ", " +
         as("cmsis_nn_dims", "out") + ");\n";
  } else if (call.kernel == "arm_fully_connected_s8") {
    c += dims("f", 5);
    c += "  sizes[" + i + "] = arm_fully_connected_s8_get_buffer_size(" + as("cmsis_nn_dims", "f") +
         ");\n";
  } else if (call.kernel == "arm_avgpool_s8") {
    const std::vector<int32_t> &in = call.args.at(2).table, &out = call.args.at(5).table;
    c += "  sizes[" + i + "] = arm_avgpool_s8_get_buffer_size(" + std::to_string(out.at(2)) + ", " +
         std::to_string(in.at(3)) + ");\n";
  }
  return c;
}

struct GetterCase {
  std::string model, node, function;
  int64_t expected = 0;
};

} // namespace

TEST_CASE("every CMSIS-NN *_get_buffer_size the bundles rely on == memory.json, on the core") {
  std::string body;
  std::vector<GetterCase> cases;
  for (const std::string &name : modelNames()) {
    // memory.json of the real compile: the scratch of every call, by node.
    const fs::path bundle = gWork / ("compile-" + name);
    test::CommandResult r = test::runBundlefit(
        "-q compile " + modelFile(name, ".onnx") + " -o " + bundle.string() + " --target " + gCore +
        " --load-profile " + profileOf(name) + " --use-cmsis --network-name " + name);
    INFO(r.output);
    REQUIRE(r.exitCode == 0);
    nlohmann::json memory;
    std::ifstream(bundle / (name + ".memory.json")) >> memory;
    std::map<std::string, int64_t> scratch;
    for (const auto &call : memory.at("cmsis_nn").at("calls"))
      scratch[call.at("node").get<std::string>()] = call.at("scratch").get<int64_t>();

    std::unique_ptr<Graph> graph = preparedGraph(name);
    for (const Node *node : graph->nodes()) {
      if (!node->attrs.has(kCmsisAttribute))
        continue;
      const KernelCall call = describeCmsisCall(*node);
      const std::string c = getterCall(call, int(cases.size()));
      if (c.empty())
        continue;
      INFO(name << ": node " << node->name);
      REQUIRE(scratch.count(node->name) == 1);
      GetterCase g{name, node->name, call.kernel, scratch.at(node->name)};
      if (node->inputs.size() > size_t(kCmsisKernelSumsInput)) {
        // Helium kernel sums: a constant of the buffer's size, no scratch.
        CHECK(g.expected == 0);
        g.expected = int64_t(node->inputs[kCmsisKernelSumsInput]->data.size());
      }
      cases.push_back(g);
      body += c;
    }
  }
  REQUIRE(!cases.empty());

  // The checker plays a bundle: its entry writes each getter's result into
  // the output placeholder, which runBundle reads back.
  const std::string net = "getters";
  const fs::path dir = gWork / "getters";
  fs::remove_all(dir);
  fs::create_directories(dir / "bundle");
  std::ofstream(dir / "getters.c")
      << "#include <stdint.h>\n#include \"arm_nnfunctions.h\"\n"
      << "int getters(uint8_t *constantWeight, uint8_t *mutableWeight, uint8_t *activations) {\n"
      << "  int32_t *sizes = (int32_t *)(mutableWeight + 64);\n"
      << body << "  return 0;\n}\n";
  const CmsisNnLibrary library = findOrBuildCmsisNn(gCmsisDir, gCore, defaultCmsisNnCacheDir());
  std::vector<std::string> argv = {requireArmGcc()};
  for (const std::string &f : findCortexMBoard(gCore)->cflags)
    argv.push_back(f);
  for (const std::string &a :
       {std::string("-O1"), std::string("-c"), (dir / "getters.c").string(), std::string("-I"),
        library.includeDir, std::string("-o"), (dir / "bundle" / "getters.o").string()})
    argv.push_back(a);
  ProcessResult cc = runProcess(argv, dir.string(), 120, (dir / "cc.log").string());
  INFO(cc.output);
  REQUIRE(cc.ok());

  BundleRunSpec spec;
  spec.bundleDir = (dir / "bundle").string(), spec.networkName = net, spec.target = gCore;
  spec.mutableSize = 64 + (cases.size() * 4 + 63) / 64 * 64;
  PlaceholderSpec in, out;
  in.name = "x", in.offset = 0, in.isInput = true;
  in.type.dtype = DType::Int8, in.type.shape = {4};
  out.name = "sizes", out.offset = 64;
  out.type.dtype = DType::Int32, out.type.shape = {int64_t(cases.size())};
  spec.placeholders = {in, out};
  spec.linkInputs = {library.library};
  std::map<std::string, Tensor> outputs =
      runBundle(spec, {{"x", Tensor(in.type)}}, (dir / "run").string());
  const Tensor &sizes = outputs.at("sizes");
  const int32_t *got = reinterpret_cast<const int32_t *>(sizes.bytes.data());
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO(gCore << " " << cases[i].model << ": " << cases[i].node << " (" << cases[i].function
               << ")");
    CHECK(got[i] == cases[i].expected);
  }
  MESSAGE(gCore << ": " << cases.size() << " buffer sizes checked");
}

TEST_CASE("run --use-cmsis with the real CMSIS-NN == bundlefit's own int8 kernels, byte for byte") {
  for (const std::string &name : modelNames()) {
    INFO(gCore << " " << name);
    const std::string common = "-q run " + modelFile(name, ".onnx") + " --target " + gCore +
                               " --load-profile " + profileOf(name) + " --input " + batchOf(name);
    const fs::path own = gWork / ("own-" + name), cmsis = gWork / ("cmsis-" + name);
    test::CommandResult a = test::runBundlefit(common + " --output-dir " + own.string());
    INFO(a.output);
    REQUIRE(a.exitCode == 0);
    test::CommandResult b = test::runBundlefit(common + " --use-cmsis --cmsis-nn " + gCmsisDir +
                                               " --output-dir " + cmsis.string());
    INFO(b.output);
    REQUIRE(b.exitCode == 0);
    int files = 0;
    for (const auto &entry : fs::directory_iterator(own)) {
      const Tensor x = loadNpy(entry.path().string());
      const Tensor y = loadNpy((cmsis / entry.path().filename()).string());
      REQUIRE(x.bytes.size() == y.bytes.size());
      size_t differing = 0;
      for (size_t i = 0; i < x.bytes.size(); ++i)
        differing += x.bytes[i] != y.bytes[i];
      INFO(entry.path().filename().string());
      CHECK(differing == 0);
      ++files;
    }
    CHECK(files >= 1);
  }
}

int main(int argc, char **argv) {
  std::vector<char *> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--core=", 0) == 0)
      gCore = arg.substr(7);
    else
      rest.push_back(argv[i]);
  }
  if (!findCortexMBoard(gCore)) {
    std::cerr << "cmsis_real_tests: --core=cortex-m4|cortex-m7|cortex-m33|cortex-m55\n";
    return 2;
  }
  gCmsisDir = std::string(BUNDLEFIT_SHARED_DIR) + "/third_party/CMSIS-NN";
  if (!fs::is_regular_file(gCmsisDir + "/Include/arm_nnfunctions.h")) {
    std::cout << "SKIP: no pinned CMSIS-NN at " << gCmsisDir << " (../shared is absent)\n";
    return 77;
  }
  for (const char *tool : {"qemu-system-arm", "arm-none-eabi-gcc", "cmake"})
    if (findTool(tool).empty()) {
      std::cout << "SKIP: " << tool << " is not installed\n";
      return 77;
    }
  // The library is built once per core into the build tree and reused.
  setenv("BUNDLEFIT_CACHE_DIR", CMSIS_NN_CACHE_DIR, 1);
  gWork = fs::path(BUNDLEFIT_TEST_TMP) / gCore;
  fs::remove_all(gWork);
  fs::create_directories(gWork);
  doctest::Context context(int(rest.size()), rest.data());
  return context.run();
}
