//===- PartLink.cpp - The device side of `fit --verify-link` ---------------===//
#include "bundlefit/driver/PartLink.h"

#include "bundlefit/bundle/BundleWriter.h"
#include "bundlefit/support/Error.h"

namespace bundlefit::driver {

namespace {

/// The region holding the first item whose description starts with `prefix`.
std::string itemRegion(const device::FitResult &fit, const std::string &prefix) {
  for (const device::RegionUse &use : fit.regions)
    for (const device::RegionItem &item : use.items)
      if (item.what.rfind(prefix, 0) == 0)
        return use.region->name;
  return "";
}

std::string homeOf(const device::FitResult &fit, const std::string &what) {
  for (const auto &[key, region] : fit.homes)
    if (key == what)
      return region;
  return "";
}

} // namespace

PartToolchain partToolchain(const device::Device &device) {
  const device::Core &core = device.bundleCore();
  PartToolchain t;
  bool fpu = core.fpu != "none";
  std::string fpuFlag;
  if (core.type == "cortex-m7")
    fpuFlag = core.fpu == "dp" ? "fpv5-d16" : "fpv5-sp-d16";
  else if (core.type == "cortex-m33")
    fpuFlag = core.fpu == "dp" ? "fpv5-d16" : "fpv5-sp-d16";
  else if (core.type == "cortex-m4")
    fpuFlag = "fpv4-sp-d16";
  else if (core.type == "cortex-m55")
    fpuFlag = "auto"; // gcc takes the FPU (and MVE) from -mcpu
  else if (core.type == "cortex-m0plus" || core.type == "cortex-m3")
    fpu = false;
  else
    throw Error(ExitCode::Unsupported,
                "--verify-link: " + device.id + "'s bundle core '" + core.name + "' (" + core.type +
                    ") has no code generation (cortex-m0plus, cortex-m3, cortex-m4, cortex-m7, "
                    "cortex-m33, cortex-m55)");
  t.codegenTarget = core.type;
  t.floatAbi = fpu ? "hard" : "soft";
  std::string mcpu = core.type;
  // gcc spells a core without its optional FPU/DSP as cortex-m33+nodsp+nofp.
  if (core.type == "cortex-m33" && !core.dspExtension)
    mcpu += "+nodsp";
  if (!fpu && core.type != "cortex-m0plus" && core.type != "cortex-m3")
    mcpu += "+nofp";
  t.gccFlags = {"-mcpu=" + mcpu, "-mthumb", "-mfloat-abi=" + t.floatAbi};
  if (fpu)
    t.gccFlags.push_back("-mfpu=" + fpuFlag);
  return t;
}

FirmwarePart firmwarePart(const device::Device &device) {
  FirmwarePart part;
  part.id = device.id;
  part.name = device.name;
  part.file = device.file;
  for (const device::MemoryRegionInfo &region : device.memory)
    part.regions.push_back({region.name, region.base, region.size, region.isFlash()});
  return part;
}

FirmwareSpec firmwareSpec(const device::Device &device, const device::FitResult &fit) {
  FirmwareSpec spec;
  spec.part = firmwarePart(device);
  spec.homes.code = device.homes.code;
  spec.homes.weightsFlash = device.homes.weightsFlash;
  spec.homes.sdkRam = device.homes.sdkRam;
  spec.homes.activations =
      fit.activationRegion ? fit.activationRegion->name : device.homes.activations;
  spec.homes.io = homeOf(fit, "inputs/outputs");
  if (spec.homes.io.empty())
    spec.homes.io = device.homes.io;
  spec.homes.staticData = itemRegion(fit, "static data (initialized copy)");
  if (spec.homes.staticData.empty())
    spec.homes.staticData = device.homes.io;
  spec.homes.libraryRam = device.homes.libraryRam;
  spec.reserved = {
      fit.terms.baseFlash, fit.terms.baseRam, fit.terms.libraryFlash, fit.terms.libraryRam, {}};
  for (const device::RegionUse &use : fit.regions) {
    spec.predicted.push_back(use.used);
    uint64_t headroom = 0;
    for (const device::RegionItem &item : use.items)
      if (item.what.rfind("headroom reserved", 0) == 0)
        headroom += item.bytes;
    spec.reserved.headroom.push_back(headroom);
  }
  spec.predictedFits = fit.fits;
  return spec;
}

void setPlacedBundle(FirmwareSpec &spec, const MemoryPlan &plan, const std::string &networkName,
                     const std::string &bundleDir) {
  spec.networkName = networkName;
  spec.bundleDir = bundleDir;
  spec.objectPath = bundleDir + "/" + networkName + ".o";
  spec.entry = firmwareEntryName(plan, networkName);
  spec.segments.clear();
  spec.entryWeights.clear();
  for (const WeightSegment &segment : plan.weightSegments) {
    const std::string id = regionIdentifier(segment.region);
    spec.segments.push_back({segment.region, id, segment.size, segment.copiedToRam});
    spec.entryWeights.push_back(networkName + "_weights_" + id);
  }
}

} // namespace bundlefit::driver
