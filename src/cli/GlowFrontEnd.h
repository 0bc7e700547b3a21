//===- GlowFrontEnd.h - Glow's single-dash option spelling for CLI11 -------===//
#pragma once

#include <string>
#include <vector>

namespace bundlefit {

/// Glow's tools take single-dash long options ("-model=x"); CLI11 wants
/// "--model=x". Returns argv[1..] respelled and reversed, the order
/// CLI::App::parse(std::vector) consumes. Short flags (-h, -q, -v) and
/// positional arguments are left alone.
std::vector<std::string> glowArgumentsForCli11(int argc, char **argv);

} // namespace bundlefit
