//===- CostModel.h - Predicted inference time --------------------------------===//
//
// Per layer, on the core its kernel library runs on:
//   cycles = MACs x cycles_per_mac(library, layer class)
//          + output elements x cycles_per_element(library)   (layers without MACs)
//          + layer_overhead_cycles(library)
//          + weight bytes fetched x read_cycles_per_byte(region holding them)
//          + activation bytes touched x read_cycles_per_byte(activation region)
// "Weight bytes fetched" is each weight tensor's size once per inference when
// the region is cached and the tensor fits the data cache (or the region costs
// nothing, like a TCM), and size x reuse otherwise, where reuse is the number of
// output positions of the conv that re-reads it. Cached regions on cores
// without a data cache (Cortex-M33 behind CACHE64/LPCAC) are given a 16 KB
// effective cache. Time = cycles / core clock.
//
// The figures live in the device files. The RT1062 and RT685 figures are
// calibrated on AN13001's nine timings (an13001Timings(), bench in
// tests/device); other parts carry them over by core type (marked
// "calibrated": false). Every predicted time says what it rests on
// (CostProvenance): a published figure for that part, measurements on the
// same core type, or figures carried from another part or core.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Device.h"
#include "bundlefit/device/Footprint.h"

#include <memory>
#include <string>
#include <vector>

namespace bundlefit::device {

struct LayerTime {
  std::string name;
  std::string library;
  double computeCycles = 0;
  double memoryCycles = 0;
  double ms = 0;
  CostProvenance provenance = CostProvenance::Carried; ///< Of the library's figures.
  std::string provenanceFrom;
};

struct TimePrediction {
  double ms = 0;
  bool calibrated = true; ///< false if any library's figures are carried over.
  /// The weakest provenance over the layers (published > measured > carried).
  CostProvenance provenance = CostProvenance::Published;
  std::vector<LayerTime> layers;
};

/// One line for a report: "calibrated on a published figure for rt1062
/// (AN13001 ...)", "derived from measurements on cortex-m4 (...)" or
/// "carried from rt1062 (...)".
std::string describeProvenance(const KernelLibrary &library, const Device &device);

/// `weightRegion[i]` holds weight tensor i of the footprint.
TimePrediction predictTime(const Device &device, const ModelFootprint &footprint,
                           const std::vector<const MemoryRegionInfo *> &weightRegion,
                           const MemoryRegionInfo *activationRegion);

/// One of AN13001's published board timings.
struct CalibrationPoint {
  std::string figure;  ///< Where it is published.
  std::string device;  ///< Device id.
  std::string model;   ///< lenet | cifar10 (buildReferenceModel)
  std::string variant; ///< Variant name.
  bool weightsInFlash = false;
  double publishedMs = 0;
  bool usedToFit = true; ///< false: held out, a true check of the model.
};
const std::vector<CalibrationPoint> &an13001Timings();

/// The largest error, in percent, the README claims for any calibrated
/// figure (device_db/README.md, "Cost model and calibration"; a test reads the
/// README and checks both agree and that every figure is within it).
constexpr double kCalibrationClaimPercent = 2.3;

/// AN13001's reference workloads as graphs (float, types set):
///  lenet   - Caffe LeNet MNIST as in Glow/AN13001 (= tests/models lenet).
///  cifar10 - the SDK CIFAR-10 demo model, approximated by the CMSIS-NN
///            CIFAR-10 example network (conv 5x5 3->32, maxpool 3/2, conv 5x5
///            32->16, maxpool 3/2, conv 5x5 16->32, maxpool 3/2, fc 512->10):
///            33,120 weights + 90 biases, 6.56 M MACs; AN13001 gives 33,472 B
///            of weights for its model, within 1% of this one.
std::unique_ptr<Graph> buildReferenceModel(const std::string &name);

} // namespace bundlefit::device
