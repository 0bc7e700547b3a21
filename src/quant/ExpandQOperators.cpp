//===- ExpandQOperators.cpp - QLinearConv / QLinearMatMul as Q/DQ pairs -----===//
//
// The QOperator form says in one node what the QDQ form says with three:
// QLinearConv(x, xs, xz, w, ws, wz, ys, yz, B) computes exactly
//   QuantizeLinear(Conv(DQ(x, xs, xz), DQ(w, ws, wz), DQ(B, xs * ws)), ys, yz)
// so rewriting it that way lets foldQdqPairs treat both forms alike.
// QLinearMatMul with a constant 2-D B becomes a Gemm (the int8 kernels'
// fully connected layer, weights per column = axis 1); otherwise a MatMul,
// which stays float.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/quant/FoldQdq.h"

#include "bundlefit/support/Error.h"

#include <cstring>

namespace bundlefit {

namespace {

class QOperatorExpander {
public:
  QOperatorExpander(Graph &graph, const std::string &path) : graph_(graph), path_(path) {}

  size_t run() {
    size_t count = 0;
    for (Node *node : graph_.nodes()) {
      if (node->opType == "QLinearConv")
        expand(*node, "Conv", 3, 8);
      else if (node->opType == "QLinearMatMul")
        expand(*node, isConstant2d(node->input(3)) ? "Gemm" : "MatMul", 3, SIZE_MAX);
      else
        continue;
      ++count;
    }
    return count;
  }

private:
  static bool isConstant2d(const Value *value) {
    return value && value->isConstant() && value->type.rank() == 2;
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

  /// DequantizeLinear(inputs[first..first+2]) before `node`; `axis` for a
  /// per-axis weight scale (ignored for a per-tensor one).
  Value *dequantize(Node &node, size_t first, int64_t axis, const std::string &suffix) {
    Value *x = operand(node, first, "x"), *scale = operand(node, first + 1, "scale");
    Value *zp = operand(node, first + 2, "zero point");
    Node *dq = graph_.insertNodeBefore(&node, "DequantizeLinear", node.name + suffix,
                                       {x, scale, zp}, {node.name + suffix});
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
    Node *dq = graph_.insertNodeBefore(&node, "DequantizeLinear", node.name + "_bias",
                                       {bias, scale}, {node.name + "_bias"});
    if (scales.size() > 1)
      dq->attrs.setInt("axis", 0);
    return dq->output();
  }

  /// Operands: x at 0..2, w at 3..5, y's scale/zp at 6..7, bias at `biasIndex`.
  void expand(Node &node, const std::string &op, size_t weightFirst, size_t biasIndex) {
    const bool conv = op == "Conv";
    Value *x = dequantize(node, 0, 1, "_x");
    // Conv weights are per output channel (axis 0), MatMul's per column (1).
    Value *w = dequantize(node, weightFirst, conv ? 0 : 1, "_w");
    std::vector<Value *> inputs = {x, w};
    if (biasIndex < node.inputs.size() && node.input(biasIndex))
      inputs.push_back(dequantizeBias(node, node.input(biasIndex), node.input(1), node.input(4)));
    Node *compute =
        graph_.insertNodeBefore(&node, op, node.name + "_float", inputs, {node.name + "_float"});
    compute->attrs = node.attrs;
    Value *yScale = operand(node, 6, "y_scale"), *yZp = operand(node, 7, "y_zero_point");
    Value *y = node.output(0);
    const std::string name = y->name;
    Node *q = graph_.insertNodeBefore(&node, "QuantizeLinear", node.name,
                                      {compute->output(), yScale, yZp}, {name + "_expanded"});
    graph_.replaceAllUsesWith(y, q->output());
    graph_.eraseNode(&node);
    graph_.renameValue(y, name + "_replaced");
    graph_.renameValue(q->output(), name);
  }

  Graph &graph_;
  std::string path_;
};

} // namespace

size_t expandQOperators(Graph &graph, const std::string &modelPath) {
  return QOperatorExpander(graph, modelPath).run();
}

} // namespace bundlefit
