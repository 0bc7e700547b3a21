//===- Templates.h - The generated files' templates -------------*- C++ -*-===//
//
// Internal to bundlefit_bundle. The host driver, the QEMU firmware and its
// linker script, and the `fit --verify-link` stub are real .c/.ld files in
// src/bundle/templates, embedded at build time (cmake/EmbedTextFiles.cmake).
// They hold @NAME@ markers that fillTemplate replaces with the bundle's
// values and with the few lines generated per input/output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <string>

namespace bundlefit {
namespace templates {

extern const char *const kHostDriverTemplate;
extern const char *const kQemuFirmwareTemplate;
extern const char *const kQemuLinkerScriptTemplate;
extern const char *const kVerifyLinkStubTemplate;

/// Replaces every @NAME@ in `text` with values.at(NAME), in one pass (a value
/// is never rescanned). A marker alone on its line whose value is empty
/// removes the line. A marker without a value, or a value no marker uses, is a
/// bug in the caller: fatalInternal.
std::string fillTemplate(const std::string &text, const std::map<std::string, std::string> &values);

} // namespace templates
} // namespace bundlefit
