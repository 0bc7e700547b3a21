//===- FitCheck.cpp - Does a model fit a part: the verdict and its report --===//
#include "bundlefit/driver/FitCheck.h"

#include "bundlefit/driver/Progress.h"
#include "bundlefit/support/Error.h"

#include <iostream>
#include <mutex>
#include <set>

namespace bundlefit::driver {

using namespace bundlefit::device;

namespace {

std::vector<std::string> notesFor(const Device &device, const ModelFootprint &fp,
                                  const FitResult &fit) {
  std::vector<std::string> notes;
  for (const std::string &estimate : fp.estimates)
    notes.push_back("estimate: " + estimate);
  if (!fp.portable.empty())
    notes.push_back(portableNote(fp.variant.name, fp.portable));
  if (!fp.buildable)
    notes.push_back(fp.variant.name + " is not buildable: bundlefit generates no HiFi4 DSP code; "
                                      "this verdict is planning and cost only");
  const KernelLibrary &library = mainLibrary(device, fp.variant);
  if (!library.calibrated)
    notes.push_back(library.key + " cost figures on " + device.id +
                    " are not calibrated on a published "
                    "timing: " +
                    library.source);
  notes.push_back(fit.baselineSource);
  return notes;
}

/// What is reported is what gets built: the weight segments of the build
/// sized are the fit's placement, tensor for tensor.
void checkPlacementBuilt(const MemoryPlan &plan, const FitResult &fit) {
  if (plan.weightSegments.empty())
    return;
  for (size_t i = 0; i < plan.constants.size() && i < fit.weightRegion.size(); ++i) {
    const Value *constant = plan.constants[i];
    const WeightSegment &segment =
        plan.weightSegments[plan.segmentAt(plan.placementOf(constant).offset)];
    if (!fit.weightRegion[i] || segment.region != fit.weightRegion[i]->name)
      fatalInternal("weight '" + constant->name + "' is built into " + segment.region +
                    " but the fit places it in " +
                    (fit.weightRegion[i] ? fit.weightRegion[i]->name : std::string("none")));
  }
}

} // namespace

int FitCheck::exitCode() const { return fit.fits ? 0 : int(ExitCode::DoesNotFit); }

DeviceDatabase loadDeviceDatabase(const std::vector<std::string> &deviceFiles) {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  // Once per process: fit --batch loads the database for every model.
  static std::mutex mutex;
  static std::set<std::string> warned;
  for (const std::string &warning : db.warnings()) {
    std::lock_guard<std::mutex> lock(mutex);
    if (warned.insert(warning).second)
      std::cerr << "bundlefit: warning: " << warning << "\n";
  }
  for (const std::string &file : deviceFiles)
    db.addFile(file);
  return db;
}

std::string portableNote(const std::string &variant, const std::vector<std::string> &portable) {
  constexpr size_t kListed = 3;
  std::string text = variant + ": " + std::to_string(portable.size()) +
                     (portable.size() == 1 ? " node stays" : " nodes stay") +
                     " on bundlefit's kernels (no CMSIS-NN function gives its bytes): ";
  for (size_t i = 0; i < portable.size() && i < kListed; ++i)
    text += (i ? "; " : "") + portable[i];
  if (portable.size() > kListed)
    text += "; and " + std::to_string(portable.size() - kListed) + " more (compile -v lists them)";
  return text;
}

Variant fitVariant(const std::string &name, const QuantCliOptions &quant,
                   const std::string &option) {
  // A profile means an int8 build unless the variant is named.
  Variant variant = parseVariant(name.empty() ? (quant.enabled() ? "int8" : "float") : name);
  const bool integer = variant.precision == device::Precision::Int8;
  // One line naming the model, the option and the builds the model has.
  auto refuse = [&](const std::string &why) {
    return Error(ExitCode::Usage, (quant.markedModel.empty() ? "" : quant.markedModel + ": ") +
                                      option + " " + name + ": " + why);
  };
  if (quant.int16x8 && !integer)
    throw refuse("the model is int16x8 (int16 activations, int8 weights); "
                 "it has integer builds only: int16x8, int16x8-cmsis");
  if (quant.preQuantized && !integer)
    throw refuse("the model is pre-quantized "
                 "(QuantizeLinear/DequantizeLinear, or an int8 TFLite model); "
                 "it has int8 builds only");
  if (quant.int16x8 && !int16x8Builds(variant))
    throw refuse("bundlefit builds no int16x8 HiFi4 bundle (it generates no HiFi4 code and "
                 "has no NNLib figures for int16 operators); the model's builds: int16x8, "
                 "int16x8-cmsis");
  if (!quant.int16x8 && isInt16x8(variant))
    throw refuse("the model is not int16x8 (only a TFLite model with int16 activations is); "
                 "use " +
                 option + " int8" + name.substr(std::string("int16x8").size()));
  // int8 names, as users passed them before, name the int16x8 build.
  return quant.int16x8 ? asInt16x8(variant) : variant;
}

std::unique_ptr<FitCheck> checkFit(const BuildOptions &options, const FitQuery &query) {
  auto check = std::make_unique<FitCheck>();
  check->db = loadDeviceDatabase(query.part.deviceFiles);
  check->device = &check->db.get(query.part.device);
  const Device &device = *check->device;
  check->variant = fitVariant(query.variant, options.quant, query.variantOption);
  check->request = query.part.request;
  const FitRequest &request = check->request;
  if (!variantAvailable(device, check->variant))
    mainLibrary(device, check->variant); // Throws: the part lacks the library.

  BuildOptions build = options;
  build.arenaRoomsFor = request; // the part's RAM regions are capacities the arena plan targets
  check->sizer = std::make_unique<BuildSizer>(build);
  // Placed as the fit places it: the code sized is the bundle `compile
  // --device` builds.
  check->build = &check->sizer->build(device, check->variant, &request);
  ModelFootprint &fp = check->footprint;
  fp = check->build->footprint;
  if (request.codeBytes)
    fp.codeEstimated = false; // the caller measured it (e.g. from a bundle's memory.json)
  check->fit = fitModel(device, fp, request);
  if (const CompiledBundle *bundle = check->build->bundle.get())
    checkPlacementBuilt(bundle->plan, check->fit);
  if (const CompiledBundle *bundle = check->build->bundle.get()) {
    check->arenaCapacity = bundle->plan.activationCapacity;
    check->arenaProof = bundle->plan.activationsProof;
  }
  if (!check->fit.fits)
    check->suggestions =
        suggestChanges({check->db, device, request, *check->sizer, {check->build}, {&check->fit}},
                       query.part.suggest);
  check->flexram = suggestFlexRam(device, fp, request);
  if (!check->fit.fits && check->flexram && query.part.suggest.enabled) {
    const FitResult &split = *check->flexram->result;
    check->suggestions.insert(check->suggestions.begin(),
                              {"FlexRAM banks " + check->flexram->reason,
                               true,
                               split.totals.flash,
                               split.totals.ram,
                               split.time.ms,
                               {},
                               {}});
  }
  check->notes = notesFor(device, fp, check->fit);
  return check;
}

nlohmann::json codeJson(const VariantBuild &build, const FitRequest &request) {
  const CodeBreakdown &c = build.code;
  const char *source = request.codeBytes ? "given" : !build.bundle ? "device file" : "compiled";
  return {{"source", source},     {"target", build.target}, {"text", c.text},
          {"rodata", c.rodata},   {"runtime", c.runtime},   {"runtime_measured", c.runtimeMeasured},
          {"library", c.library}, {"cached", c.fromCache}};
}

nlohmann::json suggestionsJson(const std::vector<Suggestion> &suggestions) {
  nlohmann::json list = nlohmann::json::array();
  for (const Suggestion &s : suggestions)
    list.push_back({{"change", s.change},
                    {"fits", s.fits},
                    {"flash", s.flash},
                    {"ram", s.ram},
                    {"predicted_ms", s.ms},
                    {"options", s.options},
                    {"estimate", estimateJson(s.estimates)}});
  return list;
}

nlohmann::json fitReportJson(const FitCheck &check, const std::string &modelPath) {
  nlohmann::json report = fitResultJson(*check.device, check.footprint, check.fit);
  report["schema"] = "bundlefit.fit/1";
  report["model"] = modelPath;
  report["code"] = codeJson(*check.build, check.request);
  report["suggestions"] = suggestionsJson(check.suggestions);
  if (const std::optional<FlexRamSplit> &f = check.flexram)
    report["flexram"] = {{"itcm_banks", f->itcm},
                         {"dtcm_banks", f->dtcm},
                         {"ocram_banks", f->ocram},
                         {"changed", f->changed},
                         {"predicted_ms", f->result->time.ms},
                         {"summary", f->reason}};
  report["notes"] = check.notes;
  report["arena_plan"] = {{"capacity", check.arenaCapacity}, {"proof", check.arenaProof}};
  return report;
}

} // namespace bundlefit::driver
