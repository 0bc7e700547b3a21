//===- LutReference.cpp - The int8 reference of the table activations ----===//
//
// QDQ semantics element by element, without a table: dequantize the input
// ((q - zp) * scale in float), apply the activation, quantize to the
// output's parameters (half to even, saturated).
//
//===----------------------------------------------------------------------===//
#include "lut/Lut.h"

#include "common/Int8Reference.h"

#include <algorithm>
#include <cmath>

namespace bundlefit {
namespace lut {
namespace {

/// f element by element, no table.
void reference(const Node &node, const std::vector<const Tensor *> &inputs,
               std::vector<Tensor> &outputs) {
  const size_t operand = activationOperand(node);
  const int8_ref::Affine in = int8_ref::activationOf(node, node.input(operand), "input");
  const int8_ref::Affine out = int8_ref::activationOf(node, node.output(0), "output");
  const Function f = functionOf(node);
  const int8_t *x = inputs[operand]->data<int8_t>();
  int8_t *y = outputs[0].data<int8_t>();
  for (int64_t i = 0; i < outputs[0].numElements(); ++i) {
    const float real = f(float(x[i] - in.zeroPoint) * float(in.scale), node);
    const double q = double(std::nearbyint(real / float(out.scale))) + out.zeroPoint;
    y[i] = std::isnan(q) ? int8_t(out.zeroPoint) : int8_t(std::min(127.0, std::max(-128.0, q)));
  }
}

} // namespace
} // namespace lut

void registerLutInt8Reference(OpRegistry &registry) {
  for (const char *opType : lut::tableOps())
    registry.at(opType).int8Runs(lut::reference);
}

} // namespace bundlefit
