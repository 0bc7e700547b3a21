//===- Ablation.cpp - What each step of the planner is worth --------------===//
//
// Every step of planMemory (Strategy.cpp) switched off in turn
// (PlanOptions::skip), on every family: Glow's traces, MiniMalloc's
// challenging instances, network-like problems and the perfect packings,
// all on tuning seeds. A step whose removal costs nothing anywhere is one
// to delete.
//
//===----------------------------------------------------------------------===//
#include "Ablation.h"
#include "Peers.h"
#include "PerfectBench.h"

#include "bundlefit/planner/Planner.h"
#include "bundlefit/planner/formats/GlowTrace.h"
#include "bundlefit/planner/formats/MiniMallocCsv.h"
#include "bundlefit/planner/formats/NetworkLike.h"
#include "bundlefit/planner/formats/PerfectPacking.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace bp = bundlefit::planner;
namespace bf = bundlefit::planner::formats;
namespace fs = std::filesystem;

namespace bench_planner {

namespace {
struct Problem {
  std::string family;
  bp::Problem problem;
  uint64_t capacity = 0; ///< MiniMalloc's: fit it and stop.
  double limit = 5;
};

// Percent over the bound, or for a capacity 0 when it fits and 100 when not.
double score(const Problem &p, const bp::Plan &plan) {
  if (p.capacity)
    return plan.arenaSize <= p.capacity ? 0 : 100;
  return 100.0 * (double(plan.arenaSize) / double(plan.lowerBound) - 1);
}

std::vector<Problem> problems(const fs::path &data) {
  std::vector<Problem> all;
  std::ifstream glow(data / "glow_memory_traces.txt");
  if (auto traces = bf::parseGlowTraces(glow))
    for (auto &t : *traces)
      all.push_back({"glow", std::move(t.problem), 0, 5});
  for (const char *c : {"A", "B", "C", "D", "E", "F"}) {
    std::ifstream in(data / "minimalloc" / (std::string(c) + ".1048576.csv"));
    if (auto csv = bf::parseMiniMallocCsv(in))
      all.push_back({"minimalloc", std::move(csv->problem), 1048576, 10});
  }
  for (size_t k = 0; k < 5; ++k)
    all.push_back({"network 10^4", bf::networkLikeProblem(10000, kNetworkTuningSeeds[k]), 0, 5});
  for (size_t k = 0; k < 2; ++k)
    all.push_back({"network 10^5", bf::networkLikeProblem(100000, kNetworkTuningSeeds[k]), 0, 5});
  for (bf::PackingFamily f : bf::allPackingFamilies())
    all.push_back({bf::toString(f) + " 10^4",
                   bf::perfectPackingProblem(10000, f, kPerfectTuningSeeds[0]), 0, 2});
  return all;
}
} // namespace

std::string benchAblation(const fs::path &data, bool &ok) {
  std::vector<Problem> all = problems(data);
  std::vector<std::string> families;
  for (const Problem &p : all)
    if (families.empty() || families.back() != p.family)
      families.push_back(p.family);
  // The steps Strategy.cpp runs, by the names PlanOptions::skip takes.
  std::vector<std::string> steps = {"",
                                    "bottom-left",
                                    "greedy:by-size/first-fit",
                                    "greedy:max-live-by-size/first-fit",
                                    "critical-first",
                                    "ejection",
                                    "search"};
  std::printf("\n== Ablation: mean %% over the bound per family (MiniMalloc: %% not fitting), "
              "each step left out in turn ==\n%-34s",
              "left out");
  for (const std::string &f : families)
    std::printf(" %13s", f.c_str());
  std::printf(" %9s\n", "cpu s");
  std::ostringstream json;
  json << "{\"families\": [";
  for (size_t k = 0; k < families.size(); ++k)
    json << (k ? ", " : "") << "\"" << families[k] << "\"";
  json << "], \"rows\": [";
  for (size_t s = 0; s < steps.size(); ++s) {
    std::vector<double> mean(families.size(), 0);
    std::vector<int> count(families.size(), 0);
    double cpu = cpuSeconds();
    for (const Problem &p : all) {
      bp::PlanOptions options;
      // The work the limit gives, with the clock far away: the same
      // results on a loaded machine.
      options.exact.workLimit = uint64_t(p.limit * double(bp::kWorkUnitsPerSecond));
      options.exact.timeBudgetSeconds = 20 * p.limit;
      options.exact.capacity = p.capacity;
      options.exact.stopAtCapacity = p.capacity != 0;
      if (!steps[s].empty())
        options.skip.insert(steps[s]);
      bp::Plan plan = bp::planMemory(p.problem, options);
      if (auto error = bp::checkPlan(p.problem, plan)) {
        std::fprintf(stderr, "INVALID PLAN without %s: %s\n", steps[s].c_str(), error->c_str());
        ok = false;
      }
      size_t f = size_t(std::find(families.begin(), families.end(), p.family) - families.begin());
      mean[f] += score(p, plan);
      ++count[f];
    }
    cpu = cpuSeconds() - cpu;
    std::printf("%-34s", steps[s].empty() ? "(nothing: every step)" : steps[s].c_str());
    json << (s ? "," : "") << "\n    {\"left_out\": \"" << steps[s] << "\", \"mean_percent\": [";
    for (size_t f = 0; f < families.size(); ++f) {
      mean[f] /= std::max(count[f], 1);
      std::printf(" %13.3f", mean[f]);
      json << (f ? ", " : "") << mean[f];
    }
    std::printf(" %9.2f\n", cpu);
    std::fflush(stdout);
    json << "], \"cpu_seconds\": " << cpu << "}";
  }
  json << "\n  ]}";
  return json.str();
}

} // namespace bench_planner
