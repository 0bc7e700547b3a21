//===- FitBatch.cpp - bundlefit fit --batch LIST: many models, JSON lines --===//
#include "FitBatch.h"

#include "bundlefit/driver/Progress.h"
#include "bundlefit/driver/ToolInfo.h"
#include "bundlefit/reports/JsonText.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <glob.h>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>

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
  std::istringstream in(readInputFile(listPath, "list of models (--batch)"));
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

/// A model that failed: reports/schemas/fit-error.schema.json.
std::string errorLine(const std::string &model, ExitCode code, const std::string &message) {
  nlohmann::json line = {{"schema", "bundlefit.fit-error/1"},
                         {"model", model},
                         {"error", message},
                         {"exit_code", int(code)},
                         {"exit_category", exitCategoryName(code)}};
  stampReport(line, "");
  return jsonText(line);
}

Answer fitOne(const std::string &model, driver::CompilationOptions options,
              const driver::FitQuery &query) {
  options.model.path = model;
  driver::Compilation compilation(std::move(options)); // each model of the batch on its own
  // Status and progress lines of threads running side by side would mix;
  // what each model did is in its line (-v still prints them).
  std::optional<QuietScope> quiet;
  if (verbosity() == Verbosity::Normal)
    quiet.emplace();
  try {
    std::unique_ptr<driver::FitCheck> check = compilation.fit(query);
    nlohmann::json report = driver::fitReportJson(*check, model);
    stampReport(report, model);
    return {jsonText(report), check->exitCode()};
  } catch (const Error &e) {
    return {errorLine(model, e.code(), e.what()), int(e.code())};
  } catch (const std::exception &e) {
    return {errorLine(model, ExitCode::Internal, std::string("internal error: ") + e.what()),
            int(ExitCode::Internal)};
  }
}

/// "fit --batch: 37/100 models, 2.4/s, ETA 26 s" on stderr while the batch
/// runs (a terminal, or BUNDLEFIT_PROGRESS=1; Progress.h): redrawn in place
/// on a terminal, else a line at most every second; then one summary line.
class BatchProgress {
public:
  explicit BatchProgress(size_t total)
      : total_(total), enabled_(progressEnabled()), inPlace_(::isatty(STDERR_FILENO) != 0),
        delay_(std::chrono::milliseconds(progressDelayMs(500))),
        start_(std::chrono::steady_clock::now()) {}

  /// `done` models answered so far (in any order).
  void update(size_t done) {
    if (!enabled_)
      return;
    auto now = std::chrono::steady_clock::now();
    if (now - start_ < delay_ || (!inPlace_ && done < total_ && now - drawn_ < kLineEvery))
      return;
    double seconds = std::chrono::duration<double>(now - start_).count();
    double rate = seconds > 0 ? double(done) / seconds : 0;
    char text[160];
    std::snprintf(
        text, sizeof text, "fit --batch: %zu/%zu models, %.1f/s, ETA %s", done, total_, rate,
        done && rate > 0 ? formatSeconds(double(total_ - done) / rate).c_str() : "unknown");
    std::fprintf(stderr, inPlace_ ? "\r\033[K%s" : "%s\n", text);
    std::fflush(stderr);
    drawn_ = now;
    shown_ = true;
  }

  /// The summary, once every line is out.
  void finish(size_t fit, size_t doNotFit, size_t failed) {
    if (!enabled_)
      return;
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr,
                 "%sfit --batch: %zu models in %s (%.1f/s): %zu fit, %zu do not, %zu failed\n",
                 inPlace_ && shown_ ? "\r\033[K" : "", total_, formatSeconds(seconds).c_str(),
                 seconds > 0 ? double(total_) / seconds : 0.0, fit, doNotFit, failed);
    std::fflush(stderr);
  }

private:
  static constexpr std::chrono::seconds kLineEvery{1};
  static std::string formatSeconds(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, seconds < 100 ? "%.1f s" : "%.0f s", seconds);
    return text;
  }

  size_t total_;
  bool enabled_, inPlace_, shown_ = false;
  std::chrono::milliseconds delay_;
  std::chrono::steady_clock::time_point start_, drawn_;
};

} // namespace

std::vector<std::string> batchModelPaths(const std::string &list) {
  return isGlob(list) ? globbed(list) : listed(list);
}

int runFitBatch(const std::string &list, unsigned jobs, const driver::CompilationOptions &base,
                const driver::FitQuery &query) {
  std::vector<std::string> models = batchModelPaths(list);
  setStatusNotesSuppressed(true); // stdout is JSON lines; stderr only errors
  // A wrong part is the batch's mistake, not each model's: fail once, now.
  (void)driver::loadDeviceDatabase(query.part.deviceFiles).get(query.part.device);
  if (jobs == 0)
    jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min<unsigned>(jobs, unsigned(models.size()));

  // Workers take the next model; this thread prints the answers in LIST's
  // order as soon as each one's predecessors are out.
  std::vector<std::optional<Answer>> answers(models.size());
  std::mutex mutex;
  std::condition_variable ready;
  size_t next = 0, done = 0;
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
        Answer answer = fitOne(models[index], base, query);
        std::lock_guard<std::mutex> lock(mutex);
        answers[index] = std::move(answer);
        ++done;
        ready.notify_all();
      }
    });

  int firstFailure = 0;
  size_t fit = 0, doNotFit = 0, failed = 0;
  BatchProgress progress(models.size());
  for (size_t index = 0; index < models.size(); ++index) {
    Answer answer;
    {
      std::unique_lock<std::mutex> lock(mutex);
      // Wake at every answer (any model's) and now and then, for the progress line.
      while (!answers[index].has_value()) {
        progress.update(done);
        ready.wait_for(lock, std::chrono::milliseconds(250));
      }
      answer = std::move(*answers[index]);
      answers[index].reset();
      progress.update(done);
    }
    std::cout << answer.line << "\n" << std::flush;
    if (answer.exitCode == 0)
      ++fit;
    else if (answer.exitCode == int(ExitCode::DoesNotFit))
      ++doNotFit;
    else if (++failed == 1)
      firstFailure = answer.exitCode;
  }
  for (std::thread &worker : workers)
    worker.join();
  progress.finish(fit, doNotFit, failed);
  if (firstFailure)
    return firstFailure;
  return doNotFit ? int(ExitCode::DoesNotFit) : 0;
}

} // namespace bundlefit
