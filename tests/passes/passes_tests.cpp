//===- passes_tests.cpp - Graph passes on hand-built graphs ----------------===//
//
// Every rewrite is checked numerically: the graph is built twice, once run as
// is (after plain type inference) and once after the pass, and the reference
// interpreter's outputs must agree.
//
//===----------------------------------------------------------------------===//
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/passes/Passes.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

using namespace bundlefit;

namespace {

TensorType floatType(const Shape &shape) {
  TensorType type;
  type.dtype = DType::Float32;
  type.shape = shape;
  return type;
}

std::vector<float> randomFloats(size_t count, unsigned seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> values(count);
  for (float &v : values)
    v = dist(rng);
  return values;
}

Value *floatConst(Graph &g, const std::string &name, const Shape &shape,
                  const std::vector<float> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return g.addConstant(name, floatType(shape), bytes);
}

Value *randomConst(Graph &g, const std::string &name, const Shape &shape, unsigned seed,
                   float low = -1.0f, float high = 1.0f) {
  return floatConst(g, name, shape, randomFloats(size_t(numElements(shape)), seed, low, high));
}

Value *intConst(Graph &g, const std::string &name, const Shape &shape,
                const std::vector<int64_t> &values) {
  TensorType type;
  type.dtype = DType::Int64;
  type.shape = shape;
  std::vector<uint8_t> bytes(values.size() * sizeof(int64_t));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return g.addConstant(name, type, bytes);
}

/// The four BN parameters (scale, B, mean, var) for `channels` channels.
std::vector<Value *> bnParams(Graph &g, int64_t channels, unsigned seed) {
  return {randomConst(g, "bn_scale", {channels}, seed, 0.5f, 1.5f),
          randomConst(g, "bn_bias", {channels}, seed + 1),
          randomConst(g, "bn_mean", {channels}, seed + 2),
          randomConst(g, "bn_var", {channels}, seed + 3, 0.1f, 2.0f)};
}

Node *addBatchNorm(Graph &g, Value *x, int64_t channels, const std::string &out,
                   unsigned seed = 40) {
  std::vector<Value *> params = bnParams(g, channels, seed);
  std::vector<Value *> inputs{x};
  inputs.insert(inputs.end(), params.begin(), params.end());
  Node *bn = g.addNode("BatchNormalization", "bn", inputs, {out});
  bn->attrs.setFloat("epsilon", 1e-3f);
  return bn;
}

using Builder = std::function<void(Graph &)>;
using Inputs = std::map<std::string, Tensor>;

/// Random inputs for every graph input of a freshly built graph.
Inputs randomInputs(const Builder &build) {
  Graph g;
  build(g);
  Inputs inputs;
  unsigned seed = 7;
  for (const Value *input : g.inputs())
    inputs[input->name] = Tensor::fromFloats(
        input->type.shape, randomFloats(size_t(input->type.numElements()), seed++, -2.0f, 2.0f));
  return inputs;
}

std::map<std::string, Tensor> runReference(const Builder &build, const Inputs &inputs) {
  Graph g;
  build(g);
  inferGraphTypes(g);
  return Interpreter(g).run(inputs);
}

double maxAbsDiff(const Tensor &a, const Tensor &b) {
  REQUIRE(a.type.shape == b.type.shape);
  double worst = 0;
  for (int64_t i = 0; i < a.numElements(); ++i)
    worst = std::max(worst, std::fabs(a.at(i) - b.at(i)));
  return worst;
}

/// Runs `pass` on a fresh graph and checks every output against the
/// unmodified graph. Returns the rewritten graph for structural checks.
/// `reference` builds the expected graph when `build`'s own graph cannot be
/// typed without folding (shape chains); by default it is `build`.
std::unique_ptr<Graph> checkPreservesOutputs(const Builder &build,
                                             const std::function<void(Graph &)> &pass,
                                             double tolerance = 1e-5,
                                             const Builder &reference = {}) {
  Inputs inputs = randomInputs(build);
  std::map<std::string, Tensor> expected = runReference(reference ? reference : build, inputs);
  auto g = std::make_unique<Graph>();
  build(*g);
  pass(*g);
  g->verify();
  std::map<std::string, Tensor> actual = Interpreter(*g).run(inputs);
  REQUIRE(actual.size() == expected.size());
  for (const auto &[name, tensor] : expected) {
    INFO("output " << name);
    REQUIRE(actual.count(name) == 1);
    CHECK(maxAbsDiff(actual.at(name), tensor) <= tolerance);
  }
  return g;
}

void defaultPasses(Graph &g) { runDefaultPasses(g); }
void noFusion(Graph &g) {
  PassOptions options;
  options.fuseActivations = false;
  runDefaultPasses(g, options);
}

std::vector<std::string> opTypes(const Graph &g) {
  std::vector<std::string> ops;
  for (const Node *node : g.nodes())
    ops.push_back(node->opType);
  return ops;
}

using Ops = std::vector<std::string>;

// --- Graph builders ------------------------------------------------------

/// x[1,cin,6,6] -> Conv(group) [-> BN] -> out
Builder convBn(int64_t cin, int64_t cout, int64_t group, bool withBias, bool withBn) {
  return [=](Graph &g) {
    Value *x = g.addInput("x", floatType({1, cin, 6, 6}));
    std::vector<Value *> inputs{x, randomConst(g, "w", {cout, cin / group, 3, 3}, 1)};
    if (withBias)
      inputs.push_back(randomConst(g, "b", {cout}, 2));
    Node *conv = g.addNode("Conv", "conv", inputs, {withBn ? "conv_out" : "out"});
    conv->attrs.setInt("group", group);
    conv->attrs.setInts("pads", {1, 1, 1, 1});
    if (withBn)
      g.markOutput(addBatchNorm(g, conv->output(), cout, "out")->output());
    else
      g.markOutput(conv->output());
  };
}

/// x[3,5] -> Gemm(transB) -> BN -> out
Builder gemmBn(bool transB, int biasRank) {
  return [=](Graph &g) {
    Value *x = g.addInput("x", floatType({3, 5}));
    Shape wShape = transB ? Shape{4, 5} : Shape{5, 4};
    std::vector<Value *> inputs{x, randomConst(g, "w", wShape, 3)};
    if (biasRank == 1)
      inputs.push_back(randomConst(g, "c", {4}, 4));
    else if (biasRank == 2)
      inputs.push_back(randomConst(g, "c", {1, 4}, 4));
    else if (biasRank == 0)
      inputs.push_back(randomConst(g, "c", {}, 4));
    Node *gemm = g.addNode("Gemm", "gemm", inputs, {"gemm_out"});
    gemm->attrs.setInt("transB", transB ? 1 : 0);
    gemm->attrs.setFloat("alpha", 0.75f);
    gemm->attrs.setFloat("beta", 1.5f);
    g.markOutput(addBatchNorm(g, gemm->output(), 4, "out")->output());
  };
}

} // namespace

// --- foldBatchNorm -------------------------------------------------------

TEST_CASE("foldBatchNorm folds BN into a Conv with and without bias") {
  for (bool withBias : {true, false}) {
    INFO("bias " << withBias);
    auto g = checkPreservesOutputs(convBn(2, 3, 1, withBias, true), [](Graph &g) {
      foldConstantsAndInferTypes(g);
      CHECK(foldBatchNorm(g) == 1);
    });
    CHECK(opTypes(*g) == Ops{"Conv"});
    CHECK(g->nodes()[0]->output()->name == "out");
    CHECK(g->nodes()[0]->inputs.size() == 3);
  }
}

TEST_CASE("foldBatchNorm folds BN into grouped and depthwise Conv") {
  checkPreservesOutputs(convBn(4, 6, 2, true, true), defaultPasses);
  auto g = checkPreservesOutputs(convBn(3, 3, 3, false, true), defaultPasses);
  CHECK(opTypes(*g) == Ops{"Conv"});
}

TEST_CASE("foldBatchNorm leaves the original weights alone when they are shared") {
  Builder build = [](Graph &g) {
    Value *x = g.addInput("x", floatType({1, 2, 4, 4}));
    Value *w = randomConst(g, "w", {2, 2, 1, 1}, 9);
    Node *conv1 = g.addNode("Conv", "conv1", {x, w}, {"c1"});
    Node *conv2 = g.addNode("Conv", "conv2", {x, w}, {"c2"});
    g.markOutput(addBatchNorm(g, conv1->output(), 2, "out1")->output());
    g.markOutput(conv2->output());
  };
  auto g = checkPreservesOutputs(build, defaultPasses);
  CHECK(opTypes(*g) == Ops{"Conv", "Conv"});
}

TEST_CASE("foldBatchNorm folds BN into Gemm (transB 0/1, bias [N], [1,N], scalar or none)") {
  for (bool transB : {false, true})
    for (int biasRank : {-1, 0, 1, 2}) {
      INFO("transB " << transB << " bias rank " << biasRank);
      auto g = checkPreservesOutputs(gemmBn(transB, biasRank), defaultPasses);
      CHECK(opTypes(*g) == Ops{"Gemm"});
    }
}

TEST_CASE("foldBatchNorm turns a standalone BN into Mul+Add") {
  Builder build = [](Graph &g) {
    Value *x = g.addInput("x", floatType({2, 3, 4, 5}));
    g.markOutput(addBatchNorm(g, x, 3, "out")->output());
  };
  auto g = checkPreservesOutputs(build, defaultPasses);
  CHECK(opTypes(*g) == Ops{"Mul", "Add"});
  CHECK(g->nodes()[1]->output()->name == "out");
  CHECK(g->nodes()[0]->input(1)->type.shape == Shape{3, 1, 1});
}

TEST_CASE("foldBatchNorm does not fold into a Conv whose output has another reader") {
  Builder build = [](Graph &g) {
    Value *x = g.addInput("x", floatType({1, 2, 4, 4}));
    Node *conv = g.addNode("Conv", "conv", {x, randomConst(g, "w", {2, 2, 1, 1}, 5)}, {"c"});
    g.markOutput(addBatchNorm(g, conv->output(), 2, "out")->output());
    g.markOutput(conv->output());
  };
  auto g = checkPreservesOutputs(build, defaultPasses);
  CHECK(opTypes(*g) == Ops{"Conv", "Mul", "Add"});
}

// --- foldConstantsAndInferTypes ------------------------------------------

TEST_CASE("foldConstantsAndInferTypes folds a Shape->Gather->Unsqueeze->Concat->Reshape chain") {
  Builder build = [](Graph &g) {
    Value *x = g.addInput("x", floatType({2, 3, 4}));
    Node *shape = g.addNode("Shape", "shape", {x}, {"shape"});
    Node *gather =
        g.addNode("Gather", "gather", {shape->output(), intConst(g, "zero", {}, {0})}, {"batch"});
    Node *unsqueeze = g.addNode("Unsqueeze", "unsqueeze",
                                {gather->output(), intConst(g, "axes", {1}, {0})}, {"batch1"});
    Node *concat = g.addNode("Concat", "concat",
                             {unsqueeze->output(), intConst(g, "minus1", {1}, {-1})}, {"newshape"});
    concat->attrs.setInt("axis", 0);
    Node *reshape = g.addNode("Reshape", "reshape", {x, concat->output()}, {"out"});
    g.markOutput(reshape->output());
  };
  Graph before;
  build(before);
  CHECK(before.numNodes() == 5);
  Builder reference = [](Graph &g) {
    Value *x = g.addInput("x", floatType({2, 3, 4}));
    g.markOutput(
        g.addNode("Reshape", "reshape", {x, intConst(g, "s", {2}, {2, -1})}, {"out"})->output());
  };
  auto g = checkPreservesOutputs(
      build, [](Graph &g) { CHECK(foldConstantsAndInferTypes(g) == 4); }, 1e-5, reference);
  REQUIRE(opTypes(*g) == Ops{"Reshape"});
  const Value *newShape = g->nodes()[0]->input(1);
  REQUIRE(newShape->isConstant());
  CHECK(newShape->toInts() == std::vector<int64_t>{2, -1});
  CHECK(g->outputs()[0]->type.shape == Shape{2, 12});
}

TEST_CASE("foldConstantsAndInferTypes folds NonZero of a constant into its indices") {
  // ONNX's test_nonzero_example data by hand: [[1, 0], [1, 1]] has nonzeros
  // at (0,0), (1,0), (1,1) -> rows [0, 1, 1] and columns [0, 0, 1].
  Graph g;
  Node *nonZero =
      g.addNode("NonZero", "nz", {floatConst(g, "x", {2, 2}, {1, 0, 1, 1})}, {"indices"});
  TensorType int64Type;
  int64Type.dtype = DType::Int64;
  int64Type.shape = {2, 3};
  Value *x = g.addInput("y", int64Type);
  Node *add = g.addNode("Add", "add", {nonZero->output(), x}, {"out"});
  g.markOutput(add->output());
  CHECK(foldConstantsAndInferTypes(g) == 1);
  const Value *indices = g.nodes()[0]->input(0);
  REQUIRE(indices->isConstant());
  CHECK(indices->type.shape == Shape{2, 3});
  CHECK(indices->toInts() == std::vector<int64_t>{0, 1, 1, 0, 0, 1});
}

TEST_CASE("NonZero of a graph input is refused: its output shape depends on the values") {
  Graph g;
  Node *nonZero = g.addNode("NonZero", "nz", {g.addInput("x", floatType({2, 2}))}, {"indices"});
  g.markOutput(nonZero->output());
  CHECK_THROWS_WITH(foldConstantsAndInferTypes(g),
                    doctest::Contains("must be a constant: NonZero's output shape"));
}

TEST_CASE("an LSTM's cell_clip is refused, not ignored: it is not ONNX's") {
  // TFLite's LSTMs (cell_clip included) are TfliteLstm nodes; the IR's LSTM
  // no longer clips, so a model that carries the attribute is told so.
  Graph g;
  Node *lstm = g.addNode("LSTM", "lstm",
                         {g.addInput("x", floatType({2, 1, 3})),
                          floatConst(g, "w", {1, 8, 3}, std::vector<float>(24, 0.5f)),
                          floatConst(g, "r", {1, 8, 2}, std::vector<float>(16, 0.5f))},
                         {"y"});
  lstm->attrs.setInt("hidden_size", 2);
  lstm->attrs.setFloat("cell_clip", 0.5f);
  g.markOutput(lstm->output());
  CHECK_THROWS_WITH(foldConstantsAndInferTypes(g),
                    doctest::Contains("'lstm' (LSTM): attribute 'cell_clip' is not supported"));
}

TEST_CASE("foldConstantsAndInferTypes folds ConstantOfShape, Range and Cast") {
  Builder build = [](Graph &g) {
    Value *x = g.addInput("x", floatType({2, 4}));
    Node *fill = g.addNode("ConstantOfShape", "fill", {intConst(g, "dims", {2}, {2, 4})}, {"ones"});
    Attribute value;
    value.kind = Attribute::Kind::Floats;
    value.floats = {1.5f};
    fill->attrs.set("value", value);
    Node *range = g.addNode("Range", "range",
                            {intConst(g, "start", {}, {0}), intConst(g, "limit", {}, {4}),
                             intConst(g, "delta", {}, {1})},
                            {"iota"});
    Node *cast = g.addNode("Cast", "cast", {range->output()}, {"iota_f"});
    cast->attrs.setInt("to", 1); // ONNX FLOAT
    Node *add1 = g.addNode("Add", "add1", {x, fill->output()}, {"a"});
    Node *add2 = g.addNode("Add", "add2", {add1->output(), cast->output()}, {"out"});
    g.markOutput(add2->output());
  };
  auto g = checkPreservesOutputs(build, defaultPasses);
  CHECK(opTypes(*g) == Ops{"Add", "Add"});
}

TEST_CASE("a folded graph output stays computed under its name") {
  Builder build = [](Graph &g) {
    Value *x = g.addInput("x", floatType({2, 3, 4}));
    Node *shape = g.addNode("Shape", "shape", {x}, {"dims"});
    Node *relu = g.addNode("Relu", "relu", {x}, {"y"});
    g.markOutput(shape->output());
    g.markOutput(relu->output());
  };
  auto g = checkPreservesOutputs(build, defaultPasses);
  CHECK(opTypes(*g) == Ops{"Identity", "Relu"});
  const Value *dims = g->findValue("dims");
  REQUIRE(dims);
  CHECK(dims->isGraphOutput);
  CHECK(dims->producer != nullptr);
  CHECK(dims->producer->input(0)->isConstant());
  Inputs inputs = randomInputs(build);
  auto out = Interpreter(*g).run(inputs);
  CHECK(out.at("dims").at(2) == 4);
  // The pipeline is at a fixed point: a second run changes nothing.
  PassStats again = runDefaultPasses(*g);
  CHECK(again.folded == 0);
  CHECK(again.nodesAfter == again.nodesBefore);
  CHECK(opTypes(*g) == Ops{"Identity", "Relu"});
}

TEST_CASE("a folded graph output that another node reads still feeds it") {
  Builder build = [](Graph &g) {
    Value *x = g.addInput("x", floatType({2, 3}));
    Node *shape = g.addNode("Shape", "shape", {x}, {"dims"});
    Node *reshape = g.addNode("Reshape", "reshape", {x, shape->output()}, {"y"});
    g.markOutput(shape->output());
    g.markOutput(reshape->output());
  };
  Builder reference = [](Graph &g) {
    Value *x = g.addInput("x", floatType({2, 3}));
    g.markOutput(g.addNode("Shape", "shape", {x}, {"dims"})->output());
    g.markOutput(
        g.addNode("Reshape", "reshape", {x, intConst(g, "s", {2}, {2, 3})}, {"y"})->output());
  };
  auto g = checkPreservesOutputs(build, defaultPasses, 1e-5, reference);
  CHECK(opTypes(*g) == Ops{"Identity", "Reshape"});
  CHECK(g->findValue("y")->producer->input(1)->isConstant());
}

// --- eliminateIdentities / eliminateDeadNodes ------------------------------

TEST_CASE("eliminateIdentities removes Identity and Dropout between nodes") {
  Builder build = [](Graph &g) {
    Value *x = g.addInput("x", floatType({2, 3}));
    Node *relu = g.addNode("Relu", "relu", {x}, {"r"});
    Node *id = g.addNode("Identity", "id", {relu->output()}, {"i"});
    Node *drop = g.addNode("Dropout", "drop", {id->output()}, {"d"});
    Node *neg =
        g.addNode("Add", "neg", {drop->output(), floatConst(g, "half", {}, {0.5f})}, {"out"});
    g.markOutput(neg->output());
  };
  auto g = checkPreservesOutputs(build, [](Graph &g) {
    foldConstantsAndInferTypes(g);
    CHECK(eliminateIdentities(g) == 2);
  });
  CHECK(opTypes(*g) == Ops{"Relu", "Add"});
}

TEST_CASE("eliminateIdentities keeps a graph output's name") {
  Builder build = [](Graph &g) {
    Value *x = g.addInput("x", floatType({2, 3}));
    Node *relu = g.addNode("Relu", "relu", {x}, {"r"});
    Node *id = g.addNode("Identity", "id", {relu->output()}, {"out"});
    g.markOutput(id->output());
  };
  auto g = checkPreservesOutputs(build, defaultPasses);
  REQUIRE(opTypes(*g) == Ops{"Relu"});
  CHECK(g->nodes()[0]->output()->name == "out");
  CHECK(g->outputs()[0]->name == "out");
  CHECK(g->findValue("r") == nullptr);
}

TEST_CASE("eliminateIdentities keeps the node when the input has other readers or is an input") {
  Builder build = [](Graph &g) {
    Value *x = g.addInput("x", floatType({2, 3}));
    Node *relu = g.addNode("Relu", "relu", {x}, {"r"});
    Node *id1 = g.addNode("Identity", "id1", {relu->output()}, {"out1"});
    Node *id2 = g.addNode("Identity", "id2", {x}, {"out2"});
    g.markOutput(id1->output());
    g.markOutput(relu->output());
    g.markOutput(id2->output());
  };
  auto g = checkPreservesOutputs(build, defaultPasses);
  CHECK(opTypes(*g) == Ops{"Relu", "Identity", "Identity"});
}

TEST_CASE("eliminateDeadNodes removes unused chains but not graph outputs") {
  Builder build = [](Graph &g) {
    Value *x = g.addInput("x", floatType({2, 3}));
    Node *a = g.addNode("Relu", "a", {x}, {"a"});
    g.addNode("Tanh", "b", {a->output()}, {"b"}); // dead, and makes `a` dead
    Node *c = g.addNode("Sigmoid", "c", {x}, {"out"});
    g.markOutput(c->output());
  };
  auto g = checkPreservesOutputs(build, [](Graph &g) {
    foldConstantsAndInferTypes(g);
    CHECK(eliminateDeadNodes(g) == 2);
  });
  CHECK(opTypes(*g) == Ops{"Sigmoid"});
  CHECK(g->findValue("a") == nullptr);
}

// --- fuseActivations -----------------------------------------------------

namespace {

/// x -> producer -> activation(consumer-facing value "act") -> Add 0.5 -> out
Builder producerThen(const std::string &producer, const std::string &activation,
                     const std::function<void(Graph &, Node &)> &configure = {}) {
  return [=](Graph &g) {
    Node *p = nullptr;
    if (producer == "Conv") {
      Value *x = g.addInput("x", floatType({1, 2, 5, 5}));
      p = g.addNode("Conv", "p",
                    {x, randomConst(g, "w", {3, 2, 3, 3}, 11), randomConst(g, "b", {3}, 12)},
                    {"p_out"});
    } else if (producer == "Gemm") {
      Value *x = g.addInput("x", floatType({3, 5}));
      p = g.addNode("Gemm", "p", {x, randomConst(g, "w", {4, 5}, 13), randomConst(g, "c", {4}, 14)},
                    {"p_out"});
      p->attrs.setInt("transB", 1);
    } else {
      Value *x = g.addInput("x", floatType({2, 3, 5}));
      p = g.addNode("MatMul", "p", {x, randomConst(g, "w", {5, 4}, 15)}, {"p_out"});
    }
    Node *act = g.addNode(activation, "act", {p->output()}, {"act"});
    if (configure)
      configure(g, *act);
    Node *neg =
        g.addNode("Add", "neg", {act->output(), floatConst(g, "half", {}, {0.5f})}, {"out"});
    g.markOutput(neg->output());
  };
}

void fuseOnly(Graph &g) {
  foldConstantsAndInferTypes(g);
  CHECK(fuseActivations(g) == 1);
}

} // namespace

TEST_CASE("fuseActivations fuses every supported activation into Conv, Gemm and MatMul") {
  auto clip = [](Graph &g, Node &n) {
    n.inputs.push_back(floatConst(g, "lo", {}, {-0.25f}));
    n.inputs.push_back(floatConst(g, "hi", {}, {0.5f}));
  };
  auto leaky = [](Graph &, Node &n) { n.attrs.setFloat("alpha", 0.2f); };
  auto hardSigmoid = [](Graph &, Node &n) {
    n.attrs.setFloat("alpha", 0.3f);
    n.attrs.setFloat("beta", 0.4f);
  };
  struct Case {
    std::string activation;
    std::function<void(Graph &, Node &)> configure;
  };
  std::vector<Case> cases{{"Relu", {}},      {"Clip", clip},      {"LeakyRelu", leaky},
                          {"Sigmoid", {}},   {"Tanh", {}},        {"HardSigmoid", hardSigmoid},
                          {"HardSwish", {}}, {"HardSigmoid", {}}, {"LeakyRelu", {}},
                          {"Mish", {}}};
  for (const std::string producer : {"Conv", "Gemm", "MatMul"})
    for (const Case &c : cases) {
      INFO(producer << " + " << c.activation);
      auto g = checkPreservesOutputs(producerThen(producer, c.activation, c.configure), fuseOnly);
      REQUIRE(opTypes(*g) == Ops{producer, "Add"});
      const Node *p = g->nodes()[0];
      CHECK(p->attrs.getString("activation", "") == c.activation);
      CHECK(p->output()->name == "act");
    }
}

TEST_CASE("fuseActivations fuses x*Sigmoid(x) and x*HardSigmoid(x) into the producer") {
  struct Case {
    const char *gate;
    const char *fused;
    bool gateFirst;
  };
  for (const Case c : {Case{"Sigmoid", "Silu", false}, Case{"HardSigmoid", "XHardSigmoid", true}})
    for (const std::string producer : {"Conv", "Gemm"}) {
      INFO(producer << " + x*" << c.gate << "(x)");
      Builder build = [&](Graph &g) {
        Node *p;
        if (producer == "Conv") {
          Value *x = g.addInput("x", floatType({1, 2, 5, 5}));
          p = g.addNode("Conv", "p", {x, randomConst(g, "w", {3, 2, 3, 3}, 11)}, {"p_out"});
        } else {
          Value *x = g.addInput("x", floatType({3, 5}));
          p = g.addNode("Gemm", "p", {x, randomConst(g, "w", {5, 4}, 13)}, {"p_out"});
        }
        Node *gate = g.addNode(c.gate, "gate", {p->output()}, {"gate"});
        if (std::string(c.gate) == "HardSigmoid")
          gate->attrs.setFloat("alpha", 1.0f / 6.0f);
        std::vector<Value *> operands = {p->output(), gate->output()};
        if (c.gateFirst)
          std::swap(operands[0], operands[1]);
        Node *mul = g.addNode("Mul", "mul", operands, {"act"});
        g.markOutput(
            g.addNode("Add", "add", {mul->output(), floatConst(g, "half", {}, {0.5f})}, {"out"})
                ->output());
      };
      auto g = checkPreservesOutputs(build, fuseOnly);
      REQUIRE(opTypes(*g) == Ops{producer, "Add"});
      CHECK(g->nodes()[0]->attrs.getString("activation", "") == c.fused);
      CHECK(g->nodes()[0]->output()->name == "act");
    }
}

/// x -> Relu -> GELU spelled as exporters write it -> out. `form`: 0 torch's
/// erf export Mul(Mul(x, 1 + Erf(x / sqrt 2)), 0.5); 1 the same with
/// Mul(x, 0.5) first and x * 0.70710677; 2 the tanh form with Pow(x, 3);
/// 3 the tanh form with x * x * x, constants first.
Builder geluChain(int form, bool extraReader = false) {
  return [=](Graph &g) {
    Value *in = g.addInput("x", floatType({2, 3, 4}));
    Value *x = g.addNode("Relu", "relu", {in}, {"r"})->output();
    auto c = [&](const char *name, float v) { return floatConst(g, name, {}, {v}); };
    auto op = [&](const char *type, const char *name, std::vector<Value *> in) {
      return g.addNode(type, name, in, {std::string(name) + "_out"})->output();
    };
    Value *f;
    if (form <= 1) {
      Value *scaled = form == 0 ? op("Div", "div", {x, c("sqrt2", 1.4142135f)})
                                : op("Mul", "div", {x, c("rsqrt2", 0.70710677f)});
      f = op("Erf", "erf", {scaled});
    } else {
      Value *cube = form == 2 ? op("Pow", "pow", {x, c("three", 3.0f)})
                              : op("Mul", "cube", {c("dummy_one", 1.0f), op("Mul", "sq", {x, x})});
      if (form == 3) // x * (x * x) times the 1 above: a product of three x.
        cube = op("Mul", "cube3", {cube, x});
      Value *term = op("Mul", "kappa", {c("k", 0.044715f), cube});
      Value *inner = op("Add", "inner", {x, term});
      f = op("Tanh", "tanh", {op("Mul", "beta", {c("b", 0.7978846f), inner})});
    }
    Value *gate = op("Add", "plus1", {c("one", 1.0f), f});
    Value *y = form == 0 ? op("Mul", "half", {op("Mul", "xg", {x, gate}), c("h", 0.5f)})
                         : op("Mul", "xg", {op("Mul", "half", {c("h", 0.5f), x}), gate});
    if (extraReader) // f is also read elsewhere: the chain must stay.
      g.markOutput(op("Neg", "neg", {f}));
    g.markOutput(op("Neg", "out", {y}));
  };
}

TEST_CASE("fuseGelu turns exported erf and tanh GELU chains into one Gelu") {
  for (int form = 0; form < 4; ++form) {
    INFO("form " << form);
    auto g = checkPreservesOutputs(geluChain(form), defaultPasses, 1e-6);
    REQUIRE(opTypes(*g) == Ops{"Relu", "Gelu", "Neg"});
    CHECK(g->nodes()[1]->attrs.getString("approximate", "") == (form <= 1 ? "none" : "tanh"));
  }
  // A chain value with another reader is left as written.
  auto g = checkPreservesOutputs(geluChain(0, true), defaultPasses, 1e-6);
  const Ops ops = opTypes(*g);
  CHECK(std::count(ops.begin(), ops.end(), "Gelu") == 0);
}

TEST_CASE("fuseGelu on a 20,000-Mul chain: no match, each product expanded a few nodes deep") {
  // Unbounded, every root flattens the whole chain below it: 2e8 steps and
  // a 20,000-frame recursion.
  Graph g;
  Value *v = g.addInput("x", floatType({4}));
  Value *c = floatConst(g, "c", {}, {0.5f});
  for (int i = 0; i < 20000; ++i)
    v = g.addNode("Mul", "m" + std::to_string(i), {v, c}, {"v" + std::to_string(i)})->output();
  g.markOutput(v);
  inferGraphTypes(g);
  const auto start = std::chrono::steady_clock::now();
  CHECK(fuseGelu(g) == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
}

TEST_CASE("fuseActivations stores Clip without bounds as +-FLT_MAX") {
  auto minOnly = [](Graph &g, Node &n) { n.inputs.push_back(floatConst(g, "lo", {}, {0.0f})); };
  auto g = checkPreservesOutputs(producerThen("Conv", "Clip", minOnly), fuseOnly);
  const Node *p = g->nodes()[0];
  CHECK(p->attrs.getFloat("activation_min", 1.0f) == 0.0f);
  CHECK(p->attrs.getFloat("activation_max", 0.0f) == FLT_MAX);
  auto infinite = [](Graph &g, Node &n) {
    n.inputs.push_back(floatConst(g, "lo", {}, {-INFINITY}));
    n.inputs.push_back(floatConst(g, "hi", {}, {6.0f}));
  };
  g = checkPreservesOutputs(producerThen("Conv", "Clip", infinite), fuseOnly);
  CHECK(g->nodes()[0]->attrs.getFloat("activation_min", 0.0f) == -FLT_MAX);
  CHECK(g->nodes()[0]->attrs.getFloat("activation_max", 0.0f) == 6.0f);
}

TEST_CASE("fuseActivations leaves producers with other readers or graph outputs alone") {
  Builder twoReaders = [](Graph &g) {
    Value *x = g.addInput("x", floatType({3, 5}));
    Node *mm = g.addNode("MatMul", "mm", {x, randomConst(g, "w", {5, 4}, 1)}, {"mm"});
    Node *relu = g.addNode("Relu", "relu", {mm->output()}, {"r"});
    Node *add = g.addNode("Add", "add", {mm->output(), relu->output()}, {"out"});
    g.markOutput(add->output());
  };
  auto g = checkPreservesOutputs(twoReaders, defaultPasses);
  CHECK(opTypes(*g) == Ops{"MatMul", "Relu", "Add"});

  Builder producerIsOutput = [](Graph &g) {
    Value *x = g.addInput("x", floatType({3, 5}));
    Node *mm = g.addNode("MatMul", "mm", {x, randomConst(g, "w", {5, 4}, 1)}, {"mm"});
    Node *relu = g.addNode("Relu", "relu", {mm->output()}, {"r"});
    g.markOutput(mm->output());
    g.markOutput(relu->output());
  };
  g = checkPreservesOutputs(producerIsOutput, defaultPasses);
  CHECK(opTypes(*g) == Ops{"MatMul", "Relu"});
}

TEST_CASE("fusion into a graph output keeps the output's name") {
  Builder build = [](Graph &g) {
    Value *x = g.addInput("x", floatType({3, 5}));
    Node *gemm = g.addNode("Gemm", "gemm", {x, randomConst(g, "w", {5, 4}, 1)}, {"g"});
    Node *relu = g.addNode("Relu", "relu", {gemm->output()}, {"logits"});
    g.markOutput(relu->output());
  };
  auto g = checkPreservesOutputs(build, defaultPasses);
  REQUIRE(opTypes(*g) == Ops{"Gemm"});
  CHECK(g->outputs()[0]->name == "logits");
  CHECK(g->outputs()[0]->producer == g->nodes()[0]);
}

// --- runDefaultPasses ------------------------------------------------------

TEST_CASE("runDefaultPasses: Conv->BN->Relu becomes one Conv; fusion can be turned off") {
  Builder build = [](Graph &g) {
    convBn(2, 4, 1, true, true)(g);
    // Re-route: out (BN) -> Relu -> final graph output.
    Value *bnOut = g.findValue("out");
    Node *relu = g.addNode("Relu", "relu", {bnOut}, {"final"});
    Node *id = g.addNode("Identity", "id", {relu->output()}, {"y"});
    g.replaceAllUsesWith(bnOut, id->output());
    relu->inputs[0] = bnOut;
  };
  auto g = checkPreservesOutputs(build, defaultPasses);
  REQUIRE(opTypes(*g) == Ops{"Conv"});
  CHECK(g->nodes()[0]->attrs.getString("activation", "") == "Relu");
  CHECK(g->outputs()[0]->name == "y");

  g = checkPreservesOutputs(build, noFusion);
  CHECK(opTypes(*g) == Ops{"Conv", "Relu"});

  Graph stats;
  build(stats);
  PassStats s = runDefaultPasses(stats);
  CHECK(s.nodesBefore == 4);
  CHECK(s.nodesAfter == 1);
  CHECK(s.batchNormsFolded == 1);
  CHECK(s.activationsFused == 1);
  CHECK(s.identitiesRemoved == 1);
  CHECK(describePassStats(s).find("4 -> 1 nodes") != std::string::npos);
}

// --- Work on long chains: counted (Graph::nodesVisited), never timed -----

TEST_CASE("Graph: erasures and insertions are applied together at the next read of the order") {
  Graph g;
  Value *last = g.addInput("x", floatType({1, 4}));
  std::vector<Node *> relus;
  for (int i = 0; i < 6; ++i) {
    relus.push_back(g.addNode("Relu", "r" + std::to_string(i), {last}, {"t" + std::to_string(i)}));
    last = relus.back()->output();
  }
  g.markOutput(last);
  const size_t compactions = g.compactions();
  g.eraseNode(relus[1]);
  g.eraseNode(relus[3]);
  Node *a = g.insertNodeBefore(relus[2], "Neg", "a", {relus[0]->output()}, {"a"});
  g.insertNodeBefore(a, "Neg", "b", {relus[0]->output()}, {"b"});        // Before a pending node.
  g.insertNodeBefore(relus[3], "Neg", "c", {relus[0]->output()}, {"c"}); // Before an erased one.
  g.addNode("Neg", "d", {relus[0]->output()}, {"d"});
  CHECK(g.findNode("r1") == nullptr);
  CHECK(opTypes(g) == Ops{"Relu", "Neg", "Neg", "Relu", "Neg", "Relu", "Relu", "Neg"});
  std::vector<std::string> names;
  for (const Node *n : g.nodes())
    names.push_back(n->name);
  CHECK(names == std::vector<std::string>{"r0", "b", "a", "r2", "c", "r4", "r5", "d"});
  CHECK(g.compactions() == compactions + 1); // One rebuild for all five edits.
}

TEST_CASE(
    "eliminateIdentities and foldBatchNorm visit a long chain's nodes a bounded number of times") {
  // Asking the graph once per node (users, hasSingleReader, a graph-wide
  // replaceReads, a vector erase per removed node) visits every node each
  // time: about n^2 / 3 visits on this chain instead of a few n.
  constexpr int kTriples = 1000;
  Graph g;
  Value *last = g.addInput("x", floatType({1, 4}));
  for (int i = 0; i < kTriples; ++i) {
    const std::string k = std::to_string(i);
    last = g.addNode("Relu", "relu" + k, {last}, {"r" + k})->output();
    last = g.addNode("Identity", "id" + k, {last}, {"i" + k})->output();
    last = addBatchNorm(g, last, 4, "b" + k, unsigned(i))->output();
  }
  g.markOutput(last);
  inferGraphTypes(g);
  const size_t n = g.numNodes();
  const size_t before = g.nodesVisited();
  CHECK(eliminateIdentities(g) == size_t(kTriples));
  CHECK(foldBatchNorm(g) == size_t(kTriples)); // Each into a Mul and an Add.
  CHECK(g.numNodes() == n);
  CHECK(g.nodesVisited() - before <= 16 * n);
  g.verify();
}
