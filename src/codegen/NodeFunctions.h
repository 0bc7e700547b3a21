//===- NodeFunctions.h - One function per kind of node (internal) ---------===//
//
// Why: each scheduled node gets its own function with the kernels inlined and
// specialised. Nodes that differ only in where their tensors live (a chain of
// 20,000 identical Relus, repeated blocks of a network) would each be
// optimised and emitted again: compile time and .text grow with the node
// count instead of with the kinds of node. The pool turns each node's tensor
// offsets into parameters, keeps one function per kind, and folds the offsets
// back into kinds only one node uses, so those compile as before.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Transforms/Utils/FunctionComparator.h>

#include <cstddef>
#include <unordered_map>
#include <vector>

namespace llvm {
class Constant;
class Function;
class GetElementPtrInst;
} // namespace llvm

namespace bundlefit {

class NodeFunctionPool {
public:
  /// `bases`: the pointer parameters every node function starts with
  /// (constantWeight, mutableWeight, activations, then any weight segments).
  explicit NodeFunctionPool(unsigned bases = 3) : bases_(bases) {}

  struct Use {
    llvm::Function *fn = nullptr;
    /// i64 byte offsets to pass after the region bases.
    std::vector<llvm::Constant *> offsets;
  };

  /// `lowered` is a node function (constantWeight, mutableWeight,
  /// activations) whose tensor addresses are `addresses`: GEPs of a base
  /// argument by a constant i64. Replaces it by a function taking those
  /// offsets as parameters, or by an identical one already in the pool.
  Use add(llvm::Function *lowered, llvm::ArrayRef<llvm::GetElementPtrInst *> addresses);

  /// Puts the offsets of the single call back into every function that one
  /// node calls, so it is specialised exactly as a per-node function.
  void specialiseSingleUses();

  /// Nodes that called a function another node already had.
  size_t sharedNodes() const { return shared_; }

private:
  std::unordered_map<size_t, std::vector<llvm::Function *>> byHash_;
  std::vector<llvm::Function *> functions_;
  llvm::GlobalNumberState globalNumbers_;
  size_t shared_ = 0;
  unsigned bases_ = 3;
};

} // namespace bundlefit
