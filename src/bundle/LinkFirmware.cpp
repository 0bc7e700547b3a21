//===- LinkFirmware.cpp - The minimal firmware for `fit --verify-link` -----===//
//
// Generates fw.ld (the part's memory map and one output section per thing the
// fit placed, the bundle's weights placement INCLUDEd), fw.c (vector table,
// reset handler, main calling the bundle) and fw_data.S (the reservations and
// buffers) from the templates
// src/bundle/templates/verify_link{.ld,_section.ld,_data.S,_symbol.S} and
// verify_link_stub.c. See LinkVerify.h.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/bundle/BundleWriter.h"
#include "bundlefit/bundle/LinkVerify.h"
#include "bundlefit/support/Error.h"

#include "Templates.h"

#include <cctype>
#include <map>
#include <set>

namespace bundlefit {

const FirmwareRegion *FirmwarePart::findRegion(const std::string &regionName) const {
  for (const FirmwareRegion &region : regions)
    if (region.name == regionName)
      return &region;
  return nullptr;
}

FirmwareSources generateFirmware(const FirmwareSpec &spec) {
  const FirmwarePart &part = spec.part;
  const FirmwareHomes &homes = spec.homes;
  FirmwareSources out;

  std::set<std::string> taken;
  for (const FirmwareRegion &region : part.regions) {
    std::string id = regionIdentifier(region.name);
    while (!taken.insert(id).second)
      id += "_";
    out.ldRegionNames.push_back(id);
  }
  auto ld = [&](const std::string &regionName) -> std::string {
    for (size_t i = 0; i < part.regions.size(); ++i)
      if (part.regions[i].name == regionName)
        return out.ldRegionNames[i];
    fatalInternal("verify-link: device " + part.id + " has no region '" + regionName + "'");
  };

  // Every output section in script order (FirmwareSources::sections). The
  // program's own sections are written out in verify_link.ld; `planned`
  // records them. Each of the bundle's buffers and reservations is one
  // verify_link_section.ld in the script and one verify_link_symbol.S in
  // fw_data.S, appended to a group (`script`, `data`) by `buffer`.
  auto planned = [&](const std::string &name, const std::string &region, const std::string &load,
                     const std::string &what) {
    out.sections.push_back({name, region, load, what});
  };
  struct Group {
    std::string script, data;
  };
  auto buffer = [&](Group &group, const std::string &name, const std::string &symbol,
                    const std::string &region, const std::string &load, const std::string &what,
                    bool noload, bool writable, uint64_t align, const std::string &contents,
                    uint64_t bytes) {
    group.script += templates::fillTemplate(templates::kVerifyLinkSectionTemplate,
                                            {{"NAME", name},
                                             {"NOLOAD", noload ? " (NOLOAD)" : ""},
                                             {"ALIGN", std::to_string(align)},
                                             {"REGION", ld(region)},
                                             {"LOAD", load.empty() ? "" : " AT > " + ld(load)}});
    group.data += templates::fillTemplate(templates::kVerifyLinkSymbolTemplate,
                                          {{"SECTION", name},
                                           {"FLAGS", writable ? "aw" : "a"},
                                           {"TYPE", noload ? "%nobits" : "%progbits"},
                                           {"ALIGN", std::to_string(align)},
                                           {"SYMBOL", symbol},
                                           {"CONTENTS", contents},
                                           {"BYTES", std::to_string(bytes)}});
    planned(name, region, load, what);
  };
  auto reserve = [&](Group &group, const std::string &name, const std::string &region,
                     const std::string &load, const std::string &what, uint64_t bytes, bool noload,
                     bool writable, uint64_t align) {
    buffer(group, name, name.substr(1), region, load, what, noload, writable, align,
           ".space " + std::to_string(bytes), bytes);
  };
  // Flash, in AN13001's order: SDK project, bundle code, library image, weights.
  // The SDK project is a whole program (vectors, start-up, main): the stub's
  // own bytes count inside its device-file size, padded up to it.
  planned(".bf_sdk_flash", homes.code, "",
          "SDK project incl. the stub's vectors and start-up (device file)");
  planned(".text", homes.code, "", "code: bundle, newlib/libgcc routines it calls");
  planned(".rodata", homes.code, "", "read-only data");
  planned(".ARM.exidx", homes.code, "", "unwind index");
  planned(".init_array", homes.code, "", "constructors");
  // Each group fills the marker of its name in both templates.
  std::map<std::string, Group> groups;
  Group &libraryFlash = groups["LIBRARY_FLASH"], &staticData = groups["STATIC_DATA"];
  Group &libraryRam = groups["LIBRARY_RAM"], &buffers = groups["BUFFERS"];
  if (spec.reserved.libraryFlash)
    reserve(libraryFlash, ".bf_library_flash", homes.code, "", "kernel library image (device file)",
            spec.reserved.libraryFlash, false, false, 4);

  // Initialized RAM: the stub's (newlib's) .data, static data, weights copied to RAM.
  // The SDK project's RAM (its .data, .bss, stack, heap) holds the stub's
  // and newlib's .data/.bss, padded up to the device file's size.
  planned(".data", homes.sdkRam, homes.code, "SDK project: stub/newlib .data");
  planned(".bss", homes.sdkRam, "", "SDK project: stub/newlib .bss");
  planned(".bf_sdk_ram", homes.sdkRam, "", "SDK project incl. stack (device file)");
  if (spec.staticBytes)
    reserve(staticData, ".bf_static", homes.staticData, homes.code, "static data (--static-bytes)",
            spec.staticBytes, false, true, 8);
  // The bundle's weights: <net>_weights.ld, INCLUDEd here, places each
  // segment's section; <net>_copy_weights() copies those in RAM at reset.
  std::set<std::string> bundleSections;
  std::string aliases;
  std::set<std::string> aliased;
  auto alias = [&](const std::string &id, const std::string &region) {
    if (aliased.insert(id).second)
      aliases += "REGION_ALIAS(\"BUNDLEFIT_" + id + "\", " + ld(region) + ");\n";
  };
  for (const FirmwareSegment &segment : spec.segments) {
    std::string section = "." + spec.networkName + "_weights_" + segment.id;
    bundleSections.insert(section);
    planned(section, segment.region, segment.copied ? homes.weightsFlash : "",
            segment.copied
                ? "weights copied to RAM at start-up (image in " + homes.weightsFlash + ")"
                : "weights read in place");
    alias(segment.id, segment.region);
  }
  alias(regionIdentifier(homes.weightsFlash), homes.weightsFlash);

  // Uninitialized RAM.
  if (spec.reserved.libraryRam)
    reserve(libraryRam, ".bf_library_ram", homes.libraryRam, "", "kernel library RAM (device file)",
            spec.reserved.libraryRam, true, true, 8);
  reserve(buffers, ".bf_activations", homes.activations, "", "activations arena",
          spec.activationsBytes, true, true, 64);
  reserve(buffers, ".bf_mutable", homes.io, "", "inputs/outputs (mutableWeight)", spec.mutableBytes,
          true, true, 64);
  // The room the fit keeps for the application, last in each region.
  for (size_t i = 0; i < part.regions.size() && i < spec.reserved.headroom.size(); ++i)
    if (spec.reserved.headroom[i])
      reserve(buffers, ".bf_headroom_" + out.ldRegionNames[i], part.regions[i].name, "",
              "headroom kept for the application", spec.reserved.headroom[i], true,
              !part.regions[i].flash, 1);

  std::string memory, copyTable;
  for (size_t i = 0; i < part.regions.size(); ++i) {
    const FirmwareRegion &region = part.regions[i];
    memory += "  " + out.ldRegionNames[i] + " (" + (region.flash ? "rx" : "rwx") +
              ") : ORIGIN = " + templates::hexAddress(region.base) +
              ", LENGTH = " + templates::hexAddress(region.size) + "\n";
  }
  for (const FirmwareSection &section : out.sections) // copied from Flash at reset
    if (!section.loadRegion.empty() && !bundleSections.count(section.name))
      copyTable += "    LONG(LOADADDR(" + section.name + ")) LONG(ADDR(" + section.name +
                   ")) LONG(SIZEOF(" + section.name + "))\n";
  using templates::withoutFinalNewline;
  std::map<std::string, std::string> scriptValues = {
      {"DEVICE", part.id},
      {"DEVICE_NAME", part.name},
      {"DEVICE_FILE", part.file},
      {"NETWORK", spec.networkName},
      {"REGION_ALIASES", withoutFinalNewline(aliases)},
      {"MEMORY", withoutFinalNewline(memory)},
      {"COPY_TABLE", withoutFinalNewline(copyTable)},
      {"SDK_FLASH_BYTES", std::to_string(spec.reserved.sdkFlash)},
      {"SDK_RAM_BYTES", std::to_string(spec.reserved.sdkRam)},
      {"CODE", ld(homes.code)},
      {"SDK_RAM", ld(homes.sdkRam)}};
  std::map<std::string, std::string> dataValues = {{"DEVICE", part.id}};
  for (const auto &[marker, group] : groups) {
    scriptValues[marker] = withoutFinalNewline(group.script);
    dataValues[marker] = withoutFinalNewline(group.data);
  }
  out.linkerScript = templates::fillTemplate(templates::kVerifyLinkScriptTemplate, scriptValues);
  out.data = templates::fillTemplate(templates::kVerifyLinkDataTemplate, dataValues);

  std::string entryWeights, entryArguments;
  for (size_t k = 0; k < spec.entryWeights.size(); ++k) {
    entryWeights += "    " + spec.entryWeights[k] + ",\n";
    entryArguments += std::string(spec.entry == spec.networkName ? "(uint8_t *)" : "") + "args[" +
                      std::to_string(k) + "], ";
  }
  if (spec.entryWeights.empty()) // no weights: Glow's entry takes a null base
    entryWeights = "    0,\n", entryArguments = "0, ";
  out.startup = templates::fillTemplate(templates::kVerifyLinkStubTemplate,
                                        {{"DEVICE", part.id},
                                         {"NETWORK", spec.networkName},
                                         {"HARD_FLOAT", spec.hardFloat ? "1" : "0"},
                                         {"ENTRY", spec.entry},
                                         {"ENTRY_WEIGHTS", withoutFinalNewline(entryWeights)},
                                         {"ENTRY_ARGUMENTS", entryArguments}});
  return out;
}

} // namespace bundlefit
