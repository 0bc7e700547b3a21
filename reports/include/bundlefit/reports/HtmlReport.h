//===- HtmlReport.h - One self-contained HTML page per report -------------===//
//
// `--html FILE` on every command with a report. The page has no scripts and
// loads nothing (inline SVG and CSS only), so it can be attached to a CI run
// or mailed and still open offline. Sections, each present when its data is:
//   - the memory timeline: x = schedule step, y = arena offset, one <rect
//     class="buffer"> per activation buffer or kernel scratch with a <title>
//     tooltip "tensor, producer P, N bytes at offset O, steps A-B", a
//     <text class="buffer-label"> "tensor N B" inside boxes big enough, and
//     the live-peak lower bound as <line class="lower-bound">;
//   - Flash/RAM bars, one <g class="region-bar"> per region of the chosen part,
//     used bytes against capacity, split into what the region holds, one
//     colour per kind of content, named in a <div class="legend">;
//   - the per-layer table (LayerTable.h), with predicted time when a device
//     was chosen;
//   - the variant comparison from `pick`;
//   - any other table a command prints (inspect, devices, run...), whole.
// Geometry is exposed as data-* attributes on the SVG so a test can check
// what is drawn without re-deriving the layout constants.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/reports/LayerTable.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bundlefit {

struct HtmlRegionBar {
  std::string name; ///< FLASH, DTCM, ...
  std::string kind; ///< flash, tcm, sram, ...
  uint64_t used = 0;
  uint64_t capacity = 0;
  std::vector<std::pair<std::string, uint64_t>> items; ///< What it holds.
};

struct HtmlVariantRow {
  std::string variant, weights;
  uint64_t flash = 0, ram = 0;
  bool fits = false;
  double ms = 0;
  bool best = false;
  std::string problems;
};

struct HtmlReport {
  std::string title;                ///< "lenet: memory plan"
  std::vector<std::string> summary; ///< Lines under the title.
  const MemoryPlan *plan = nullptr; ///< Timeline and layer table.
  const LayerTiming *timing = nullptr;
  std::string regionsTitle; ///< "rt1062: Flash and RAM (float, weights auto)"
  std::vector<HtmlRegionBar> regions;
  std::vector<HtmlVariantRow> variants;
  std::string pickReason;
  std::string verdict; ///< "FITS", "DOES NOT FIT" or empty.
  std::vector<std::string> notes;
  std::vector<std::pair<std::string, TextTable>> tables; ///< Titled, after the layers.
};

/// Plot geometry of the timeline (pixels); the test reads them back from the
/// SVG's data-* attributes.
struct TimelineGeometry {
  static constexpr double kLeft = 96, kTop = 16, kWidth = 840, kHeight = 360;
};

std::string renderHtmlReport(const HtmlReport &report);

/// The tooltip of one buffer rectangle.
std::string bufferTooltip(const std::string &tensor, const std::string &producer, uint64_t size,
                          uint64_t offset, int first, int last);

} // namespace bundlefit
