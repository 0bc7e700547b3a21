//===- FitVerifyLink.cpp - `bundlefit fit --verify-link` -------------------===//
#include "FitVerifyLink.h"

#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/OutputFile.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace bundlefit {

namespace {

namespace fs = std::filesystem;

std::string percentText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.2f%%", value);
  return text;
}

} // namespace

void checkLinkable(const device::Device &device, const device::Variant &variant,
                   const QuantCliOptions &quant) {
  using device::Kernels;
  if (variant.kernels == Kernels::HiFi4 || variant.kernels == Kernels::HiFi4WithCmsis)
    throw Error(ExitCode::Unsupported, "--verify-link: variant '" + variant.name +
                                           "' cannot be linked: no HiFi4 code is generated");
  if (variant.kernels == Kernels::CmsisNn)
    throw Error(
        ExitCode::Unsupported,
        "--verify-link: variant 'int8-cmsis' cannot be linked here: the firmware needs "
        "CMSIS-NN's arm_* functions from your SDK (link-check --variant int8, or build with "
        "bundlefit_add_bundle(... USE_CMSIS CMSIS_NN_DIR dir))");
  if (variant.precision == device::Precision::Int8 && !quant.enabled())
    throw Error(ExitCode::Usage,
                "--verify-link --variant " + variant.name +
                    ": add --load-profile (the linked bundle is compiled to int8)");
  (void)driver::partToolchain(device); // Unsupported for cores without code generation.
  requireArmGcc();                     // Before minutes of compiling: exit 7 naming the package.
}

std::unique_ptr<PartBundle> writePartBundle(const driver::VariantBuild &build,
                                            const device::Device &device) {
  if (!build.bundle || build.bundle->code.object.empty())
    fatalInternal("--verify-link: the sized build has no object (sized from the cache?)");
  auto part = std::make_unique<PartBundle>();
  part->toolchain = driver::partToolchain(device);
  part->workDir = part->work.path();
  part->bundleDir = (fs::path(part->workDir) / "bundle").string();
  part->bundle = build.bundle;
  CompileRequest request; // The writer reads the API, the output and CMSIS-NN use.
  request.outputDir = part->bundleDir;
  {
    ImmediateOutputs now; // linked at once, in the work directory
    writeBundle(request, *part->bundle);
  }
  part->linkedCode =
      linkedCodeBytes((fs::path(part->bundleDir) / (part->bundle->networkName + ".o")).string(),
                      firmwareEntryName(part->bundle->plan, part->bundle->networkName),
                      part->toolchain, part->workDir);
  return part;
}

void publishLinkDir(const PartBundle &part, const std::string &linkDir, LinkVerification &v) {
  OutputDirectory kept(linkDir, "--link-dir");
  std::error_code ec;
  fs::copy(part.workDir, kept.path(), fs::copy_options::recursive, ec);
  if (ec)
    throw Error(ExitCode::CannotWrite, linkDir + ": cannot write --link-dir: " + ec.message());
  kept.publish();
  auto moved = [&](std::string &path) {
    if (path.rfind(part.workDir, 0) == 0)
      path = (fs::path(linkDir) / fs::path(path).lexically_relative(part.workDir)).string();
  };
  for (std::string *path : {&v.workDir, &v.elfPath, &v.mapPath, &v.scriptPath})
    moved(*path);
}

LinkVerification verifyPartLink(const PartBundle &part, const device::Device &device,
                                const device::ModelFootprint &footprint,
                                const device::FitResult &fit, uint64_t staticBytes) {
  const MemoryPlan &plan = part.bundle->plan;
  if (footprint.weights.size() != plan.constants.size() ||
      fit.weightRegion.size() != plan.constants.size())
    fatalInternal("--verify-link: the fit planned " + std::to_string(footprint.weights.size()) +
                  " weight tensors, the bundle " + std::to_string(plan.constants.size()));
  FirmwareSpec spec = driver::firmwareSpec(device, fit);
  driver::setPlacedBundle(spec, plan, part.bundle->networkName, part.bundleDir);
  spec.mutableBytes = plan.mutableSize;
  spec.activationsBytes = plan.activationsSize;
  spec.staticBytes = staticBytes;
  spec.hardFloat = part.toolchain.floatAbi == "hard";
  return verifyLink(spec, part.toolchain, part.workDir);
}

std::string verifyLinkText(const LinkVerification &v, bool keptFiles) {
  std::string text = "\nlinked firmware (" +
                     std::string(v.linkedFits ? "" : "link failed, measured from ") +
                     (keptFiles ? v.elfPath : fs::path(v.elfPath).filename().string()) + "):\n";
  TextTable table({"region", "capacity", "predicted", "linked", "difference", "check"},
                  {false, true, true, true, true, false});
  for (const RegionCheck &c : v.regions) {
    std::string check = c.withinTolerance
                            ? "ok"
                            : "OFF BY MORE THAN " + std::to_string(int(v.tolerancePercent)) + "%";
    if (c.linkedOver)
      check += c.predictedOver ? ", overflows as predicted" : ", OVERFLOWS (not predicted)";
    else if (c.predictedOver)
      check += ", FITS (predicted over)";
    table.addRow({c.region, withThousands(c.capacity), withThousands(c.predicted),
                  withThousands(c.linked),
                  c.predicted || c.linked ? percentText(c.differencePercent) : "", check});
  }
  text += table.render();
  for (const std::string &line : v.overflowMessages)
    text += "  ld: " + line + "\n";
  if (v.agrees())
    text += std::string("link check: ") +
            (v.linkedFits ? "linked" : "link failed (region overflow)") +
            ", same verdict as predicted, every region within " +
            std::to_string(int(v.tolerancePercent)) + "% of the prediction; " + v.call +
            " gets each weight segment where it was placed\n";
  else
    text += "link check FAILED: " + v.disagreement() + "\n";
  return text;
}

nlohmann::json verifyLinkJson(const LinkVerification &v) {
  nlohmann::json regions = nlohmann::json::array();
  for (const RegionCheck &c : v.regions)
    regions.push_back({{"name", c.region},
                       {"capacity", c.capacity},
                       {"predicted", c.predicted},
                       {"linked", c.linked},
                       {"difference_percent", c.differencePercent},
                       {"within_tolerance", c.withinTolerance},
                       {"predicted_over", c.predictedOver},
                       {"linked_over", c.linkedOver}});
  nlohmann::json sections = nlohmann::json::array();
  for (const LinkedSection &s : v.sections)
    sections.push_back({{"name", s.name}, {"vma", s.vma}, {"lma", s.lma}, {"size", s.size}});
  return {{"linked", v.linkedFits},
          {"predicted_fits", v.predictedFits},
          {"verdicts_agree", v.verdictsAgree},
          {"sizes_agree", v.sizesAgree},
          {"call", v.call},
          {"call_matches_placement", v.callMatches},
          {"agrees", v.agrees()},
          {"tolerance_percent", v.tolerancePercent},
          {"ld_overflow", v.overflowMessages},
          {"regions", regions},
          {"sections", sections},
          {"disagreement", v.disagreement()},
          {"link_seconds", v.linkSeconds}};
}

int verifyLinkExitCode(const LinkVerification &v) {
  if (!v.agrees())
    return int(ExitCode::Internal);
  return v.linkedFits ? 0 : int(ExitCode::DoesNotFit);
}

} // namespace bundlefit
