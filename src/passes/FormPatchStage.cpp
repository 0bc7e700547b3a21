//===- FormPatchStage.cpp - Run high-resolution segments patch by patch ----===//
//
// Why: layer by layer, the first layers of an image network hold the largest
// tensors (MobileNetV2 int8 at 112x112: 1.2 MB for one expanded tensor) while
// later layers need a fraction of that. Running k layers tile by tile
// (MCUNetV2) keeps only tile-sized buffers alive for them; only the stage
// output exists in full.
//
// The choice: every run of consecutive nodes (in graph order) that holds only
// patchable nodes (PatchStage.h) and ends in a cut (one value leaves it),
// times every grid up to kMaxGrid x kMaxGrid, whose recomputed halos stay
// within the recompute budget (a fraction of the model's MACs). A run need not start
// the graph: EfficientNet's and MobileNetV3's squeeze-and-excitation blocks
// (a global pool, then a Mul by a [1,C,1,1] gate) need their whole input, so
// no stage can cross one, and their largest tensors come after the first.
// The estimate of the peak is the graph run layer by layer with the run
// replaced by its stage (its arena + its output + whatever else is live);
// the smallest peak wins; among grids of one peak, tiles wide enough for the
// wide convolution tiles (kWideTileColumns), then fewer extra MACs. No stage is formed
// unless it lowers the estimate; stages are formed one after the other while
// each lowers it (at most kMaxStages), then each stage's grid is chosen again
// against the peak the others leave (regridStages). Last, with the peak
// final, each stage takes the fastest grid that keeps it (patchTimeMacs:
// fewer column bands before fewer recomputed MACs): the peak is often set
// elsewhere, so a stage may take taller, wider tiles at no cost in bytes.
// That grid may recompute past the budget only if it is estimated under
// kPastBudgetTimeRatio (0.8) of the time of the stage's grid within it,
// faster by more than the estimate errs. So --patch-recompute-budget bounds the
// recomputed MACs of the grids that set the peak, and through them the
// stages' estimated time. Not estimated time alone: as the bound of the
// search for the peak it lowers peaks by slower tiles (at 1.25 of the
// model's MACs, the least that kept every bench model's arena,
// MobileNetV1-0.25 took 6x4 tiles, 57,088 B, at 1.21x the time).
// Not earlier: a stage formed first that filled the headroom with coarse
// tiles would leave a later stage nothing to lower (MobileNetV3-small int8
// lost its second stage, 4,096 -> 8,256 B). Run after quantization
// (the body keeps int8 types) and after fuseConvPool.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/InPlaceOps.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/PatchStage.h"
#include "bundlefit/passes/Passes.h"

#include "PassUtils.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace bundlefit {
namespace {

constexpr int64_t kMaxGrid = 8;
/// Stages per graph: each search is over every run of patchable nodes.
constexpr size_t kMaxStages = 4;
/// Passes choosing the stages' grids again (regridStages).
constexpr int kMaxRegridPasses = 16;

/// A value that occupies activation bytes (not a constant, input or output).
bool isActivation(const Value *v) {
  return v && v->kind == ValueKind::Intermediate && !v->isGraphOutput;
}

/// The graph run layer by layer in graph order: per step, the activation
/// bytes live on entering it and in use while it runs. A depthwise conv whose
/// input dies there counts once (in place at --memory-opt >= 1), a view
/// shares its input's bytes, a stage already formed adds its arena
/// (`arenas`). A run of steps replaced by a stage changes no step outside
/// it (what the run leaves is its cut alone), so a candidate stage is judged
/// from this one profile.
struct LiveProfile {
  pass_utils::ArenaSizes sizes;
  std::vector<uint64_t> entering, during;
  std::vector<uint64_t> maxBefore, maxAfter; ///< Of `during` over steps < j, > j.
  std::vector<size_t> lastRead;              ///< Of each step's output (its own index if none).

  /// The peak with steps first..last run as one stage of `arena` tile bytes.
  uint64_t peakWith(size_t first, size_t last, uint64_t arena, uint64_t cutBytes) const {
    return std::max({maxBefore[first], maxAfter[last], entering[first] + arena + cutBytes});
  }
};

LiveProfile liveProfile(const std::vector<Node *> &nodes,
                        const std::map<const Node *, uint64_t> &arenas,
                        pass_utils::ArenaSizes sizes) {
  const size_t n = nodes.size();
  pass_utils::LastUses uses = pass_utils::lastUses(nodes);
  std::map<const Value *, size_t> &lastUse = uses.lastUse;
  auto ownerOf = [&](const Value *v) { return uses.ownerOf(v); };
  LiveProfile profile;
  profile.sizes = sizes;
  profile.entering.resize(n);
  profile.during.resize(n);
  profile.lastRead.resize(n);
  std::set<const Value *> live;
  uint64_t liveBytes = 0;
  for (size_t j = 0; j < n; ++j) {
    const Node &node = *nodes[j];
    const Value *produced = node.output();
    profile.lastRead[j] = produced && lastUse.count(produced) ? lastUse[produced] : j;
    profile.entering[j] = liveBytes;
    uint64_t bytes = liveBytes;
    if (auto it = arenas.find(&node); it != arenas.end())
      bytes += sizes.aligned(it->second);
    // A convolution the plan may run in place (InPlaceOps.h) writes over
    // its dying input: only its workspace and any growth are new bytes.
    const Value *input = node.input(0) ? ownerOf(node.input(0)) : nullptr;
    const bool inputDies = input && lastUse[input] == j && live.count(input);
    // An elementwise op takes a same-shaped input that dies here (the plan
    // always does, MemoryPlan.cpp): SE's Mul by its gate adds no bytes.
    bool elementwiseInPlace = false;
    if (hasOpTrait(node.opType, kOpElementwise) && node.output())
      for (const Value *in : node.inputs)
        elementwiseInPlace =
            elementwiseInPlace || (in && ownerOf(in) == in && lastUse[in] == j && live.count(in) &&
                                   in->type.sameShapeAndType(node.output()->type));
    for (const Value *out : node.outputs) {
      if (!isActivation(out) || isViewOp(node.opType) || elementwiseInPlace)
        continue;
      const uint64_t outBytes = sizes.aligned(out->type.bytes());
      if (inputDies && depthwiseInPlaceScratch(node))
        bytes += sizes.aligned(depthwiseInPlaceScratch(node));
      else if (inputDies && pointwiseInPlaceRows(node))
        bytes += sizes.aligned(pointwiseInPlaceScratch(node)) +
                 (outBytes > sizes.aligned(input->type.bytes())
                      ? outBytes - sizes.aligned(input->type.bytes())
                      : 0);
      else
        bytes += outBytes;
    }
    profile.during[j] = bytes;
    for (const Value *out : node.outputs)
      if (isActivation(out) && !isViewOp(node.opType) && live.insert(out).second)
        liveBytes += sizes.aligned(out->type.bytes());
    for (auto it = live.begin(); it != live.end();) {
      if (lastUse.count(*it) && lastUse[*it] <= j) {
        liveBytes -= sizes.aligned((*it)->type.bytes());
        it = live.erase(it);
      } else {
        ++it;
      }
    }
  }
  profile.maxBefore.assign(n + 1, 0);
  profile.maxAfter.assign(n + 1, 0);
  for (size_t j = 1; j <= n; ++j)
    profile.maxBefore[j] = std::max(profile.maxBefore[j - 1], profile.during[j - 1]);
  for (size_t j = n; j-- > 0;)
    profile.maxAfter[j] = j + 1 < n ? std::max(profile.maxAfter[j + 1], profile.during[j + 1]) : 0;
  return profile;
}

/// The body of nodes[first..last]: copies of the nodes over body-owned
/// internal values; external inputs and data constants stay the graph's.
std::shared_ptr<PatchBody> makeBody(const std::vector<Node *> &nodes, size_t first, size_t last) {
  auto body = std::make_shared<PatchBody>();
  std::map<const Value *, Value *> mapped;
  for (size_t j = first; j <= last; ++j) {
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
  size_t first = 0, last = 0;
  int64_t gridH = 1, gridW = 1;
  uint64_t peak = 0, extraMacs = 0;
  bool narrow = false; ///< PatchProgram::narrowConvTiles.
  /// patchTimeMacs less the run's MACs: the time the tiles add, so runs of
  /// different layers compare too.
  double addedTime = 0;

  /// Among grids of one peak, tiles wide enough for the wide convolution
  /// tiles first (full-width row bands where the bytes allow), then fewer
  /// recomputed MACs, or `byTime` the least estimated time.
  bool fasterThan(const Choice &o, bool byTime) const {
    if (narrow != o.narrow)
      return !narrow;
    if (byTime && addedTime != o.addedTime)
      return addedTime < o.addedTime;
    return extraMacs < o.extraMacs;
  }
};

/// The choice of nodes[first..last] on a gh x gw grid whose tile program is
/// `program` (whole or a StagePrograms entry), at `peak`, recomputing `extra`
/// of the run's `runMacs` MACs.
Choice choiceFor(size_t first, size_t last, int64_t gh, int64_t gw, const PatchProgram &program,
                 uint64_t runMacs, uint64_t peak, uint64_t extra) {
  return Choice{first,
                last,
                gh,
                gw,
                peak,
                extra,
                program.narrowConvTiles,
                patchTimeMacs(program, gh, gw) - double(runMacs)};
}

/// The tile programs of the formed stages' grids, each built once: every
/// regrid pass visits the same grids of the same bodies again
/// (MobileNetV2-0.35 96x96: 441 programs for 128 grids, its whole plan
/// 1.25x slower once the final pass also looked past the budget). An entry
/// keeps what a choice reads (arena bytes, MACs, narrow tiles), no tiles:
/// 128 whole programs kept alive slowed the memory plan after them.
class StagePrograms {
public:
  const PatchProgram &get(const PatchBody &body, const Value &cut, int64_t gh, int64_t gw) {
    auto [it, added] = programs.try_emplace({&body, gh, gw});
    if (added) {
      const std::unique_ptr<PatchProgram> program = buildPatchProgram(body, cut, gh, gw);
      it->second.arenaBytes = program->arenaBytes;
      it->second.macs = program->macs;
      it->second.narrowestConvColumns = program->narrowestConvColumns;
      it->second.narrowConvTiles = program->narrowConvTiles;
    }
    return it->second;
  }

private:
  std::map<std::tuple<const PatchBody *, int64_t, int64_t>, PatchProgram> programs;
};

/// The grids a stage's tile program may take within `budget` extra MACs,
/// coarsest first, each with its program (finer grids recompute more: once
/// one is over budget, every grid at least as fine along both axes is
/// skipped unbuilt). A formed stage's programs come from `stagePrograms`.
template <typename Visit>
void forEachGrid(const PatchBody &body, const Value &cut, uint64_t runMacs, double budget,
                 StagePrograms *stagePrograms, Visit visit) {
  const int64_t H = cut.type.shape[2], W = cut.type.shape[3];
  std::vector<std::pair<int64_t, int64_t>> overBudget;
  for (int64_t gh = 1; gh <= std::min(kMaxGrid, H); ++gh)
    for (int64_t gw = 1; gw <= std::min(kMaxGrid, W); ++gw) {
      if (std::any_of(overBudget.begin(), overBudget.end(),
                      [&](const auto &g) { return g.first <= gh && g.second <= gw; }))
        continue;
      std::unique_ptr<PatchProgram> built;
      const PatchProgram &program = stagePrograms ? stagePrograms->get(body, cut, gh, gw)
                                                  : *(built = buildPatchProgram(body, cut, gh, gw));
      const uint64_t extra = program.macs > runMacs ? program.macs - runMacs : 0;
      if (double(extra) > budget)
        overBudget.push_back({gh, gw});
      else
        visit(gh, gw, program, extra);
    }
}

/// The best stage of the graph as it is now, within `budget` extra MACs; a
/// peak of `best.peak` or more is no better. `prefixOnly` (a forced stage
/// output) keeps the first search: runs that start the graph. A run
/// nodes[first..last] ends in a cut when no value of it but the last output
/// is read after it, and that one is no graph output: the other values of
/// the run then never exist in full.
bool findStage(const std::vector<Node *> &nodes, const std::map<const Node *, uint64_t> &arenas,
               const PatchStageOptions &options, double budget, bool prefixOnly, Choice &best) {
  const bool forced = !options.stageOutput.empty();
  const LiveProfile profile =
      liveProfile(nodes, arenas, pass_utils::ArenaSizes{options.bufferAlignment});
  bool found = false;
  for (size_t first = 0; first < nodes.size() && (!prefixOnly || first == 0); ++first) {
    uint64_t runMacs = 0;
    size_t readUntil = 0; // Last read of the run's values before `last`.
    bool inside = true;   // No earlier output of the run is a graph output.
    for (size_t last = first; last < nodes.size(); ++last) {
      const Node &node = *nodes[last];
      if (!isPatchableNode(node))
        break;
      runMacs += countNodeMacs(node);
      const Value *cut = node.output();
      const bool isCut = inside && readUntil <= last && !cut->isGraphOutput;
      readUntil = std::max(readUntil, profile.lastRead[last]);
      inside = inside && !cut->isGraphOutput;
      if (!isCut || (forced && cut->name != options.stageOutput))
        continue;
      // The rest of the graph alone (an empty arena) bounds the peak below.
      const uint64_t cutBytes = profile.sizes.aligned(cut->type.bytes());
      if (profile.peakWith(first, last, 0, cutBytes) >= best.peak)
        continue;
      std::shared_ptr<PatchBody> body = makeBody(nodes, first, last);
      forEachGrid(*body, *cut, runMacs, budget, /*stagePrograms=*/nullptr,
                  [&](int64_t gh, int64_t gw, const PatchProgram &program, uint64_t extra) {
                    const uint64_t peak =
                        profile.peakWith(first, last, program.arenaBytes, cutBytes);
                    const Choice choice =
                        choiceFor(first, last, gh, gw, program, runMacs, peak, extra);
                    if (peak < best.peak ||
                        (found && peak == best.peak && choice.fasterThan(best, /*byTime=*/false))) {
                      best = choice;
                      found = true;
                    }
                  });
    }
  }
  return found;
}

/// Replaces nodes[choice.first..choice.last] by one PatchStage node.
Node *formStage(Graph &graph, const std::vector<Node *> &nodes, const Choice &choice) {
  std::shared_ptr<PatchBody> body = makeBody(nodes, choice.first, choice.last);
  std::vector<Value *> inputs;
  std::set<const Value *> seen;
  for (const auto &bodyNode : body->nodes)
    for (Value *v : bodyNode->inputs)
      if (v && seen.insert(v).second &&
          std::none_of(body->values.begin(), body->values.end(),
                       [&](const std::unique_ptr<Value> &owned) { return owned.get() == v; }))
        inputs.push_back(v); // External activation, graph input or data constant.
  std::stable_partition(inputs.begin(), inputs.end(),
                        [](const Value *v) { return !v->isConstant(); });
  Value *cut = nodes[choice.last]->output();
  Node *stage = graph.insertNodeBefore(nodes[choice.first], Op::PatchStage,
                                       graph.uniqueNodeName("patch_stage_" + cut->name), inputs,
                                       {cut->name + "_patched"});
  stage->attrs.setInt("body", registerPatchBody(body));
  stage->attrs.setInt("grid_h", choice.gridH);
  stage->attrs.setInt("grid_w", choice.gridW);
  pass_utils::takeOverOutput(stage, 0, cut);
  for (size_t j = choice.last + 1; j-- > choice.first;) {
    for (Value *out : nodes[j]->outputs)
      if (out && out->producer == nodes[j])
        out->producer = nullptr;
    nodes[j]->outputs.clear();
    nodes[j]->inputs.clear();
    graph.eraseNode(nodes[j]);
  }
  graph.removeUnusedValues();
  inferNodeTypes(*stage);
  return stage;
}

/// Each stage's grid was chosen against the peak of the graph as it was then;
/// the stages formed after it lower that peak, so a grid that met it may now
/// be the peak itself (MobileNetV3-small's first stage). Chooses each grid
/// again with the other stages fixed: the lowest peak, then Choice::fasterThan.
/// Each pass lowers a stage only to the others' peak, so passes repeat while
/// a grid changes (at most kMaxRegridPasses). With a `ceiling` (the final
/// peak), each stage instead takes the fastest grid (Choice::fasterThan by
/// time) whose peak stays at or under it, past the recompute budget only when
/// its estimated time is below kPastBudgetTimeRatio of that of the stage's
/// grid within it (what the option promises: the stages never cost more
/// estimated time than grids within the budget). Returns whether a grid
/// changed.
bool regridStages(Graph &graph, std::map<const Node *, uint64_t> &arenas,
                  std::map<const Node *, uint64_t> &extras, double &budget, const uint64_t *ceiling,
                  StagePrograms &stagePrograms, pass_utils::ArenaSizes sizes) {
  bool changed = false;
  const std::vector<Node *> nodes = graph.nodes();
  for (size_t at = 0; at < nodes.size(); ++at) {
    Node *stage = nodes[at];
    if (!arenas.count(stage))
      continue;
    std::map<const Node *, uint64_t> others = arenas;
    others.erase(stage);
    const LiveProfile profile = liveProfile(nodes, others, sizes);
    const std::shared_ptr<const PatchBody> body = patchBodyOf(*stage);
    uint64_t runMacs = 0;
    for (const auto &node : body->nodes)
      runMacs += countNodeMacs(*node);
    const Value &cut = *stage->output();
    const uint64_t cutBytes = profile.sizes.aligned(cut.type.bytes());
    const double allowed = budget + double(extras[stage]);
    const int64_t gridH = stage->attrs.getInt("grid_h", 1),
                  gridW = stage->attrs.getInt("grid_w", 1);
    Choice best =
        choiceFor(at, at, gridH, gridW, stagePrograms.get(*body, cut, gridH, gridW), runMacs,
                  profile.peakWith(at, at, arenas[stage], cutBytes), extras[stage]);
    uint64_t bestArena = arenas[stage];
    const double withinBudgetTime = best.addedTime;
    // addedTime >= extra MACs (patchTimeMacs' factor is at least 1), so no
    // grid past withinBudgetTime extra MACs can be faster.
    forEachGrid(
        *body, cut, runMacs, ceiling ? std::max(allowed, withinBudgetTime) : allowed,
        &stagePrograms, [&](int64_t gh, int64_t gw, const PatchProgram &program, uint64_t extra) {
          const uint64_t peak = profile.peakWith(at, at, program.arenaBytes, cutBytes);
          const Choice choice = choiceFor(at, at, gh, gw, program, runMacs, peak, extra);
          const bool better =
              ceiling ? peak <= *ceiling && choice.fasterThan(best, /*byTime=*/true) &&
                            (double(extra) <= allowed ||
                             choice.addedTime + double(runMacs) <
                                 kPastBudgetTimeRatio * (withinBudgetTime + double(runMacs)))
                      : peak < best.peak || (peak == best.peak && choice.fasterThan(best, false));
          if (better) {
            best = choice;
            bestArena = program.arenaBytes;
          }
        });
    changed = changed || best.gridH != stage->attrs.getInt("grid_h", 1) ||
              best.gridW != stage->attrs.getInt("grid_w", 1);
    stage->attrs.setInt("grid_h", best.gridH);
    stage->attrs.setInt("grid_w", best.gridW);
    arenas[stage] = bestArena;
    extras[stage] = best.extraMacs;
    budget = std::max(0.0, allowed - double(best.extraMacs));
  }
  return changed;
}

} // namespace

size_t formPatchStage(Graph &graph, const PatchStageOptions &options) {
  uint64_t totalMacs = 0;
  for (const Node *node : graph.nodes())
    totalMacs += countNodeMacs(*node);
  double budget = options.recomputeBudget * double(totalMacs);
  const bool forced = !options.stageOutput.empty();
  const pass_utils::ArenaSizes sizes{options.bufferAlignment};
  std::map<const Node *, uint64_t> arenas, extras; // Of the stages formed so far.
  size_t formed = 0;
  while (formed < (forced ? 1 : kMaxStages)) {
    const std::vector<Node *> nodes = graph.nodes();
    Choice best;
    best.peak = forced ? UINT64_MAX : liveProfile(nodes, arenas, sizes).maxBefore.back();
    if (!findStage(nodes, arenas, options, budget, forced, best))
      break;
    Node *stage = formStage(graph, nodes, best);
    arenas[stage] = buildPatchProgram(*stage)->arenaBytes;
    extras[stage] = best.extraMacs;
    budget -= double(best.extraMacs); // The budget is the whole model's.
    ++formed;
  }
  StagePrograms stagePrograms;
  for (int pass = 0; formed > 1 && pass < kMaxRegridPasses; ++pass)
    if (!regridStages(graph, arenas, extras, budget, nullptr, stagePrograms, sizes))
      break;
  const uint64_t peak = liveProfile(graph.nodes(), arenas, sizes).maxBefore.back();
  for (int pass = 0; formed > 0 && options.fastestGridAtPeak && pass < kMaxRegridPasses; ++pass)
    if (!regridStages(graph, arenas, extras, budget, &peak, stagePrograms, sizes))
      break;
  return formed;
}

void runMemoryOptPasses(Graph &graph, int level, double patchRecomputeBudget,
                        uint64_t bufferAlignment) {
  if (level >= 1)
    fuseConvPool(graph, bufferAlignment);
  if (level >= 2) {
    PatchStageOptions patch;
    patch.recomputeBudget = patchRecomputeBudget;
    patch.bufferAlignment = bufferAlignment;
    formPatchStage(graph, patch);
  }
}

} // namespace bundlefit
