//===- MiniMallocCsv.cpp - Read and write MiniMalloc CSV files ------------===//
#include "bundlefit/planner/formats/MiniMallocCsv.h"

#include "bundlefit/planner/CheckedArithmetic.h"

#include <climits>
#include <cstdint>
#include <map>
#include <sstream>

namespace bundlefit::planner::formats {

namespace {
// Splits on commas, trimming spaces and a trailing CR; reuses `fields`.
void splitFields(const std::string &line, std::vector<std::string> &fields) {
  fields.clear();
  size_t begin = 0;
  while (true) {
    size_t comma = line.find(',', begin);
    size_t end = comma == std::string::npos ? line.size() : comma;
    size_t a = begin, b = end;
    while (a < b && line[a] == ' ')
      ++a;
    while (b > a && (line[b - 1] == ' ' || line[b - 1] == '\r'))
      --b;
    fields.emplace_back(line, a, b - a);
    if (comma == std::string::npos)
      return;
    begin = comma + 1;
  }
}

/// A decimal integer in [lowest, highest], nothing else (no sign for
/// unsigned fields, no spaces, no wrap-around).
bool toNumber(const std::string &text, int64_t lowest, int64_t highest, int64_t &value) {
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
  std::string line;
  if (!std::getline(in, line))
    return fail(error, 1, "empty file");
  std::vector<std::string> header, f;
  splitFields(line, header);
  std::map<std::string, size_t> column;
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
  int lineNumber = 1;
  uint64_t total = 0; // Footprints + alignments so far, as checkProblem counts.
  while (std::getline(in, line)) {
    if (lineNumber == INT_MAX)
      return fail(error, lineNumber, "more lines than the planner can number");
    ++lineNumber;
    if (line.find_first_not_of(" \r\t") == std::string::npos)
      continue;
    splitFields(line, f);
    if (f.size() < header.size())
      return fail(error, lineNumber, "expected " + std::to_string(header.size()) + " fields");
    for (Field &field : fields)
      if (!toNumber(f[field.column], field.lowest, field.highest, field.value))
        return fail(error, lineNumber,
                    std::string("field '") + field.name + "': '" + f[field.column] +
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
    result.names.push_back(f[idColumn]);
    if (hasOffset)
      result.offsets.push_back(uint64_t(fields.back().value));
  }
  return result;
}

void writeMiniMallocCsv(std::ostream &out, const Problem &problem, const Plan &plan,
                        const std::vector<std::string> &names) {
  out << "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer &b = problem.buffers[i];
    if (i < names.size())
      out << names[i];
    else
      out << b.id;
    out << ',' << b.first << ',' << int64_t(b.last) + 1 << ',' << b.size << ',' << plan.offsets[i]
        << '\n';
  }
}

} // namespace bundlefit::planner::formats
