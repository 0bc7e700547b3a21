//===- MovementLower.cpp - Bundle kernel calls of the movement family ------===//
//
// Expand, Tile, DepthToSpace and SpaceToDepth are one strided copy each (a
// loop nest of the output reading the input at computed strides); Trilu
// has its own kernel per element size.
//
//===----------------------------------------------------------------------===//
#include "movement/Movement.h"

#include "bundlefit/ops/LowerHelpers.h"

#include <algorithm>

namespace bundlefit {
namespace {

using namespace lowering;
using Calls = std::vector<KernelCall>;

Calls copyOutput(const Node &node, const Value *x, const Value *y, const LoopNest &nest) {
  return {stridedCopy(node, KernelArg::address(x), KernelArg::address(y), nest,
                      dtypeSize(y->type.dtype))};
}

Calls lowerExpand(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  const Shape &out = y->type.shape;
  return copyOutput(node, x, y, LoopNest{out, {broadcastStrides(node, x, out), denseStrides(out)}});
}

Calls lowerTile(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  const Shape &is = x->type.shape, &os = y->type.shape;
  const Ints inStrides = denseStrides(is), outStrides = denseStrides(os);
  // Output coordinate d = r * is[d] + i: a (repeat, index) pair of loops.
  LoopNest nest;
  nest.strides.resize(2);
  for (size_t d = 0; d < is.size(); ++d) {
    const int64_t repeats = is[d] == 0 ? 0 : os[d] / is[d];
    nest.dims.insert(nest.dims.end(), {repeats, is[d]});
    nest.strides[0].insert(nest.strides[0].end(), {0, inStrides[d]});
    nest.strides[1].insert(nest.strides[1].end(), {is[d] * outStrides[d], outStrides[d]});
  }
  if (y->type.numElements() == 0)
    return {};
  return copyOutput(node, x, y, nest);
}

Calls lowerSpaceDepth(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  const Shape &is = x->type.shape, &os = y->type.shape;
  const int64_t b = node.attrs.getInt("blocksize", 1);
  LoopNest nest;
  if (node.opType == "DepthToSpace") {
    // Output loops (n, c, h, bh, w, bw) read channel (bh*b + bw)*C' + c (DCR)
    // or c*b*b + bh*b + bw (CRD) at (h, w).
    const int64_t C = os[1], H = is[2], W = is[3], plane = H * W;
    const bool crd = node.attrs.getString("mode", "DCR") == "CRD";
    nest.dims = {os[0], C, H, b, W, b};
    nest.strides = {{is[1] * plane, crd ? b * b * plane : plane, W, crd ? b * plane : b * C * plane,
                     1, crd ? plane : C * plane},
                    {C * H * b * W * b, H * b * W * b, b * W * b, W * b, b, 1}};
  } else {
    // Output loops (n, bh, bw, c, h, w) read (c, h*b + bh, w*b + bw).
    const int64_t C = is[1], H = is[2], W = is[3], OH = os[2], OW = os[3];
    nest.dims = {os[0], b, b, C, OH, OW};
    nest.strides = {{C * H * W, W, 1, H * W, b * W, b},
                    {os[1] * OH * OW, b * C * OH * OW, C * OH * OW, OH * OW, OW, 1}};
  }
  return copyOutput(node, x, y, nest);
}

Calls lowerTrilu(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  const Shape &s = x->type.shape;
  const Ints k = constantInts(node, 1, "k");
  const int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
  // k beyond the matrix keeps everything or nothing: clamp into int32.
  const int64_t diagonal =
      k.empty() ? 0 : std::max<int64_t>(-cols - rows, std::min(k[0], cols + rows));
  return {
      call(std::string("bf_trilu_") + sizeSuffix(node, y),
           {KernelArg::address(x), KernelArg::address(y),
            KernelArg::i32(product(s, 0, s.size() - 2)), KernelArg::i32(rows), KernelArg::i32(cols),
            KernelArg::i32(diagonal), KernelArg::i32(node.attrs.getInt("upper", 1) != 0)})};
}

} // namespace

void registerMovementLowering(OpRegistry &registry) {
  registry.at("Expand").lower = lowerExpand;
  registry.at("Tile").lower = lowerTile;
  registry.at("DepthToSpace").lower = lowerSpaceDepth;
  registry.at("SpaceToDepth").lower = lowerSpaceDepth;
  registry.at("Trilu").lower = lowerTrilu;
}

} // namespace bundlefit
