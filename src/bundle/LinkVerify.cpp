//===- LinkVerify.cpp - Link the firmware, compare with the prediction -----===//
#include "bundlefit/bundle/LinkVerify.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Format.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

namespace bundlefit {

namespace {

namespace fs = std::filesystem;

void writeFile(const fs::path &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush())
    throw Error(ExitCode::CannotWrite,
                path.string() + ": cannot write (--verify-link work directory)");
}

/// ld's "region `X' overflowed by N bytes", keyed by ld's region name.
std::map<std::string, uint64_t> overflows(const std::string &log, std::vector<std::string> &lines) {
  std::map<std::string, uint64_t> found;
  static const std::regex pattern("region `([^']+)' overflowed by ([0-9]+) bytes");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), pattern);
       it != std::sregex_iterator(); ++it) {
    found[(*it)[1].str()] = std::stoull((*it)[2].str());
    lines.push_back(it->str());
  }
  return found;
}

} // namespace

std::vector<RegionCheck> compareRegions(const std::vector<FirmwareRegion> &regions,
                                        const std::vector<uint64_t> &predicted,
                                        const std::vector<uint64_t> &linked,
                                        double tolerancePercent) {
  std::vector<RegionCheck> checks;
  for (size_t i = 0; i < regions.size(); ++i) {
    RegionCheck c;
    c.region = regions[i].name;
    c.capacity = regions[i].size;
    c.predicted = i < predicted.size() ? predicted[i] : 0;
    c.linked = i < linked.size() ? linked[i] : 0;
    double diff = double(c.linked) - double(c.predicted);
    c.differencePercent =
        c.predicted ? 100.0 * diff / double(c.predicted) : (c.linked ? 100.0 : 0.0);
    c.predictedOver = c.predicted > c.capacity;
    c.linkedOver = c.linked > c.capacity;
    c.withinTolerance =
        c.predicted ? std::fabs(c.differencePercent) <= tolerancePercent : c.linked == 0;
    checks.push_back(c);
  }
  return checks;
}

std::string LinkVerification::disagreement() const {
  if (agrees())
    return "";
  std::string text;
  if (!callMatches)
    text = callProblem;
  if (!verdictsAgree) {
    text += std::string(text.empty() ? "" : "; ") + "the prediction says " +
            (predictedFits ? "FITS" : "DOES NOT FIT") + " but the link " +
            (linkedFits ? "succeeded" : "failed");
    std::string regionsText;
    for (const RegionCheck &c : regions)
      if (c.predictedOver != c.linkedOver)
        regionsText +=
            (regionsText.empty() ? "" : ", ") + c.region + " " +
            (c.linkedOver ? "overflowed in the link only" : "over only in the prediction");
    if (!regionsText.empty())
      text += " (" + regionsText + ")";
  }
  for (const RegionCheck &c : regions)
    if (!c.withinTolerance) {
      char diff[32];
      std::snprintf(diff, sizeof diff, "%+.2f%%", c.differencePercent);
      text += (text.empty() ? "" : "; ") + c.region + ": predicted " + withThousands(c.predicted) +
              " B, linked " + withThousands(c.linked) + " B (" + diff + ", tolerance " +
              std::to_string(int(tolerancePercent)) + "%)";
    }
  return text;
}

uint64_t linkedCodeBytes(const std::string &objectPath, const std::string &entry,
                         const PartToolchain &toolchain, const std::string &workDir,
                         const ToolOverrides &tools) {
  std::string gcc = requireArmGcc(tools);
  fs::path dir(workDir);
  std::vector<std::string> argv = {gcc};
  argv.insert(argv.end(), toolchain.gccFlags.begin(), toolchain.gccFlags.end());
  argv.insert(argv.end(), {"--specs=nano.specs", "--specs=nosys.specs", "-nostartfiles",
                           "-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments",
                           "-Wl,--no-warn-execstack", "-Wl,-e," + entry, "-Wl,--undefined=" + entry,
                           fs::absolute(objectPath).string(), "-lm", "-o", "code.elf"});
  ProcessResult result = runProcess(argv, workDir, 600, (dir / "code.log").string());
  if (!result.ok())
    throw Error(ExitCode::ToolMissing,
                "--verify-link: " + gcc + " could not link " + objectPath +
                    " alone to measure its code: " + lastLines(result.output, 6));
  uint64_t bytes = 0;
  for (const LinkedSection &s : readElfSections((dir / "code.elf").string()))
    if (s.hasContents && s.name.rfind(".data", 0) != 0)
      bytes += s.size; // .text, .rodata, .ARM.exidx: what stays in Flash
  return bytes;
}

LinkVerification verifyLink(const FirmwareSpec &spec, const PartToolchain &toolchain,
                            const std::string &workDir, const ToolOverrides &tools,
                            double tolerancePercent) {
  const FirmwarePart &part = spec.part;
  std::string gcc = requireArmGcc(tools);
  CortexMBoard flagsOnly{toolchain.codegenTarget, "", "", toolchain.gccFlags, {}, {}, {}};
  requireNewlib(gcc, flagsOnly, workDir);

  FirmwareSources sources = generateFirmware(spec);
  fs::path dir(workDir);
  writeFile(dir / "fw.ld", sources.linkerScript);
  writeFile(dir / "fw.c", sources.startup);
  writeFile(dir / "fw_data.S", sources.data);
  const fs::path bundleDir = fs::absolute(spec.bundleDir);
  const fs::path placementSource = bundleDir / (spec.networkName + "_weights.c");
  if (!fs::is_regular_file(placementSource) ||
      !fs::is_regular_file(bundleDir / (spec.networkName + "_weights.ld")))
    throw Error(ExitCode::BadInputFile,
                spec.bundleDir + ": no weights placement (" + spec.networkName +
                    "_weights.c, .ld): the bundle was not compiled with --device");

  LinkVerification v;
  v.tolerancePercent = tolerancePercent;
  v.plan = sources.sections;
  v.workDir = workDir;
  v.scriptPath = (dir / "fw.ld").string();
  v.predictedFits = spec.predictedFits;

  auto link = [&](const std::string &elf, bool keepOnOverflow) {
    std::vector<std::string> argv = {gcc};
    argv.insert(argv.end(), toolchain.gccFlags.begin(), toolchain.gccFlags.end());
    argv.insert(argv.end(), {"-Os", "-ffunction-sections", "-fdata-sections", "--specs=nano.specs",
                             "--specs=nosys.specs", "-nostartfiles", "-Wl,--gc-sections",
                             "-Wl,--no-warn-rwx-segments", "-Wl,--no-warn-execstack", "-T", "fw.ld",
                             "-Wl,-Map=" + elf.substr(0, elf.size() - 4) + ".map",
                             "-I" + bundleDir.string(), "-L" + bundleDir.string()});
    if (keepOnOverflow)
      argv.push_back("-Wl,--noinhibit-exec");
    argv.insert(argv.end(), {"fw.c", "fw_data.S", placementSource.string(),
                             fs::absolute(spec.objectPath).string(), "-lm", "-o", elf});
    return runProcess(argv, workDir, 600,
                      (dir / (elf.substr(0, elf.size() - 4) + ".log")).string());
  };

  auto start = std::chrono::steady_clock::now();
  ProcessResult result = link("fw.elf", false);
  v.linkSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::map<std::string, uint64_t> over = overflows(result.output, v.overflowMessages);
  v.linkedFits = result.ok();
  std::string elf = "fw.elf";
  if (!result.ok()) {
    if (over.empty() || result.timedOut)
      throw Error(ExitCode::ToolMissing, "--verify-link: " + gcc +
                                             " could not link the firmware for " + part.id +
                                             " in " + workDir + ": " + lastLines(result.output, 6));
    // The verdict came from the real link; a second, forced link keeps the
    // ELF so every region (not only the overflowing ones) can be measured.
    elf = "fw-overflow.elf";
    ProcessResult forced = link(elf, true);
    if (!fs::exists(dir / elf))
      throw Error(ExitCode::ToolMissing, "--verify-link: " + gcc +
                                             " --noinhibit-exec wrote no ELF in " + workDir + ": " +
                                             lastLines(forced.output, 6));
  }
  v.elfPath = (dir / elf).string();
  v.mapPath = (dir / (elf.substr(0, elf.size() - 4) + ".map")).string();
  v.sections = readElfSections(v.elfPath);
  std::vector<uint64_t> linked = linkedRegionUsage(part, sources.sections, v.sections);
  // Where ld reported an overflow, its figure is the authority.
  for (size_t i = 0; i < part.regions.size(); ++i) {
    auto it = over.find(sources.ldRegionNames[i]);
    if (it != over.end())
      linked[i] = part.regions[i].size + it->second;
  }
  v.regions = compareRegions(part.regions, spec.predicted, linked, tolerancePercent);

  std::set<std::string> predictedOver, linkedOver;
  for (size_t i = 0; i < v.regions.size(); ++i) {
    if (v.regions[i].predictedOver)
      predictedOver.insert(v.regions[i].region);
    if (over.count(sources.ldRegionNames[i]))
      linkedOver.insert(v.regions[i].region);
  }
  v.verdictsAgree = v.predictedFits == v.linkedFits && predictedOver == linkedOver;
  const size_t arguments = std::max<size_t>(spec.entryWeights.size(), 1);
  v.callProblem = checkEntryCall(
      spec, v.sections, readElfWords(v.elfPath, "bf_entry_weights", arguments), !v.linkedFits);
  v.callMatches = v.callProblem.empty();
  v.call = spec.entry + "(";
  for (size_t k = 0; k < spec.segments.size(); ++k)
    v.call += spec.segments[k].region + ", ";
  v.call += "mutableWeight, activations)";
  v.sizesAgree = true;
  for (const RegionCheck &c : v.regions)
    v.sizesAgree = v.sizesAgree && c.withinTolerance;
  return v;
}

} // namespace bundlefit
