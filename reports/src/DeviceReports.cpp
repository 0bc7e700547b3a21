#include "bundlefit/reports/DeviceReports.h"

namespace bundlefit {

using namespace bundlefit::device;

LayerTiming layerTimingOf(const Device &device, const FitResult &fit) {
  LayerTiming timing;
  timing.device = device.id;
  timing.build = fit.variant.name + ", weights " + weightsPolicyName(fit.weights);
  timing.totalMs = fit.time.ms;
  for (const LayerTime &layer : fit.time.layers)
    timing.msByNode[layer.name] += layer.ms;
  return timing;
}

std::vector<HtmlRegionBar> regionBarsOf(const FitResult &fit) {
  std::vector<HtmlRegionBar> bars;
  for (const RegionUse &use : fit.regions) {
    HtmlRegionBar bar{
        use.region->name, memoryKindName(use.region->kind), use.used, use.region->size, {}};
    for (const RegionItem &item : use.items)
      bar.items.emplace_back(item.what, item.bytes);
    bars.push_back(std::move(bar));
  }
  return bars;
}

std::vector<HtmlVariantRow> variantRowsOf(const PickResult &pick) {
  std::vector<HtmlVariantRow> rows;
  for (const Candidate &c : pick.candidates) {
    std::string problems;
    for (const std::string &problem : c.result.problems)
      problems += (problems.empty() ? "" : "; ") + problem;
    rows.push_back({c.variant.name, weightsPolicyName(c.weights), c.result.totals.flash,
                    c.result.totals.ram, c.result.fits, c.result.time.ms, c.best, problems});
  }
  return rows;
}

} // namespace bundlefit
