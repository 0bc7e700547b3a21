//===- PlanBuffersCommand.cpp - bundlefit plan-buffers FILE ----------------===//
//
// Solves an allocation problem from a file (Glow's traces or MiniMalloc's
// CSV) with the same planner bundles use, so the planner can be compared
// with other tools on their own data.
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "ReportSupport.h"

#include "bundlefit/planner/Planner.h"
#include "bundlefit/planner/formats/GlowTrace.h"
#include "bundlefit/planner/formats/MiniMallocCsv.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Error.h"

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
  uint64_t capacity = 0;
  double timeLimit = 5.0;
  std::string outputPath;
  JsonReportOption json;
};

struct NamedProblem {
  std::string name;
  planner::Problem problem;
  std::vector<std::string> ids;
};

std::vector<NamedProblem> readProblems(const PlanBuffersOptions &options) {
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
    throw Error(ExitCode::Usage, options.path + ": no model named '" + options.model +
                                     "' (option --model)");
  return problems;
}

int runPlanBuffers(const PlanBuffersOptions &options) {
  std::vector<NamedProblem> problems = readProblems(options);
  if (!options.outputPath.empty() && problems.size() != 1)
    throw Error(ExitCode::Usage, "-o needs exactly one problem; choose one with --model");

  TextTable table({"problem", "buffers", "lower bound", "arena", "algorithm", "seconds"},
                  {false, true, true, true, false, true});
  bool allFit = true;
  std::string csv;
  nlohmann::json rows = nlohmann::json::array();
  for (const NamedProblem &named : problems) {
    planner::PlanOptions planOptions;
    planOptions.exact.timeBudgetSeconds = options.timeLimit;
    planOptions.exact.capacity = options.capacity;
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
    rows.push_back({{"name", named.name}, {"buffers", named.problem.buffers.size()},
                    {"lower_bound", plan.lowerBound}, {"arena", plan.arenaSize},
                    {"algorithm", plan.algorithm}, {"seconds", seconds}});
    table.addRow({named.name, std::to_string(named.problem.buffers.size()),
                  withThousands(plan.lowerBound), withThousands(plan.arenaSize), plan.algorithm,
                  time});
    if (!options.outputPath.empty()) {
      std::ostringstream out;
      planner::formats::writeMiniMallocCsv(out, named.problem, plan, named.ids);
      csv = out.str();
    }
  }
  if (!options.outputPath.empty())
    writeFileAtomically(options.outputPath, csv);
  if (options.json.wanted()) {
    nlohmann::json report = {{"schema", "bundlefit.plan-buffers/1"}, {"problems", rows}};
    if (options.capacity)
      report["capacity"] = {{"bytes", options.capacity}, {"fits", allFit}};
    options.json.emit(report, "");
    if (options.json.replacesText())
      return !options.capacity || allFit ? 0 : int(ExitCode::DoesNotFit);
  }
  std::cout << table.render();
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
  command->add_option("--capacity", options->capacity,
                      "Arena bytes to fit in: exit 0 when it fits, 3 when it does not");
  command->add_option("--time-limit", options->timeLimit,
                      "Seconds the exact allocator may search (default 5)")
      ->check(CLI::NonNegativeNumber);
  options->json.addTo(*command, "bundlefit.plan-buffers/1");
  command->add_option("-o,--output", options->outputPath,
                      "Write id,lower,upper,size,offset rows to this CSV file");
  command->callback(
      [options, &action] { action = [options] { return runPlanBuffers(*options); }; });
}

} // namespace bundlefit
