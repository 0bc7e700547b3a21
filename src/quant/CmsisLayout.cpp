//===- CmsisLayout.cpp - Prepare an int8 graph for CMSIS-NN calls ----------===//
//
// Three steps (CmsisLayout.h has the why): choose the nodes, repack their
// constants the way CMSIS-NN reads them (both asked of each operator's
// definition, OpDef::cmsis), then insert the NCHW <-> NHWC copies where an
// NHWC value meets a reader that wants the other layout.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/quant/CmsisLayout.h"

#include "bundlefit/ops/OpRegistry.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace bundlefit {

namespace {

/// NCHW and NHWC hold the same bytes when C == 1 or H*W == 1.
bool layoutFree(const Value *value) {
  const Shape &s = value->type.shape;
  return s.size() != 4 || s[1] == 1 || s[2] * s[3] == 1;
}

bool isInt8(const Value *v) { return v && v->type.dtype == DType::Int8; }

const CmsisDef &cmsisOf(const Node &node) { return OpRegistry::get().find(node.opType)->cmsis; }

/// An int8 node whose kernel reads and writes its activations in the same
/// element order, whatever it is (Int8Def::anyLayout), all of the output's
/// shape (no broadcasting, no constant operand in NCHW order); its output is
/// not a graph output (those stay NCHW).
bool followsLayout(const Node &node) {
  const OpDef *def = OpRegistry::get().find(node.opType);
  const Value *y = node.output(0);
  if (!def || !def->int8.anyLayout || !needsInt8Kernel(node) || !isInt8(y) || y->isGraphOutput ||
      y->type.rank() != 4)
    return false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value *x = node.inputs[i];
    if (isParameterOperand(node, i))
      continue; // Clip's bounds: compiled into the code
    if (!x || x->isConstant() || !isInt8(x) || x->type.shape != y->type.shape)
      return false;
  }
  return true;
}

/// A view of NHWC `value` as [N, C*H*W] read only by CMSIS-NN nodes that can
/// read a flattened NHWC vector (fully connected: their weight columns are
/// permuted) instead of copying the activation back to NCHW. Returns
/// whether it did.
bool absorbFlattenedNhwc(Graph &graph, Node &view, const Value *value,
                         const std::map<const Node *, std::string> &chosen) {
  if (!isViewOp(view.opType))
    return false;
  const Shape &s = value->type.shape;
  const Value *flat = view.output(0);
  if (!flat || flat->isGraphOutput || flat->type.rank() != 2 || flat->type.shape[0] != s[0] ||
      flat->type.shape[1] != s[1] * s[2] * s[3])
    return false;
  std::vector<Node *> users = graph.users(flat);
  for (const Node *user : users)
    if (!chosen.count(user) || !cmsisOf(*user).readFlattenedNhwc || user->inputs[0] != flat ||
        user->inputs[1] == flat)
      return false;
  for (Node *user : users)
    cmsisOf(*user).readFlattenedNhwc(graph, *user, s[1], s[2], s[3]);
  return !users.empty();
}

} // namespace

CmsisPreparation prepareCmsisGraph(Graph &graph, CmsisExtension extension) {
  CmsisPreparation result;
  std::map<const Node *, std::string> chosen;
  for (Node *node : graph.nodes()) {
    const OpDef *def = OpRegistry::get().find(node->opType);
    if (node->attrs.has(kCmsisAttribute) || !def)
      continue;
    if (!def->cmsis.function) {
      // An int16x8 operator CMSIS-NN has no s16 function for stays on bundlefit's kernel: say
      // so (an int8 one without an s8 function is no news: the s8 list is in the README).
      if (node->output(0) && node->output(0)->type.dtype == DType::Int16)
        result.portable.push_back(node->describe() + ": no CMSIS-NN s16 function for " +
                                  node->opType);
      continue;
    }
    std::string why;
    std::string function = cmsisFunctionFor(*node, extension, &why);
    if (!function.empty() && def->cmsis.nhwc && node->output(0)->isGraphOutput &&
        !layoutFree(node->output(0)))
      function.clear(), why = "its output is a graph output (kept NCHW)";
    if (function.empty()) {
      if (why != "not an int8 operator")
        result.portable.push_back(node->describe() + ": " + why);
      continue;
    }
    node->attrs.setInt(kCmsisScratchAttribute, cmsisScratchFor(*node, extension));
    if (def->cmsis.prepare)
      def->cmsis.prepare(graph, *node, function, extension);
    node->attrs.setString(kCmsisAttribute, function);
    chosen[node] = function;
    ++result.cmsisNodes;
  }

  // Stored layouts, in execution order: a CMSIS-NN conv/pool writes NHWC; a
  // layout-free elementwise node (followsLayout) writes NHWC when one of its
  // inputs is, so residual Adds and Relus keep a CMSIS-NN chain in NHWC.
  auto readsNhwc = [&](const Node *node) { return chosen.count(node) && cmsisOf(*node).nhwc; };
  std::set<const Value *> nhwc;
  for (const Node *node : graph.nodes()) {
    bool stored = readsNhwc(node);
    if (followsLayout(*node))
      for (const Value *input : node->inputs)
        stored = stored || (input && nhwc.count(input));
    if (stored && !layoutFree(node->output(0)))
      nhwc.insert(node->output(0));
  }
  // What each reader wants; where it differs, one shared copy per value.
  auto wantsNhwc = [&](const Node *reader, const Value *value) {
    if (readsNhwc(reader))
      return reader->inputs[0] == value;
    return followsLayout(*reader) && nhwc.count(reader->output(0)) != 0;
  };
  std::vector<Value *> values;
  for (Node *node : graph.nodes())
    for (Value *input : node->inputs)
      if (input && !input->isConstant() && input->type.dtype == DType::Int8 && !layoutFree(input))
        values.push_back(input);
  std::set<const Value *> done;
  for (Value *value : values) {
    if (!done.insert(value).second)
      continue;
    const bool storedNhwc = nhwc.count(value) != 0;
    std::vector<Node *> readers;
    for (Node *user : graph.users(value)) {
      if (wantsNhwc(user, value) == storedNhwc)
        continue;
      if (storedNhwc && absorbFlattenedNhwc(graph, *user, value, chosen))
        continue;
      readers.push_back(user);
    }
    if (readers.empty())
      continue;
    const std::string suffix = storedNhwc ? "_nchw" : "_nhwc";
    Node *copy = graph.insertNodeBefore(readers.front(), Op::CmsisLayout,
                                        graph.uniqueNodeName(value->name + suffix), {value},
                                        {value->name + suffix});
    copy->attrs.setString("to", storedNhwc ? "NCHW" : "NHWC");
    copy->output(0)->type = value->type;
    copy->output(0)->typeKnown = true;
    for (Node *reader : readers)
      for (Value *&input : reader->inputs)
        if (input == value)
          input = copy->output(0);
    ++result.layoutNodes;
  }
  graph.removeUnusedValues();
  return result;
}

} // namespace bundlefit
