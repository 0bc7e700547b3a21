//===- PlanBuffersFuzzer.cpp - libFuzzer target: plan-buffers files --------===//
//
// `bundlefit plan-buffers` reads MiniMalloc CSV problems and Glow allocation
// traces. Any bytes must either be refused with a message or parse into a
// problem that checkProblem accepts or rejects; an accepted problem is
// planned (greedy only: the exact search is time-bounded, not input-bounded)
// and the plan must pass checkPlan. Sizes and lifetimes near 2^63 were the
// GreedyOrder overflow of issue 16.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/planner/Greedy.h"
#include "bundlefit/planner/PlanChecker.h"
#include "bundlefit/planner/formats/GlowTrace.h"
#include "bundlefit/planner/formats/MiniMallocCsv.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

namespace planner = bundlefit::planner;

namespace {

/// Plans an accepted problem of a fuzz-sized number of buffers and checks it.
void planAndCheck(const planner::Problem &problem) {
  if (planner::checkProblem(problem) || problem.buffers.size() > 256)
    return;
  planner::Plan plan = planner::planBestGreedy(problem);
  if (std::optional<std::string> wrong = planner::checkPlan(problem, plan)) {
    std::fprintf(stderr, "fuzz: invalid plan: %s\n", wrong->c_str());
    std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  {
    std::istringstream in(text);
    std::string error;
    if (auto csv = planner::formats::parseMiniMallocCsv(in, &error))
      planAndCheck(csv->problem);
  }
  {
    std::istringstream in(text);
    std::string error;
    if (auto traces = planner::formats::parseGlowTraces(in, &error))
      for (const auto &trace : *traces)
        planAndCheck(trace.problem);
  }
  return 0;
}
