#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

#include <algorithm>

namespace bundlefit {

const OpRegistry &OpRegistry::get() {
  // Built once and never copied: byName_ points into schemas_.
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
    return r;
  }();
  return registry;
}

OpSchema &OpRegistry::add(OpSchema schema) {
  if (byName_.count(schema.opType))
    fatalInternal("operator '" + schema.opType + "' is registered twice");
  schemas_.push_back(std::move(schema));
  byName_[schemas_.back().opType] = &schemas_.back();
  return schemas_.back();
}

const OpSchema *OpRegistry::find(const std::string &opType) const {
  auto it = byName_.find(opType);
  return it == byName_.end() ? nullptr : it->second;
}

std::vector<std::string> OpRegistry::supportedOps() const {
  std::vector<std::string> names;
  for (const OpSchema &schema : schemas_)
    names.push_back(schema.opType);
  std::sort(names.begin(), names.end());
  return names;
}

void inferNodeTypes(Node &node) {
  const OpSchema *schema = OpRegistry::get().find(node.opType);
  if (!schema || !schema->inferTypes)
    throw Error(ExitCode::Unsupported, node.describe() + ": unsupported operator");
  for (const Value *input : node.inputs)
    if (input && !input->typeKnown)
      fatalInternal(node.describe() + " reads '" + input->name + "' whose type is not known yet");
  try {
    schema->inferTypes(node);
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
}

uint64_t countNodeMacs(const Node &node) {
  const OpSchema *schema = OpRegistry::get().find(node.opType);
  if (!schema || !schema->countMacs)
    return 0;
  return schema->countMacs(node);
}

bool isParameterOperand(const Node &node, size_t index) {
  const OpSchema *schema = OpRegistry::get().find(node.opType);
  return schema && index < 32 && (schema->parameterOperands >> index & 1u) != 0;
}

bool hasOpTrait(const std::string &opType, uint32_t traits) {
  const OpSchema *schema = OpRegistry::get().find(opType);
  return schema && (schema->traits & traits) == traits;
}

Int8Rule int8RuleOf(const std::string &opType) {
  const OpSchema *schema = OpRegistry::get().find(opType);
  return schema ? schema->int8 : Int8Rule::None;
}

} // namespace bundlefit
