//===- GlowFrontEnd.cpp - Glow's single-dash option spelling for CLI11 -----===//
#include "GlowFrontEnd.h"

#include <algorithm>

namespace bundlefit {

std::vector<std::string> glowArgumentsForCli11(int argc, char **argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool singleDashLong = arg.size() > 2 && arg[0] == '-' && arg[1] != '-';
    args.push_back(singleDashLong ? "-" + arg : arg);
  }
  std::reverse(args.begin(), args.end());
  return args;
}

} // namespace bundlefit
