#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/MemoryBudget.h"

#include <algorithm>
#include <optional>

namespace bundlefit {

// Each int8 build and reference of src/ops/<family>/, found by file name
// (src/ops/CMakeLists.txt writes Int8Builds.def).
#define BUNDLEFIT_INT8_BUILD(X) void register##X##Int8(OpRegistry &registry);
#define BUNDLEFIT_INT8_REFERENCE(X) void register##X##Int8Reference(OpRegistry &registry);
#include "Int8Builds.def"
#undef BUNDLEFIT_INT8_BUILD
#undef BUNDLEFIT_INT8_REFERENCE

namespace {

/// Sets the int8 part of the definitions (Int8Def, CmsisDef, DeviceDef),
/// once every float operator is registered: each build completes its own
/// operators' float definitions and reads no other build's, so their order
/// is free.
void registerInt8Builds(OpRegistry &registry) {
#define BUNDLEFIT_INT8_BUILD(X) register##X##Int8(registry);
#define BUNDLEFIT_INT8_REFERENCE(X) register##X##Int8Reference(registry);
#include "Int8Builds.def"
#undef BUNDLEFIT_INT8_BUILD
#undef BUNDLEFIT_INT8_REFERENCE
}

/// An operator whose int8 nodes run in bundles runs them in the
/// interpreter too: the bundle-vs-interpreter tests compare the two, and
/// a build whose reference file lost its registration would otherwise
/// leave its nodes without one.
void checkInt8References(const OpRegistry &registry) {
  for (const std::string &name : registry.supportedOps()) {
    const OpDef &def = *registry.find(name);
    if (def.int8.lower && !def.int8.interpret)
      fatalInternal("operator '" + name +
                    "' has an int8 bundle kernel (int8.lower) but no int8 reference "
                    "(int8Runs): src/ops/<family>/*Reference.cpp registers it");
  }
}

} // namespace

const OpRegistry &OpRegistry::get() {
  // Built once and never copied: byName_ points into defs_.
  static const OpRegistry &registry = *[] {
    auto *r = new OpRegistry;
    registerConvOps(*r);
    registerPoolOps(*r);
    registerMatMulOps(*r);
    registerNormOps(*r);
    registerResizeOps(*r);
    registerElementwiseOps(*r);
    registerShapeOps(*r);
    registerReduceOps(*r);
    registerQuantOps(*r);
    registerLinearQuantOps(*r);
    registerFusedOps(*r);
    registerMovementOps(*r);
    registerIndexOps(*r);
    registerUnaryMathOps(*r);
    registerRecurrentOps(*r);
    registerInt16x8Ops(*r);
    registerInt8Builds(*r);
    checkInt8References(*r);
    // The other direction of add()'s check: every identity but a model-only
    // one has a definition.
    for (size_t i = 0; i < kNumOps; ++i) {
      const Op op = static_cast<Op>(i);
      if (!isModelOnlyOp(op) && !r->find(opName(op)))
        fatalInternal("Ops.def lists '" + opName(op) +
                      "' but no definition in src/ops registers it");
    }
    return r;
  }();
  return registry;
}

OpDef &OpRegistry::add(OpDef def) {
  if (byName_.count(def.opType))
    fatalInternal("operator '" + def.opType + "' is registered twice");
  // Passes name operators as Op::X (ir/Op.h): a definition needs a line there.
  const Op op = opFromName(def.opType);
  if (op == Op::Unknown || isModelOnlyOp(op))
    fatalInternal("operator '" + def.opType +
                  "' has no line in src/ir/include/bundlefit/ir/Ops.def");
  defs_.push_back(std::move(def));
  byName_[defs_.back().opType] = &defs_.back();
  return defs_.back();
}

OpDef &OpRegistry::at(const std::string &opType) {
  auto it = byName_.find(opType);
  if (it == byName_.end())
    fatalInternal("operator '" + opType + "' is not registered yet");
  return *it->second;
}

const OpDef *OpRegistry::find(const std::string &opType) const {
  auto it = byName_.find(opType);
  return it == byName_.end() ? nullptr : it->second;
}

std::vector<std::string> OpRegistry::supportedOps() const {
  std::vector<std::string> names;
  for (const OpDef &def : defs_)
    names.push_back(def.opType);
  std::sort(names.begin(), names.end());
  return names;
}

void inferNodeTypes(Node &node) {
  const OpDef *def = OpRegistry::get().find(node.opType);
  if (!def || !def->inferTypes)
    throw Error(ExitCode::Unsupported, node.describe() + ": unsupported operator");
  for (const Value *input : node.inputs)
    if (input && !input->typeKnown)
      fatalInternal(node.describe() + " reads '" + input->name + "' whose type is not known yet");
  try {
    def->inferTypes(node);
  } catch (const Error &e) {
    // Checks below the node (an attribute's type, say) cannot name it; say
    // which node so the one-line error points at the model's culprit.
    const std::string where = node.describe();
    if (std::string(e.what()).find(where) != std::string::npos)
      throw;
    throw Error(e.code(), where + ": " + e.what());
  }
  for (Value *output : node.outputs) {
    // Shapes come from the model: one that overflows would wrap every size
    // computed from it (and crash constant folding), so refuse it here.
    if (output && !checkedTensorBytes(output->type.shape, dtypeSize(output->type.dtype)))
      throw Error(ExitCode::BadInputFile,
                  node.describe() + ": output '" + output->name + "' of type " +
                      output->type.str() + " is larger than bundlefit's limit of " +
                      std::to_string(kMaxTensorBytes >> 30) + " GiB per tensor");
    output->typeKnown = true;
  }
}

void inferGraphTypes(Graph &graph) {
  for (Node *node : graph.nodes())
    inferNodeTypes(*node);
  // Every report, cost model and pass sums node MACs: a model whose total
  // would pass kMaxModelMacs is refused here, once, so none of them can wrap
  // (1,025 MatMuls of 2^54 MACs once reported 2^54).
  uint64_t total = 0;
  for (const Node *node : graph.nodes()) {
    std::optional<uint64_t> next = checkedAdd(total, countNodeMacs(*node));
    if (!next || *next > kMaxModelMacs)
      throw Error(ExitCode::Unsupported,
                  node->describe() + ": the model's MAC count passes 2^56 here (" +
                      std::to_string(kMaxModelMacs) + "), more than bundlefit counts");
    total = *next;
  }
}

uint64_t countNodeMacs(const Node &node) {
  const OpDef *def = OpRegistry::get().find(node.opType);
  if (!def || !def->countMacs)
    return 0;
  return def->countMacs(node);
}

uint64_t macProduct(const Node &node, std::initializer_list<uint64_t> factors) {
  uint64_t product = 1;
  for (uint64_t factor : factors) {
    std::optional<uint64_t> next = checkedMul(product, factor);
    if (!next || *next > kMaxModelMacs)
      throw Error(ExitCode::Unsupported, node.describe() + ": its MAC count passes 2^56 (" +
                                             std::to_string(kMaxModelMacs) +
                                             "), more than bundlefit counts");
    product = *next;
  }
  return product;
}

bool isParameterOperand(const Node &node, size_t index) {
  const OpDef *def = OpRegistry::get().find(node.opType);
  return def && index < 32 && (def->parameterOperands >> index & 1u) != 0;
}

bool hasOpTrait(const std::string &opType, uint32_t traits) {
  const OpDef *def = OpRegistry::get().find(opType);
  return def && (def->traits & traits) == traits;
}

Int8Rule int8RuleOf(const std::string &opType) {
  const OpDef *def = OpRegistry::get().find(opType);
  return def ? def->int8.rule : Int8Rule::None;
}

bool isInt8Node(const Node &node) {
  auto quantized = [](const Value *v) {
    return v && v->type.dtype == DType::Int8 && !v->type.quant.empty();
  };
  return std::any_of(node.inputs.begin(), node.inputs.end(), quantized) ||
         std::any_of(node.outputs.begin(), node.outputs.end(), quantized);
}

bool needsInt8Kernel(const Node &node) {
  if (hasOpTrait(node.opType, kOpMovesBytes) || hasOpTrait(node.opType, kOpCompound))
    return false;
  return isInt8Node(node);
}

std::vector<Tensor> evaluateNode(const Node &node, const std::vector<const Tensor *> &inputs) {
  const OpDef *def = OpRegistry::get().find(node.opType);
  const bool int8 = needsInt8Kernel(node);
  KernelFn kernel = !def ? nullptr : int8 ? def->int8.interpret : def->interpret;
  if (!kernel)
    throw Error(ExitCode::Unsupported, node.describe() + ": the reference interpreter has no " +
                                           (int8 ? "int8 " : "") + "kernel");
  // Checked before allocating: a 300-byte model can ask for any size.
  checkMemoryBudget(outputBytes(node), node.describe() + ": evaluating it");
  std::vector<Tensor> outputs;
  outputs.reserve(node.outputs.size());
  for (const Value *output : node.outputs)
    outputs.emplace_back(output->type);
  kernel(node, inputs, outputs);
  return outputs;
}

uint64_t outputBytes(const Node &node) {
  uint64_t bytes = 0;
  for (const Value *output : node.outputs)
    if (output) // each below 1 TiB (type inference), so the sum cannot wrap
      bytes += output->type.bytes();
  return bytes;
}

} // namespace bundlefit
