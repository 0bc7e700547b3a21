//===- FuseConvPool.cpp - Conv (+activation) followed by a pool -> ConvPool ---===//
//
// Why: layer by layer, a Conv whose output is pooled needs its input, its
// full-resolution output and the pooled result at once (LeNet: 46,080 B of
// conv1 output for an 11,520 B pooled result). Fused, each conv row is
// computed for a few channels into a scratch row and folded into the pool
// output at once, so the conv output never exists (FusedOps.h). No extra
// arithmetic: every conv row is computed exactly once (rows no pool window
// reads are not computed at all).
//
// Only run with --memory-opt >= 1 (after runDefaultPasses, so the activation
// is already inside the Conv).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ir/QuantSymmetry.h"
#include "bundlefit/ops/FusedOps.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/passes/Passes.h"

#include "PassUtils.h"

namespace bundlefit {
namespace {

/// Output channels per scratch row: a multiple of the conv kernel's register
/// tile (8 on hosts, 4 on Cortex-M) so the fast tiled path is kept, small
/// enough that the row is a fraction of the pooled output.
constexpr int64_t kChannelChunk = 8;

using ReadCounts = std::map<const Value *, size_t>;

bool isFusablePool(const ReadCounts &reads, const Node &pool) {
  if (pool.opType != "MaxPool" && pool.opType != "AveragePool")
    return false;
  if (pool.outputs.size() > 1 && pool.output(1) && pass_utils::isRead(reads, pool.output(1)))
    return false; // Indices.
  if (pool.attrs.getInt("storage_order", 0) != 0)
    return false;
  // The bundle's average pool has no dilations (nor will the fused one).
  if (pool.opType == "AveragePool")
    for (int64_t d : pool.attrs.getInts("dilations", {}))
      if (d != 1)
        return false;
  return pool.output(0) && pool.output(0)->type.rank() == 4;
}

/// Each input row of the pool is in at most one window: one output row, or
/// a stride no smaller than the kernel.
bool rowsDoNotOverlap(const Node &pool) {
  const std::vector<int64_t> kernel = pool.attrs.getInts("kernel_shape", {});
  const std::vector<int64_t> strides = pool.attrs.getInts("strides", {});
  if (pool.output(0) && pool.output(0)->type.rank() == 4 && pool.output(0)->type.shape[2] == 1)
    return true;
  return !kernel.empty() && kernel[0] <= (strides.empty() ? 1 : strides[0]);
}

bool tryFuse(Graph &graph, ReadCounts &reads, Node &pool) {
  if (!isFusablePool(reads, pool))
    return false;
  Value *convOut = pool.input(0);
  Node *conv = convOut ? convOut->producer : nullptr;
  if (!conv || conv->opType != "Conv" || conv->output(0) != convOut || convOut->isGraphOutput ||
      !pass_utils::hasSingleReader(reads, convOut, &pool))
    return false;
  const Value *x = conv->input(0);
  if (!x || x->type.rank() != 4)
    return false;
  const bool isFloat = x->type.dtype == DType::Float32 && convOut->type.dtype == DType::Float32;
  // int8 (after quantization): the pool on the conv's own parameters, so it
  // works on int8 values: a max (bf_conv_pool2d_s8), or an average whose
  // windows do not overlap vertically (bf_conv_avgpool2d_s8).
  const bool isInt8 = x->type.dtype == DType::Int8 && convOut->type.dtype == DType::Int8 &&
                      !convOut->type.quant.empty() &&
                      (pool.opType == "MaxPool" || rowsDoNotOverlap(pool)) &&
                      pool.output(0)->type.dtype == DType::Int8 &&
                      pool.output(0)->type.quant.scales == convOut->type.quant.scales &&
                      pool.output(0)->type.quant.zeroPoints == convOut->type.quant.zeroPoints &&
                      // Asymmetric weights: bf_conv2d_wzp_s8, which has no fused form.
                      conv->input(1) && isSymmetric(conv->input(1)->type.quant);
  if (!isFloat && !isInt8)
    return false;
  for (const auto &[name, attribute] : conv->attrs.all())
    if (name.compare(0, 5, "cmsis") == 0)
      return false; // A CMSIS-NN call (quant/CmsisLayout.h).
  const int64_t groups = conv->attrs.getInt("group", 1);
  const int64_t channels = convOut->type.shape[1];
  // Chunks must not straddle groups: grouped convs take whole rows.
  const int64_t chunk = groups == 1 ? std::min(kChannelChunk, channels) : channels;
  const uint64_t rowBytes =
      uint64_t(chunk * convOut->type.shape[3]) * dtypeSize(convOut->type.dtype);
  if (rowBytes >= convOut->type.bytes())
    return false; // Nothing to save (a one-row conv output).

  Attributes attrs = makeConvPoolAttributes(*conv, pool, chunk);
  if (isInt8) {
    attrs.setFloats("conv_out_scales", convOut->type.quant.scales);
    attrs.setInts("conv_out_zero_points",
                  std::vector<int64_t>(convOut->type.quant.zeroPoints.begin(),
                                       convOut->type.quant.zeroPoints.end()));
  }
  std::vector<Value *> inputs = conv->inputs;
  Value *y = pool.output(0);
  Node *fused =
      graph.insertNodeBefore(conv, kConvPoolOp, graph.uniqueNodeName(conv->name + "_" + pool.name),
                             inputs, {y->name + "_fused"});
  fused->attrs = attrs;
  pass_utils::takeOverOutput(fused, 0, y);
  pass_utils::addReads(*fused, reads);
  pool.outputs.clear();
  pass_utils::eraseCounted(graph, &pool, reads);
  conv->outputs.clear();
  convOut->producer = nullptr;
  pass_utils::eraseCounted(graph, conv, reads);
  inferNodeTypes(*fused);
  return true;
}

} // namespace

size_t fuseConvPool(Graph &graph) {
  size_t fused = 0;
  // Counted once and kept current (users/hasSingleReader per node scanned
  // the whole graph: quadratic).
  ReadCounts reads = pass_utils::countReads(graph);
  for (Node *node : graph.nodes())
    if (tryFuse(graph, reads, *node))
      ++fused;
  graph.removeUnusedValues();
  return fused;
}

} // namespace bundlefit
