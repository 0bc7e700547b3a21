#include "bundlefit/reports/HtmlReport.h"

#include "bundlefit/reports/MemoryReport.h"
#include "bundlefit/reports/TextTable.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace bundlefit {

namespace {

std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string num(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

std::string percent(uint64_t used, uint64_t capacity) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%",
                capacity ? 100.0 * double(used) / double(capacity) : 0.0);
  return text;
}

// Distinct, light fills so that black text and neighbouring rectangles read.
std::string fill(size_t index) { return "hsl(" + std::to_string((index * 47) % 360) + ",65%,72%)"; }

// The timeline's own colours, so that none reads as an entry of the Flash/RAM
// legend: tensors in pale blues and greens (neighbours alternate in
// lightness), kernel scratch in one grey.
std::string tensorFill(size_t index) {
  return "hsl(" + std::to_string(170 + (index * 23) % 70) + ",40%," +
         std::to_string(index % 2 ? 86 : 76) + "%)";
}
const char *const kScratchFill = "#d4d4d4";

/// A round step (1, 2 or 5 x 10^k bytes) giving about four y ticks up to `top`.
uint64_t roundTickStep(double top) {
  double raw = std::max(1.0, top / 4);
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0})
    if (factor * magnitude >= raw)
      return uint64_t(factor * magnitude);
  return uint64_t(10 * magnitude);
}

/// A layer name cut to `limit` characters (an ellipsis ends a cut one).
std::string shortName(const std::string &name, size_t limit) {
  return name.size() <= limit ? name : name.substr(0, limit - 1) + "\u2026";
}

struct TimelineBox {
  std::string tensor, producer;
  uint64_t offset = 0, size = 0;
  int first = 0, last = 0;
  bool scratch = false;
};

/// The tensor's name and size written inside its box, or the name alone,
/// when the box is big enough to hold it (about 6.5 px a character at 11 px);
/// small boxes keep only their tooltip.
std::string boxLabel(const TimelineBox &box, double left, double top, double width, double height) {
  const double charWidth = 6.5, lineHeight = 13;
  if (height < lineHeight)
    return "";
  std::string label = box.tensor + " " + withThousands(box.size) + " B";
  if (double(label.size()) * charWidth + 6 > width)
    label = box.tensor;
  if (double(label.size()) * charWidth + 6 > width)
    return "";
  return "<text class=\"buffer-label\" x=\"" + num(left + 3) + "\" y=\"" +
         num(top + std::min(height, lineHeight + 4) / 2 + 4) + "\" data-tensor=\"" +
         escape(box.tensor) + "\">" + escape(label) + "</text>\n";
}

std::string renderTimeline(const MemoryPlan &plan) {
  using G = TimelineGeometry;
  std::vector<TimelineBox> boxes;
  for (const PlannedBuffer &buffer : plan.buffers)
    boxes.push_back({buffer.value->name,
                     buffer.value->producer ? buffer.value->producer->name : std::string("(input)"),
                     buffer.placement.offset, buffer.placement.size, buffer.first, buffer.last,
                     false});
  for (const ScratchBuffer &scratch : plan.scratch) {
    int step = int(std::find(plan.schedule.begin(), plan.schedule.end(), scratch.node) -
                   plan.schedule.begin());
    boxes.push_back({scratch.node->name + ".scratch", scratch.node->name, scratch.placement.offset,
                     scratch.placement.size, step, step, true});
  }
  int steps = std::max<int>(1, int(plan.schedule.size()));
  double yMax = double(std::max<uint64_t>({plan.activationsSize, plan.activationsLowerBound, 1}));
  auto x = [&](int step) { return G::kLeft + G::kWidth * double(step) / double(steps); };
  auto y = [&](double offset) { return G::kTop + G::kHeight * (1.0 - offset / yMax); };
  // Layer names under the x axis, slanted; the longest sets the height.
  int every = std::max(1, (steps + 23) / 24);
  const size_t nameLimit = 22;
  size_t longest = 4;
  for (int step = 0; step < steps; step += every)
    longest = std::max(longest, std::min(nameLimit, plan.schedule[size_t(step)]->name.size()));
  const double nameDepth = 6.5 * double(longest) * 0.71 + 12;
  double svgWidth = G::kLeft + G::kWidth + 24, svgHeight = G::kTop + G::kHeight + nameDepth + 36;

  std::string svg =
      "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(svgWidth) +
      "\" height=\"" + num(svgHeight) + "\" viewBox=\"0 0 " + num(svgWidth) + " " + num(svgHeight) +
      "\" data-plot-left=\"" + num(G::kLeft) + "\" data-plot-top=\"" + num(G::kTop) +
      "\" data-plot-width=\"" + num(G::kWidth) + "\" data-plot-height=\"" + num(G::kHeight) +
      "\" data-steps=\"" + std::to_string(steps) + "\" data-y-max=\"" +
      std::to_string(uint64_t(yMax)) + "\" data-arena=\"" + std::to_string(plan.activationsSize) +
      "\" data-lower-bound=\"" + std::to_string(plan.activationsLowerBound) + "\">\n";
  svg += "<rect class=\"plot\" x=\"" + num(G::kLeft) + "\" y=\"" + num(G::kTop) + "\" width=\"" +
         num(G::kWidth) + "\" height=\"" + num(G::kHeight) + "\"/>\n";
  // y ticks at round byte counts (1, 2 or 5 x 10^k apart), not fractions of
  // the arena.
  uint64_t tick = roundTickStep(yMax);
  for (uint64_t offset = 0; double(offset) <= yMax; offset += tick) {
    svg += "<line class=\"grid\" x1=\"" + num(G::kLeft) + "\" x2=\"" + num(G::kLeft + G::kWidth) +
           "\" y1=\"" + num(y(double(offset))) + "\" y2=\"" + num(y(double(offset))) + "\"/>";
    svg += "<text class=\"axis y-tick\" x=\"" + num(G::kLeft - 6) + "\" y=\"" +
           num(y(double(offset)) + 4) + "\" text-anchor=\"end\">" + withThousands(offset) +
           "</text>\n";
  }
  for (int step = 0; step < steps; step += every) {
    if (plan.schedule.empty())
      break;
    const std::string &layer = plan.schedule[size_t(step)]->name;
    double cx = (x(step) + x(step + 1)) / 2, cy = G::kTop + G::kHeight + 12;
    svg += "<text class=\"axis layer-name\" x=\"" + num(cx) + "\" y=\"" + num(cy) +
           "\" text-anchor=\"end\" transform=\"rotate(-45 " + num(cx) + " " + num(cy) +
           ")\" data-step=\"" + std::to_string(step) + "\"><title>step " + std::to_string(step) +
           ": " + escape(layer) + "</title>" + escape(shortName(layer, nameLimit)) + "</text>";
  }
  svg += "\n<text class=\"axis-title\" x=\"" + num(G::kLeft + G::kWidth / 2) + "\" y=\"" +
         num(G::kTop + G::kHeight + nameDepth + 26) +
         "\" text-anchor=\"middle\">layer (schedule order)</text>\n";

  for (size_t i = 0; i < boxes.size(); ++i) {
    const TimelineBox &box = boxes[i];
    double top = y(double(box.offset + box.size));
    double height = std::max(0.5, y(double(box.offset)) - top);
    svg +=
        "<rect class=\"buffer" + std::string(box.scratch ? " scratch" : "") + "\" x=\"" +
        num(x(box.first)) + "\" y=\"" + num(top) + "\" width=\"" +
        num(x(box.last + 1) - x(box.first)) + "\" height=\"" + num(height) + "\" fill=\"" +
        (box.scratch ? std::string(kScratchFill) : tensorFill(i)) + "\" data-tensor=\"" +
        escape(box.tensor) + "\" data-offset=\"" + std::to_string(box.offset) + "\" data-size=\"" +
        std::to_string(box.size) + "\"><title>" +
        escape(bufferTooltip(box.tensor, box.producer, box.size, box.offset, box.first, box.last)) +
        "</title></rect>\n";
    svg += boxLabel(box, x(box.first), top, x(box.last + 1) - x(box.first), height);
  }
  double bound = y(double(plan.activationsLowerBound));
  svg += "<line class=\"lower-bound\" x1=\"" + num(G::kLeft) + "\" x2=\"" +
         num(G::kLeft + G::kWidth) + "\" y1=\"" + num(bound) + "\" y2=\"" + num(bound) +
         "\"><title>live-peak lower bound: " + withThousands(plan.activationsLowerBound) +
         " bytes</title></line>\n";
  svg += "<text class=\"bound-label\" x=\"" + num(G::kLeft + G::kWidth - 4) + "\" y=\"" +
         num(bound - 4) + "\" text-anchor=\"end\">lower bound " +
         withThousands(plan.activationsLowerBound) + "</text>\n";
  // The timeline's own legend (div.legend is the Flash/RAM bars').
  return svg +
         "</svg>\n<div class=\"timeline-legend\"><span class=\"legend-item\"><span "
         "class=\"swatch\" style=\"background:" +
         tensorFill(0) +
         "\"></span>tensor (labelled where its name fits)</span><span class=\"legend-item\">"
         "<span class=\"swatch scratch\" style=\"background:" +
         kScratchFill +
         "\"></span>kernel scratch (dashed)</span><span class=\"legend-item\"><span "
         "class=\"swatch bound\"></span>live-peak lower bound</span></div>\n";
}

std::string renderRegionBars(const std::vector<HtmlRegionBar> &regions) {
  const double labelWidth = 260, barWidth = 600, rowHeight = 34;
  // One colour per kind of content across every bar, so the legend reads
  // for all of them ("weights in RAM" is the same colour in ITCM and DTCM).
  std::map<std::string, size_t> colourOf;
  std::vector<std::string> legend;
  for (const HtmlRegionBar &region : regions)
    for (const auto &item : region.items)
      if (colourOf.emplace(item.first, legend.size()).second)
        legend.push_back(item.first);
  double height = rowHeight * double(regions.size()) + 8;
  std::string svg = "<svg class=\"regions\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    num(labelWidth + barWidth + 90) + "\" height=\"" + num(height) +
                    "\" data-bar-width=\"" + num(barWidth) + "\">\n";
  for (size_t r = 0; r < regions.size(); ++r) {
    const HtmlRegionBar &region = regions[r];
    double top = 4 + rowHeight * double(r);
    double scale = region.capacity ? barWidth / double(region.capacity) : 0;
    bool over = region.used > region.capacity;
    svg += "<g class=\"region-bar" + std::string(over ? " over" : "") + "\" data-region=\"" +
           escape(region.name) + "\" data-used=\"" + std::to_string(region.used) +
           "\" data-capacity=\"" + std::to_string(region.capacity) + "\">\n";
    svg += "<text x=\"0\" y=\"" + num(top + 17) + "\">" + escape(region.name) + " (" +
           escape(region.kind) + ") " + withThousands(region.used) + " / " +
           withThousands(region.capacity) + "</text>\n";
    svg += "<rect class=\"capacity\" x=\"" + num(labelWidth) + "\" y=\"" + num(top) +
           "\" width=\"" + num(barWidth) + "\" height=\"24\"><title>" + escape(region.name) +
           " capacity " + withThousands(region.capacity) + " bytes</title></rect>\n";
    double x = labelWidth;
    for (size_t i = 0; i < region.items.size(); ++i) {
      double width = std::min(double(region.items[i].second) * scale, labelWidth + barWidth - x);
      if (width <= 0)
        continue;
      svg += "<rect class=\"item\" x=\"" + num(x) + "\" y=\"" + num(top) + "\" width=\"" +
             num(width) + "\" height=\"24\" fill=\"" +
             fill(colourOf.at(region.items[i].first) + 3) + "\"><title>" +
             escape(region.items[i].first) + ": " + withThousands(region.items[i].second) +
             " bytes</title></rect>\n";
      x += width;
    }
    double usedWidth = std::min(double(region.used) * scale, barWidth);
    svg += "<rect class=\"used\" x=\"" + num(labelWidth) + "\" y=\"" + num(top) + "\" width=\"" +
           num(usedWidth) + "\" height=\"24\"/>\n";
    svg += "<text x=\"" + num(labelWidth + barWidth + 6) + "\" y=\"" + num(top + 17) + "\">" +
           percent(region.used, region.capacity) + (over ? " OVER" : "") + "</text>\n</g>\n";
  }
  svg += "</svg>\n<div class=\"legend\">";
  for (size_t i = 0; i < legend.size(); ++i)
    svg += "<span class=\"legend-item\"><span class=\"swatch\" style=\"background:" + fill(i + 3) +
           "\"></span>" + escape(legend[i]) + "</span>";
  return svg + "<span class=\"legend-item\"><span class=\"swatch free\"></span>free</span>"
               "<span class=\"legend-item\"><span class=\"swatch used\"></span>used (outline; "
               "red: over capacity)</span></div>\n";
}

std::string renderLayerRows(const MemoryPlan &plan, const LayerTiming *timing) {
  std::string html = "<table class=\"layers\">\n<thead><tr><th>step</th><th>node</th><th>op</th>"
                     "<th>output</th><th>MACs</th><th>weights</th><th>live act.</th>";
  if (timing)
    html += "<th>predicted</th>";
  html += "</tr></thead>\n<tbody>\n";
  uint64_t macs = 0, weights = 0, peak = 0;
  for (const LayerRow &row : computeLayerRows(plan)) {
    macs += row.macs;
    weights += row.weightBytes;
    peak = std::max(peak, row.liveBytes);
    html += "<tr><td class=\"n\">" + std::to_string(row.step) + "</td><td>" +
            escape(row.node->name) + "</td><td>" + escape(layerOpLabel(*row.node)) + "</td><td>" +
            escape(row.node->output()->type.str()) + "</td><td class=\"n\">" +
            withThousands(row.macs) + "</td><td class=\"n\">" + withThousands(row.weightBytes) +
            "</td><td class=\"n\">" + withThousands(row.liveBytes) + "</td>";
    if (timing) {
      auto it = timing->msByNode.find(row.node->name);
      html += "<td class=\"n\">" +
              (it == timing->msByNode.end() ? std::string("-") : formatMs(it->second)) + "</td>";
    }
    html += "</tr>\n";
  }
  html += "</tbody>\n<tfoot><tr><td></td><td>total</td><td></td><td></td><td class=\"n\">" +
          withThousands(macs) + "</td><td class=\"n\">" + withThousands(weights) +
          "</td><td class=\"n\">peak " + withThousands(peak) + "</td>";
  if (timing)
    html += "<td class=\"n\">" + formatMs(timing->totalMs) + "</td>";
  return html + "</tr></tfoot>\n</table>\n";
}

std::string renderVariants(const std::vector<HtmlVariantRow> &variants) {
  double slowest = 0;
  for (const HtmlVariantRow &row : variants)
    slowest = std::max(slowest, row.ms);
  std::string html = "<table class=\"variants\">\n<thead><tr><th></th><th>variant</th>"
                     "<th>weights</th><th>Flash</th><th>RAM</th><th>fits</th><th>predicted</th>"
                     "<th></th><th>problems</th></tr></thead>\n<tbody>\n";
  for (const HtmlVariantRow &row : variants) {
    double width = slowest > 0 ? 160.0 * row.ms / slowest : 0;
    html += "<tr class=\"" + std::string(row.best ? "best " : "") + (row.fits ? "fits" : "nofit") +
            "\"><td>" + (row.best ? "&#9733;" : "") + "</td><td>" + escape(row.variant) +
            "</td><td>" + escape(row.weights) + "</td><td class=\"n\">" + withThousands(row.flash) +
            "</td><td class=\"n\">" + withThousands(row.ram) + "</td><td>" +
            (row.fits ? "yes" : "no") + "</td><td class=\"n\">" + formatMs(row.ms) +
            "</td><td><svg width=\"164\" height=\"12\"><rect class=\"time\" x=\"0\" y=\"1\" "
            "width=\"" +
            num(width) + "\" height=\"10\"/></svg></td><td>" + escape(row.problems) +
            "</td></tr>\n";
  }
  return html + "</tbody>\n</table>\n";
}

/// A text report's table, every column and cell whole (a page has room).
std::string renderTable(const TextTable &table) {
  auto cell = [&](size_t column, const std::string &text, const char *tag) {
    return std::string("<") + tag + (table.numeric()[column] ? " class=\"n\">" : ">") +
           escape(text) + "</" + tag + ">";
  };
  std::string html = "<table class=\"report\">\n<thead><tr>";
  for (size_t i = 0; i < table.header().size(); ++i)
    html += cell(i, table.header()[i], "th");
  html += "</tr></thead>\n<tbody>\n";
  bool afterRule = false;
  for (const std::vector<std::string> &row : table.rows()) {
    if (row.empty()) {
      afterRule = true;
      continue;
    }
    html += afterRule ? "<tr class=\"rule\">" : "<tr>";
    for (size_t i = 0; i < row.size(); ++i)
      html += cell(i, row[i], "td");
    html += "</tr>\n";
    afterRule = false;
  }
  return html + "</tbody>\n</table>\n";
}

const char *kStyle = R"(body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
p.summary{margin:2px 0;color:#444}
table{border-collapse:collapse;font-size:13px}
th,td{padding:2px 10px;border-bottom:1px solid #e4e4e4;text-align:left;white-space:nowrap}
td.n{text-align:right;font-variant-numeric:tabular-nums}
tfoot td{font-weight:600;border-top:1px solid #999}tr.rule td{border-top:1px solid #999}
tr.best{background:#e8f6e8}tr.nofit{color:#999}
svg text{font:11px system-ui,sans-serif;fill:#333}
rect.plot{fill:#fafafa;stroke:#bbb}line.grid{stroke:#e4e4e4}
rect.buffer{stroke:#555;stroke-width:0.5}rect.buffer.scratch{stroke-dasharray:2 2}
line.lower-bound{stroke:#d00000;stroke-width:2;stroke-dasharray:6 3}
text.bound-label{fill:#d00000}
rect.capacity{fill:#f2f2f2;stroke:#999}rect.used{fill:none;stroke:#222;stroke-width:1.5}
g.over rect.used{stroke:#d00000;stroke-width:3}
rect.time{fill:#6a9fd8}
text.buffer-label{font-size:11px;fill:#111;pointer-events:none}
div.legend{margin:6px 0 0 260px;max-width:640px;font-size:12px}
div.timeline-legend{margin:0 0 6px 96px;font-size:12px}
span.legend-item{display:inline-block;margin:0 14px 4px 0;white-space:nowrap}
span.swatch{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px;
border:1px solid #999}span.swatch.free{background:#f2f2f2}span.swatch.used{border:1.5px solid #222}
span.swatch.scratch{border:1px dashed #555}span.swatch.bound{height:0;border:0;border-top:2px dashed #d00000;
vertical-align:3px}
.verdict{font-weight:700}.verdict.FITS{color:#137a13}.verdict.NOFIT{color:#d00000}
)";

} // namespace

std::string bufferTooltip(const std::string &tensor, const std::string &producer, uint64_t size,
                          uint64_t offset, int first, int last) {
  return tensor + ", producer " + producer + ", " + withThousands(size) + " bytes at offset " +
         withThousands(offset) + ", steps " + std::to_string(first) + "-" + std::to_string(last);
}

std::string renderHtmlReport(const HtmlReport &report) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<title>" +
                     escape(report.title) + "</title>\n<style>\n" + kStyle +
                     "</style>\n</head>\n<body>\n<h1>" + escape(report.title) + "</h1>\n";
  for (const std::string &line : report.summary)
    html += "<p class=\"summary\">" + escape(line) + "</p>\n";
  if (!report.verdict.empty())
    html += "<p class=\"verdict " + std::string(report.verdict == "FITS" ? "FITS" : "NOFIT") +
            "\">verdict: " + escape(report.verdict) + "</p>\n";
  if (report.plan) {
    html += "<h2>Activation memory over the schedule</h2>\n<p class=\"summary\">arena " +
            withThousands(report.plan->activationsSize) + " bytes, lower bound " +
            withThousands(report.plan->activationsLowerBound) + ", " +
            arenaContentsLabel(*report.plan) + " (" + escape(report.plan->allocator) +
            "); hover a rectangle for its tensor</p>\n" + renderTimeline(*report.plan);
  }
  if (!report.regions.empty())
    html += "<h2>" + escape(report.regionsTitle) + "</h2>\n" + renderRegionBars(report.regions);
  if (!report.variants.empty()) {
    html += "<h2>Variants</h2>\n" + renderVariants(report.variants);
    if (!report.pickReason.empty())
      html += "<p class=\"summary\">" + escape(report.pickReason) + "</p>\n";
  }
  if (report.plan) {
    html += "<h2>Layers</h2>\n";
    if (report.timing)
      // The plan is the timed build's own: an int8 build's sizes are int8.
      html += "<p class=\"summary\">sizes from the " +
              std::string(report.timing->build.rfind("int8", 0) == 0 ? "int8" : "float") +
              " plan; predicted time on " + escape(report.timing->device) + " for the " +
              escape(report.timing->build) + " build (cost model)</p>\n";
    html += renderLayerRows(*report.plan, report.timing);
  }
  for (const auto &[title, table] : report.tables)
    html += "<h2>" + escape(title) + "</h2>\n" + renderTable(table);
  for (const std::string &note : report.notes)
    html += "<p class=\"summary\">note: " + escape(note) + "</p>\n";
  return html + "</body>\n</html>\n";
}

} // namespace bundlefit
