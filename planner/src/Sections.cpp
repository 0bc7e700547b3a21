//===- Sections.cpp - Split where no item crosses -------------------------===//
#include "Sections.h"

#include <algorithm>

namespace bundlefit::planner::detail {

std::vector<Section> splitIntoSections(const Items &items) {
  int steps = std::max(items.numSteps, 1);
  // crossing[s]: items live on both step s and step s + 1.
  // bytes[s]: bytes live on step s. Both as difference arrays first.
  std::vector<int64_t> crossing(size_t(steps) + 1, 0), bytes(size_t(steps) + 1, 0);
  for (const Item &it : items.items) {
    if (it.size == 0)
      continue;
    crossing[it.cfirst] += 1;
    crossing[it.clast] -= 1;
    bytes[it.cfirst] += int64_t(it.size);
    bytes[size_t(it.clast) + 1] -= int64_t(it.size);
  }
  // Section k covers steps [start[k], start[k + 1]).
  std::vector<int> sectionOfStep(steps);
  std::vector<Section> sections(1);
  int64_t cross = 0, live = 0;
  std::vector<int> start = {0};
  for (int s = 0; s < steps; ++s) {
    sectionOfStep[s] = int(sections.size()) - 1;
    live += bytes[s];
    sections.back().lowerBound = std::max(sections.back().lowerBound, uint64_t(live));
    cross += crossing[s];
    if (cross == 0 && s + 1 < steps) {
      sections.emplace_back();
      start.push_back(s + 1);
    }
  }
  start.push_back(steps);
  for (size_t i = 0; i < items.items.size(); ++i) {
    const Item &it = items.items[i];
    if (it.size == 0)
      continue;
    int k = sectionOfStep[it.cfirst];
    Item local = it;
    local.cfirst -= start[k];
    local.clast -= start[k];
    sections[k].items.items.push_back(local);
    sections[k].global.push_back(int(i));
  }
  std::vector<Section> used;
  for (size_t k = 0; k < sections.size(); ++k) {
    if (sections[k].items.items.empty())
      continue;
    sections[k].items.numSteps = start[k + 1] - start[k];
    used.push_back(std::move(sections[k]));
  }
  return used;
}

} // namespace bundlefit::planner::detail
