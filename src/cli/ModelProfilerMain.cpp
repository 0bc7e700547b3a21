//===- ModelProfilerMain.cpp - Glow's model-profiler and image-classifier --===//
//
// The profiling half of Glow's int8 flow, with Glow's spellings:
//
//   model-profiler -model=m.onnx -dump-profile=profile.yml
//       -input-dataset=data,rawbin,dir,calib/        (AN13001's tool)
//   image-classifier a.png b.png -image-mode=0to1 -model=m.onnx
//       -model-input-name=data -dump-profile=profile.yml   (Glow's AOT doc)
// (each on one command line)
//
// Both write the profile `model-compiler -load-profile=` reads, through the
// same recorder as `bundlefit profile`. image-classifier keeps Glow's image
// defaults (0to255, BGR, NCHW), which differ from `bundlefit profile`'s
// (0to1, RGB). Only profiling is offered: without -dump-profile, Glow's
// image-classifier would classify, which bundlefit leaves to `bundlefit run`.
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "GlowFrontEnd.h"
#include "QuantOptions.h"
#include "bundlefit/driver/Compilation.h"
#include "bundlefit/driver/ToolInfo.h"

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ir/Tensor.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

using namespace bundlefit;

namespace {

#ifdef GLOW_IMAGE_CLASSIFIER
constexpr bool kImageClassifier = true;
constexpr const char *kToolName = "image-classifier";
#else
constexpr bool kImageClassifier = false;
constexpr const char *kToolName = "model-profiler";
#endif

std::vector<std::string> splitCommas(const std::string &text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos)
      return parts;
    start = comma + 1;
  }
}

/// One raw little-endian float32 tensor of the input's size per file.
Tensor loadRawSample(const std::string &path, const TensorType &type) {
  const std::string raw = readInputFile(path, "raw sample");
  std::vector<uint8_t> bytes(raw.begin(), raw.end());
  if (bytes.size() != type.bytes())
    throw Error(ExitCode::BadInputFile, path + ": " + std::to_string(bytes.size()) +
                                            " bytes; a raw " + type.str() + " sample is " +
                                            std::to_string(type.bytes()) + " bytes");
  return Tensor(type, std::move(bytes));
}

/// Glow's -input-dataset=NAME,rawbin,dir,DIR or NAME,rawbin,list,FILE.
std::vector<Tensor> loadDataset(const Graph &graph, const std::string &spec) {
  std::vector<std::string> fields = splitCommas(spec);
  auto usage = [&](const std::string &problem) {
    return Error(ExitCode::Usage, "-input-dataset=" + spec + ": " + problem +
                                      " (expected NAME,rawbin,dir,DIR or NAME,rawbin,list,FILE)");
  };
  if (fields.size() < 4)
    throw usage("too few fields");
  if (graph.inputs().size() != 1 || graph.inputs()[0]->name != fields[0])
    throw usage("the model's input is '" +
                (graph.inputs().empty() ? std::string() : graph.inputs()[0]->name) + "'" +
                (graph.inputs().size() > 1 ? " (and more: one input is supported)" : ""));
  if (fields[1] != "rawbin")
    throw usage("format '" + fields[1] + "' is not supported (rawbin: raw float32 files)");
  const TensorType &type = graph.inputs()[0]->type;
  if (type.dtype != DType::Float32)
    throw usage("input '" + fields[0] + "' is " + type.str() + "; profiling needs float32");
  std::vector<std::string> files;
  if (fields[2] == "dir") {
    if (!std::filesystem::is_directory(fields[3]))
      throw Error(ExitCode::BadInputFile, fields[3] + ": not a directory (-input-dataset)");
    for (const auto &entry : std::filesystem::directory_iterator(fields[3]))
      if (entry.is_regular_file())
        files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
  } else if (fields[2] == "list") {
    std::istringstream list(readInputFile(fields[3], "file list (-input-dataset)"));
    std::filesystem::path base = std::filesystem::path(fields[3]).parent_path();
    for (std::string line; std::getline(list, line);)
      if (!line.empty())
        files.push_back((base / line).string());
  } else {
    throw usage("source '" + fields[2] + "' is not dir or list");
  }
  if (files.empty())
    throw Error(ExitCode::BadInputFile, fields[3] + ": no input files (-input-dataset)");
  std::vector<Tensor> samples;
  for (const std::string &file : files)
    samples.push_back(loadRawSample(file, type));
  return samples;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{std::string(kToolName) + " (bundlefit " + bundlefitVersion() +
               "): record a quantization profile for model-compiler -load-profile"};
  app.allow_windows_style_options(false);
  app.set_version_flag("--version", std::string(kToolName) + " (bundlefit) " + bundlefitVersion());
  ModelOptions model;
  CalibrationCliOptions calibration;
  if (kImageClassifier) { // Glow's image-classifier defaults (Glow AOT doc)
    calibration.imageMode = "0to255";
    calibration.channelOrder = "BGR";
  }
  std::string dumpProfile, dataset, inputName, schema;
  std::vector<std::string> symbols;
  bool quiet = false, verbose = false;
  app.add_option("--model", model.path, "ONNX or TFLite (.tflite) model file")->required();
  app.add_option("--dump-profile", dumpProfile, "Profile file to write (YAML)")->required();
  app.add_option("--onnx-define-symbol", symbols, "Symbolic dimension: name,value");
  app.add_option("--model-input", model.modelInputs, "name,type,[shape]");
  app.add_option("--quantization-schema", schema,
                 "Accepted as Glow's doc passes it while profiling; the profile holds ranges "
                 "only, the schema is chosen by model-compiler");
  if (kImageClassifier) {
    app.add_option("images", calibration.inputs, "PNG images (or .npy files, directories)")
        ->required();
    app.add_option("--model-input-name", inputName, "The model's input name (checked)");
    app.add_option("--image-mode", calibration.imageMode,
                   "neg1to1 | 0to1 | 0to255 (default, as Glow) | neg128to127")
        ->check(CLI::IsMember({"0to1", "neg1to1", "0to255", "neg128to127"}));
    app.add_option("--image-channel-order", calibration.channelOrder,
                   "RGB | BGR (default, as Glow)")
        ->check(CLI::IsMember({"RGB", "BGR"}));
    app.add_option("--image-layout", calibration.imageLayout, "NCHW (default) | NHWC")
        ->check(CLI::IsMember({"NCHW", "NHWC"}));
  } else {
    app.add_option("--input-dataset", dataset,
                   "NAME,rawbin,dir,DIR or NAME,rawbin,list,FILE: raw float32 samples")
        ->required();
  }
  app.add_flag("-q,--quiet", quiet, "Print only errors");
  app.add_flag("-v,--verbose", verbose, "Print what each stage did");

  try {
    app.parse(glowArgumentsForCli11(argc, argv));
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::cerr << kToolName << ": error: " << e.what() << "\n";
    return int(ExitCode::Usage);
  }
  setVerbosity(quiet ? Verbosity::Quiet : verbose ? Verbosity::Verbose : Verbosity::Normal);

  try {
    if (!schema.empty()) {
      QuantCliOptions schemaOnly;
      schemaOnly.schema = schema;
      resolveQuantOptions(schemaOnly);
    }
    model.defineSymbols = symbols;
    auto samplesFor = [&](const Graph &graph) {
      if (!inputName.empty() &&
          (graph.inputs().size() != 1 || graph.inputs()[0]->name != inputName))
        throw Error(ExitCode::Usage, "-model-input-name=" + inputName + ": the model's input is '" +
                                         (graph.inputs().empty() ? "" : graph.inputs()[0]->name) +
                                         "'");
      return kImageClassifier ? loadCalibrationSamples(graph, calibration)
                              : loadDataset(graph, dataset);
    };
    ProfileData profile;
    {
      SampleProgress progress("profiling");
      profile = driver::Compilation(model).profile(samplesFor, dumpProfile, progress.callback());
    }
    status("profile of " + std::to_string(profile.tensors.size()) + " tensors over " +
           std::to_string(profile.samples) + " sample" + (profile.samples == 1 ? "" : "s") +
           " written to " + dumpProfile);
    return 0;
  } catch (const Error &e) {
    std::cerr << kToolName << ": error: " << e.what() << "\n";
    return int(e.code());
  } catch (const std::exception &e) {
    std::cerr << kToolName << ": internal error: " << e.what() << "\n";
    return int(ExitCode::Internal);
  }
}
