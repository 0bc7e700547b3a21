//===- LutInt8.cpp - The table of an int8 activation and its call ---------===//
#include "lut/Lut.h"

#include "common/CallArgs.h"
#include "common/Int8Args.h"

#include <algorithm>
#include <cmath>

namespace bundlefit {
namespace lut {

using namespace int8_args;

std::array<int8_t, 256> buildTable(const Node &node, Function f, float inScale, int32_t inZeroPoint,
                                   float outScale, int32_t outZeroPoint) {
  std::array<int8_t, 256> table{};
  for (int32_t q = -128; q <= 127; ++q) {
    const float x = float(q - inZeroPoint) * inScale;
    const float y = f(x, node) / outScale;
    // Half to even, as QuantizeLinear (std::nearbyint in the default mode).
    const float r = std::isnan(y) ? 0.0f : std::nearbyint(y);
    const float v = std::min(127.0f, std::max(-128.0f, r + float(outZeroPoint)));
    table[size_t(q + 128)] = int8_t(v);
  }
  return table;
}

namespace {

std::vector<KernelCall> lowerLut(const Node &node) {
  const Value &x = operand(node, node.input(activationOperand(node)), "input");
  const Value &y = operand(node, node.output(0), "output");
  const Affine in = activationParams(node, &x, "input");
  const Affine out = activationParams(node, &y, "output");
  const std::array<int8_t, 256> table =
      buildTable(node, functionOf(node), in.scale, in.zeroPoint, out.scale, out.zeroPoint);
  call_args::Args args;
  args.addr(&x).addr(&y).i32(narrow(node, y.type.numElements()));
  KernelCall call = args.call("bf_lut_s8");
  call.lut.lookup = call.args.size(); // a producer's stores may apply it (KernelCall.h)
  call.args.push_back(KernelArg::i8Table(std::vector<int8_t>(table.begin(), table.end())));
  return {call};
}

/// Whether `value` is a float constant of one element.
bool isScalarConstant(const Value *value) {
  return value && value->isConstant() && value->type.dtype == DType::Float32 &&
         value->type.numElements() == 1;
}

std::string whyFloatSub(const Node &node) {
  const Value *a = node.input(0), *b = node.input(1);
  if (!a || !b || isScalarConstant(a) == isScalarConstant(b) ||
      node.output(0)->type.shape != node.input(activationOperand(node))->type.shape)
    return "int8 Sub needs one scalar constant operand (a table of the other)";
  return "";
}

std::vector<size_t> subActivationInputs(const Node &node) { return {activationOperand(node)}; }

} // namespace

size_t activationOperand(const Node &node) {
  return node.opType == "Sub" && isScalarConstant(node.input(0)) ? 1 : 0;
}

} // namespace lut

void registerLutInt8(OpRegistry &registry) {
  for (const char *opType : lut::tableOps()) {
    OpDef &def = registry.at(opType).quantized(Int8Rule::OwnParams);
    def.int8.anyLayout = true;
    def.int8.lower = lut::lowerLut;
  }
  // Sub has a table only when one operand is a scalar constant.
  OpDef &sub = registry.at("Sub");
  sub.int8.whyFloat = lut::whyFloatSub;
  sub.int8.activationInputs = lut::subActivationInputs;
}

} // namespace bundlefit
