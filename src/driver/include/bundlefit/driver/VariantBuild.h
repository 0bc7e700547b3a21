//===- VariantBuild.h - Size the bundle a variant would build on a part ----===//
//
// `fit`, `pick`, `plan --device` and the CMake DEVICE check size a build
// variant by running the compile pipeline (CompileBundle.h) for the part's
// bundle core: the same load, passes, quantization, CMSIS-NN preparation,
// --memory-opt passes and memory plan as `compile`, so CONSTANT, MUTABLE and
// ACTIVATIONS are the bundle's. Code comes from the object that compile
// emits: .text + .rodata + .data, plus the runtime routines it calls
// (memcpy, expf, soft float) measured by linking it alone with the part's
// arm-none-eabi-gcc flags, plus the CMSIS-NN library code the variant links
// (a per-core table measured by linking the real library, CmsisNnCode.h).
//
// Code generation is the slow step, so the code sizes are cached on disk by
// a hash of the model file, every option that changes the bundle, the
// variant, the target and the bundlefit executable: a second `pick` plans
// again (cheap) and reuses the code sizes. BUNDLEFIT_CACHE_DIR sets the
// directory (default $XDG_CACHE_HOME/bundlefit or ~/.cache/bundlefit);
// BUNDLEFIT_CACHE_DIR=off disables it.
//
// HiFi4 variants are not built (no DSP code is generated): their sizes are
// the int8 plan with NNLib scratch at --memory-opt 0 and the device file's
// NNLib code figure, flagged as estimates.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Fit.h"
#include "bundlefit/driver/CompileBundle.h"
#include "bundlefit/driver/Pipeline.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bundlefit::driver {

/// The model and the options its bundle would be compiled with.
struct BuildOptions {
  ModelOptions model;
  /// int8 variants: this profile; without one, a synthetic profile (sizes do
  /// not depend on the ranges, only on which nodes become int8).
  QuantCliOptions quant;
  std::string optLevel = "O2";
  double exactTimeBudgetSeconds = 5.0;
  bool useCache = true; ///< false: always compile (the object is needed).
  /// Set (by `fit`): each part's RAM regions, as this request leaves them,
  /// are capacities the arena plan targets (device::arenaRooms), so builds
  /// are per part. Unset: per core, the arena just minimised.
  std::optional<device::FitRequest> arenaRoomsFor = std::nullopt;
};

/// Where the code bytes of a build come from.
struct CodeBreakdown {
  uint64_t text = 0, rodata = 0, data = 0; ///< The bundle object's sections.
  uint64_t runtime = 0;         ///< What linking adds: libgcc/newlib routines, alignment.
  uint64_t library = 0;         ///< CMSIS-NN functions it calls (per-core table).
  bool runtimeMeasured = false; ///< false: arm-none-eabi-gcc missing, runtime not counted.
  bool fromCache = false;
  uint64_t total() const { return text + rodata + data + runtime + library; }
};

/// One variant sized for one part.
struct VariantBuild {
  device::ModelFootprint footprint; ///< codeBytes = code.total() for built variants.
  CodeBreakdown code;
  /// bundlefit generates this build (a bundle you can link today).
  bool buildable = false;
  /// What is estimated and why; empty when every figure is the build's.
  std::vector<std::string> estimates;
  std::string target; ///< "cortex-m7 (hard float)"
  /// The graph and plan sized (the build's own: int8 shapes, CMSIS-NN
  /// layouts, --memory-opt forms); its code is empty when the code sizes came
  /// from the cache. Null for HiFi4 variants (not built).
  std::shared_ptr<const CompiledBundle> bundle;
  bool estimated() const { return !estimates.empty(); }
};

class BuildSizer {
public:
  explicit BuildSizer(BuildOptions options);

  /// Builds (or recalls) `variant` for `device`'s bundle core. With
  /// `placeFor`, the weights are placed as the fit of that request places them
  /// (WeightPlacement.h), so the code sized is that of the bundle `compile
  /// --device` builds; without, Glow's one constantWeight.
  const VariantBuild &build(const device::Device &device, const device::Variant &variant,
                            const device::FitRequest *placeFor = nullptr);

  /// For device_db's pickBuild.
  device::FootprintSource footprints();

  /// The code sizes of `variant` compiled for `device`'s core, when the
  /// code-size cache holds them (nothing is compiled); CMSIS-NN library code
  /// not included.
  std::optional<CodeBreakdown> cachedCode(const device::Device &device,
                                          const device::Variant &variant) const;

  const BuildOptions &options() const { return options_; }

private:
  VariantBuild make(const device::Device &device, const device::Variant &variant,
                    const device::FitRequest *placeFor);
  std::string cachePathFor(const device::Variant &variant, const std::string &target,
                           const std::string &segments = "") const;
  BuildOptions options_;
  std::string modelHash_;
  std::map<std::string, VariantBuild> builds_;
};

/// Names the code that sizes builds in the code-size cache's keys: the
/// `bundlefit` tool and the Python module give the same build-time hash of
/// the libraries they link (cmake/CodeIdentity.cmake), so either reads what
/// the other cached. Call before the first build; without it, the running
/// binary's size and modification time.
void setCodeIdentity(const std::string &identity);

/// The variants bundlefit generates code for.
bool variantBuildable(const device::Variant &variant);

} // namespace bundlefit::driver
