// The HTML memory timeline reads without hovering (issue 30, item 6): layer
// names on the x axis, y ticks at round byte counts, kernel scratch in its
// legend, and colours of its own (none is a Flash/RAM legend colour).
#include "ReportTestSupport.h"

#include <algorithm>
#include <regex>
#include <set>
#include <vector>

using namespace bundlefit::test;

namespace {

/// Every match of `pattern`'s first group in `text`.
std::vector<std::string> allOf(const std::string &text, const std::string &pattern) {
  std::vector<std::string> found;
  std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it)
    found.push_back((*it)[1].str());
  return found;
}

std::string timelineOf(const std::string &page) {
  size_t begin = page.find("<svg class=\"timeline\"");
  REQUIRE(begin != std::string::npos);
  return page.substr(begin, page.find("</svg>", begin) - begin);
}

} // namespace

TEST_CASE("the HTML timeline: layer names, round y ticks, scratch legend, its own colours") {
  std::string html = tmpPath("timeline.html");
  SplitResult r = runSplit("plan " + modelPath("lenet") + " --device rt1060 --html " + html);
  REQUIRE_MESSAGE(r.exitCode == 0, r.err);
  std::string page = readText(html);
  std::string timeline = timelineOf(page);

  // x axis: the layers' names, in schedule order (LeNet's nodes: tests/models).
  std::vector<std::string> layers =
      allOf(timeline, "<text class=\"axis layer-name\"[^>]*><title>[^<]*</title>([^<]*)</text>");
  REQUIRE(layers.size() >= 4);
  CHECK(std::find(layers.begin(), layers.end(), "fc1") != layers.end());
  CHECK(std::find(layers.begin(), layers.end(), "0") == layers.end()); // not step numbers

  // y ticks: 0, s, 2s, ... with s = 1, 2 or 5 x 10^k bytes.
  std::vector<std::string> ticks = allOf(timeline, "<text class=\"axis y-tick\"[^>]*>([0-9,]+)<");
  REQUIRE(ticks.size() >= 3);
  std::vector<uint64_t> values;
  for (std::string tick : ticks) {
    tick.erase(std::remove(tick.begin(), tick.end(), ','), tick.end());
    values.push_back(std::stoull(tick));
  }
  uint64_t step = values[1];
  uint64_t mantissa = step;
  while (mantissa % 10 == 0)
    mantissa /= 10;
  CHECK_MESSAGE((mantissa == 1 || mantissa == 2 || mantissa == 5), "tick step " << step);
  for (size_t i = 0; i < values.size(); ++i)
    CHECK(values[i] == i * step);

  // The legend under the timeline names kernel scratch.
  size_t legend = page.find("<div class=\"timeline-legend\">");
  REQUIRE(legend != std::string::npos);
  CHECK(page.find("kernel scratch", legend) < page.find("</div>", legend));

  // No buffer rectangle shares a colour with the Flash/RAM bars' legend.
  std::vector<std::string> bufferFills =
      allOf(timeline, "<rect class=\"buffer[^\"]*\"[^>]* fill=\"([^\"]+)\"");
  std::vector<std::string> barFills = allOf(page, "<rect class=\"item\"[^>]* fill=\"([^\"]+)\"");
  REQUIRE(!bufferFills.empty());
  REQUIRE(!barFills.empty());
  std::set<std::string> bars(barFills.begin(), barFills.end());
  for (const std::string &fill : bufferFills)
    CHECK_MESSAGE(!bars.count(fill), fill << " is a Flash/RAM legend colour");
}
