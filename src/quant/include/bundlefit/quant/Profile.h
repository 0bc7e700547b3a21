//===- Profile.h - Per-tensor value ranges recorded on calibration data ----===//
//
// `bundlefit profile` runs the float reference interpreter over calibration
// samples and records, for every float tensor of the optimised graph (graph
// inputs and node outputs, keyed by value name), the min, the max and a
// 10-bin histogram over [min, max] -- what Glow's profiling records.
//
// The file is Glow's profile YAML, so Glow's loader reads it:
//
//   ---
//   GraphPreLowerHash: 0x<16 hex digits>   <- bundlefit: FNV-1a 64 of the ONNX file
//   ---
//   - NodeOutputName: conv1
//     Min: -0.25
//     Max: 1.5
//     Histogram: [ 12, 0, ... ]
//   ---
//   BundlefitProfile: 1                      <- bundlefit's own document
//   Model: lenet.onnx
//   Samples: 200
//
// Glow stores its own graph hash in GraphPreLowerHash and only compares it on
// request; bundlefit puts the model file's hash there (a Hex64 Glow parses) and
// always compares it. Glow reads the first two documents only, so the third
// (model name and sample count, for error messages) is invisible to it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ir/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bundlefit {

/// Glow's default (ProfilingConfiguration::numHistogramBins).
constexpr size_t kProfileHistogramBins = 10;

struct TensorProfile {
  std::string name; ///< Value name in the optimised graph.
  float min = 0;
  float max = 0;
  /// Counts over kProfileHistogramBins equal bins of [min, max] (double:
  /// a float would stop counting exactly past 2^24 values per bin).
  std::vector<double> histogram;
};

struct ProfileData {
  uint64_t modelHash = 0;             ///< FNV-1a 64 of the ONNX file bytes.
  std::string modelName;              ///< File name the profile was recorded from ("" if unknown).
  uint64_t samples = 0;               ///< Calibration samples run (0 if unknown).
  std::vector<TensorProfile> tensors; ///< In graph order.

  /// The entry for `name`, or nullptr.
  const TensorProfile *find(const std::string &name) const;
};

/// FNV-1a 64-bit hash of bytes / of a file (Error(BadInputFile) if unreadable).
uint64_t fnv1a64(const std::string &bytes);
uint64_t hashModelFile(const std::string &path);

/// Renders Glow's YAML layout (see the file comment).
std::string renderProfile(const ProfileData &profile);

/// Parses a profile. Any malformed text -- not YAML, wrong layout, non-finite
/// or inverted ranges, negative counts -- throws Error(BadInputFile) whose
/// message starts with `sourceName`; it never crashes, whatever the bytes.
ProfileData parseProfile(const std::string &yamlText, const std::string &sourceName);

/// Reads and parses a profile file.
ProfileData loadProfile(const std::string &path);

/// Throws Error(BadInputFile) naming both files when `profile` was recorded
/// for another model than the ONNX file `modelPath`.
void checkProfileMatchesModel(const ProfileData &profile, const std::string &profilePath,
                              const std::string &modelPath);

/// Accumulates ranges and histograms tensor by tensor, sample by sample.
/// When a new sample widens a tensor's range, the existing histogram is
/// redistributed over the wider bins (counts split by overlap), then the new
/// values are binned; so the result does not depend on knowing the final
/// range in advance (one pass over the data, as Glow does).
class ProfileRecorder {
public:
  /// Records one float32 tensor (other dtypes are ignored).
  void observe(const std::string &name, const Tensor &tensor);
  /// Marks the end of one calibration sample.
  void finishSample() { ++samples_; }
  /// The profile, tensors in first-observed order.
  ProfileData result(uint64_t modelHash, const std::string &modelName) const;

private:
  std::vector<TensorProfile> tensors_;
  std::map<std::string, size_t> index_;
  uint64_t samples_ = 0;
};

/// Merges `counts` recorded over [oldMin, oldMax] into bins over the wider
/// [newMin, newMax] (same bin count); exposed for tests.
std::vector<double> rebinHistogram(const std::vector<double> &counts, double oldMin, double oldMax,
                                   double newMin, double newMax);

} // namespace bundlefit
