// The planner/README.md example as a program: plan three buffers, prove the
// plan safe, and print it as MiniMalloc CSV. Exits 1 if anything is off.
#include "bundlefit/planner/Planner.h"
#include "bundlefit/planner/formats/MiniMallocCsv.h"

#include <iostream>

using namespace bundlefit::planner;

int main() {
  Problem p;
  p.buffers = {{/*id*/ 0, /*size*/ 46080, /*align*/ 64, /*first*/ 0, /*last*/ 1},
               {1, 11520, 64, 1, 2},
               {2, 11520, 64, 2, 3}};
  p.inPlace = {{/*output*/ 2, /*input*/ 1}}; // relu over its input
  Plan plan = planMemory(p);
  if (auto error = checkPlan(p, plan)) {
    std::cerr << "unsafe plan: " << *error << "\n";
    return 1;
  }
  formats::writeMiniMallocCsv(std::cout, p, plan);
  std::cout << "arena " << plan.arenaSize << ", lower bound " << plan.lowerBound << ", "
            << proofOf(plan, 0) << "\n";
  // 46,080 + 11,520 on step 1 (buffer 2 shares buffer 1's bytes): the bound.
  return plan.arenaSize == 57600 && plan.offsets[1] == plan.offsets[2] ? 0 : 1;
}
