//===- GlowTrace.cpp - Parse Glow's allocation traces ---------------------===//
#include "bundlefit/planner/formats/GlowTrace.h"

#include "bundlefit/planner/CheckedArithmetic.h"

#include <climits>
#include <sstream>
#include <unordered_map>

namespace bundlefit::planner::formats {

namespace {
class TraceParser {
public:
  std::optional<std::vector<GlowTraceModel>> parse(std::istream &in, std::string *error) {
    std::string line;
    while (std::getline(in, line)) {
      ++lineNumber;
      if (!parseLine(line))
        return fail(error);
    }
    if (!finishModel())
      return fail(error);
    return std::move(models);
  }

private:
  std::nullopt_t fail(std::string *error) {
    if (error)
      *error = "line " + std::to_string(lineNumber) + ": " + message;
    return std::nullopt;
  }

  bool bad(std::string text) {
    message = std::move(text);
    return false;
  }

  bool parseLine(const std::string &line) {
    std::istringstream words(line);
    std::string keyword;
    if (!(words >> keyword) || keyword[0] == '#')
      return true;
    if (keyword == "MODEL")
      return startModel(words);
    if (models.empty())
      return bad("'" + keyword + "' before any MODEL");
    GlowTraceModel &m = models.back();
    if (keyword == "ALIGN")
      return readBytes(words, "ALIGN alignment", m.alignment) &&
             (m.alignment > 0 || bad("ALIGN alignment: must be at least 1"));
    if (keyword == "ALLOC")
      return alloc(words);
    if (keyword == "FREE")
      return free(words);
    if (keyword == "MEM")
      return readBytes(words, "MEM bytes", m.glowArena);
    if (keyword == "EFF")
      return (words >> m.glowEfficiency) ? true : bad("bad EFF");
    return bad("unknown keyword '" + keyword + "'");
  }

  // A byte count: decimal digits only (no sign, so "-100" cannot wrap to
  // 2^64 - 100), at most kMaxPlannerBytes.
  bool readBytes(std::istream &words, const char *field, uint64_t &value) {
    std::string text;
    words >> text;
    value = 0;
    bool ok = !text.empty();
    for (char c : text)
      ok = ok && c >= '0' && c <= '9' && checkedMul(value, 10, value) &&
           checkedAdd(value, uint64_t(c - '0'), value) && value <= kMaxPlannerBytes;
    return ok || bad(std::string(field) + ": '" + text + "' is not a byte count in [0, 2^62]");
  }

  // The next event's step; the planner's clock is an int.
  bool nextEvent() {
    if (event == INT_MAX)
      return bad("more events than the planner can number (2^31 - 1)");
    ++event;
    return true;
  }

  bool startModel(std::istream &words) {
    if (!finishModel())
      return false;
    GlowTraceModel m;
    if (!(words >> m.name))
      return bad("MODEL without a name");
    models.push_back(std::move(m));
    openBuffers.clear();
    allocLines.clear();
    event = 0;
    return true;
  }

  bool alloc(std::istream &words) {
    long long id;
    uint64_t size;
    if (!(words >> id))
      return bad("ALLOC needs an id and a size");
    if (!readBytes(words, "ALLOC size", size))
      return false;
    if (openBuffers.count(id))
      return bad("ALLOC of live id " + std::to_string(id));
    GlowTraceModel &m = models.back();
    openBuffers[id] = int(m.problem.buffers.size());
    allocLines.push_back(lineNumber);
    // last is fixed by the matching FREE.
    m.problem.buffers.push_back({int(id), size, 1, event, event});
    return nextEvent();
  }

  bool free(std::istream &words) {
    long long id;
    if (!(words >> id))
      return bad("FREE needs an id");
    auto it = openBuffers.find(id);
    if (it == openBuffers.end())
      return bad("FREE of unknown id " + std::to_string(id));
    models.back().problem.buffers[it->second].last = event - 1;
    openBuffers.erase(it);
    return nextEvent();
  }

  // Applies ALIGN (it may come after the events) and checks every ALLOC
  // was freed.
  bool finishModel() {
    if (models.empty())
      return true;
    if (!openBuffers.empty())
      return bad("model " + models.back().name + ": id " +
                 std::to_string(openBuffers.begin()->first) + " never freed");
    // Every size the planner derives must stay representable.
    uint64_t total = 0, bytes = 0;
    std::vector<Buffer> &buffers = models.back().problem.buffers;
    for (size_t k = 0; k < buffers.size(); ++k) {
      Buffer &b = buffers[k];
      b.alignment = models.back().alignment;
      if (!checkedAlignUp(b.size, b.alignment, bytes) || !checkedAdd(total, bytes, total) ||
          !checkedAdd(total, b.alignment, total) || total > kMaxPlannerBytes) {
        lineNumber = allocLines[k]; // Name the ALLOC that went past.
        return bad("model " + models.back().name + ": ALLOC size of id " + std::to_string(b.id) +
                   ": the buffers need more than 2^62 bytes in total");
      }
    }
    return true;
  }

  std::vector<GlowTraceModel> models;
  std::unordered_map<long long, int> openBuffers; // Trace id -> buffer index.
  std::vector<int> allocLines;                    // Per buffer of the current model.
  int event = 0;
  int lineNumber = 0;
  std::string message;
};
} // namespace

std::optional<std::vector<GlowTraceModel>> parseGlowTraces(std::istream &in, std::string *error) {
  return TraceParser().parse(in, error);
}

} // namespace bundlefit::planner::formats
