//===- LutFusion.cpp - int8 activation tables fused into conv stores -------===//
#include "LutFusion.h"

#include "LowerInt8.h"

#include "bundlefit/ops/Cmsis.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <optional>

namespace bundlefit {
namespace {

/// An int8 node that runs the bundle's own kernels (not CMSIS-NN's).
bool ownInt8Kernel(const Node &node) {
  return needsInt8Kernel(node) && !node.attrs.has(kCmsisAttribute);
}

/// `node`'s calls when it runs the bundle's own int8 kernels (none otherwise).
std::vector<KernelCall> ownInt8Calls(const Node &node) {
  if (!ownInt8Kernel(node))
    return {};
  const OpDef *def = OpRegistry::get().find(node.opType);
  if (!def || !def->int8.lower)
    return {};
  return describeInt8Calls(node);
}

/// Whether `node` is a plain table activation: one call marked a lookup.
bool isTableActivation(const Node &node) {
  if (node.inputs.size() != 1 || !node.input(0) || !node.output())
    return false;
  const std::vector<KernelCall> calls = ownInt8Calls(node);
  return calls.size() == 1 && calls[0].lut.lookup;
}

/// The pair's conditions, asked from either end.
bool fusible(const Graph &graph, const PlanView &plan, const Node &producer,
             const Node &activation) {
  if (!ownInt8Kernel(producer) || !producer.output() || producer.outputs.size() != 1 ||
      producer.output()->isGraphOutput || activation.input(0) != producer.output())
    return false;
  // Nothing else reads the producer's output, and the plan put the
  // activation's output on it: the producer's stores may then write the
  // activated values where the activation would have.
  const std::vector<Node *> users = graph.users(producer.output());
  if (users.size() != 1 || users[0] != &activation || !plan.outputOnInput(activation))
    return false;
  if (!isTableActivation(activation))
    return false;
  // Every call of the producer takes a table at its stores, and its family
  // measured that it pays there (ConvInt8.cpp).
  const std::vector<KernelCall> calls = ownInt8Calls(producer);
  return !calls.empty() && std::all_of(calls.begin(), calls.end(), [](const KernelCall &c) {
    return c.lut.atStore && c.lut.paysAtStore;
  });
}

} // namespace

const Node *fusedLutConsumer(const Graph &graph, const PlanView &plan, const Node &producer) {
  if (!producer.output())
    return nullptr;
  const std::vector<Node *> users = graph.users(producer.output());
  if (users.size() != 1 || !fusible(graph, plan, producer, *users[0]))
    return nullptr;
  return users[0];
}

bool lutFusedIntoProducer(const Graph &graph, const PlanView &plan, const Node &activation) {
  const Value *x = activation.input(0);
  return x && x->producer && fusible(graph, plan, *x->producer, activation);
}

void applyFusedLut(const Node &producer, const Node &activation,
                   std::vector<KernelCall> &producerCalls) {
  const std::vector<KernelCall> own = describeInt8Calls(activation);
  const KernelCall &lookup = own.at(0);
  if (!lookup.lut.lookup || *lookup.lut.lookup >= lookup.args.size() ||
      lookup.args[*lookup.lut.lookup].kind != KernelArg::I8Table ||
      lookup.args[*lookup.lut.lookup].table.size() != 256)
    fatalInternal(activation.describe() + ": " + lookup.kernel +
                  "'s marked table is no 256-entry table");
  const KernelArg &table = lookup.args[*lookup.lut.lookup];
  for (KernelCall &call : producerCalls) {
    const std::optional<size_t> at = call.lut.atStore;
    if (!at || *at >= call.args.size() || call.args[*at].kind != KernelArg::Address ||
        call.args[*at].value)
      fatalInternal(producer.describe() + ": " + call.kernel +
                    " has no null table argument where its mark says");
    // The table takes the producer's slot with the slot's aliasing facts
    // (KernelArg::noAlias): the lookup's own call does not mark its table,
    // and a shared wrapper would lose noalias on it (KernelClasses.cpp).
    const bool noAlias = call.args[*at].noAlias;
    call.args[*at] = table;
    call.args[*at].noAlias = noAlias;
  }
}

} // namespace bundlefit
