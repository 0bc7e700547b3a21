//===- PartLink.h - The device side of `fit --verify-link` -----*- C++ -*-===//
//
// bundlefit_bundle builds and links the firmware (bundle/LinkVerify.h) from
// plain structs: regions, homes, sizes. This is where a device file and a fit
// become those structs, so bundle never links the device database: the
// toolchain for the part's bundle core, its memory map, and where the fit
// put each thing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/bundle/LinkVerify.h"
#include "bundlefit/device/Device.h"
#include "bundlefit/device/Fit.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <vector>

namespace bundlefit::driver {

/// How to build for the part's bundle core. Throws Error(Unsupported) naming
/// the part and core when the core has no code generation (HiFi4, Fusion F1,
/// NPUs, ...).
PartToolchain partToolchain(const device::Device &device);

/// The part's id, name, device file and memory regions (Device::memory order).
FirmwarePart firmwarePart(const device::Device &device);

/// The firmware spec for `fit` on `device`: the part, the regions the fit
/// chose (falling back to the device file's homes), the SDK and library
/// reservations and the predicted bytes per region. The caller fills in the
/// bundle (setPlacedBundle), buffer sizes and float ABI.
FirmwareSpec firmwareSpec(const device::Device &device, const device::FitResult &fit);

/// The placed bundle `networkName` in `bundleDir` (its plan's weight
/// segments): object, placement files, the entry main() calls and the
/// weights it passes.
void setPlacedBundle(FirmwareSpec &spec, const MemoryPlan &plan, const std::string &networkName,
                     const std::string &bundleDir);

} // namespace bundlefit::driver
