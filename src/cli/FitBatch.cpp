//===- FitBatch.cpp - bundlefit fit --batch LIST: many models, JSON lines --===//
#include "FitBatch.h"

#include "bundlefit/driver/ToolInfo.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <condition_variable>
#include <fstream>
#include <glob.h>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

namespace bundlefit {

namespace {

bool isGlob(const std::string &text) { return text.find_first_of("*?[") != std::string::npos; }

std::vector<std::string> globbed(const std::string &pattern) {
  glob_t found{};
  int status = ::glob(pattern.c_str(), 0, nullptr, &found); // sorted
  std::vector<std::string> paths;
  if (status == 0)
    paths.assign(found.gl_pathv, found.gl_pathv + found.gl_pathc);
  ::globfree(&found);
  if (paths.empty())
    throw Error(ExitCode::BadInputFile, "--batch '" + pattern + "': no file matches the pattern");
  return paths;
}

std::vector<std::string> listed(const std::string &listPath) {
  std::ifstream in(listPath);
  if (!in)
    throw Error(ExitCode::BadInputFile, "--batch " + listPath + ": cannot read the list of models");
  std::vector<std::string> paths;
  std::string line;
  while (std::getline(in, line)) {
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty() && line[0] != '#')
      paths.push_back(line);
  }
  if (paths.empty())
    throw Error(ExitCode::BadInputFile, "--batch " + listPath + ": the list names no model");
  return paths;
}

struct Answer {
  std::string line;
  int exitCode = 0;
};

std::string errorLine(const std::string &model, ExitCode code, const std::string &message) {
  nlohmann::json line = {{"model", model},
                         {"error", message},
                         {"exit_code", int(code)},
                         {"exit_category", exitCategoryName(code)}};
  stampReport(line, "");
  return line.dump();
}

Answer fitOne(const std::string &model, driver::FitCheckOptions options) {
  options.build.model.path = model;
  markPreQuantized(model, options.build.quant); // each model of the batch on its own
  // Status and progress lines of threads running side by side would mix;
  // what each model did is in its line (-v still prints them).
  std::optional<QuietScope> quiet;
  if (verbosity() == Verbosity::Normal)
    quiet.emplace();
  try {
    std::unique_ptr<driver::FitCheck> check = driver::checkFit(options);
    nlohmann::json report = driver::fitReportJson(*check, model);
    stampReport(report, model);
    return {report.dump(), check->exitCode()};
  } catch (const Error &e) {
    return {errorLine(model, e.code(), e.what()), int(e.code())};
  } catch (const std::exception &e) {
    return {errorLine(model, ExitCode::Internal, std::string("internal error: ") + e.what()),
            int(ExitCode::Internal)};
  }
}

} // namespace

std::vector<std::string> batchModelPaths(const std::string &list) {
  return isGlob(list) ? globbed(list) : listed(list);
}

int runFitBatch(const std::string &list, unsigned jobs, const driver::FitCheckOptions &base) {
  std::vector<std::string> models = batchModelPaths(list);
  setStatusNotesSuppressed(true); // stdout is JSON lines; stderr only errors
  // A wrong part is the batch's mistake, not each model's: fail once, now.
  (void)driver::loadDeviceDatabase(base.deviceFiles).get(base.device);
  if (jobs == 0)
    jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min<unsigned>(jobs, unsigned(models.size()));

  // Workers take the next model; this thread prints the answers in LIST's
  // order as soon as each one's predecessors are out.
  std::vector<std::optional<Answer>> answers(models.size());
  std::mutex mutex;
  std::condition_variable ready;
  size_t next = 0;
  std::vector<std::thread> workers;
  for (unsigned i = 0; i < jobs; ++i)
    workers.emplace_back([&] {
      for (;;) {
        size_t index;
        {
          std::lock_guard<std::mutex> lock(mutex);
          if (next == models.size())
            return;
          index = next++;
        }
        Answer answer = fitOne(models[index], base);
        std::lock_guard<std::mutex> lock(mutex);
        answers[index] = std::move(answer);
        ready.notify_all();
      }
    });

  int firstFailure = 0;
  bool someDoNotFit = false;
  for (size_t index = 0; index < models.size(); ++index) {
    Answer answer;
    {
      std::unique_lock<std::mutex> lock(mutex);
      ready.wait(lock, [&] { return answers[index].has_value(); });
      answer = std::move(*answers[index]);
      answers[index].reset();
    }
    std::cout << answer.line << "\n" << std::flush;
    if (answer.exitCode == int(ExitCode::DoesNotFit))
      someDoNotFit = true;
    else if (answer.exitCode != 0 && firstFailure == 0)
      firstFailure = answer.exitCode;
  }
  for (std::thread &worker : workers)
    worker.join();
  if (firstFailure)
    return firstFailure;
  return someDoNotFit ? int(ExitCode::DoesNotFit) : 0;
}

} // namespace bundlefit
