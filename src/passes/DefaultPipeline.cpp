//===- DefaultPipeline.cpp - The pass order every compile uses -------------===//
//
// Why one function: the order is a correctness matter (folding first, because
// later type inference needs folded shape operands; BN folding before
// activation fusion, because Conv->BN->Relu must become Conv(+BN)->Relu before
// the Relu can be fused; dead code last, to sweep what the others left). The
// CLI, the conformance driver and tests all call this so that they test
// the same pipeline.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/passes/Passes.h"

#include "bundlefit/ops/OpRegistry.h"

namespace bundlefit {

PassStats runDefaultPasses(Graph &graph, const PassOptions &options) {
  PassStats stats;
  stats.nodesBefore = graph.numNodes();
  stats.folded = foldConstantsAndInferTypes(graph);
  // Recurrent layers unroll once their shapes are known; the unrolled nodes
  // then get types, and constant weights fold, in a second round.
  if (expandRecurrentOps(graph) > 0)
    stats.folded += foldConstantsAndInferTypes(graph);
  // Exported GELU chains (Div, Erf, Add, Mul, Mul) become one Gelu before
  // the sweep removes what they leave, so activation fusion sees Gelu.
  if (options.fuseActivations)
    stats.activationsFused += fuseGelu(graph);
  // An early sweep so that "single reader" tests below do not see dead readers.
  stats.deadNodesRemoved += eliminateDeadNodes(graph);
  if (options.foldBatchNorm)
    stats.batchNormsFolded = foldBatchNorm(graph);
  if (options.eliminateIdentities)
    stats.identitiesRemoved = eliminateIdentities(graph);
  if (options.fuseActivations)
    stats.activationsFused = options.mayFuseActivation
                                 ? fuseActivations(graph, options.mayFuseActivation)
                                 : fuseActivations(graph);
  stats.deadNodesRemoved += eliminateDeadNodes(graph);
  graph.topologicalSort();
  graph.verify();
  // Every rewrite must leave types that inference agrees with.
  inferGraphTypes(graph);
  stats.nodesAfter = graph.numNodes();
  return stats;
}

std::string describePassStats(const PassStats &stats) {
  return "passes: " + std::to_string(stats.nodesBefore) + " -> " +
         std::to_string(stats.nodesAfter) + " nodes (folded " + std::to_string(stats.folded) +
         ", batchnorm " + std::to_string(stats.batchNormsFolded) + ", identities " +
         std::to_string(stats.identitiesRemoved) + ", fused activations " +
         std::to_string(stats.activationsFused) + ", dead " +
         std::to_string(stats.deadNodesRemoved) + ")";
}

} // namespace bundlefit
