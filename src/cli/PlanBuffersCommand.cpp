//===- PlanBuffersCommand.cpp - bundlefit plan-buffers FILE ----------------===//
//
// Solves an allocation problem from a file (Glow's traces or MiniMalloc's
// CSV) with the same planner bundles use, so the planner can be compared
// with other tools on their own data.
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "ReportSupport.h"

#include "bundlefit/planner/CheckedArithmetic.h"
#include "bundlefit/planner/Planner.h"
#include "bundlefit/planner/formats/GlowTrace.h"
#include "bundlefit/planner/formats/MiniMallocCsv.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
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
    problems.push_back({options.path, csv->problem, csv->names});
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

int runPlanBuffers(PlanBuffersOptions options) {
  if (!options.capacityText.empty())
    options.capacity = parseCountOption(options.capacityText, "--capacity");
  if (!options.nodeLimitText.empty())
    options.nodeLimit = parseCountOption(options.nodeLimitText, "--node-limit");
  if (!options.outputPath.empty()) // the exact search may take its whole --time-limit
    checkWritable(options.outputPath, "-o");
  options.json.checkFileWritable();
  options.html.checkFileWritable();
  std::vector<NamedProblem> problems = readProblems(options);
  if (!options.outputPath.empty() && problems.size() != 1)
    throw Error(ExitCode::Usage, "-o needs exactly one problem; choose one with --model");

  TextTable table({"problem", "buffers", "lower bound", "arena", "algorithm", "proof", "seconds"},
                  {false, true, true, true, false, false, true});
  bool allFit = true;
  std::vector<std::string> cut; // Problems whose search a limit ended.
  std::string csv;
  nlohmann::json rows = nlohmann::json::array();
  for (const NamedProblem &named : problems) {
    planner::PlanOptions planOptions;
    planOptions.exact.timeBudgetSeconds = options.timeLimit;
    planOptions.exact.capacity = options.capacity;
    planOptions.exact.stopAtCapacity = options.stopWhenFits;
    planOptions.exact.nodeLimit = options.nodeLimit;
    if (auto malformed = planner::checkProblem(named.problem))
      throw Error(ExitCode::BadInputFile, options.path + ": " + named.name + ": " + *malformed);
    auto start = std::chrono::steady_clock::now();
    planner::Plan plan = planner::planMemory(named.problem, planOptions);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (auto violation = planner::checkPlan(named.problem, plan))
      fatalInternal("plan for '" + named.name + "' failed its check: " + *violation);
    if (options.capacity && plan.arenaSize > options.capacity)
      allFit = false;
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
                    {"limit_reached", plan.budgetExhausted},
                    {"seconds", seconds}});
    if (plan.budgetExhausted)
      cut.push_back(named.name);
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
  options.html.writeTable(options.path + ": buffer plans", {}, "Problems", table);
  if (options.json.wanted()) {
    nlohmann::json report = {{"schema", "bundlefit.plan-buffers/1"},
                             {"time_limit_seconds", options.timeLimit},
                             {"node_limit", options.nodeLimit},
                             {"stop_when_fits", options.stopWhenFits},
                             {"problems", rows}};
    if (options.capacity)
      report["capacity"] = {{"bytes", options.capacity}, {"fits", allFit}};
    options.json.emit(report, "");
    if (options.json.replacesText())
      return !options.capacity || allFit ? 0 : int(ExitCode::DoesNotFit);
  }
  std::cout << table.render();
  // "best effort" alone does not say why: a limit cut the search short and
  // this is the best valid plan it had found by then.
  const char *limit = options.nodeLimit ? "the time or node limit" : "the time limit";
  for (const std::string &name : cut)
    std::cout << name << ": " << limit << " ended the search (--time-limit " << options.timeLimit
              << " s); the best plan found so far is shown\n";
  if (options.capacity) {
    std::cout << (allFit ? "fits" : "does not fit") << " in capacity "
              << withThousands(options.capacity) << " bytes\n";
    return allFit ? 0 : int(ExitCode::DoesNotFit);
  }
  return 0;
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
                      "with the time left; exit 0 when it fits, 3 when it does not");
  command->add_flag("--stop-when-fits", options->stopWhenFits,
                    "With --capacity: stop searching as soon as the plan fits");
  command
      ->add_option("--time-limit", options->timeLimit,
                   "Seconds the planner may spend, greedy passes after the first included "
                   "(default 5); the only limit unless --node-limit is given")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--node-limit", options->nodeLimitText,
                      "Stop the exact search after this many nodes (default 0: no limit); "
                      "makes an unfinished search reproducible across machines");
  options->json.addTo(*command, "bundlefit.plan-buffers/1");
  options->html.addTo(*command, "each problem's arena, bound and proof");
  command->add_option("-o,--output", options->outputPath,
                      "Write id,lower,upper,size,offset rows to this CSV file");
  command->callback(
      [options, &action] { action = [options] { return runPlanBuffers(*options); }; });
}

} // namespace bundlefit
