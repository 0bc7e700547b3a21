//===- Interpreter.h - The float reference interpreter ---------------------===//
//
// Runs a graph node by node with simple, obviously correct loops. It is the
// yardstick for bundles (tests compare against it), the engine of constant
// folding (evaluateNode on constant inputs) and of the quantization profiler
// (the observer sees every tensor). Speed is not a goal; clarity is.
//
// Kernels are registered per operator family in src/interp/<Family>.cpp,
// listed in src/interp/AllKernels.cpp, mirroring src/ops/.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ir/Tensor.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace bundlefit {

/// Computes a node's outputs from its inputs. `inputs[i]` is nullptr for an
/// omitted optional input. `outputs` arrive sized to node.outputs.size() with
/// types set from node.outputs[i]->type and bytes allocated.
using KernelFn = void (*)(const Node &node, const std::vector<const Tensor *> &inputs,
                          std::vector<Tensor> &outputs);

class KernelTable {
public:
  static const KernelTable &get();
  void add(const std::string &opType, KernelFn fn);
  KernelFn find(const std::string &opType) const;

private:
  std::map<std::string, KernelFn> kernels_;
};

void registerConvKernels(KernelTable &table);
void registerPoolKernels(KernelTable &table);
void registerMatMulKernels(KernelTable &table);
void registerNormKernels(KernelTable &table);
void registerResizeKernels(KernelTable &table);
void registerElementwiseKernels(KernelTable &table);
void registerShapeKernels(KernelTable &table);
void registerReduceKernels(KernelTable &table);
void registerFusedKernels(KernelTable &table);     // ConvPool (ops/FusedOps.h)
void registerUnaryMathKernels(KernelTable &table); // ops/UnaryMath.h
void registerMovementKernels(KernelTable &table);
void registerIndexKernels(KernelTable &table); // GatherElements, GatherND, Scatter, OneHot  //
                                               // Expand, Tile, DepthToSpace, Trilu
void registerLinearQuantKernels(KernelTable &table); // QuantizeLinear, DequantizeLinear

/// Evaluates one node whose output types are already inferred.
std::vector<Tensor> evaluateNode(const Node &node, const std::vector<const Tensor *> &inputs);

class Interpreter {
public:
  /// Called after each node output (and each graph input) is computed.
  using Observer = std::function<void(const Value &value, const Tensor &tensor)>;

  explicit Interpreter(const Graph &graph) : graph_(graph) {}
  void setObserver(Observer observer) { observer_ = std::move(observer); }

  /// Runs the graph. `inputs` are keyed by graph input name; the result is
  /// keyed by graph output name. Throws Error(BadInputFile) naming the input
  /// when one is missing or has the wrong type/shape.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor> &inputs) const;

private:
  const Graph &graph_;
  Observer observer_;
};

} // namespace bundlefit
