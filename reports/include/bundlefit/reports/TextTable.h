//===- TextTable.h - Aligned plain-text tables ------------------------------===//
//
// Text reports fit a terminal of textWidth() columns (100 by default, the
// width a firmware engineer's split editor or CI log shows without
// scrolling): a table too wide leaves out its least useful columns, then
// shortens its longest text cells, and says so under the table; prose lines
// are wrapped. --wide and -v set the width to 0: everything, unabridged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/support/Format.h" // withThousands, for the tables' cells

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

/// The columns text reports must fit in; 0 means no limit.
size_t textWidth();
void setTextWidth(size_t columns);

/// Columns are left-aligned unless marked numeric (right-aligned), in the
/// spirit of `size` and bloaty.
class TextTable {
public:
  explicit TextTable(std::vector<std::string> header, std::vector<bool> numeric = {});
  void addRow(std::vector<std::string> cells);
  void addSeparator();
  /// Columns (by index) that may be left out when the table is wider than
  /// textWidth(), the least useful first.
  void setDropOrder(std::vector<size_t> columns) { dropOrder_ = std::move(columns); }
  std::string render() const;

  // The unabridged cells, for the HTML report's copy of the table.
  const std::vector<std::string> &header() const { return header_; }
  const std::vector<bool> &numeric() const { return numeric_; }
  const std::vector<std::vector<std::string>> &rows() const { return rows_; }

private:
  std::vector<std::string> header_;
  std::vector<bool> numeric_;
  std::vector<std::vector<std::string>> rows_; // empty row = separator
  std::vector<size_t> dropOrder_;
};

/// Wraps every line of `text` longer than textWidth() at a space (or, with
/// none, anywhere), continuing on lines indented 4 more than the original.
std::string wrapLongLines(const std::string &text);
/// The same within `width` columns (0: no limit), continuation lines indented
/// `extraIndent` more than the line they continue.
std::string wrapLongLines(const std::string &text, size_t width, size_t extraIndent);

/// "a_very_long_node_name" -> "a_very...e_name": at most `width` characters,
/// keeping both ends (where names differ).
std::string elide(const std::string &text, size_t width);

} // namespace bundlefit
