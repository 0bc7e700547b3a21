#include "bundlefit/reports/TextTable.h"

#include <algorithm>

namespace bundlefit {

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> numeric)
    : header_(std::move(header)), numeric_(std::move(numeric)) {
  numeric_.resize(header_.size(), false);
}

void TextTable::addRow(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::addSeparator() { rows_.emplace_back(); }

std::string TextTable::render() const {
  std::vector<size_t> widths;
  for (const std::string &title : header_)
    widths.push_back(title.size());
  for (const auto &row : rows_)
    for (size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], row[i].size());

  auto renderRow = [&](const std::vector<std::string> &cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string pad(widths[i] - cells[i].size(), ' ');
      line += numeric_[i] ? pad + cells[i] : cells[i] + (i + 1 < cells.size() ? pad : "");
      if (i + 1 < cells.size())
        line += "  ";
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    return line + "\n";
  };
  size_t total = 0;
  for (size_t w : widths)
    total += w + 2;
  std::string rule(total > 2 ? total - 2 : 0, '-');

  std::string text = renderRow(header_) + rule + "\n";
  for (const auto &row : rows_)
    text += row.empty() ? rule + "\n" : renderRow(row);
  return text;
}

std::string withThousands(uint64_t value) {
  std::string digits = std::to_string(value);
  std::string result;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      result += ',';
    result += digits[i];
  }
  return result;
}

} // namespace bundlefit
