//===- Names.h - C identifiers from model names (Glow's rules) -------------===//
#pragma once

#include <string>

namespace bundlefit {

/// Any character that is not alphanumeric or '_' becomes '_'; a leading digit
/// (or an empty name) gets a "_" prefix... exactly as Glow legalizes names so
/// firmware written against Glow bundles keeps compiling.
std::string legalizeName(const std::string &name);

/// The network name from a model path: "dir/lenet_mnist.onnx" -> "lenet_mnist".
std::string networkNameFromPath(const std::string &path);

/// Upper-cases ASCII letters (the macro prefix is the network name upper-cased).
std::string toUpper(std::string text);

} // namespace bundlefit
