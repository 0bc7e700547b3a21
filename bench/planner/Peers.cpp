//===- Peers.cpp - bundlefit, MiniMalloc and TFLM on the same files -------===//
#include "Peers.h"

#include "bundlefit/planner/Planner.h"
#include "bundlefit/planner/formats/MiniMallocCsv.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bp = bundlefit::planner;
namespace fs = std::filesystem;

namespace bench_planner {

namespace {
std::string quoted(const std::string &s) { return "\"" + s + "\""; }

struct Run {
  bool ran = false;   ///< The tool exists and was run.
  bool fits = false;  ///< It wrote a valid plan within the capacity.
  uint64_t peak = 0;  ///< Arena of the plan it wrote (0: none).
  double seconds = 0; ///< Wall clock of the whole process.
  std::string note;   ///< Why it has no plan, or bundlefit's proof.
};

int runTimed(const std::string &command, double &seconds) {
  Process p = runProcess(command);
  seconds = p.wall;
  return p.status;
}
} // namespace

Process runProcess(const std::string &shellCommand) {
  Process result;
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", shellCommand.c_str(), static_cast<char *>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid > 0 && wait4(pid, &status, 0, &usage) == pid) {
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.cpu = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                 1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  }
  result.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

void writeProblemCsv(const fs::path &path, const bp::Problem &problem) {
  std::ofstream out(path);
  bp::formats::writeMiniMallocProblemCsv(out, problem);
}

bool readPlan(const fs::path &solution, const bp::Problem &problem, uint64_t &peak,
              std::string &why) {
  std::ifstream in(solution);
  std::string error;
  auto csv = bp::formats::parseMiniMallocCsv(in, &error);
  if (!csv || csv->offsets.size() != problem.buffers.size()) {
    why = csv ? "wrong number of rows" : "no solution file";
    return false;
  }
  bp::Plan plan;
  plan.offsets = csv->offsets;
  for (size_t i = 0; i < problem.buffers.size(); ++i)
    plan.arenaSize = std::max(plan.arenaSize, plan.offsets[i] + problem.buffers[i].size);
  if (auto violation = bp::checkPlan(problem, plan)) {
    why = "INVALID: " + *violation;
    return false;
  }
  peak = plan.arenaSize;
  return true;
}

fs::path buildPeer(const PeerOptions &o, const std::string &script, const std::string &name,
                   const std::string &binary) {
  fs::path out = o.work / name, exe = out / binary;
  if (fs::exists(exe))
    return exe;
  if (!fs::exists(o.thirdParty / script))
    return {};
  std::printf("building %s with %s ...\n", name.c_str(), script.c_str());
  std::fflush(stdout);
  double seconds = 0;
  std::string command = "sh " + (o.thirdParty / script).string() + " " + out.string() + " > " +
                        (o.work / (name + "-build.log")).string() + " 2>&1";
  if (runTimed(command, seconds) != 0 || !fs::exists(exe)) {
    std::printf("  %s did not build; see %s\n", name.c_str(),
                (o.work / (name + "-build.log")).string().c_str());
    return {};
  }
  return exe;
}

namespace {
std::string runJson(const Run &r) {
  std::ostringstream json;
  json << "{\"ran\": " << (r.ran ? "true" : "false")
       << ", \"fits\": " << (r.fits ? "true" : "false") << ", \"peak\": " << r.peak
       << ", \"seconds\": " << r.seconds << ", \"note\": " << quoted(r.note) << "}";
  return json.str();
}

std::string cell(const Run &r) {
  if (!r.ran)
    return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%s %llu %.2fs", r.fits ? "yes" : "NO",
                (unsigned long long)r.peak, r.seconds);
  return text;
}
} // namespace

std::string benchPeers(const PeerOptions &o, bool &ok) {
  fs::create_directories(o.work);
  fs::path minimalloc = buildPeer(o, "build-minimalloc.sh", "minimalloc", "minimalloc");
  fs::path tflm = buildPeer(o, "build-tflm-planner.sh", "tflm", "tflm_plan");
  if (minimalloc.empty() && tflm.empty()) {
    std::printf("\nno peers in %s: side-by-side skipped\n", o.thirdParty.string().c_str());
    return "";
  }
  std::printf(
      "\n== Side by side: fits / peak / wall seconds per process (capacity in the name) ==\n");
  std::printf("%-16s %9s %9s | %-26s | %-26s | %-24s | %s\n", "instance", "capacity", "bound",
              o.bundlefit.empty() ? "bundlefit (library)" : "bundlefit plan-buffers", "MiniMalloc",
              "TFLM greedy", "MiniMalloc s / ours");
  std::ostringstream json;
  json << "{\"bundlefit\": " << quoted(o.bundlefit.empty() ? "library" : "cli")
       << ", \"instances\": [";
  double oursTotal = 0, theirsTotal = 0;
  int oursFit = 0, theirsFit = 0;
  for (size_t k = 0; k < o.instances.size(); ++k) {
    const std::string &name = o.instances[k];
    fs::path input = o.data / "minimalloc" / name;
    std::ifstream in(input);
    auto csv = bp::formats::parseMiniMallocCsv(in);
    if (!csv) {
      std::printf("%s: unreadable\n", name.c_str());
      ok = false;
      continue;
    }
    uint64_t capacity = std::stoull(name.substr(name.find('.') + 1));
    std::string limit = "timeout " + std::to_string(int(o.timeLimit)) + " ";
    Run ours, theirs, greedy;
    fs::path oursOut = o.work / (name + ".bundlefit.csv");
    fs::remove(oursOut);
    ours.ran = true;
    if (!o.bundlefit.empty()) {
      int status =
          runTimed(limit + o.bundlefit + " plan-buffers " + input.string() +
                       " --format csv --stop-when-fits --capacity " + std::to_string(capacity) +
                       " --time-limit " + std::to_string(int(o.timeLimit)) + " -o " +
                       oursOut.string() + " > /dev/null 2>&1",
                   ours.seconds);
      ours.note = "exit " + std::to_string(status);
    } else {
      bp::PlanOptions options;
      options.exact.capacity = capacity;
      options.exact.stopAtCapacity = true;
      options.exact.timeBudgetSeconds = o.timeLimit;
      auto start = std::chrono::steady_clock::now();
      bp::Plan plan = bp::planMemory(csv->problem, options);
      ours.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::ofstream out(oursOut);
      bp::formats::writeMiniMallocCsv(out, csv->problem, plan, csv->names);
      ours.note = bp::proofOf(plan, capacity);
    }
    std::string why;
    bool valid = readPlan(oursOut, csv->problem, ours.peak, why);
    ok &= valid || why.rfind("INVALID", 0) != 0;
    ours.fits = valid && ours.peak <= capacity;
    if (!valid)
      ours.note += "; " + why;
    if (!minimalloc.empty()) {
      fs::path out = o.work / (name + ".minimalloc.csv");
      fs::remove(out);
      theirs.ran = true;
      int status = runTimed(
          limit + minimalloc.string() + " --capacity=" + std::to_string(capacity) +
              " --input=" + input.string() + " --output=" + out.string() + " > /dev/null 2>&1",
          theirs.seconds);
      theirs.note = "exit " + std::to_string(status);
      bool theirsValid = readPlan(out, csv->problem, theirs.peak, why);
      theirs.fits = theirsValid && theirs.peak <= capacity;
      if (!theirsValid)
        theirs.note += "; " + why;
    }
    if (!tflm.empty()) {
      fs::path out = o.work / (name + ".tflm.csv");
      fs::remove(out);
      greedy.ran = true;
      runTimed(limit + tflm.string() + " " + input.string() + " " + out.string() +
                   " > /dev/null 2>&1",
               greedy.seconds);
      bool greedyValid = readPlan(out, csv->problem, greedy.peak, why);
      greedy.fits = greedyValid && greedy.peak <= capacity;
      if (!greedyValid)
        greedy.note = why;
    }
    oursTotal += ours.seconds;
    theirsTotal += theirs.seconds;
    oursFit += ours.fits;
    theirsFit += theirs.fits;
    double ratio = ours.seconds > 0 ? theirs.seconds / ours.seconds : 0;
    std::printf("%-16s %9llu %9llu | %-26s | %-26s | %-24s | %.1fx\n", name.c_str(),
                (unsigned long long)capacity,
                (unsigned long long)bp::computeLowerBound(csv->problem), cell(ours).c_str(),
                cell(theirs).c_str(), cell(greedy).c_str(), ratio);
    json << (k ? "," : "") << "\n    {\"instance\": " << quoted(name)
         << ", \"capacity\": " << capacity
         << ", \"lower_bound\": " << bp::computeLowerBound(csv->problem)
         << ", \"bundlefit\": " << runJson(ours) << ", \"minimalloc\": " << runJson(theirs)
         << ", \"tflm\": " << runJson(greedy) << ", \"minimalloc_over_bundlefit_time\": " << ratio
         << "}";
  }
  const double totalRatio = oursTotal > 0 ? theirsTotal / oursTotal : 0.0;
  std::printf("fit: bundlefit %d, MiniMalloc %d of %zu; total seconds: bundlefit %.2f, MiniMalloc "
              "%.2f (%.1fx)\n",
              oursFit, theirsFit, o.instances.size(), oursTotal, theirsTotal, totalRatio);
  // The total ratio too: the README quotes it, and each quoted figure is a number of the file.
  json << "\n  ], \"bundlefit_fit\": " << oursFit << ", \"minimalloc_fit\": " << theirsFit
       << ", \"bundlefit_seconds\": " << oursTotal << ", \"minimalloc_seconds\": " << theirsTotal
       << ", \"minimalloc_over_bundlefit_seconds\": " << totalRatio << "}";
  return json.str();
}

} // namespace bench_planner
