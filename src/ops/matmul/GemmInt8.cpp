//===- GemmInt8.cpp - Gemm in int8: arguments, quantizer rule, CMSIS-NN ---===//
//
// The int8 fully-connected kernel's arguments (bundlefit/ops/Int8Params.h),
// what the quantizer asks of a float Gemm, the bundle's kernel call, and how
// an int8 Gemm calls CMSIS-NN's arm_fully_connected_s8.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/ops/KernelParams.h"

#include "bundlefit/ir/QuantSymmetry.h"
#include "cmsis/CmsisConstants.h"
#include "common/CallArgs.h"
#include "common/Int8Args.h"
#include "conv/Conv.h"
#include "matmul/MatMul.h"

namespace bundlefit {

using namespace int8_args;

Int8ConvArgs int8GemmArgs(const Node &node) {
  Int8ConvArgs args;
  const Value &a = operand(node, node.input(0), "input");
  const Value &b = operand(node, node.input(1), "weight");
  const Value &y = operand(node, node.output(0), "output");
  if (node.attrs.getInt("transA", 0) != 0)
    unsupported(node, "transA=1 has no int8 kernel");
  if (node.attrs.getFloat("alpha", 1.0f) != 1.0f || node.attrs.getFloat("beta", 1.0f) != 1.0f)
    unsupported(node, "int8 Gemm needs alpha = beta = 1");
  const Affine in = activationParams(node, &a, "input");
  const Affine out = activationParams(node, &y, "output");
  const Shape &as = a.type.shape, &bs = b.type.shape, &ys = y.type.shape;
  if (as.size() != 2 || bs.size() != 2 || ys.size() != 2)
    unsupported(node, "int8 Gemm needs 2-D operands");
  args.transB = narrow(node, node.attrs.getInt("transB", 0) != 0);
  args.batches = narrow(node, as[0]), args.accumDepth = narrow(node, as[1]);
  args.outDepth = narrow(node, ys[1]);
  if (bs[args.transB ? 1 : 0] != as[1] || bs[args.transB ? 0 : 1] != ys[1])
    unsupported(node, "weight " + shapeToString(bs) + " does not match the input");
  args.inputOffset = -in.zeroPoint, args.filterOffset = 0, args.outputOffset = out.zeroPoint;
  fusedActivationRange(node, out, args.actMin, args.actMax);
  fillRequantization(node, args, in, weightScales(node, &b, ys[1]), out, node.input(2), ys[1]);
  return args;
}

namespace gemm_int8 {

CostClass costClass(const Node &) { return CostClass::FullyConnected; }

bf_fc_params fcParams(const Node &node, int64_t batches, int64_t accumDepth, int64_t outDepth,
                      int64_t transB, int64_t filterOffset) {
  bf_fc_params fc = unsetKernelParams<bf_fc_params>();
  fc.batches = paramI32(node, batches), fc.accum_depth = paramI32(node, accumDepth);
  fc.out_depth = paramI32(node, outDepth), fc.trans_b = paramI32(node, transB);
  fc.filter_offset = paramI32(node, filterOffset);
  return fc;
}

} // namespace gemm_int8

namespace {

/// Asymmetric weights: bf_fully_connected_wzp_s8, exact (a zero point per
/// output column, or one for all).
KernelCall lowerAsymmetric(const Node &node) {
  const Int8ConvArgs a = int8GemmArgs(node);
  call_args::Args args;
  args.addr(node.input(0)).addr(node.input(1)).addr(call_args::bias32(node, a));
  args.addr(node.output(0));
  args.params(node, gemm_int8::fcParams(node, a.batches, a.accumDepth, a.outDepth, a.transB, 0));
  args.params(node, conv_int8::quantParams(a)).table(a.outMult).table(a.outShift);
  args.addr(call_args::bias8(node, a)).table(a.biasMult).table(a.biasShift);
  args.table(weightOffsets(*node.input(1), a.outDepth));
  return args.call("bf_fully_connected_wzp_s8");
}

std::vector<KernelCall> lower(const Node &node) {
  if (!isSymmetric(node.input(1)->type.quant))
    return {lowerAsymmetric(node)};
  const Int8ConvArgs a = int8GemmArgs(node);
  call_args::Args args;
  args.addr(node.input(0)).addr(node.input(1)).addr(call_args::bias32(node, a));
  args.addr(node.output(0));
  args.params(node, gemm_int8::fcParams(node, a.batches, a.accumDepth, a.outDepth, a.transB,
                                        a.filterOffset));
  args.params(node, conv_int8::quantParams(a)).table(a.outMult).table(a.outShift);
  args.addr(call_args::bias8(node, a)).table(a.biasMult).table(a.biasShift);
  return {args.call("bf_fully_connected_s8")};
}

std::string whyFloat(const Node &node) {
  const Value *b = node.input(1), *c = node.input(2);
  if (node.attrs.getInt("transA", 0) != 0)
    return "transA=1 has no int8 kernel";
  if (node.attrs.getFloat("alpha", 1.0f) != 1.0f || node.attrs.getFloat("beta", 1.0f) != 1.0f)
    return "alpha/beta other than 1 have no int8 kernel";
  if (!b || !b->isConstant() || b->type.dtype != DType::Float32)
    return "weight B is not a float constant";
  const int64_t n = node.output()->type.shape[1];
  if (c && (!c->isConstant() || c->type.dtype != DType::Float32 ||
            (c->type.numElements() != n && c->type.numElements() != 1) ||
            (c->type.rank() == 2 && c->type.shape[0] != 1)))
    return "bias C is not a per-column float constant";
  return "";
}

int weightAxis(const Node &node) { return node.attrs.getInt("transB", 0) != 0 ? 0 : 1; }

std::string cmsisChoose(const Node &node, CmsisExtension, std::string *whyNot) {
  if (!isSymmetric(node.input(1)->type.quant)) {
    if (whyNot)
      *whyNot = "asymmetric weights (CMSIS-NN takes symmetric ones; bundlefit's exact kernel runs "
                "it)";
    return "";
  }
  if (node.input(1)->type.quant.scales.size() > 1) {
    if (whyNot)
      *whyNot = "per-channel weights (arm_fully_connected_s8 is per tensor)";
    return "";
  }
  return "arm_fully_connected_s8";
}

void cmsisPrepare(Graph &graph, Node &node, const std::string &, CmsisExtension extension) {
  using namespace cmsis_constants;
  const Int8ConvArgs a = int8GemmArgs(node);
  widenInt8Bias(graph, node, a, a.outDepth);
  if (!a.transB)
    transposeGemmWeights(node, *ownConstant(graph, node, 1));
  // arm_fully_connected_s8 takes no buffer but on Helium, where the buffer
  // holds per-row kernel sums: computed here and stored with the weights,
  // so no arm_fully_connected_s8 ever needs arena scratch (CmsisDef has no
  // scratch hook). Column permutations (readFlattenedNhwc) keep the sums.
  if (cmsisFullyConnectedNeedsKernelSums(extension))
    addKernelSums(graph, node, a);
}

void readFlattenedNhwc(Graph &graph, Node &node, int64_t C, int64_t H, int64_t W) {
  cmsis_constants::permuteColumnsToHwc(*cmsis_constants::ownConstant(graph, node, 1), C, H, W);
  node.attrs.setString("cmsis_input_order", "HWC");
}

/// Whether the prepared node reads the kernel sums constant (Helium).
bool passesKernelSums(const Node &node) {
  return node.inputs.size() > size_t(kCmsisKernelSumsInput) &&
         node.inputs[kCmsisKernelSumsInput] != nullptr;
}

/// arm_fully_connected_s8. On Helium the context buffer is the kernel sums
/// constant prepareCmsisGraph added (cmsisPrepare).
KernelCall cmsisCall(const Node &node, const std::string &function) {
  using namespace call_args;
  const Int8ConvArgs a = int8GemmArgs(node);
  if (!a.transB || a.perChannel)
    fatalInternal(node.describe() + ": not prepared for arm_fully_connected_s8");
  const KernelArg ctx = passesKernelSums(node)
                            ? KernelArg::structOf({address(node.input(kCmsisKernelSumsInput)),
                                                   i32(int64_t(a.outDepth) * 4)})
                            : context(node);
  return externalCall(
      function, {ctx, table({a.inputOffset, a.filterOffset, a.outputOffset, a.actMin, a.actMax}),
                 table({a.outMult.at(0), a.outShift.at(0)}), dims(a.batches, 1, 1, a.accumDepth),
                 address(node.input(0)), dims(a.accumDepth, 1, 1, a.outDepth),
                 address(node.input(1)), dims(1, 1, 1, a.outDepth), address(cmsisBias(node, a)),
                 dims(a.batches, 1, 1, a.outDepth), address(node.output(0))});
}

/// A call that passes kernel sums relies on the library computing them as
/// arm_vector_sum_s8 does (its buffer's contents since v5.0): the header
/// checks the function exists.
std::string cmsisApiChecks(const Node &node) {
  if (!passesKernelSums(node))
    return "";
  return "// Helium: the fully connected kernel sums weights.bin holds are arm_vector_sum_s8's "
         "(v5.0+).\n"
         "BF_CMSIS_NN_ASSERT(sizeof(&arm_vector_sum_s8) != 0, \"arm_vector_sum_s8 exists\");";
}

} // namespace

void registerGemmInt8(OpRegistry &registry) {
  OpDef &gemm = registry.at("Gemm").quantized(Int8Rule::OwnParams);
  gemm.int8.whyFloat = whyFloat;
  gemm.int8.weightAxis = weightAxis;
  gemm.int8.singleRounding = true;
  gemm.int8.lower = lower;
  gemm.cmsis.function = "arm_fully_connected_s8";
  gemm.cmsis.choose = cmsisChoose;
  gemm.cmsis.prepare = cmsisPrepare;
  gemm.cmsis.nhwc = false;
  gemm.cmsis.readFlattenedNhwc = readFlattenedNhwc;
  gemm.cmsis.call = cmsisCall;
  gemm.cmsis.prototypes = {call_args::s8LayerPrototype(
      "arm_fully_connected_s8", "cmsis_nn_fc_params", "cmsis_nn_per_tensor_quant_params")};
  gemm.cmsis.apiChecks = cmsisApiChecks;
}

} // namespace bundlefit
