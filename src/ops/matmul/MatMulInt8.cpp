//===- MatMulInt8.cpp - int8 MatMul of two activations (attention) ---------===//
//
// A MatMul whose operands are both activations (attention's Q x K^T and
// scores x V, as onnxruntime's quantizer writes them: QLinearMatMul of two
// quantized tensors) is, per batch matrix, the int8 fully connected layer
// with the second operand as its [K, N] "weight": bf_fully_connected_s8
// subtracts B's zero point (filterOffset) as it subtracts A's, so the
// integer sums are exact, and the output stage rounds as Gemm's does (once,
// for ONNX models). One call per batch matrix, at byte offsets. A MatMul by
// a constant became a Gemm before quantization (quant/MatMulsAsGemms.cpp);
// broadcasting batch dimensions stay float.
//
//===----------------------------------------------------------------------===//
#include "matmul/MatMul.h"

#include "bundlefit/ops/Int8Params.h"
#include "common/CallArgs.h"
#include "common/Int8Args.h"
#include "common/Int8Reference.h"
#include "conv/Conv.h"

namespace bundlefit {
namespace {

/// More calls than this would bloat the bundle's code: such a MatMul stays
/// float (attention layers have batch x heads matrices, a few dozen).
constexpr int64_t kMaxBatchCalls = 256;

struct Geometry {
  int64_t batch = 1, M = 1, K = 1, N = 1;
};

/// "" and the geometry when the int8 kernel covers the node, else why not.
std::string geometry(const Node &node, Geometry &g) {
  const Value *a = node.input(0), *b = node.input(1), *y = node.output(0);
  if (!a || !b || !y)
    return "needs operands A, B and an output";
  const Shape &as = a->type.shape, &bs = b->type.shape, &ys = y->type.shape;
  if (as.size() < 2 || as.size() != bs.size() || ys.size() != as.size())
    return "int8 MatMul needs A and B of the same rank >= 2";
  for (size_t i = 0; i + 2 < as.size(); ++i) {
    if (as[i] != bs[i])
      return "broadcasting MatMul has no int8 kernel";
    g.batch *= as[i];
  }
  g.M = as[as.size() - 2], g.K = as.back(), g.N = bs.back();
  if (bs[bs.size() - 2] != g.K || ys[ys.size() - 2] != g.M || ys.back() != g.N)
    return "operand shapes do not match";
  if (g.batch > kMaxBatchCalls)
    return "more than " + std::to_string(kMaxBatchCalls) + " batch matrices";
  return "";
}

std::string whyFloat(const Node &node) {
  Geometry g;
  return geometry(node, g);
}

std::vector<size_t> bothActivations(const Node &) { return {0, 1}; }

std::vector<KernelCall> lower(const Node &node) {
  using namespace int8_args;
  Geometry g;
  if (std::string why = geometry(node, g); !why.empty())
    unsupported(node, why);
  // geometry() checked that the three values exist.
  const Value *a = node.input(0), *b = node.input(1), *y = node.output(0);
  const Affine in = activationParams(node, a, "A"), right = activationParams(node, b, "B");
  const Affine out = activationParams(node, y, "output");
  Int8ConvArgs args;
  args.inputOffset = -in.zeroPoint, args.filterOffset = -right.zeroPoint;
  args.outputOffset = out.zeroPoint;
  fusedActivationRange(node, out, args.actMin, args.actMax);
  fillRequantization(node, args, in, {float(right.scale)}, out, nullptr, narrow(node, g.N));
  std::vector<KernelCall> calls;
  for (int64_t i = 0; i < g.batch; ++i) {
    call_args::Args c;
    c.addr(a, i * g.M * g.K).addr(b, i * g.K * g.N).addr(nullptr).addr(y, i * g.M * g.N);
    c.params(node, gemm_int8::fcParams(node, g.M, g.K, g.N, 0, args.filterOffset));
    c.params(node, conv_int8::quantParams(args)).table(args.outMult).table(args.outShift);
    c.addr(nullptr).table(args.biasMult).table(args.biasShift);
    calls.push_back(c.call("bf_fully_connected_s8"));
  }
  return calls;
}

/// The reference (common/Int8Reference.h): per batch matrix,
/// acc = sum_k (a - aZeroPoint) * (b - bZeroPoint), requantized as Gemm's.
void reference(const Node &node, const std::vector<const Tensor *> &inputs,
               std::vector<Tensor> &outputs) {
  Geometry g;
  if (std::string why = geometry(node, g); !why.empty())
    int8_args::unsupported(node, why);
  const int8_ref::WeightedOutput stage(node, inputs, g.N);
  const int32_t aZero = stage.input().zeroPoint, bZero = stage.weightZeroPoint(0);
  const int8_t *ad = inputs[0]->data<int8_t>(), *bd = inputs[1]->data<int8_t>();
  int8_t *yd = outputs[0].data<int8_t>();
  for (int64_t i = 0; i < g.batch; ++i)
    for (int64_t m = 0; m < g.M; ++m)
      for (int64_t n = 0; n < g.N; ++n) {
        int64_t acc = 0;
        for (int64_t k = 0; k < g.K; ++k)
          acc += (int64_t(ad[(i * g.M + m) * g.K + k]) - aZero) *
                 (int64_t(bd[(i * g.K + k) * g.N + n]) - bZero);
        yd[(i * g.M + m) * g.N + n] = stage.finish(acc, n);
      }
}

} // namespace

void registerMatMulInt8(OpRegistry &registry) {
  OpDef &def = registry.at("MatMul").quantized(Int8Rule::OwnParams).int8Runs(reference);
  def.int8.whyFloat = whyFloat;
  def.int8.activationInputs = bothActivations;
  def.int8.singleRounding = true;
  def.int8.lower = lower;
}

} // namespace bundlefit
