#include "HelpFormatter.h"

#include "bundlefit/reports/TextTable.h"

#include <sstream>

namespace bundlefit {

namespace {
constexpr size_t kHelpWidth = 100;
}

/// CLI11 indents each line after a newline to the description column itself.
std::string HelpFormatter::wrapDescription(const std::string &text) const {
  size_t room = kHelpWidth > column_width_ + 20 ? kHelpWidth - column_width_ : 20;
  std::string wrapped = wrapLongLines(text, room, 0);
  while (!wrapped.empty() && wrapped.back() == '\n')
    wrapped.pop_back();
  return wrapped;
}

std::string HelpFormatter::make_option_desc(const CLI::Option *option) const {
  return wrapDescription(CLI::Formatter::make_option_desc(option));
}

std::string HelpFormatter::make_subcommand(const CLI::App *command) const {
  std::stringstream out;
  CLI::detail::format_help(out, command->get_display_name(true),
                           wrapDescription(command->get_description()), column_width_);
  return out.str();
}

std::string HelpFormatter::make_description(const CLI::App *app) const {
  return wrapLongLines(CLI::Formatter::make_description(app), kHelpWidth, 0);
}

} // namespace bundlefit
