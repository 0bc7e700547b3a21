//===- FitTests.cpp - AN13001 Table 4, placement, FlexRAM ------------------===//
#include "bundlefit/device/Fit.h"

#include <doctest/doctest.h>

using namespace bundlefit;
using namespace bundlefit::device;

namespace {

// AN13001 Table 4 (RT1060, SDK 2.8.0): LeNet int8 power-of-2 with CMSIS-NN. Every figure in
// this file's first three cases is Table 4's, or a sum of its terms written out beside it.
constexpr uint64_t kBaseFlash = 21424, kBaseRam = 8496, kCode = 9640;
constexpr uint64_t kConstant = 431360, kMutable = 3200, kActivations = 20992;
constexpr uint64_t kStaticImage = 28 * 28 * 1 * 4; // the statically included input image

ProjectTerms table4Terms(bool weightsInRam) {
  ProjectTerms t;
  t.baseFlash = kBaseFlash;
  t.baseRam = kBaseRam;
  t.code = kCode;
  t.constant = kConstant;
  t.mutableBytes = kMutable;
  t.activations = kActivations;
  t.extraStatic = kStaticImage;
  t.weightsInRam = weightsInRam ? kConstant : 0;
  return t;
}

/// A footprint with Table 4's published sizes (one weight blob).
ModelFootprint table4Footprint() {
  ModelFootprint fp;
  fp.variant = parseVariant("int8-cmsis");
  fp.constantBytes = kConstant;
  fp.mutableBytes = kMutable;
  fp.activationsBytes = kActivations;
  fp.codeBytes = kCode;
  fp.weights.push_back({"weights", kConstant, 0, 1});
  return fp;
}

} // namespace

TEST_CASE("AN13001 Table 4 rows decompose exactly") {
  CHECK(kStaticImage == 3136);
  // Row by row: base; + .o; + MUTABLE + ACTIVATIONS; + weights (Flash, +8 alignment).
  CHECK(kBaseFlash + kCode == 31064);
  CHECK(kBaseRam + kMutable + kActivations == 32688);
  ProjectTerms noImageFlash = table4Terms(false);
  noImageFlash.extraStatic = 0;
  ProjectTotals t = projectTotals(noImageFlash);
  CHECK(t.flashAlignmentPadding == 8); // 31,064 -> 31,072: "+431,368 Flash"
  CHECK(t.flash == 462432);            // 31,072 + CONSTANT 431,360
  CHECK(t.ram == 32688);               // 8,496 + 3,200 + 20,992
  ProjectTerms noImageRam = table4Terms(true);
  noImageRam.extraStatic = 0;
  t = projectTotals(noImageRam);
  CHECK(t.flashAlignmentPadding == 0);
  CHECK(t.flash == 462424); // 31,064 + the weights image 431,360 (no padding before it)
  CHECK(t.ram == 464048);   // 32,688 + the weights copied to RAM 431,360
}

TEST_CASE("AN13001 Table 4 totals: 465,560 Flash / 467,184 RAM, 35,824 RAM with weights in Flash") {
  ProjectTotals inRam = projectTotals(table4Terms(true));
  CHECK(inRam.flash == 465560); // Table 4: 462,424 + the input image 3,136
  CHECK(inRam.ram == 467184);   // Table 4: 464,048 + 3,136
  ProjectTotals inFlash = projectTotals(table4Terms(false));
  CHECK(inFlash.ram == 35824);    // Table 4: 32,688 + 3,136
  CHECK(inFlash.flash == 465568); // 465,560 + the 8 alignment bytes
}

TEST_CASE("fitModel on rt1062 reproduces Table 4 with placement per region") {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  const Device &rt = db.get("rt1060");
  FitRequest request;
  request.extraStaticBytes = kStaticImage;
  request.weights = WeightsPolicy::Ram;
  FitResult ram = fitModel(rt, table4Footprint(), request);
  CHECK(ram.fits);
  CHECK(ram.totals.flash == 465560); // Table 4, as above
  CHECK(ram.totals.ram == 467184);   // Table 4, as above
  // The 431,360 B blob cannot sit in DTCM (128 KB): it goes to OCRAM.
  CHECK(ram.weightRegion[0]->name == "OCRAM");
  CHECK(ram.activationRegion->name == "DTCM");

  request.weights = WeightsPolicy::Flash;
  FitResult flash = fitModel(rt, table4Footprint(), request);
  CHECK(flash.fits);
  CHECK(flash.totals.ram == 35824);    // Table 4, as above
  CHECK(flash.totals.flash == 465568); // Table 4 + 8 alignment bytes, as above
  CHECK(flash.weightRegion[0]->name == "FLASH");
}

TEST_CASE("hottest weights go to the fastest RAM; auto spills the rest to Flash") {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  const Device &rt = db.get("rt1011"); // DTCM 32 KB, OCRAM 64 KB
  ModelFootprint fp;
  fp.variant = parseVariant("int8");
  fp.constantBytes = 20480 + 40960 + 102400;
  fp.mutableBytes = 1024;
  fp.activationsBytes = 8192;
  fp.codeBytes = 8000;
  fp.weights = {{"cold_fc", 102400, 2, 1}, {"hot_conv", 20480, 0, 256}, {"warm_conv", 40960, 1, 4}};
  FitRequest request;
  request.weights = WeightsPolicy::Auto;
  FitResult fit = fitModel(rt, fp, request);
  CHECK(fit.fits);
  // Hot: DTCM (the fastest, activations' home) is taken by SDK + arena + io,
  // so the next equally fast TCM holds it.
  CHECK(fit.weightRegion[1]->name == "ITCM");
  CHECK(fit.activationRegion->name == "DTCM");
  CHECK(fit.weightRegion[2]->name == "OCRAM");
  CHECK(fit.weightRegion[0]->name == "FLASH"); // the cold 100 KB stays in Flash
  CHECK(fit.weightsInFlash == 102400);         // cold_fc, the fixture's 100 KB

  request.weights = WeightsPolicy::Ram;
  FitResult ram = fitModel(rt, fp, request);
  CHECK_FALSE(ram.fits);
  REQUIRE_FALSE(ram.problems.empty());
  CHECK(ram.problems[0].find("OCRAM needs") == 0); // the weights_ram home overflows
}

TEST_CASE("FlexRAM split suggestion on RT1062 uses the 16 x 32 KB banks") {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  const Device &rt = db.get("rt1062");
  ModelFootprint fp = table4Footprint();
  // Split the blob so that some of it can profit from DTCM.
  fp.weights = {{"conv", 25024, 0, 64}, {"fc", 406336, 1, 1}};
  FitRequest request;
  request.weights = WeightsPolicy::Ram;
  std::optional<FlexRamSplit> split = suggestFlexRam(rt, fp, request);
  REQUIRE(split);
  CHECK(split->itcm + split->dtcm + split->ocram == 16);
  REQUIRE(split->result);
  CHECK(split->result->fits);
  Device resized = withFlexRam(rt, split->itcm, split->dtcm, split->ocram);
  uint64_t flexBytes = 0;
  for (const char *name : {"ITCM", "DTCM"})
    if (const MemoryRegionInfo *region = resized.findRegion(name))
      flexBytes += region->size;
  // IMXRT1060RM: FlexRAM's 512 KB + the 512 KB of dedicated OCRAM (the database's OCRAM region,
  // 768 KB, holds FlexRAM's default 256 KB of it), whatever the split.
  CHECK(flexBytes + resized.findRegion("OCRAM")->size == 512 * 1024 + 768 * 1024 - 256 * 1024);
}
