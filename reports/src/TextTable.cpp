#include "bundlefit/reports/TextTable.h"

#include "bundlefit/support/Format.h"

#include <algorithm>

namespace bundlefit {

namespace {

size_t gTextWidth = 100;

/// Width of the rendered table: the shown columns and two spaces between them.
size_t tableWidth(const std::vector<size_t> &widths, const std::vector<bool> &shown) {
  size_t total = 0, count = 0;
  for (size_t i = 0; i < widths.size(); ++i)
    if (shown[i]) {
      total += widths[i];
      ++count;
    }
  return count ? total + 2 * (count - 1) : 0;
}

} // namespace

size_t textWidth() { return gTextWidth; }
void setTextWidth(size_t columns) { gTextWidth = columns; }

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> numeric)
    : header_(std::move(header)), numeric_(std::move(numeric)) {
  numeric_.resize(header_.size(), false);
}

void TextTable::addRow(std::vector<std::string> cells) {
  cells.resize(header_.size());
  for (std::string &cell : cells) // names from models: bytes, not always UTF-8
    cell = escapeInvalidUtf8(cell);
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

  const size_t budget = textWidth();
  std::vector<bool> shown(header_.size(), true);
  std::vector<std::string> dropped;
  for (size_t column : dropOrder_) {
    if (!budget || tableWidth(widths, shown) <= budget)
      break;
    if (column < shown.size() && shown[column]) {
      shown[column] = false;
      dropped.push_back(header_[column]);
    }
  }
  // Still too wide: the widest text column gives up a character at a time
  // (numbers are never cut), down to its title or 8 characters.
  while (budget && tableWidth(widths, shown) > budget) {
    size_t widest = widths.size();
    for (size_t i = 0; i < widths.size(); ++i)
      if (shown[i] && !numeric_[i] && widths[i] > std::max<size_t>(header_[i].size(), 8) &&
          (widest == widths.size() || widths[i] > widths[widest]))
        widest = i;
    if (widest == widths.size())
      break;
    --widths[widest];
  }

  auto renderRow = [&](const std::vector<std::string> &cells) {
    std::string line;
    bool first = true;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (!shown[i])
        continue;
      std::string cell = elide(cells[i], widths[i]);
      std::string pad(widths[i] - cell.size(), ' ');
      line += (first ? "" : "  ") + (numeric_[i] ? pad + cell : cell + pad);
      first = false;
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    return line + "\n";
  };
  std::string rule(tableWidth(widths, shown), '-');

  std::string text = renderRow(header_) + rule + "\n";
  for (const auto &row : rows_)
    text += row.empty() ? rule + "\n" : renderRow(row);
  if (!dropped.empty()) {
    std::string names;
    for (const std::string &name : dropped)
      names += (names.empty() ? "" : ", ") + name;
    text += "(left out to fit " + std::to_string(budget) + " columns: " + names +
            "; --wide shows them)\n";
  }
  return text;
}

std::string elide(const std::string &text, size_t width) {
  if (text.size() <= width)
    return text;
  if (width < 5)
    return text.substr(0, width);
  size_t head = (width - 3 + 1) / 2, tail = width - 3 - head;
  return text.substr(0, head) + "..." + text.substr(text.size() - tail);
}

std::string wrapLongLines(const std::string &text) { return wrapLongLines(text, textWidth(), 4); }

std::string wrapLongLines(const std::string &text, size_t budget, size_t extraIndent) {
  if (!budget)
    return text;
  std::string result;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    bool newline = end != std::string::npos;
    std::string line = text.substr(start, (newline ? end : text.size()) - start);
    start = newline ? end + 1 : text.size();
    size_t indent = line.find_first_not_of(' ');
    std::string continuation(
        std::min(indent == std::string::npos ? 0 : indent + extraIndent, budget / 2), ' ');
    while (line.size() > budget) {
      size_t cut = line.rfind(' ', budget);
      bool atSpace = cut != std::string::npos && cut > continuation.size();
      if (!atSpace)
        cut = budget;
      result += line.substr(0, cut) + "\n";
      line = continuation + line.substr(atSpace ? cut + 1 : cut);
    }
    result += line + (newline ? "\n" : "");
  }
  return result;
}

} // namespace bundlefit
