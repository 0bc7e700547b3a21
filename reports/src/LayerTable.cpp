#include "bundlefit/reports/LayerTable.h"

#include "bundlefit/reports/TextTable.h"

#include <cstdio>

namespace bundlefit {

std::string layerOpLabel(const Node &node) {
  if (isViewNode(node))
    return node.opType + " (view)";
  if (node.attrs.has("activation"))
    return node.opType + "+" + node.attrs.getString("activation", "");
  return node.opType;
}

std::string formatMs(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, ms >= 1.0 ? "%.2f ms" : "%.3f ms", ms);
  return text;
}

std::string renderLayerTable(const MemoryPlan &plan, const LayerTiming *timing) {
  std::vector<std::string> header = {"step", "node",    "op",       "output",
                                     "MACs", "weights", "live act."};
  std::vector<bool> numeric = {true, false, false, false, true, true, true};
  if (timing) {
    header.push_back("predicted");
    numeric.push_back(true);
  }
  TextTable table(header, numeric);
  table.setDropOrder({3}); // at 100 columns, node names matter more than output shapes
  uint64_t totalMacs = 0, totalWeights = 0, peakLive = 0;
  for (const LayerRow &row : computeLayerRows(plan)) {
    totalMacs += row.macs;
    totalWeights += row.weightBytes;
    peakLive = std::max(peakLive, row.liveBytes);
    std::vector<std::string> cells = {std::to_string(row.step),    row.node->name,
                                      layerOpLabel(*row.node),     row.node->output()->type.str(),
                                      withThousands(row.macs),     withThousands(row.weightBytes),
                                      withThousands(row.liveBytes)};
    if (timing) {
      auto it = timing->msByNode.find(row.node->name);
      cells.push_back(it == timing->msByNode.end() ? "-" : formatMs(it->second));
    }
    table.addRow(cells);
  }
  table.addSeparator();
  // The live column's total is the peak: that, not a sum, is what the arena must hold.
  std::vector<std::string> total = {"",
                                    "total",
                                    "",
                                    "",
                                    withThousands(totalMacs),
                                    withThousands(totalWeights),
                                    "peak " + withThousands(peakLive)};
  if (timing)
    total.push_back(formatMs(timing->totalMs));
  table.addRow(total);
  return table.render();
}

} // namespace bundlefit
