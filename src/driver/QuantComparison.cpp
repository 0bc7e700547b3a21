//===- QuantComparison.cpp - int8 against float, tensor by tensor ----------===//
#include "bundlefit/driver/QuantComparison.h"

#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ir/Graph.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace bundlefit::driver {

double TensorError::snrDb() const {
  if (noise == 0)
    return std::numeric_limits<double>::infinity();
  if (signal == 0)
    return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

double QuantComparison::top1Agreement(const OutputAgreement &output) const {
  return samples == 0 ? 0.0 : double(output.agreeing) / double(samples);
}

namespace {

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

} // namespace

QuantComparison compareQuantized(const Graph &floatGraph, const Graph &int8Graph,
                                 const std::vector<Tensor> &samples, const SampleDone &onSample) {
  const std::string &inputName = floatGraph.inputs()[0]->name;
  std::map<std::string, TensorError> errors;
  std::vector<std::string> order; // first-seen order in the int8 graph
  std::map<std::string, size_t> outputAgreement;
  std::map<std::string, std::vector<double>> reference;
  Interpreter floatRun(floatGraph), int8Run(int8Graph);
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
  size_t done = 0;
  for (const Tensor &sample : samples) {
    reference.clear();
    floatRun.run({{inputName, sample}});
    int8Run.run({{inputName, sample}});
    if (onSample)
      onSample(++done, samples.size());
  }

  QuantComparison comparison;
  comparison.samples = samples.size();
  for (const std::string &name : order)
    comparison.tensors.push_back(errors[name]);
  std::stable_sort(
      comparison.tensors.begin(), comparison.tensors.end(),
      [](const TensorError &a, const TensorError &b) { return a.snrDb() < b.snrDb(); });
  for (const Value *output : int8Graph.outputs())
    comparison.outputs.push_back({output->name, outputAgreement[output->name]});
  return comparison;
}

nlohmann::json quantComparisonJson(const QuantComparison &comparison, const std::string &modelPath,
                                   const std::string &profilePath, const std::string &schema) {
  nlohmann::json report;
  report["schema"] = "bundlefit.compare-quant/1";
  report["model"] = modelPath;
  report["profile"] = profilePath;
  report["quantization_schema"] = schema;
  report["samples"] = comparison.samples;
  report["tensors"] = nlohmann::json::array();
  for (const TensorError &row : comparison.tensors) {
    double db = row.snrDb();
    report["tensors"].push_back(
        {{"name", row.name},
         {"op", row.op},
         {"type", row.type},
         {"snr_db", std::isfinite(db) ? nlohmann::json(db) : nlohmann::json()}});
  }
  report["outputs"] = nlohmann::json::array();
  for (const OutputAgreement &output : comparison.outputs)
    report["outputs"].push_back(
        {{"name", output.name}, {"top1_agreement", comparison.top1Agreement(output)}});
  return report;
}

} // namespace bundlefit::driver
