// Bundle objects: small graphs with a hand-made memory plan, compiled for every
// target (valid ELF, right machine, entry symbol), and on the host linked with
// a C driver by the system compiler, run, and compared with reference loops.
#include "bundlefit/codegen/BundleCodegen.h"
#include "bundlefit/support/Error.h"

#include "SkipTest.h"
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <string>

using namespace bundlefit;

namespace {

std::vector<uint8_t> floatBytes(const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

TensorType f32(Shape shape) {
  TensorType type;
  type.shape = std::move(shape);
  return type;
}

Value *constant(Graph &g, const std::string &name, Shape shape, const std::vector<float> &values) {
  return g.addConstant(name, f32(std::move(shape)), floatBytes(values));
}

Value *constantInts(Graph &g, const std::string &name, const std::vector<int64_t> &values) {
  TensorType type;
  type.dtype = DType::Int64;
  type.shape = {int64_t(values.size())};
  std::vector<uint8_t> bytes(values.size() * 8);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return g.addConstant(name, type, bytes);
}

Node *node(Graph &g, const std::string &op, const std::vector<Value *> &inputs, Shape outShape) {
  Node *n = g.addNode(op, op + std::to_string(g.numNodes()), inputs, {op + "_out"});
  n->output(0)->type = f32(std::move(outShape));
  n->output(0)->typeKnown = true;
  return n;
}

uint64_t align64(uint64_t n) { return (n + 63) / 64 * 64; }

/// A simple plan: constants and placeholders packed 64-aligned, every
/// intermediate in its own activation slot, views sharing their input.
MemoryPlan simplePlan(const Graph &g) {
  MemoryPlan plan;
  for (const Node *n : g.nodes())
    plan.schedule.push_back(n);
  for (const Value *c : g.constants()) {
    plan.placements[c] = {MemoryRegion::ConstantWeight, plan.constantSize, c->type.bytes()};
    plan.constants.push_back(c);
    plan.constantSize += align64(c->type.bytes());
  }
  std::vector<const Value *> placeholders(g.inputs().begin(), g.inputs().end());
  placeholders.insert(placeholders.end(), g.outputs().begin(), g.outputs().end());
  for (const Value *v : placeholders) {
    plan.placements[v] = {MemoryRegion::MutableWeight, plan.mutableSize, v->type.bytes()};
    plan.placeholders.push_back(v);
    plan.mutableSize += align64(v->type.bytes());
  }
  for (const Node *n : g.nodes())
    for (const Value *out : n->outputs) {
      if (plan.placements.count(out))
        continue;
      if (n->opType == "Flatten" || n->opType == "Reshape") {
        plan.placements[out] = plan.placements.at(n->input(0));
        continue;
      }
      plan.placements[out] = {MemoryRegion::Activations, plan.activationsSize, out->type.bytes()};
      plan.activationsSize += align64(out->type.bytes());
    }
  return plan;
}

/// Conv(2->4, 3x3, pad 1) -> Relu -> MaxPool 2x2/2 -> Flatten -> Gemm(36->5) -> Softmax.
struct SmallNet {
  Graph graph;
  std::vector<float> w, b, fw, fb;
  SmallNet() {
    graph.name = "small";
    w = randomFloats(4 * 2 * 3 * 3, 1);
    b = randomFloats(4, 2);
    fw = randomFloats(5 * 36, 3);
    fb = randomFloats(5, 4);
    Value *x = graph.addInput("data", f32({1, 2, 6, 6}));
    Node *conv = node(graph, "Conv",
                      {x, constant(graph, "w", {4, 2, 3, 3}, w), constant(graph, "b", {4}, b)},
                      {1, 4, 6, 6});
    conv->attrs.setInts("pads", {1, 1, 1, 1});
    conv->attrs.setInts("kernel_shape", {3, 3});
    Node *relu = node(graph, "Relu", {conv->output(0)}, {1, 4, 6, 6});
    Node *pool = node(graph, "MaxPool", {relu->output(0)}, {1, 4, 3, 3});
    pool->attrs.setInts("kernel_shape", {2, 2});
    pool->attrs.setInts("strides", {2, 2});
    Node *flat = node(graph, "Flatten", {pool->output(0)}, {1, 36});
    Node *fc =
        node(graph, "Gemm",
             {flat->output(0), constant(graph, "fw", {5, 36}, fw), constant(graph, "fb", {5}, fb)},
             {1, 5});
    fc->attrs.setInt("transB", 1);
    Node *soft = node(graph, "Softmax", {fc->output(0)}, {1, 5});
    graph.markOutput(soft->output(0));
  }

  std::vector<float> reference(const std::vector<float> &x) const {
    std::vector<float> conv(4 * 36), pooled(36), logits(5), out(5);
    for (int m = 0; m < 4; ++m)
      for (int oh = 0; oh < 6; ++oh)
        for (int ow = 0; ow < 6; ++ow) {
          float acc = b[m];
          for (int c = 0; c < 2; ++c)
            for (int kh = 0; kh < 3; ++kh)
              for (int kw = 0; kw < 3; ++kw) {
                int ih = oh - 1 + kh, iw = ow - 1 + kw;
                if (ih >= 0 && ih < 6 && iw >= 0 && iw < 6)
                  acc += x[(c * 6 + ih) * 6 + iw] * w[((m * 2 + c) * 3 + kh) * 3 + kw];
              }
          conv[(m * 6 + oh) * 6 + ow] = std::max(acc, 0.0f);
        }
    for (int m = 0; m < 4; ++m)
      for (int oh = 0; oh < 3; ++oh)
        for (int ow = 0; ow < 3; ++ow) {
          float mx = -1e30f;
          for (int kh = 0; kh < 2; ++kh)
            for (int kw = 0; kw < 2; ++kw)
              mx = std::max(mx, conv[(m * 6 + oh * 2 + kh) * 6 + ow * 2 + kw]);
          pooled[(m * 3 + oh) * 3 + ow] = mx;
        }
    float mx = -1e30f, sum = 0;
    for (int j = 0; j < 5; ++j) {
      logits[j] = fb[j];
      for (int k = 0; k < 36; ++k)
        logits[j] += pooled[k] * fw[j * 36 + k];
      mx = std::max(mx, logits[j]);
    }
    for (int j = 0; j < 5; ++j)
      sum += std::exp(logits[j] - mx);
    for (int j = 0; j < 5; ++j)
      out[j] = std::exp(logits[j] - mx) / sum;
    return out;
  }
};

/// Add(bcast) -> Pad(reflect) -> Transpose -> Slice(step 2) -> Resize(nearest)
/// -> Concat -> ReduceMean -> Sigmoid, on input [1,2,4,4].
struct DataNet {
  Graph graph;
  std::vector<float> c;
  DataNet() {
    graph.name = "datanet";
    c = {0.25f, -0.5f};
    Value *x = graph.addInput("in", f32({1, 2, 4, 4}));
    Node *add = node(graph, "Add", {x, constant(graph, "c", {2, 1, 1}, c)}, {1, 2, 4, 4});
    Node *pad =
        node(graph, "Pad", {add->output(0), constantInts(graph, "pads", {0, 0, 1, 1, 0, 0, 1, 1})},
             {1, 2, 6, 6});
    pad->attrs.setString("mode", "reflect");
    Node *tr = node(graph, "Transpose", {pad->output(0)}, {1, 2, 6, 6});
    tr->attrs.setInts("perm", {0, 1, 3, 2});
    Node *sl =
        node(graph, "Slice",
             {tr->output(0), constantInts(graph, "starts", {1}), constantInts(graph, "ends", {5}),
              constantInts(graph, "axes", {2}), constantInts(graph, "steps", {2})},
             {1, 2, 2, 6});
    Node *rs =
        node(graph, "Resize",
             {sl->output(0), nullptr, constant(graph, "scales", {4}, {1, 1, 2, 1})}, {1, 2, 4, 6});
    rs->attrs.setString("mode", "nearest");
    rs->attrs.setString("coordinate_transformation_mode", "asymmetric");
    rs->attrs.setString("nearest_mode", "floor");
    Node *cat = node(graph, "Concat", {rs->output(0), sl->output(0)}, {1, 2, 6, 6});
    cat->attrs.setInt("axis", 2);
    Node *mean = node(graph, "ReduceMean", {cat->output(0)}, {1, 2, 6, 1});
    mean->attrs.setInts("axes", {3});
    Node *sig = node(graph, "Sigmoid", {mean->output(0)}, {1, 2, 6, 1});
    graph.markOutput(sig->output(0));
  }

  std::vector<float> reference(const std::vector<float> &x) const {
    auto reflect = [](int i, int n) { return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i; };
    float padded[2][6][6], tr[2][6][6], sl[2][2][6], rs[2][4][6], cat[2][6][6];
    for (int ch = 0; ch < 2; ++ch)
      for (int h = 0; h < 6; ++h)
        for (int w = 0; w < 6; ++w)
          padded[ch][h][w] = x[(ch * 4 + reflect(h - 1, 4)) * 4 + reflect(w - 1, 4)] + c[ch];
    for (int ch = 0; ch < 2; ++ch)
      for (int h = 0; h < 6; ++h)
        for (int w = 0; w < 6; ++w)
          tr[ch][h][w] = padded[ch][w][h];
    for (int ch = 0; ch < 2; ++ch)
      for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 6; ++w)
          sl[ch][h][w] = tr[ch][1 + 2 * h][w];
    for (int ch = 0; ch < 2; ++ch)
      for (int h = 0; h < 4; ++h)
        for (int w = 0; w < 6; ++w)
          rs[ch][h][w] = sl[ch][h / 2][w];
    for (int ch = 0; ch < 2; ++ch)
      for (int w = 0; w < 6; ++w) {
        for (int h = 0; h < 4; ++h)
          cat[ch][h][w] = rs[ch][h][w];
        for (int h = 0; h < 2; ++h)
          cat[ch][4 + h][w] = sl[ch][h][w];
      }
    std::vector<float> out;
    for (int ch = 0; ch < 2; ++ch)
      for (int h = 0; h < 6; ++h) {
        float sum = 0;
        for (int w = 0; w < 6; ++w)
          sum += cat[ch][h][w];
        out.push_back(1.0f / (1.0f + std::exp(-sum / 6)));
      }
    return out;
  }
};

std::string makeTempDir() {
  char pattern[] = "/tmp/bundlefit_codegen_XXXXXX";
  const char *dir = mkdtemp(pattern);
  REQUIRE(dir != nullptr);
  return dir;
}

void writeFile(const std::string &path, const void *data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char *>(data), std::streamsize(size));
  REQUIRE(out.good());
}

std::vector<char> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

const char *kDriver = R"(/* Test driver: loads the regions, runs the bundle, dumps mutableWeight. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int NET(uint8_t *constantWeight, uint8_t *mutableWeight, uint8_t *activations);
static uint8_t *load(const char *path, size_t size) {
  uint8_t *p = aligned_alloc(64, size ? (size + 63) / 64 * 64 : 64);
  FILE *f = fopen(path, "rb");
  if (!p || !f || fread(p, 1, size, f) != size) { fprintf(stderr, "cannot read %s\n", path); exit(2); }
  fclose(f);
  return p;
}
int main(int argc, char **argv) {
  if (argc != 6) return 2;
  size_t cs = strtoul(argv[2], 0, 10), ms = strtoul(argv[4], 0, 10), as = strtoul(argv[5], 0, 10);
  uint8_t *c = load(argv[1], cs), *m = load(argv[3], ms);
  uint8_t *a = aligned_alloc(64, as ? (as + 63) / 64 * 64 : 64);
  memset(a, 0xA5, as); /* activations are not initialised by contract */
  int rc = NET(c, m, a);
  FILE *f = fopen(argv[3], "wb");
  fwrite(m, 1, ms, f);
  fclose(f);
  return rc;
}
)";

/// Compiles for the host, links with the driver via the system C compiler,
/// runs, and returns every graph output.
std::vector<std::vector<float>> runAllOnHost(const Graph &graph, const MemoryPlan &plan,
                                             const std::string &name,
                                             const std::vector<float> &input, CodegenOptLevel level,
                                             const std::string &relocation = "static") {
  TargetOptions target = resolveTarget("host", "", "", "", relocation);
  target.optLevel = level;
  CodegenResult result = generateBundleObject(graph, plan, name, target);
  const std::string dir = makeTempDir();
  writeFile(dir + "/" + name + ".o", result.object.data(), result.object.size());
  writeFile(dir + "/driver.c", kDriver, std::strlen(kDriver));
  std::vector<uint8_t> constants(plan.constantSize), mut(plan.mutableSize);
  for (const Value *c : plan.constants)
    std::memcpy(constants.data() + plan.placements.at(c).offset, c->data.data(), c->data.size());
  std::memcpy(mut.data() + plan.placements.at(graph.inputs()[0]).offset, input.data(),
              input.size() * 4);
  writeFile(dir + "/constant.bin", constants.data(), constants.size());
  writeFile(dir + "/mutable.bin", mut.data(), mut.size());
  // Static-relocation objects need a non-PIE link; pic ones link either way.
  const std::string pie = relocation == "pic" ? " -pie" : " -no-pie";
  const std::string link = std::string(BUNDLEFIT_HOST_CC) + " -O1" + pie + " -DNET=" + name + " " +
                           dir + "/driver.c " + dir + "/" + name + ".o -lm -o " + dir + "/run";
  REQUIRE(std::system(link.c_str()) == 0);
  const std::string run = dir + "/run " + dir + "/constant.bin " +
                          std::to_string(constants.size()) + " " + dir + "/mutable.bin " +
                          std::to_string(mut.size()) + " " + std::to_string(plan.activationsSize);
  REQUIRE(std::system(run.c_str()) == 0);
  std::vector<char> after = readFile(dir + "/mutable.bin");
  REQUIRE(after.size() == mut.size());
  std::vector<std::vector<float>> outputs;
  for (const Value *out : graph.outputs()) {
    std::vector<float> values(out->type.numElements());
    std::memcpy(values.data(), after.data() + plan.placements.at(out).offset, values.size() * 4);
    outputs.push_back(std::move(values));
  }
  std::system(("rm -rf " + dir).c_str());
  return outputs;
}

std::vector<float> runOnHost(const Graph &graph, const MemoryPlan &plan, const std::string &name,
                             const std::vector<float> &input, CodegenOptLevel level,
                             const std::string &relocation = "static") {
  return runAllOnHost(graph, plan, name, input, level, relocation)[0];
}

void checkClose(const std::vector<float> &got, const std::vector<float> &want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    CHECK(std::fabs(got[i] - want[i]) <= 1e-5f);
  }
}

} // namespace

TEST_CASE("host bundle: conv/relu/maxpool/flatten/gemm/softmax runs and matches reference") {
  SmallNet net;
  MemoryPlan plan = simplePlan(net.graph);
  std::vector<float> input = randomFloats(72, 99);
  const std::vector<float> want = net.reference(input);
  for (CodegenOptLevel level : {CodegenOptLevel::O2, CodegenOptLevel::O3, CodegenOptLevel::Os}) {
    CAPTURE(optLevelName(level));
    checkClose(runOnHost(net.graph, plan, "small", input, level), want);
  }
}

TEST_CASE("host bundle: add/pad/transpose/slice/resize/concat/reducemean/sigmoid") {
  DataNet net;
  MemoryPlan plan = simplePlan(net.graph);
  std::vector<float> input = randomFloats(32, 7);
  const std::vector<float> want = net.reference(input);
  for (CodegenOptLevel level : {CodegenOptLevel::O2, CodegenOptLevel::O3, CodegenOptLevel::Os}) {
    CAPTURE(optLevelName(level));
    checkClose(runOnHost(net.graph, plan, "datanet", input, level), want);
  }
}

TEST_CASE("host bundle with the pic relocation model links as a PIE") {
  SmallNet net;
  MemoryPlan plan = simplePlan(net.graph);
  std::vector<float> input = randomFloats(72, 5);
  checkClose(runOnHost(net.graph, plan, "small", input, CodegenOptLevel::O2, "pic"),
             net.reference(input));
}

TEST_CASE("hand-computed values: 1x1 conv with fused clip") {
  Graph g;
  Value *x = g.addInput("x", f32({1, 1, 2, 2}));
  Node *conv =
      node(g, "Conv",
           {x, constant(g, "w", {2, 1, 1, 1}, {2.0f, -1.0f}), constant(g, "b", {2}, {1.0f, 0.5f})},
           {1, 2, 2, 2});
  conv->attrs.setString("activation", "Clip");
  conv->attrs.setFloat("activation_min", 0.0f);
  conv->attrs.setFloat("activation_max", 6.0f);
  g.markOutput(conv->output(0));
  MemoryPlan plan = simplePlan(g);
  // channel 0: 2x+1 -> {3,5,7,9} clipped to 6; channel 1: -x+0.5 -> {-0.5,-1.5,-2.5,-3.5} -> 0
  checkClose(runOnHost(g, plan, "tiny", {1, 2, 3, 4}, CodegenOptLevel::O2),
             {3, 5, 6, 6, 0, 0, 0, 0});
}

TEST_CASE("objects for every target: valid ELF, right machine, entry defined") {
  SmallNet net;
  MemoryPlan plan = simplePlan(net.graph);
  struct Expect {
    const char *target;
    const char *floatAbi;
    uint16_t machine;
  } targets[] = {
      {"x86_64", "", 62},     {"cortex-a53", "", 183},   {"cortex-a72", "", 183},
      {"cortex-m4", "", 40},  {"cortex-m7", "", 40},     {"cortex-m7", "soft", 40},
      {"cortex-m33", "", 40}, {"cortex-m0plus", "", 40},
  };
  const std::set<std::string> allowedUndefined = {"memcpy", "memset", "memmove", "expf"};
  for (const Expect &e : targets) {
    for (CodegenOptLevel level : {CodegenOptLevel::O2, CodegenOptLevel::Os}) {
      TargetOptions target = resolveTarget(e.target, "", "", e.floatAbi, "");
      target.optLevel = level;
      CAPTURE(describeTarget(target));
      CodegenResult result = generateBundleObject(net.graph, plan, "small", target);
      ObjectSummary summary = inspectObject(result.object);
      CHECK(summary.elfMachine == e.machine);
      CHECK(result.textBytes > 0);
      CHECK(result.textBytes == summary.textBytes);
      CHECK(std::count(summary.definedGlobals.begin(), summary.definedGlobals.end(), "small") == 1);
      // Only the entry point is exported: kernels are internal.
      CHECK(summary.definedGlobals.size() == 1);
      // One compiler ident in .comment, not one per kernel file linked.
      const std::string bytes(result.object.begin(), result.object.end());
      size_t idents = 0;
      for (size_t at = bytes.find("clang version"); at != std::string::npos;
           at = bytes.find("clang version", at + 1))
        ++idents;
      CHECK(idents == 1);
      for (const std::string &sym : summary.undefinedSymbols) {
        INFO("undefined symbol " << sym);
        CHECK((allowedUndefined.count(sym) || sym.rfind("__aeabi_", 0) == 0));
      }
      MESSAGE(describeTarget(target)
              << ": .text " << result.textBytes << " B, rodata " << result.rodataBytes << " B, "
              << result.compileSeconds << " s");
    }
  }
}

TEST_CASE("Os is smaller than O2 on cortex-m7") {
  SmallNet net;
  MemoryPlan plan = simplePlan(net.graph);
  TargetOptions o2 = resolveTarget("cortex-m7"), os = o2;
  os.optLevel = CodegenOptLevel::Os;
  const uint64_t textO2 = generateBundleObject(net.graph, plan, "small", o2).textBytes;
  const uint64_t textOs = generateBundleObject(net.graph, plan, "small", os).textBytes;
  MESSAGE("cortex-m7 .text: O2 " << textO2 << " B, Os " << textOs << " B");
  CHECK(textOs < textO2);
}

TEST_CASE("AVX-512 hosts keep the 16-float convolution tiles in zmm registers") {
  // LLVM tunes Sapphire Rapids for 256-bit vectors: without the bundle's
  // min-legal-vector-width the zero-padded band tiles (rows of 20 take them,
  // as ResNet's 56, 28, 14 and 7 do) ran as two ymm halves each, no zmm FMA
  // at all and half the MAC rate. x86-64-v3 (AVX2) has no zmm.
  const int C = 16, M = 16, H = 20, W = 20;
  Graph g;
  Value *x = g.addInput("x", f32({1, C, H, W}));
  Node *conv = node(g, "Conv",
                    {x, constant(g, "w", {M, C, 3, 3}, randomFloats(M * C * 9, 21)),
                     constant(g, "b", {M}, randomFloats(M, 22))},
                    {1, M, H, W});
  conv->attrs.setInts("pads", {1, 1, 1, 1});
  conv->attrs.setInts("kernel_shape", {3, 3});
  g.markOutput(conv->output(0));
  MemoryPlan plan = simplePlan(g);
  const std::string dir = makeTempDir();
  auto zmmFmas = [&](const char *cpu) {
    const CodegenResult result =
        generateBundleObject(g, plan, "conv", resolveTarget("x86_64", "", cpu));
    const std::string object = dir + "/" + cpu + ".o", listing = dir + "/" + cpu + ".s";
    writeFile(object, result.object.data(), result.object.size());
    REQUIRE(std::system(("objdump -d --no-show-raw-insn " + object + " > " + listing).c_str()) ==
            0);
    std::ifstream in(listing);
    size_t count = 0;
    for (std::string line; std::getline(in, line);)
      count += line.find("vfmadd") != std::string::npos && line.find("%zmm") != std::string::npos;
    return count;
  };
  const size_t wide = zmmFmas("sapphirerapids"), avx2 = zmmFmas("x86-64-v3");
  MESSAGE("zmm FMAs: sapphirerapids " << wide << ", x86-64-v3 " << avx2);
  CHECK(wide >= 16);
  CHECK(avx2 == 0);
}

namespace {
bool objectMentions(const std::vector<char> &object, const std::string &name) {
  return std::search(object.begin(), object.end(), name.begin(), name.end()) != object.end();
}
} // namespace

TEST_CASE("Os drops the speed-only convolution paths and still matches the reference") {
  // Depthwise 3x3 then pointwise 1x1: both have fast paths (noinline row and
  // GEMM-tile helpers) that O2 keeps and Os must not compile (code size first).
  const int C = 4, M = 8, H = 8, W = 8;
  Graph g;
  Value *x = g.addInput("x", f32({1, C, H, W}));
  const std::vector<float> wd = randomFloats(C * 9, 11), bd = randomFloats(C, 12);
  const std::vector<float> wp = randomFloats(M * C, 13), bp = randomFloats(M, 14);
  Node *dw = node(g, "Conv", {x, constant(g, "wd", {C, 1, 3, 3}, wd), constant(g, "bd", {C}, bd)},
                  {1, C, H, W});
  dw->attrs.setInts("pads", {1, 1, 1, 1});
  dw->attrs.setInts("kernel_shape", {3, 3});
  dw->attrs.setInt("group", C);
  Node *pw = node(g, "Conv",
                  {dw->output(0), constant(g, "wp", {M, C, 1, 1}, wp), constant(g, "bp", {M}, bp)},
                  {1, M, H, W});
  pw->attrs.setInts("kernel_shape", {1, 1});
  g.markOutput(pw->output(0));
  MemoryPlan plan = simplePlan(g);

  const std::vector<float> in = randomFloats(C * H * W, 15);
  std::vector<float> mid(C * H * W), want(M * H * W);
  for (int c = 0; c < C; ++c)
    for (int h = 0; h < H; ++h)
      for (int w = 0; w < W; ++w) {
        double acc = bd[c];
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw) {
            const int ih = h + kh - 1, iw = w + kw - 1;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
              acc += double(in[(c * H + ih) * W + iw]) * wd[c * 9 + kh * 3 + kw];
          }
        mid[(c * H + h) * W + w] = float(acc);
      }
  for (int m = 0; m < M; ++m)
    for (int p = 0; p < H * W; ++p) {
      double acc = bp[m];
      for (int c = 0; c < C; ++c)
        acc += double(mid[c * H * W + p]) * wp[m * C + c];
      want[m * H * W + p] = float(acc);
    }
  for (CodegenOptLevel level : {CodegenOptLevel::O2, CodegenOptLevel::Os}) {
    CAPTURE(optLevelName(level));
    checkClose(runOnHost(g, plan, "dwpw", in, level), want);
  }

  TargetOptions o2 = resolveTarget("cortex-m7"), os = o2;
  os.optLevel = CodegenOptLevel::Os;
  const CodegenResult fast = generateBundleObject(g, plan, "dwpw", o2);
  const CodegenResult small = generateBundleObject(g, plan, "dwpw", os);
  MESSAGE("cortex-m7 depthwise+pointwise .text: O2 " << fast.textBytes << " B, Os "
                                                     << small.textBytes << " B");
  for (const char *helper : {"bf_dw3_span_s1", "bf_pw_cols1"}) {
    CAPTURE(helper);
    CHECK(objectMentions(fast.object, helper));
    CHECK_FALSE(objectMentions(small.object, helper));
  }
  CHECK(small.textBytes < fast.textBytes);
}

TEST_CASE("Cortex-M objects link with arm-none-eabi-gcc for their float ABI" *
          doctest::test_suite("needs_arm_gcc")) {
  const std::string gcc = BUNDLEFIT_ARM_GCC;
  if (gcc.empty() || gcc.find("NOTFOUND") != std::string::npos)
    BUNDLEFIT_SKIP_TEST("arm-none-eabi-gcc not found");
  SmallNet net;
  MemoryPlan plan = simplePlan(net.graph);
  struct Case {
    const char *target, *floatAbi, *flags;
  } cases[] = {
      {"cortex-m4", "", "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"},
      {"cortex-m7", "", "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16"},
      {"cortex-m7", "soft", "-mcpu=cortex-m7 -mthumb -mfloat-abi=softfp -mfpu=fpv5-d16"},
      {"cortex-m33", "", "-mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16"},
      {"cortex-m0plus", "", "-mcpu=cortex-m0plus -mthumb -mfloat-abi=soft"},
  };
  const std::string dir = makeTempDir();
  const char *main = "#include <stdint.h>\nint small(uint8_t*,uint8_t*,uint8_t*);\n"
                     "static uint8_t c[4096], m[512], a[4096];\n"
                     "int main(void) { return small(c, m, a); }\n";
  writeFile(dir + "/main.c", main, std::strlen(main));
  for (const Case &c : cases) {
    TargetOptions target = resolveTarget(c.target, "", "", c.floatAbi, "");
    CAPTURE(describeTarget(target));
    CodegenResult result = generateBundleObject(net.graph, plan, "small", target);
    writeFile(dir + "/small.o", result.object.data(), result.object.size());
    const std::string cmd = gcc + " " + c.flags + " --specs=nosys.specs -Wl,--gc-sections " + dir +
                            "/main.c " + dir + "/small.o -lm -o " + dir + "/fw.elf";
    CHECK(std::system(cmd.c_str()) == 0);
  }
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("unsupported operators and bad names are reported with the node") {
  Graph g;
  Value *x = g.addInput("x", f32({4}));
  Node *n = node(g, "Frobnicate", {x}, {4});
  g.markOutput(n->output(0));
  MemoryPlan plan = simplePlan(g);
  try {
    generateBundleObject(g, plan, "net", resolveTarget("cortex-m7"));
    FAIL("expected an error");
  } catch (const Error &error) {
    CHECK(error.code() == ExitCode::Unsupported);
    CHECK(std::string(error.what()).find("Frobnicate") != std::string::npos);
  }
}

TEST_CASE("nodes that differ only in their offsets share one node function") {
  // x -> Neg -> ... -> Neg (5 of them) -> y = -x, plus one Neg of another
  // size; each intermediate in its own slot, so a shared function called
  // with the wrong offsets would leave y unwritten or wrong.
  Graph g;
  g.name = "chain";
  Value *x = g.addInput("x", f32({1, 16}));
  Value *last = x;
  for (int i = 0; i < 5; ++i)
    last = node(g, "Neg", {last}, {1, 16})->output(0);
  g.markOutput(last);
  Node *other = node(g, "Neg", {constant(g, "c", {1, 8}, randomFloats(8, 3))}, {1, 8});
  g.markOutput(other->output(0));
  MemoryPlan plan = simplePlan(g);
  const std::string ir = generateBundleIR(g, plan, "chain", resolveTarget("host"));
  size_t definitions = 0;
  for (size_t at = ir.find("define internal"); at != std::string::npos;
       at = ir.find("define internal", at + 1))
    definitions += ir.compare(ir.find('@', at), 7, "@chain.") == 0;
  // Kinds: mutable->activations, activations->activations (the middle three
  // share it), activations->mutable, and the [1,8] constant->mutable.
  CHECK(definitions == 4);

  std::vector<float> input = randomFloats(16, 21), want(16);
  for (size_t i = 0; i < 16; ++i)
    want[i] = -input[i];
  for (CodegenOptLevel level : {CodegenOptLevel::O2, CodegenOptLevel::Os}) {
    CAPTURE(optLevelName(level));
    checkClose(runOnHost(g, plan, "chain", input, level), want);
  }
}

TEST_CASE("host bundle: a Concat of many inputs from every region copies by table") {
  // 40 pieces on axis 1 of [2, w]: the input, a Neg of it (activations) and
  // constants of widths 1..3 -- past the inputs specialised one by one.
  Graph g;
  g.name = "wide";
  Value *x = g.addInput("x", f32({2, 3}));
  Node *neg = node(g, "Neg", {x}, {2, 3});
  std::vector<Value *> pieces = {x, neg->output(0)};
  std::vector<std::vector<float>> data = {{}, {}};
  int64_t width = 6;
  for (int i = 0; i < 38; ++i) {
    const int64_t w = 1 + i % 3;
    data.push_back(randomFloats(size_t(2 * w), unsigned(100 + i)));
    pieces.push_back(constant(g, "c" + std::to_string(i), {2, w}, data.back()));
    width += w;
  }
  Node *cat = node(g, "Concat", pieces, {2, width});
  cat->attrs.setInt("axis", 1);
  g.markOutput(cat->output(0));
  MemoryPlan plan = simplePlan(g);
  std::vector<float> input = randomFloats(6, 22), want;
  data[0] = input;
  for (float v : input)
    data[1].push_back(-v);
  for (int r = 0; r < 2; ++r)
    for (const std::vector<float> &piece : data)
      for (size_t j = 0; j < piece.size() / 2; ++j)
        want.push_back(piece[r * (piece.size() / 2) + j]);
  checkClose(runOnHost(g, plan, "wide", input, CodegenOptLevel::O2), want);
}

TEST_CASE("host bundle: a Split of many outputs to every region copies by table") {
  // x [2, w] split on axis 1 into 40 pieces of widths 1..3: even pieces are
  // graph outputs (mutable), odd ones feed a Neg (activations), and piece 3
  // is read by nobody (no placement: the table skips its bytes).
  Graph g;
  g.name = "split";
  std::vector<int64_t> widths;
  int64_t width = 0;
  for (int i = 0; i < 40; ++i) {
    widths.push_back(1 + i % 3);
    width += widths.back();
  }
  Value *x = g.addInput("x", f32({2, width}));
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i)
    names.push_back("s" + std::to_string(i));
  Node *split = g.addNode("Split", "split", {x, constantInts(g, "splits", widths)}, names);
  split->attrs.setInt("axis", 1);
  for (int i = 0; i < 40; ++i) {
    split->output(size_t(i))->type = f32({2, widths[size_t(i)]});
    split->output(size_t(i))->typeKnown = true;
  }
  std::vector<int> outputPiece; // Piece of each graph output, in order.
  for (int i = 0; i < 40; ++i) {
    if (i == 3)
      continue;
    Value *piece = split->output(size_t(i));
    g.markOutput(i % 2 ? node(g, "Neg", {piece}, {2, widths[size_t(i)]})->output(0) : piece);
    outputPiece.push_back(i);
  }
  MemoryPlan plan = simplePlan(g);
  plan.placements.erase(split->output(3));
  CHECK(generateBundleIR(g, plan, "split", resolveTarget("host")).find("bf_split_table") !=
        std::string::npos);

  std::vector<float> input = randomFloats(size_t(2 * width), 23);
  std::vector<std::vector<float>> got = runAllOnHost(g, plan, "split", input, CodegenOptLevel::O2);
  REQUIRE(got.size() == outputPiece.size());
  for (size_t o = 0; o < outputPiece.size(); ++o) {
    const int i = outputPiece[o];
    int64_t start = 0;
    for (int k = 0; k < i; ++k)
      start += widths[size_t(k)];
    std::vector<float> want;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t j = 0; j < widths[size_t(i)]; ++j)
        want.push_back((i % 2 ? -1.0f : 1.0f) * input[size_t(r * width + start + j)]);
    CAPTURE(i);
    checkClose(got[o], want);
  }
}

TEST_CASE("host bundle: operator zoo against reference loops") {
  Graph g;
  g.name = "zoo";
  Value *x = g.addInput("x", f32({1, 4, 5, 6}));
  auto X = [](const std::vector<float> &v, int c, int h, int w) { return v[(c * 5 + h) * 6 + w]; };
  std::vector<float> scale = {1.5f, 0.5f, -1.0f, 2.0f}, shift = {0.1f, -0.2f, 0.3f, 0.0f},
                     mean = {0.05f, -0.1f, 0.2f, 0.0f}, var = {0.5f, 1.0f, 2.0f, 0.25f};
  std::vector<float> B = randomFloats(18, 11), k2 = {2.0f, -3.0f}, wt = randomFloats(72, 12),
                     bt = {0.25f, -0.5f}, c6 = randomFloats(6, 13),
                     slope = {0.1f, 0.2f, 0.3f, 0.4f};

  g.markOutput(node(g, "GlobalAveragePool", {x}, {1, 4, 1, 1})->output(0)); // 0
  Node *ap = node(g, "AveragePool", {x}, {1, 4, 3, 3});                     // 1
  ap->attrs.setInts("kernel_shape", {3, 3});
  ap->attrs.setInts("strides", {2, 2});
  ap->attrs.setInts("pads", {1, 1, 1, 1});
  ap->attrs.setInt("count_include_pad", 1);
  g.markOutput(ap->output(0));
  Node *bn = node(g, "BatchNormalization",
                  {x, constant(g, "scale", {4}, scale), constant(g, "shift", {4}, shift),
                   constant(g, "mean", {4}, mean), constant(g, "var", {4}, var)},
                  {1, 4, 5, 6});
  Node *ls = node(g, "LogSoftmax", {bn->output(0)}, {1, 4, 5, 6}); // 2
  ls->attrs.setInt("axis", 1);
  g.markOutput(ls->output(0));
  g.markOutput(node(g, "MatMul", {x, constant(g, "B", {6, 3}, B)}, {1, 4, 5, 3})->output(0)); // 3
  Node *split = g.addNode("Split", "split", {x, constantInts(g, "splits", {2, 4})}, {"s0", "s1"});
  split->attrs.setInt("axis", 3);
  split->output(0)->type = f32({1, 4, 5, 2});
  split->output(1)->type = f32({1, 4, 5, 4});
  g.markOutput(
      node(g, "Mul", {split->output(0), constant(g, "k2", {2}, k2)}, {1, 4, 5, 2})->output(0)); // 4
  g.markOutput(split->output(1));                                                               // 5
  Node *gather = node(g, "Gather", {x, constantInts(g, "idx", {3, -1})}, {1, 4, 2, 6});
  gather->attrs.setInt("axis", 2);
  g.markOutput(node(g, "Tanh", {gather->output(0)}, {1, 4, 2, 6})->output(0)); // 6
  Node *rmax = node(g, "ReduceMax", {x}, {1, 5, 6});                           // 7
  rmax->attrs.setInts("axes", {1});
  rmax->attrs.setInt("keepdims", 0);
  g.markOutput(rmax->output(0));
  Node *ct =
      node(g, "ConvTranspose", {x, constant(g, "wt", {4, 2, 3, 3}, wt), constant(g, "bt", {2}, bt)},
           {1, 2, 9, 11}); // 8
  ct->attrs.setInts("strides", {2, 2});
  ct->attrs.setInts("pads", {1, 1, 1, 1});
  g.markOutput(ct->output(0));
  Node *rs =
      node(g, "Resize", {x, nullptr, constant(g, "sc", {4}, {1, 1, 2, 2})}, {1, 4, 10, 12}); // 9
  rs->attrs.setString("mode", "linear");
  g.markOutput(rs->output(0));
  Node *pad =
      node(g, "Pad", {x, constantInts(g, "pads", {0, 0, 1, 2, 0, 0, 0, 1})}, {1, 4, 6, 9}); // 10
  pad->attrs.setString("mode", "edge");
  g.markOutput(pad->output(0));
  g.markOutput(
      node(g, "Max", {x, constant(g, "c1", {1}, {0.1f}), constant(g, "c6", {6}, c6)}, {1, 4, 5, 6})
          ->output(0)); // 11
  Node *pr = node(g, "PRelu", {x, constant(g, "slope", {4, 1, 1}, slope)}, {1, 4, 5, 6});
  Node *clip = node(g, "Clip",
                    {pr->output(0), constant(g, "lo", {}, {-0.05f}), constant(g, "hi", {}, {0.4f})},
                    {1, 4, 5, 6});
  Node *hs = node(g, "HardSigmoid", {clip->output(0)}, {1, 4, 5, 6});
  hs->attrs.setFloat("alpha", 0.3f);
  hs->attrs.setFloat("beta", 0.4f);
  Node *lr = node(g, "LeakyRelu", {hs->output(0)}, {1, 4, 5, 6}); // 12
  lr->attrs.setFloat("alpha", 0.2f);
  g.markOutput(lr->output(0));

  const std::vector<float> in = randomFloats(120, 21);
  std::vector<std::vector<float>> want(13);
  for (int c = 0; c < 4; ++c) {
    float sum = 0;
    for (int i = 0; i < 30; ++i)
      sum += in[c * 30 + i];
    want[0].push_back(sum / 30);
  }
  for (int c = 0; c < 4; ++c)
    for (int oh = 0; oh < 3; ++oh)
      for (int ow = 0; ow < 3; ++ow) {
        float sum = 0;
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw) {
            int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
            if (ih >= 0 && ih < 5 && iw >= 0 && iw < 6)
              sum += X(in, c, ih, iw);
          }
        want[1].push_back(sum / 9);
      }
  want[2].resize(120);
  for (int h = 0; h < 5; ++h)
    for (int w = 0; w < 6; ++w) {
      double v[4], mx = -1e30, se = 0;
      for (int c = 0; c < 4; ++c) {
        v[c] = (X(in, c, h, w) - mean[c]) / std::sqrt(var[c] + 1e-5) * scale[c] + shift[c];
        mx = std::max(mx, v[c]);
      }
      for (int c = 0; c < 4; ++c)
        se += std::exp(v[c] - mx);
      for (int c = 0; c < 4; ++c)
        want[2][(c * 5 + h) * 6 + w] = float(v[c] - mx - std::log(se));
    }
  for (int c = 0; c < 4; ++c)
    for (int h = 0; h < 5; ++h)
      for (int j = 0; j < 3; ++j) {
        float acc = 0;
        for (int k = 0; k < 6; ++k)
          acc += X(in, c, h, k) * B[k * 3 + j];
        want[3].push_back(acc);
      }
  for (int c = 0; c < 4; ++c)
    for (int h = 0; h < 5; ++h) {
      for (int w = 0; w < 2; ++w)
        want[4].push_back(X(in, c, h, w) * k2[w]);
    }
  for (int c = 0; c < 4; ++c)
    for (int h = 0; h < 5; ++h)
      for (int w = 2; w < 6; ++w)
        want[5].push_back(X(in, c, h, w));
  for (int c = 0; c < 4; ++c)
    for (int r : {3, 4})
      for (int w = 0; w < 6; ++w)
        want[6].push_back(std::tanh(X(in, c, r, w)));
  for (int h = 0; h < 5; ++h)
    for (int w = 0; w < 6; ++w) {
      float mx = -1e30f;
      for (int c = 0; c < 4; ++c)
        mx = std::max(mx, X(in, c, h, w));
      want[7].push_back(mx);
    }
  want[8].assign(2 * 9 * 11, 0.0f);
  for (int m = 0; m < 2; ++m)
    for (int i = 0; i < 99; ++i)
      want[8][m * 99 + i] = bt[m];
  for (int c = 0; c < 4; ++c)
    for (int m = 0; m < 2; ++m)
      for (int ih = 0; ih < 5; ++ih)
        for (int iw = 0; iw < 6; ++iw)
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              int oh = ih * 2 - 1 + kh, ow = iw * 2 - 1 + kw;
              if (oh >= 0 && oh < 9 && ow >= 0 && ow < 11)
                want[8][(m * 9 + oh) * 11 + ow] +=
                    X(in, c, ih, iw) * wt[((c * 2 + m) * 3 + kh) * 3 + kw];
            }
  auto coord = [](int o, int inLen) {
    double v = (o + 0.5) / 2.0 - 0.5;
    v = std::clamp(v, 0.0, double(inLen - 1));
    int i0 = int(std::floor(v));
    return std::tuple<int, int, double>(i0, std::min(i0 + 1, inLen - 1), v - i0);
  };
  for (int c = 0; c < 4; ++c)
    for (int oh = 0; oh < 10; ++oh)
      for (int ow = 0; ow < 12; ++ow) {
        auto [h0, h1, fh] = coord(oh, 5);
        auto [w0, w1, fw] = coord(ow, 6);
        double top = X(in, c, h0, w0) * (1 - fw) + X(in, c, h0, w1) * fw;
        double bot = X(in, c, h1, w0) * (1 - fw) + X(in, c, h1, w1) * fw;
        want[9].push_back(float(top * (1 - fh) + bot * fh));
      }
  for (int c = 0; c < 4; ++c)
    for (int h = 0; h < 6; ++h)
      for (int w = 0; w < 9; ++w)
        want[10].push_back(X(in, c, std::clamp(h - 1, 0, 4), std::clamp(w - 2, 0, 5)));
  for (int c = 0; c < 4; ++c)
    for (int h = 0; h < 5; ++h)
      for (int w = 0; w < 6; ++w) {
        const float v = X(in, c, h, w);
        want[11].push_back(std::max(std::max(v, 0.1f), c6[w]));
        float p = v < 0 ? v * slope[c] : v;
        p = std::clamp(p, -0.05f, 0.4f);
        p = std::clamp(0.3f * p + 0.4f, 0.0f, 1.0f);
        want[12].push_back(p >= 0 ? p : 0.2f * p);
      }

  MemoryPlan plan = simplePlan(g);
  for (CodegenOptLevel level : {CodegenOptLevel::O2, CodegenOptLevel::Os}) {
    CAPTURE(optLevelName(level));
    auto got = runAllOnHost(g, plan, "zoo", in, level);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      checkClose(got[i], want[i]);
    }
  }
}

TEST_CASE("host bundle: 3-D Conv and pools with a different stride, pad and dilation per axis") {
  // Every axis of bf_window3d_params differs from the others, so a field
  // swapped between axes (in the lowering or the kernels) changes the result.
  const int C = 2, M = 4, G = 2, D = 4, H = 5, W = 6;
  const int k[3] = {2, 3, 2}, s[3] = {1, 2, 3}, pb[3] = {0, 1, 1}, pe[3] = {1, 0, 1},
            dl[3] = {2, 1, 1}, in[3] = {D, H, W};
  int out[3];
  for (int a = 0; a < 3; ++a)
    out[a] = (in[a] + pb[a] + pe[a] - ((k[a] - 1) * dl[a] + 1)) / s[a] + 1;
  Graph g;
  g.name = "win3d";
  Value *x = g.addInput("x", f32({1, C, D, H, W}));
  const std::vector<float> w = randomFloats(size_t(M) * (C / G) * k[0] * k[1] * k[2], 31),
                           b = randomFloats(M, 32);
  Node *conv = node(
      g, "Conv", {x, constant(g, "w", {M, C / G, k[0], k[1], k[2]}, w), constant(g, "b", {M}, b)},
      {1, M, out[0], out[1], out[2]});
  Node *pool = node(g, "MaxPool", {x}, {1, C, out[0], out[1], out[2]});
  for (Node *n : {conv, pool}) {
    n->attrs.setInts("strides", {s[0], s[1], s[2]});
    n->attrs.setInts("pads", {pb[0], pb[1], pb[2], pe[0], pe[1], pe[2]});
    n->attrs.setInts("dilations", {dl[0], dl[1], dl[2]});
  }
  conv->attrs.setInt("group", G);
  pool->attrs.setInts("kernel_shape", {k[0], k[1], k[2]});
  g.markOutput(conv->output(0));
  g.markOutput(pool->output(0));
  const std::vector<float> input = randomFloats(size_t(C) * D * H * W, 33);
  // Reference: direct loops over every output position and tap.
  const int outVol = out[0] * out[1] * out[2];
  std::vector<float> wantConv(size_t(M) * outVol), wantPool(size_t(C) * outVol);
  for (int m = 0; m < M; ++m)
    for (int o = 0; o < outVol; ++o) {
      const int od = o / (out[1] * out[2]), oh = o / out[2] % out[1], ow = o % out[2];
      float acc = b[m];
      const int cg = C / G, g0 = m / (M / G) * cg;
      for (int ci = 0; ci < cg; ++ci)
        for (int kd = 0; kd < k[0]; ++kd)
          for (int kh = 0; kh < k[1]; ++kh)
            for (int kw = 0; kw < k[2]; ++kw) {
              const int id = od * s[0] - pb[0] + kd * dl[0], ih = oh * s[1] - pb[1] + kh * dl[1],
                        iw = ow * s[2] - pb[2] + kw * dl[2];
              if (id < 0 || id >= D || ih < 0 || ih >= H || iw < 0 || iw >= W)
                continue;
              const float v = input[((size_t(g0 + ci) * D + id) * H + ih) * W + iw];
              acc += w[(((size_t(m) * cg + ci) * k[0] + kd) * k[1] + kh) * k[2] + kw] * v;
            }
      wantConv[size_t(m) * outVol + o] = acc;
      if (m < C) { // the pool's plane m
        float pbest = -INFINITY;
        for (int kd = 0; kd < k[0]; ++kd)
          for (int kh = 0; kh < k[1]; ++kh)
            for (int kw = 0; kw < k[2]; ++kw) {
              const int id = od * s[0] - pb[0] + kd * dl[0], ih = oh * s[1] - pb[1] + kh * dl[1],
                        iw = ow * s[2] - pb[2] + kw * dl[2];
              if (id >= 0 && id < D && ih >= 0 && ih < H && iw >= 0 && iw < W)
                pbest = std::max(pbest, input[((size_t(m) * D + id) * H + ih) * W + iw]);
            }
        wantPool[size_t(m) * outVol + o] = pbest;
      }
    }
  MemoryPlan plan = simplePlan(g);
  const std::vector<std::vector<float>> got =
      runAllOnHost(g, plan, "win3d", input, CodegenOptLevel::O2);
  REQUIRE(got.size() == 2);
  checkClose(got[0], wantConv);
  checkClose(got[1], wantPool);
}
