//===- WeightPlacement.cpp - The files of a bundle placed for a part -------===//
//
// A bundle compiled with `--device PART` carries the weights placement `fit`
// reported: per-region weight files (<net>.weights.<REGION>.bin, slices of
// weights.bin), <net>_weights.c (one section per region, the copy table of the
// segments that live in RAM), <net>_weights.ld (a linker-script fragment
// placing those sections), and in <net>.h each region's offset, size and
// alignment, the split entry point and <net>_run(). See BundleWriter.h.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/bundle/BundleWriter.h"

#include "Templates.h"

#include "bundlefit/support/Error.h"
#include "bundlefit/support/Format.h"
#include "bundlefit/support/Names.h"

#include <cctype>

namespace bundlefit {

namespace {

using templates::fillTemplate;
using templates::withoutFinalNewline;

std::string segmentWhat(const MemoryPlan &plan, const WeightSegment &segment) {
  std::string count = std::to_string(segment.constants.size()) + " weight tensor" +
                      (segment.constants.size() == 1 ? "" : "s");
  return count + (segment.copiedToRam ? ", copied from " + plan.weightImageRegion + " at start-up"
                                      : ", read in place");
}

} // namespace

std::string regionIdentifier(const std::string &region) {
  std::string id;
  for (char c : region)
    id += std::isalnum((unsigned char)c) || c == '_' ? c : '_';
  if (id.empty() || std::isdigit((unsigned char)id[0]))
    id = "R_" + id;
  return id;
}

std::string firmwareEntryName(const MemoryPlan &plan, const std::string &net) {
  return plan.weightSegments.size() > 1 ? net + "_placed" : net;
}

std::vector<std::string> placementMacroNames(const MemoryPlan &plan) {
  std::vector<std::string> names;
  if (plan.weightPlacementSource.empty())
    return names;
  names.push_back("WEIGHT_SEGMENTS");
  for (const WeightSegment &segment : plan.weightSegments)
    for (const char *field : {"OFFSET", "SIZE", "ALIGN", "IN_RAM"})
      names.push_back("WEIGHTS_" + regionIdentifier(segment.region) + "_" + field);
  return names;
}

std::string renderPlacementHeader(const MemoryPlan &plan, const std::string &net) {
  if (plan.weightPlacementSource.empty())
    return "";
  const std::string prefix = toUpper(net);
  const bool split = plan.weightSegments.size() > 1;
  std::string text;
  text += "// Weights placement (" + plan.weightPlacementSource + "): the constant weights in " +
          std::to_string(plan.weightSegments.size()) + " memory region" + (split ? "s" : "") +
          ", each a segment of " + net + ".weights.bin.\n";
  text += "// " + net + "_weights.c holds each in section ." + net + "_weights_<REGION>, " + net +
          "_weights.ld places\n// them, " + net +
          "_copy_weights() copies those in RAM from Flash.\n";
  std::vector<std::pair<std::string, std::string>> defines = {
      {prefix + "_WEIGHT_SEGMENTS", std::to_string(plan.weightSegments.size())}};
  for (const WeightSegment &segment : plan.weightSegments) {
    const std::string id = prefix + "_WEIGHTS_" + regionIdentifier(segment.region);
    defines.push_back({id + "_OFFSET", std::to_string(segment.offset)});
    defines.push_back({id + "_SIZE", std::to_string(segment.size)});
    defines.push_back({id + "_ALIGN", std::to_string(MemoryPlan::kAlignment)});
    defines.push_back({id + "_IN_RAM", segment.copiedToRam ? "1" : "0"});
  }
  size_t width = 0;
  for (const auto &define : defines)
    width = std::max(width, define.first.size());
  for (const auto &[name, value] : defines)
    text += "#define " + name + std::string(width - name.size() + 2, ' ') + value + "\n";
  text += "\n";
  for (const WeightSegment &segment : plan.weightSegments)
    text += "extern const uint8_t " + net + "_weights_" + regionIdentifier(segment.region) +
            "[]; // " + segment.region + ": " + segmentWhat(plan, segment) + "\n";
  text += "struct " + net +
          "_weight_copy {\n  const uint8_t *from;\n  uint8_t *to;\n"
          "  uint32_t bytes;\n};\n";
  text += "extern const struct " + net + "_weight_copy " + net + "_weight_copies[];\n";
  text += "void " + net + "_copy_weights(void);\n\n";
  std::string args;
  if (split) {
    text += "// The entry point with one base per weight segment.\nint " + net + "_placed(";
    for (const WeightSegment &segment : plan.weightSegments)
      text += "const uint8_t *weights_" + regionIdentifier(segment.region) + ", ";
    text += "uint8_t *mutableWeight,\n    uint8_t *activations);\n";
    for (const WeightSegment &segment : plan.weightSegments)
      args += net + "_weights_" + regionIdentifier(segment.region) + ", ";
  }
  text += "// Runs the bundle on the weights where they were placed.\n";
  text += "static inline int " + net + "_run(uint8_t *mutableWeight, uint8_t *activations) {\n";
  if (split)
    text += "  return " + net + "_placed(" + args + "mutableWeight, activations);\n}\n\n";
  else if (plan.weightSegments.empty()) // no weights at all
    text += "  return " + net + "((uint8_t *)0, mutableWeight, activations);\n}\n\n";
  else
    text += "  return " + net + "((uint8_t *)" + net + "_weights_" +
            regionIdentifier(plan.weightSegments[0].region) +
            ", mutableWeight, activations);\n}\n\n";
  return text;
}

std::vector<BundleFile> renderPlacementFiles(const MemoryPlan &plan, const std::string &net,
                                             const std::vector<uint8_t> &weights) {
  std::vector<BundleFile> files;
  if (plan.weightPlacementSource.empty())
    return files;
  std::string segments, loads, copies, sections, aliases;
  const std::string imageId = regionIdentifier(plan.weightImageRegion);
  bool imageAliased = false;
  for (const WeightSegment &segment : plan.weightSegments) {
    const std::string id = regionIdentifier(segment.region);
    if (segment.offset + segment.size > weights.size())
      fatalInternal("weight segment " + segment.region + " lies outside weights.bin");
    files.push_back({net + ".weights." + id + ".bin",
                     std::string(weights.begin() + long(segment.offset),
                                 weights.begin() + long(segment.offset + segment.size))});
    segments += fillTemplate(templates::kPlacementSegmentTemplate,
                             {{"NETWORK", net},
                              {"ID", id},
                              {"REGION", segment.region},
                              {"BYTES", withThousands(segment.size)},
                              {"WHAT", segmentWhat(plan, segment)},
                              {"FLAGS", segment.copiedToRam ? "aw" : "a"}}) +
                "\n";
    sections += fillTemplate(templates::kPlacementSectionTemplate,
                             {{"NETWORK", net},
                              {"ID", id},
                              {"LOAD", segment.copiedToRam ? " AT > BUNDLEFIT_" + imageId : ""}});
    aliases +=
        " *   REGION_ALIAS(\"BUNDLEFIT_" + id + "\", <your " + segment.region + " region>);\n";
    imageAliased = imageAliased || id == imageId;
    if (!segment.copiedToRam)
      continue;
    loads += "extern const uint8_t __" + net + "_weights_" + id + "_load[];\n";
    copies += "    {__" + net + "_weights_" + id + "_load, (uint8_t *)" + net + "_weights_" + id +
              ", " + std::to_string(segment.size) + "u},\n";
  }
  if (!imageAliased && !copies.empty())
    aliases += " *   REGION_ALIAS(\"BUNDLEFIT_" + imageId + "\", <your " + plan.weightImageRegion +
               " region>);\n";
  const std::string &source = plan.weightPlacementSource;
  files.push_back({net + "_weights.c",
                   fillTemplate(templates::kPlacementWeightsTemplate,
                                {{"NETWORK", net},
                                 {"SOURCE", source},
                                 {"SEGMENTS", withoutFinalNewline(withoutFinalNewline(segments))},
                                 {"LOAD_DECLARATIONS", withoutFinalNewline(loads)},
                                 {"COPY_TABLE", withoutFinalNewline(copies)}})});
  files.push_back(
      {net + "_weights.ld", fillTemplate(templates::kPlacementScriptTemplate,
                                         {{"NETWORK", net},
                                          {"SOURCE", source},
                                          {"ALIASES", withoutFinalNewline(aliases)},
                                          {"IMAGE_ID", imageId},
                                          {"SECTIONS", withoutFinalNewline(sections)}})});
  return files;
}

} // namespace bundlefit
