//===- ShapeLower.cpp - Bundle kernel calls of the shape family ------------===//
//
// Transpose, Concat, Split, Slice, Pad and Gather only move elements: each
// is one strided copy (or a few), a pad or a gather kernel of the element
// size, so one kernel serves every dtype of that size.
//
//===----------------------------------------------------------------------===//
#include "shape/Shape.h"

#include "bundlefit/kernels/abi.h" // bf_pad_mode
#include "bundlefit/ops/LowerHelpers.h"

#include <algorithm>
#include <climits>
#include <optional>

namespace bundlefit {
namespace {

using namespace lowering;
using Calls = std::vector<KernelCall>;

int64_t axisOf(const Node &node, size_t rank) {
  int64_t axis = node.attrs.getInt("axis", 0);
  return axis < 0 ? axis + int64_t(rank) : axis;
}

Calls lowerTranspose(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  const Shape &s = x->type.shape;
  const size_t rank = s.size();
  Ints perm = node.attrs.getInts("perm");
  if (perm.empty())
    for (size_t d = 0; d < rank; ++d)
      perm.push_back(int64_t(rank - 1 - d));
  if (perm.size() != rank)
    unsupported(node, "perm does not match the rank");
  const Ints inStrides = denseStrides(s);
  LoopNest nest;
  nest.dims = y->type.shape;
  nest.strides = {Ints(rank), denseStrides(y->type.shape)};
  for (size_t d = 0; d < rank; ++d)
    nest.strides[0][d] = inStrides[perm[d] < 0 ? perm[d] + rank : perm[d]];
  return {stridedCopy(node, KernelArg::address(x), KernelArg::address(y), nest,
                      dtypeSize(y->type.dtype))};
}

/// Beyond this many inputs a Concat copies by table (bf_concat_table), and
/// beyond this many outputs a Split (bf_split_table): one specialised copy
/// per piece made a 5,000-input Concat one function of 5,000 loops, whose
/// machine scheduling alone is quadratic (34 s).
constexpr size_t kMaxSpecialisedPieces = 16;

/// Appends a copy table's piece for `x` (region, byte offset, bytes per row
/// from `axis` on); false when the offset or row does not fit its int32
/// entry or `x` has no placement. An empty tensor adds nothing.
bool appendPiece(const Value *x, int64_t axis, const PlanView &plan, std::vector<int32_t> &pieces) {
  if (x->type.numElements() == 0)
    return true;
  std::optional<PlanView::Where> where = plan.placementOf(x);
  if (!where)
    return false;
  const int64_t rowBytes = product(x->type.shape, size_t(axis), x->type.shape.size()) *
                           int64_t(dtypeSize(x->type.dtype));
  if (where->offset > uint64_t(INT32_MAX) || rowBytes > INT32_MAX)
    return false;
  pieces.insert(pieces.end(), {int32_t(where->region), int32_t(where->offset), int32_t(rowBytes)});
  return true;
}

/// bf_concat_table's pieces for `node`, or nothing when one does not fit.
std::optional<std::vector<int32_t>> concatPieces(const Node &node, int64_t axis,
                                                 const PlanView &plan) {
  std::vector<int32_t> pieces;
  for (const Value *x : node.inputs)
    if (x && !appendPiece(x, axis, plan, pieces))
      return std::nullopt;
  return pieces;
}

/// bf_split_table's pieces for `node`: an output nobody reads has no
/// placement and becomes a skip (region -1) of its row bytes. Nothing when
/// a piece does not fit, or an output would be written to the constants.
std::optional<std::vector<int32_t>> splitPieces(const Node &node, int64_t axis,
                                                const PlanView &plan) {
  std::vector<int32_t> pieces;
  for (const Value *y : node.outputs) {
    if (!y || y->type.numElements() == 0)
      continue;
    if (!plan.placementOf(y)) {
      const int64_t rowBytes = product(y->type.shape, size_t(axis), y->type.shape.size()) *
                               int64_t(dtypeSize(y->type.dtype));
      if (rowBytes > INT32_MAX)
        return std::nullopt;
      pieces.insert(pieces.end(), {-1, 0, int32_t(rowBytes)});
      continue;
    }
    if (!appendPiece(y, axis, plan, pieces) || pieces[pieces.size() - 3] == 0)
      return std::nullopt;
  }
  return pieces;
}

Calls lowerConcat(const Node &node, const PlanView &plan) {
  const Value *y = node.output(0);
  const Shape &out = y->type.shape;
  const int64_t axis = axisOf(node, out.size());
  // The table addresses constants from constantWeight: not with split weights.
  const bool constantInSegment =
      plan.splitWeights() && std::any_of(node.inputs.begin(), node.inputs.end(),
                                         [](const Value *x) { return x && x->isConstant(); });
  if (node.inputs.size() > kMaxSpecialisedPieces && y->type.numElements() > 0 && !constantInSegment)
    if (auto pieces = concatPieces(node, axis, plan))
      return {call("bf_concat_table",
                   {KernelArg::regionBase(0), KernelArg::regionBase(1), KernelArg::regionBase(2),
                    KernelArg::address(y), KernelArg::i32(product(out, 0, size_t(axis))),
                    KernelArg::i32(int64_t(pieces->size() / 3)),
                    KernelArg::i32Table(std::move(*pieces))})};
  const Ints outStrides = denseStrides(out);
  const size_t elem = dtypeSize(y->type.dtype);
  Calls calls;
  int64_t offset = 0;
  for (const Value *x : node.inputs) {
    if (!x)
      continue;
    if (x->type.numElements() > 0) {
      LoopNest nest{x->type.shape, {denseStrides(x->type.shape), outStrides}};
      calls.push_back(stridedCopy(node, KernelArg::address(x),
                                  KernelArg::address(y, offset * outStrides[axis] * int64_t(elem)),
                                  nest, elem));
    }
    offset += x->type.shape[axis];
  }
  return calls;
}

Calls lowerSplit(const Node &node, const PlanView &plan) {
  const Value *x = input(node, 0);
  const Shape &s = x->type.shape;
  const int64_t axis = axisOf(node, s.size());
  // Many outputs: one table-driven copy, as for a wide Concat.
  if (node.outputs.size() > kMaxSpecialisedPieces && x->type.numElements() > 0)
    if (auto pieces = splitPieces(node, axis, plan))
      return {call("bf_split_table",
                   {KernelArg::address(x), KernelArg::regionBase(1), KernelArg::regionBase(2),
                    KernelArg::i32(product(s, 0, size_t(axis))),
                    KernelArg::i32(int64_t(pieces->size() / 3)),
                    KernelArg::i32Table(std::move(*pieces))})};
  const Ints inStrides = denseStrides(s);
  const size_t elem = dtypeSize(x->type.dtype);
  Calls calls;
  int64_t offset = 0;
  for (const Value *y : node.outputs) {
    if (!y)
      continue;
    if (y->type.numElements() > 0 && plan.placementOf(y)) {
      LoopNest nest{y->type.shape, {inStrides, denseStrides(y->type.shape)}};
      calls.push_back(stridedCopy(node,
                                  KernelArg::address(x, offset * inStrides[axis] * int64_t(elem)),
                                  KernelArg::address(y), nest, elem));
    }
    offset += y->type.shape[axis];
  }
  return calls;
}

Calls lowerSlice(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  const Shape &s = x->type.shape;
  const int64_t rank = int64_t(s.size());
  Ints starts = constantInts(node, 1, "starts"), ends = constantInts(node, 2, "ends");
  Ints axes = constantInts(node, 3, "axes"), steps = constantInts(node, 4, "steps");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(int64_t(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  Ints begin(rank, 0), step(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    const int64_t dim = s[axis], st = steps[i];
    if (st == 0)
      unsupported(node, "step 0");
    int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i];
    b = st > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, 0, dim - 1);
    begin[axis] = b;
    // A step longer than the dim takes one element: clamping it keeps that
    // element and keeps inStrides * step below overflow (steps come from the file).
    step[axis] = std::clamp<int64_t>(st, -dim, dim);
  }
  const Ints inStrides = denseStrides(s);
  LoopNest nest{y->type.shape, {Ints(rank), denseStrides(y->type.shape)}};
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    nest.strides[0][d] = inStrides[d] * step[d];
    offset += begin[d] * inStrides[d];
  }
  if (y->type.numElements() == 0)
    return {};
  const size_t elem = dtypeSize(y->type.dtype);
  return {stridedCopy(node, KernelArg::address(x, offset * int64_t(elem)), KernelArg::address(y),
                      nest, elem)};
}

Calls lowerPad(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  requireDType(node, x, y->type.dtype);
  const int64_t rank = int64_t(x->type.rank());
  Ints pads = constantInts(node, 1, "pads");
  if (pads.empty())
    pads = node.attrs.getInts("pads");
  Ints axes = constantInts(node, 3, "axes");
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  if (pads.size() != 2 * axes.size())
    unsupported(node, "pads has " + std::to_string(pads.size()) + " values for " +
                          std::to_string(axes.size()) + " axes");
  Ints begin(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (pads[i] < 0 || pads[i + axes.size()] < 0)
      unsupported(node, "negative pads");
    begin[axis] = pads[i];
  }
  // Pad only moves elements: one kernel per element size, and the fill value
  // is passed as the bit pattern of y's type (as the interpreter copies the
  // constant_value bytes; the float attribute 'value' only applies to float).
  const DType dtype = y->type.dtype;
  const bool isFloat = dtype == DType::Float32;
  float value = 0.0f;
  int64_t intValue = 0;
  if (const Value *v = node.input(2)) {
    if (!v->isConstant())
      unsupported(node, "constant_value must be a constant");
    requireDType(node, v, dtype);
    if (v->type.numElements() > 0) {
      if (isFloat)
        value = float(v->elementAsDouble(0));
      else
        intValue = v->toInts().at(0);
    }
  } else if (isFloat) {
    value = node.attrs.getFloat("value", 0.0f);
  }
  const std::string mode = node.attrs.getString("mode", "constant");
  const int32_t modeId = mode == "constant"  ? BF_PAD_CONSTANT
                         : mode == "reflect" ? BF_PAD_REFLECT
                         : mode == "edge"    ? BF_PAD_EDGE
                                             : -1;
  if (modeId < 0)
    unsupported(node, "pad mode '" + mode + "'");
  const size_t elem = dtypeSize(dtype);
  KernelArg fill;
  const char *kernel = nullptr;
  if (isFloat) {
    kernel = "bf_pad_f32", fill = KernelArg::f32(value);
  } else if (elem == 1 || elem == 2 || elem == 4 || elem == 8) {
    kernel = elem == 1   ? "bf_pad_u8"
             : elem == 2 ? "bf_pad_u16"
             : elem == 4 ? "bf_pad_u32"
                         : "bf_pad_u64";
    fill = KernelArg::bitsOf(unsigned(elem * 8), intValue);
  } else {
    unsupported(node, "no pad kernel for " + std::to_string(elem) + "-byte elements");
  }
  return {call(kernel, {KernelArg::address(x), KernelArg::address(y),
                        KernelArg::i32Table(padFront(x->type.shape, 1, node)),
                        KernelArg::i32Table(padFront(y->type.shape, 1, node)),
                        KernelArg::i32Table(padFront(begin, 0, node)), KernelArg::i32(modeId),
                        std::move(fill)})};
}

Calls lowerGather(const Node &node, const PlanView &) {
  const Value *data = input(node, 0), *indices = input(node, 1), *y = node.output(0);
  const Shape &s = data->type.shape;
  const int64_t axis = axisOf(node, s.size());
  if (axis < 0 || axis >= int64_t(s.size()))
    unsupported(node, "axis out of range");
  const char *kernel = indices->type.dtype == DType::Int64   ? "bf_gather_i64"
                       : indices->type.dtype == DType::Int32 ? "bf_gather_i32"
                                                             : nullptr;
  if (!kernel)
    unsupported(node, "indices must be int32 or int64");
  const int64_t inner = product(s, axis + 1, s.size()) * int64_t(dtypeSize(data->type.dtype));
  return {
      call(kernel, {KernelArg::address(data), KernelArg::address(indices), KernelArg::address(y),
                    KernelArg::i32(product(s, 0, axis)), KernelArg::i32(s[axis]),
                    KernelArg::i32(inner), KernelArg::i32(indices->type.numElements())})};
}

} // namespace

void registerShapeLowering(OpRegistry &registry) {
  registry.at("Transpose").lower = lowerTranspose;
  registry.at("Concat").lower = lowerConcat;
  registry.at("Split").lower = lowerSplit;
  registry.at("Slice").lower = lowerSlice;
  registry.at("Pad").lower = lowerPad;
  registry.at("Gather").lower = lowerGather;
}

} // namespace bundlefit
