//===- DynamicQuantFallback.cpp - Dynamic quantization computed in float ---===//
//
// onnxruntime's quantize_dynamic writes a MatMul by a constant as
//   (y, ys, yz) = DynamicQuantizeLinear(x)
//   out = Mul(Cast(MatMulInteger(y, Wq, yz, Wz), FLOAT), Mul(ys, Ws))
// whose scale ys is computed at run time from x's range: no compile-time
// int8 parameters exist for it. bundlefit computes it in float as
// MatMul(x, (Wq - Wz) * Ws), the product the quantized chain approximates
// (it differs from onnxruntime's by x's 8-bit rounding), and says so in a
// note. Any other reader of a dynamically quantized value is refused,
// naming it.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/quant/FoldQdq.h"

#include "bundlefit/support/Error.h"

#include <cstring>

namespace bundlefit {

namespace {

class DynamicQuantFallback {
public:
  DynamicQuantFallback(Graph &graph, const std::string &path, std::vector<std::string> &notes)
      : graph_(graph), path_(path), notes_(notes) {}

  size_t run() {
    size_t count = 0;
    for (Node *node : graph_.nodes())
      if (node->is(Op::DynamicQuantizeLinear)) {
        replace(*node);
        ++count;
      }
    return count;
  }

private:
  Error unsupported(const Node &node, const std::string &what) const {
    return Error(ExitCode::Unsupported, path_ + ": " + node.describe() + ": " + what);
  }

  /// The single reader of `value` if it is of type `op`, else nullptr.
  Node *onlyReader(const Value *value, Op op) const {
    std::vector<Node *> readers = graph_.users(value);
    if (readers.size() != 1 || !readers[0]->is(op) || value->isGraphOutput)
      return nullptr;
    return readers[0];
  }

  void replace(Node &dq) {
    Value *x = dq.input(0), *y = dq.output(0), *ys = dq.output(1);
    if (!x || !y)
      throw unsupported(dq, "needs input x and output y");
    std::vector<Node *> scaleMuls;
    for (Node *matMul : graph_.users(y))
      replaceMatMul(dq, *matMul, x, ys, scaleMuls);
    for (Node *mul : scaleMuls)
      if (graph_.users(mul->output(0)).empty())
        graph_.eraseNode(mul);
    for (Value *output : dq.outputs)
      if (output && (!graph_.users(output).empty() || output->isGraphOutput))
        throw unsupported(dq, "its output '" + output->name +
                                  "' is read by other nodes than the MatMulInteger chains "
                                  "bundlefit computes in float (dynamic quantization)");
    const std::string where = path_ + ": " + dq.describe();
    graph_.eraseNode(&dq);
    notes_.push_back(where + ": dynamic quantization (a scale computed at run time) runs in float: "
                             "MatMul by the dequantized weights; results differ from onnxruntime's "
                             "by the input's 8-bit rounding");
  }

  /// MatMulInteger(y, Wq, yz, Wz) -> Cast(FLOAT) -> Mul(., Mul(ys, Ws)) becomes
  /// MatMul(x, W) computing the Mul's output value.
  void replaceMatMul(const Node &dq, Node &matMul, Value *x, Value *ys,
                     std::vector<Node *> &scaleMuls) {
    if (!matMul.is(Op::MatMulInteger) || matMul.input(0) != dq.output(0))
      throw unsupported(matMul, "reads the dynamically quantized '" + dq.output(0)->name +
                                    "'; bundlefit computes only MatMulInteger by constant "
                                    "weights of dynamic quantization (in float)");
    Value *wq = matMul.input(1), *wz = matMul.input(3);
    if (!wq || !wq->isConstant() || wq->type.rank() != 2 ||
        (wq->type.dtype != DType::Int8 && wq->type.dtype != DType::UInt8) ||
        (wz && !wz->isConstant()))
      throw unsupported(matMul, "dynamic quantization needs constant 2-D int8/uint8 weights "
                                "and weight zero point");
    Node *cast = onlyReader(matMul.output(0), Op::Cast);
    Node *mul = cast ? onlyReader(cast->output(0), Op::Mul) : nullptr;
    if (!cast || cast->attrs.getInt("to", 0) != 1 || !mul)
      throw unsupported(matMul, "expected Cast(to=FLOAT) -> Mul by the product of the scales "
                                "after it (onnxruntime's quantize_dynamic)");
    Value *factor = mul->input(0) == cast->output(0) ? mul->input(1) : mul->input(0);
    Node *scaleMul = factor ? factor->producer : nullptr;
    Value *ws = nullptr;
    if (scaleMul && scaleMul->is(Op::Mul))
      ws = scaleMul->input(0) == ys ? scaleMul->input(1)
                                    : (scaleMul->input(1) == ys ? scaleMul->input(0) : nullptr);
    const int64_t k = wq->type.shape[0], n = wq->type.shape[1];
    if (!ws || !ws->isConstant() || (ws->type.numElements() != 1 && ws->type.numElements() != n))
      throw unsupported(*mul, "expected a multiplier Mul(y_scale, weight scale) with a constant "
                              "weight scale of 1 or " +
                                  std::to_string(n) + " elements");
    if (wz && wz->type.numElements() != 1 && wz->type.numElements() != n)
      throw unsupported(matMul,
                        "weight zero point must have 1 or " + std::to_string(n) + " elements");
    std::vector<float> scales = ws->toFloats();
    std::vector<float> w(size_t(k * n));
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c) {
        const int64_t zero =
            wz ? int64_t(wz->elementAsDouble(wz->type.numElements() > 1 ? c : 0)) : 0;
        const float s = scales[scales.size() > 1 ? size_t(c) : 0];
        w[size_t(r * n + c)] = float(int64_t(wq->elementAsDouble(r * n + c)) - zero) * s;
      }
    std::vector<uint8_t> bytes(w.size() * sizeof(float));
    std::memcpy(bytes.data(), w.data(), bytes.size());
    Value *weights = graph_.addConstant(graph_.uniqueValueName(wq->name + "_dequantized"),
                                        TensorType{DType::Float32, {k, n}, {}}, std::move(bytes));
    Value *out = mul->output(0);
    const std::string name = out->name, nodeName = matMul.name;
    graph_.renameNode(&matMul, graph_.uniqueNodeName(nodeName + "_integer"));
    Node *matMulFloat = graph_.insertNodeBefore(mul, Op::MatMul, nodeName, {x, weights},
                                                {graph_.uniqueValueName(name + "_float")});
    graph_.replaceAllUsesWith(out, matMulFloat->output(0));
    graph_.eraseNode(mul);
    graph_.eraseNode(cast);
    graph_.eraseNode(&matMul);
    graph_.renameValue(out, graph_.uniqueValueName(name + "_replaced"));
    graph_.renameValue(matMulFloat->output(0), name);
    scaleMuls.push_back(scaleMul);
  }

  Graph &graph_;
  std::string path_;
  std::vector<std::string> &notes_;
};

} // namespace

size_t replaceDynamicQuantization(Graph &graph, const std::string &modelPath,
                                  std::vector<std::string> &notes) {
  return DynamicQuantFallback(graph, modelPath, notes).run();
}

} // namespace bundlefit
