//===- ElementwiseLower.cpp - Bundle kernel calls of the elementwise ops ---===//
//
// Arithmetic, activations, Clip, Cast, comparisons, logic, Where and the
// float tests as calls into the kernel bitcode (bundlefit_kernels.h).
// Broadcasting operands become one loop nest whose dims and strides the
// kernels take as six-entry tables.
//
//===----------------------------------------------------------------------===//
#include "elementwise/Elementwise.h"

#include "bundlefit/kernels/abi.h" // bf_binary_op, bf_compare_op, bf_logic_op
#include "bundlefit/ops/ActivationDefaults.h"
#include "bundlefit/ops/LowerHelpers.h"

#include <cfloat>

namespace bundlefit {
namespace {

using namespace lowering;
using Calls = std::vector<KernelCall>;

/// float32 has one kernel per operator; integers one kernel per type that
/// takes the operator as a (constant) argument. All operands share y's type.
Calls lowerBinary(const Node &node, const std::string &floatKernel, int32_t op) {
  const Value *y = node.output(0);
  const DType dtype = y->type.dtype;
  const char *suffix = intKernelSuffix(dtype);
  if (dtype != DType::Float32 && (!suffix || op == BF_OP_PRELU))
    requireFloat(node, y);
  const std::string kernel =
      dtype == DType::Float32 ? floatKernel : std::string("bf_binary_") + suffix;
  const Shape &out = y->type.shape;
  auto stridesFor = [&](const Value *v) {
    requireDType(node, v, dtype);
    return broadcastStrides(node, v, out);
  };
  Calls calls;
  auto emit = [&](const Value *a, Ints aStrides, const Value *b) {
    LoopNest nest{out, {std::move(aStrides), stridesFor(b)}};
    nest.simplify();
    std::vector<KernelArg> args = {KernelArg::address(a),
                                   KernelArg::address(b),
                                   KernelArg::address(y),
                                   KernelArg::i32Table(padFront(nest.dims, 1, node)),
                                   KernelArg::i32Table(padFront(nest.strides[0], 0, node)),
                                   KernelArg::i32Table(padFront(nest.strides[1], 0, node))};
    if (dtype != DType::Float32)
      args.push_back(KernelArg::i32(op));
    calls.push_back(call(kernel, std::move(args)));
  };
  if (node.inputs.size() < 2) {
    if (node.inputs.size() == 1) // Variadic Max/Min/Sum of one tensor: a copy.
      calls.push_back(copyBytes(input(node, 0), y));
    return calls;
  }
  emit(input(node, 0), stridesFor(input(node, 0)), input(node, 1));
  // Variadic Max/Min/Sum: fold the rest into the (dense) output in place.
  for (size_t i = 2; i < node.inputs.size(); ++i)
    emit(y, denseStrides(out), input(node, i));
  return calls;
}

template <const char *Kernel, int32_t Op> Calls lowerBinaryOp(const Node &node, const PlanView &) {
  return lowerBinary(node, Kernel, Op);
}
constexpr char kAdd[] = "bf_add_f32", kSub[] = "bf_sub_f32", kMul[] = "bf_mul_f32",
               kDiv[] = "bf_div_f32", kMax[] = "bf_max_f32", kMin[] = "bf_min_f32",
               kPRelu[] = "bf_prelu_f32", kPow[] = "bf_pow_f32";

Calls lowerMod(const Node &node, const PlanView &) {
  return lowerBinary(node, "bf_fmod_f32",
                     node.attrs.getInt("fmod", 0) != 0 ? BF_OP_FMOD : BF_OP_MOD);
}

Calls lowerMean(const Node &node, const PlanView &) {
  const Value *y = node.output(0);
  requireFloat(node, y);
  Calls calls = lowerBinary(node, "bf_add_f32", BF_OP_ADD);
  calls.push_back(
      call("bf_unary_f32",
           {KernelArg::address(y), KernelArg::address(y), KernelArg::i32(y->type.numElements()),
            KernelArg::i32(BF_UNARY_SCALE), KernelArg::f32(float(1.0 / double(node.inputs.size()))),
            KernelArg::f32(0)}));
  return calls;
}

/// An activation kernel `kernel(x, y, n, a, b)`; a and b from attributes.
struct UnaryKernel {
  const char *opType;
  const char *kernel;
  const char *attrA = nullptr;
  float a = 0;
  const char *attrB = nullptr;
  float b = 0;
};

const UnaryKernel kUnaries[] = {
    {"Relu", "bf_relu_f32"},
    {"LeakyRelu", "bf_leaky_relu_f32", "alpha", kLeakyReluAlpha},
    {"Sigmoid", "bf_sigmoid_f32"},
    {"Tanh", "bf_tanh_f32"},
    {"HardSigmoid", "bf_hard_sigmoid_f32", "alpha", kHardSigmoidAlpha, "beta", kHardSigmoidBeta},
    {"HardSwish", "bf_hard_swish_f32"},
    {"Exp", "bf_exp_f32"},
    {"Sqrt", "bf_sqrt_f32"}};

Calls lowerUnary(const Node &node, const PlanView &) {
  for (const UnaryKernel &u : kUnaries)
    if (node.opType == u.opType)
      return {unaryCall(node, u.kernel, u.attrA ? node.attrs.getFloat(u.attrA, u.a) : 0.0f,
                        u.attrB ? node.attrs.getFloat(u.attrB, u.b) : 0.0f)};
  unsupported(node, "no bundle kernel for this operator");
}

Calls lowerClip(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  const Value *lo = node.input(1), *hi = node.input(2);
  auto isConstantOrAbsent = [](const Value *v) { return !v || v->isConstant(); };
  const DType dtype = y->type.dtype;
  if (dtype == DType::Float32 && isConstantOrAbsent(lo) && isConstantOrAbsent(hi)) {
    // The common case: bounds folded into the call as immediates.
    auto bound = [&](const Value *v, float fallback) {
      return v && v->type.numElements() > 0 ? float(v->elementAsDouble(0)) : fallback;
    };
    return {unaryCall(node, "bf_clip_f32", bound(lo, -FLT_MAX), bound(hi, FLT_MAX))};
  }
  // Runtime bounds or an integer type: the kernel reads the bounds through
  // pointers (a constant bound becomes a private global; NULL = no bound).
  const char *suffix = dtype == DType::Float32 ? "f32" : intKernelSuffix(dtype);
  if (!suffix)
    requireFloat(node, y);
  requireDType(node, x, dtype);
  auto boundPtr = [&](const Value *v) {
    if (!v || v->type.numElements() == 0)
      return KernelArg::address(nullptr);
    requireDType(node, v, dtype);
    return v->isConstant() ? KernelArg::scalar(v) : KernelArg::address(v);
  };
  return {call(std::string("bf_clip_bounds_") + suffix,
               {KernelArg::address(x), KernelArg::address(y), KernelArg::i32(y->type.numElements()),
                boundPtr(lo), boundPtr(hi)})};
}

Calls lowerCast(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  const DType from = x->type.dtype, to = y->type.dtype;
  if (from == to)
    return {copyBytes(x, y)};
  std::string kernel;
  if (to == DType::Float32) {
    if (from == DType::Int64)
      kernel = "bf_cast_i64_f32";
    if (from == DType::Int32)
      kernel = "bf_cast_i32_f32";
    if (from == DType::Int8)
      kernel = "bf_cast_i8_f32";
    if (from == DType::UInt8 || from == DType::Bool)
      kernel = "bf_cast_u8_f32";
  } else if (from == DType::Float32) {
    if (to == DType::Int32)
      kernel = "bf_cast_f32_i32";
    if (to == DType::Int64)
      kernel = "bf_cast_f32_i64";
  }
  if (kernel.empty())
    unsupported(node, std::string("Cast from ") + dtypeName(from) + " to " + dtypeName(to));
  return {call(kernel, {KernelArg::address(x), KernelArg::address(y),
                        KernelArg::i32(y->type.numElements())})};
}

/// The dims and per-operand stride tables of `operands` broadcast to `y`.
std::vector<KernelArg> broadcastTables(const Node &node, const std::vector<const Value *> &operands,
                                       const Value *y) {
  const Shape &out = y->type.shape;
  LoopNest nest{out, {}};
  for (const Value *v : operands)
    nest.strides.push_back(broadcastStrides(node, v, out));
  nest.simplify();
  std::vector<KernelArg> args;
  for (const Value *v : operands)
    args.push_back(KernelArg::address(v));
  args.push_back(KernelArg::address(y));
  args.push_back(KernelArg::i32Table(padFront(nest.dims, 1, node)));
  for (const Ints &strides : nest.strides)
    args.push_back(KernelArg::i32Table(padFront(strides, 0, node)));
  return args;
}

Calls lowerCompare(const Node &node, const PlanView &) {
  static const std::pair<const char *, int32_t> kOps[] = {{"Equal", BF_CMP_EQ},
                                                          {"Less", BF_CMP_LT},
                                                          {"LessOrEqual", BF_CMP_LE},
                                                          {"Greater", BF_CMP_GT},
                                                          {"GreaterOrEqual", BF_CMP_GE}};
  int32_t op = -1;
  for (const auto &[name, code] : kOps)
    if (node.opType == name)
      op = code;
  const Value *a = input(node, 0), *b = input(node, 1), *y = node.output(0);
  const DType dtype = a->type.dtype;
  requireDType(node, b, dtype);
  const char *suffix = dtype == DType::Float32 ? "f32"
                       : dtype == DType::Bool  ? "u8"
                                               : intKernelSuffix(dtype);
  if (!suffix)
    unsupported(node, std::string("no comparison kernel for ") + dtypeName(dtype));
  std::vector<KernelArg> args = broadcastTables(node, {a, b}, y);
  args.push_back(KernelArg::i32(op));
  return {call(std::string("bf_compare_") + suffix, std::move(args))};
}

Calls lowerLogical(const Node &node, const PlanView &) {
  const Value *a = input(node, 0), *y = node.output(0);
  if (node.opType == "Not")
    return {call("bf_not_u8", {KernelArg::address(a), KernelArg::address(y),
                               KernelArg::i32(y->type.numElements())})};
  const Value *b = input(node, 1);
  const int32_t op = node.opType == "And"  ? BF_LOGIC_AND
                     : node.opType == "Or" ? BF_LOGIC_OR
                                           : BF_LOGIC_XOR;
  std::vector<KernelArg> args = broadcastTables(node, {a, b}, y);
  args.push_back(KernelArg::i32(op));
  return {call("bf_logical_u8", std::move(args))};
}

Calls lowerWhere(const Node &node, const PlanView &) {
  const Value *c = input(node, 0), *a = input(node, 1), *b = input(node, 2), *y = node.output(0);
  return {
      call(std::string("bf_where_") + sizeSuffix(node, y), broadcastTables(node, {c, a, b}, y))};
}

Calls lowerFloatTest(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  requireFloat(node, x);
  const KernelArg n = KernelArg::i32(y->type.numElements());
  if (node.opType == "IsNaN")
    return {call("bf_isnan_f32", {KernelArg::address(x), KernelArg::address(y), n})};
  return {call("bf_isinf_f32", {KernelArg::address(x), KernelArg::address(y), n,
                                KernelArg::i32(node.attrs.getInt("detect_negative", 1) != 0),
                                KernelArg::i32(node.attrs.getInt("detect_positive", 1) != 0)})};
}

} // namespace

void registerElementwiseLowering(OpRegistry &registry) {
  registry.at("Add").lower = lowerBinaryOp<kAdd, BF_OP_ADD>;
  registry.at("Sum").lower = lowerBinaryOp<kAdd, BF_OP_ADD>;
  registry.at("Sub").lower = lowerBinaryOp<kSub, BF_OP_SUB>;
  registry.at("Mul").lower = lowerBinaryOp<kMul, BF_OP_MUL>;
  registry.at("Div").lower = lowerBinaryOp<kDiv, BF_OP_DIV>;
  registry.at("Max").lower = lowerBinaryOp<kMax, BF_OP_MAX>;
  registry.at("Min").lower = lowerBinaryOp<kMin, BF_OP_MIN>;
  registry.at("PRelu").lower = lowerBinaryOp<kPRelu, BF_OP_PRELU>;
  registry.at("Pow").lower = lowerBinaryOp<kPow, BF_OP_POW>;
  registry.at("Mod").lower = lowerMod;
  registry.at("Mean").lower = lowerMean;
  for (const UnaryKernel &u : kUnaries)
    registry.at(u.opType).lower = lowerUnary;
  registry.at("Clip").lower = lowerClip;
  registry.at("Cast").lower = lowerCast;
  for (const char *op : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"})
    registry.at(op).lower = lowerCompare;
  for (const char *op : {"And", "Or", "Xor", "Not"})
    registry.at(op).lower = lowerLogical;
  registry.at("Where").lower = lowerWhere;
  for (const char *op : {"IsNaN", "IsInf"})
    registry.at(op).lower = lowerFloatTest;
}

} // namespace bundlefit
