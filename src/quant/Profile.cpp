//===- Profile.cpp - Recording ranges and histograms; the model hash -------===//
#include "bundlefit/quant/Profile.h"

#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace bundlefit {

namespace {

size_t binOf(double value, double min, double width, size_t bins) {
  if (!(width > 0))
    return 0;
  double position = (value - min) / width;
  if (!(position > 0))
    return 0;
  return std::min(bins - 1, size_t(position));
}

std::string hex64(uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << std::setw(16) << std::setfill('0') << value;
  return out.str();
}

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

const TensorProfile *ProfileData::find(const std::string &name) const {
  for (const TensorProfile &tensor : tensors)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}

uint64_t fnv1a64(const std::string &bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

uint64_t hashModelFile(const std::string &path) {
  return fnv1a64(readInputFile(path, "model file"));
}

void checkProfileMatchesModel(const ProfileData &profile, const std::string &profilePath,
                              const std::string &modelPath) {
  uint64_t modelHash = hashModelFile(modelPath);
  if (modelHash == profile.modelHash)
    return;
  std::string recordedFor =
      profile.modelName.empty() ? "another model" : "'" + profile.modelName + "'";
  throw Error(ExitCode::BadInputFile, profilePath + ": profile was recorded for " + recordedFor +
                                          " (hash " + hex64(profile.modelHash) + "), not for " +
                                          modelPath + " (hash " + hex64(modelHash) +
                                          "); run `bundlefit profile " + baseName(modelPath) +
                                          " ...` again");
}

std::vector<double> rebinHistogram(const std::vector<double> &counts, double oldMin, double oldMax,
                                   double newMin, double newMax) {
  size_t bins = counts.size();
  std::vector<double> result(bins, 0.0);
  if (bins == 0)
    return result;
  double oldWidth = (oldMax - oldMin) / double(bins), newWidth = (newMax - newMin) / double(bins);
  for (size_t i = 0; i < bins; ++i) {
    double count = counts[i];
    if (!(count > 0))
      continue;
    double begin = oldMin + oldWidth * double(i), end = begin + oldWidth;
    size_t first = binOf(begin, newMin, newWidth, bins);
    if (!(oldWidth > 0) || !(newWidth > 0)) {
      result[first] += count;
      continue;
    }
    // Split the count by overlap; whole counts only, the remainder goes to
    // the last overlapping bin so the total is preserved exactly.
    size_t last = binOf(std::nextafter(end, begin), newMin, newWidth, bins);
    double left = count;
    for (size_t j = first; j <= last; ++j) {
      double binBegin = newMin + newWidth * double(j), binEnd = binBegin + newWidth;
      double overlap = std::min(end, binEnd) - std::max(begin, binBegin);
      double share = j == last ? left : std::min(left, std::round(count * overlap / oldWidth));
      share = std::max(0.0, share);
      result[j] += share;
      left -= share;
    }
  }
  return result;
}

void ProfileRecorder::observe(const std::string &name, const Tensor &tensor) {
  if (tensor.type.dtype != DType::Float32 || tensor.numElements() == 0)
    return;
  const float *values = tensor.data<float>();
  int64_t count = tensor.numElements();
  float lo = 0, hi = 0;
  bool any = false;
  for (int64_t i = 0; i < count; ++i) {
    float v = values[i];
    if (!std::isfinite(v))
      continue; // An inf/NaN would make every later scale meaningless.
    lo = any ? std::min(lo, v) : v;
    hi = any ? std::max(hi, v) : v;
    any = true;
  }
  if (!any)
    return;

  auto [it, inserted] = index_.emplace(name, tensors_.size());
  if (inserted)
    tensors_.push_back({name, lo, hi, std::vector<double>(kProfileHistogramBins, 0.0)});
  TensorProfile &profile = tensors_[it->second];
  if (lo < profile.min || hi > profile.max) {
    float newMin = std::min(lo, profile.min), newMax = std::max(hi, profile.max);
    profile.histogram = rebinHistogram(profile.histogram, profile.min, profile.max, newMin, newMax);
    profile.min = newMin;
    profile.max = newMax;
  }
  double width = (double(profile.max) - double(profile.min)) / double(kProfileHistogramBins);
  for (int64_t i = 0; i < count; ++i)
    if (std::isfinite(values[i]))
      profile.histogram[binOf(values[i], profile.min, width, kProfileHistogramBins)] += 1.0;
}

ProfileData ProfileRecorder::result(uint64_t modelHash, const std::string &modelName) const {
  ProfileData data;
  data.modelHash = modelHash;
  data.modelName = modelName;
  data.samples = samples_;
  data.tensors = tensors_;
  return data;
}

} // namespace bundlefit
