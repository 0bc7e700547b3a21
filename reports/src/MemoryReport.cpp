#include "bundlefit/reports/MemoryReport.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/reports/LayerTable.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Names.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace bundlefit {

namespace {

std::string producerName(const Value *value) {
  return value->producer ? value->producer->name : std::string();
}

} // namespace

std::vector<LayerRow> computeLayerRows(const MemoryPlan &plan) {
  // Each step looks only at the buffers live on it and the scratch of its
  // node: scanning every buffer per step was quadratic in the graph's size.
  const int steps = int(plan.schedule.size());
  std::vector<std::vector<size_t>> bornAt(size_t(std::max(steps, 0)));
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const PlannedBuffer &buffer = plan.buffers[b];
    if (buffer.placement.size && buffer.first <= buffer.last && buffer.last >= 0 &&
        buffer.first < steps)
      bornAt[size_t(std::max(buffer.first, 0))].push_back(b);
  }
  std::unordered_map<const Node *, std::vector<const ScratchBuffer *>> scratchOf;
  for (const ScratchBuffer &scratch : plan.scratch)
    if (scratch.placement.size)
      scratchOf[scratch.node].push_back(&scratch);
  std::vector<size_t> live; // Buffers live on the current step.
  std::vector<LayerRow> rows;
  for (int step = 0; step < steps; ++step) {
    const Node *node = plan.schedule[step];
    LayerRow row;
    row.step = step;
    row.node = node;
    row.macs = countNodeMacs(*node);
    std::set<const Value *> counted;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const Value *input = node->inputs[i];
      if (!input || !input->isConstant() || isParameterOperand(*node, i) ||
          !plan.hasPlacement(input) || !counted.insert(input).second)
        continue;
      row.weightBytes += input->type.bytes();
    }
    live.erase(std::remove_if(live.begin(), live.end(),
                              [&](size_t b) { return plan.buffers[b].last < step; }),
               live.end());
    live.insert(live.end(), bornAt[step].begin(), bornAt[step].end());
    // The bytes occupied, not the sum of tensor sizes: an in-place output
    // shares its input's bytes, and the node's workspace counts too.
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (size_t b : live) {
      const PlannedBuffer &buffer = plan.buffers[b];
      ranges.push_back(
          {buffer.placement.offset,
           buffer.placement.offset + alignUp(buffer.placement.size, plan.bufferAlignment)});
    }
    auto scratch = scratchOf.find(node);
    if (scratch != scratchOf.end())
      for (const ScratchBuffer *s : scratch->second)
        ranges.push_back({s->placement.offset,
                          s->placement.offset + alignUp(s->placement.size, plan.bufferAlignment)});
    std::sort(ranges.begin(), ranges.end());
    uint64_t coveredTo = 0;
    for (const auto &[begin, end] : ranges) {
      row.liveBytes += end > std::max(begin, coveredTo) ? end - std::max(begin, coveredTo) : 0;
      coveredTo = std::max(coveredTo, end);
    }
    rows.push_back(row);
  }
  return rows;
}

nlohmann::json memoryReportJson(const Graph &graph, const MemoryPlan &plan,
                                const std::string &networkName, const LayerTiming *timing) {
  using nlohmann::json;
  json report;
  report["schema"] = "bundlefit.memory/1";
  report["network"] = networkName;
  report["sizes"] = {{"constant", plan.constantSize},
                     {"mutable", plan.mutableSize},
                     {"activations", plan.activationsSize},
                     {"alignment", MemoryPlan::kAlignment},
                     {"buffer_alignment", plan.bufferAlignment}};
  report["activations_lower_bound"] = plan.activationsLowerBound;
  report["allocator"] = plan.allocator;
  report["schedule"] = plan.scheduleMethod;
  // The capacity the arena search targeted (--arena-capacity, or a part's
  // region room in `fit`), 0 for none, and what the plan is worth against it.
  report["activations_capacity"] = plan.activationCapacity;
  report["activations_proof"] = plan.activationsProof;
  // Whether a limit ended the arena search, and where (empty: it ended by
  // itself, at the bound or with a proof).
  report["activations_search"] = {{"stopped_by", plan.activationsStoppedBy},
                                  {"stopped_in", plan.activationsStoppedIn},
                                  {"work_units", plan.activationsWorkUnits}};

  json placeholders = json::array();
  for (const Value *value : plan.placeholders) {
    const Placement &p = plan.placementOf(value);
    placeholders.push_back({{"name", value->name},
                            {"symbol", legalizeName(value->name)},
                            {"kind", value->isGraphInput() ? "input" : "output"},
                            {"offset", p.offset},
                            {"size", p.size},
                            {"dtype", dtypeName(value->type.dtype)},
                            {"shape", value->type.shape}});
    // An int8 input or output (--int8-io): how its integers map to reals.
    if (value->type.quant.scales.size() == 1) {
      placeholders.back()["scale"] = value->type.quant.scales[0];
      placeholders.back()["zero_point"] = value->type.quant.zeroPoints.at(0);
    }
  }
  report["placeholders"] = placeholders;

  json buffers = json::array();
  for (const PlannedBuffer &buffer : plan.buffers)
    buffers.push_back({{"name", buffer.value->name},
                       {"offset", buffer.placement.offset},
                       {"size", buffer.placement.size},
                       {"first", buffer.first},
                       {"last", buffer.last},
                       {"producer", producerName(buffer.value)}});
  for (const ScratchBuffer &scratch : plan.scratch)
    buffers.push_back({{"name", scratch.node->name + ".scratch"},
                       {"offset", scratch.placement.offset},
                       {"size", scratch.placement.size},
                       {"producer", scratch.node->name},
                       {"scratch", true}});
  report["buffers"] = buffers;

  json constants = json::array();
  for (const Value *value : plan.constants) {
    const Placement &p = plan.placementOf(value);
    constants.push_back({{"name", value->name}, {"offset", p.offset}, {"size", p.size}});
  }
  report["constants"] = constants;

  json layers = json::array();
  uint64_t totalMacs = 0;
  for (const LayerRow &row : computeLayerRows(plan)) {
    totalMacs += row.macs;
    layers.push_back({{"step", row.step},
                      {"name", row.node->name},
                      {"op", row.node->opType},
                      {"output_shape", row.node->output()->type.shape},
                      {"output_dtype", dtypeName(row.node->output()->type.dtype)},
                      {"macs", row.macs},
                      {"weight_bytes", row.weightBytes},
                      {"live_activation_bytes", row.liveBytes},
                      {"view", isViewNode(*row.node)}});
    if (timing && timing->msByNode.count(row.node->name))
      layers.back()["predicted_ms"] = timing->msByNode.at(row.node->name);
  }
  if (timing)
    report["predicted"] = {{"device", timing->device}, {"ms", timing->totalMs}};
  report["layers"] = layers;
  report["totals"] = {{"macs", totalMacs}, {"nodes", plan.schedule.size()}};
  (void)graph;
  return report;
}

std::string arenaContentsLabel(const MemoryPlan &plan) {
  std::string label = std::to_string(plan.buffers.size()) + " activation buffer" +
                      (plan.buffers.size() == 1 ? "" : "s");
  if (!plan.scratch.empty())
    label += " + " + std::to_string(plan.scratch.size()) + " kernel scratch";
  return label;
}

std::string memoryReportText(const Graph &graph, const MemoryPlan &plan,
                             const std::string &networkName, const LayerTiming *timing) {
  std::string text = "network " + networkName + "\n\n";
  TextTable regions({"region", "bytes", "holds"}, {false, true, false});
  regions.addRow({"constantWeight", withThousands(plan.constantSize),
                  std::to_string(plan.constants.size()) + " weight tensors, 64-aligned"});
  regions.addRow({"mutableWeight", withThousands(plan.mutableSize),
                  std::to_string(plan.placeholders.size()) + " inputs/outputs"});
  regions.addRow(
      {"activations", withThousands(plan.activationsSize),
       arenaContentsLabel(plan) + ", lower bound " + withThousands(plan.activationsLowerBound)});
  // The allocator on a line of its own: in the row it pushed the table past 100 columns.
  text += regions.render() + "activations placed by " + plan.allocator + "\n";
  // Said only when the graph was too large to reorder within the search's
  // work limit: the order is then the model's, not a searched one.
  if (plan.scheduleMethod == "model order: too large to reorder")
    text += "node order: the model's (the graph is too large for the order search's work limit)\n";
  text += "\n";

  TextTable placeholders({"placeholder", "kind", "offset", "bytes", "type"},
                         {false, false, true, true, false});
  for (const Value *value : plan.placeholders) {
    const Placement &p = plan.placementOf(value);
    placeholders.addRow({legalizeName(value->name), value->isGraphInput() ? "input" : "output",
                         withThousands(p.offset), withThousands(p.size), value->type.str()});
  }
  text += placeholders.render() + "\n";

  text += renderLayerTable(plan, timing);
  (void)graph;
  return text;
}

} // namespace bundlefit
