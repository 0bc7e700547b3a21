//===- FoldQdq.cpp - Remove Q/DQ nodes, keep their parameters --------------===//
#include "bundlefit/quant/FoldQdq.h"

#include "bundlefit/ir/LinearQuant.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace bundlefit {

namespace {

class QdqFolder {
public:
  QdqFolder(Graph &graph, const std::string &path) : graph_(graph), path_(path) {}

  QdqFoldResult run() {
    for (Node *node : graph_.nodes())
      if (node->is(Op::Transpose))
        transposeQuantizedWeight(*node);
    for (Node *node : graph_.nodes())
      if (node->is(Op::DequantizeLinear) && node->input(0) && node->input(0)->isConstant())
        foldConstant(*node);
    // One at a time: folding a pair erases later nodes (its DequantizeLinears).
    while (Node *node = first(Op::QuantizeLinear))
      foldPair(*node);
    for (Node *node : graph_.nodes())
      if (node->is(Op::DequantizeLinear))
        throw unsupported(*node, "reads '" + node->input(0)->name +
                                     "', which is neither a constant nor a QuantizeLinear output "
                                     "(int8 graph inputs are not supported; give the input as "
                                     "float with a QuantizeLinear)");
    graph_.removeUnusedValues();
    return std::move(result_);
  }

private:
  Node *first(Op op) const {
    for (Node *node : graph_.nodes())
      if (node->is(op))
        return node;
    return nullptr;
  }

  Error unsupported(const Node &node, const std::string &what) const {
    return Error(ExitCode::Unsupported, path_ + ": " + node.describe() + ": " + what);
  }

  /// The node's scale / zero point, which must be constants.
  LinearQuant operands(const Node &node, const Shape &xShape, DType quantized) const {
    const Value *scale = node.input(1), *zp = node.input(2);
    if (!scale || !scale->isConstant() || (zp && !zp->isConstant()))
      throw unsupported(node, "scale and zero point must be constants (initializers)");
    Tensor s(scale->type, scale->data);
    Tensor z = zp ? Tensor(zp->type, zp->data) : Tensor();
    try {
      return readLinearQuant(node, xShape, quantized, &s, zp ? &z : nullptr);
    } catch (const Error &e) {
      throw Error(e.code(), path_ + ": " + e.what());
    }
  }

  /// PyTorch writes Linear as Gemm(x, Transpose(DQ(W))). Folding the DQ
  /// first and the Transpose later would leave the Gemm a float weight with no
  /// scales (requantized); transposing the integers instead, the per-channel
  /// axis moved with them, keeps the model's weights exactly.
  void transposeQuantizedWeight(Node &transpose) {
    Value *d = transpose.input(0), *out = transpose.output(0);
    Node *dq = d ? d->producer : nullptr;
    if (!dq || !dq->is(Op::DequantizeLinear) || !dq->input(0) || !dq->input(0)->isConstant() ||
        !out || out->isGraphOutput || d->isGraphOutput || graph_.users(d).size() != 1)
      return;
    const Value *w = dq->input(0);
    const Shape &shape = w->type.shape;
    const size_t rank = shape.size();
    std::vector<int64_t> perm = transpose.attrs.getInts("perm");
    if (perm.empty())
      for (size_t i = 0; i < rank; ++i)
        perm.push_back(int64_t(rank - 1 - i));
    std::vector<bool> seen(rank, false);
    for (int64_t p : perm)
      if (p < 0 || p >= int64_t(rank) || seen[size_t(p)])
        return; // Invalid: left for the Transpose's own checks.
      else
        seen[size_t(p)] = true;
    if (perm.size() != rank)
      return;
    Shape outShape(rank);
    for (size_t i = 0; i < rank; ++i)
      outShape[i] = shape[size_t(perm[i])];
    std::vector<int64_t> inStrides(rank, 1);
    for (size_t i = rank; i-- > 1;)
      inStrides[i - 1] = inStrides[i] * shape[i];
    const size_t size = dtypeSize(w->type.dtype);
    const int64_t count = w->type.numElements();
    std::vector<uint8_t> bytes(w->data.size());
    std::vector<int64_t> index(rank, 0); // output coordinates, row-major
    for (int64_t o = 0; o < count; ++o) {
      int64_t from = 0;
      for (size_t i = 0; i < rank; ++i)
        from += index[i] * inStrides[size_t(perm[i])];
      std::memcpy(bytes.data() + size_t(o) * size, w->data.data() + size_t(from) * size, size);
      for (size_t i = rank; i-- > 0;)
        if (++index[i] < outShape[i])
          break;
        else
          index[i] = 0;
    }
    const Value *scale = dq->input(1);
    if (scale && scale->type.numElements() > 1) {
      int64_t axis = dq->attrs.getInt("axis", 1);
      axis = axis < 0 ? axis + int64_t(rank) : axis;
      for (size_t i = 0; i < rank; ++i)
        if (perm[i] == axis)
          dq->attrs.setInt("axis", int64_t(i));
    }
    dq->inputs[0] = graph_.addConstant(graph_.uniqueValueName(w->name + "_transposed"),
                                       TensorType{w->type.dtype, outShape, {}}, std::move(bytes));
    graph_.replaceAllUsesWith(out, d);
    graph_.eraseNode(&transpose);
  }

  /// uint8 values and zero points are int8 ones plus 128.
  static int64_t offsetOf(DType dtype) { return dtype == DType::UInt8 ? 128 : 0; }

  void foldConstant(Node &node) {
    Value &x = *node.input(0);
    LinearQuant q = operands(node, x.type.shape, x.type.dtype);
    const int64_t count = x.type.numElements();
    std::vector<float> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      size_t c = q.channelOf(i, x.type.shape);
      int64_t raw = int64_t(x.elementAsDouble(i));
      values[size_t(i)] = float(raw - q.zeroPoints[c]) * q.scales[c];
    }
    Value *out = node.output(0);
    std::vector<uint8_t> bytes(values.size() * sizeof(float));
    if (!values.empty())
      std::memcpy(bytes.data(), values.data(), bytes.size());
    graph_.makeConstant(out, TensorType{DType::Float32, x.type.shape, {}}, std::move(bytes));
    graph_.eraseNode(&node);
    ++result_.constants;
    if (q.zeroPointType == DType::Int32) {
      result_.params.biasScales[out->name] = q.scales;
      std::vector<int64_t> &integers = result_.params.biasIntegers[out->name];
      for (int64_t i = 0; i < count; ++i)
        integers.push_back(int64_t(x.elementAsDouble(i)) -
                           q.zeroPoints[q.channelOf(i, x.type.shape)]);
      return;
    }
    // Asymmetric weights keep their zero points (uint8 ones as int8 minus
    // 128): the kernels' exact zero-point path reads them.
    const int64_t offset = offsetOf(q.zeroPointType);
    QuantParams params;
    params.axis = int(q.axis);
    for (size_t c = 0; c < q.scales.size(); ++c) {
      params.scales.push_back(q.scales[c]);
      params.zeroPoints.push_back(int32_t(q.zeroPoints[c] - offset));
    }
    result_.params.weights[out->name] = params;
  }

  void foldPair(Node &node) {
    Value *x = node.input(0);
    Value *y = node.output(0);
    const Value *scale = node.input(1);
    if (x->isConstant())
      throw unsupported(node, "quantizes constant '" + x->name +
                                  "'; give it as an integer initializer with a DequantizeLinear");
    if (scale && scale->isConstant() && scale->type.numElements() > 1)
      throw unsupported(node, "per-axis scale '" + scale->name + "' on activation '" + x->name +
                                  "': int8 activations have one scale");
    LinearQuant q = operands(node, {}, DType::Float32);
    if (q.zeroPointType != DType::Int8 && q.zeroPointType != DType::UInt8)
      throw unsupported(node, "quantizes to " + std::string(dtypeName(q.zeroPointType)) +
                                  "; expected int8 or uint8");
    if (y->isGraphOutput)
      throw unsupported(node, "its int8 output '" + y->name +
                                  "' is a graph output; end the graph with a DequantizeLinear");
    ScaleZeroPoint params{q.scales[0], int32_t(q.zeroPoints[0] - offsetOf(q.zeroPointType))};
    removeNoOpCasts(y);
    wrapDirectReaders(node, y);
    std::vector<Node *> readers = graph_.users(y);
    for (Node *reader : readers) {
      if (!reader->is(Op::DequantizeLinear) || reader->input(0) != y)
        throw unsupported(node, "its output '" + y->name + "' is read by " + reader->describe() +
                                    "; only DequantizeLinear may read a quantized activation");
      LinearQuant r = operands(*reader, {}, q.zeroPointType);
      if (r.scales != q.scales || r.zeroPoints != q.zeroPoints)
        throw unsupported(*reader, "dequantizes '" + y->name +
                                       "' with other parameters than its QuantizeLinear '" +
                                       node.name + "'");
    }
    const std::string where = path_ + ": " + node.describe(); // the node is erased below
    for (Node *reader : readers)
      bypass(*reader, x);
    graph_.eraseNode(&node);
    ++result_.pairs;
    auto [it, inserted] = result_.params.activations.emplace(x->name, params);
    if (!inserted && (it->second.scale != params.scale || it->second.zeroPoint != params.zeroPoint))
      result_.warnings.push_back(where + ": '" + x->name +
                                 "' is quantized twice with different parameters; the first "
                                 "QuantizeLinear's are used");
  }

  /// PyTorch's exports cast a quantized activation to the type it already has
  /// (QuantizeLinear -> Cast(to=UINT8) -> DequantizeLinear): such a Cast is an
  /// identity, so its readers read `y` itself. Types are known here (the
  /// driver types the graph before folding).
  void removeNoOpCasts(Value *y) {
    for (Node *reader : graph_.users(y)) {
      Value *out = reader->outputs.empty() ? nullptr : reader->output(0);
      if (!reader->is(Op::Cast) || !out || out->isGraphOutput || !y->typeKnown || !out->typeKnown ||
          out->type.dtype != y->type.dtype)
        continue;
      graph_.replaceAllUsesWith(out, y);
      graph_.eraseNode(reader);
    }
  }

  /// onnxruntime's QOperator format lets operators that only move or select
  /// values (MaxPool, Reshape, Flatten, Transpose...) read the int8 tensor
  /// itself, their output keeping its parameters. Such a reader becomes
  /// DequantizeLinear -> the float op -> QuantizeLinear with `q`'s parameters,
  /// the same values, which the loop folds like any pair.
  void wrapDirectReaders(Node &q, Value *y) {
    bool wrapped = false;
    for (Node *reader : graph_.users(y)) {
      const bool direct = reader->isAnyOf(Op::MaxPool, Op::Reshape, Op::Flatten, Op::Transpose,
                                          Op::Squeeze, Op::Unsqueeze);
      Value *v = reader->outputs.empty() ? nullptr : reader->output(0);
      if (!direct || reader->input(0) != y || reader->outputs.size() != 1 || !v || v->isGraphOutput)
        continue;
      std::vector<Value *> params = {q.input(1)};
      if (q.input(2))
        params.push_back(q.input(2));
      std::vector<Value *> dqInputs = {y};
      dqInputs.insert(dqInputs.end(), params.begin(), params.end());
      Node *dq = graph_.insertNodeBefore(reader, Op::DequantizeLinear, reader->name + "_dequantize",
                                         dqInputs, {graph_.uniqueValueName(y->name + "_float")});
      reader->inputs[0] = dq->output(0);
      std::vector<Value *> qInputs = {v};
      qInputs.insert(qInputs.end(), params.begin(), params.end());
      Node *requantize =
          graph_.insertNodeBefore(reader, Op::QuantizeLinear, reader->name + "_quantize", qInputs,
                                  {graph_.uniqueValueName(v->name + "_quantized")});
      graph_.replaceAllUsesWith(v, requantize->output(0));
      requantize->inputs[0] = v;
      wrapped = true;
    }
    if (wrapped)
      graph_.topologicalSort(); // each new QuantizeLinear after its reader
  }

  /// Readers of DQ output `d` read `x` instead; a graph output keeps its name.
  void bypass(Node &dq, Value *x) {
    Value *d = dq.output(0);
    bool output = d->isGraphOutput;
    if (output && (x->isGraphOutput || x->kind == ValueKind::GraphInput))
      throw unsupported(dq, "graph output '" + d->name + "' would be the graph input or output '" +
                                x->name + "' itself");
    graph_.replaceAllUsesWith(d, x);
    graph_.eraseNode(&dq);
    if (output) {
      std::string name = d->name;
      graph_.renameValue(d, name + "_dequantized");
      std::string old = x->name;
      graph_.renameValue(x, name);
      auto it = result_.params.activations.find(old);
      if (it != result_.params.activations.end()) {
        ScaleZeroPoint p = it->second;
        result_.params.activations.erase(it);
        result_.params.activations[name] = p;
      }
    }
  }

  Graph &graph_;
  std::string path_;
  QdqFoldResult result_;
};

} // namespace

bool hasLinearQuantNodes(const Graph &graph) {
  for (const Node *node : graph.nodes())
    if (isLinearQuantOp(node->opType))
      return true;
  return false;
}

QdqFoldResult foldQdqPairs(Graph &graph, const std::string &modelPath) {
  return QdqFolder(graph, modelPath).run();
}

} // namespace bundlefit
