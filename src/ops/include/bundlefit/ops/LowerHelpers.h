//===- LowerHelpers.h - Building float kernel calls as data ----------------===//
//
// What the families' float lowerings (OpDef::lower, src/ops/<family>/*Lower.cpp)
// share: operand checks that name the node, loop nests over strided
// operands (the kernels take six-dimensional dims/stride tables) and the
// common calls (a byte copy, a strided copy, an elementwise float kernel).
// Code generation uses the same loop nests for a patch stage's copies.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ops/KernelCall.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {
namespace lowering {

constexpr int kMaxRank = 6; // BF_MAX_RANK

using Ints = std::vector<int64_t>;

using shape_helpers::unsupported;
/// Operand `i`, which must be present.
const Value *input(const Node &node, size_t i);
void requireFloat(const Node &node, const Value *value);
void requireDType(const Node &node, const Value *value, DType dtype);
/// Constant operand `i` as integers (empty when absent).
Ints constantInts(const Node &node, size_t i, const std::string &what);

/// Suffix of the integer kernel variants (bf_binary_i8, ...) or nullptr.
const char *intKernelSuffix(DType dtype);
/// Kernel-name suffix for `v`'s element size (u8, u32, u64).
const char *sizeSuffix(const Node &node, const Value *v);
/// Kernel-name suffix of an index operand (i32, i64, f32).
std::string indexSuffix(const Node &node, const Value *indices);

Ints denseStrides(const Shape &shape);
int64_t product(const Shape &shape, size_t begin, size_t end);
/// Strides reading `v` broadcast to `out` (0 on broadcast dims).
Ints broadcastStrides(const Node &node, const Value *v, const Shape &out);

/// Loop nest over `dims` with one stride vector per operand. Drops size-1
/// dimensions and merges neighbours that are contiguous for every operand.
struct LoopNest {
  Ints dims;
  std::vector<Ints> strides;

  void simplify();
};

/// Pads at the front to kMaxRank with `fill`.
std::vector<int32_t> padFront(const Ints &values, int64_t fill, const Node &node);
/// `values` as an int32 table, each checked to fit.
KernelArg intTable(const Node &node, const Ints &values);

/// The copy kernel of `elemSize`-byte elements (bf_copy_strided_*) and its
/// dims / source / destination stride tables for `nest` (simplified here).
struct StridedCopy {
  std::string kernel;
  KernelArg dims, srcStrides, dstStrides;
};
StridedCopy stridedCopyTables(const Node &node, LoopNest nest, size_t elemSize);
KernelCall stridedCopy(const Node &node, KernelArg src, KernelArg dst, LoopNest nest,
                       size_t elemSize);
/// bf_copy_bytes of `dst`'s bytes.
KernelCall copyBytes(const Value *src, const Value *dst);
/// An elementwise float kernel `kernel(x, y, n, a, b)` of input 0 into output 0.
KernelCall unaryCall(const Node &node, const std::string &kernel, float a, float b);

KernelCall call(std::string kernel, std::vector<KernelArg> args);

} // namespace lowering
} // namespace bundlefit
