//===- FormPatchStage.cpp - Run the high-resolution prefix patch by patch ----===//
//
// Why: layer by layer, the first layers of an image network hold the largest
// tensors (MobileNetV2 int8 at 112x112: 1.2 MB for one expanded tensor) while
// later layers need a fraction of that. Running the first k layers tile by
// tile (MCUNetV2) keeps only tile-sized buffers alive for them; only the
// stage output exists in full.
//
// The choice: every prefix of the graph (in graph order) that ends in a cut
// (one value leaves it) and holds only patchable nodes (PatchStage.h), times
// every grid up to kMaxGrid x kMaxGrid, whose recomputed halos stay within the
// budget (a fraction of the model's MACs). The estimate of the peak is the
// larger of the stage (its arena + its output + external activation inputs)
// and the live bytes of the rest of the graph run layer by layer; the
// smallest peak wins, fewer extra MACs break ties. No stage is formed unless
// it lowers the estimate. Run after quantization (the body keeps int8 types)
// and after fuseConvPool.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ir/InPlaceOps.h"
#include "bundlefit/ir/OpRegistry.h"
#include "bundlefit/ir/PatchStage.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/support/CheckedMath.h"

#include "PassUtils.h"

#include <algorithm>
#include <set>

namespace bundlefit {
namespace {

constexpr int64_t kMaxGrid = 8;

uint64_t aligned(uint64_t bytes) { return alignUp(bytes, 64); }

/// A value that occupies activation bytes (not a constant, input or output).
bool isActivation(const Value *v) {
  return v && v->kind == ValueKind::Intermediate && !v->isGraphOutput;
}

/// Live activation bytes of steps first..end-1, run layer by layer in graph
/// order; a depthwise conv whose input dies there counts once (in place at
/// --memory-opt >= 1), a view shares its input's bytes.
uint64_t livePeak(const std::vector<Node *> &nodes, size_t first, const Value *alsoLive) {
  std::map<const Value *, size_t> lastUse;
  std::map<const Value *, const Value *> owner;
  auto ownerOf = [&](const Value *v) {
    auto it = owner.find(v);
    return it == owner.end() ? v : it->second;
  };
  for (size_t j = 0; j < nodes.size(); ++j) {
    for (const Value *in : nodes[j]->inputs)
      if (in)
        lastUse[ownerOf(in)] = j;
    if (isViewOp(nodes[j]->opType) && nodes[j]->input(0) && nodes[j]->output())
      owner[nodes[j]->output()] = ownerOf(nodes[j]->input(0));
  }
  uint64_t peak = 0;
  std::set<const Value *> live;
  if (alsoLive)
    live.insert(alsoLive);
  for (size_t j = first; j < nodes.size(); ++j) {
    const Node &node = *nodes[j];
    uint64_t bytes = 0;
    for (const Value *v : live)
      bytes += aligned(v->type.bytes());
    // A convolution the plan may run in place (InPlaceOps.h) writes over
    // its dying input: only its workspace and any growth are new bytes.
    const Value *input = node.input(0) ? ownerOf(node.input(0)) : nullptr;
    const bool inputDies = input && lastUse[input] == j && live.count(input);
    for (const Value *out : node.outputs) {
      if (!isActivation(out) || isViewOp(node.opType))
        continue;
      const uint64_t outBytes = aligned(out->type.bytes());
      if (inputDies && depthwiseInPlaceScratch(node))
        bytes += aligned(depthwiseInPlaceScratch(node));
      else if (inputDies && pointwiseInPlaceRows(node))
        bytes +=
            aligned(pointwiseInPlaceScratch(node)) +
            (outBytes > aligned(input->type.bytes()) ? outBytes - aligned(input->type.bytes()) : 0);
      else
        bytes += outBytes;
    }
    peak = std::max(peak, bytes);
    for (const Value *out : node.outputs)
      if (isActivation(out) && !isViewOp(node.opType))
        live.insert(out);
    for (auto it = live.begin(); it != live.end();)
      it = lastUse.count(*it) && lastUse[*it] <= j ? live.erase(it) : std::next(it);
  }
  return peak;
}

/// The body of prefix nodes[0..last]: copies of the nodes over body-owned
/// internal values; external inputs and data constants stay the graph's.
std::shared_ptr<PatchBody> makeBody(const std::vector<Node *> &nodes, size_t last) {
  auto body = std::make_shared<PatchBody>();
  std::map<const Value *, Value *> mapped;
  for (size_t j = 0; j <= last; ++j) {
    const Node &node = *nodes[j];
    auto clone = std::make_unique<Node>();
    clone->name = node.name;
    clone->opType = node.opType;
    clone->attrs = node.attrs;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      Value *v = node.inputs[i];
      if (v && mapped.count(v)) {
        v = mapped[v];
      } else if (v && v->isConstant() && isParameterOperand(node, i)) {
        auto copy = std::make_unique<Value>(*v);
        copy->producer = nullptr;
        mapped[v] = copy.get();
        v = copy.get();
        body->values.push_back(std::move(copy));
      }
      clone->inputs.push_back(v);
    }
    auto out = std::make_unique<Value>();
    out->name = node.output()->name;
    out->type = node.output()->type;
    out->typeKnown = true;
    out->producer = clone.get();
    mapped[node.output()] = out.get();
    clone->outputs = {out.get()};
    body->values.push_back(std::move(out));
    body->nodes.push_back(std::move(clone));
  }
  body->result = mapped.at(nodes[last]->output());
  return body;
}

struct Choice {
  size_t last = 0;
  int64_t gridH = 1, gridW = 1;
  uint64_t peak = 0, extraMacs = 0;
};

} // namespace

size_t formPatchStage(Graph &graph, const PatchStageOptions &options) {
  const std::vector<Node *> nodes = graph.nodes();
  uint64_t totalMacs = 0;
  for (const Node *node : nodes)
    totalMacs += countNodeMacs(*node);
  const double budget = options.recomputeBudget * double(totalMacs);

  Choice best;
  const bool forced = !options.stageOutput.empty();
  best.peak = forced ? UINT64_MAX : livePeak(nodes, 0, nullptr);
  bool found = false;
  std::set<const Value *> produced;
  uint64_t prefixMacs = 0, externalBytes = 0;
  std::set<const Value *> externals;
  for (size_t last = 0; last < nodes.size(); ++last) {
    const Node &node = *nodes[last];
    if (!isPatchableNode(node))
      break;
    bool prefixInputs = true; // Only a prefix of the graph can be a stage.
    for (const Value *v : node.inputs) {
      if (!v || v->isConstant() || produced.count(v))
        continue;
      prefixInputs = prefixInputs && v->isGraphInput();
      if (externals.insert(v).second && isActivation(v))
        externalBytes += aligned(v->type.bytes());
    }
    if (!prefixInputs)
      break;
    produced.insert(node.output());
    prefixMacs += countNodeMacs(node);
    // A cut: the last output is the only value read after the prefix.
    const Value *cut = node.output();
    if (cut->isGraphOutput)
      break;
    bool isCut = true;
    for (size_t j = last + 1; j < nodes.size() && isCut; ++j)
      for (const Value *in : nodes[j]->inputs)
        isCut = isCut && (!in || in == cut || !produced.count(in));
    if (!isCut || (forced && cut->name != options.stageOutput))
      continue;
    const uint64_t rest = livePeak(nodes, last + 1, cut);
    if (rest >= best.peak)
      continue;
    std::shared_ptr<PatchBody> body = makeBody(nodes, last);
    const int64_t H = cut->type.shape[2], W = cut->type.shape[3];
    // Finer grids recompute more: once a grid is over budget, every grid at
    // least as fine along both axes is skipped unbuilt.
    std::vector<std::pair<int64_t, int64_t>> overBudget;
    for (int64_t gh = 1; gh <= std::min(kMaxGrid, H); ++gh)
      for (int64_t gw = 1; gw <= std::min(kMaxGrid, W); ++gw) {
        if (std::any_of(overBudget.begin(), overBudget.end(),
                        [&](const auto &g) { return g.first <= gh && g.second <= gw; }))
          continue;
        std::unique_ptr<PatchProgram> program = buildPatchProgram(*body, *cut, gh, gw);
        const uint64_t extra = program->macs > prefixMacs ? program->macs - prefixMacs : 0;
        if (double(extra) > budget) {
          overBudget.push_back({gh, gw});
          continue;
        }
        const uint64_t stage = program->arenaBytes + aligned(cut->type.bytes()) + externalBytes;
        const uint64_t peak = std::max(stage, rest);
        if (peak < best.peak || (found && peak == best.peak && extra < best.extraMacs)) {
          best = {last, gh, gw, peak, extra};
          found = true;
        }
      }
  }
  if (!found)
    return 0;

  // Replace the prefix by one PatchStage node.
  std::shared_ptr<PatchBody> body = makeBody(nodes, best.last);
  std::vector<Value *> inputs;
  std::set<const Value *> seen;
  for (const auto &bodyNode : body->nodes)
    for (Value *v : bodyNode->inputs)
      if (v && !v->producer && (v->isGraphInput() || v->isConstant()) && seen.insert(v).second &&
          std::none_of(body->values.begin(), body->values.end(),
                       [&](const std::unique_ptr<Value> &owned) { return owned.get() == v; }))
        inputs.push_back(v);
  std::stable_partition(inputs.begin(), inputs.end(),
                        [](const Value *v) { return !v->isConstant(); });
  Value *cut = nodes[best.last]->output();
  Node *stage = graph.insertNodeBefore(nodes[0], kPatchStageOp,
                                       graph.uniqueNodeName("patch_stage_" + cut->name), inputs,
                                       {cut->name + "_patched"});
  stage->attrs.setInt("body", registerPatchBody(body));
  stage->attrs.setInt("grid_h", best.gridH);
  stage->attrs.setInt("grid_w", best.gridW);
  pass_utils::takeOverOutput(stage, 0, cut);
  for (size_t j = best.last + 1; j-- > 0;) {
    for (Value *out : nodes[j]->outputs)
      if (out && out->producer == nodes[j])
        out->producer = nullptr;
    nodes[j]->outputs.clear();
    nodes[j]->inputs.clear();
    graph.eraseNode(nodes[j]);
  }
  graph.removeUnusedValues();
  inferNodeTypes(*stage);
  return 1;
}

void runMemoryOptPasses(Graph &graph, int level, double patchRecomputeBudget) {
  if (level >= 1)
    fuseConvPool(graph);
  if (level >= 2) {
    PatchStageOptions patch;
    patch.recomputeBudget = patchRecomputeBudget;
    formPatchStage(graph, patch);
  }
}

} // namespace bundlefit
