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
// Not free in time: the fused kernel computes a few channels of one conv row
// at a time, which on narrow rows runs far slower than the conv and pool
// apart (DS-CNN: its one ConvPool was 23% of the level-1 run). So a pair is
// fused only where that lowers the estimated peak of the whole run
// (lowersPeak below); where another layer sets the peak, it stays two layers.
//
// Only run with --memory-opt >= 1 (after runDefaultPasses, so the activation
// is already inside the Conv).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ir/QuantSymmetry.h"
#include "bundlefit/ops/FusedOps.h"
#include "bundlefit/ops/InPlaceOps.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/passes/Passes.h"

#include "PassUtils.h"

#include <algorithm>
#include <set>

namespace bundlefit {
namespace {

/// Output channels per scratch row: a multiple of the conv kernel's register
/// tile (8 on hosts, 4 on Cortex-M) so the fast tiled path is kept, small
/// enough that the row is a fraction of the pooled output. Where the fused
/// step is under the estimated peak anyway, a float pair takes more channels
/// per row (widestChunk): each chunk is one conv call of one output row, and
/// SqueezeNet's conv1_pool1 in 8-channel rows (888 calls) ran its level-2
/// model 1.11x its level-0 time, in 64-channel rows (111 calls) 0.93x.
constexpr int64_t kChannelChunk = 8;

using ReadCounts = std::map<const Value *, size_t>;

bool isFusablePool(const ReadCounts &reads, const Node &pool) {
  if (!pool.isAnyOf(Op::MaxPool, Op::AveragePool))
    return false;
  if (pool.outputs.size() > 1 && pool.output(1) && pass_utils::isRead(reads, pool.output(1)))
    return false; // Indices.
  if (pool.attrs.getInt("storage_order", 0) != 0)
    return false;
  // The bundle's average pool has no dilations (nor will the fused one).
  if (pool.is(Op::AveragePool))
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

/// The channel chunk of `pool` fused with the Conv it reads, or 0 when the
/// two cannot be fused.
int64_t fusableChunk(const ReadCounts &reads, const Node &pool) {
  if (!isFusablePool(reads, pool))
    return 0;
  const Value *convOut = pool.input(0);
  const Node *conv = convOut ? convOut->producer : nullptr;
  if (!conv || !conv->is(Op::Conv) || conv->output(0) != convOut || convOut->isGraphOutput ||
      !pass_utils::hasSingleReader(reads, convOut, &pool))
    return 0;
  const Value *x = conv->input(0);
  if (!x || x->type.rank() != 4)
    return 0;
  const bool isFloat = x->type.dtype == DType::Float32 && convOut->type.dtype == DType::Float32;
  // int8 (after quantization): the pool on the conv's own parameters, so it
  // works on int8 values: a max (bf_conv_pool2d_s8), or an average whose
  // windows do not overlap vertically (bf_conv_avgpool2d_s8).
  const bool isInt8 = x->type.dtype == DType::Int8 && convOut->type.dtype == DType::Int8 &&
                      !convOut->type.quant.empty() &&
                      (pool.is(Op::MaxPool) || rowsDoNotOverlap(pool)) &&
                      pool.output(0)->type.dtype == DType::Int8 &&
                      pool.output(0)->type.quant.scales == convOut->type.quant.scales &&
                      pool.output(0)->type.quant.zeroPoints == convOut->type.quant.zeroPoints &&
                      // Asymmetric weights: bf_conv2d_wzp_s8, which has no fused form.
                      conv->input(1) && isSymmetric(conv->input(1)->type.quant);
  if (!isFloat && !isInt8)
    return 0;
  for (const auto &[name, attribute] : conv->attrs.all())
    if (name.compare(0, 5, "cmsis") == 0)
      return 0; // A CMSIS-NN call (quant/CmsisLayout.h).
  const int64_t groups = conv->attrs.getInt("group", 1);
  const int64_t channels = convOut->type.shape[1];
  // Chunks must not straddle groups: grouped convs take whole rows.
  const int64_t chunk = groups == 1 ? std::min(kChannelChunk, channels) : channels;
  const uint64_t rowBytes =
      uint64_t(chunk * convOut->type.shape[3]) * dtypeSize(convOut->type.dtype);
  if (rowBytes >= convOut->type.bytes())
    return 0; // Nothing to save (a one-row conv output).
  return chunk;
}

void fuse(Graph &graph, ReadCounts &reads, Node &pool, int64_t chunk) {
  Value *convOut = pool.input(0);
  Node *conv = convOut->producer;
  const bool isInt8 = convOut->type.dtype == DType::Int8;
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
      graph.insertNodeBefore(conv, Op::ConvPool, graph.uniqueNodeName(conv->name + "_" + pool.name),
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
}

/// The graph run layer by layer in graph order, as the level-1 plan can
/// run it: per step, the arena bytes live on entering it and in use while
/// it runs. A depthwise or 1x1 conv whose input dies there runs over it
/// (InPlaceOps.h), an elementwise op takes a same-shaped dying input, a
/// view shares its input's bytes. An estimate the plan meets or beats at
/// the peak: the fusions it leaves out are those whose layers stay under it.
struct StepBytes {
  pass_utils::ArenaSizes sizes;
  std::vector<uint64_t> entering, during;
};

StepBytes stepBytes(const std::vector<Node *> &nodes, pass_utils::ArenaSizes sizes) {
  const pass_utils::LastUses uses = pass_utils::lastUses(nodes);
  const std::map<const Value *, size_t> &lastUse = uses.lastUse;
  auto ownerOf = [&](const Value *v) { return uses.ownerOf(v); };
  StepBytes steps{sizes, {}, {}};
  std::set<const Value *> live;
  uint64_t liveBytes = 0;
  for (size_t j = 0; j < nodes.size(); ++j) {
    const Node &node = *nodes[j];
    steps.entering.push_back(liveBytes);
    auto dies = [&](const Value *in) {
      auto last = in ? lastUse.find(in) : lastUse.end();
      return last != lastUse.end() && last->second == j && ownerOf(in) == in && live.count(in);
    };
    const Value *x = node.input(0);
    uint64_t scratch = nodeScratchBytes(node);
    uint64_t reused = 0; // Bytes of a dying input the output writes over.
    if (dies(x) && node.is(Op::Conv) && hasInPlaceConvKernel(node)) {
      if (uint64_t dw = depthwiseInPlaceScratch(node))
        reused = sizes.arenaBytes(x), scratch = dw;
      else if (pointwiseInPlaceRows(node))
        reused = sizes.arenaBytes(x), scratch = pointwiseInPlaceScratch(node);
    }
    if (hasOpTrait(node.opType, kOpElementwise) && node.output())
      for (const Value *in : node.inputs)
        if (dies(in) && in->type.sameShapeAndType(node.output()->type))
          reused = sizes.arenaBytes(in);
    uint64_t produced = 0;
    if (!isViewOp(node.opType))
      for (const Value *out : node.outputs)
        if (out && !live.count(out)) {
          produced += sizes.arenaBytes(out);
          if (sizes.arenaBytes(out) && lastUse.count(out)) {
            live.insert(out);
            liveBytes += sizes.arenaBytes(out);
          }
        }
    // Written over a dying input: the larger of the two, not both.
    steps.during.push_back(steps.entering[j] + produced - std::min(reused, produced) +
                           sizes.aligned(scratch));
    for (const Value *in : node.inputs)
      if (dies(in)) {
        live.erase(in);
        liveBytes -= sizes.arenaBytes(in);
      }
  }
  return steps;
}

/// A Conv and the pool reading it (steps conv..pool of the graph's order),
/// fusable with `chunk` channels per scratch row.
struct Candidate {
  Node *pool = nullptr;
  size_t conv = 0, at = 0;
  int64_t chunk = 0;
};

/// Bytes in use at a fused pair's conv step with `chunk` channels per scratch
/// row: what entered it, the pooled output it makes and the row.
uint64_t fusedStepBytes(const StepBytes &steps, const Candidate &c, int64_t chunk) {
  const Value *convOut = c.pool->input(0);
  const uint64_t row = uint64_t(chunk * convOut->type.shape[3]) * dtypeSize(convOut->type.dtype);
  return steps.entering[c.conv] + steps.sizes.arenaBytes(c.pool->output(0)) +
         steps.sizes.aligned(row) + steps.sizes.aligned(nodeScratchBytes(*convOut->producer));
}

/// The most channels per scratch row of a fused float pair whose conv step
/// stays within `peak`: all of them, else a multiple of kChannelChunk, else
/// the chunk it has. int8 pairs keep theirs (their im2col workspace and the
/// Cortex-M int8 kernels' counts are sized for it). Level 2's patch stages
/// come later and may lower the other steps under a widened one: on the 14
/// bench/codegen models no arena moved (LeNet, SqueezeNet and ResNet-18
/// widen; their stages, where they have any, still set the peak).
int64_t widestChunk(const StepBytes &steps, const Candidate &c, uint64_t peak) {
  const Value *convOut = c.pool->input(0);
  const Node &conv = *convOut->producer;
  if (convOut->type.dtype != DType::Float32 || conv.attrs.getInt("group", 1) != 1)
    return c.chunk;
  const int64_t channels = convOut->type.shape[1];
  if (fusedStepBytes(steps, c, channels) <= peak)
    return channels;
  int64_t chunk = c.chunk;
  for (int64_t wider = chunk + kChannelChunk; wider < channels; wider += kChannelChunk)
    if (fusedStepBytes(steps, c, wider) <= peak)
      chunk = wider;
  return chunk;
}

/// The candidates whose fusion lowers the estimated peak: run apart, one of
/// their steps would be above the peak of the graph with every candidate
/// fused (a fused pair needs its input, its pooled output and one scratch
/// row). Each pair is judged against that one peak (pairs whose steps
/// interleave see each other run apart: judged high, so kept fused). Each
/// one fused then takes the widest chunk (widestChunk) under the peak of the
/// graph as it will run: those fused, the others apart.
std::vector<bool> lowersPeak(const std::vector<Node *> &nodes, std::vector<Candidate> &candidates,
                             pass_utils::ArenaSizes sizes) {
  const StepBytes steps = stepBytes(nodes, sizes);
  std::vector<bool> inPair(nodes.size(), false);
  uint64_t peak = 0;
  for (const Candidate &c : candidates) {
    // Fused at the conv's step, the pooled output is made there and the
    // conv output never is: steps up to the pool's hold the one, not the other.
    const Value *convOut = c.pool->input(0);
    const uint64_t y = sizes.arenaBytes(c.pool->output(0)), out = sizes.arenaBytes(convOut);
    peak = std::max(peak, fusedStepBytes(steps, c, c.chunk));
    for (size_t k = c.conv + 1; k < c.at; ++k)
      peak = std::max(peak, steps.during[k] - out + y);
    for (size_t k = c.conv; k <= c.at; ++k)
      inPair[k] = true;
  }
  for (size_t k = 0; k < nodes.size(); ++k)
    if (!inPair[k])
      peak = std::max(peak, steps.during[k]);
  std::vector<bool> lowers;
  for (const Candidate &c : candidates)
    lowers.push_back(*std::max_element(steps.during.begin() + std::ptrdiff_t(c.conv),
                                       steps.during.begin() + std::ptrdiff_t(c.at) + 1) > peak);
  // The peak the kept pairs run under: a pair left apart holds its steps.
  uint64_t runPeak = 0;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (!lowers[i])
      for (size_t k = candidates[i].conv; k <= candidates[i].at; ++k)
        runPeak = std::max(runPeak, steps.during[k]);
  for (size_t i = 0; i < candidates.size(); ++i)
    if (lowers[i])
      candidates[i].chunk = widestChunk(steps, candidates[i], std::max(peak, runPeak));
  return lowers;
}

} // namespace

size_t fuseConvPool(Graph &graph, uint64_t bufferAlignment) {
  // Counted once and kept current (users/hasSingleReader per node scanned
  // the whole graph: quadratic).
  ReadCounts reads = pass_utils::countReads(graph);
  const std::vector<Node *> nodes = graph.nodes();
  std::map<const Node *, size_t> stepOf;
  for (size_t j = 0; j < nodes.size(); ++j)
    stepOf[nodes[j]] = j;
  std::vector<Candidate> candidates;
  for (size_t j = 0; j < nodes.size(); ++j)
    if (int64_t chunk = fusableChunk(reads, *nodes[j]))
      candidates.push_back({nodes[j], stepOf.at(nodes[j]->input(0)->producer), j, chunk});
  const std::vector<bool> lowers =
      lowersPeak(nodes, candidates, pass_utils::ArenaSizes{bufferAlignment});
  size_t fused = 0;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (lowers[i]) {
      fuse(graph, reads, *candidates[i].pool, candidates[i].chunk);
      ++fused;
    }
  graph.removeUnusedValues();
  return fused;
}

} // namespace bundlefit
