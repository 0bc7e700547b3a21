// --use-cmsis (quant/CmsisLayout.h, each operator's CmsisDef::call):
//  (c) CMSIS-NN scratch sizes per core extension against values computed by
//      hand from CMSIS-NN's *_get_buffer_size formulas;
//  (a) a Cortex-M7 object references exactly the expected arm_* functions and
//      none of the portable conv/pool/FC/softmax kernels;
//  (b) the bundle linked against cmsis_nn_stub.c (NHWC reference loops that
//      log their arguments) gives the portable bundle's and the interpreter's
//      outputs bit for bit, and each call received the dims, strides,
//      padding, offsets, clamp range and buffer size CMSIS-NN expects; the
//      same on Cortex-M7 under QEMU.
#include "../quant_kernels/QuantGraphBuilder.h"
#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/bundle/BundleWriter.h"
#include "bundlefit/codegen/BundleCodegen.h"
#include "bundlefit/codegen/Target.h"
#include "bundlefit/device/Device.h"
#include "bundlefit/device/Footprint.h"
#include "bundlefit/driver/VariantFootprint.h"
#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/interp/Npy.h"
#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/quant/CmsisLayout.h"
#include "bundlefit/quant/Profile.h"
#include "bundlefit/quant/QuantizeGraph.h"
#include "bundlefit/schedule/MemoryPlan.h"
#include "bundlefit/support/Error.h"

#include "SkipTest.h"
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <sstream>

using namespace bundlefit;
namespace fs = std::filesystem;
using test::Builder;
using test::floatType;
using test::int8Type;

namespace {

std::function<void(Attributes &)> window(int64_t k, int64_t stride, int64_t pad,
                                         const char *activation = nullptr, int64_t group = 1) {
  return [=](Attributes &a) {
    a.setInts("kernel_shape", {k, k});
    a.setInts("strides", {stride, stride});
    a.setInts("pads", {pad, pad, pad, pad});
    if (group > 1)
      a.setInt("group", group);
    if (activation)
      a.setString("activation", activation);
  };
}

/// Every function --use-cmsis calls: conv 3x3 (per-channel, Relu), max pool,
/// depthwise 3x3, average pool, a residual Add that stays NHWC (its output is
/// also dequantized to a graph output: a layout copy), a strided
/// conv with an int8 bias, depthwise with channel multiplier 2, a 1x1 conv,
/// global average pool, Gemm with [K, N] weights, softmax.
std::unique_ptr<Graph> buildNet() {
  Builder b("cnet", 4242);
  Value *x = b.graph->addInput("x", floatType({1, 3, 12, 12}));
  Value *q = b.op("Quantize", "q", {x}, int8Type({1, 3, 12, 12}, 1.0f / 64, 3));
  std::vector<float> w1, b1;
  for (int c = 0; c < 8; ++c)
    w1.push_back(0.006f + 0.001f * c), b1.push_back(w1.back() / 64);
  Value *c1 = b.op("Conv", "c1", {q, b.weights("w1", {8, 3, 3, 3}, w1), b.int32Bias("b1", 8, b1)},
                   int8Type({1, 8, 12, 12}, 0.02f, -128), window(3, 1, 1, "Relu"));
  Value *p1 = b.op("MaxPool", "p1", {c1}, int8Type({1, 8, 6, 6}, 0.02f, -128), window(2, 2, 0));
  Value *d1 = b.op("Conv", "d1",
                   {p1, b.weights("wd", {8, 1, 3, 3}, {0.01f}), b.int32Bias("bd", 8, {0.0002f})},
                   int8Type({1, 8, 6, 6}, 0.05f, 4), window(3, 1, 1, nullptr, 8));
  Value *a1 = b.op("AveragePool", "a1", {d1}, int8Type({1, 8, 6, 6}, 0.05f, 4), window(3, 1, 1));
  Value *s1 = b.op("Add", "s1", {a1, p1}, int8Type({1, 8, 6, 6}, 0.04f, -60));
  // Power-of-two scales with an int8 bias (symmetric_with_power2_scale).
  Value *bias8 = b.weights("b2", {6}, {1.0f / 128});
  Value *c2 = b.op("Conv", "c2", {s1, b.weights("w2", {6, 8, 3, 3}, {1.0f / 256}), bias8},
                   int8Type({1, 6, 3, 3}, 1.0f / 16, 0), window(3, 2, 1));
  Value *d2 =
      b.op("Conv", "d2",
           {c2, b.weights("wd2", {12, 1, 3, 3}, {0.02f}), b.int32Bias("bd2", 12, {0.02f / 16})},
           int8Type({1, 12, 3, 3}, 0.06f, -10), window(3, 1, 1, nullptr, 6));
  Value *c4 = b.op("Conv", "c4", {d2, b.weights("w4", {12, 12, 1, 1}, {0.01f}), nullptr},
                   int8Type({1, 12, 3, 3}, 0.04f, 2), window(1, 1, 0));
  // LeNet's pattern: an NHWC feature map flattened into a Gemm (weights
  // permuted to H, W, C columns instead of a layout copy).
  Value *f2 = b.op("Flatten", "f2", {c4}, int8Type({1, 108}, 0.04f, 2));
  Value *fc2 =
      b.op("Gemm", "fc2",
           {f2, b.weights("wfc2", {7, 108}, {0.003f}), b.int32Bias("bfc2", 7, {0.04f * 0.003f})},
           int8Type({1, 7}, 0.05f, -3), [](Attributes &a) { a.setInt("transB", 1); });
  Value *g1 = b.op("GlobalAveragePool", "g1", {c4}, int8Type({1, 12, 1, 1}, 0.04f, 2));
  Value *f1 = b.op("Flatten", "f1", {g1}, int8Type({1, 12}, 0.04f, 2));
  Value *fc =
      b.op("Gemm", "fc",
           {f1, b.weights("wfc", {12, 10}, {0.004f}), b.int32Bias("bfc", 10, {0.04f * 0.004f})},
           int8Type({1, 10}, 0.03f, 5));
  Value *sm = b.op("Softmax", "sm", {fc}, int8Type({1, 10}, 1.0f / 256, -128),
                   [](Attributes &a) { a.setInt("axis", 1); });
  Value *out = b.op("Dequantize", "out", {sm}, floatType({1, 10}));
  b.graph->markOutput(out);
  b.graph->markOutput(fc);
  b.graph->markOutput(fc2);
  Value *fs = b.op("Dequantize", "feat", {s1}, floatType({1, 8, 6, 6}));
  b.graph->markOutput(fs);
  return std::move(b.graph);
}

std::map<std::string, Tensor> inputsFor(const Graph &graph, unsigned seed) {
  const Value *in = graph.inputs().at(0);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(size_t(in->type.numElements()));
  for (float &f : v)
    f = d(rng);
  return {{in->name, Tensor::fromFloats(in->type.shape, v)}};
}

/// Compiles the stub (self-contained C) for `target` and merges it
/// with the bundle object into one relocatable <net>.o, so the ordinary
/// runner links it like any bundle.
void mergeStub(const std::string &target, const fs::path &bundleObject, const fs::path &work,
               bool log) {
  std::string cc;
  std::vector<std::string> flags = {"-O1", "-std=c11"};
  if (target == "host") {
    cc = requireHostCC();
    flags.push_back("-fPIC");
    if (log)
      flags.push_back("-DBF_STUB_LOG");
  } else {
    cc = requireArmGcc();
    const CortexMBoard *board = findCortexMBoard(target);
    REQUIRE(board != nullptr);
    flags.insert(flags.end(), board->cflags.begin(), board->cflags.end());
  }
  std::vector<std::string> objects;
  for (const std::string &source : {std::string(CMSIS_STUB_DIR) + "/cmsis_nn_stub.c"}) {
    const std::string object = (work / (fs::path(source).stem().string() + ".o")).string();
    std::vector<std::string> argv = {cc, "-c", source, "-o", object};
    argv.insert(argv.end(), flags.begin(), flags.end());
    ProcessResult r = runProcess(argv, work.string(), 120, (work / "cc.log").string());
    INFO(r.output);
    REQUIRE(r.ok());
    objects.push_back(object);
  }
  const fs::path portable = work / "bundle-only.o";
  fs::rename(bundleObject, portable);
  std::vector<std::string> argv = {
      cc, "-r", "-nostdlib", "-o", bundleObject.string(), portable.string()};
  argv.insert(argv.end(), objects.begin(), objects.end());
  ProcessResult r = runProcess(argv, work.string(), 120, (work / "ld.log").string());
  INFO(r.output);
  REQUIRE(r.ok());
}

/// Plans, compiles and runs `graph` for `target`; `withStub` links the stub.
std::map<std::string, Tensor> runAsBundle(const Graph &graph, const std::string &target,
                                          const std::map<std::string, Tensor> &inputs,
                                          const std::string &tag, bool withStub) {
  const MemoryPlan plan = planGraphMemory(graph);
  const fs::path work = fs::path(BUNDLEFIT_TEST_TMP) / (tag + "-" + target);
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string net = graph.name;
  CodegenResult code = generateBundleObject(graph, plan, net, resolveTarget(target));
  const std::vector<uint8_t> weights = packWeights(plan);
  const fs::path bundleDir = work / "bundle";
  writeBundleDirectory(bundleDir.string(),
                       {{net + ".o", std::string(code.object.begin(), code.object.end())},
                        {net + ".weights.bin", std::string(weights.begin(), weights.end())}});
  if (withStub)
    mergeStub(target, bundleDir / (net + ".o"), work, target == "host");
  BundleRunSpec spec = makeRunSpec(plan, bundleDir.string(), net, target);
  spec.timeoutSeconds = 300;
  return runBundle(spec, inputs, (work / "run").string());
}

void requireSameBytes(const std::map<std::string, Tensor> &got,
                      const std::map<std::string, Tensor> &expected, const std::string &what) {
  REQUIRE(got.size() == expected.size());
  for (const auto &[name, tensor] : expected) {
    INFO(what << ": output " << name);
    REQUIRE(got.count(name) == 1);
    const Tensor &g = got.at(name);
    REQUIRE(g.bytes.size() == tensor.bytes.size());
    size_t differing = 0;
    for (size_t i = 0; i < g.bytes.size(); ++i)
      differing += g.bytes[i] != tensor.bytes[i];
    CHECK(differing == 0);
  }
}

std::vector<std::string> readLines(const fs::path &path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

bool hasPrefix(const std::vector<std::string> &lines, const std::string &prefix) {
  for (const std::string &line : lines)
    if (line.rfind(prefix, 0) == 0)
      return true;
  return false;
}

} // namespace

TEST_CASE("CMSIS-NN buffer sizes per core extension, from the formulas by hand") {
  const CmsisExtension none = CmsisExtension::None, dsp = CmsisExtension::Dsp,
                       mve = CmsisExtension::Mve;
  auto conv = [](int32_t c, int32_t k, int32_t stride, int32_t pad, int32_t h, int32_t oh) {
    CmsisConvShape s;
    s.inC = c, s.kH = s.kW = k, s.strideH = s.strideW = stride, s.padH = s.padW = pad;
    s.inH = s.inW = h, s.outH = s.outW = oh, s.outC = c;
    return s;
  };
  // LeNet conv1 (1 channel, 5x5): 2 columns of align4(25) = 28 int16.
  CmsisConvShape lenet1 = conv(1, 5, 1, 0, 28, 24);
  lenet1.outC = 20;
  CHECK(cmsisConvBufferSize(lenet1, dsp) == 2 * 28 * 2); // 112
  CHECK(cmsisConvBufferSize(lenet1, none) == 112);
  CHECK(cmsisConvBufferSize(lenet1, mve) == 4 * 2 * 16); // ceil(25/16) lanes: 128
  // LeNet conv2 (20 channels, 5x5): 500 columns.
  CmsisConvShape lenet2 = conv(20, 5, 1, 0, 12, 8);
  CHECK(cmsisConvBufferSize(lenet2, dsp) == 2000);        // 2 x 500 x 2
  CHECK(cmsisConvBufferSize(lenet2, mve) == 4 * 32 * 16); // 2048
  // 3x3 over 3 channels: 27 -> align 28.
  CHECK(cmsisConvBufferSize(conv(3, 3, 1, 1, 12, 12), dsp) == 112); // 2 x 28 x 2
  CHECK(cmsisConvBufferSize(conv(8, 3, 2, 1, 6, 3), dsp) == 288);   // 2 x 72 x 2
  // 1x1, no padding: arm_convolve_1x1_s8(_fast), no buffer (GCC/clang builds).
  for (CmsisExtension e : {none, dsp, mve}) {
    CHECK(cmsisConvBufferSize(conv(64, 1, 1, 0, 8, 8), e) == 0);
    CHECK(cmsisConvBufferSize(conv(64, 1, 2, 0, 8, 4), e) == 0);
  }
  // 1xN (input height 1, output width % 4 == 0): DSP as general, Helium one padded row.
  CmsisConvShape oneByN;
  oneByN.inH = 1, oneByN.inW = 16, oneByN.inC = 4, oneByN.kH = 1, oneByN.kW = 3;
  oneByN.outH = 1, oneByN.outW = 16, oneByN.padW = 1;
  CHECK(cmsisConvKind(oneByN) == CmsisConvKind::OneByN);
  CHECK(cmsisConvBufferSize(oneByN, dsp) == 2 * 12 * 2);
  CHECK(cmsisConvBufferSize(oneByN, mve) == 16); // max(12 + 4, 8 + 4)
  // The v4.1+ rule is (stride_w * in_c) % 4 == 0 (v4.0: output width % 4):
  // input [1,3,1,32], 1x3 kernel, pad 1 is a general conv on Helium, 64 bytes.
  CmsisConvShape rgbRow = oneByN;
  rgbRow.inC = 3, rgbRow.inW = rgbRow.outW = 32;
  CHECK(cmsisConvKind(rgbRow) == CmsisConvKind::General);
  CHECK(cmsisConvBufferSize(rgbRow, mve) == 4 * 16);
  CmsisConvShape oddWidth = oneByN; // output width 6, in_c 4: 1xN since v4.1
  oddWidth.inW = oddWidth.outW = 6;
  CHECK(cmsisConvKind(oddWidth) == CmsisConvKind::OneByN);
  CmsisConvShape strided = oneByN; // stride 2 * in_c 2 = 4
  strided.inC = 2, strided.strideW = 2, strided.outW = 8;
  CHECK(cmsisConvKind(strided) == CmsisConvKind::OneByN);
  // Depthwise, ch_mult 1: 3x3 with pad <= 1 is the buffer-free 3x3 kernel on DSP.
  CmsisConvShape dw3 = conv(32, 3, 1, 1, 16, 16);
  CHECK(cmsisDepthwiseBufferSize(dw3, dsp) == 0);
  CHECK(cmsisDepthwiseBufferSize(dw3, none) == 0);
  CHECK(cmsisDepthwiseBufferSize(dw3, mve) == 4 * 124 * 9); // 4464
  CmsisConvShape dw5 = conv(16, 5, 1, 2, 16, 16);
  CHECK(cmsisDepthwiseBufferSize(dw5, dsp) == 16 * 25 * 2);  // 800
  CHECK(cmsisDepthwiseBufferSize(dw5, mve) == 4 * 124 * 25); // 12,400
  CHECK(cmsisDepthwiseBufferSize(dw5, none) == 0);
  CmsisConvShape dwMult = dw5;
  dwMult.outC = 32; // ch_mult 2: the generic kernel, no buffer
  CHECK(cmsisDepthwiseBufferSize(dwMult, dsp) == 0);
  CHECK(cmsisDepthwiseBufferSize(dwMult, mve) == 0);
  // Helium runs a one-input-channel depthwise conv as a convolution: its
  // buffer, then the OHWI filter (GCC threshold: more than 1 output channel).
  CmsisConvShape dwOne = conv(1, 3, 1, 1, 16, 16);
  dwOne.outC = 8;
  CHECK(cmsisDepthwiseRunsAsConv(dwOne, mve));
  CHECK(cmsisDepthwiseBufferSize(dwOne, mve) == 4 * 16 + 8 * 9);
  CHECK(!cmsisDepthwiseRunsAsConv(dwOne, dsp));
  CHECK(cmsisDepthwiseBufferSize(dwOne, dsp) == 0);
  // Fully connected: Helium keeps one int32 kernel sum per output.
  CHECK(cmsisFullyConnectedBufferSize(500, mve) == 2000); // 500 x 4
  CHECK(cmsisFullyConnectedBufferSize(500, dsp) == 0);
  CHECK(cmsisFullyConnectedBufferSize(500, none) == 0);
  CHECK(cmsisFullyConnectedNeedsKernelSums(mve));
  CHECK(!cmsisFullyConnectedNeedsKernelSums(dsp));
  // Average pool: one int32 accumulator per channel on DSP.
  CHECK(cmsisAvgPoolBufferSize(3, 16, dsp) == 64); // 16 channels x 4
  CHECK(cmsisAvgPoolBufferSize(3, 16, mve) == 0);
  CHECK(cmsisAvgPoolBufferSize(3, 16, none) == 0);
  // Which build a CPU gets.
  CHECK(cmsisExtensionForCpu("cortex-m7") == dsp);
  CHECK(cmsisExtensionForCpu("cortex-m33") == dsp);
  CHECK(cmsisExtensionForCpu("cortex-m4") == dsp);
  CHECK(cmsisExtensionForCpu("cortex-m55") == mve);
  CHECK(cmsisExtensionForCpu("cortex-m0plus") == none);
  CHECK(cmsisExtensionForCpu("x86-64") == none);
}

TEST_CASE("fit/pick int8-cmsis scratch: the formulas for the part's core, as bundles plan them") {
  // Float graph, as fit estimates it: LeNet's conv2 and a 5x5 depthwise.
  Graph graph;
  auto conv = [&](const std::string &name, Shape x, Shape w, Shape y, int64_t k, int64_t pad,
                  int64_t group) {
    Value *in = graph.addInput(name + "_x", floatType(x));
    TensorType wt = floatType(w);
    Value *weights = graph.addConstant(name + "_w", wt, std::vector<uint8_t>(wt.bytes(), 0));
    Node *node = graph.addNode("Conv", name, {in, weights}, {name});
    node->attrs.setInts("kernel_shape", {k, k});
    node->attrs.setInts("pads", {pad, pad, pad, pad});
    node->attrs.setInt("group", group);
    node->output(0)->type = floatType(y);
    node->output(0)->typeKnown = true;
    return node;
  };
  const Node *conv2 = conv("conv2", {1, 20, 12, 12}, {50, 20, 5, 5}, {1, 50, 8, 8}, 5, 0, 1);
  const Node *dw = conv("dw", {1, 16, 16, 16}, {16, 1, 5, 5}, {1, 16, 16, 16}, 5, 2, 16);
  const device::Variant cmsis = device::parseVariant("int8-cmsis");
  device::Core m7, m55, m0;
  m7.dspExtension = true, m55.helium = true, m55.dspExtension = true;
  // The formulas of the case above: conv2 2 x 500 x 2 (DSP, and the same
  // without it), 4 x 32 x 16 on Helium; the 5x5 depthwise 16 x 25 x 2 (DSP).
  CHECK(device::kernelScratchBytes(*conv2, cmsis, m7) == 2000);
  CHECK(device::kernelScratchBytes(*conv2, cmsis, m55) == 2048);
  CHECK(device::kernelScratchBytes(*conv2, cmsis, m0) == 2000);
  CHECK(device::kernelScratchBytes(*dw, cmsis, m7) == 800);
  CHECK(device::kernelScratchBytes(*dw, cmsis, m55) == 4 * 124 * 25);
  CHECK(device::kernelScratchBytes(*dw, cmsis, m0) == 0);
  CHECK(device::kernelScratchBytes(*dw, device::parseVariant("int8"), m7) == 0);
  // A fully connected layer needs no arena scratch in any build: Helium's
  // buffer holds per-row kernel sums, which --use-cmsis stores with the
  // weights. Sizing and compiling ask the one definition (fit used to count
  // 500 x 4 bytes of scratch here while the bundle planned none).
  Value *fcIn = graph.addInput("fc_x", floatType({1, 800}));
  TensorType fcType = floatType({800, 500});
  Value *fcW = graph.addConstant("fc_w", fcType, std::vector<uint8_t>(fcType.bytes(), 0));
  Node *fc = graph.addNode("Gemm", "fc", {fcIn, fcW}, {"fc"});
  fc->output(0)->type = floatType({1, 500});
  fc->output(0)->typeKnown = true;
  const CmsisExtension mve = CmsisExtension::Mve;
  CHECK(cmsisFullyConnectedBufferSize(500, mve) == 2000); // what the library's getter says
  CHECK(device::kernelScratchBytes(*fc, cmsis, m55) == 0);
  CHECK(device::kernelScratchBytes(*fc, cmsis, m7) == 0);
  CHECK(cmsisScratchFor(*fc, mve) == 0);
}

TEST_CASE("int16x8 CONV_2D of 576 products: arm_convolve_wrapper_s16 on Helium only, "
          "unless a filter's first 512 weights are -128") {
  // seanet's conv9: 3x3 over 64 channels. Without Helium arm_convolve_s16
  // sums all 576 products in int32; Helium's kernel only the first 512.
  Graph graph;
  auto conv = [&](const std::string &name, int8_t weight) {
    Value *in = graph.addInput(name + "_x", TensorType{DType::Int16, {1, 3, 3, 64}, {}});
    TensorType wt{DType::Int8, {2, 3, 3, 64}, {}};
    std::vector<uint8_t> w(2 * 576, uint8_t(7));
    for (size_t i = 576; i < 576 + 512; ++i) // channel 1's first 512
      w[i] = uint8_t(weight);
    Value *weights = graph.addConstant(name + "_w", wt, w);
    TensorType bt{DType::Int64, {2}, {}};
    Value *bias = graph.addConstant(name + "_b", bt, std::vector<uint8_t>(bt.bytes(), 0));
    Node *node = graph.addNode("Int16Conv", name, {in, weights, bias}, {name});
    node->output(0)->type = TensorType{DType::Int16, {1, 1, 1, 2}, {}};
    node->output(0)->typeKnown = true;
    return node;
  };
  const Node *usual = conv("usual", -127);
  const Node *extreme = conv("extreme", -128);
  std::string why;
  CHECK(cmsisFunctionFor(*usual, CmsisExtension::Mve) == "arm_convolve_wrapper_s16");
  CHECK(cmsisFunctionFor(*usual, CmsisExtension::Dsp, &why).empty());
  CHECK(why.find("576 products") != std::string::npos);
  CHECK(cmsisFunctionFor(*usual, CmsisExtension::None).empty());
  CHECK(cmsisFunctionFor(*extreme, CmsisExtension::Mve, &why).empty());
  CHECK(why.find("first 512 weights are -128") != std::string::npos);
  CHECK(cmsisScratchFor(*usual, CmsisExtension::Mve) == 4 * 576 * 2);
  CHECK(cmsisScratchFor(*usual, CmsisExtension::Dsp) == 0);
}

TEST_CASE("int16x8 FULLY_CONNECTED: arm_fully_connected_s16 up to 511 columns, beyond unless a "
          "row's first 512 weights are -128") {
  // arm_nn_vec_mat_mult_t_s16 sums a row's first 512 products in int32 (DSP
  // and Helium), the rest in int64.
  Graph graph;
  auto fc = [&](const std::string &name, int64_t k, int8_t weight) {
    Value *in = graph.addInput(name + "_x", TensorType{DType::Int16, {1, k}, {}});
    TensorType wt{DType::Int8, {2, k}, {{0.01f}, {0}, -1}};
    std::vector<uint8_t> w(size_t(2 * k), uint8_t(7));
    for (int64_t i = k; i < k + std::min<int64_t>(k, 512); ++i) // row 1's first 512
      w[size_t(i)] = uint8_t(weight);
    Value *weights = graph.addConstant(name + "_w", wt, w);
    TensorType bt{DType::Int64, {2}, {}};
    Value *bias = graph.addConstant(name + "_b", bt, std::vector<uint8_t>(bt.bytes(), 0));
    Node *node = graph.addNode("Int16FullyConnected", name, {in, weights, bias}, {name});
    node->output(0)->type = TensorType{DType::Int16, {1, 2}, {}};
    node->output(0)->typeKnown = true;
    return node;
  };
  const Node *narrow = fc("narrow", 511, -128);
  const Node *usual = fc("usual", 600, -127);
  const Node *extreme = fc("extreme", 600, -128);
  std::string why;
  for (CmsisExtension extension : {CmsisExtension::Dsp, CmsisExtension::Mve}) {
    CHECK(cmsisFunctionFor(*narrow, extension) == "arm_fully_connected_s16");
    CHECK(cmsisFunctionFor(*usual, extension) == "arm_fully_connected_s16");
    CHECK(cmsisFunctionFor(*extreme, extension, &why).empty());
    CHECK(why.find("K = 600") != std::string::npos);
    CHECK(cmsisScratchFor(*usual, extension) == 0);
  }
}

TEST_CASE("int16x8 DEPTHWISE_CONV_2D: arm_depthwise_conv_wrapper_s16, its fast form's scratch") {
  Graph graph;
  auto depthwise = [&](const std::string &name, int64_t multiplier) {
    Value *in = graph.addInput(name + "_x", TensorType{DType::Int16, {1, 5, 5, 8}, {}});
    TensorType wt{DType::Int8, {1, 3, 3, 8 * multiplier}, {}};
    Value *weights = graph.addConstant(name + "_w", wt, std::vector<uint8_t>(wt.bytes(), 1));
    TensorType bt{DType::Int64, {8 * multiplier}, {}};
    Value *bias = graph.addConstant(name + "_b", bt, std::vector<uint8_t>(bt.bytes(), 0));
    Node *node = graph.addNode("Int16DepthwiseConv", name, {in, weights, bias}, {name});
    node->output(0)->type = TensorType{DType::Int16, {1, 3, 3, 8 * multiplier}, {}};
    node->output(0)->typeKnown = true;
    return node;
  };
  const Node *fast = depthwise("fast", 1);
  const Node *generic = depthwise("generic", 2);
  CHECK(cmsisFunctionFor(*fast, CmsisExtension::Dsp) == "arm_depthwise_conv_wrapper_s16");
  CHECK(cmsisFunctionFor(*generic, CmsisExtension::Dsp) == "arm_depthwise_conv_wrapper_s16");
  CHECK(cmsisScratchFor(*fast, CmsisExtension::Dsp) == 8 * 9 * 2); // one im2col column
  CHECK(cmsisScratchFor(*fast, CmsisExtension::Mve) == 4 * 8 * 9 * 2 + 8);
  CHECK(cmsisScratchFor(*fast, CmsisExtension::None) == 0);
  CHECK(cmsisScratchFor(*generic, CmsisExtension::Dsp) == 0); // multiplier 2: no buffer
}

TEST_CASE("fit's int8-cmsis footprint plans what compile --use-cmsis plans") {
  const device::DeviceDatabase db = device::DeviceDatabase::loadDefault();
  const device::Device &rt1062 = db.get("rt1060");
  std::unique_ptr<Graph> quantized = buildNet();
  const device::ModelFootprint cmsis =
      device::footprintOfQuantized(*quantized, device::parseVariant("int8-cmsis"), rt1062);
  const device::ModelFootprint plain =
      device::footprintOfQuantized(*quantized, device::parseVariant("int8"), rt1062);
  std::unique_ptr<Graph> prepared = buildNet();
  prepareCmsisGraph(*prepared, CmsisExtension::Dsp); // rt1062: Cortex-M7, DSP
  const MemoryPlan plan = planGraphMemory(*prepared);
  CHECK(cmsis.activationsBytes == plan.activationsSize);
  CHECK(cmsis.constantBytes == plan.constantSize);
  CHECK(cmsis.scratchBytes == 288); // c2's im2col columns (2 x 8x3x3 x 2), the largest buffer
  CHECK(plain.scratchBytes == 144); // own kernels: c2's int8 im2col columns, 2 x 8x3x3
  CHECK(cmsis.activationsBytes > plain.activationsBytes); // buffers and layout copies
}

TEST_CASE("prepared graph: CMSIS-NN nodes, layout copies, weights repacked, scratch planned") {
  std::unique_ptr<Graph> graph = buildNet();
  const std::vector<uint8_t> w1 = graph->findValue("w1")->data;
  const CmsisPreparation prep = prepareCmsisGraph(*graph, CmsisExtension::Dsp);
  CHECK(prep.cmsisNodes == 11);
  // q (3 channels, NCHW) into c1; the Add (portable, but elementwise without
  // broadcasting) runs on NHWC a1 and p1, and its NHWC output goes to c2 as
  // it is and to the Dequantize of graph output `feat` through a copy.
  CHECK(prep.layoutNodes == 2);
  std::set<std::string> copies;
  for (const Node *node : graph->nodes())
    if (node->opType == kCmsisLayoutOp)
      copies.insert(node->input(0)->name + "->" + node->attrs.getString("to", ""));
  CHECK(copies == std::set<std::string>{"q->NHWC", "s1->NCHW"});
  std::map<std::string, std::string> function;
  for (const Node *node : graph->nodes())
    if (node->attrs.has(kCmsisAttribute))
      function[node->name] = node->attrs.getString(kCmsisAttribute, "");
  CHECK(function["c1"] == "arm_convolve_wrapper_s8");
  CHECK(function["d2"] == "arm_depthwise_conv_wrapper_s8");
  CHECK(function["g1"] == "arm_avgpool_s8");
  CHECK(function["fc"] == "arm_fully_connected_s8");
  CHECK(function["sm"] == "arm_softmax_s8");
  CHECK(function["fc2"] == "arm_fully_connected_s8");
  CHECK(graph->findNode("fc2")->attrs.getString("cmsis_input_order", "") == "HWC");
  CHECK(function.count("s1") == 0);
  // OHWI: element (m=1, kh=2, kw=0, c=2) comes from NCHW (1, 2, 2, 0).
  const Value *w1After = graph->findNode("c1")->input(1);
  CHECK(w1After->data[size_t(((1 * 3 + 2) * 3 + 0) * 3 + 2)] ==
        w1[size_t(((1 * 3 + 2) * 3 + 2) * 3 + 0)]);
  // The int8 bias became int32; the Gemm weights [K, N] became [N, K].
  CHECK(graph->findNode("c2")->input(2)->type.dtype == DType::Int32);
  CHECK(graph->findNode("fc")->input(1)->type.shape == Shape{10, 12});
  CHECK(graph->findNode("fc")->attrs.getInt("transB", 0) == 1);
  // Scratch: the planner gives each node its CMSIS-NN buffer in the arena.
  const MemoryPlan plan = planGraphMemory(*graph);
  const Placement *s1 = plan.scratchOf(graph->findNode("c1"));
  REQUIRE(s1 != nullptr);
  CHECK(s1->size == 112); // c1: 2 x align4(3x3x3) x 2
  CHECK(s1->region == MemoryRegion::Activations);
  CHECK(plan.scratchOf(graph->findNode("c2"))->size == 288); // 2 x 8x3x3 x 2
  CHECK(plan.scratchOf(graph->findNode("a1"))->size == 32);  // 8 channels x int32
  CHECK(plan.scratchOf(graph->findNode("d1")) == nullptr);   // DSP 3x3: none
  CHECK(plan.scratchOf(graph->findNode("fc")) == nullptr);
}

TEST_CASE(
    "the Cortex-M7 object calls exactly the CMSIS-NN functions, no portable kernel for them") {
  std::unique_ptr<Graph> graph = buildNet();
  prepareCmsisGraph(*graph, CmsisExtension::Dsp);
  const MemoryPlan plan = planGraphMemory(*graph);
  TargetOptions target = resolveTarget("cortex-m7");
  const ObjectSummary summary =
      inspectObject(generateBundleObject(*graph, plan, "cnet", target).object);
  std::set<std::string> arm;
  for (const std::string &sym : summary.undefinedSymbols) {
    INFO("undefined " << sym);
    CHECK(sym.rfind("bf_", 0) != 0);
    if (sym.rfind("arm_", 0) == 0)
      arm.insert(sym);
  }
  CHECK(arm == std::set<std::string>{"arm_avgpool_s8", "arm_convolve_wrapper_s8",
                                     "arm_depthwise_conv_wrapper_s8", "arm_fully_connected_s8",
                                     "arm_max_pool_s8", "arm_softmax_s8"});
  // Size-first code keeps kernels as functions: the portable conv, pool, FC
  // and softmax kernels are in the portable build and gone from this one.
  target.optLevel = CodegenOptLevel::Os;
  const std::string ir = generateBundleIR(*graph, plan, "cnet", target);
  std::unique_ptr<Graph> portable = buildNet();
  const std::string portableIr =
      generateBundleIR(*portable, planGraphMemory(*portable), "cnet", target);
  // (The struct-taking entry points are small enough to be inlined even
  // here; the positional forms they call, bf_i8_*, are the kernels' code.)
  for (const char *kernel :
       {"@bf_conv2d_s8(", "@bf_i8_conv2d", "@bf_depthwise_conv2d_s8(", "@bf_i8_depthwise_conv2d(",
        "@bf_fully_connected_s8(", "@bf_maxpool2d_s8(", "@bf_avgpool2d_s8(",
        "@bf_global_avgpool_s8(", "@bf_softmax_s8("}) {
    INFO(kernel);
    CHECK(ir.find(kernel) == std::string::npos);
  }
  CHECK(portableIr.find("@bf_i8_conv2d") != std::string::npos);
}

TEST_CASE("host bundle with the CMSIS-NN stub == portable bundle == interpreter; arguments as "
          "CMSIS-NN expects") {
  const auto inputs = inputsFor(*buildNet(), 11);
  std::unique_ptr<Graph> reference = buildNet();
  const auto expected = Interpreter(*reference).run(inputs);
  requireSameBytes(runAsBundle(*reference, "host", inputs, "portable", false), expected,
                   "portable host bundle");

  std::unique_ptr<Graph> graph = buildNet();
  prepareCmsisGraph(*graph, CmsisExtension::Dsp); // DSP sizes: buffers are exercised
  const fs::path log = fs::path(BUNDLEFIT_TEST_TMP) / "stub-calls.log";
  fs::remove(log);
  setenv("BF_CMSIS_STUB_LOG", log.c_str(), 1);
  requireSameBytes(runAsBundle(*graph, "host", inputs, "cmsis", true), expected,
                   "CMSIS-NN host bundle");
  unsetenv("BF_CMSIS_STUB_LOG");

  const std::vector<std::string> calls = readLines(log);
  for (const std::string &line : calls)
    MESSAGE(line);
  CHECK(calls.size() == 11);
  // c1: NHWC dims, OHWI filter, input offset -zp, Relu's clamp from the zero point.
  CHECK(hasPrefix(calls, "conv in=1,12,12,3 filter=8,3,3,3 bias=1,1,1,8 out=1,12,12,8 "
                         "offsets=-3,-128 stride=1,1 pad=1,1 dil=1,1 act=-128,127 ctx=112 buf=1"));
  CHECK(hasPrefix(calls, "maxpool in=1,12,12,8 filter=1,2,2,1 out=1,6,6,8 stride=2,2 pad=0,0 "
                         "act=-128,127 ctx=0 buf=0"));
  CHECK(hasPrefix(calls,
                  "dwconv in=1,6,6,8 filter=1,3,3,8 bias=1,1,1,8 out=1,6,6,8 "
                  "offsets=128,4 ch_mult=1 stride=1,1 pad=1,1 dil=1,1 act=-128,127 ctx=0 buf=0"));
  CHECK(hasPrefix(calls, "avgpool in=1,6,6,8 filter=1,3,3,1 out=1,6,6,8 stride=1,1 pad=1,1 "
                         "act=-128,127 ctx=32 buf=1"));
  CHECK(hasPrefix(calls, "conv in=1,6,6,8 filter=6,3,3,8 bias=1,1,1,6 out=1,3,3,6 offsets=60,0 "
                         "stride=2,2 pad=1,1 dil=1,1 act=-128,127 ctx=288 buf=1"));
  CHECK(hasPrefix(calls,
                  "dwconv in=1,3,3,6 filter=1,3,3,12 bias=1,1,1,12 out=1,3,3,12 "
                  "offsets=0,-10 ch_mult=2 stride=1,1 pad=1,1 dil=1,1 act=-128,127 ctx=0 buf=0"));
  CHECK(hasPrefix(calls, "conv in=1,3,3,12 filter=12,1,1,12 bias=1,1,1,12 out=1,3,3,12 "
                         "offsets=10,2 stride=1,1 pad=0,0 dil=1,1 act=-128,127 ctx=0 buf=0"));
  CHECK(hasPrefix(calls, "avgpool in=1,3,3,12 filter=1,3,3,1 out=1,1,1,12 stride=3,3 pad=0,0 "
                         "act=-128,127 ctx=48 buf=1"));
  CHECK(hasPrefix(calls, "fc in=1,1,1,12 filter=12,1,1,10 bias=1,1,1,10 out=1,1,1,10 "
                         "offsets=-2,0,5 act=-128,127"));
  CHECK(hasPrefix(calls, "fc in=1,1,1,108 filter=108,1,1,7 bias=1,1,1,7 out=1,1,1,7 "
                         "offsets=-2,0,-3 act=-128,127"));
  CHECK(hasPrefix(calls, "softmax rows=1 row_size=10 "));
}

TEST_CASE("Cortex-M7 bundle with the CMSIS-NN stub under QEMU == interpreter, bit for bit" *
          doctest::test_suite("needs_qemu")) {
  if (findTool("qemu-system-arm").empty() || findTool("arm-none-eabi-gcc").empty())
    BUNDLEFIT_SKIP_TEST("qemu-system-arm or arm-none-eabi-gcc missing");
  const auto inputs = inputsFor(*buildNet(), 12);
  const auto expected = Interpreter(*buildNet()).run(inputs);
  std::unique_ptr<Graph> graph = buildNet();
  prepareCmsisGraph(*graph, CmsisExtension::Dsp);
  requireSameBytes(runAsBundle(*graph, "cortex-m7", inputs, "cmsis", true), expected,
                   "CMSIS-NN Cortex-M7 bundle");
}

TEST_CASE("ResNet-8 int8: residual Adds stay NHWC; host bundle with the stub == interpreter") {
  const std::string model = std::string(BUNDLEFIT_MODELS_DIR) + "/resnet8.onnx";
  const std::string input = std::string(BUNDLEFIT_MODELS_DIR) + "/resnet8.input.npy";
  const fs::path profile = fs::path(BUNDLEFIT_TEST_TMP) / "resnet8.yaml";
  const std::string command =
      std::string(BUNDLEFIT_EXE) + " -q profile " + model + " " + input + " -o " + profile.string();
  REQUIRE(std::system(command.c_str()) == 0);
  auto quantized = [&] {
    std::unique_ptr<Graph> graph = importOnnxModel(model);
    runDefaultPasses(*graph);
    quantizeGraph(*graph, loadProfile(profile.string()), QuantizationOptions{}, profile.string());
    return graph;
  };
  std::unique_ptr<Graph> reference = quantized();
  const std::map<std::string, Tensor> inputs = {{reference->inputs().at(0)->name, loadNpy(input)}};
  const auto expected = Interpreter(*reference).run(inputs);

  std::unique_ptr<Graph> graph = quantized();
  const CmsisPreparation prep = prepareCmsisGraph(*graph, CmsisExtension::Dsp);
  int adds = 0;
  for (const Node *node : graph->nodes())
    adds += node->opType == "Add";
  CHECK(adds >= 3);             // the residual connections, computed in NHWC
  CHECK(prep.layoutNodes == 1); // only the 3-channel input goes to NHWC
  CHECK(prep.cmsisNodes >= 10);
  requireSameBytes(runAsBundle(*graph, "host", inputs, "resnet8", true), expected,
                   "ResNet-8 CMSIS-NN host bundle");
}

TEST_CASE("Helium: fully connected kernel sums computed at compile time, stored with the weights") {
  std::unique_ptr<Graph> dsp = buildNet(), mve = buildNet();
  prepareCmsisGraph(*dsp, CmsisExtension::Dsp);
  prepareCmsisGraph(*mve, CmsisExtension::Mve);
  int fcs = 0;
  uint64_t sumBytes = 0;
  for (const Node *node : mve->nodes()) {
    if (node->attrs.getString(kCmsisAttribute, "") != "arm_fully_connected_s8")
      continue;
    ++fcs;
    INFO(node->name);
    CHECK(node->attrs.getInt(kCmsisScratchAttribute, -1) == 0); // no arena scratch
    // The bundle header checks that the library has arm_vector_sum_s8 (v5.0+).
    CHECK(cmsisApiChecksFor(*node).find("sizeof(&arm_vector_sum_s8)") != std::string::npos);
    REQUIRE(node->inputs.size() == size_t(kCmsisKernelSumsInput) + 1);
    const Value *sums = node->inputs[kCmsisKernelSumsInput];
    REQUIRE(sums->isConstant());
    const Int8ConvArgs a = int8GemmArgs(*node);
    REQUIRE(sums->data.size() == size_t(a.outDepth) * 4);
    // arm_vector_sum_s8(buf, cols, rows, w, lhs_offset = input offset,
    // rhs_offset = filter offset, bias), by hand.
    const int8_t *w = node->input(1)->dataAs<int8_t>();
    const int32_t *bias = node->input(2)->dataAs<int32_t>();
    for (int32_t r = 0; r < a.outDepth; ++r) {
      int64_t rowSum = 0;
      for (int32_t k = 0; k < a.accumDepth; ++k)
        rowSum += w[int64_t(r) * a.accumDepth + k] + a.filterOffset;
      CHECK(sums->dataAs<int32_t>()[r] == int32_t(bias[r] + a.inputOffset * rowSum));
    }
    sumBytes += sums->data.size();
  }
  CHECK(fcs == 2);
  // CONSTANT counts them; the DSP build has none.
  const MemoryPlan dspPlan = planGraphMemory(*dsp), mvePlan = planGraphMemory(*mve);
  CHECK(mvePlan.constantSize >= dspPlan.constantSize + sumBytes);
  for (const Node *node : dsp->nodes()) {
    CHECK(node->inputs.size() <= size_t(kCmsisKernelSumsInput));
    CHECK(cmsisApiChecksFor(*node).empty());
  }
}
