//===- MovementOps.cpp - Expand, Tile, DepthToSpace, SpaceToDepth, Trilu ---===//
//
// Data movement with a static output shape: Expand broadcasts to a constant
// `shape`, Tile repeats by constant `repeats`, DepthToSpace/SpaceToDepth
// move blocksize x blocksize pixels between channels and space (NCHW), and
// Trilu zeroes the elements above/below the k-th diagonal of the last two
// dims. The shape-giving operands are parameters (kParametersFrom1).
//
//===----------------------------------------------------------------------===//
#include "movement/Movement.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include "bundlefit/ops/BroadcastShape.h"
#include "bundlefit/support/Error.h"

namespace bundlefit {

using shape_helpers::unsupported;
namespace {

const Value &data(const Node &node) {
  const Value *x = node.input(0);
  if (!x || !node.output(0))
    unsupported(node, "needs input 'input' and an output");
  return *x;
}

void setOutput(Node &node, DType dtype, const Shape &shape) {
  node.output(0)->type.dtype = dtype;
  node.output(0)->type.shape = shape;
}

void inferExpand(Node &node) {
  const Value &x = data(node);
  std::vector<int64_t> target = constantOperand(node, 1, "shape");
  for (int64_t d : target)
    if (d < 0)
      unsupported(node, "input 'shape' has a negative dimension " + std::to_string(d));
  Shape shape;
  if (!broadcastShapes(x.type.shape, Shape(target.begin(), target.end()), shape))
    unsupported(node, "input " + x.type.str() + " does not broadcast to shape " +
                          shapeToString(Shape(target.begin(), target.end())));
  setOutput(node, x.type.dtype, shape);
}

void inferTile(Node &node) {
  const Value &x = data(node);
  std::vector<int64_t> repeats = constantOperand(node, 1, "repeats");
  if (repeats.size() != x.type.rank())
    unsupported(node, "input 'repeats' has " + std::to_string(repeats.size()) +
                          " entries for a rank-" + std::to_string(x.type.rank()) + " input");
  Shape shape = x.type.shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (repeats[d] < 0)
      unsupported(node, "input 'repeats' has a negative entry");
    if (repeats[d] != 0 && shape[d] > INT64_MAX / repeats[d])
      unsupported(node, "the output dimension " + std::to_string(d) + " overflows int64");
    shape[d] *= repeats[d];
  }
  setOutput(node, x.type.dtype, shape);
}

/// DepthToSpace and SpaceToDepth on a rank-4 NCHW input.
void inferSpaceDepth(Node &node) {
  const Value &x = data(node);
  const int64_t b = node.attrs.getInt("blocksize", 0);
  if (x.type.rank() != 4)
    unsupported(node, "input " + x.type.str() + " must have rank 4 (NCHW)");
  if (b <= 0 || b > 4096)
    unsupported(node, "attribute 'blocksize' must be in 1..4096, got " + std::to_string(b));
  Shape s = x.type.shape;
  if (node.opType == "DepthToSpace") {
    const std::string mode = node.attrs.getString("mode", "DCR");
    if (mode != "DCR" && mode != "CRD")
      unsupported(node, "attribute 'mode' must be DCR or CRD, got '" + mode + "'");
    if (s[1] % (b * b) != 0)
      unsupported(node, "channels " + std::to_string(s[1]) + " are not a multiple of blocksize^2");
    setOutput(node, x.type.dtype, {s[0], s[1] / (b * b), s[2] * b, s[3] * b});
  } else {
    if (s[2] % b != 0 || s[3] % b != 0)
      unsupported(node, "height and width " + shapeToString(s) + " are not multiples of blocksize");
    setOutput(node, x.type.dtype, {s[0], s[1] * b * b, s[2] / b, s[3] / b});
  }
}

void inferTrilu(Node &node) {
  const Value &x = data(node);
  if (x.type.rank() < 2)
    unsupported(node, "input " + x.type.str() + " must have rank >= 2");
  if (node.input(1) && constantOperand(node, 1, "k").size() != 1)
    unsupported(node, "input 'k' must be a scalar");
  setOutput(node, x.type.dtype, x.type.shape);
}

uint64_t noMacs(const Node &) { return 0; }

} // namespace

std::vector<int64_t> constantOperand(const Node &node, size_t index, const char *name) {
  const Value *v = node.input(index);
  if (!v)
    unsupported(node, std::string("missing input '") + name + "'");
  if (!v->isConstant())
    unsupported(node, std::string("input '") + name +
                          "' must be a constant (bundlefit compiles static shapes)");
  return v->toInts();
}

void registerMovementOps(OpRegistry &registry) {
  using namespace movement_interp;
  registry.add({"Expand", inferExpand, noMacs}).parameters(kParametersFrom1).runs(expandKernel);
  registry.add({"Tile", inferTile, noMacs}).parameters(kParametersFrom1).runs(tileKernel);
  registry.add({"DepthToSpace", inferSpaceDepth, noMacs})
      .with(kOpMovesBytes)
      .runs(spaceDepthKernel);
  registry.add({"SpaceToDepth", inferSpaceDepth, noMacs})
      .with(kOpMovesBytes)
      .runs(spaceDepthKernel);
  registry.add({"Trilu", inferTrilu, noMacs}).parameters(kParametersFrom1).runs(triluKernel);
  registerMovementLowering(registry);
  registerCol2Im(registry);
}

} // namespace bundlefit
