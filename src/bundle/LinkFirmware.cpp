//===- LinkFirmware.cpp - The minimal firmware for `fit --verify-link` -----===//
//
// Generates fw.ld (the part's memory map and one output section per thing the
// fit placed), fw.c (vector table, reset handler, main calling the bundle) and
// fw_data.S (the reservations and the weights) from the templates
// src/bundle/templates/verify_link{.ld,_section.ld,_data.S,_symbol.S} and
// verify_link_stub.c. See LinkVerify.h.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/bundle/LinkVerify.h"
#include "bundlefit/support/Error.h"

#include "Templates.h"

#include <cctype>
#include <map>
#include <set>

namespace bundlefit {

namespace {

/// ld region and section names must be plain identifiers; device files may
/// use anything the schema allows.
std::string identifier(const std::string &name) {
  std::string id;
  for (char c : name)
    id += std::isalnum((unsigned char)c) || c == '_' ? c : '_';
  if (id.empty() || std::isdigit((unsigned char)id[0]))
    id = "R_" + id;
  return id;
}

} // namespace

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
    std::string id = identifier(region.name);
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

  // Weights, grouped by the region the fit chose, in weights.bin order.
  std::vector<std::string> weightRegions;
  std::vector<std::vector<const FirmwareWeight *>> weightsIn;
  for (const FirmwareWeight &w : spec.weights) {
    std::string region = w.region.empty() ? homes.weightsFlash : w.region;
    size_t k = 0;
    while (k < weightRegions.size() && weightRegions[k] != region)
      ++k;
    if (k == weightRegions.size()) {
      weightRegions.push_back(region);
      weightsIn.emplace_back();
    }
    weightsIn[k].push_back(&w);
  }
  // The entry gets the base of the blob holding the tensor at offset 0.
  std::string weightsBaseSymbol;

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
  auto weightsSection = [&](Group &group, size_t k) {
    const std::string &region = weightRegions[k];
    std::string id = identifier(region);
    std::string file = "weights." + id + ".bin";
    std::string symbol = "bf_weights_" + id;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    uint64_t bytes = 0;
    for (const FirmwareWeight *w : weightsIn[k]) {
      ranges.push_back({w->offset, w->bytes});
      bytes += w->bytes;
      if (w->offset == 0)
        weightsBaseSymbol = symbol;
    }
    out.blobs.push_back({file, ranges});
    bool inFlash = part.findRegion(region)->flash;
    std::string what =
        std::to_string(weightsIn[k].size()) + " weight tensor" +
        (weightsIn[k].size() == 1 ? "" : "s") +
        (inFlash ? " read in place" : " (initialized data, image in " + homes.weightsFlash + ")");
    buffer(group, "." + symbol, symbol, region, inFlash ? "" : homes.weightsFlash, what, false,
           !inFlash, 64, ".incbin \"" + file + "\"", bytes);
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
  Group &libraryFlash = groups["LIBRARY_FLASH"], &flashWeights = groups["FLASH_WEIGHTS"];
  Group &staticData = groups["STATIC_DATA"], &ramWeights = groups["RAM_WEIGHTS"];
  Group &libraryRam = groups["LIBRARY_RAM"], &buffers = groups["BUFFERS"];
  if (spec.reserved.libraryFlash)
    reserve(libraryFlash, ".bf_library_flash", homes.code, "", "kernel library image (device file)",
            spec.reserved.libraryFlash, false, false, 4);
  for (size_t k = 0; k < weightRegions.size(); ++k)
    if (part.findRegion(weightRegions[k])->flash)
      weightsSection(flashWeights, k);

  // Initialized RAM: the stub's (newlib's) .data, static data, weights copied to RAM.
  // The SDK project's RAM (its .data, .bss, stack, heap) holds the stub's
  // and newlib's .data/.bss, padded up to the device file's size.
  planned(".data", homes.sdkRam, homes.code, "SDK project: stub/newlib .data");
  planned(".bss", homes.sdkRam, "", "SDK project: stub/newlib .bss");
  planned(".bf_sdk_ram", homes.sdkRam, "", "SDK project incl. stack (device file)");
  if (spec.staticBytes)
    reserve(staticData, ".bf_static", homes.staticData, homes.code, "static data (--static-bytes)",
            spec.staticBytes, false, true, 8);
  for (size_t k = 0; k < weightRegions.size(); ++k)
    if (!part.findRegion(weightRegions[k])->flash)
      weightsSection(ramWeights, k);

  // Uninitialized RAM.
  if (spec.reserved.libraryRam)
    reserve(libraryRam, ".bf_library_ram", homes.libraryRam, "", "kernel library RAM (device file)",
            spec.reserved.libraryRam, true, true, 8);
  reserve(buffers, ".bf_activations", homes.activations, "", "activations arena",
          spec.activationsBytes, true, true, 64);
  reserve(buffers, ".bf_mutable", homes.io, "", "inputs/outputs (mutableWeight)", spec.mutableBytes,
          true, true, 64);

  std::string memory, copyTable;
  for (size_t i = 0; i < part.regions.size(); ++i) {
    const FirmwareRegion &region = part.regions[i];
    memory += "  " + out.ldRegionNames[i] + " (" + (region.flash ? "rx" : "rwx") +
              ") : ORIGIN = " + templates::hexAddress(region.base) +
              ", LENGTH = " + templates::hexAddress(region.size) + "\n";
  }
  for (const FirmwareSection &section : out.sections) // copied from Flash at reset
    if (!section.loadRegion.empty())
      copyTable += "    LONG(LOADADDR(" + section.name + ")) LONG(ADDR(" + section.name +
                   ")) LONG(SIZEOF(" + section.name + "))\n";
  using templates::withoutFinalNewline;
  std::map<std::string, std::string> scriptValues = {
      {"DEVICE", part.id},
      {"DEVICE_NAME", part.name},
      {"DEVICE_FILE", part.file},
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

  out.startup = templates::fillTemplate(
      templates::kVerifyLinkStubTemplate,
      {{"DEVICE", part.id},
       {"NETWORK", spec.networkName},
       {"HARD_FLOAT", spec.hardFloat ? "1" : "0"},
       {"WEIGHTS_DECLARATION",
        weightsBaseSymbol.empty() ? "" : "extern uint8_t " + weightsBaseSymbol + "[];"},
       {"WEIGHTS_ARGUMENT", weightsBaseSymbol.empty() ? "0" : weightsBaseSymbol}});
  return out;
}

} // namespace bundlefit
