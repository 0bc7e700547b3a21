//===- VariantFootprint.h - A build variant's footprint from a graph -------===//
//
// The graph-level sizing paths (moved out of device_db, which no longer runs
// passes): an int8 variant of a graph bundlefit quantized (CMSIS-NN
// preparation and --memory-opt passes as `compile` runs them), and the
// estimate for graphs no profile exists for (AN13001's reference models):
// the float graph re-typed the way Glow quantizes (weights Int8, biases
// Int32, activations Int8, a Quantize after each float input and a
// Dequantize before each float output), planned by the same planner.
//
// Commands size builds through VariantBuild.h, which compiles each variant
// and uses these only for what it cannot build.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Fit.h"

namespace bundlefit::device {

/// Plans the model for the variant on the device (estimate: see the file comment).
ModelFootprint estimateFootprint(const Graph &graph, const Variant &variant, const Device &device,
                                 const PlanOptions &options = {});

/// The int8 variant's footprint from a graph bundlefit already quantized
/// (quant/QuantizeGraph.h: real int8/int32 types, kept-float nodes, Quantize
/// and Dequantize), plus the variant's kernel scratch: the sizes `compile
/// --load-profile` plans. sizesEstimated is false. `variant` must be int8.
/// `int8Graph` has not been through the --memory-opt passes: they run here,
/// at options.memoryOpt, after CMSIS-NN preparation (as compile runs them).
ModelFootprint footprintOfQuantized(const Graph &int8Graph, const Variant &variant,
                                    const Device &device, const PlanOptions &options = {});

/// The cost model against AN13001's nine board timings (an13001Timings()):
/// each reference model is estimated for the variant (estimateFootprint) and fitted with weights in
/// RAM or Flash as published, then timed.
/// A timing of kernels bundlefit does not link (AN13001's plain int8 rows
/// time Glow's int8 kernels) is checked against the library's `comparison`
/// figures; `ownKernelsMs` is then what bundlefit predicts for its own.
struct CalibrationResult {
  CalibrationPoint point;
  double predictedMs = 0;
  double errorPercent = 0; ///< (predicted - published) / published x 100
  /// Set when the published timing is of other kernels: whose they are.
  std::string comparisonOf;
  double ownKernelsMs = 0; ///< With comparisonOf: the own kernels' prediction.
};
std::vector<CalibrationResult> checkCalibration(const DeviceDatabase &db);

} // namespace bundlefit::device
