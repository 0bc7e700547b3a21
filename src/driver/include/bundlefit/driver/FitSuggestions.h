//===- FitSuggestions.h - What would make a model fit, checked and cheap ---===//
//
// When a build does not fit, `fit` and `pick` list changes that would make it
// fit. A model search asks thousands of times, so the list is computed from
// what the verdict already knows and costs at most one more build (about
// twice one fit in all):
//   - the per-region excess says which changes can help at all: nothing but a
//     smaller build or a bigger part fixes Flash (CONSTANT is always there);
//   - another weights placement refits the same build (free);
//   - a part of the same family (its vendor's parts; or the parts the user
//     lists) refits the same plan with that part's memory map and libraries,
//     the code size from the cache for the part's core, or else as compiled
//     for this core, labelled (free); the smallest that fits is named;
//   - one more build, when something can come of it: --memory-opt 2 for a
//     RAM excess at a lower level, else int8 for a float build (skipped when
//     even int8's smallest possible Flash and RAM would not fit, and a part
//     already holds the float build); its placements and parts as above.
// Every suggestion is the fit of the build it describes (never a guess), and
// only changes that fit are proposed; a bigger build that still does not
// fit is listed as such, with its figures.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Fit.h"
#include "bundlefit/driver/VariantBuild.h"

#include <string>
#include <vector>

namespace bundlefit::driver {

struct SuggestOptions {
  bool enabled = true; ///< --no-suggestions / suggestions=False: none looked for.
  /// --suggest-parts: the parts to try (ids or aliases); empty: the parts of
  /// the device's vendor.
  std::vector<std::string> parts;
};

/// What a verdict knows about the model on `device`.
struct SuggestionInput {
  const device::DeviceDatabase &db;
  const device::Device &device;
  const device::FitRequest &request;
  /// Sized the builds in `known`; makes the one more build.
  BuildSizer &sizer;
  /// The builds already sized for `device`, most wanted first (fit: its own;
  /// pick: every variant compared), with their fits under `request`.
  std::vector<const VariantBuild *> known;
  std::vector<const device::FitResult *> fits;
};

/// The changes, each checked by a fit. Throws bundlefit::Error for an
/// unknown part in `options.parts` (the option named).
std::vector<device::Suggestion> suggestChanges(const SuggestionInput &input,
                                               const SuggestOptions &options);

/// The family a part belongs to for suggestions: its vendor (a board's part's).
std::string partFamily(const device::DeviceDatabase &db, const device::Device &device);

} // namespace bundlefit::driver
