//===- bench/planner/main.cpp - How good and how fast is the planner? -----===//
//
// bench_planner [DATA_DIR] [--out FILE] [--smoke] [--only PART] [--ablation]
//               [--perfect] [--fingerprint]
//   DATA_DIR    holds glow_memory_traces.txt and minimalloc/*.csv
//               (default: the shared benchmark folder chosen at configure time)
//   --out       JSON results (default: bench/results/planner.json, or
//               planner_ablation.json with --ablation, planner_perfect.json
//               with --perfect)
//   --smoke     a few cases only, no peers, no JSON (what ctest runs)
//   --only PART one part, printed, no JSON: glow, minimalloc, scale, goal,
//               peers, under_load
//   --ablation  the ablation (Ablation.cpp) alone
//   --perfect   perfect packings side by side with TFLM and MiniMalloc
//               (PerfectBench.cpp) alone
//   --fingerprint  every plan of a fixed set at fixed work, one line each
//               (Fingerprint.cpp): diff two runs to show a change kept them
//
// Parts: Glow's 71 traces (arena vs lower bound vs Glow's own arena),
// MiniMalloc's hard instances (greedy vs exact against 1 MiB), random
// network-like problems of 1k..10^6 buffers through planMemory, the 10^5
// goal on tuning and reporting seeds, (Peers.cpp) bundlefit's CLI,
// MiniMalloc and TFLM's planner side by side on MiniMalloc's instances, and
// (UnderLoad.cpp) the CLI's --time-limit beside processes that spin.
//
//===----------------------------------------------------------------------===//
#include "Ablation.h"
#include "Fingerprint.h"
#include "Peers.h"
#include "PerfectBench.h"
#include "UnderLoad.h"

#include "bundlefit/planner/Planner.h"
#include "bundlefit/planner/formats/GlowTrace.h"
#include "bundlefit/planner/formats/MiniMallocCsv.h"
#include "bundlefit/planner/formats/NetworkLike.h"

#include "SourceCommit.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace bp = bundlefit::planner;
namespace fs = std::filesystem;
using namespace bench_planner;

namespace {
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Wall-clock seconds. The process CPU seconds of the last call are kept in
// lastCpu: on a shared, loaded machine they are the fairer figure.
double lastCpu = 0;
template <typename F> double timed(F &&f) {
  std::clock_t cpuStart = std::clock();
  auto start = std::chrono::steady_clock::now();
  f();
  lastCpu = double(std::clock() - cpuStart) / CLOCKS_PER_SEC;
  return secondsSince(start);
}

std::string quoted(const std::string &s) { return "\"" + s + "\""; }

bool validOrSay(const bp::Problem &p, const bp::Plan &plan, const std::string &what) {
  if (auto error = bp::checkPlan(p, plan)) {
    std::cerr << "INVALID PLAN for " << what << ": " << *error << "\n";
    return false;
  }
  return true;
}

struct Options {
  fs::path data = BUNDLEFIT_PLANNER_DATA;
  fs::path thirdParty = BUNDLEFIT_THIRD_PARTY;
  fs::path out;
  bool smoke = false, ablation = false, perfect = false, fingerprint = false;
  std::string only;
  bool runs(const char *part) const { return only.empty() || only == part; }
};

// Glow traces: every model through planMemory.
std::string benchGlow(const Options &o, bool &ok) {
  std::ifstream in(o.data / "glow_memory_traces.txt");
  std::string error;
  auto models = bp::formats::parseGlowTraces(in, &error);
  if (!models) {
    std::cerr << "glow traces: " << error << "\n";
    ok = false;
    return "[]";
  }
  if (o.smoke && models->size() > 5)
    models->resize(5);
  std::printf("\n== Glow traces (%zu models) ==\n", models->size());
  std::printf("%-34s %7s %12s %12s %12s %9s %9s %s\n", "model", "buffers", "lower bound",
              "glow MEM", "ours", "wall ms", "cpu ms", "algorithm");
  std::ostringstream json;
  json << "[";
  int atBound = 0, glowAtBound = 0;
  double worst = 0;
  for (size_t k = 0; k < models->size(); ++k) {
    const auto &m = (*models)[k];
    bp::Plan plan;
    double t = timed([&] { plan = bp::planMemory(m.problem); });
    double cpu = lastCpu;
    ok &= validOrSay(m.problem, plan, m.name);
    worst = std::max(worst, t);
    atBound += plan.arenaSize == plan.lowerBound;
    glowAtBound += m.glowArena == plan.lowerBound;
    std::printf("%-34s %7zu %12llu %12llu %12llu %9.2f %9.2f %s\n", m.name.c_str(),
                m.problem.buffers.size(), (unsigned long long)plan.lowerBound,
                (unsigned long long)m.glowArena, (unsigned long long)plan.arenaSize, t * 1e3,
                cpu * 1e3, plan.algorithm.c_str());
    json << (k ? "," : "") << "\n    {\"model\": " << quoted(m.name)
         << ", \"buffers\": " << m.problem.buffers.size()
         << ", \"lower_bound\": " << plan.lowerBound << ", \"glow_arena\": " << m.glowArena
         << ", \"arena\": " << plan.arenaSize << ", \"seconds\": " << t
         << ", \"cpu_seconds\": " << cpu << ", \"algorithm\": " << quoted(plan.algorithm) << "}";
  }
  std::printf("at lower bound: ours %d/%zu, Glow %d/%zu; slowest %.1f ms\n", atBound,
              models->size(), glowAtBound, models->size(), worst * 1e3);
  json << "\n  ]";
  return "{\"models\": " + json.str() + ", \"ours_at_bound\": " + std::to_string(atBound) +
         ", \"glow_at_bound\": " + std::to_string(glowAtBound) +
         ", \"count\": " + std::to_string(models->size()) + "}";
}

// MiniMalloc: fit each instance into its capacity (the number in the name).
std::string benchMiniMalloc(const Options &o, bool &ok) {
  std::vector<std::string> names = {"input.12.csv"};
  if (!o.smoke)
    for (const char *c : {"A", "B", "C", "D", "E", "F"})
      names.push_back(std::string(c) + ".1048576.csv");
  std::printf("\n== MiniMalloc instances ==\n");
  std::printf("%-16s %7s %9s %11s %11s %11s %8s %8s %9s %s\n", "instance", "buffers", "capacity",
              "lower bnd", "greedy", "exact", "wall s", "cpu s", "nodes", "fits");
  std::ostringstream json;
  json << "[";
  int fits = 0;
  for (size_t k = 0; k < names.size(); ++k) {
    std::ifstream in(o.data / "minimalloc" / names[k]);
    std::string error;
    auto csv = bp::formats::parseMiniMallocCsv(in, &error);
    if (!csv) {
      std::cerr << names[k] << ": " << error << "\n";
      ok = false;
      continue;
    }
    uint64_t capacity = std::stoull(names[k].substr(names[k].find('.') + 1));
    bp::Plan greedy, exact;
    double tg = timed([&] { greedy = bp::planBestGreedy(csv->problem); });
    bp::ExactOptions options; // MiniMalloc's question: any plan within the capacity.
    options.capacity = capacity;
    options.stopAtCapacity = true;
    options.timeBudgetSeconds = 30;
    double te = timed([&] { exact = bp::planExact(csv->problem, options); });
    double cpu = lastCpu;
    ok &= validOrSay(csv->problem, greedy, names[k]) && validOrSay(csv->problem, exact, names[k]);
    bool fit = exact.arenaSize <= capacity;
    fits += fit;
    std::printf("%-16s %7zu %9llu %11llu %11llu %11llu %8.3f %8.3f %9llu %s\n", names[k].c_str(),
                csv->problem.buffers.size(), (unsigned long long)capacity,
                (unsigned long long)exact.lowerBound, (unsigned long long)greedy.arenaSize,
                (unsigned long long)exact.arenaSize, te, cpu, (unsigned long long)exact.searchNodes,
                fit ? "yes" : "NO");
    json << (k ? "," : "") << "\n    {\"instance\": " << quoted(names[k])
         << ", \"buffers\": " << csv->problem.buffers.size() << ", \"capacity\": " << capacity
         << ", \"lower_bound\": " << exact.lowerBound << ", \"greedy_arena\": " << greedy.arenaSize
         << ", \"greedy_seconds\": " << tg << ", \"exact_arena\": " << exact.arenaSize
         << ", \"exact_seconds\": " << te << ", \"exact_cpu_seconds\": " << cpu
         << ", \"exact_nodes\": " << exact.searchNodes << ", \"fits\": " << (fit ? "true" : "false")
         << "}";
  }
  std::printf("fit the capacity: %d/%zu\n", fits, names.size());
  json << "\n  ]";
  return "{\"instances\": " + json.str() + ", \"fit\": " + std::to_string(fits) +
         ", \"count\": " + std::to_string(names.size()) + "}";
}

// Through planMemory as bundles use it (Strategy.cpp). The limit is
// generous so that the search can finish on every size; the CPU seconds
// are the figure to compare with the 5 s goal.
constexpr double kScaleTimeLimit = 60;

struct RandomRow {
  double abovePercent = 0; // Arena over the lower bound.
  std::string json;
};

// One random problem planned with the work a time limit allows (the clock
// 20x further: the plan does not depend on the machine's load; the CPU
// seconds are the figure to hold against the limit): prints the table row.
RandomRow planRandom(int buffers, uint32_t seed, double limit, bool &ok) {
  bp::Problem p = bp::formats::networkLikeProblem(buffers, seed);
  bp::Plan plan;
  bp::PlanOptions options;
  options.exact.workLimit = uint64_t(limit * double(bp::kWorkUnitsPerSecond));
  options.exact.timeBudgetSeconds = 20 * limit;
  double t = timed([&] { plan = bp::planMemory(p, options); });
  double cpu = lastCpu;
  bool valid = true;
  double tc = timed([&] { valid = validOrSay(p, plan, "random"); });
  ok &= valid;
  double ratio = double(plan.arenaSize) / double(plan.lowerBound);
  std::printf("%9d %5u %14llu %14llu %8.4f %9.3f %9.3f %9.3f %9zu %s / %s\n", buffers, seed,
              (unsigned long long)plan.lowerBound, (unsigned long long)plan.arenaSize, ratio, t,
              cpu, tc, plan.sections, plan.algorithm.c_str(), bp::proofOf(plan, 0));
  std::ostringstream json;
  json << "{\"buffers\": " << buffers << ", \"seed\": " << seed
       << ", \"lower_bound\": " << plan.lowerBound << ", \"arena\": " << plan.arenaSize
       << ", \"above_bound_percent\": " << 100.0 * (ratio - 1) << ", \"seconds\": " << t
       << ", \"cpu_seconds\": " << cpu << ", \"time_limit_seconds\": " << limit
       << ", \"check_seconds\": " << tc << ", \"sections\": " << plan.sections
       << ", \"proof\": " << quoted(bp::proofOf(plan, 0))
       << ", \"algorithm\": " << quoted(plan.algorithm) << "}";
  return {100.0 * (ratio - 1), json.str()};
}

void printRandomHeader() {
  std::printf("%9s %5s %14s %14s %8s %9s %9s %9s %9s %s\n", "buffers", "seed", "lower bound",
              "arena", "ratio", "wall s", "cpu s", "check s", "sections", "algorithm / proof");
}

std::string benchScale(const Options &o, bool &ok) {
  std::vector<int> sizes =
      o.smoke ? std::vector<int>{1000} : std::vector<int>{1000, 10000, 100000, 1000000};
  std::printf("\n== Random problems through planMemory (time limit %.0f s) ==\n", kScaleTimeLimit);
  printRandomHeader();
  std::ostringstream json;
  json << "[";
  for (size_t k = 0; k < sizes.size(); ++k)
    json << (k ? "," : "") << "\n    "
         << planRandom(sizes[k], 42 + uint32_t(k), kScaleTimeLimit, ok).json;
  json << "\n  ]";
  return json.str();
}

// Issue 19's goal as asked: 100,000 random buffers within 0.5% of the bound
// in under 5 s (benchScale's generous limit shows one seed where the search
// finishes). On the tuning seeds (PerfectBench.h: the planner's constants
// were chosen on them) and on the reporting seeds, which the README quotes.
constexpr double kGoalTimeLimit = 5;
constexpr double kGoalPercent = 0.5;

std::string goalOnSeeds(const char *set, const std::vector<uint32_t> &seeds, bool &ok) {
  std::printf("-- %s seeds --\n", set);
  printRandomHeader();
  std::ostringstream json;
  json << "{\"rows\": [";
  int met = 0, count = 0;
  for (uint32_t seed : seeds) {
    RandomRow row = planRandom(100000, seed, kGoalTimeLimit, ok);
    json << (count++ ? "," : "") << "\n      " << row.json;
    met += row.abovePercent <= kGoalPercent;
  }
  std::printf("within %.1f%% of the bound: %d of %d %s seeds\n", kGoalPercent, met, count, set);
  json << "\n    ], \"within_goal\": " << met << ", \"count\": " << count << "}";
  return json.str();
}

std::string benchGoal(bool &ok) {
  std::printf("\n== 100,000 random buffers, time limit %.0f s (goal: within %.1f%% of the bound) "
              "==\n",
              kGoalTimeLimit, kGoalPercent);
  std::string tuning = goalOnSeeds("tuning", kNetworkTuningSeeds, ok);
  std::string reporting = goalOnSeeds("reporting", kNetworkReportingSeeds, ok);
  return "{\"time_limit_seconds\": " + std::to_string(kGoalTimeLimit) +
         ", \"goal_above_bound_percent\": " + std::to_string(kGoalPercent) +
         ", \"tuning\": " + tuning + ", \"reporting\": " + reporting + "}";
}

std::string benchPerfectPart(const Options &o, bool &ok) {
  PerfectOptions perfect;
  perfect.peers.thirdParty = o.thirdParty;
  perfect.peers.work = BUNDLEFIT_PEERS_WORK;
  perfect.smoke = o.smoke;
  perfect.timeLimit = o.smoke ? 0.5 : 5;
  return benchPerfect(perfect, ok);
}

std::string benchSideBySide(const Options &o, bool &ok) {
  bench_planner::PeerOptions peers;
  peers.data = o.data;
  peers.thirdParty = o.thirdParty;
  peers.work = BUNDLEFIT_PEERS_WORK;
  peers.bundlefit = BUNDLEFIT_EXE;
  peers.instances = {"input.12.csv"};
  for (const char *c : {"A", "B", "C", "D", "E", "F"})
    peers.instances.push_back(std::string(c) + ".1048576.csv");
  return bench_planner::benchPeers(peers, ok);
}

bool parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--smoke")
      o.smoke = true;
    else if (a == "--ablation")
      o.ablation = true;
    else if (a == "--perfect")
      o.perfect = true;
    else if (a == "--fingerprint")
      o.fingerprint = true;
    else if (a == "--out" && i + 1 < argc)
      o.out = argv[++i];
    else if (a == "--only" && i + 1 < argc)
      o.only = argv[++i];
    else if (a == "--help" || a == "-h" || a[0] == '-')
      return false;
    else
      o.data = a;
  }
  return true;
}
} // namespace

namespace {
// Writes the results beside their final name first: never half a file.
void writeResults(const fs::path &out, const std::string &body) {
  fs::create_directories(out.parent_path());
  fs::path tmp = out;
  tmp += ".tmp";
  {
    std::ofstream json(tmp);
    json << "{\n  \"commit\": " << quoted(bundlefit::bench::sourceCommit()) << "," << body
         << "\n}\n";
  }
  fs::rename(tmp, out);
  std::printf("\nwrote %s\n", out.string().c_str());
}
} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseArgs(argc, argv, o)) {
    std::cerr << "usage: bench_planner [DATA_DIR] [--out FILE] [--smoke] [--only PART] "
                 "[--ablation] [--perfect] [--fingerprint]\n";
    return 2;
  }
  if (o.fingerprint)
    return bench_planner::printFingerprint(o.data) ? 0 : 1;
  fs::path results = BUNDLEFIT_BENCH_RESULTS;
  if (o.ablation) {
    bool ok = true;
    std::string ablation = benchAblation(o.data, ok);
    writeResults(o.out.empty() ? results / "planner_ablation.json" : o.out,
                 "\n  \"ablation\": " + ablation);
    return ok ? 0 : 1;
  }
  if (o.perfect) {
    bool ok = true;
    std::string perfect = benchPerfectPart(o, ok);
    writeResults(o.out.empty() ? results / "planner_perfect.json" : o.out,
                 "\n  \"perfect\": " + perfect);
    return ok ? 0 : 1;
  }
  // The Glow traces and MiniMalloc instances live beside the repository
  // (../shared, or BUNDLEFIT_PLANNER_DATA at configure time). Without them
  // the smoke run still checks the random problems and says it skipped the
  // rest (exit 77: ctest's SKIP_RETURN_CODE), instead of failing on a file.
  if (o.smoke && !fs::is_directory(o.data)) {
    std::printf("no planner benchmark data at %s: Glow traces and MiniMalloc skipped\n",
                o.data.string().c_str());
    bool ok = true;
    benchScale(o, ok);
    benchPerfectPart(o, ok);
    return ok ? 77 : 1;
  }
  bool ok = true;
  std::string glow, minimalloc, scale, goal, peers, underLoad;
  if (o.runs("glow"))
    glow = benchGlow(o, ok);
  if (o.runs("minimalloc"))
    minimalloc = benchMiniMalloc(o, ok);
  if (o.runs("scale"))
    scale = benchScale(o, ok);
  if (!o.smoke && o.runs("goal"))
    goal = benchGoal(ok);
  if (o.smoke)
    benchPerfectPart(o, ok);
  if (!o.smoke && o.runs("peers"))
    peers = benchSideBySide(o, ok);
  if (!o.smoke && o.runs("under_load"))
    underLoad = benchUnderLoad(BUNDLEFIT_EXE, BUNDLEFIT_PEERS_WORK, ok);
  if (!o.smoke && o.only.empty())
    writeResults(o.out.empty() ? results / "planner.json" : o.out,
                 "\n  \"glow\": " + glow + ",\n  \"minimalloc\": " + minimalloc +
                     ",\n  \"scale\": " + scale + ",\n  \"goal_100k\": " + goal +
                     ",\n  \"side_by_side\": " + (peers.empty() ? "null" : peers) +
                     ",\n  \"under_load\": " + underLoad);
  return ok ? 0 : 1;
}
