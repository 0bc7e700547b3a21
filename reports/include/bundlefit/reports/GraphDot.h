//===- GraphDot.h - The compiled graph as Graphviz -------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <string>

namespace bundlefit {

/// A Graphviz digraph of the graph after passes: one box per node (op,
/// schedule step, fused activation), one ellipse per tensor with its type
/// and, when a plan is given, its region and byte offset. Constants are
/// drawn small and grey. `dot -Tsvg graph.dot -o graph.svg` renders it.
std::string renderGraphDot(const Graph &graph, const MemoryPlan *plan);

} // namespace bundlefit
