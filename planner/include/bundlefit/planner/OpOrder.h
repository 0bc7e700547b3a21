//===- OpOrder.h - Choose an operator order with a low peak -----*- C++ -*-===//
//
// In a branchy graph the order of independent operators decides how many
// tensors are alive at once. Given the graph as plain numbers (no ONNX), this
// finds a topological order whose peak live bytes is as low as we can prove,
// and never returns one worse than the order it was given.
//
// The memory model matches the planner's buffers: executing the op at step k
// keeps alive every tensor born at or before k (its producer ran, or it is a
// graph input) and still needed at k (a consumer runs at k or later, or it is
// kept alive to the end), plus the op's own outputs and scratch. An unused
// graph input takes no bytes.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_OPORDER_H
#define BUNDLEFIT_PLANNER_OPORDER_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit::planner {

struct OpNode {
  std::vector<int> inputs;  ///< Tensors read (indices into tensorSizes).
  std::vector<int> outputs; ///< Tensors written; each tensor has at most one producer.
  uint64_t scratch = 0;     ///< Workspace bytes live only while the op runs.
};

struct OpGraph {
  std::vector<uint64_t> tensorSizes;
  std::vector<OpNode> ops;
  std::vector<int> keepAlive; ///< Tensors live until the last step (graph outputs).
};

/// True when order lists every op once and each op after its producers.
bool isTopologicalOrder(const OpGraph &graph, const std::vector<int> &order);

/// Max over steps of live bytes for a topological order.
uint64_t computePeak(const OpGraph &graph, const std::vector<int> &order);

/// Live bytes on each step of order (what computePeak takes the max of).
std::vector<uint64_t> computeLiveBytes(const OpGraph &graph, const std::vector<int> &order);

struct OrderOptions {
  /// Exact dynamic programming over sets of executed ops while every layer
  /// holds at most this many sets; beyond it, a beam of this width. Work and
  /// memory grow with maxStates x ops.
  size_t maxStates = 1'024;
  /// Successors looked at and words copied over the whole search (10-20
  /// ns each): each layer keeps the states its share of what is left
  /// pays for, at least one, so a wide graph is ordered by a narrow beam
  /// (5,000 branches into one Concat: about a second) and one too large
  /// for even that keeps the order given (method "given: too large to
  /// reorder").
  uint64_t maxWork = 30'000'000;
};

struct OrderResult {
  std::vector<int> order;
  uint64_t peak = 0;
  bool provedOptimal = false; ///< The exact DP ran to the end.
  std::string method;         ///< "exact-dp", "beam", "given" or "given: too large to reorder".
  uint64_t work = 0;          ///< Work spent, in OrderOptions::maxWork's units.
};

/// A topological order with minimal (or, past maxStates, low) peak. Never
/// worse than initialOrder when that is a valid topological order.
OrderResult optimiseOrder(const OpGraph &graph, const std::vector<int> &initialOrder,
                          const OrderOptions &options = {});

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_OPORDER_H
