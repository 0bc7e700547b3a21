//===- PoolOps.cpp - MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool -===//
//
// X[N,C,d...] -> Y[N,C,o...], any spatial rank >= 1. Geometry: ShapeHelpers.h
// (pads, strides, dilations, ceil_mode, auto_pad). MaxPool's optional Indices
// output is not supported. MACs: 0 for every pool (no weights; the adds and
// compares are not multiply-accumulates).
//
//===----------------------------------------------------------------------===//
#include "pool/Pool.h"

#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/ops/ShapeHelpers.h"

namespace bundlefit {

using namespace shape_helpers;

namespace {

const Value &checkPoolInput(const Node &node) {
  const Value &x = requireInput(node, 0, "X");
  if (x.type.rank() < 3)
    unsupported(node, "input X " + x.type.str() + " must have rank >= 3 (N,C,spatial...)");
  return x;
}

void inferPool(Node &node) {
  const Value &x = checkPoolInput(node);
  if (node.opType == "MaxPool") {
    requireSingleOutput(node, "Indices");
    if (node.attrs.getInt("storage_order", 0) != 0)
      unsupported(node, "attribute 'storage_order'=" +
                            std::to_string(node.attrs.getInt("storage_order", 0)) +
                            " is not supported");
  } else {
    int64_t cip = node.attrs.getInt("count_include_pad", 0);
    if (cip != 0 && cip != 1)
      unsupported(node, "attribute 'count_include_pad'=" + std::to_string(cip) + " must be 0 or 1");
  }
  int64_t ceilMode = node.attrs.getInt("ceil_mode", 0);
  if (ceilMode != 0 && ceilMode != 1)
    unsupported(node, "attribute 'ceil_mode'=" + std::to_string(ceilMode) + " must be 0 or 1");
  size_t sr = x.type.rank() - 2;
  if (!node.attrs.has("kernel_shape"))
    unsupported(node, "attribute 'kernel_shape' is required");
  std::vector<int64_t> kernel = spatialInts(node, "kernel_shape", sr, 1, true);
  std::vector<int64_t> inSpatial(x.type.shape.begin() + 2, x.type.shape.end());
  Window w = resolveWindow(node, inSpatial, kernel, ceilMode != 0);
  // A window lying wholly in the padding would have no element to pool.
  for (size_t i = 0; i < sr; ++i) {
    int64_t extent = (kernel[i] - 1) * w.dilations[i] + 1;
    if (w.padsBegin[i] >= extent || w.padsEnd[i] >= extent)
      unsupported(node, "attribute 'pads'=" + intsToString(node.attrs.getInts("pads")) +
                            " must be smaller than the kernel extent (attribute "
                            "'kernel_shape'=" +
                            intsToString(kernel) + ")");
  }
  Shape out{x.type.shape[0], x.type.shape[1]};
  out.insert(out.end(), w.outSpatial.begin(), w.outSpatial.end());
  setDTypeAndShape(*node.output(0), x.type.dtype, out);
}

void inferGlobalPool(Node &node) {
  const Value &x = checkPoolInput(node);
  Shape out(x.type.rank(), 1);
  out[0] = x.type.shape[0];
  out[1] = x.type.shape[1];
  setDTypeAndShape(*node.output(0), x.type.dtype, out);
}

uint64_t noMacs(const Node &) { return 0; }

} // namespace

void registerPoolOps(OpRegistry &registry) {
  using namespace pool_interp;
  registry.add({"MaxPool", inferPool, noMacs}).runs(poolKernel).lower = pool_float::lowerMaxPool;
  OpDef &average = registry.add({"AveragePool", inferPool, noMacs}).runs(poolKernel);
  average.glowNames = {"avgpool"};
  average.lower = pool_float::lowerAveragePool;
  OpDef &globalAverage =
      registry.add({"GlobalAveragePool", inferGlobalPool, noMacs}).runs(globalPoolKernel);
  globalAverage.glowNames = {"globalavgpool"};
  globalAverage.lower = pool_float::lowerGlobalAveragePool;
  registry.add({"GlobalMaxPool", inferGlobalPool, noMacs}).runs(globalPoolKernel).lower =
      pool_float::lowerGlobalMaxPool;
}

} // namespace bundlefit
