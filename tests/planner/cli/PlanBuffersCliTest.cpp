//===- PlanBuffersCliTest.cpp - bundlefit plan-buffers end to end ---------===//
//
// What a user sees: a capacity that a search can meet is met, the JSON says
// how sure the answer is (and the exit code whether "does not fit" is
// proven), --time-limit bounds the whole run, and a hostile problem file is
// a one-line error (exit 4) naming the file, line and field, never a crash.
//
//===----------------------------------------------------------------------===//
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "CliTestSupport.h"

#include "bundlefit/planner/formats/NetworkLike.h"
#include "bundlefit/planner/formats/PerfectPacking.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/resource.h>

using bundlefit::test::CommandResult;
using bundlefit::test::runBundlefit;

namespace {
std::string writeFile(const std::string &name, const std::string &text) {
  std::string path = std::string(BUNDLEFIT_TEST_TMP) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string writeProblem(const std::string &name, const bundlefit::planner::Problem &p) {
  std::string path = std::string(BUNDLEFIT_TEST_TMP) + "/" + name;
  std::ofstream out(path);
  out << "id,lower,upper,size\n";
  for (const bundlefit::planner::Buffer &b : p.buffers)
    out << b.id << ',' << b.first << ',' << int64_t(b.last) + 1 << ',' << b.size << '\n';
  return path;
}

// CPU seconds of the children this process has waited for.
double childCpu() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Exit 4, one line, naming the file and every given word.
void expectInputError(const std::string &arguments, const std::string &path,
                      std::initializer_list<const char *> words) {
  CommandResult r = runBundlefit(arguments);
  CAPTURE(r.output);
  CHECK(r.exitCode == 4);
  CHECK(r.output.find(path) != std::string::npos);
  for (const char *word : words)
    CHECK(r.output.find(word) != std::string::npos);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
}
} // namespace

TEST_CASE("plan-buffers: hostile files are one-line errors naming file, line and field") {
  // A lifetime past 2^31 used to be truncated into a heap overflow.
  std::string late = writeFile("late.csv", "id,lower,upper,size\na,0,2,4\nb,0,2147483648,4\n");
  expectInputError("plan-buffers " + late + " --format csv", late, {"line 3", "'upper'"});
  std::string negative = writeFile("negative.csv", "id,lower,upper,size\na,0,2,-100\n");
  expectInputError("plan-buffers " + negative + " --format csv", negative, {"line 2", "'size'"});
  // ALLOC 1 -100 used to plan an arena of 18,446,744,073,709,551,552 bytes.
  std::string glow = writeFile("negative.txt", "MODEL m\nALIGN 64\nALLOC 1 -100\nFREE 1\n");
  expectInputError("plan-buffers " + glow + " --format glow", glow, {"line 3", "ALLOC size"});
  // Two 2^63-1 buffers used to give a lower bound of 62.
  std::string huge = writeFile("huge.csv", "id,lower,upper,size\na,0,2,9223372036854775807\n"
                                           "b,0,2,9223372036854775807\n");
  expectInputError("plan-buffers " + huge + " --format csv", huge, {"line 2", "'size'"});
  std::string sum = writeFile("sum.csv", "id,lower,upper,size\na,0,2,3458764513820540928\n"
                                         "b,0,2,3458764513820540928\n");
  expectInputError("plan-buffers " + sum + " --format csv", sum, {"line 3", "2^62"});
}

TEST_CASE("plan-buffers: a negative or oversized capacity is a usage error") {
  std::string small = writeFile("ok.csv", "id,lower,upper,size\na,0,2,4\n");
  for (const char *capacity : {"-1", "18446744073709551615", "1e6", "12abc"}) {
    CommandResult r =
        runBundlefit("plan-buffers " + small + " --format csv --capacity " + capacity);
    CAPTURE(r.output);
    CHECK(r.exitCode == 2);
    CHECK(r.output.find("--capacity") != std::string::npos);
  }
  CommandResult nodes = runBundlefit("plan-buffers " + small + " --format csv --node-limit -5");
  CHECK(nodes.exitCode == 2);
  CHECK(nodes.output.find("--node-limit") != std::string::npos);
}

TEST_CASE("plan-buffers: the limits are options, and the JSON says how sure it is") {
  CommandResult help = runBundlefit("plan-buffers --help");
  CHECK(help.output.find("--node-limit") != std::string::npos);
  CHECK(help.output.find("--stop-when-fits") != std::string::npos);
  // Five buffers whose bound is 12 (b0 or b1 live beside b2 and b4, 4 B each): only a
  // search fits 12; 11 is impossible.
  std::string small =
      writeFile("small.csv", "id,lower,upper,size\n"
                             "b0,0,3,4\nb1,3,9,4\nb2,0,9,4\nb3,9,21,4\nb4,0,21,4\n");
  CommandResult fits = runBundlefit("plan-buffers " + small + " --format csv --capacity 12 --json");
  REQUIRE_MESSAGE(fits.exitCode == 0, fits.output);
  nlohmann::json report = nlohmann::json::parse(fits.output);
  CHECK(report["node_limit"] == 0);
  CHECK(report["time_limit_seconds"] == 5.0);
  CHECK(report["problems"][0]["arena"] == 12);
  CHECK(report["problems"][0]["proof"] == "proven optimal");
  CommandResult tooSmall =
      runBundlefit("plan-buffers " + small + " --format csv --capacity 11 --json");
  CHECK(tooSmall.exitCode == 3); // Under the bound: proven at once.
  CHECK(nlohmann::json::parse(tooSmall.output)["problems"][0]["proof"] == "proven not to fit");
}

TEST_CASE("plan-buffers: --time-limit must be a finite number of seconds") {
  std::string small = writeFile("ok2.csv", "id,lower,upper,size\na,0,2,4\n");
  for (const char *limit : {"nan", "inf", "-1", "1e99", "5s"}) {
    CommandResult r = runBundlefit("plan-buffers " + small + " --format csv --time-limit " + limit);
    CAPTURE(limit);
    CAPTURE(r.output);
    CHECK(r.exitCode == 2);
    CHECK(r.output.find("--time-limit") != std::string::npos);
  }
  CHECK(runBundlefit("plan-buffers " + small + " --format csv --time-limit 0.5").exitCode == 0);
}

TEST_CASE("plan-buffers: proven 'does not fit' is exit 3 at once, unproven is exit 8") {
  // 2,000 buffers cut from a full strip: the bound, 2^24, is the optimum,
  // but no search finds that packing in a second.
  namespace formats = bundlefit::planner::formats;
  std::string strip = writeProblem(
      "strip.csv", formats::perfectPackingProblem(2000, formats::PackingFamily::Uniform, 3));
  // Under the bound: no plan can fit, and no work is needed to say so.
  CommandResult below = runBundlefit("plan-buffers " + strip +
                                     " --format csv --capacity 16777215 --time-limit 600 --json");
  CHECK(below.exitCode == 3);
  nlohmann::json report = nlohmann::json::parse(below.output);
  CHECK(report["problems"][0]["proof"] == "proven not to fit");
  CHECK(report["problems"][0]["work_units"] == 0);
  CHECK(report["capacity"]["proven"] == true);
  CHECK(report["seconds"].get<double>() < 60);
  // At the bound: a fit exists, none is found within the limit, nothing
  // is proved. Exit 8, not 3, and the JSON says where the work stopped.
  CommandResult unproven = runBundlefit(
      "plan-buffers " + strip + " --format csv --capacity 16777216 --time-limit 0.5 --json");
  CHECK(unproven.exitCode == 8);
  report = nlohmann::json::parse(unproven.output);
  CHECK(report["problems"][0]["proof"] == "best effort");
  CHECK(report["capacity"]["proven"] == false);
  CHECK(report["problems"][0]["limit_reached"] == true);
  CHECK(report["problems"][0]["stopped_in"].get<std::string>() != "");
  CommandResult text =
      runBundlefit("plan-buffers " + strip + " --format csv --capacity 16777216 --time-limit 0.5");
  CHECK(text.exitCode == 8);
  CHECK(text.output.find("not proven impossible") != std::string::npos);
}

TEST_CASE("plan-buffers: --time-limit bounds the whole run at 10^6 buffers") {
  // Issue 36: 97.6 s of CPU at the default 5 s limit; the first greedy pass
  // grew as n^2. Reading, the first placement (O(n log n)), the search and
  // the check all fit in the limit now.
  std::string big =
      writeProblem("million.csv", bundlefit::planner::formats::networkLikeProblem(1000000, 45));
  double cpu = childCpu();
  auto start = std::chrono::steady_clock::now();
  CommandResult r = runBundlefit("plan-buffers " + big + " --format csv --json");
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cpu = childCpu() - cpu;
  REQUIRE_MESSAGE(r.exitCode == 0, r.output.substr(0, 500));
  nlohmann::json report = nlohmann::json::parse(r.output);
  CHECK(report["time_limit_seconds"] == 5.0);
  MESSAGE("10^6 buffers: " << cpu << " s CPU, " << wall << " s wall, arena "
                           << report["problems"][0]["arena"] << ", bound "
                           << report["problems"][0]["lower_bound"]);
  CHECK(cpu <= 5.5);
  // The run's own count of its CPU time (the clock its shares are given in)
  // agrees with what the parent measured.
  CHECK(report["cpu_seconds"].get<double>() <= cpu + 0.05);
  CHECK(report["problems"][0]["cpu_seconds"].get<double>() <= report["cpu_seconds"].get<double>());
  // The wall clock too (issue 37: the planner stops on either clock), where
  // the machine gave this run most of a core: what cannot stop after the
  // deadline (the check, the output) is stretched by load, which no limit
  // holds against. The Budget's wall deadline is tested with an injected
  // clock (ScaleTest.cpp).
  if (cpu >= wall * 0.9)
    CHECK(wall <= 5.5);
  else
    MESSAGE("machine overloaded (" << cpu / wall << " of a core): wall time not checked");
}

TEST_CASE("plan-buffers: a small --time-limit holds at 10^6 buffers, or says it cannot") {
  // The first placement stops at the deadline and shelves what it has not
  // placed (valid, far from tight); before, it always ran to the end: 2.3 s
  // of CPU at --time-limit 0.01. Loading, reading and the check cannot
  // stop, so 0.05 s is a limit that cannot hold, which the run must say,
  // and 1 s one that holds wherever the machine's floor is under it.
  namespace bf = bundlefit::planner::formats;
  std::string big = writeProblem("million-uniform.csv",
                                 bf::perfectPackingProblem(1000000, bf::PackingFamily::Uniform, 7));
  std::string log = std::string(BUNDLEFIT_TEST_TMP) + "/million-uniform.err";
  // `cpu`: the child's CPU seconds, which load does not stretch (the floor
  // is work that cannot stop); `loaded`: the machine gave the run less
  // than 0.9 of a core, so what cannot stop was stretched past the wall
  // deadline (which ScaleTest.cpp tests with an injected clock).
  bool loaded = false;
  auto run = [&](const char *limit, double &cpu) {
    cpu = childCpu();
    auto start = std::chrono::steady_clock::now();
    CommandResult r = bundlefit::test::runProgram(
        BUNDLEFIT_EXE, "plan-buffers " + big + " --format csv --json --time-limit " + limit, log);
    cpu = childCpu() - cpu;
    loaded =
        cpu < 0.9 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE_MESSAGE(r.exitCode == 0, r.output.substr(0, 500));
    std::ifstream in(log);
    std::string errors((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return std::make_pair(nlohmann::json::parse(r.output), errors);
  };
  // The run at 0.05 s measures the floor on this machine: what cannot stop
  // (loading, reading, shelving what the first placement did not reach, the
  // check). 0.74-0.82 s on a shared 2-core machine (1.2-1.3 s there before
  // the check and the reader were made faster); a placement that ignores the
  // deadline takes 2.5 s there, so 2 s still catches it.
  double floorCpu = 0;
  auto [over, overErrors] = run("0.05", floorCpu);
  MESSAGE("10^6 buffers at --time-limit 0.05: " << floorCpu << " s CPU: " << overErrors);
  CHECK(floorCpu <= 2.0);
  CHECK(over["time_limit_overrun"] == true);
  CHECK(over["problems"][0]["stopped_in"] == "first placement");
  CHECK(over["problems"][0]["algorithm"] == "bottom-left+shelves");
  CHECK(std::count(overErrors.begin(), overErrors.end(), '\n') == 1);
  CHECK(overErrors.find("more than --time-limit 0.05") != std::string::npos);
  CHECK(overErrors.find(big) != std::string::npos);

  double cpu = 0;
  auto [held, heldErrors] = run("1", cpu);
  MESSAGE("10^6 buffers at --time-limit 1: " << cpu << " s CPU, "
                                             << held["problems"][0]["algorithm"] << ", stopped in "
                                             << held["problems"][0]["stopped_in"]);
  if (floorCpu <= 0.9) { // 1 s is above the floor: the limit must hold
    CHECK(cpu <= 1.1);
    if (!loaded) { // (time_limit_overrun counts the wall clock too)
      CHECK(held["time_limit_overrun"] == false);
      CHECK(heldErrors.empty());
    }
  } else { // it may not hold here: the run stops at the floor and says when it overran
    MESSAGE("the floor is near or above 1 s on this machine: checked the run stops at it");
    CHECK(cpu <= floorCpu * 1.15 + 0.05);
    if (held["time_limit_overrun"] == true) {
      CHECK(heldErrors.find("more than --time-limit 1 ") != std::string::npos);
    } else {
      CHECK(cpu <= 1.15); // within its 1.1x, as the run measured itself
      CHECK(heldErrors.empty());
    }
  }
}

TEST_CASE("plan-buffers uses its time limit, not only the work it counts") {
  // A work unit costs 1.6-2.6 ns of CPU by family and size where 2 is
  // assumed: on this power-of-two packing counted work alone ended at 0.80x
  // the limit. The clock ends it now (ExactOptions::clockEnds).
  namespace bf = bundlefit::planner::formats;
  std::string path = writeProblem(
      "pow2-10k.csv", bf::perfectPackingProblem(10000, bf::PackingFamily::PowerOfTwo, 7));
  double cpu = childCpu();
  auto start = std::chrono::steady_clock::now();
  CommandResult r = runBundlefit("plan-buffers " + path + " --format csv --json --time-limit 0.6");
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cpu = childCpu() - cpu;
  REQUIRE_MESSAGE(r.exitCode == 0, r.output.substr(0, 500));
  nlohmann::json report = nlohmann::json::parse(r.output);
  MESSAGE("power-of-two 10^4 at --time-limit 0.6: " << cpu << " s CPU, " << wall
                                                    << " s wall, stopped by "
                                                    << report["problems"][0]["stopped_by"]);
  // Used up to the limit on the clock that ends it (wall time under load),
  // never past it in CPU time; past it in wall time only where load
  // stretched what cannot stop, so that is checked where the run had most
  // of a core.
  CHECK(std::max(cpu, wall) >= 0.9 * 0.6);
  CHECK(cpu <= 1.1 * 0.6);
  if (cpu >= wall * 0.9)
    CHECK(wall <= 1.1 * 0.6);
}

// Run as its own ctest (planner_cli_minimalloc_D): exit 77 = skipped when
// the benchmark data is not beside the repository.
TEST_CASE("plan-buffers: MiniMalloc's D fits its capacity through the CLI" * doctest::skip()) {
  std::filesystem::path d =
      std::filesystem::path(BUNDLEFIT_PLANNER_DATA) / "minimalloc" / "D.1048576.csv";
  if (!std::filesystem::exists(d)) {
    MESSAGE("no benchmark data at " << d);
    std::exit(77);
  }
  // The greedy plan needs 1,291,264 bytes; before the capacity drove the
  // search this ended there with exit 3. (Without --stop-when-fits the
  // command goes on lowering the arena for the rest of the 30 s.)
  CommandResult r = runBundlefit("plan-buffers " + d.string() +
                                 " --format csv --capacity 1048576 --time-limit 30 "
                                 "--stop-when-fits --json");
  REQUIRE_MESSAGE(r.exitCode == 0, r.output);
  nlohmann::json report = nlohmann::json::parse(r.output);
  CHECK(report["problems"][0]["arena"] <= 1048576); // the --capacity asked for
  CHECK(report["capacity"]["fits"] == true);
}

int main(int argc, char **argv) {
  doctest::Context context(argc, argv);
  return context.run();
}
