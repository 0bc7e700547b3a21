//===- UnderLoad.cpp - Does --time-limit hold on a busy machine? ----------===//
#include "UnderLoad.h"

#include "Peers.h"
#include "PerfectBench.h"

#include "bundlefit/planner/formats/PerfectPacking.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace bench_planner {

namespace {

constexpr int kBuffers = 100000;
constexpr double kLimits[] = {1, 5};

// The load: children that spin until killed. The destructor kills and
// reaps them on every way out of the section (an early return, an
// exception); PR_SET_PDEATHSIG kills them when bench_planner itself dies
// (a crash, a kill), so no spinner outlives the benchmark.
class Spinners {
public:
  explicit Spinners(int count) {
    pids.reserve(size_t(count));
    pid_t parent = getpid();
    std::fflush(nullptr); // a child's exit must not write the parent's buffers twice
    for (int k = 0; k < count; ++k) {
      pid_t pid = fork();
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) // the parent died before prctl
          _exit(0);
        for (volatile unsigned long spin = 0;;)
          spin = spin + 1;
      }
      if (pid < 0)
        return; // started() says so; the destructor ends the ones that run
      pids.push_back(pid);
    }
  }
  ~Spinners() {
    for (pid_t pid : pids) {
      kill(pid, SIGKILL);
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
  Spinners(const Spinners &) = delete;
  Spinners &operator=(const Spinners &) = delete;
  bool started(int count) const { return int(pids.size()) == count; }

private:
  std::vector<pid_t> pids;
};

struct Run {
  double limit = 0;
  Process process; ///< Wall and CPU seconds as a separate process sees them.
  uint64_t arena = 0, bound = 0;
  std::string stoppedBy; ///< What ended the planner's work: time, work or "".
  bool overrun = false;  ///< plan-buffers' own time_limit_overrun.
  double abovePercent() const { return 100.0 * (double(arena) / double(bound) - 1); }
};

// One plan-buffers run; false (with why on stderr) when it wrote no report.
bool planBuffers(const std::string &bundlefit, const fs::path &csv, const fs::path &json,
                 Run &run) {
  fs::remove(json);
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", run.limit);
  // exec: the shell does not stay between the clock and bundlefit.
  run.process = runProcess("exec " + bundlefit + " plan-buffers " + csv.string() +
                           " --format csv --time-limit " + limit + " --json " + json.string() +
                           " > /dev/null");
  std::ifstream in(json);
  nlohmann::json report = nlohmann::json::parse(in, nullptr, false);
  if (run.process.status == 0 && !report.is_discarded() && report.contains("problems")) {
    const nlohmann::json &problem = report["problems"][0];
    run.arena = problem["arena"];
    run.bound = problem["lower_bound"];
    run.stoppedBy = problem["stopped_by"];
    run.overrun = report["time_limit_overrun"];
    return true;
  }
  std::fprintf(stderr, "under load: plan-buffers --time-limit %s exited %d without a report\n",
               limit, run.process.status);
  return false;
}

std::string runJson(const Run &run) {
  std::ostringstream json;
  json << "{\"time_limit_seconds\": " << run.limit << ", \"seconds\": " << run.process.wall
       << ", \"cpu_seconds\": " << run.process.cpu
       << ", \"wall_over_limit\": " << run.process.wall / run.limit
       << ", \"cpu_over_limit\": " << run.process.cpu / run.limit
       << ", \"cpu_over_wall\": " << run.process.cpu / run.process.wall
       << ", \"arena\": " << run.arena << ", \"lower_bound\": " << run.bound
       << ", \"above_bound_percent\": " << run.abovePercent() << ", \"stopped_by\": \""
       << run.stoppedBy << "\""
       << ", \"time_limit_overrun\": " << (run.overrun ? "true" : "false") << "}";
  return json.str();
}

} // namespace

std::string benchUnderLoad(const std::string &bundlefit, const fs::path &work, bool &ok) {
  // A perfect packing: the planner never reaches its optimum, so the limit,
  // not the search, ends every run (a network-like problem ends at the
  // bound within about a second of CPU).
  uint64_t seed = kPerfectReportingSeeds.front();
  unsigned cores = std::thread::hardware_concurrency();
  std::printf("\n== --time-limit under load: %d spinning processes beside plan-buffers on %u "
              "cores, %d buffers (uniform perfect packing, seed %llu) ==\n",
              kUnderLoadSpinners, cores, kBuffers, (unsigned long long)seed);
  if (bundlefit.empty()) {
    std::printf("no bundlefit executable (the planner alone): skipped\n");
    return "null";
  }
  fs::create_directories(work);
  fs::path csv = work / "under_load.csv", json = work / "under_load.json";
  namespace bf = bundlefit::planner::formats;
  writeProblemCsv(csv, bf::perfectPackingProblem(kBuffers, bf::PackingFamily::Uniform, seed));
  std::vector<Run> runs;
  {
    Spinners load(kUnderLoadSpinners);
    if (!load.started(kUnderLoadSpinners)) {
      std::fprintf(stderr, "under load: fork failed: %s\n", std::strerror(errno));
      ok = false;
      return "null";
    }
    for (double limit : kLimits) {
      Run run;
      run.limit = limit;
      if (!planBuffers(bundlefit, csv, json, run)) {
        ok = false;
        return "null";
      }
      runs.push_back(run);
    }
  }
  std::printf("%7s %8s %10s %8s %9s %8s %11s %8s %s\n", "limit s", "wall s", "wall/limit", "cpu s",
              "cpu/limit", "cpu/wall", "arena", "above %", "stopped by");
  std::ostringstream out;
  // The load is the spinners against the cores: the JSON names both, and
  // each run's cpu_over_wall is the share of a core plan-buffers got.
  out << "{\"spinners\": " << kUnderLoadSpinners << ", \"cores\": " << cores
      << ", \"buffers\": " << kBuffers << ", \"family\": \"uniform\", \"seed\": " << seed
      << ", \"runs\": [";
  for (size_t k = 0; k < runs.size(); ++k) {
    const Run &run = runs[k];
    std::printf("%7g %8.3f %10.3f %8.3f %9.3f %8.2f %11llu %8.2f %s\n", run.limit, run.process.wall,
                run.process.wall / run.limit, run.process.cpu, run.process.cpu / run.limit,
                run.process.cpu / run.process.wall, (unsigned long long)run.arena,
                run.abovePercent(), run.stoppedBy.c_str());
    out << (k ? "," : "") << "\n    " << runJson(run);
  }
  out << "\n  ]}";
  return out.str();
}

} // namespace bench_planner
