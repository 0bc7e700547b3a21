#include "bundlefit/ir/OpRegistry.h"

#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

#include <algorithm>

namespace bundlefit {

const OpRegistry &OpRegistry::get() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerConvOps(r);
    registerPoolOps(r);
    registerMatMulOps(r);
    registerNormOps(r);
    registerResizeOps(r);
    registerElementwiseOps(r);
    registerShapeOps(r);
    registerReduceOps(r);
    registerQuantOps(r);
    registerFusedOps(r);
    return r;
  }();
  return registry;
}

void OpRegistry::add(OpSchema schema) { schemas_.push_back(std::move(schema)); }

const OpSchema *OpRegistry::find(const std::string &opType) const {
  for (const OpSchema &schema : schemas_)
    if (schema.opType == opType)
      return &schema;
  return nullptr;
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
      fatalInternal(node.describe() + " reads '" + input->name +
                    "' whose type is not known yet");
  schema->inferTypes(node);
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
  const std::string &op = node.opType;
  if (index == 0)
    return op == "ConstantOfShape" || op == "Range";
  if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Split" ||
      op == "Slice" || op == "Pad" || op == "Resize" || op == "Clip" ||
      op == "Expand" || op == "Tile" || op == "Range")
    return true;
  return false;
}

} // namespace bundlefit
