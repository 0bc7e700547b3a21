//===- Names.h - C identifiers from model names (Glow's rules) -------------===//
#pragma once

#include <set>
#include <string>
#include <vector>

namespace bundlefit {

/// Any character that is not alphanumeric or '_' becomes '_'; a leading digit
/// (or an empty name) gets a "_" prefix... exactly as Glow legalizes names so
/// firmware written against Glow bundles keeps compiling. Unlike Glow, a
/// result that is reserved (isReservedIdentifier) gets a "_" suffix, so the
/// header still compiles: "int" -> "int_".
std::string legalizeName(const std::string &name);

/// C/C++ keywords, <stdint.h> names, Glow's bundle macros and types.
bool isReservedIdentifier(const std::string &name);

/// legalizeName of each name, made unique in order: a name whose legal form
/// an earlier one (or `reserved`) already took gets the first free "_1",
/// "_2", ... suffix ("a.b", "a_b" -> "a_b", "a_b_1"). Deterministic.
std::vector<std::string> uniqueLegalNames(const std::vector<std::string> &names,
                                          const std::set<std::string> &reserved = {});

/// The network name from a model path: "dir/lenet_mnist.onnx" -> "lenet_mnist".
std::string networkNameFromPath(const std::string &path);

/// Upper-cases ASCII letters (the macro prefix is the network name upper-cased).
std::string toUpper(std::string text);

} // namespace bundlefit
