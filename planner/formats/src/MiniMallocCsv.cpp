//===- MiniMallocCsv.cpp - Read and write MiniMalloc CSV files ------------===//
#include "bundlefit/planner/formats/MiniMallocCsv.h"

#include "bundlefit/planner/CheckedArithmetic.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <sstream>
#include <string_view>

namespace bundlefit::planner::formats {

namespace {
// Splits on commas, trimming spaces and a trailing CR; reuses `fields`.
void splitFields(std::string_view line, std::vector<std::string_view> &fields) {
  fields.clear();
  while (true) {
    size_t comma = line.find(',');
    std::string_view field = line.substr(0, comma);
    while (!field.empty() && field.front() == ' ')
      field.remove_prefix(1);
    while (!field.empty() && (field.back() == ' ' || field.back() == '\r'))
      field.remove_suffix(1);
    fields.push_back(field);
    if (comma == std::string_view::npos)
      return;
    line.remove_prefix(comma + 1);
  }
}

// The whole stream: lines are then views into one string, with no stream
// call per line (at 10^6 rows getline and a string per field took 0.2 s).
// A file is read at once into a string of its size; growing the string
// chunk by chunk took 0.05 s more for 27 MB.
std::string readAll(std::istream &in) {
  std::string text;
  std::streambuf &source = *in.rdbuf();
  std::streamoff at = source.pubseekoff(0, std::ios::cur, std::ios::in);
  std::streamoff end = source.pubseekoff(0, std::ios::end, std::ios::in);
  if (at >= 0 && end >= at && source.pubseekpos(at, std::ios::in) == at) {
    text.resize(size_t(end - at));
    text.resize(size_t(source.sgetn(text.data(), std::streamsize(text.size()))));
    return text;
  }
  char chunk[1 << 16]; // Not seekable (a pipe): as it comes.
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0)
    text.append(chunk, size_t(in.gcount()));
  return text;
}

// Takes the next line (without its '\n') from the front of `text`.
std::string_view nextLine(std::string_view &text) {
  size_t newline = text.find('\n');
  std::string_view line = text.substr(0, newline);
  text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
  return line;
}

/// A decimal integer in [lowest, highest], nothing else (no sign for
/// unsigned fields, no spaces, no wrap-around).
bool toNumber(std::string_view text, int64_t lowest, int64_t highest, int64_t &value) {
  size_t k = 0;
  bool negative = !text.empty() && text[0] == '-';
  if (negative)
    ++k;
  if (k == text.size())
    return false;
  uint64_t magnitude = 0;
  for (; k < text.size(); ++k) {
    if (text[k] < '0' || text[k] > '9')
      return false;
    if (!checkedMul(magnitude, 10, magnitude) ||
        !checkedAdd(magnitude, uint64_t(text[k] - '0'), magnitude) ||
        magnitude > (uint64_t(1) << 63))
      return false;
  }
  if (!negative && magnitude > uint64_t(INT64_MAX))
    return false;
  value = negative ? int64_t(0 - magnitude) : int64_t(magnitude);
  return lowest <= value && value <= highest;
}

std::nullopt_t fail(std::string *error, int line, const std::string &message) {
  if (error)
    *error = "line " + std::to_string(line) + ": " + message;
  return std::nullopt;
}

// Steps are the planner's int clock; `upper` is one past the last step.
constexpr int64_t kLowestStep = INT_MIN, kHighestStep = INT_MAX;
constexpr int64_t kMaxBytes = int64_t(kMaxPlannerBytes);
} // namespace

std::optional<CsvProblem> parseMiniMallocCsv(std::istream &in, std::string *error) {
  std::string file = readAll(in);
  std::string_view text = file;
  if (text.empty())
    return fail(error, 1, "empty file");
  std::vector<std::string_view> header, f;
  splitFields(nextLine(text), header);
  std::map<std::string_view, size_t> column;
  for (size_t k = 0; k < header.size(); ++k)
    column[header[k]] = k;
  for (const char *required : {"id", "lower", "upper", "size"})
    if (!column.count(required))
      return fail(error, 1, std::string("missing column '") + required + "'");
  const size_t idColumn = column["id"];
  struct Field {
    const char *name;
    int64_t lowest, highest;
    int64_t value;
    size_t column;
  };
  // lower, upper, size, then the optional alignment and offset.
  std::vector<Field> fields = {{"lower", kLowestStep, kHighestStep - 1, 0, column["lower"]},
                               {"upper", kLowestStep + 1, kHighestStep, 0, column["upper"]},
                               {"size", 0, kMaxBytes, 0, column["size"]}};
  bool hasAlignment = column.count("alignment"), hasOffset = column.count("offset");
  if (hasAlignment)
    fields.push_back({"alignment", 1, kMaxBytes, 1, column["alignment"]});
  if (hasOffset)
    fields.push_back({"offset", 0, kMaxBytes, 0, column["offset"]});

  CsvProblem result;
  size_t rows = size_t(std::count(text.begin(), text.end(), '\n')) + 1;
  result.problem.buffers.reserve(rows);
  result.names.reserve(rows);
  int lineNumber = 1;
  uint64_t total = 0; // Footprints + alignments so far, as checkProblem counts.
  while (!text.empty()) {
    std::string_view line = nextLine(text);
    if (lineNumber == INT_MAX)
      return fail(error, lineNumber, "more lines than the planner can number");
    ++lineNumber;
    if (line.find_first_not_of(" \r\t") == std::string_view::npos)
      continue;
    splitFields(line, f);
    if (f.size() < header.size())
      return fail(error, lineNumber, "expected " + std::to_string(header.size()) + " fields");
    for (Field &field : fields)
      if (!toNumber(f[field.column], field.lowest, field.highest, field.value))
        return fail(error, lineNumber,
                    std::string("field '") + field.name + "': '" + std::string(f[field.column]) +
                        "' is not an integer in [" + std::to_string(field.lowest) + ", " +
                        std::to_string(field.highest) + "]");
    int64_t lower = fields[0].value, upper = fields[1].value, size = fields[2].value;
    uint64_t alignment = hasAlignment ? uint64_t(fields[3].value) : 1;
    if (upper <= lower)
      return fail(error, lineNumber,
                  "field 'upper': " + std::to_string(upper) + " is not after lower " +
                      std::to_string(lower));
    uint64_t bytes;
    if (!checkedAlignUp(uint64_t(size), alignment, bytes) || !checkedAdd(total, bytes, total) ||
        !checkedAdd(total, alignment, total) || total > kMaxPlannerBytes)
      return fail(error, lineNumber,
                  "field 'size': the buffers need more than 2^62 bytes in total");
    int id = int(result.problem.buffers.size());
    result.problem.buffers.push_back({id, uint64_t(size), alignment, int(lower), int(upper - 1)});
    result.names.emplace_back(f[idColumn]);
    if (hasOffset)
      result.offsets.push_back(uint64_t(fields.back().value));
  }
  return result;
}

namespace {
// One row per buffer; the offset column only with a plan.
void writeRows(std::ostream &out, const Problem &problem, const Plan *plan,
               const std::vector<std::string> &names) {
  out << (plan ? "id,lower,upper,size,offset\n" : "id,lower,upper,size\n");
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer &b = problem.buffers[i];
    if (i < names.size())
      out << names[i];
    else
      out << b.id;
    out << ',' << b.first << ',' << int64_t(b.last) + 1 << ',' << b.size;
    if (plan)
      out << ',' << plan->offsets[i];
    out << '\n';
  }
}
} // namespace

void writeMiniMallocCsv(std::ostream &out, const Problem &problem, const Plan &plan,
                        const std::vector<std::string> &names) {
  writeRows(out, problem, &plan, names);
}

void writeMiniMallocProblemCsv(std::ostream &out, const Problem &problem) {
  writeRows(out, problem, nullptr, {});
}

} // namespace bundlefit::planner::formats
