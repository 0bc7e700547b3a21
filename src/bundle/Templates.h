//===- Templates.h - The generated files' templates -------------*- C++ -*-===//
//
// Internal to bundlefit_bundle. The host driver, the QEMU firmware and its
// linker script, and the `fit --verify-link` stub, linker script and data
// file are real .c/.ld/.S files in src/bundle/templates, embedded at build time
// (cmake/EmbedTextFiles.cmake). They hold @NAME@ markers that fillTemplate replaces with the
// bundle's values and with the few lines generated per input/output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace bundlefit {
namespace templates {

extern const char *const kHostDriverTemplate;
extern const char *const kQemuFirmwareTemplate;
extern const char *const kQemuLinkerScriptTemplate;
extern const char *const kVerifyLinkStubTemplate;
extern const char *const kVerifyLinkScriptTemplate;  ///< fw.ld
extern const char *const kVerifyLinkSectionTemplate; ///< One buffer's output section in fw.ld.
extern const char *const kVerifyLinkDataTemplate;    ///< fw_data.S
extern const char *const kVerifyLinkSymbolTemplate;  ///< One buffer's symbol in fw_data.S.
extern const char *const kPlacementWeightsTemplate;  ///< <net>_weights.c of a placed bundle.
extern const char *const kPlacementSegmentTemplate;  ///< One weight segment in <net>_weights.c.
extern const char *const kPlacementScriptTemplate;   ///< <net>_weights.ld.
extern const char *const kPlacementSectionTemplate;  ///< One segment's section in it.
extern const char *const kVerifyRunScriptTemplate;   ///< fw.ld of `fit --verify-run`.

/// Replaces every @NAME@ in `text` with values.at(NAME), in one pass (a value
/// is never rescanned). A marker alone on its line whose value is empty
/// removes the line. A marker without a value, or a value no marker uses, is a
/// bug in the caller: fatalInternal.
std::string fillTemplate(const std::string &text, const std::map<std::string, std::string> &values);

/// A block of generated lines without its last newline: the marker's own
/// line ends it.
std::string withoutFinalNewline(std::string text);

/// An address or size as linker scripts spell it: 0x%08llx.
std::string hexAddress(uint64_t value);

} // namespace templates
} // namespace bundlefit
