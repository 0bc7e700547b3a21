//===- BundlefitModule.cpp - `import bundlefit`: fit checks from Python ----===//
//
// The driver library behind the command line, for model searches that ask
// thousands of times whether a model fits: no process start per answer. fit()
// answers exactly what `bundlefit fit` prints: the bundle compiled for the
// part's core, its code size read from the same cache (CodeIdentity.h), so a
// second answer for the same build only plans.
// run() compiles and runs a bundle as `bundlefit run` does (driver/ModelRun.h)
// and hands the outputs back as numpy arrays (RunArrays.h). profile() and
// compare_quant() run the reference interpreter on calibration inputs.
// Every result is the dict of the command's JSON report (the same fields,
// parsed from the same JSON); failures raise bundlefit.Error, whose
// exit_code and category are the command line's (README, "Exit codes").
// The GIL is released while the driver works, so Python threads run fits
// side by side.
//
//===----------------------------------------------------------------------===//
#include "ModelSource.h"
#include "RunArrays.h"

#include "bundlefit/driver/Compilation.h"
#include "bundlefit/driver/ToolInfo.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/reports/JsonText.h"
#include "bundlefit/reports/MemoryReport.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Names.h"
#include "bundlefit/support/OptionChecks.h"
#include "bundlefit/support/OutputFile.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>

#include "CodeIdentity.h" // generated: cmake/CodeIdentity.cmake

namespace py = pybind11;
using namespace bundlefit;
using bundlefit::python::ModelSource;

namespace {

PyObject *errorType = nullptr;

// Arguments are checked as the command line checks its options
// (support/OptionChecks.h), naming the argument: Python hands over any int,
// float or str, and memory_opt=99, time_limit=-5, static_bytes=2**64-12000 or
// a path with a NUL byte (which the C library would cut short) must be an
// error, never a plan.

int memoryOptArgument(int level) {
  if (level < 0 || level > kMaxMemoryOpt)
    throw Error(ExitCode::Usage, "memory_opt " + std::to_string(level) + ": expected 0 to " +
                                     std::to_string(kMaxMemoryOpt));
  return level;
}

const std::string &pathArgument(const std::string &path, const char *argument) {
  if (path.find('\0') != std::string::npos)
    throw Error(ExitCode::Usage,
                std::string(argument) + ": the path holds a NUL byte, which no file name can");
  return path;
}

std::optional<std::string> pathArgument(const std::optional<std::string> &path,
                                        const char *argument) {
  if (path)
    pathArgument(*path, argument);
  return path;
}

const std::vector<std::string> &pathsArgument(const std::vector<std::string> &paths,
                                              const char *argument) {
  for (const std::string &path : paths)
    pathArgument(path, argument);
  return paths;
}

std::optional<uint64_t> bytesArgument(std::optional<uint64_t> bytes, const char *argument) {
  if (bytes)
    checkByteCount(*bytes, argument);
  return bytes;
}

/// One of `choices`, as CLI11's IsMember checks the option.
const std::string &choiceArgument(const std::string &value, const std::vector<std::string> &choices,
                                  const char *argument) {
  if (std::find(choices.begin(), choices.end(), value) != choices.end())
    return value;
  std::string expected;
  for (const std::string &choice : choices)
    expected += (expected.empty() ? "" : ", ") + choice;
  throw Error(ExitCode::Usage,
              std::string(argument) + " '" + value + "': expected one of " + expected);
}

/// A report as the dict `json.loads` makes of the command's JSON.
py::object toPython(const nlohmann::json &report) {
  return py::module_::import("json").attr("loads")(jsonText(report));
}

/// A Model, a path (str or os.PathLike) or bytes.
std::shared_ptr<ModelSource> modelOf(const py::object &model) {
  if (py::isinstance<ModelSource>(model))
    return model.cast<std::shared_ptr<ModelSource>>();
  if (py::isinstance<py::bytes>(model))
    return std::make_shared<ModelSource>(
        ModelSource::fromBytes(model.cast<std::string>(), "model.onnx"));
  return std::make_shared<ModelSource>(ModelSource::fromPath(pathArgument(
      py::str(py::module_::import("os").attr("fspath")(model)).cast<std::string>(), "model")));
}

/// buffer_alignment: as --buffer-alignment, None for the model's default.
uint64_t bufferAlignmentArgument(const std::optional<int64_t> &alignment) {
  if (!alignment)
    return 0;
  const int64_t n = *alignment;
  if (n < int64_t(MemoryPlan::kMinBufferAlignment) ||
      n > int64_t(MemoryPlan::kMaxBufferAlignment) || (n & (n - 1)) != 0)
    throw Error(ExitCode::Usage, "buffer_alignment " + std::to_string(n) +
                                     ": expected a power of two from " +
                                     std::to_string(MemoryPlan::kMinBufferAlignment) + " to " +
                                     std::to_string(MemoryPlan::kMaxBufferAlignment));
  return uint64_t(n);
}

/// The keywords every function shares, in the one struct the command line
/// fills (driver/Compilation.h); a pre-quantized model is marked int8 by the
/// Compilation, as on the command line.
driver::CompilationOptions compilationOptions(const ModelSource &source, int memoryOpt,
                                              const std::optional<int64_t> &bufferAlignment,
                                              const std::optional<std::string> &profile,
                                              const std::string &schema) {
  driver::CompilationOptions options;
  options.model.path = source.path();
  options.model.memoryOpt = memoryOptArgument(memoryOpt);
  options.model.bufferAlignment = bufferAlignmentArgument(bufferAlignment);
  options.quant.profilePath = pathArgument(profile, "profile").value_or("");
  options.quant.schema = schema;
  return options;
}

/// Reports carry the tool and the SHA-256 of the model's bytes, as the
/// command line's do.
py::object stamped(nlohmann::json report, const ModelSource &source) {
  stampReport(report, source.path());
  return toPython(report);
}

/// The part keywords fit() and pick() share (pick passes weights "auto": it
/// varies the placement itself).
driver::PartQuery partQuery(const std::string &device, const std::string &weights,
                            const std::optional<std::string> &reserveRam,
                            const std::optional<std::string> &reserveFlash,
                            std::optional<uint64_t> appRam, std::optional<uint64_t> appFlash,
                            uint64_t staticBytes, const std::vector<std::string> &deviceFiles,
                            bool suggestions, const std::vector<std::string> &suggestParts) {
  driver::PartQuery query;
  query.device = device;
  query.deviceFiles = pathsArgument(deviceFiles, "device_files");
  device::FitRequest &request = query.request;
  request.weights = device::parseWeightsPolicy(weights);
  if (reserveRam)
    request.reserveRam = device::parseHeadroom(*reserveRam, "reserve_ram");
  if (reserveFlash)
    request.reserveFlash = device::parseHeadroom(*reserveFlash, "reserve_flash");
  request.appRam = bytesArgument(appRam, "app_ram");
  request.appFlash = bytesArgument(appFlash, "app_flash");
  request.extraStaticBytes = *bytesArgument(staticBytes, "static_bytes");
  query.suggest = {suggestions, suggestParts};
  return query;
}

py::object fit(const py::object &model, const std::string &device,
               const std::optional<std::string> &variant, const std::string &weights, int memoryOpt,
               const std::optional<int64_t> &bufferAlignment,
               const std::optional<std::string> &profile, const std::string &schema,
               const std::optional<std::string> &reserveRam,
               const std::optional<std::string> &reserveFlash, std::optional<uint64_t> appRam,
               std::optional<uint64_t> appFlash, uint64_t staticBytes,
               const std::vector<std::string> &deviceFiles, bool suggestions,
               const std::vector<std::string> &suggestParts) {
  std::shared_ptr<ModelSource> source = modelOf(model);
  driver::CompilationOptions options =
      compilationOptions(*source, memoryOpt, bufferAlignment, profile, schema);
  driver::FitQuery query;
  query.part = partQuery(device, weights, reserveRam, reserveFlash, appRam, appFlash, staticBytes,
                         deviceFiles, suggestions, suggestParts);
  query.variant = variant.value_or("");
  query.variantOption = "variant";
  nlohmann::json report;
  {
    py::gil_scoped_release unlocked;
    std::unique_ptr<driver::FitCheck> check = driver::Compilation(options).fit(query);
    report = driver::fitReportJson(*check, source->label());
  }
  return stamped(std::move(report), *source);
}

py::object pick(const py::object &model, const std::string &device,
                const std::vector<std::string> &variants, const std::string &goal,
                bool allowEstimates, int memoryOpt, const std::optional<int64_t> &bufferAlignment,
                const std::optional<std::string> &profile, const std::string &schema,
                const std::optional<std::string> &reserveRam,
                const std::optional<std::string> &reserveFlash, std::optional<uint64_t> appRam,
                std::optional<uint64_t> appFlash, uint64_t staticBytes,
                const std::vector<std::string> &deviceFiles, bool suggestions,
                const std::vector<std::string> &suggestParts) {
  std::shared_ptr<ModelSource> source = modelOf(model);
  driver::CompilationOptions options =
      compilationOptions(*source, memoryOpt, bufferAlignment, profile, schema);
  driver::PickQuery query;
  query.part = partQuery(device, "auto", reserveRam, reserveFlash, appRam, appFlash, staticBytes,
                         deviceFiles, suggestions, suggestParts);
  query.variants = variants;
  query.goal = goal;
  query.allowEstimates = allowEstimates;
  query.variantsOption = "variants";
  nlohmann::json report;
  {
    py::gil_scoped_release unlocked;
    std::unique_ptr<driver::PickCheck> check = driver::Compilation(options).pick(query);
    report = driver::pickReportJson(*check, source->label());
  }
  return stamped(std::move(report), *source);
}

py::object plan(const py::object &model, int memoryOpt,
                const std::optional<int64_t> &bufferAlignment,
                const std::optional<std::string> &profile, const std::string &schema,
                double timeLimit) {
  checkFiniteRange(timeLimit, "time_limit", 0, kMaxSeconds);
  std::shared_ptr<ModelSource> source = modelOf(model);
  driver::CompilationOptions options =
      compilationOptions(*source, memoryOpt, bufferAlignment, profile, schema);
  options.timeLimitSeconds = timeLimit;
  nlohmann::json report;
  {
    py::gil_scoped_release unlocked;
    // The driver's plan, as `bundlefit plan` runs it.
    driver::Compilation compilation(std::move(options));
    const PlannedModel &planned = compilation.plan();
    report = memoryReportJson(*planned.graph, planned.plan,
                              networkNameFromPath(compilation.options().model.path));
  }
  return stamped(std::move(report), *source);
}

/// Writes the bundle directory and returns its <net>.memory.json (what
/// `bundlefit compile --json` prints).
py::object compile(const py::object &model, const std::string &outputDir, const std::string &target,
                   int memoryOpt, const std::optional<int64_t> &bufferAlignment,
                   const std::optional<std::string> &profile, const std::string &schema,
                   bool useCmsis, const std::string &opt) {
  std::shared_ptr<ModelSource> source = modelOf(model);
  driver::CompilationOptions options =
      compilationOptions(*source, memoryOpt, bufferAlignment, profile, schema);
  options.codegen.target = target;
  options.codegen.useCmsis = useCmsis;
  options.codegen.optLevel = opt;
  nlohmann::json report;
  {
    py::gil_scoped_release unlocked;
    driver::Compilation compilation(std::move(options));
    const CompiledBundle &bundle = compilation.writeBundle(pathArgument(outputDir, "output_dir"));
    std::string path = outputDir + "/" + bundle.networkName + ".memory.json";
    std::ifstream in(path);
    report = nlohmann::json::parse(in, nullptr, false);
    if (report.is_discarded())
      throw Error(ExitCode::Internal, path + ": the bundle's memory report is not JSON");
  }
  return stamped(std::move(report), *source);
}

/// `bundlefit run`: the bundlefit.run/1 report (with "file" fields when
/// output_dir is given) plus "arrays", the outputs by name.
py::object run(const py::object &model, const py::object &inputs, const std::string &target,
               const std::optional<std::string> &outputDir, bool compare, int memoryOpt,
               const std::optional<int64_t> &bufferAlignment,
               const std::optional<std::string> &profile, const std::string &schema, bool useCmsis,
               const std::optional<std::string> &cmsisNn, const std::string &opt,
               const std::optional<std::string> &networkName, double timeout) {
  std::shared_ptr<ModelSource> source = modelOf(model);
  driver::CompilationOptions options =
      compilationOptions(*source, memoryOpt, bufferAlignment, profile, schema);
  options.codegen.target = target;
  options.codegen.useCmsis = useCmsis;
  options.codegen.optLevel = opt;
  options.codegen.networkName = networkName.value_or("");
  options.codegen.cmsisNnDir = pathArgument(cmsisNn, "cmsis_nn").value_or("");
  driver::RunQuery query;
  query.compare = compare;
  checkFiniteRange(timeout, "timeout", 0.001, kMaxSeconds);
  query.timeoutSeconds = timeout;
  query.inputOption = "inputs";
  std::vector<driver::RunInput> given = bundlefit::python::runInputsOf(inputs);
  if (pathArgument(outputDir, "output_dir"))
    checkDirectoryCreatable(*outputDir, "output directory");
  driver::ModelRun result;
  nlohmann::json report;
  {
    py::gil_scoped_release unlocked;
    result = driver::Compilation(std::move(options)).run(given, query);
    std::vector<std::string> files;
    if (outputDir)
      files = driver::writeRunOutputs(result, *outputDir);
    report = driver::runReportJson(result, files);
  }
  py::object dict = stamped(std::move(report), *source);
  dict["arrays"] = bundlefit::python::outputArrays(result);
  return dict;
}

/// The calibration inputs of profile() and compare_quant(): a path or a
/// list of them (.npy, PNG or directories, as the command line's INPUTS),
/// read as the command line reads them once the model is loaded.
driver::SampleLoader calibrationArgument(const py::object &inputs, const std::string &imageMode,
                                         const std::string &imageLayout,
                                         const std::string &channelOrder) {
  py::object fspath = py::module_::import("os").attr("fspath");
  py::list items = py::isinstance<py::str>(inputs) || py::hasattr(inputs, "__fspath__")
                       ? py::list(py::make_tuple(inputs))
                       : py::list(inputs);
  CalibrationCliOptions calibration;
  for (const py::handle &item : items)
    calibration.inputs.push_back(pathArgument(py::str(fspath(item)).cast<std::string>(), "inputs"));
  if (calibration.inputs.empty())
    throw Error(ExitCode::Usage, "inputs: no calibration inputs given");
  calibration.imageMode =
      choiceArgument(imageMode, {"0to1", "neg1to1", "0to255", "neg128to127"}, "image_mode");
  calibration.imageLayout = choiceArgument(imageLayout, {"NCHW", "NHWC"}, "image_layout");
  calibration.channelOrder = choiceArgument(channelOrder, {"RGB", "BGR"}, "image_channel_order");
  return [calibration](const Graph &graph) { return loadCalibrationSamples(graph, calibration); };
}

/// `bundlefit profile`: the bundlefit.profile/1 report; `output` also
/// writes the profile YAML, as -o does.
py::object profile(const py::object &model, const py::object &inputs,
                   const std::optional<std::string> &output, const std::string &imageMode,
                   const std::string &imageLayout, const std::string &channelOrder) {
  std::shared_ptr<ModelSource> source = modelOf(model);
  driver::SampleLoader samples = calibrationArgument(inputs, imageMode, imageLayout, channelOrder);
  const std::string outputPath = pathArgument(output, "output").value_or("");
  if (!outputPath.empty())
    checkOutputFile(outputPath, "output");
  nlohmann::json report;
  {
    py::gil_scoped_release unlocked;
    driver::Compilation compilation(
        compilationOptions(*source, kDefaultMemoryOpt, std::nullopt, {}, "asymmetric"));
    ProfileData recorded = compilation.profile(samples, outputPath);
    report = driver::profileReportJson(recorded, source->label(), outputPath);
  }
  return stamped(std::move(report), *source);
}

/// `bundlefit compare-quant`: the bundlefit.compare-quant/1 report.
py::object compareQuant(const py::object &model, const py::object &inputs,
                        const std::string &profile, const std::string &schema,
                        const std::string &imageMode, const std::string &imageLayout,
                        const std::string &channelOrder) {
  std::shared_ptr<ModelSource> source = modelOf(model);
  driver::SampleLoader samples = calibrationArgument(inputs, imageMode, imageLayout, channelOrder);
  nlohmann::json report;
  {
    py::gil_scoped_release unlocked;
    driver::Compilation compilation(
        compilationOptions(*source, kDefaultMemoryOpt, std::nullopt, profile, schema));
    driver::QuantComparison comparison = compilation.compareQuant(samples);
    report = driver::quantComparisonJson(comparison, source->label(), profile, schema);
  }
  return stamped(std::move(report), *source);
}

void translateErrors(std::exception_ptr pointer) {
  try {
    if (pointer)
      std::rethrow_exception(pointer);
  } catch (const Error &e) {
    py::object error = py::handle(errorType)(e.what());
    error.attr("exit_code") = int(e.code());
    error.attr("category") = exitCategoryName(e.code());
    PyErr_SetObject(errorType, error.ptr());
  }
}

} // namespace

PYBIND11_MODULE(bundlefit, m) {
  m.doc() = "bundlefit: memory plans and fit verdicts for ONNX models on microcontrollers";
  m.attr("__version__") = bundlefitVersion();
  // The command line names its code the same way: fit() reads the code sizes
  // `bundlefit fit` cached, and the other way round.
  driver::setCodeIdentity(BUNDLEFIT_CODE_IDENTITY);
  errorType = PyErr_NewExceptionWithDoc(
      "bundlefit.Error",
      "A bundlefit failure: str() is the one-line message naming the model, node or option; "
      "exit_code and category are the command line's (e.g. 4, 'bad_input_file').",
      PyExc_Exception, nullptr);
  m.attr("Error") = py::handle(errorType);
  py::register_exception_translator(translateErrors);

  py::class_<ModelSource, std::shared_ptr<ModelSource>>(m, "Model",
                                                        "An ONNX model from a file or from bytes")
      .def_property_readonly("path", &ModelSource::path, "The file the driver reads")
      .def_property_readonly("name", &ModelSource::label, "What reports call it")
      .def("__repr__", [](const ModelSource &s) { return "<bundlefit.Model " + s.label() + ">"; });

  m.def(
      "load",
      [](const py::object &source, const std::optional<std::string> &name) {
        if (py::isinstance<py::bytes>(source))
          return std::make_shared<ModelSource>(
              ModelSource::fromBytes(source.cast<std::string>(), name.value_or("model.onnx")));
        return modelOf(source);
      },
      py::arg("source"), py::arg("name") = py::none(),
      "A model from a path or from bytes (onnx.ModelProto.SerializeToString()); `name` names bytes "
      "in reports (default model.onnx)");
  m.def("fit", &fit, py::arg("model"), py::kw_only(), py::arg("device"),
        py::arg("variant") = py::none(), py::arg("weights") = "auto", py::arg("memory_opt") = 2,
        py::arg("buffer_alignment") = py::none(), py::arg("profile") = py::none(),
        py::arg("quantization_schema") = "asymmetric", py::arg("reserve_ram") = py::none(),
        py::arg("reserve_flash") = py::none(), py::arg("app_ram") = py::none(),
        py::arg("app_flash") = py::none(), py::arg("static_bytes") = 0,
        py::arg("device_files") = std::vector<std::string>{}, py::arg("suggestions") = true,
        py::arg("suggest_parts") = std::vector<std::string>{},
        "Does the model fit the part: the bundlefit.fit/1 report of `bundlefit fit --json` as a "
        "dict: the bundle compiled for the part's core, its code size cached (the cache the "
        "command line uses, so a build either one compiled is only planned again). When it does "
        "not fit, 'suggestions' lists checked changes that would (suggestions=False: none, as "
        "--no-suggestions; suggest_parts: the parts to try, as --suggest-parts).");
  m.def("pick", &pick, py::arg("model"), py::kw_only(), py::arg("device"),
        py::arg("variants") = std::vector<std::string>{}, py::arg("goal") = "latency",
        py::arg("allow_estimates") = false, py::arg("memory_opt") = 2,
        py::arg("buffer_alignment") = py::none(), py::arg("profile") = py::none(),
        py::arg("quantization_schema") = "asymmetric", py::arg("reserve_ram") = py::none(),
        py::arg("reserve_flash") = py::none(), py::arg("app_ram") = py::none(),
        py::arg("app_flash") = py::none(), py::arg("static_bytes") = 0,
        py::arg("device_files") = std::vector<std::string>{}, py::arg("suggestions") = true,
        py::arg("suggest_parts") = std::vector<std::string>{},
        "Which build suits the part: the bundlefit.pick/1 report of `bundlefit pick` as a dict "
        "(every variant compiled for the part's core, as the command does; 'best' indexes "
        "'candidates', None when nothing fits)");
  m.def("plan", &plan, py::arg("model"), py::kw_only(), py::arg("memory_opt") = 2,
        py::arg("buffer_alignment") = py::none(), py::arg("profile") = py::none(),
        py::arg("quantization_schema") = "asymmetric", py::arg("time_limit") = 5.0,
        "The memory plan: the bundlefit.memory/1 report of `bundlefit plan`");
  m.def("compile", &compile, py::arg("model"), py::arg("output_dir"), py::kw_only(),
        py::arg("target") = "host", py::arg("memory_opt") = 2,
        py::arg("buffer_alignment") = py::none(), py::arg("profile") = py::none(),
        py::arg("quantization_schema") = "asymmetric", py::arg("use_cmsis") = false,
        py::arg("opt") = "O2",
        "Writes the bundle directory (all or nothing); returns its <net>.memory.json");
  m.def("run", &run, py::arg("model"), py::arg("inputs"), py::kw_only(), py::arg("target") = "host",
        py::arg("output_dir") = py::none(), py::arg("compare") = false, py::arg("memory_opt") = 2,
        py::arg("buffer_alignment") = py::none(), py::arg("profile") = py::none(),
        py::arg("quantization_schema") = "asymmetric", py::arg("use_cmsis") = false,
        py::arg("cmsis_nn") = py::none(), py::arg("opt") = "O2",
        py::arg("network_name") = py::none(), py::arg("timeout") = 300.0,
        "Compiles the bundle, runs it on the host or a Cortex-M under QEMU as `bundlefit run` "
        "does, and returns its bundlefit.run/1 report as a dict plus 'arrays', the outputs as "
        "numpy arrays by name. inputs: an array or .npy path, a list of them in the model's input "
        "order, or a dict from input name to either; N samples stacked along the first dimension "
        "run as a batch. compare=True adds the reference interpreter's comparison to each "
        "output; output_dir also writes the outputs as .npy files, as the command line does.");
  m.def("profile", &profile, py::arg("model"), py::arg("inputs"), py::kw_only(),
        py::arg("output") = py::none(), py::arg("image_mode") = "0to1",
        py::arg("image_layout") = "NCHW", py::arg("image_channel_order") = "RGB",
        "Records each tensor's value range on calibration inputs (a path or a list: .npy "
        "files, PNG images or directories, as `bundlefit profile` takes them): the "
        "bundlefit.profile/1 report of `bundlefit profile --json`; output also writes the "
        "profile YAML that profile= of the other functions reads");
  m.def("compare_quant", &compareQuant, py::arg("model"), py::arg("inputs"), py::kw_only(),
        py::arg("profile"), py::arg("quantization_schema") = "asymmetric",
        py::arg("image_mode") = "0to1", py::arg("image_layout") = "NCHW",
        py::arg("image_channel_order") = "RGB",
        "The int8 model (quantized with profile) against float on calibration inputs: the "
        "bundlefit.compare-quant/1 report of `bundlefit compare-quant --json`, each tensor's "
        "SNR worst first and each output's top-1 agreement");
}
