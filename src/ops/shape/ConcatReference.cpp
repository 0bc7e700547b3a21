//===- ConcatReference.cpp - The int8 reference Concat ----------------------===//
//
// Each input is copied into its slice of the output along `axis`; an input
// whose parameters differ from the output's is brought to them first:
//   y = clamp(MultiplyByQuantizedMultiplier(x - xZeroPoint, xScale / yScale) + yZeroPoint)
// (common/Int8Reference.h).
//
//===----------------------------------------------------------------------===//
#include "shape/Shape.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "common/Int8Reference.h"
#include "common/RequantizeTable.h"

namespace bundlefit::shape_reference {

using namespace int8_ref;

void concat(const Node &node, const std::vector<const Tensor *> &inputs,
            std::vector<Tensor> &outputs) {
  const Affine out = activationOf(node, node.output(0), "output");
  const Shape &ys = node.output(0)->type.shape;
  const int64_t axis =
      shape_helpers::normalizeAxis(node, node.attrs.getInt("axis", 0), int64_t(ys.size()), "axis");
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= ys[size_t(d)];
  const int64_t outRow = outer == 0 ? 0 : node.output(0)->type.numElements() / outer;
  int8_t *y = outputs[0].data<int8_t>();
  int64_t offset = 0; // elements into each output row
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Affine in = activationOf(node, node.input(i), "input");
    const std::array<int8_t, 256> table =
        requantizeTable(float(in.scale), in.zeroPoint, float(out.scale), out.zeroPoint);
    const int64_t row = outer == 0 ? 0 : node.input(i)->type.numElements() / outer;
    const int8_t *x = inputs[i]->data<int8_t>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < row; ++k) {
        const int8_t v = x[o * row + k];
        y[o * outRow + offset + k] = in == out ? v : table[size_t(v + 128)];
      }
    offset += row;
  }
}

} // namespace bundlefit::shape_reference

namespace bundlefit {

void registerConcatInt8Reference(OpRegistry &registry) {
  registry.at("Concat").int8Runs(shape_reference::concat);
}

} // namespace bundlefit
