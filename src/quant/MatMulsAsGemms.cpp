//===- MatMulsAsGemms.cpp - QDQ MatMul by a constant as the int8 Gemm -------===//
//
// A QDQ MatMul of a 2-D activation by a dequantized constant 2-D weight is
// the fully connected layer the int8 kernels have, written without a bias:
// Gemm(A, B) with transB = 0 computes the same product. QLinearMatMul gets
// there in ExpandQOperators.cpp; this gives the QDQ form the same int8
// kernel instead of float between a Dequantize and a Quantize. It runs after
// the default passes, when every operand's rank is known: a MatMul of a
// batched (3-D and up) activation is left alone.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/quant/FoldQdq.h"

namespace bundlefit {

size_t matMulsAsGemms(Graph &graph, const PresetQuantParams &preset) {
  size_t count = 0;
  for (Node *node : graph.nodes()) {
    if (node->opType != "MatMul" || node->inputs.size() != 2)
      continue;
    const Value *a = node->input(0), *b = node->input(1);
    if (!a || !b || !a->typeKnown || a->type.rank() != 2 || !b->isConstant() ||
        b->type.rank() != 2 || !preset.weights.count(b->name) || !preset.activations.count(a->name))
      continue;
    node->opType = "Gemm"; // alpha = beta = 1, transA = transB = 0: Gemm's defaults
    ++count;
  }
  return count;
}

} // namespace bundlefit
