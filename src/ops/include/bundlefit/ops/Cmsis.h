//===- Cmsis.h - Which int8 nodes call CMSIS-NN, and its scratch ---*- C++ -*-===//
//
// `--use-cmsis` (quant/CmsisLayout.h rewrites the graph) and the device
// database (the int8-cmsis variant's workspace) ask the operators'
// definitions (OpDef::cmsis, OpRegistry.h) the same questions here, so the
// node a bundle calls CMSIS-NN for and the scratch both count are one answer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ops/CmsisBufferSizes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

inline constexpr const char *kCmsisAttribute = "cmsis"; ///< The CMSIS-NN function name.
inline constexpr const char *kCmsisScratchAttribute = "cmsis_scratch";
/// The NCHW <-> NHWC copy prepareCmsisGraph inserts (attribute `to`).
inline constexpr const char *kCmsisLayoutOp = "CmsisLayout";
/// Where a Helium arm_fully_connected_s8 node reads its kernel sums (int32
/// [out], a constant): the context buffer the library reads them from.
inline constexpr int kCmsisKernelSumsInput = 3;

/// The op types bundlefit can lower to a CMSIS-NN call (those whose
/// definition names a CMSIS-NN function), sorted: what a device's `cmsis_nn`
/// library covers.
std::vector<std::string> cmsisNnOps();

/// The CMSIS-NN function that computes `node` (an int8 node of a graph not
/// yet prepared) in the build `extension`, or "" with `whyNot` set when it
/// stays portable.
std::string cmsisFunctionFor(const Node &node, CmsisExtension extension,
                             std::string *whyNot = nullptr);

/// The bytes of the CMSIS-NN context buffer `node` needs in the build
/// `extension`, from its geometry alone (0 when it would stay portable): the
/// same figure for an int8 node and for the float node it is quantized from.
int64_t cmsisScratchFor(const Node &node, CmsisExtension extension);

/// What a bundle's header declares of the CMSIS-NN function `node` calls (a
/// node prepareCmsisGraph marked): its definition's CmsisPrototype, one
/// declaration a line; "" when the definition lists none.
std::string cmsisPrototypeFor(const Node &node);

/// The further checks of the CMSIS-NN API a bundle's header states for the
/// call of `node` (a node prepareCmsisGraph marked): its definition's
/// CmsisDef::apiChecks; "" when none.
std::string cmsisApiChecksFor(const Node &node);

} // namespace bundlefit
