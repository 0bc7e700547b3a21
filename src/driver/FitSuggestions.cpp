//===- FitSuggestions.cpp - What would make a model fit, checked and cheap -===//
#include "bundlefit/driver/FitSuggestions.h"

#include "bundlefit/driver/PartLink.h"
#include "bundlefit/driver/Progress.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Format.h"

#include <algorithm>
#include <memory>
#include <optional>

namespace bundlefit::driver {

using namespace bundlefit::device;

namespace {

bool over(const FitResult &fit, bool flash) {
  for (const RegionUse &use : fit.regions)
    if (use.over() && use.region->isFlash() == flash)
      return true;
  return false;
}

Suggestion suggestionOf(std::string change, const FitResult &fit, std::vector<std::string> options,
                        std::vector<std::string> estimates = {}) {
  return {std::move(change), fit.fits,           fit.totals.flash,    fit.totals.ram,
          fit.time.ms,       std::move(options), std::move(estimates)};
}

/// The fit of `fp` on `device` under the request's placement, else the first
/// other placement that fits (auto, flash, ram).
FitResult bestPlacement(const Device &device, const ModelFootprint &fp, FitRequest request) {
  FitResult first = fitModel(device, fp, request);
  if (first.fits)
    return first;
  for (WeightsPolicy weights : {WeightsPolicy::Auto, WeightsPolicy::Flash, WeightsPolicy::Ram}) {
    if (weights == first.weights)
      continue;
    request.weights = weights;
    FitResult fit = fitModel(device, fp, request);
    if (fit.fits)
      return fit;
  }
  return first;
}

std::string placementChange(WeightsPolicy weights) {
  switch (weights) {
  case WeightsPolicy::Flash:
    return "weights read from Flash (--weights flash)";
  case WeightsPolicy::Ram:
    return "weights copied to RAM (--weights ram)";
  case WeightsPolicy::Given:
    return "weights placed as a placement file says (--weights FILE)";
  case WeightsPolicy::Auto:
    break;
  }
  return "weights placement auto (RAM where it fits, rest read from Flash)";
}

bool sameCore(const PartToolchain &a, const PartToolchain &b) {
  return a.codegenTarget == b.codegenTarget && a.floatAbi == b.floatAbi;
}

/// `build`'s plan on another part: that part's libraries and memory map, the
/// code for its core from the code-size cache (or the same compiled object
/// when the core is the same), else the code compiled for this core, labelled.
/// None when the plan would differ there (another CMSIS-NN build, HiFi4) or
/// the part cannot run the variant.
std::optional<ModelFootprint> footprintOnPart(const VariantBuild &build, const Device &from,
                                              const Device &part, const BuildSizer &sizer,
                                              std::vector<std::string> &estimates) {
  const Variant &variant = build.footprint.variant;
  if (!build.bundle || !variantAvailable(part, variant))
    return std::nullopt;
  if (variant.kernels == Kernels::CmsisNn &&
      cmsisExtensionOf(part.bundleCore()) != cmsisExtensionOf(from.bundleCore()))
    return std::nullopt;
  std::optional<PartToolchain> toolchain;
  try {
    toolchain = partToolchain(part);
  } catch (const Error &e) {
    if (e.code() != ExitCode::Unsupported)
      throw;
    return std::nullopt; // no code generation for that part's core
  }
  ModelFootprint fp = footprintOfPlan(build.bundle->plan, variant, part);
  fp.buildable = build.buildable;
  fp.estimates = build.estimates;
  if (sameCore(*toolchain, partToolchain(from))) {
    fp.codeBytes = build.code.total();
  } else if (std::optional<CodeBreakdown> cached = sizer.cachedCode(part, variant);
             cached && variant.kernels != Kernels::CmsisNn) {
    fp.codeBytes = cached->total();
  } else {
    // The same layers compiled for another Cortex-M: the nearest figure
    // there is without compiling (labelled; the code-size cache has the
    // exact one once that part is fitted).
    fp.codeBytes = build.code.total();
    estimates.push_back("code: " + withThousands(fp.codeBytes) + " B as compiled for " +
                        build.target + ", not yet for " + toolchain->codegenTarget);
  }
  fp.codeEstimated = !estimates.empty() || build.footprint.codeEstimated;
  return fp;
}

/// The parts to try: the user's list, else the other parts (not boards) of
/// the device's family.
std::vector<const Device *> candidateParts(const SuggestionInput &input,
                                           const SuggestOptions &options) {
  std::vector<const Device *> parts;
  if (!options.parts.empty()) {
    for (const std::string &name : options.parts) {
      const Device &part = input.db.get(name, "--suggest-parts");
      if (part.id != input.device.id && std::find(parts.begin(), parts.end(), &part) == parts.end())
        parts.push_back(&part);
    }
    return parts;
  }
  const std::string family = partFamily(input.db, input.device);
  for (const Device &part : input.db.devices())
    if (part.board.empty() && part.id != input.device.id && partFamily(input.db, part) == family)
      parts.push_back(&part);
  return parts;
}

/// The parts that hold `build` (weights auto), smallest (Flash + RAM) first:
/// all of them for a user's list, else the smallest of the family.
std::vector<Suggestion> partsHolding(const SuggestionInput &input, const SuggestOptions &options,
                                     const std::vector<const Device *> &parts,
                                     const VariantBuild &build, const Variant &asked,
                                     int memoryOpt) {
  struct Holding {
    const Device *part;
    FitResult fit;
    std::vector<std::string> estimates;
  };
  std::vector<Holding> holding;
  for (const Device *part : parts) {
    std::vector<std::string> estimates;
    std::optional<ModelFootprint> fp =
        footprintOnPart(build, input.device, *part, input.sizer, estimates);
    if (!fp)
      continue;
    FitRequest request = input.request;
    request.weights = WeightsPolicy::Auto;
    FitResult fit = fitModel(*part, *fp, request);
    if (fit.fits)
      holding.push_back({part, std::move(fit), std::move(estimates)});
  }
  std::stable_sort(holding.begin(), holding.end(), [](const Holding &a, const Holding &b) {
    uint64_t sizeA = a.part->totalFlash() + a.part->totalRam();
    uint64_t sizeB = b.part->totalFlash() + b.part->totalRam();
    return sizeA != sizeB ? sizeA < sizeB : a.fit.time.ms < b.fit.time.ms;
  });
  if (options.parts.empty() && holding.size() > 1)
    holding.resize(1);
  const Variant &variant = build.footprint.variant;
  std::vector<Suggestion> suggestions;
  for (Holding &h : holding) {
    std::string change = "use part " + h.part->id + " (" + h.part->name + ")";
    if (options.parts.empty())
      change += ", the smallest " + partFamily(input.db, *h.part) + " part that holds it";
    std::vector<std::string> flags = {"--device", h.part->id};
    if (variant.name != asked.name) {
      change += ", quantized to " + variant.name;
      flags.insert(flags.end(), {"--variant", variant.name});
    }
    if (memoryOpt != input.sizer.options().model.memoryOpt) {
      change += ", --memory-opt " + std::to_string(memoryOpt);
      flags.insert(flags.end(), {"--memory-opt", std::to_string(memoryOpt)});
    }
    if (input.request.weights != WeightsPolicy::Auto)
      flags.insert(flags.end(), {"--weights", "auto"});
    suggestions.push_back(
        suggestionOf(change + ", weights auto", h.fit, std::move(flags), std::move(h.estimates)));
  }
  return suggestions;
}

/// The least Flash and RAM any int8 build of the float `fp` could take: each
/// weight tensor of more than 64 bytes at least a quarter of its float size
/// (64-aligned), the same inputs and outputs (they stay float), no
/// activations and no code. When this does not fit, no int8 build does.
ModelFootprint int8LowerBound(const ModelFootprint &fp) {
  ModelFootprint bound = fp;
  bound.variant = parseVariant("int8");
  bound.constantBytes = 0;
  for (const WeightTensor &weight : fp.weights)
    if (weight.bytes > 64)
      bound.constantBytes += alignUp((weight.bytes - 63 + 3) / 4, 64);
  bound.activationsBytes = bound.activationsLowerBound = bound.scratchBytes = 0;
  bound.codeBytes = 0;
  bound.weights.clear();
  bound.layers.clear();
  return bound;
}

bool lowerBoundFits(const Device &part, const ModelFootprint &bound, FitRequest request) {
  if (!variantAvailable(part, bound.variant))
    return false;
  request.weights = WeightsPolicy::Flash;
  return fitModel(part, bound, request).fits;
}

bool hasInt8Build(const std::vector<const VariantBuild *> &known) {
  for (const VariantBuild *build : known)
    if (build->footprint.variant.precision == Precision::Int8)
      return true;
  return false;
}

} // namespace

std::string partFamily(const DeviceDatabase &db, const Device &device) {
  if (!device.part.empty())
    if (const Device *part = db.find(device.part))
      return part->vendor;
  return device.vendor;
}

namespace {

/// One call of suggestChanges: what it knows, and the builds it made.
class Suggester {
public:
  Suggester(const SuggestionInput &input, const SuggestOptions &options)
      : input_(input), options_(options), device_(input.device),
        asked_(input.known.front()->footprint.variant),
        level_(input.sizer.options().model.memoryOpt), parts_(candidateParts(input, options)) {}

  /// Another placement of each build already sized.
  void placements(std::vector<Suggestion> &out) const;
  /// The builds already sized on a part of the family (or the user's list):
  /// the first build some part holds.
  std::vector<Suggestion> partsForKnownBuilds() const;
  /// The one more build the excess calls for, if any; `onParts` gets the
  /// parts that hold it when it does not fit here and `partFound` is false.
  void oneMoreBuild(bool partFound, std::vector<Suggestion> &out, std::vector<Suggestion> &onParts);

private:
  const VariantBuild &buildAt(int memoryOpt, const Variant &variant);
  BuildSizer &sizerAt(int memoryOpt) const;
  /// `fit` of `build` as the bundle placed for `fit.weights` sizes it (the
  /// code of a placed bundle depends on its weight segments): what following
  /// the suggestion reports.
  FitResult placedFit(const VariantBuild &build, const FitResult &fit, int memoryOpt) const;
  Suggestion checked(std::string change, const VariantBuild &build, int memoryOpt) const;
  void int8Build(bool partFound, std::vector<Suggestion> &out, std::vector<Suggestion> &onParts);

  const SuggestionInput &input_;
  const SuggestOptions &options_;
  const Device &device_;
  const Variant asked_;
  const int level_;
  const std::vector<const Device *> parts_;
  std::vector<std::unique_ptr<BuildSizer>> sizers_; ///< Builds at other levels.
};

void Suggester::placements(std::vector<Suggestion> &out) const {
  for (size_t i = 0; i < input_.known.size(); ++i) {
    const ModelFootprint &fp = input_.known[i]->footprint;
    for (WeightsPolicy weights : {WeightsPolicy::Auto, WeightsPolicy::Flash, WeightsPolicy::Ram}) {
      if (weights == input_.fits[i]->weights)
        continue;
      FitRequest request = input_.request;
      request.weights = weights;
      FitResult fit = fitModel(device_, fp, request);
      if (!fit.fits)
        continue;
      fit = placedFit(*input_.known[i], fit, level_);
      std::string change = placementChange(weights);
      std::vector<std::string> flags = {"--weights", weightsPolicyName(weights)};
      if (fp.variant.name != asked_.name) {
        change = fp.variant.name + " build, " + change;
        flags.insert(flags.begin(), {"--variant", fp.variant.name});
      }
      out.push_back(suggestionOf(change, fit, std::move(flags)));
      break;
    }
  }
}

std::vector<Suggestion> Suggester::partsForKnownBuilds() const {
  for (const VariantBuild *build : input_.known) {
    std::vector<Suggestion> found = partsHolding(input_, options_, parts_, *build, asked_, level_);
    if (!found.empty())
      return found;
  }
  return {};
}

/// Placed as the fit's request places it, as `fit` builds its own.
const VariantBuild &Suggester::buildAt(int memoryOpt, const Variant &variant) {
  if (memoryOpt == level_)
    return input_.sizer.build(device_, variant, &input_.request);
  BuildOptions changed = input_.sizer.options();
  changed.model.memoryOpt = memoryOpt;
  sizers_.push_back(std::make_unique<BuildSizer>(changed));
  return sizers_.back()->build(device_, variant, &input_.request);
}

BuildSizer &Suggester::sizerAt(int memoryOpt) const {
  if (memoryOpt == level_ || sizers_.empty())
    return input_.sizer;
  return *sizers_.back();
}

FitResult Suggester::placedFit(const VariantBuild &build, const FitResult &fit,
                               int memoryOpt) const {
  if (!build.bundle || !fit.fits)
    return fit;
  FitRequest request = input_.request;
  request.weights = fit.weights;
  const VariantBuild &placed = sizerAt(memoryOpt).build(device_, build.footprint.variant, &request);
  return fitModel(device_, placed.footprint, request);
}

/// The fit of `build` (at `memoryOpt`) under its best placement.
Suggestion Suggester::checked(std::string change, const VariantBuild &build, int memoryOpt) const {
  FitResult fit =
      placedFit(build, bestPlacement(device_, build.footprint, input_.request), memoryOpt);
  std::vector<std::string> flags;
  if (build.footprint.variant.name != asked_.name)
    flags.insert(flags.end(), {"--variant", build.footprint.variant.name});
  if (memoryOpt != level_) {
    flags.insert(flags.end(), {"--memory-opt", std::to_string(memoryOpt)});
    change += ", --memory-opt " + std::to_string(memoryOpt) +
              (memoryOpt < level_ ? " (fits without patch stages)" : "");
  }
  if (fit.weights != input_.request.weights) {
    flags.insert(flags.end(), {"--weights", weightsPolicyName(fit.weights)});
    change += ", weights " + std::string(weightsPolicyName(fit.weights));
  }
  return suggestionOf(std::move(change), fit, std::move(flags), build.estimates);
}

void Suggester::oneMoreBuild(bool partFound, std::vector<Suggestion> &out,
                             std::vector<Suggestion> &onParts) {
  const FitResult &verdict = *input_.fits.front();
  if (level_ < 2 && over(verdict, false) && !over(verdict, true)) {
    out.push_back(checked("patch-based stages (activations below the layer-by-layer bound)",
                          buildAt(2, asked_), 2));
    return;
  }
  if (asked_.precision == Precision::Float && !hasInt8Build(input_.known))
    int8Build(partFound, out, onParts);
}

void Suggester::int8Build(bool partFound, std::vector<Suggestion> &out,
                          std::vector<Suggestion> &onParts) {
  // Built only when it could fit here, or on a part when none holds the
  // float build.
  const ModelFootprint bound = int8LowerBound(input_.known.front()->footprint);
  bool fitsHere = lowerBoundFits(device_, bound, input_.request);
  bool fitsAPart = false;
  for (const Device *part : parts_)
    fitsAPart = fitsAPart || lowerBoundFits(*part, bound, input_.request);
  if (!fitsHere && (partFound || !fitsAPart)) {
    FitRequest request = input_.request;
    request.weights = WeightsPolicy::Flash;
    FitResult fit = fitModel(device_, bound, request);
    out.push_back(suggestionOf(
        "quantize to int8: cannot fit, even its smallest possible build: " + fit.problems.front(),
        fit, {"--variant", "int8"},
        {"not built: the least any int8 build could take (each weight a quarter of its float "
         "size, the same float inputs and outputs, no activations, no code)"}));
    return;
  }
  // First without patch stages (their search is most of a level-2 plan's
  // time): what fits at level 1 is proposed at level 1. Level 2 only when
  // RAM alone is over, by less than the arena it could shrink.
  const Variant int8 = parseVariant("int8");
  int builtAt = std::min(level_, 1);
  const VariantBuild *build = &buildAt(builtAt, int8);
  Suggestion quantized = checked("quantize to int8", *build, builtAt);
  if (!quantized.fits && builtAt < level_) {
    FitResult fit = bestPlacement(device_, build->footprint, input_.request);
    uint64_t excess = 0;
    for (const RegionUse &use : fit.regions)
      if (use.over() && !use.region->isFlash())
        excess += use.used - use.region->size;
    if (!over(fit, true) && excess < build->footprint.activationsBytes) {
      build = &buildAt(builtAt = level_, int8);
      quantized = checked("quantize to int8", *build, builtAt);
    }
  }
  out.push_back(quantized);
  if (!quantized.fits && !partFound)
    onParts = partsHolding(input_, options_, parts_, *build, asked_, builtAt);
}

} // namespace

std::vector<Suggestion> suggestChanges(const SuggestionInput &input,
                                       const SuggestOptions &options) {
  std::vector<Suggestion> suggestions;
  if (!options.enabled || input.known.empty())
    return suggestions;
  Stage stage("look for changes that would fit");
  KeepMemoryOptNote note; // the note names the answer's level, not the suggestions'
  Suggester suggester(input, options);
  suggester.placements(suggestions);
  std::vector<Suggestion> onParts = suggester.partsForKnownBuilds();
  suggester.oneMoreBuild(!onParts.empty(), suggestions, onParts);
  // Changes that keep the part first.
  suggestions.insert(suggestions.end(), onParts.begin(), onParts.end());
  return suggestions;
}

} // namespace bundlefit::driver
