//===- HelpFormatter.h - --help within 100 columns -------------------------===//
//
// CLI11 prints each option's description on one line, however long; ours are
// sentences, so `bundlefit fit --help` ran to 250 columns. This formatter
// wraps descriptions to the 100 columns the reports keep to, continued under
// the description column.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

namespace bundlefit {

class HelpFormatter : public CLI::Formatter {
public:
  std::string make_option_desc(const CLI::Option *option) const override;
  std::string make_subcommand(const CLI::App *command) const override;
  std::string make_description(const CLI::App *app) const override;

private:
  std::string wrapDescription(const std::string &text) const;
};

} // namespace bundlefit
