//===- Cmsis.cpp - Which int8 nodes call CMSIS-NN, and its scratch ---------===//
#include "bundlefit/ops/Cmsis.h"

#include "bundlefit/ops/OpRegistry.h"

namespace bundlefit {

namespace {

bool isInt8(const Value *v) { return v && v->type.dtype == DType::Int8; }
bool isInt16(const Value *v) { return v && v->type.dtype == DType::Int16; }

/// The definition's choice for `node` from its geometry and attributes.
std::string chooseFunction(const Node &node, CmsisExtension extension, std::string *whyNot) {
  const OpDef *def = OpRegistry::get().find(node.opType);
  if (!def || !def->cmsis.function) {
    if (whyNot)
      *whyNot = std::string("no CMSIS-NN ") +
                (node.output(0) && node.output(0)->type.dtype == DType::Int16 ? "s16" : "s8") +
                " function for " + node.opType;
    return "";
  }
  if (!def->cmsis.choose) // Mapped with no condition on the node.
    return def->cmsis.function;
  return def->cmsis.choose(node, extension, whyNot);
}

} // namespace

std::vector<std::string> cmsisNnOps() {
  std::vector<std::string> ops;
  for (const std::string &op : OpRegistry::get().supportedOps())
    if (OpRegistry::get().find(op)->cmsis.function)
      ops.push_back(op);
  return ops;
}

std::string cmsisFunctionFor(const Node &node, CmsisExtension extension, std::string *whyNot) {
  // int8 operators call the s8 functions; TFLite's int16x8 ones (src/ops/int16x8, NHWC already)
  // the s16 functions their definitions name.
  const bool s8 = needsInt8Kernel(node) && isInt8(node.input(0)) && isInt8(node.output(0));
  const bool s16 = isInt16(node.input(0)) && isInt16(node.output(0));
  if (!s8 && !s16) {
    if (whyNot)
      *whyNot = "not an int8 operator";
    return "";
  }
  return chooseFunction(node, extension, whyNot);
}

int64_t cmsisScratchFor(const Node &node, CmsisExtension extension) {
  const std::string function = chooseFunction(node, extension, nullptr);
  const OpDef *def = OpRegistry::get().find(node.opType);
  if (function.empty() || !def->cmsis.scratch)
    return 0;
  return def->cmsis.scratch(node, function, extension);
}

std::string cmsisPrototypeFor(const Node &node) {
  const std::string function = node.attrs.getString(kCmsisAttribute, "");
  const OpDef *def = OpRegistry::get().find(node.opType);
  if (function.empty() || !def)
    return "";
  for (const CmsisPrototype &prototype : def->cmsis.prototypes)
    if (function == prototype.function)
      return prototype.declarations;
  return "";
}

std::string cmsisApiChecksFor(const Node &node) {
  const OpDef *def = OpRegistry::get().find(node.opType);
  if (!node.attrs.has(kCmsisAttribute) || !def || !def->cmsis.apiChecks)
    return "";
  return def->cmsis.apiChecks(node);
}

} // namespace bundlefit
