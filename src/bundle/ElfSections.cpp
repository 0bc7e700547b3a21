//===- ElfSections.cpp - Allocated sections of a linked Arm ELF ------------===//
//
// A reader for exactly what --verify-link needs: the SHF_ALLOC sections of an
// ELF32 little-endian executable with their run (VMA) and load (LMA)
// addresses. The LMA comes from the PT_LOAD segment whose file image holds the
// section, as objcopy and ld's map file compute it. bundlefit_bundle does not
// link LLVM, and these few headers do not justify it.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/bundle/LinkVerify.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace bundlefit {

namespace {

constexpr uint32_t kShfAlloc = 0x2;
constexpr uint32_t kShtNobits = 8;
constexpr uint32_t kPtLoad = 1;
constexpr uint16_t kEmArm = 40;

struct Reader {
  const std::vector<char> &bytes;
  const std::string &path;
  uint32_t u32(uint64_t at) const {
    check(at, 4);
    const auto *p = reinterpret_cast<const unsigned char *>(bytes.data() + at);
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  }
  uint16_t u16(uint64_t at) const {
    check(at, 2);
    const auto *p = reinterpret_cast<const unsigned char *>(bytes.data() + at);
    return uint16_t(p[0] | p[1] << 8);
  }
  void check(uint64_t at, uint64_t size) const {
    if (at + size > bytes.size())
      throw Error(ExitCode::BadInputFile, path + ": truncated ELF (header at offset " +
                                              std::to_string(at) + " past the end)");
  }
};

/// The bytes of a little-endian ELF32 file, checked that far.
std::vector<char> readElf32(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw Error(ExitCode::BadInputFile, path + ": cannot open the linked firmware");
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.size() < 52 ||
      std::memcmp(bytes.data(),
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      bytes[4] != 1 || bytes[5] != 1)
    throw Error(ExitCode::BadInputFile, path + ": not a little-endian ELF32 file");
  return bytes;
}

} // namespace

std::vector<LinkedSection> readElfSections(const std::string &path) {
  const std::vector<char> bytes = readElf32(path);
  Reader r{bytes, path};
  if (r.u16(18) != kEmArm)
    throw Error(ExitCode::BadInputFile,
                path + ": not an Arm ELF (e_machine " + std::to_string(r.u16(18)) + ")");
  uint32_t phoff = r.u32(28), shoff = r.u32(32);
  uint16_t phentsize = r.u16(42), phnum = r.u16(44), shentsize = r.u16(46), shnum = r.u16(48),
           shstrndx = r.u16(50);

  struct Segment {
    uint32_t offset, vaddr, paddr, filesz;
  };
  std::vector<Segment> loads;
  for (uint16_t i = 0; i < phnum; ++i) {
    uint64_t at = phoff + uint64_t(i) * phentsize;
    if (r.u32(at) == kPtLoad)
      loads.push_back({r.u32(at + 4), r.u32(at + 8), r.u32(at + 12), r.u32(at + 16)});
  }
  if (shstrndx >= shnum)
    throw Error(ExitCode::BadInputFile, path + ": ELF has no section name table");
  uint64_t names = r.u32(shoff + uint64_t(shstrndx) * shentsize + 16);

  std::vector<LinkedSection> sections;
  for (uint16_t i = 1; i < shnum; ++i) {
    uint64_t at = shoff + uint64_t(i) * shentsize;
    uint32_t type = r.u32(at + 4), flags = r.u32(at + 8), addr = r.u32(at + 12),
             offset = r.u32(at + 16), size = r.u32(at + 20);
    if (!(flags & kShfAlloc) || size == 0)
      continue;
    LinkedSection s;
    uint64_t nameAt = names + r.u32(at);
    r.check(nameAt, 1);
    const char *begin = bytes.data() + nameAt;
    s.name.assign(begin, strnlen(begin, bytes.size() - nameAt));
    s.vma = s.lma = addr;
    s.size = size;
    s.hasContents = type != kShtNobits;
    if (s.hasContents)
      for (const Segment &seg : loads)
        if (offset >= seg.offset && offset < uint64_t(seg.offset) + seg.filesz) {
          s.lma = uint64_t(seg.paddr) + (offset - seg.offset);
          break;
        }
    sections.push_back(s);
  }
  return sections;
}

std::vector<uint32_t> readElfWords(const std::string &path, const std::string &symbol,
                                   size_t count) {
  const std::vector<char> bytes = readElf32(path);
  Reader r{bytes, path};
  uint32_t shoff = r.u32(32);
  uint16_t shentsize = r.u16(46), shnum = r.u16(48);
  auto header = [&](uint16_t i) { return shoff + uint64_t(i) * shentsize; };
  constexpr uint32_t kShtSymtab = 2;
  for (uint16_t i = 1; i < shnum; ++i) {
    if (r.u32(header(i) + 4) != kShtSymtab)
      continue;
    uint32_t symbols = r.u32(header(i) + 16), symbolsSize = r.u32(header(i) + 20);
    uint32_t link = r.u32(header(i) + 24);
    uint64_t strings = r.u32(header(link) + 16);
    for (uint64_t at = symbols; at + 16 <= uint64_t(symbols) + symbolsSize; at += 16) {
      uint64_t nameAt = strings + r.u32(at);
      r.check(nameAt, 1);
      const char *name = bytes.data() + nameAt;
      if (symbol != std::string(name, strnlen(name, bytes.size() - nameAt)))
        continue;
      uint32_t value = r.u32(at + 4);
      uint16_t shndx = r.u16(at + 14);
      if (shndx == 0 || shndx >= shnum || r.u32(header(shndx) + 4) == kShtNobits)
        return {};
      uint64_t offset = r.u32(header(shndx) + 16) + (value - r.u32(header(shndx) + 12));
      std::vector<uint32_t> words;
      for (size_t k = 0; k < count; ++k)
        words.push_back(r.u32(offset + 4 * k));
      return words;
    }
  }
  return {};
}

std::string checkEntryCall(const FirmwareSpec &spec, const std::vector<LinkedSection> &sections,
                           const std::vector<uint32_t> &arguments, bool overflowed) {
  if (arguments.size() < spec.segments.size())
    return "the firmware's call to " + spec.entry + " was not found in the ELF (bf_entry_weights)";
  for (size_t k = 0; k < spec.segments.size(); ++k) {
    const FirmwareSegment &segment = spec.segments[k];
    const std::string name = "." + spec.networkName + "_weights_" + segment.id;
    auto section = std::find_if(sections.begin(), sections.end(),
                                [&](const LinkedSection &s) { return s.name == name; });
    auto hex = [](uint64_t value) {
      char text[24];
      std::snprintf(text, sizeof text, "0x%08llx", (unsigned long long)value);
      return std::string(text);
    };
    if (section == sections.end())
      return "the weights of " + segment.region + " (" + name + ") are not in the firmware";
    if (arguments[k] != section->vma)
      return "the firmware calls " + spec.entry + " with " + hex(arguments[k]) + " as its " +
             segment.region + " weights, which were linked at " + hex(section->vma);
    const FirmwareRegion *region = spec.part.findRegion(segment.region);
    // An overflowing link runs sections past their region's end (ld's verdict
    // says so): then only the start is checked.
    const bool inside = region && section->vma >= region->base &&
                        (overflowed || section->vma + section->size <= region->base + region->size);
    if (!inside)
      return "the " + segment.region + " weights were linked at " + hex(section->vma) +
             ", outside " + segment.region;
  }
  return "";
}

std::vector<uint64_t> linkedRegionUsage(const FirmwarePart &part,
                                        const std::vector<FirmwareSection> &plan,
                                        const std::vector<LinkedSection> &sections) {
  const std::vector<FirmwareRegion> &regions = part.regions;
  std::vector<uint64_t> end(regions.size(), 0);
  auto indexOf = [&](const std::string &name) {
    for (size_t i = 0; i < regions.size(); ++i)
      if (regions[i].name == name)
        return int(i);
    return -1;
  };
  auto containing = [&](uint64_t address) {
    for (size_t i = 0; i < regions.size(); ++i)
      if (address >= regions[i].base && address < regions[i].base + regions[i].size)
        return int(i);
    return -1;
  };
  auto charge = [&](int region, uint64_t address, uint64_t size) {
    if (region < 0)
      fatalInternal("verify-link: linked section at " + std::to_string(address) +
                    " lies in no region of " + part.id);
    const FirmwareRegion &r = regions[region];
    uint64_t top = address + size > r.base ? address + size - r.base : 0;
    end[region] = std::max(end[region], top);
  };
  for (const LinkedSection &s : sections) {
    auto planned = std::find_if(plan.begin(), plan.end(),
                                [&](const FirmwareSection &p) { return p.name == s.name; });
    // Overflowing sections run past their region's end, possibly into the
    // next one, so the script's assignment decides, not the address.
    int vmaRegion = planned != plan.end() ? indexOf(planned->region) : containing(s.vma);
    charge(vmaRegion, s.vma, s.size);
    if (s.hasContents && s.lma != s.vma) {
      int lmaRegion = planned != plan.end() && !planned->loadRegion.empty()
                          ? indexOf(planned->loadRegion)
                          : containing(s.lma);
      charge(lmaRegion, s.lma, s.size);
    }
  }
  return end;
}

} // namespace bundlefit
