//===- FoldBatchNorm.cpp - Fold inference BatchNormalization ---------------===//
//
// Why: at inference BatchNormalization is the per-channel affine map
//   y = scale * (x - mean) / sqrt(var + eps) + B  =  s[c] * x + t[c]
// After a Conv or Gemm it costs nothing: scaling the producer's weights per
// output channel by s and its bias to b*s + t gives the same result with one
// node less and no extra pass over the activations (which on a
// microcontroller is a full read+write of the tensor in RAM). A BN that
// cannot be folded still becomes a plain Mul+Add with constant operands, so
// code generation needs no BatchNormalization kernel.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/passes/Passes.h"

#include "PassUtils.h"
#include "bundlefit/ops/OpRegistry.h"

#include <cmath>

namespace bundlefit {
namespace {

using pass_utils::addFloatConstant;
using pass_utils::isFloatConstant;
using ReadCounts = std::map<const Value *, size_t>;

/// Per-channel y = s * x + t of one BatchNormalization node.
struct ChannelAffine {
  std::vector<double> s, t;
};

/// The affine form of `bn`, or false when its parameters are not constants.
bool readBatchNorm(const ReadCounts &reads, const Node &bn, ChannelAffine &affine) {
  for (size_t i = 1; i <= 4; ++i)
    if (!isFloatConstant(bn.input(i)))
      return false;
  if (bn.attrs.getInt("training_mode", 0) != 0)
    return false;
  for (size_t i = 1; i < bn.outputs.size(); ++i)
    if (bn.outputs[i] && (bn.outputs[i]->isGraphOutput || pass_utils::isRead(reads, bn.outputs[i])))
      return false; // training outputs (running mean/var) are not supported
  std::vector<float> scale = bn.input(1)->toFloats(), bias = bn.input(2)->toFloats(),
                     mean = bn.input(3)->toFloats(), var = bn.input(4)->toFloats();
  size_t channels = scale.size();
  if (bias.size() != channels || mean.size() != channels || var.size() != channels)
    return false;
  double epsilon = bn.attrs.getFloat("epsilon", 1e-5f);
  affine.s.resize(channels);
  affine.t.resize(channels);
  for (size_t c = 0; c < channels; ++c) {
    affine.s[c] = double(scale[c]) / std::sqrt(double(var[c]) + epsilon);
    affine.t[c] = double(bias[c]) - double(mean[c]) * affine.s[c];
  }
  return true;
}

void setInput(Node &node, size_t index, Value *value) {
  if (node.inputs.size() <= index)
    node.inputs.resize(index + 1, nullptr);
  node.inputs[index] = value;
}

/// Conv: W is [M, C/group, k...]; output channel m is row m, whatever group.
bool foldIntoConv(Graph &graph, Node &conv, const ChannelAffine &bn) {
  const Value *weight = conv.input(1);
  const Value *bias = conv.input(2);
  if (!isFloatConstant(weight) || weight->type.rank() < 1)
    return false;
  if (bias && !isFloatConstant(bias))
    return false;
  int64_t channels = weight->type.shape[0];
  if (channels != int64_t(bn.s.size()) || (bias && bias->type.numElements() != channels))
    return false;
  std::vector<float> w = weight->toFloats();
  int64_t perChannel = channels ? int64_t(w.size()) / channels : 0;
  for (int64_t m = 0; m < channels; ++m)
    for (int64_t i = 0; i < perChannel; ++i)
      w[size_t(m * perChannel + i)] = float(w[size_t(m * perChannel + i)] * bn.s[size_t(m)]);
  std::vector<float> b(size_t(channels), 0.0f);
  if (bias) {
    std::vector<float> old = bias->toFloats();
    for (size_t m = 0; m < b.size(); ++m)
      b[m] = float(old[m] * bn.s[m] + bn.t[m]);
  } else {
    for (size_t m = 0; m < b.size(); ++m)
      b[m] = float(bn.t[m]);
  }
  // New constants: the old weight may be shared with another node.
  setInput(conv, 1, addFloatConstant(graph, weight->name + "_bnfolded", weight->type.shape, w));
  setInput(conv, 2, addFloatConstant(graph, conv.name + "_bias_bnfolded", {channels}, b));
  return true;
}

/// Gemm: Y = alpha * A' * B' + beta * C with Y [M,N]; BN scales column n.
/// C must broadcast per column ([], [1], [N], [1,N]); it becomes [N], beta 1.
bool foldIntoGemm(Graph &graph, Node &gemm, const ChannelAffine &bn) {
  const Value *weight = gemm.input(1);
  const Value *bias = gemm.input(2);
  if (!isFloatConstant(weight) || weight->type.rank() != 2)
    return false;
  if (bias && !isFloatConstant(bias))
    return false;
  bool transB = gemm.attrs.getInt("transB", 0) != 0;
  int64_t rows = weight->type.shape[0], cols = weight->type.shape[1];
  int64_t n = transB ? rows : cols;
  if (n != int64_t(bn.s.size()))
    return false;
  std::vector<float> c;
  if (bias) {
    const Shape &shape = bias->type.shape;
    int64_t count = bias->type.numElements();
    bool perColumn = (count == 1 && shape.size() <= 2) ||
                     (count == n && (shape.size() == 1 || (shape.size() == 2 && shape[0] == 1)));
    if (!perColumn)
      return false;
    c = bias->toFloats();
  }
  std::vector<float> w = weight->toFloats();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k) {
      size_t column = size_t(transB ? r : k);
      float &element = w[size_t(r * cols + k)];
      element = float(element * bn.s[column]);
    }
  double beta = gemm.attrs.getFloat("beta", 1.0f);
  std::vector<float> newBias(static_cast<size_t>(n));
  for (size_t j = 0; j < newBias.size(); ++j) {
    double old = c.empty() ? 0.0 : double(c.size() == 1 ? c[0] : c[j]);
    newBias[j] = float(bn.s[j] * beta * old + bn.t[j]);
  }
  setInput(gemm, 1, addFloatConstant(graph, weight->name + "_bnfolded", weight->type.shape, w));
  setInput(gemm, 2, addFloatConstant(graph, gemm.name + "_bias_bnfolded", {n}, newBias));
  gemm.attrs.setFloat("beta", 1.0f);
  return true;
}

bool foldIntoProducer(Graph &graph, const ReadCounts &reads, Node &bn,
                      const ChannelAffine &affine) {
  Value *x = bn.input(0);
  if (!pass_utils::hasSingleReader(reads, x, &bn) || x->type.dtype != DType::Float32)
    return false;
  Node *producer = x->producer;
  if (producer->attrs.has("activation") || producer->output(0) != x)
    return false;
  bool folded = false;
  if (producer->is(Op::Conv))
    folded = foldIntoConv(graph, *producer, affine);
  else if (producer->is(Op::Gemm) && x->type.rank() == 2)
    folded = foldIntoGemm(graph, *producer, affine);
  if (!folded)
    return false;
  pass_utils::takeOverOutput(producer, 0, bn.output(0));
  return true;
}

/// y = x * s + t with s, t of shape [C,1,...,1] broadcasting over [N,C,...].
bool lowerToMulAdd(Graph &graph, ReadCounts &reads, Node &bn, const ChannelAffine &affine) {
  Value *x = bn.input(0);
  if (!x->typeKnown || x->type.dtype != DType::Float32 || x->type.rank() < 2 ||
      x->type.shape[1] != int64_t(affine.s.size()))
    return false;
  Shape shape(x->type.rank() - 1, 1);
  shape[0] = int64_t(affine.s.size());
  std::vector<float> s(affine.s.begin(), affine.s.end()), t(affine.t.begin(), affine.t.end());
  Value *scale = addFloatConstant(graph, bn.name + "_scale", shape, s);
  Value *shift = addFloatConstant(graph, bn.name + "_shift", shape, t);
  Node *mul = graph.insertNodeBefore(&bn, Op::Mul, bn.name + "_mul", {x, scale},
                                     {bn.output(0)->name + "_scaled"});
  inferNodeTypes(*mul);
  pass_utils::addReads(*mul, reads);
  Node *add = graph.insertNodeBefore(&bn, Op::Add, bn.name + "_add", {mul->output(0), shift},
                                     {bn.output(0)->name + "_tmp"});
  pass_utils::takeOverOutput(add, 0, bn.output(0));
  inferNodeTypes(*add);
  pass_utils::addReads(*add, reads);
  return true;
}

} // namespace

size_t foldBatchNorm(Graph &graph) {
  size_t rewritten = 0;
  // Counted once and kept current: asking the graph per node (users,
  // hasSingleReader) made the pass quadratic on long chains.
  ReadCounts reads = pass_utils::countReads(graph);
  for (Node *node : graph.nodes()) {
    if (!node->is(Op::BatchNormalization) || !node->input(0) || !node->output(0))
      continue;
    ChannelAffine affine;
    if (!readBatchNorm(reads, *node, affine))
      continue;
    if (!foldIntoProducer(graph, reads, *node, affine) &&
        !lowerToMulAdd(graph, reads, *node, affine))
      continue;
    pass_utils::eraseCounted(graph, node, reads);
    ++rewritten;
  }
  graph.removeUnusedValues();
  return rewritten;
}

} // namespace bundlefit
