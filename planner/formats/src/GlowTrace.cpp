//===- GlowTrace.cpp - Parse Glow's allocation traces ---------------------===//
#include "bundlefit/planner/formats/GlowTrace.h"

#include <sstream>
#include <unordered_map>

namespace bundlefit::planner::formats {

namespace {
class TraceParser {
public:
  std::optional<std::vector<GlowTraceModel>> parse(std::istream &in,
                                                   std::string *error) {
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
      return readNumber(words, m.alignment) && m.alignment > 0 ? true
                                                               : bad("bad ALIGN");
    if (keyword == "ALLOC")
      return alloc(words);
    if (keyword == "FREE")
      return free(words);
    if (keyword == "MEM")
      return readNumber(words, m.glowArena) ? true : bad("bad MEM");
    if (keyword == "EFF")
      return (words >> m.glowEfficiency) ? true : bad("bad EFF");
    return bad("unknown keyword '" + keyword + "'");
  }

  template <typename T> static bool readNumber(std::istream &words, T &value) {
    return bool(words >> value);
  }

  bool startModel(std::istream &words) {
    if (!finishModel())
      return false;
    GlowTraceModel m;
    if (!(words >> m.name))
      return bad("MODEL without a name");
    models.push_back(std::move(m));
    openBuffers.clear();
    event = 0;
    return true;
  }

  bool alloc(std::istream &words) {
    long long id;
    uint64_t size;
    if (!(words >> id >> size))
      return bad("ALLOC needs an id and a size");
    if (openBuffers.count(id))
      return bad("ALLOC of live id " + std::to_string(id));
    GlowTraceModel &m = models.back();
    openBuffers[id] = int(m.problem.buffers.size());
    // last is fixed by the matching FREE.
    m.problem.buffers.push_back({int(id), size, 1, event, event});
    ++event;
    return true;
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
    ++event;
    return true;
  }

  // Applies ALIGN (it may come after the events) and checks every ALLOC
  // was freed.
  bool finishModel() {
    if (models.empty())
      return true;
    if (!openBuffers.empty())
      return bad("model " + models.back().name + ": id " +
                 std::to_string(openBuffers.begin()->first) + " never freed");
    for (Buffer &b : models.back().problem.buffers)
      b.alignment = models.back().alignment;
    return true;
  }

  std::vector<GlowTraceModel> models;
  std::unordered_map<long long, int> openBuffers; // Trace id -> buffer index.
  int event = 0;
  int lineNumber = 0;
  std::string message;
};
} // namespace

std::optional<std::vector<GlowTraceModel>> parseGlowTraces(std::istream &in,
                                                           std::string *error) {
  return TraceParser().parse(in, error);
}

} // namespace bundlefit::planner::formats
