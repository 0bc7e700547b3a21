//===- CompareQuantCommand.cpp - bundlefit compare-quant MODEL --load-profile P INPUTS ===//
//
// Runs the float graph and its int8 rewrite side by side in the interpreter
// and reports, per tensor present in both, the signal-to-noise ratio of the
// int8 values (dequantized) against the float ones over all samples:
//   SNR = 10 log10( sum f^2 / sum (f - dq)^2 )  dB
// worst first, so the layer that loses accuracy stands out. The graph
// outputs also get top-1 agreement (argmax of int8 == argmax of float).
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "QuantOptions.h"
#include "ReportSupport.h"

#include "bundlefit/driver/Compilation.h"
#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>

namespace bundlefit {

namespace {

struct CompareQuantOptions {
  ModelOptions model;
  QuantCliOptions quant;
  CalibrationCliOptions calibration;
  JsonReportOption json;
  HtmlReportOption html;
};

struct TensorError {
  std::string name, op, type;
  double signal = 0, noise = 0;
  double snrDb() const {
    if (noise == 0)
      return std::numeric_limits<double>::infinity();
    if (signal == 0)
      return -std::numeric_limits<double>::infinity();
    return 10.0 * std::log10(signal / noise);
  }
};

/// The real values a tensor stands for (int8: scale * (q - zeroPoint)).
std::vector<double> realValues(const Tensor &tensor) {
  std::vector<double> values(size_t(tensor.numElements()));
  const QuantParams &quant = tensor.type.quant;
  bool dequantize = tensor.type.dtype == DType::Int8 && !quant.empty();
  for (size_t i = 0; i < values.size(); ++i) {
    double v = tensor.at(int64_t(i));
    values[i] = dequantize ? double(quant.scales[0]) * (v - double(quant.zeroPoints[0])) : v;
  }
  return values;
}

size_t argmax(const std::vector<double> &values) {
  return size_t(std::max_element(values.begin(), values.end()) - values.begin());
}

std::string describeType(const TensorType &type) {
  if (type.dtype != DType::Int8 || type.quant.empty())
    return type.str();
  char text[96];
  std::snprintf(text, sizeof text, " s=%.4g zp=%d", double(type.quant.scales[0]),
                int(type.quant.zeroPoints[0]));
  return type.str() + text;
}

std::string formatDb(double db) {
  if (std::isinf(db))
    return db > 0 ? "exact" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", db);
  return text;
}

int runCompareQuant(const CompareQuantOptions &options) {
  options.json.checkFileWritable();
  options.html.checkFileWritable();
  const driver::Compilation compilation(options.model, options.quant);
  std::unique_ptr<Graph> floatGraph = compilation.loadGraph();
  std::unique_ptr<Graph> int8Graph = compilation.loadQuantizedGraph();
  std::vector<Tensor> samples = loadCalibrationSamples(*floatGraph, options.calibration);
  const std::string &inputName = floatGraph->inputs()[0]->name;

  std::map<std::string, TensorError> errors;
  std::vector<std::string> order; // first-seen order in the int8 graph
  std::map<std::string, size_t> outputAgreement;
  std::map<std::string, std::vector<double>> reference;
  Interpreter floatRun(*floatGraph), int8Run(*int8Graph);
  floatRun.setObserver([&](const Value &value, const Tensor &tensor) {
    if (!value.isGraphInput())
      reference[value.name] = realValues(tensor);
  });
  int8Run.setObserver([&](const Value &value, const Tensor &tensor) {
    auto it = reference.find(value.name);
    if (it == reference.end() || value.isGraphInput())
      return;
    std::vector<double> got = realValues(tensor);
    if (got.size() != it->second.size())
      return;
    auto [entry, inserted] = errors.emplace(value.name, TensorError{});
    TensorError &error = entry->second;
    if (inserted) {
      order.push_back(value.name);
      error.name = value.name;
      error.op = value.producer ? value.producer->opType : "";
      error.type = describeType(value.type);
    }
    for (size_t i = 0; i < got.size(); ++i) {
      double f = it->second[i], d = f - got[i];
      error.signal += f * f;
      error.noise += d * d;
    }
    if (value.isGraphOutput && argmax(got) == argmax(it->second))
      ++outputAgreement[value.name];
  });
  {
    SampleProgress progress("comparing", samples.size());
    for (const Tensor &sample : samples) {
      reference.clear();
      floatRun.run({{inputName, sample}});
      int8Run.run({{inputName, sample}});
      progress.advance();
    }
  }

  std::vector<TensorError> rows;
  for (const std::string &name : order)
    rows.push_back(errors[name]);
  std::stable_sort(rows.begin(), rows.end(), [](const TensorError &a, const TensorError &b) {
    return a.snrDb() < b.snrDb();
  });

  TextTable table({"tensor", "op", "int8 type", "SNR dB"}, {false, false, false, true});
  for (const TensorError &row : rows)
    table.addRow({row.name, row.op, row.type, formatDb(row.snrDb())});
  std::string heading = "int8 (" + options.quant.schema + ") vs float on " +
                        std::to_string(samples.size()) + " sample" +
                        (samples.size() == 1 ? "" : "s") + ", worst first";
  options.html.writeTable(options.model.path + ": int8 against float", {heading},
                          "Signal-to-noise ratio per tensor", table);
  if (options.json.wanted()) {
    nlohmann::json report;
    report["schema"] = "bundlefit.compare-quant/1";
    report["model"] = options.model.path;
    report["profile"] = options.quant.profilePath;
    report["quantization_schema"] = options.quant.schema;
    report["samples"] = samples.size();
    report["tensors"] = nlohmann::json::array();
    for (const TensorError &row : rows) {
      double db = row.snrDb();
      report["tensors"].push_back(
          {{"name", row.name},
           {"op", row.op},
           {"type", row.type},
           {"snr_db", std::isfinite(db) ? nlohmann::json(db) : nlohmann::json()}});
    }
    report["outputs"] = nlohmann::json::array();
    for (const Value *output : int8Graph->outputs())
      report["outputs"].push_back(
          {{"name", output->name},
           {"top1_agreement",
            samples.empty() ? 0.0
                            : double(outputAgreement[output->name]) / double(samples.size())}});
    options.json.emit(report, options.model.path);
    if (options.json.replacesText())
      return 0;
  }

  printText(heading + "\n\n" + table.render());
  for (const Value *output : int8Graph->outputs()) {
    char line[64];
    std::snprintf(line, sizeof line, "%.1f%%",
                  samples.empty()
                      ? 0.0
                      : 100.0 * double(outputAgreement[output->name]) / double(samples.size()));
    std::cout << "\noutput " << escapeInvalidUtf8(output->name) << ": top-1 agrees with float on "
              << line << " of samples";
  }
  std::cout << "\n";
  return 0;
}

} // namespace

void addCompareQuantCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<CompareQuantOptions>();
  CLI::App *command = app.add_subcommand(
      "compare-quant", "Per-tensor SNR of the int8 model against float on sample inputs, worst "
                       "first (needs --load-profile)");
  addModelOptions(*command, options->model);
  addQuantOptions(*command, options->quant, /*requireProfile=*/true);
  addCalibrationOptions(*command, options->calibration);
  options->json.addTo(*command, "bundlefit.compare-quant/1");
  options->html.addTo(*command, "each tensor's SNR, worst first");
  command->callback(
      [options, &action] { action = [options] { return runCompareQuant(*options); }; });
}

} // namespace bundlefit
