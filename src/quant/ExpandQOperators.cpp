//===- ExpandQOperators.cpp - QOperator nodes as Q/DQ around a float op ----===//
//
// The QOperator form says in one node what the QDQ form says with three:
// QLinearConv(x, xs, xz, w, ws, wz, ys, yz, B) computes exactly
//   QuantizeLinear(Conv(DQ(x, xs, xz), DQ(w, ws, wz), DQ(B, xs * ws)), ys, yz)
// so rewriting it that way lets foldQdqPairs treat both forms alike. The same
// holds for onnxruntime's quantizer's com.microsoft operators (QLinearAdd,
// QLinearMul, QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool,
// QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax): each is DQ of its
// operands, the float op, Q, which onnxruntime documents as their semantics.
// QLinearMatMul becomes a MatMul; MatMulsAsGemms makes the 2-D ones by a
// constant the int8 fully connected layer (a 3-D one stays float).
//
// The float node takes the user's node name, so a later error (a shape that
// does not infer, an op with no kernel) names the node the user wrote; the
// Q node is "<name>_quantize".
//
//===----------------------------------------------------------------------===//
#include "bundlefit/quant/FoldQdq.h"

#include "bundlefit/support/Error.h"

#include <cstring>

namespace bundlefit {

namespace {

/// Where a QOperator node keeps one quantized operand: x, scale, zero point.
struct QOperand {
  size_t x, scale, zeroPoint;
};

class QOperatorExpander {
public:
  QOperatorExpander(Graph &graph, const std::string &path) : graph_(graph), path_(path) {}

  size_t run() {
    size_t count = 0;
    for (Node *node : graph_.nodes()) {
      if (!expand(*node))
        continue;
      ++count;
    }
    return count;
  }

private:
  bool expand(Node &node) {
    switch (node.op()) {
    case Op::QLinearConv:
      expandWeighted(node, Op::Conv, 8);
      return true;
    case Op::QLinearMatMul:
      expandWeighted(node, Op::MatMul, SIZE_MAX);
      return true;
    case Op::MsQLinearAdd:
      expandSimple(node, Op::Add, {{0, 1, 2}, {3, 4, 5}}, 6);
      return true;
    case Op::MsQLinearMul:
      expandSimple(node, Op::Mul, {{0, 1, 2}, {3, 4, 5}}, 6);
      return true;
    case Op::MsQLinearSigmoid:
      expandSimple(node, Op::Sigmoid, {{0, 1, 2}}, 3);
      return true;
    case Op::MsQLinearLeakyRelu: {
      Node *f = expandSimple(node, Op::LeakyRelu, {{0, 1, 2}}, 3);
      // Absent, it stays absent: LeakyRelu's default is com.microsoft's too.
      if (const Attribute *alpha = node.attrs.find("alpha"))
        f->attrs.set("alpha", *alpha);
      return true;
    }
    case Op::MsQLinearSoftmax:
      expandSimple(node, Op::Softmax, {{0, 1, 2}}, 3);
      return true;
    case Op::MsQLinearGlobalAveragePool:
    case Op::MsQLinearAveragePool:
      if (node.attrs.getInt("channels_last", 0) != 0)
        throw Error(ExitCode::Unsupported,
                    path_ + ": " + node.describe() +
                        ": channels_last=1 (NHWC) is not supported; quantize the model with "
                        "onnxruntime's default channels-first layout");
      expandSimple(node,
                   node.is(Op::MsQLinearAveragePool) ? Op::AveragePool : Op::GlobalAveragePool,
                   {{0, 1, 2}}, 3);
      return true;
    case Op::MsQLinearConcat: {
      // (y_scale, y_zero_point, then x, scale, zero point per operand).
      if (node.inputs.size() < 5 || (node.inputs.size() - 2) % 3 != 0)
        throw bad(node, "expects y_scale, y_zero_point and (x, scale, zero point) triples, got " +
                            std::to_string(node.inputs.size()) + " operands");
      std::vector<QOperand> operands;
      for (size_t i = 2; i < node.inputs.size(); i += 3)
        operands.push_back({i, i + 1, i + 2});
      expandSimple(node, Op::Concat, operands, 0);
      return true;
    }
    default:
      return false;
    }
  }

  Error bad(const Node &node, const std::string &what) const {
    return Error(ExitCode::BadInputFile, path_ + ": " + node.describe() + ": " + what);
  }

  Value *operand(const Node &node, size_t index, const char *what) const {
    Value *value = node.input(index);
    if (!value)
      throw bad(node, std::string("missing operand ") + std::to_string(index) + " (" + what + ")");
    return value;
  }

  /// DequantizeLinear(x, scale, zero point) before `node`; `axis` for a
  /// per-axis weight scale (ignored for a per-tensor one). An omitted zero
  /// point is 0, as in DequantizeLinear.
  Value *dequantize(Node &node, const QOperand &at, int64_t axis, const std::string &suffix) {
    Value *x = operand(node, at.x, "x"), *scale = operand(node, at.scale, "scale");
    std::vector<Value *> inputs = {x, scale};
    if (Value *zp = node.input(at.zeroPoint))
      inputs.push_back(zp);
    Node *dq = graph_.insertNodeBefore(&node, Op::DequantizeLinear, node.name + suffix, inputs,
                                       {graph_.uniqueValueName(node.name + suffix)});
    if (scale->type.numElements() > 1)
      dq->attrs.setInt("axis", axis);
    return dq->output();
  }

  /// The int32 bias at scale xs * ws (per channel when ws is).
  Value *dequantizeBias(Node &node, Value *bias, Value *xScale, Value *wScale) {
    if (!xScale->isConstant() || !wScale->isConstant() || xScale->type.numElements() != 1 ||
        xScale->type.dtype != DType::Float32 || wScale->type.dtype != DType::Float32)
      throw Error(ExitCode::Unsupported,
                  path_ + ": " + node.describe() + ": scales '" + xScale->name + "' and '" +
                      wScale->name +
                      "' must be float32 constants (x's a scalar) to scale the bias");
    std::vector<float> xs = xScale->toFloats(), ws = wScale->toFloats();
    std::vector<float> scales;
    for (float w : ws)
      scales.push_back(xs[0] * w); // float32, as onnxruntime computes it
    std::vector<uint8_t> bytes(scales.size() * sizeof(float));
    std::memcpy(bytes.data(), scales.data(), bytes.size());
    Shape shape = scales.size() > 1 ? Shape{int64_t(scales.size())} : Shape{};
    Value *scale = graph_.addConstant(graph_.uniqueValueName(node.name + "_bias_scale"),
                                      TensorType{DType::Float32, shape, {}}, std::move(bytes));
    Node *dq =
        graph_.insertNodeBefore(&node, Op::DequantizeLinear, node.name + "_bias", {bias, scale},
                                {graph_.uniqueValueName(node.name + "_bias")});
    if (scales.size() > 1)
      dq->attrs.setInt("axis", 0);
    return dq->output();
  }

  /// The float op on `inputs` under the user's node name, then
  /// QuantizeLinear(its output, inputs[yFirst], inputs[yFirst + 1]), which
  /// takes over the node's output value; `node` is erased.
  Node *finish(Node &node, Op op, const std::vector<Value *> &inputs, size_t yFirst) {
    Value *yScale = operand(node, yFirst, "y_scale");
    Value *yZp = node.input(yFirst + 1);
    Value *y = node.output(0);
    const std::string name = y->name, nodeName = node.name;
    Attributes attrs = node.attrs;
    attrs.erase("channels_last");
    graph_.renameNode(&node, graph_.uniqueNodeName(nodeName + "_qoperator"));
    Node *compute = graph_.insertNodeBefore(&node, op, nodeName, inputs,
                                            {graph_.uniqueValueName(name + "_float")});
    compute->attrs = std::move(attrs);
    std::vector<Value *> qInputs = {compute->output(), yScale};
    if (yZp)
      qInputs.push_back(yZp);
    Node *q = graph_.insertNodeBefore(&node, Op::QuantizeLinear, nodeName + "_quantize", qInputs,
                                      {graph_.uniqueValueName(name + "_expanded")});
    graph_.replaceAllUsesWith(y, q->output());
    graph_.eraseNode(&node);
    graph_.renameValue(y, graph_.uniqueValueName(name + "_replaced"));
    graph_.renameValue(q->output(), name);
    return compute;
  }

  /// Operands: x at 0..2, w at 3..5, y's scale/zp at 6..7, bias at `biasIndex`.
  void expandWeighted(Node &node, Op op, size_t biasIndex) {
    const bool conv = op == Op::Conv;
    Value *x = dequantize(node, {0, 1, 2}, 1, "_x");
    // Conv weights are per output channel (axis 0), MatMul's per column (1).
    Value *w = dequantize(node, {3, 4, 5}, conv ? 0 : 1, "_w");
    std::vector<Value *> inputs = {x, w};
    if (biasIndex < node.inputs.size() && node.input(biasIndex))
      inputs.push_back(dequantizeBias(node, node.input(biasIndex), node.input(1), node.input(4)));
    finish(node, op, inputs, 6);
  }

  /// Per-tensor operands dequantized, the float op, y quantized.
  Node *expandSimple(Node &node, Op op, const std::vector<QOperand> &operands, size_t yFirst) {
    std::vector<Value *> inputs;
    for (size_t i = 0; i < operands.size(); ++i)
      inputs.push_back(dequantize(node, operands[i], 0, "_x" + std::to_string(i)));
    return finish(node, op, inputs, yFirst);
  }

  Graph &graph_;
  std::string path_;
};

} // namespace

size_t expandQOperators(Graph &graph, const std::string &modelPath) {
  return QOperatorExpander(graph, modelPath).run();
}

} // namespace bundlefit
