//===- FitVerifyRun.cpp - `bundlefit fit --verify-run` ---------------------===//
#include "FitVerifyRun.h"

#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/bundle/BundleWriter.h"
#include "bundlefit/driver/PartLink.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Format.h"
#include "bundlefit/support/OutputFile.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace bundlefit {

namespace {

namespace fs = std::filesystem;

/// The same inputs for every run: a fixed sequence spread over [-1, 1)
/// (floats) or over the type's bytes (integers).
std::map<std::string, Tensor> runInputs(const MemoryPlan &plan) {
  std::map<std::string, Tensor> inputs;
  uint32_t state = 12345;
  for (const Value *value : plan.placeholders) {
    if (!value->isGraphInput())
      continue;
    Tensor tensor(value->type);
    if (value->type.dtype == DType::Float32) {
      float *data = tensor.data<float>();
      for (int64_t i = 0; i < tensor.numElements(); ++i) {
        state = state * 1664525u + 1013904223u;
        data[i] = float(state >> 8) / float(1u << 23) - 1.0f;
      }
    } else {
      for (uint8_t &byte : tensor.bytes) {
        state = state * 1664525u + 1013904223u;
        byte = uint8_t(state >> 24);
      }
    }
    inputs[value->name] = std::move(tensor);
  }
  return inputs;
}

/// Writes `build`'s bundle into `dir` and runs it on `target` (Glow's layout).
std::map<std::string, Tensor> runUnplaced(const CompiledBundle &bundle, const fs::path &dir,
                                          const std::string &target,
                                          const std::map<std::string, Tensor> &inputs) {
  CompileRequest request;
  request.outputDir = dir.string();
  {
    ImmediateOutputs now; // run at once, in the part's work directory
    writeBundle(request, bundle);
  }
  BundleRunSpec spec = makeRunSpec(bundle.plan, dir.string(), bundle.networkName, target);
  return runBundle(spec, inputs, dir.string());
}

/// "" when every output is the same bytes, else where the first differs.
std::string firstDifference(const std::map<std::string, Tensor> &a,
                            const std::map<std::string, Tensor> &b) {
  for (const auto &[name, tensor] : a) {
    auto other = b.find(name);
    if (other == b.end() || other->second.bytes.size() != tensor.bytes.size())
      return name + ": missing or of another size";
    for (size_t i = 0; i < tensor.bytes.size(); ++i)
      if (tensor.bytes[i] != other->second.bytes[i])
        return name + ": byte " + std::to_string(i) + " differs";
  }
  return "";
}

double maxAbsDiff(const std::map<std::string, Tensor> &a, const std::map<std::string, Tensor> &b) {
  double worst = 0;
  for (const auto &[name, tensor] : a) {
    auto other = b.find(name);
    if (other == b.end() || other->second.numElements() != tensor.numElements())
      return INFINITY;
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      worst = std::max(worst, std::fabs(tensor.at(i) - other->second.at(i)));
  }
  return worst;
}

} // namespace

RunVerification verifyPartRun(const PartBundle &part, const device::Device &device,
                              const device::FitResult &fit, const driver::VariantBuild &unplaced,
                              const driver::BuildOptions &options) {
  RunVerification v;
  const auto start = std::chrono::steady_clock::now();
  const CortexMBoard *board = findCortexMBoard(part.toolchain.codegenTarget);
  if (!board) {
    v.why = "QEMU has no board for " + part.toolchain.codegenTarget + " here (boards: " + [] {
      std::string list;
      for (const std::string &t : supportedRunTargets())
        list += (list.empty() ? "" : ", ") + t;
      return list;
    }() + ")";
    return v;
  }
  requireQemuArm();
  const MemoryPlan &plan = part.bundle->plan;
  const std::map<std::string, Tensor> inputs = runInputs(plan);
  uint64_t inputBytes = 0;
  for (const auto &[name, tensor] : inputs)
    inputBytes += tensor.bytes.size() + 64;

  FirmwareSpec firmware = driver::firmwareSpec(device, fit);
  driver::setPlacedBundle(firmware, plan, part.bundle->networkName, part.bundleDir);
  BoardMap map = mapPartOnBoard(firmware.part, *board, 256 * 1024 + 64 * 1024 + inputBytes);
  firmware.part = map.part;
  BundleRunSpec spec = makeRunSpec(plan, part.bundleDir, part.bundle->networkName, board->target);
  spec.partImage = verifyRunImage(firmware, map, *board);
  const fs::path work = fs::path(part.workDir) / "run";
  BundleRunStats stats;
  const std::map<std::string, Tensor> placed = runBundle(spec, inputs, work.string(), &stats);
  v.ran = true;
  v.machine = board->machine;
  v.cpu = board->cpu;
  v.layout = map.moved;
  for (const auto &[name, tensor] : placed) {
    ++v.outputs;
    v.outputBytes += tensor.bytes.size();
  }

  // The same model with Glow's one constantWeight, on the same core.
  if (!unplaced.bundle || unplaced.bundle->code.object.empty())
    fatalInternal("--verify-run: the unplaced build has no object");
  const std::map<std::string, Tensor> glow =
      runUnplaced(*unplaced.bundle, work / "glow", board->target, inputs);
  v.firstDifference = firstDifference(placed, glow);
  v.outputsEqual = v.firstDifference.empty();

  // The host build of the same model and options.
  CompileRequest host;
  // A float variant has float inputs and outputs whatever --int8-io says (as fit sized it).
  host.model = unplaced.footprint.variant.precision == device::Precision::Int8
                   ? options.model
                   : floatIoModel(options.model);
  host.optLevel = options.optLevel;
  host.exactTimeBudgetSeconds = options.exactTimeBudgetSeconds;
  host.quant = options.quant;
  host.useCmsis = false;
  if (unplaced.footprint.variant.precision == device::Precision::Int8)
    host.syntheticProfile = !options.quant.enabled();
  CompiledBundle hostBundle = buildBundle(host);
  const std::map<std::string, Tensor> hostOutputs =
      runUnplaced(hostBundle, work / "host", "host", inputs);
  v.hostEqual = firstDifference(placed, hostOutputs).empty();
  v.hostMaxAbsDiff = maxAbsDiff(placed, hostOutputs);
  v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return v;
}

std::string verifyRunText(const RunVerification &v) {
  if (!v.ran)
    return "\nrun check: not run: " + v.why + "\n";
  char diff[64];
  std::snprintf(diff, sizeof diff, "%.3g", v.hostMaxAbsDiff);
  std::string text = "\nran the firmware under QEMU " + v.machine + " (" + v.cpu + "), " +
                     v.layout + ": " + std::to_string(v.outputs) + " output(s), " +
                     withThousands(v.outputBytes) + " B\n";
  text += v.outputsEqual ? "run check: outputs equal, byte for byte, to the bundle with Glow's one "
                           "constantWeight run on the same core\n"
                         : "run check FAILED: the placed firmware's outputs differ from the bundle "
                           "with Glow's one constantWeight (" +
                               v.firstDifference + ")\n";
  text += std::string("host build: ") +
          (v.hostEqual ? "the same bytes"
                       : std::string("max |diff| ") + diff +
                             " (float kernels round differently on x86-64)") +
          "\n";
  return text;
}

nlohmann::json verifyRunJson(const RunVerification &v) {
  if (!v.ran)
    return {{"ran", false}, {"why", v.why}, {"outputs_equal", nullptr}};
  return {{"ran", true},
          {"machine", v.machine},
          {"cpu", v.cpu},
          {"layout", v.layout},
          {"outputs", v.outputs},
          {"output_bytes", v.outputBytes},
          {"outputs_equal", v.outputsEqual},
          {"reference", "the bundle with Glow's one constantWeight, same core, under QEMU"},
          {"first_difference", v.firstDifference},
          {"host_outputs_equal", v.hostEqual},
          {"host_max_abs_diff", v.hostMaxAbsDiff},
          {"seconds", v.seconds}};
}

} // namespace bundlefit
