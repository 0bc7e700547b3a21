//===- Fingerprint.cpp - Every plan of a fixed set, one line each ---------===//
//
// Why: a change to planner/src meant to keep every plan (a simplification,
// a faster data structure) is checked by planning the same problems before
// and after and comparing, not by the timed benchmarks, whose figures move
// with the machine. `bench_planner --fingerprint > before.txt`, change,
// rebuild, `--fingerprint > after.txt`, `diff`: any line that differs is a
// plan that changed. The set: Glow's traces (exact and each greedy order),
// MiniMalloc's A-F with and without their 1 MiB capacity, the four
// perfect-packing families and network-like problems at 10^3 and 10^4
// buffers (three seeds) and one 10^5 packing per family, so that the steps
// only large sections take run too. A few minutes of CPU.
//
//===----------------------------------------------------------------------===//
#include "Fingerprint.h"

#include "bundlefit/planner/PlanChecker.h"
#include "bundlefit/planner/Planner.h"
#include "bundlefit/planner/formats/GlowTrace.h"
#include "bundlefit/planner/formats/MiniMallocCsv.h"
#include "bundlefit/planner/formats/NetworkLike.h"
#include "bundlefit/planner/formats/PerfectPacking.h"

#include <cstdio>
#include <fstream>
#include <string>

namespace bench_planner {
namespace {

using namespace bundlefit::planner;

/// FNV-1a over the offsets: equal plans, equal hashes.
uint64_t offsetsHash(const Plan &plan) {
  uint64_t hash = 1469598103934665603ull;
  for (uint64_t offset : plan.offsets) {
    hash ^= offset;
    hash *= 1099511628211ull;
  }
  return hash;
}

bool printPlan(const std::string &name, const Problem &problem, const Plan &plan) {
  std::optional<std::string> invalid = checkPlan(problem, plan);
  std::printf("%s arena=%llu bound=%llu algorithm=%s optimal=%d infeasible=%d nodes=%llu "
              "work=%llu stop=%s/%s sections=%zu offsets=%016llx%s%s\n",
              name.c_str(), (unsigned long long)plan.arenaSize, (unsigned long long)plan.lowerBound,
              plan.algorithm.c_str(), plan.provedOptimal, plan.provedInfeasible,
              (unsigned long long)plan.searchNodes, (unsigned long long)plan.workUnits,
              plan.stoppedBy.c_str(), plan.stoppedIn.c_str(), plan.sections,
              (unsigned long long)offsetsHash(plan), invalid ? " INVALID " : "",
              invalid ? invalid->c_str() : "");
  std::fflush(stdout);
  return !invalid;
}

PlanOptions workLimited(uint64_t work) {
  PlanOptions options;
  options.exact.timeBudgetSeconds = 1e6; // the work ends it, never the clock
  options.exact.workLimit = work;
  return options;
}

bool planAll(const std::string &name, const Problem &problem, uint64_t work, bool greedyToo) {
  bool ok = printPlan(name + " exact", problem, planMemory(problem, workLimited(work)));
  if (!greedyToo)
    return ok;
  for (GreedyOrder order :
       {GreedyOrder::BySize, GreedyOrder::MaxLiveBySize, GreedyOrder::MaxLiveByTime})
    ok &= printPlan(name + " greedy:" + toString(order), problem, planGreedy(problem, order));
  return printPlan(name + " best-greedy", problem, planBestGreedy(problem)) && ok;
}

} // namespace

bool printFingerprint(const std::filesystem::path &data) {
  bool ok = true;
  if (!std::filesystem::is_directory(data))
    std::fprintf(stderr, "no planner benchmark data at %s: generated problems only\n",
                 data.string().c_str());
  std::ifstream traces(data / "glow_memory_traces.txt");
  if (auto models = formats::parseGlowTraces(traces))
    for (const auto &model : *models)
      ok &= planAll("glow:" + model.name, model.problem, 50'000'000, true);
  for (const char *name : {"A", "B", "C", "D", "E", "F"}) {
    std::ifstream csv(data / "minimalloc" / (std::string(name) + ".1048576.csv"));
    auto instance = formats::parseMiniMallocCsv(csv);
    if (!instance)
      continue;
    ok &= planAll(std::string("minimalloc:") + name, instance->problem, 300'000'000, true);
    PlanOptions capped = workLimited(300'000'000);
    capped.exact.capacity = 1048576;
    capped.exact.stopAtCapacity = true;
    ok &= printPlan(std::string("minimalloc:") + name + " capacity", instance->problem,
                    planMemory(instance->problem, capped));
  }
  for (int n : {1000, 10000}) {
    uint64_t work = n == 1000 ? 100'000'000 : 400'000'000;
    for (uint32_t seed : {1u, 2u, 3u}) {
      std::string suffix = ":" + std::to_string(n) + ":" + std::to_string(seed);
      for (formats::PackingFamily family : formats::allPackingFamilies())
        ok &= planAll("perfect:" + formats::toString(family) + suffix,
                      formats::perfectPackingProblem(n, family, seed), work, n == 1000);
      ok &= planAll("network" + suffix, formats::networkLikeProblem(n, seed), work, n == 1000);
    }
  }
  for (formats::PackingFamily family : formats::allPackingFamilies())
    ok &= planAll("perfect:" + formats::toString(family) + ":100000:7",
                  formats::perfectPackingProblem(100000, family, 7), 500'000'000, false);
  return ok;
}

} // namespace bench_planner
