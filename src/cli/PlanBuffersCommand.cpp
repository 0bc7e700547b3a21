//===- PlanBuffersCommand.cpp - bundlefit plan-buffers FILE ----------------===//
//
// Solves an allocation problem from a file (Glow's traces or MiniMalloc's
// CSV) with the same planner bundles use, so the planner can be compared
// with other tools on their own data. --time-limit bounds the whole run in
// CPU and wall time: reading the file, planning, checking the plan and
// writing it.
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "OptionChecks.h"
#include "ReportSupport.h"
#include "RunClock.h"

#include "bundlefit/planner/CheckedArithmetic.h"
#include "bundlefit/planner/Planner.h"
#include "bundlefit/planner/formats/GlowTrace.h"
#include "bundlefit/planner/formats/MiniMallocCsv.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace bundlefit {

namespace {

struct PlanBuffersOptions {
  std::string path;
  std::string format;
  std::string model;
  std::string capacityText;  ///< --capacity as typed; checked by parseByteOption.
  std::string nodeLimitText; ///< --node-limit as typed.
  uint64_t capacity = 0;
  uint64_t nodeLimit = 0;
  bool stopWhenFits = false;
  double timeLimit = 5.0;
  std::string outputPath;
  JsonReportOption json;
  HtmlReportOption html;
};

struct NamedProblem {
  std::string name;
  planner::Problem problem;
  std::vector<std::string> ids;
};

std::vector<NamedProblem> readProblems(const PlanBuffersOptions &options) {
  checkInputFile(options.path, "allocation problem");
  std::ifstream in(options.path);
  if (!in)
    throw Error(ExitCode::BadInputFile, options.path + ": cannot open file");
  std::string error;
  std::vector<NamedProblem> problems;
  if (options.format == "csv") {
    auto csv = planner::formats::parseMiniMallocCsv(in, &error);
    if (!csv)
      throw Error(ExitCode::BadInputFile, options.path + ": " + error);
    problems.push_back({options.path, std::move(csv->problem), std::move(csv->names)});
    return problems;
  }
  auto traces = planner::formats::parseGlowTraces(in, &error);
  if (!traces)
    throw Error(ExitCode::BadInputFile, options.path + ": " + error);
  for (auto &trace : *traces) {
    if (!options.model.empty() && trace.name != options.model)
      continue;
    std::vector<std::string> ids;
    for (const planner::Buffer &buffer : trace.problem.buffers)
      ids.push_back(std::to_string(buffer.id));
    problems.push_back({trace.name, trace.problem, ids});
  }
  if (problems.empty())
    throw Error(ExitCode::Usage,
                options.path + ": no model named '" + options.model + "' (option --model)");
  return problems;
}

/// "the time limit" for Plan::stoppedBy "time" or "work" (the work the
/// limit allows), "the node limit" for "nodes".
std::string limitName(const std::string &stoppedBy) {
  if (stoppedBy == "nodes")
    return "node limit (--node-limit)";
  if (stoppedBy == "work")
    return "time limit (its work, counted)";
  return "time limit";
}

/// A count from an option: digits only (CLI11 would wrap "-1" to 2^64 - 1),
/// at most the planner's 2^62.
uint64_t parseCountOption(const std::string &text, const char *option) {
  uint64_t value = 0;
  bool ok = !text.empty();
  for (char c : text)
    ok = ok && c >= '0' && c <= '9' && planner::checkedMul(value, 10, value) &&
         planner::checkedAdd(value, uint64_t(c - '0'), value) && value <= planner::kMaxPlannerBytes;
  if (!ok)
    throw Error(ExitCode::Usage,
                std::string(option) + " '" + text + "': expected a whole number from 0 to 2^62");
  return value;
}

// What checking a plan and writing it cost, in CPU seconds: kept out of the
// planner's share of the limit (times RunClock::slowdown: under load it
// takes that much longer in wall time). checkPlan is O(n log n) with a cost
// per buffer that grows with n (cache misses): 0.15-0.37 s CPU for 10^6
// buffers on the shared 2-core machine, 0.02-0.03 s for 10^5; the CSV -o
// writes about 0.3 s more.
double checkReserve(size_t buffers, bool writes) {
  double n = double(buffers);
  return 0.002 + 0.25e-6 * n * (1 + n / 2e6) + (writes ? 0.3e-6 * n : 0);
}

int runPlanBuffers(PlanBuffersOptions options) {
  RunClock clock;
  if (!options.capacityText.empty())
    options.capacity = parseCountOption(options.capacityText, "--capacity");
  if (!options.nodeLimitText.empty())
    options.nodeLimit = parseCountOption(options.nodeLimitText, "--node-limit");
  if (!options.outputPath.empty()) // the exact search may take its whole --time-limit
    checkWritable(options.outputPath, "-o");
  options.json.checkFileWritable();
  options.html.checkFileWritable();
  std::vector<NamedProblem> problems = readProblems(options);
  clock.measureSlowdown();
  double readCpu = cpuSeconds(), planCpu = 0, checkCpu = 0;
  if (!options.outputPath.empty() && problems.size() != 1)
    throw Error(ExitCode::Usage, "-o needs exactly one problem; choose one with --model");
  size_t buffersLeft = 0;
  for (const NamedProblem &named : problems) {
    if (auto malformed = planner::checkProblem(named.problem))
      throw Error(ExitCode::BadInputFile, options.path + ": " + named.name + ": " + *malformed);
    buffersLeft += named.problem.buffers.size();
  }

  TextTable table({"problem", "buffers", "lower bound", "arena", "algorithm", "proof", "seconds"},
                  {false, true, true, true, false, false, true});
  bool allFit = true, provenNotToFit = false;
  std::vector<std::string> cut; // Problems a limit ended, with where.
  std::string csv;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t k = 0; k < problems.size(); ++k) {
    const NamedProblem &named = problems[k];
    // An equal share of what is left of the limit, the checks kept aside.
    double left = options.timeLimit - clock.used() -
                  clock.slowdown * checkReserve(buffersLeft, !options.outputPath.empty());
    buffersLeft -= named.problem.buffers.size();
    planner::PlanOptions planOptions;
    planOptions.exact.timeBudgetSeconds = std::max(0.0, left / double(problems.size() - k));
    planOptions.exact.capacity = options.capacity;
    planOptions.exact.stopAtCapacity = options.stopWhenFits;
    planOptions.exact.nodeLimit = options.nodeLimit;
    // The run uses its limit (counted work alone ends before or after it
    // by family: planner/README.md); with --node-limit the count decides, so that an
    // unfinished search is the same on every machine.
    planOptions.exact.clockEnds = options.nodeLimit == 0;
    Clock::time_point planStart = Clock::now();
    double cpuBefore = cpuSeconds();
    planner::Plan plan = planner::planMemory(named.problem, planOptions);
    double seconds = secondsSince(planStart), cpu = cpuSeconds() - cpuBefore;
    planCpu += cpu;
    if (auto violation = planner::checkPlan(named.problem, plan))
      fatalInternal("plan for '" + named.name + "' failed its check: " + *violation);
    checkCpu += cpuSeconds() - cpuBefore - cpu;
    bool fits = !options.capacity || plan.arenaSize <= options.capacity;
    allFit &= fits;
    provenNotToFit |= !fits && (plan.provedInfeasible || plan.provedOptimal);
    char time[32];
    std::snprintf(time, sizeof time, "%.3f", seconds);
    const char *proof = planner::proofOf(plan, options.capacity);
    rows.push_back({{"name", named.name},
                    {"buffers", named.problem.buffers.size()},
                    {"lower_bound", plan.lowerBound},
                    {"arena", plan.arenaSize},
                    {"algorithm", plan.algorithm},
                    {"proof", proof},
                    {"sections", plan.sections},
                    {"search_nodes", plan.searchNodes},
                    {"work_units", plan.workUnits},
                    {"limit_reached", plan.budgetExhausted},
                    {"stopped_by", plan.stoppedBy},
                    {"stopped_in", plan.stoppedIn},
                    {"seconds", seconds},
                    {"cpu_seconds", cpu}});
    if (plan.budgetExhausted)
      cut.push_back(named.name + ": the " + limitName(plan.stoppedBy) + " ended the work in " +
                    plan.stoppedIn);
    table.addRow({named.name, std::to_string(named.problem.buffers.size()),
                  withThousands(plan.lowerBound), withThousands(plan.arenaSize), plan.algorithm,
                  proof, time});
    if (!options.outputPath.empty()) {
      std::ostringstream out;
      planner::formats::writeMiniMallocCsv(out, named.problem, plan, named.ids);
      csv = out.str();
    }
  }
  if (!options.outputPath.empty())
    writeFileAtomically(options.outputPath, csv);
  // Proven or not: a capacity under the bound, or a search that proved it,
  // is a different answer from "no fit found within the limit".
  int code = allFit           ? 0
             : provenNotToFit ? int(ExitCode::DoesNotFit)
                              : int(ExitCode::NotFoundInTime);
  // The parts that cannot stop (loading, reading, the planner's setup, an
  // O(n) placement of what the first placement did not reach, the check)
  // can take longer than a tiny limit: say so, with where the time went.
  double cpuTotal = cpuSeconds(), wallTotal = clock.wall();
  bool overrun = std::max(cpuTotal, wallTotal) > options.timeLimit * 1.1;
  if (overrun) {
    std::ostringstream line;
    line << std::fixed << std::setprecision(3) << options.path << ": the run took " << cpuTotal
         << " s CPU and " << wallTotal << " s wall, more than --time-limit " << std::defaultfloat
         << options.timeLimit << " allows (loading and reading " << std::fixed << readCpu
         << " s, planning " << planCpu << " s, checking " << checkCpu << " s)\n";
    std::cerr << line.str();
  }
  options.html.writeTable(options.path + ": buffer plans", {}, "Problems", table);
  if (options.json.wanted()) {
    nlohmann::json report = {{"schema", "bundlefit.plan-buffers/1"},
                             {"time_limit_seconds", options.timeLimit},
                             {"node_limit", options.nodeLimit},
                             {"stop_when_fits", options.stopWhenFits},
                             {"seconds", wallTotal},
                             {"cpu_seconds", cpuTotal},
                             {"time_limit_overrun", overrun},
                             {"problems", rows}};
    if (options.capacity)
      report["capacity"] = {
          {"bytes", options.capacity}, {"fits", allFit}, {"proven", allFit || provenNotToFit}};
    options.json.emit(report, "");
    if (options.json.replacesText())
      return code;
  }
  std::cout << table.render();
  // "best effort" alone does not say why: a limit cut the work short and
  // this is the best valid plan found by then.
  for (const std::string &line : cut)
    std::cout << line << " (--time-limit " << options.timeLimit
              << " s); the best plan found by then is shown\n";
  if (options.capacity)
    std::cout << (allFit           ? "fits"
                  : provenNotToFit ? "does not fit (proven)"
                                   : "no plan found within the capacity (not proven impossible)")
              << " in capacity " << withThousands(options.capacity) << " bytes\n";
  return code;
}

} // namespace

void addPlanBuffersCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<PlanBuffersOptions>();
  CLI::App *command = app.add_subcommand(
      "plan-buffers", "Solve an allocation problem file (Glow trace or MiniMalloc CSV)");
  command->add_option("file", options->path, "Problem file")->required();
  command->add_option("--format", options->format, "glow | csv")
      ->required()
      ->check(CLI::IsMember({"glow", "csv"}));
  command->add_option("--model", options->model, "Glow traces: only this model");
  command->add_option("--capacity", options->capacityText,
                      "Arena bytes to fit in: the search looks for a fit first, then goes lower "
                      "with the time left; exit 0 when it fits, 3 when it is proven not to (at "
                      "once for a capacity under the lower bound), 8 when no fit was found "
                      "within the limits");
  command->add_flag("--stop-when-fits", options->stopWhenFits,
                    "With --capacity: stop searching as soon as the plan fits");
  command
      ->add_option(
          "--time-limit", options->timeLimit,
          "Seconds for the whole run, CPU or wall time, whichever passes first: "
          "reading, planning, checking, writing (default 5). The planner works until "
          "its share of it ends; with --node-limit its work is counted instead (" +
              workUnitsPerSecondText() +
              " units a second), so that the plan is the same on any machine that does that work "
              "in time")
      ->check(secondsCheck());
  command->add_option("--node-limit", options->nodeLimitText,
                      "Stop the exact search after this many nodes (default 0: no limit); "
                      "the work is then counted, not timed, so an unfinished search is the "
                      "same on every machine");
  options->json.addTo(*command, "bundlefit.plan-buffers/1");
  options->html.addTo(*command, "each problem's arena, bound and proof");
  command->add_option("-o,--output", options->outputPath,
                      "Write id,lower,upper,size,offset rows to this CSV file");
  command->callback(
      [options, &action] { action = [options] { return runPlanBuffers(*options); }; });
}

} // namespace bundlefit
