//===- MiniMallocCsv.cpp - Read and write MiniMalloc CSV files ------------===//
#include "bundlefit/planner/formats/MiniMallocCsv.h"

#include <map>
#include <sstream>

namespace bundlefit::planner::formats {

namespace {
std::vector<std::string> splitFields(const std::string &line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) {
    while (!field.empty() && (field.back() == '\r' || field.back() == ' '))
      field.pop_back();
    size_t start = field.find_first_not_of(' ');
    fields.push_back(start == std::string::npos ? "" : field.substr(start));
  }
  return fields;
}

bool toNumber(const std::string &text, int64_t &value) {
  if (text.empty())
    return false;
  size_t used = 0;
  try {
    value = std::stoll(text, &used);
  } catch (...) {
    return false;
  }
  return used == text.size();
}

std::nullopt_t fail(std::string *error, int line, const std::string &message) {
  if (error)
    *error = "line " + std::to_string(line) + ": " + message;
  return std::nullopt;
}
} // namespace

std::optional<CsvProblem> parseMiniMallocCsv(std::istream &in, std::string *error) {
  std::string line;
  if (!std::getline(in, line))
    return fail(error, 1, "empty file");
  std::map<std::string, size_t> column;
  std::vector<std::string> header = splitFields(line);
  for (size_t k = 0; k < header.size(); ++k)
    column[header[k]] = k;
  for (const char *required : {"id", "lower", "upper", "size"})
    if (!column.count(required))
      return fail(error, 1, std::string("missing column '") + required + "'");
  bool hasAlignment = column.count("alignment"), hasOffset = column.count("offset");

  CsvProblem result;
  int lineNumber = 1;
  while (std::getline(in, line)) {
    ++lineNumber;
    if (line.find_first_not_of(" \r\t") == std::string::npos)
      continue;
    std::vector<std::string> f = splitFields(line);
    if (f.size() < header.size())
      return fail(error, lineNumber, "expected " + std::to_string(header.size()) + " fields");
    int64_t lower, upper, size, alignment = 1, offset = 0;
    if (!toNumber(f[column["lower"]], lower) || !toNumber(f[column["upper"]], upper) ||
        !toNumber(f[column["size"]], size) ||
        (hasAlignment && !toNumber(f[column["alignment"]], alignment)) ||
        (hasOffset && !toNumber(f[column["offset"]], offset)))
      return fail(error, lineNumber, "not a number");
    if (upper <= lower || size < 0 || alignment < 1 || offset < 0)
      return fail(error, lineNumber, "need lower < upper, size >= 0, alignment >= 1");
    int id = int(result.problem.buffers.size());
    result.problem.buffers.push_back(
        {id, uint64_t(size), uint64_t(alignment), int(lower), int(upper - 1)});
    result.names.push_back(f[column["id"]]);
    if (hasOffset)
      result.offsets.push_back(uint64_t(offset));
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
    out << ',' << b.first << ',' << int64_t(b.last) + 1 << ',' << b.size << ','
        << plan.offsets[i] << '\n';
  }
}

} // namespace bundlefit::planner::formats
