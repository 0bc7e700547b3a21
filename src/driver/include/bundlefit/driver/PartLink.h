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
/// reservations and the predicted bytes per region. `weights` are in the
/// fit's weight order; each gets the region the fit chose for it. The caller
/// fills in the bundle's files, buffer sizes and float ABI.
FirmwareSpec firmwareSpec(const device::Device &device, const device::FitResult &fit,
                          std::vector<FirmwareWeight> weights);

} // namespace bundlefit::driver
