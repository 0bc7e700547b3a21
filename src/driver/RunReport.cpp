//===- RunReport.cpp - A run's output files and its bundlefit.run/1 report -===//
#include "bundlefit/driver/ModelRun.h"

#include "bundlefit/interp/Npy.h"
#include "bundlefit/ir/TensorType.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Names.h"
#include "bundlefit/support/OutputFile.h"

#include <cmath>
#include <filesystem>

namespace fs = std::filesystem;

namespace bundlefit::driver {

std::vector<std::string> writeRunOutputs(const ModelRun &run, const std::string &dir) {
  // All the outputs or none: staged beside the directory and put in place
  // together (support/OutputFile.h), its other files kept.
  OutputDirectory outputs(dir, "output directory");
  std::vector<std::string> names;
  // A file name holds at most 255 bytes; TFLite tensor names (fused ops'
  // names joined by ';') run longer. The first 200 characters stay.
  constexpr size_t kMaxStem = 200;
  for (const RunOutput &output : run.outputs)
    names.push_back(output.name.substr(0, kMaxStem));
  const std::vector<std::string> stems = uniqueLegalNames(names);
  std::vector<std::string> files;
  for (size_t i = 0; i < run.outputs.size(); ++i) {
    files.push_back((fs::path(dir) / (stems[i] + ".npy")).string());
    outputs.writeFile(stems[i] + ".npy", encodeNpy(run.outputs[i].tensor));
  }
  outputs.publish();
  return files;
}

nlohmann::json runReportJson(const ModelRun &run, const std::vector<std::string> &files) {
  nlohmann::json outputs = nlohmann::json::array();
  for (size_t i = 0; i < run.outputs.size(); ++i) {
    const RunOutput &output = run.outputs[i];
    nlohmann::json entry = {{"name", output.name},
                            {"dtype", dtypeName(output.tensor.type.dtype)},
                            {"shape", output.tensor.type.shape}};
    if (i < files.size())
      entry["file"] = files[i];
    if (const std::optional<OutputComparison> &c = output.comparison) {
      entry["max_abs_diff"] = c->maxAbsDiff;
      entry["max_abs_output"] = c->maxAbsReference;
      entry["cosine_similarity"] = c->cosine;
      entry["relative_l2_error"] =
          std::isfinite(c->relativeL2) ? nlohmann::json(c->relativeL2) : nlohmann::json();
      if (c->hasTop1)
        entry["top1_agreement"] = double(c->top1Agree) / double(c->samples);
    }
    outputs.push_back(std::move(entry));
  }
  return {{"schema", "bundlefit.run/1"},
          {"network", run.networkName},
          {"target", run.target},
          {"samples", run.samples},
          {"build_seconds", run.stats.buildSeconds},
          {"run_seconds", run.stats.runSeconds},
          {"outputs", outputs}};
}

} // namespace bundlefit::driver
