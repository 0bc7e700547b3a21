//===- TextTable.h - Aligned plain-text tables ------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

/// Columns are left-aligned unless marked numeric (right-aligned), in the
/// spirit of `size` and bloaty.
class TextTable {
public:
  explicit TextTable(std::vector<std::string> header, std::vector<bool> numeric = {});
  void addRow(std::vector<std::string> cells);
  void addSeparator();
  std::string render() const;

private:
  std::vector<std::string> header_;
  std::vector<bool> numeric_;
  std::vector<std::vector<std::string>> rows_; // empty row = separator
};

/// 1724608 -> "1,724,608".
std::string withThousands(uint64_t value);

} // namespace bundlefit
