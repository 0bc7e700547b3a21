//===- PickCheck.cpp - Which build of a model suits a part ----------------===//
#include "bundlefit/driver/PickCheck.h"

#include "bundlefit/driver/FitCheck.h"
#include "bundlefit/driver/Progress.h"
#include "bundlefit/support/Error.h"

#include <set>

namespace bundlefit::driver {

using namespace bundlefit::device;

namespace {

std::vector<std::string> notesFor(const PickCheck &check, const QuantCliOptions &quant) {
  const std::vector<Candidate> &candidates = check.pick.candidates;
  std::vector<std::string> notes;
  std::set<std::string> seen;
  for (const Candidate &c : candidates)
    for (const std::string &estimate : c.estimates)
      if (seen.insert(c.variant.name + estimate).second)
        notes.push_back(c.variant.name + ": estimate: " + estimate);
  for (const Candidate &c : candidates)
    if (!c.portable.empty() && seen.insert(c.variant.name + " portable").second)
      notes.push_back(portableNote(c.variant.name, c.portable));
  bool anyInt8 = false;
  for (const Candidate &c : candidates)
    anyInt8 = anyInt8 || c.variant.precision == Precision::Int8;
  if (anyInt8)
    notes.push_back(std::string(quant.int16x8 ? "int16x8" : "int8") +
                    " rows: the bundle compiled " +
                    (quant.int16x8 ? std::string("with the model's own quantization parameters")
                     : quant.preQuantized ? std::string("with the model's own Q/DQ parameters")
                     : quant.enabled()    ? "with " + quant.profilePath
                                       : std::string("with a synthetic profile (no --load-profile; "
                                                     "sizes do not depend on the ranges)")));
  // X-hifi4-cmsis takes CMSIS-NN only for ops NNLib lacks: say why it can
  // equal X-hifi4 (named as compared: int8 here, int16x8 never offers them).
  const Candidate *hifi = nullptr, *hifiCmsis = nullptr;
  for (const Candidate &c : candidates) {
    if (c.variant.kernels == Kernels::HiFi4 && !hifi)
      hifi = &c;
    if (c.variant.kernels == Kernels::HiFi4WithCmsis && !hifiCmsis)
      hifiCmsis = &c;
  }
  if (hifi && hifiCmsis && hifi->result.totals.flash == hifiCmsis->result.totals.flash &&
      hifi->result.totals.ram == hifiCmsis->result.totals.ram &&
      hifi->result.time.ms == hifiCmsis->result.time.ms)
    notes.push_back(hifiCmsis->variant.name + " equals " + hifi->variant.name +
                    ": NNLib runs every op of this model, so no CMSIS-NN kernel would be linked");
  if (!candidates.empty())
    notes.push_back(candidates.front().result.baselineSource);
  return notes;
}

/// The variants compared, in the candidates' order.
std::vector<Variant> variantsOf(const std::vector<Candidate> &candidates) {
  std::vector<Variant> variants;
  for (const Candidate &c : candidates)
    if (variants.empty() || variants.back().name != c.variant.name)
      variants.push_back(c.variant);
  return variants;
}

nlohmann::json candidateJson(const Candidate &c) {
  return {{"variant", c.variant.name},
          {"family", variantFamily(c.variant)},
          {"weights", weightsPolicyName(c.weights)},
          {"flash", c.result.totals.flash},
          {"ram", c.result.totals.ram},
          {"code", c.result.terms.code},
          {"fits", c.result.fits},
          {"predicted_ms", c.result.time.ms},
          {"buildable", c.buildable},
          {"estimate", estimateJson(c.estimates)},
          {"best", c.best},
          {"problems", c.result.problems},
          {"warnings", c.result.warnings}};
}

} // namespace

int PickCheck::exitCode() const { return pick.best >= 0 ? 0 : int(ExitCode::DoesNotFit); }

std::unique_ptr<PickCheck> checkPick(const BuildOptions &options, const PickQuery &query) {
  auto check = std::make_unique<PickCheck>();
  check->db = loadDeviceDatabase(query.part.deviceFiles);
  check->device = &check->db.get(query.part.device);
  const Device &device = *check->device;
  check->pickRequest.goal = parsePickGoal(query.goal);
  check->pickRequest.allowEstimates = query.allowEstimates;
  for (const std::string &name : query.variants)
    if (!name.empty())
      check->pickRequest.variants.push_back(fitVariant(name, options.quant, query.variantsOption));
  // A pre-quantized model has int8 builds only; an int16x8 one, those of
  // int16x8Builds.
  const bool int16x8 = options.quant.int16x8;
  if (options.quant.preQuantized && check->pickRequest.variants.empty())
    for (const Variant &variant : allVariants())
      if (variant.precision == Precision::Int8 && variantAvailable(device, variant) &&
          (!int16x8 || int16x8Builds(variant)))
        check->pickRequest.variants.push_back(int16x8 ? asInt16x8(variant) : variant);
  check->request = query.part.request;
  check->sizer = std::make_unique<BuildSizer>(options);
  {
    Stage stage("compare builds on " + device.id);
    BuildSizer &sizer = *check->sizer;
    check->pick =
        pickBuild(device, check->request, sizer.footprints(), check->pickRequest,
                  [&sizer](const Device &part, const Variant &variant, const FitRequest &placing) {
                    return sizer.build(part, variant, &placing).footprint;
                  });
  }
  const PickResult &pick = check->pick;
  // No fit: the changes `fit` would suggest for the first variant compared.
  if (pick.best < 0 && !pick.candidates.empty()) {
    FitRequest automatic = check->request;
    automatic.weights = WeightsPolicy::Auto;
    std::vector<const VariantBuild *> builds;
    std::vector<FitResult> fits;
    for (const Variant &variant : check->pickRequest.variants.empty()
                                      ? variantsOf(pick.candidates)
                                      : check->pickRequest.variants) {
      builds.push_back(&check->sizer->build(device, variant));
      fits.push_back(fitModel(device, builds.back()->footprint, automatic));
    }
    std::vector<const FitResult *> verdicts;
    for (const FitResult &fit : fits)
      verdicts.push_back(&fit);
    check->suggestions = suggestChanges(
        {check->db, device, automatic, *check->sizer, builds, verdicts}, query.part.suggest);
  }
  check->notes = notesFor(*check, options.quant);
  return check;
}

nlohmann::json pickReportJson(const PickCheck &check, const std::string &modelPath) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Candidate &c : check.pick.candidates)
    rows.push_back(candidateJson(c));
  return {{"schema", "bundlefit.pick/1"},
          {"model", modelPath},
          {"device", check.device->id},
          {"goal", pickGoalName(check.pickRequest.goal)},
          {"allow_estimates", check.pickRequest.allowEstimates},
          {"candidates", rows},
          {"best", check.pick.best >= 0 ? nlohmann::json(check.pick.best) : nlohmann::json()},
          {"reason", check.pick.reason},
          {"suggestions", suggestionsJson(check.suggestions)},
          {"notes", check.notes}};
}

} // namespace bundlefit::driver
