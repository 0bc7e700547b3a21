#include "bundlefit/bundle/BundleRunner.h"

namespace bundlefit {

BundleRunSpec makeRunSpec(const MemoryPlan &plan, const std::string &bundleDir,
                          const std::string &networkName, const std::string &target) {
  BundleRunSpec spec;
  spec.bundleDir = bundleDir;
  spec.networkName = networkName;
  spec.constantSize = plan.constantSize;
  spec.mutableSize = plan.mutableSize;
  spec.activationsSize = plan.activationsSize;
  spec.target = target;
  for (const Value *value : plan.placeholders)
    spec.placeholders.push_back(
        {value->name, plan.placementOf(value).offset, value->type, value->isGraphInput()});
  return spec;
}

} // namespace bundlefit
