//===- PatchStage.cpp - Tile programs of PatchStage nodes -------------------===//
//
// For each tile of the stage output, regions are propagated backwards through
// the body: a Conv needs the rows/columns its window reads (clipped to the
// image: the clipped part is the conv's zero padding, re-expressed as the
// tile conv's own pads), an elementwise op the same region. A value read by
// several nodes holds the union of what they need; a reader that needs less
// (a residual Add) gets a cropped copy. Whether a reader reads directly or
// through a crop is decided once for all tiles, so every tile runs the same
// steps and one arena layout (each buffer at its largest tile size) serves
// them all.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/PatchStage.h"
#include "lut/Lut.h"
#include "memopt/MemOpt.h"

#include "bundlefit/ops/InPlaceOps.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

#include "bundlefit/ops/ShapeHelpers.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>

namespace bundlefit {

namespace {

std::mutex registryMutex;
std::map<int64_t, std::shared_ptr<PatchBody>> &registry() {
  static std::map<int64_t, std::shared_ptr<PatchBody>> bodies;
  return bodies;
}

constexpr uint64_t kArenaAlignment = 16;

struct Region {
  int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  int64_t rows() const { return r1 - r0; }
  int64_t cols() const { return c1 - c0; }
  bool empty() const { return rows() <= 0 || cols() <= 0; }
  bool operator==(const Region &o) const {
    return r0 == o.r0 && r1 == o.r1 && c0 == o.c0 && c1 == o.c1;
  }
  Region unite(const Region &o) const {
    if (empty())
      return o;
    return {std::min(r0, o.r0), std::max(r1, o.r1), std::min(c0, o.c0), std::max(c1, o.c1)};
  }
};

Region fullRegion(const Value &v) { return {0, v.type.shape[2], 0, v.type.shape[3]}; }

bool isDataInput(const Node &node, size_t i) {
  const Value *v = node.input(i);
  return v && !v->isConstant() && !isParameterOperand(node, i);
}

/// Spatial geometry of a body Conv on its full-size input.
shape_helpers::Window convWindow(const Node &conv) {
  const Shape &x = conv.input(0)->type.shape, &w = conv.input(1)->type.shape;
  return shape_helpers::resolveWindow(conv, {x[2], x[3]}, {w[2], w[3]}, false);
}

/// What input `i` of body node `node` must hold for the node to produce `out`.
Region inputRegion(const Node &node, size_t i, const Region &out) {
  const Value &x = *node.input(i);
  if (node.opType != "Conv")
    return out;
  const shape_helpers::Window g = convWindow(node);
  auto span = [&](int64_t o0, int64_t o1, int axis, int64_t size) {
    const int64_t s = g.strides[axis], d = g.dilations[axis], k = g.kernel[axis];
    const int64_t lo = o0 * s - g.padsBegin[axis];
    const int64_t hi = (o1 - 1) * s - g.padsBegin[axis] + (k - 1) * d + 1;
    return std::pair<int64_t, int64_t>{std::max<int64_t>(lo, 0), std::min(hi, size)};
  };
  auto [r0, r1] = span(out.r0, out.r1, 0, x.type.shape[2]);
  auto [c0, c1] = span(out.c0, out.c1, 1, x.type.shape[3]);
  return {r0, r1, c0, c1};
}

TensorType tileType(const Value &v, const Region &r) {
  TensorType t = v.type;
  t.shape[2] = r.rows();
  t.shape[3] = r.cols();
  return t;
}

std::vector<int64_t> denseStrides(const TensorType &t) {
  return {t.shape[2] * t.shape[3], t.shape[3], 1};
}

/// Needs of one tile: per body value the region it holds, per (node, input)
/// the region the reader needs.
struct TileNeeds {
  Region tile;
  std::map<const Value *, Region> holds;
  std::map<std::pair<size_t, size_t>, Region> reads;
};

TileNeeds needsOf(const PatchBody &body, const Region &tile) {
  TileNeeds needs;
  needs.tile = tile;
  needs.holds[body.result] = tile;
  for (size_t n = body.nodes.size(); n-- > 0;) {
    const Node &node = *body.nodes[n];
    auto it = needs.holds.find(node.output());
    if (it == needs.holds.end())
      fatalInternal(node.describe() + ": patch body node whose output nothing reads");
    const Region out = it->second;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (!isDataInput(node, i))
        continue;
      const Region in = inputRegion(node, i, out);
      needs.reads[{n, i}] = in;
      Region &held = needs.holds[node.input(i)];
      held = held.unite(in);
    }
  }
  return needs;
}

/// Slots of the arena: one per internal value and per crop, with lifetimes
/// in body-node steps; sizes are the largest over the tiles.
struct Slot {
  uint64_t bytes = 0;
  size_t first = 0, last = 0;
  uint64_t offset = 0;
};

void placeSlots(std::vector<Slot> &slots, uint64_t &arena) {
  std::vector<size_t> order(slots.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return slots[a].bytes > slots[b].bytes; });
  std::vector<size_t> placed;
  arena = 0;
  for (size_t s : order) {
    Slot &slot = slots[s];
    // Lowest offset that overlaps no placed slot alive at the same time.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t p : placed)
      if (slots[p].first <= slot.last && slot.first <= slots[p].last)
        busy.push_back({slots[p].offset, slots[p].offset + slots[p].bytes});
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (const auto &[b, e] : busy) {
      if (offset + slot.bytes <= b)
        break;
      offset = std::max(offset, (e + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment);
    }
    slot.offset = offset;
    arena = std::max(arena, offset + slot.bytes);
    placed.push_back(s);
  }
}

} // namespace

int64_t registerPatchBody(std::shared_ptr<PatchBody> body) {
  std::lock_guard<std::mutex> lock(registryMutex);
  int64_t id = int64_t(registry().size()) + 1;
  registry()[id] = std::move(body);
  return id;
}

std::shared_ptr<const PatchBody> patchBodyOf(const Node &stage) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = registry().find(stage.attrs.getInt("body", 0));
  if (it == registry().end())
    fatalInternal(stage.describe() + ": PatchStage without a registered body");
  return it->second;
}

std::string whyNotPatchable(const Node &node) {
  static const std::set<std::string> ops = {"Conv", "Add", "Relu", "Clip", "Quantize", "Rescale"};
  if (node.opType == kPatchStageOp)
    return "already a patch stage";
  // An int8 activation table (src/ops/lut/) is elementwise: the tile's bytes
  // in, the tile's bytes out. Float activations come fused into their conv;
  // int8 builds split them off (quant/UnfuseActivations.cpp), which without
  // this would end a stage at every SiLU and HardSwish.
  const bool int8Table = lut::functionOf(node) && node.input(0) &&
                         node.input(0)->type.dtype == DType::Int8 &&
                         !node.input(0)->type.quant.empty();
  if (!ops.count(node.opType) && !int8Table) {
    // The two that end stages in SE nets: say what a stage could not do.
    const Value *y = node.output();
    if (node.opType.compare(0, 6, "Global") == 0)
      return "op " + node.opType + " reads its whole input (no patch form)";
    for (size_t i = 0; y && i < node.inputs.size(); ++i)
      if (isDataInput(node, i) && node.input(i)->type.shape != y->type.shape)
        return "op " + node.opType + " broadcasts " + node.input(i)->type.str() + " to " +
               y->type.str() + " (no patch form)";
    return "op " + node.opType + " has no patch form";
  }
  if (node.outputs.size() != 1 || !node.output())
    return node.opType + " has " + std::to_string(node.outputs.size()) + " outputs";
  for (const auto &[name, attribute] : node.attrs.all())
    if (name.compare(0, 5, "cmsis") == 0)
      return "a CMSIS-NN call"; // With its own workspace (quant/CmsisLayout.h).
  const TensorType &y = node.output()->type;
  if (y.rank() != 4 || y.shape[0] != 1)
    return "output " + y.str() + " is not 4-D batch 1";
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!isDataInput(node, i))
      continue;
    const TensorType &x = node.input(i)->type;
    if (x.rank() != 4 || x.shape[0] != 1)
      return "input " + x.str() + " is not 4-D batch 1";
    if (node.opType != "Conv" && x.shape != y.shape) // Elementwise without broadcasting only.
      return node.opType + " broadcasts " + x.str() + " to " + y.str();
  }
  if (node.opType == "Conv" &&
      !(node.input(1) && node.input(1)->isConstant() && node.input(1)->type.rank() == 4 &&
        (!node.input(2) || node.input(2)->isConstant())))
    return "Conv weights or bias are not constant";
  if (node.opType == "Add" && !(isDataInput(node, 0) && isDataInput(node, 1)))
    return "Add with a constant operand";
  return "";
}

bool isPatchableNode(const Node &node) { return whyNotPatchable(node).empty(); }

double patchTimeMacs(const PatchProgram &program, int64_t gridH, int64_t gridW) {
  return double(program.macs) *
         (1.0 + kColumnSplitTimeFactor * std::log2(double(std::max<int64_t>(gridW, 1))) +
          kRowSplitTimeFactor * std::log2(double(std::max<int64_t>(gridH, 1))));
}

std::unique_ptr<PatchProgram> buildPatchProgram(const PatchBody &body, const Value &stageOutput,
                                                int64_t gridH, int64_t gridW) {
  const Value &result = *body.result;
  const int64_t H = result.type.shape[2], W = result.type.shape[3];
  if (gridH < 1 || gridW < 1 || gridH > H || gridW > W)
    throw Error(ExitCode::Unsupported, "PatchStage: grid " + std::to_string(gridH) + "x" +
                                           std::to_string(gridW) + " does not fit " +
                                           result.type.str());
  std::vector<TileNeeds> tiles;
  for (int64_t i = 0; i < gridH; ++i)
    for (int64_t j = 0; j < gridW; ++j)
      tiles.push_back(
          needsOf(body, {i * H / gridH, (i + 1) * H / gridH, j * W / gridW, (j + 1) * W / gridW}));

  // Which readers take the holder's buffer as it is, in every tile.
  std::set<const Value *> internal;
  for (const auto &node : body.nodes)
    internal.insert(node->output());
  auto held = [&](const TileNeeds &t, const Value *v) {
    return internal.count(v) ? t.holds.at(v) : fullRegion(*v);
  };
  std::map<std::pair<size_t, size_t>, bool> direct;
  for (const auto &[key, region] : tiles[0].reads) {
    bool same = true;
    const Value *v = body.nodes[key.first]->input(key.second);
    for (const TileNeeds &t : tiles)
      same = same && t.reads.at(key) == held(t, v);
    direct[key] = same;
  }

  // Arena slots: internal values, then crops.
  std::vector<Slot> slots;
  std::map<const Value *, size_t> valueSlot;
  std::map<std::pair<size_t, size_t>, size_t> cropSlot;
  const size_t end = body.nodes.size(); // The paste of the result.
  for (size_t n = 0; n < body.nodes.size(); ++n) {
    const Value *out = body.nodes[n]->output();
    valueSlot[out] = slots.size();
    slots.push_back({0, n, out == body.result ? end : n});
  }
  for (const auto &[key, isDirect] : direct) {
    const Value *v = body.nodes[key.first]->input(key.second);
    if (internal.count(v))
      slots[valueSlot[v]].last = std::max(slots[valueSlot[v]].last, key.first);
    if (!isDirect) {
      cropSlot[key] = slots.size();
      slots.push_back({0, key.first, key.first});
    }
  }
  for (const TileNeeds &t : tiles) {
    for (const auto &[v, s] : valueSlot)
      slots[s].bytes = std::max(slots[s].bytes, tileType(*v, t.holds.at(v)).bytes());
    for (const auto &[key, s] : cropSlot) {
      const Value *v = body.nodes[key.first]->input(key.second);
      slots[s].bytes = std::max(slots[s].bytes, tileType(*v, t.reads.at(key)).bytes());
    }
  }
  auto program = std::make_unique<PatchProgram>();
  placeSlots(slots, program->arenaBytes);
  for (const auto &node : body.nodes)
    program->im2colBytes = std::max(program->im2colBytes, int8ConvIm2colBytes(*node));
  if (program->im2colBytes) {
    program->im2colOffset = alignUp(program->arenaBytes, 4);
    program->arenaBytes = program->im2colOffset + program->im2colBytes;
  }

  auto newValue = [&](const Value &like, const Region &r, size_t slot, const std::string &name) {
    auto v = std::make_unique<Value>();
    v->name = name;
    v->type = tileType(like, r);
    v->typeKnown = true;
    program->arenaOffset[v.get()] = slots[slot].offset;
    program->values.push_back(std::move(v));
    return program->values.back().get();
  };
  auto copyStep = [&](const Value *src, const Region &srcRegion, const Value *dst,
                      const Region &dstRegion, const Region &what) {
    PatchStep step;
    step.copy.src = src;
    step.copy.dst = dst;
    step.copy.dims = {src->type.shape[1], what.rows(), what.cols()};
    step.copy.srcStrides = denseStrides(src->type);
    step.copy.dstStrides = denseStrides(dst->type);
    step.copy.srcOffset = (what.r0 - srcRegion.r0) * src->type.shape[3] + (what.c0 - srcRegion.c0);
    step.copy.dstOffset = (what.r0 - dstRegion.r0) * dst->type.shape[3] + (what.c0 - dstRegion.c0);
    return step;
  };

  for (size_t t = 0; t < tiles.size(); ++t) {
    const TileNeeds &needs = tiles[t];
    if (needs.tile.empty())
      continue;
    const std::string suffix = ".tile" + std::to_string(t);
    std::vector<PatchStep> steps;
    std::map<const Value *, Value *> tileValue;
    for (size_t n = 0; n < body.nodes.size(); ++n) {
      const Node &node = *body.nodes[n];
      auto clone = std::make_unique<Node>();
      clone->name = node.name + suffix;
      clone->opType = node.opType;
      clone->attrs = node.attrs;
      clone->inputs = node.inputs;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (!isDataInput(node, i))
          continue;
        const Value *v = node.input(i);
        const bool isInternal = internal.count(v) != 0;
        const Region have = held(needs, v), want = needs.reads.at({n, i});
        Value *source = isInternal ? tileValue.at(v) : const_cast<Value *>(v);
        if (direct.at({n, i})) {
          clone->inputs[i] = source;
          continue;
        }
        Value *crop = newValue(*v, want, cropSlot.at({n, i}), v->name + ".crop" + suffix);
        steps.push_back(copyStep(source, have, crop, want, want));
        clone->inputs[i] = crop;
      }
      const Region out = needs.holds.at(node.output());
      Value *y =
          newValue(*node.output(), out, valueSlot.at(node.output()), node.output()->name + suffix);
      clone->outputs = {y};
      if (node.opType == "Conv") {
        const shape_helpers::Window g = convWindow(node);
        const Region in = needs.reads.at({n, 0});
        int64_t pads[4];
        for (int axis = 0; axis < 2; ++axis) {
          const int64_t o0 = axis == 0 ? out.r0 : out.c0,
                        oLen = axis == 0 ? out.rows() : out.cols();
          const int64_t i0 = axis == 0 ? in.r0 : in.c0, iLen = axis == 0 ? in.rows() : in.cols();
          const int64_t s = g.strides[axis];
          const int64_t ek = (g.kernel[axis] - 1) * g.dilations[axis] + 1;
          pads[axis] = i0 + g.padsBegin[axis] - o0 * s;
          pads[axis + 2] = (oLen - 1) * s + ek - iLen - pads[axis];
          if (pads[axis] < 0 || pads[axis + 2] < 0)
            fatalInternal(node.describe() + ": negative tile padding");
        }
        clone->attrs.erase("auto_pad");
        clone->attrs.setInts("pads", {pads[0], pads[1], pads[2], pads[3]});
        const Shape &xs = clone->input(0)->type.shape, &ws = node.input(1)->type.shape;
        shape_helpers::Window check =
            shape_helpers::resolveWindow(*clone, {xs[2], xs[3]}, {ws[2], ws[3]}, false);
        if (check.outSpatial[0] != out.rows() || check.outSpatial[1] != out.cols())
          fatalInternal(node.describe() + ": tile geometry does not reproduce the tile");
        program->narrowestConvColumns = program->narrowestConvColumns
                                            ? std::min(program->narrowestConvColumns, out.cols())
                                            : out.cols();
        program->narrowConvTiles =
            program->narrowConvTiles ||
            out.cols() < std::min(kWideTileColumns, node.output()->type.shape[3]);
      }
      tileValue[node.output()] = y;
      std::optional<uint64_t> macs = checkedAdd(program->macs, countNodeMacs(*clone));
      if (!macs)
        fatalInternal(node.describe() + ": the patch stage's MACs overflow 64 bits");
      program->macs = *macs;
      PatchStep run;
      run.node = clone.get();
      steps.push_back(run);
      program->nodes.push_back(std::move(clone));
    }
    steps.push_back(copyStep(tileValue.at(body.result), needs.tile, &stageOutput,
                             fullRegion(stageOutput), needs.tile));
    program->tiles.push_back(std::move(steps));
  }
  return program;
}

std::unique_ptr<PatchProgram> buildPatchProgram(const Node &stage) {
  std::shared_ptr<const PatchBody> body = patchBodyOf(stage);
  return buildPatchProgram(*body, *stage.output(), stage.attrs.getInt("grid_h", 1),
                           stage.attrs.getInt("grid_w", 1));
}

namespace {

void inferPatchStage(Node &node) {
  std::shared_ptr<const PatchBody> body = patchBodyOf(node);
  node.output()->type = body->result->type;
  node.output()->typeKnown = true;
}

uint64_t patchStageMacs(const Node &node) { return buildPatchProgram(node)->macs; }

} // namespace

void registerPatchStageOp(OpRegistry &registry) {
  registry.add({kPatchStageOp, inferPatchStage, patchStageMacs})
      .with(kOpCompound)
      .runs(memopt_interp::patchStageKernel);
}

} // namespace bundlefit
