//===- VerifyLinkTests.cpp - fit --verify-link against real links ----------===//
//
// Unit tests of the generated firmware, then real arm-none-eabi-gcc links (and
// QEMU runs for --verify-run; both tools are installed by scripts/install-deps.sh): a
// fitting and a non-fitting case per core family in device_db (Cortex-M7,
// M33, M4, M0+), a part sized so that only the link sees the overflow, and
// the error paths (missing toolchain, int8 without a profile, int8-cmsis, a
// core without code generation).
//
//===----------------------------------------------------------------------===//
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "../../cli/CliTestSupport.h"
#include "SkipTest.h"
#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/bundle/LinkVerify.h"
#include "bundlefit/device/Fit.h"
#include "bundlefit/driver/PartLink.h"
#include "bundlefit/support/Error.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace bundlefit;
using bundlefit::test::CommandResult;

/// The cases that link (or run) real firmware skip, as ctest SKIP, on a
/// machine without the tools (scripts/install-deps.sh installs them).
#define SKIP_WITHOUT_ARM_GCC()                                                                     \
  if (findTool("arm-none-eabi-gcc").empty())                                                       \
  BUNDLEFIT_SKIP_TEST("arm-none-eabi-gcc missing (Debian package gcc-arm-none-eabi)")
#define SKIP_WITHOUT_QEMU()                                                                        \
  if (findTool("arm-none-eabi-gcc").empty() || findTool("qemu-system-arm").empty())                \
  BUNDLEFIT_SKIP_TEST("arm-none-eabi-gcc or qemu-system-arm missing")

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

std::string model(const std::string &name) { return bundlefit::test::modelPath(name); }

/// Not --quiet: it would print the verdict line alone, not the link table.
CommandResult run(const std::string &arguments) { return bundlefit::test::runBundlefit(arguments); }

/// The JSON document in a command's output (stderr may hold an error line).
nlohmann::json jsonOf(const CommandResult &r) {
  size_t start = r.output.find("{\n");
  size_t end = r.output.rfind("\n}");
  REQUIRE_MESSAGE(start != std::string::npos, r.output);
  return nlohmann::json::parse(r.output.substr(start, end + 2 - start));
}

const nlohmann::json &regionOf(const nlohmann::json &report, const std::string &name) {
  for (const nlohmann::json &region : report["verify_link"]["regions"])
    if (region["name"] == name)
      return region;
  FAIL("no region " << name);
  static nlohmann::json none;
  return none;
}

/// Every region: linked within 1% of predicted, and the overflow verdicts equal.
void checkAgreement(const nlohmann::json &report) {
  const nlohmann::json &v = report["verify_link"];
  CHECK(v["agrees"] == true);
  for (const nlohmann::json &region : v["regions"]) {
    INFO(region.dump());
    CHECK(region["within_tolerance"] == true);
    CHECK(region["predicted_over"] == region["linked_over"]);
    double predicted = region["predicted"].get<double>(), linked = region["linked"].get<double>();
    if (predicted == 0)
      CHECK(linked == 0);
    else
      CHECK(std::abs(linked - predicted) <= 0.01 * predicted);
  }
}

device::DeviceDatabase database() { return device::DeviceDatabase::loadDefault(); }

/// A footprint by hand: three weight tensors, the last one the hottest.
device::ModelFootprint handFootprint() {
  device::ModelFootprint fp;
  fp.variant = device::parseVariant("float");
  fp.weights = {{"w0", 4096, 0, 1}, {"w1", 65536, 1, 1}, {"w2", 1024, 2, 100}};
  fp.constantBytes = 4096 + 65536 + 1024;
  fp.mutableBytes = 3200;
  fp.activationsBytes = 57600;
  fp.codeBytes = 7000;
  return fp;
}

} // namespace

TEST_CASE("the rt1062 firmware: the part's regions, and each buffer where the fit put it") {
  device::DeviceDatabase db = database();
  const device::Device &rt1062 = db.get("rt1062");
  device::ModelFootprint fp = handFootprint();
  device::FitRequest request;
  request.weights = device::WeightsPolicy::Auto;
  request.extraStaticBytes = 3136;
  device::FitResult fit = device::fitModel(rt1062, fp, request);
  REQUIRE(fit.fits);

  FirmwareSpec spec = driver::firmwareSpec(rt1062, fit);
  // The placed bundle's segments, as setPlacedBundle takes them from its plan.
  for (const device::MemoryRegionInfo &region : rt1062.memory) {
    uint64_t bytes = 0;
    for (size_t i = 0; i < fp.weights.size(); ++i)
      if (fit.weightRegion[i] == &region)
        bytes += fp.weights[i].bytes;
    if (bytes)
      spec.segments.push_back({region.name, region.name, bytes, !region.isFlash()});
  }
  REQUIRE(spec.segments.size() >= 2);
  spec.entry = "lenet_placed";
  for (const FirmwareSegment &segment : spec.segments)
    spec.entryWeights.push_back("lenet_weights_" + segment.id);
  spec.networkName = "lenet";
  spec.mutableBytes = fp.mutableBytes;
  spec.activationsBytes = fp.activationsBytes;
  spec.staticBytes = 3136;
  FirmwareSources fw = generateFirmware(spec);

  // MEMORY: every region of the device file, base and size.
  CHECK(has(fw.linkerScript, "FLASH (rx) : ORIGIN = 0x60000000, LENGTH = 0x00800000"));
  CHECK(has(fw.linkerScript, "ITCM (rwx) : ORIGIN = 0x00000000, LENGTH = 0x00020000"));
  CHECK(has(fw.linkerScript, "DTCM (rwx) : ORIGIN = 0x20000000, LENGTH = 0x00020000"));
  CHECK(has(fw.linkerScript, "OCRAM (rwx) : ORIGIN = 0x20200000, LENGTH = 0x000c0000"));
  // The arena and I/O where the fit put them (DTCM), NOLOAD.
  CHECK(has(fw.linkerScript, ".bf_activations (NOLOAD) : ALIGN(64)"));
  CHECK(has(fw.linkerScript, "KEEP(*(.bf_activations))\n  } > DTCM\n"));
  CHECK(has(fw.linkerScript, "KEEP(*(.bf_mutable))\n  } > DTCM\n"));
  // SDK baseline reserved at the device file's sizes (AN13001 Table 4); the
  // static input image is 28 x 28 floats = 3,136 B.
  // (the stub's vectors, start-up and newlib's .data/.bss count inside them).
  CHECK(has(fw.linkerScript, ". = MAX(., __bf_sdk_flash_start + 21424);"));
  CHECK(has(fw.linkerScript, ". = MAX(., __bf_sdk_ram_start + 8496);"));
  CHECK(has(fw.data, "bf_static:\n  .space 3136\n"));
  // Weights in RAM (auto): the bundle's own sections, placed by its
  // lenet_weights.ld (INCLUDEd, regions aliased) and copied by
  // lenet_copy_weights(), not by the script's copy table.
  CHECK(has(fw.linkerScript, "INCLUDE lenet_weights.ld"));
  CHECK(has(fw.linkerScript, "REGION_ALIAS(\"BUNDLEFIT_FLASH\", FLASH);"));
  int ramWeightSections = 0;
  for (const FirmwareSection &s : fw.sections)
    if (s.name.rfind(".lenet_weights_", 0) == 0) {
      const FirmwareRegion *region = spec.part.findRegion(s.region);
      REQUIRE(region);
      CHECK(
          has(fw.linkerScript, "REGION_ALIAS(\"BUNDLEFIT_" + s.region + "\", " + s.region + ");"));
      if (!region->flash) {
        ++ramWeightSections;
        CHECK(s.loadRegion == "FLASH");
        CHECK_FALSE(has(fw.linkerScript, "LONG(LOADADDR(" + s.name + "))"));
      }
    }
  CHECK(ramWeightSections >= 1);
  CHECK(fit.weightsInRam == fp.constantBytes);
  CHECK(has(fw.startup, "lenet_copy_weights();"));
  // main() hands the bundle each weight segment and the two other regions.
  CHECK(has(fw.startup, "return lenet_placed(args[0], args[1], bf_mutable, bf_activations);"));
  CHECK(has(fw.startup, "    lenet_weights_ITCM,\n    lenet_weights_DTCM,\n"));
  CHECK(has(fw.startup, "0xE000ED88u")); // FPU enabled for a hard-float core
}

TEST_CASE("weights in Flash: one section read in place, no copy; library reservations") {
  device::DeviceDatabase db = database();
  const device::Device &rt1062 = db.get("rt1062");
  device::ModelFootprint fp = handFootprint();
  device::FitRequest request;
  request.weights = device::WeightsPolicy::Flash;
  device::FitResult fit = device::fitModel(rt1062, fp, request);
  FirmwareSpec spec = driver::firmwareSpec(rt1062, fit);
  spec.segments = {{"FLASH", "FLASH", fp.constantBytes, false}};
  spec.entry = "net";
  spec.entryWeights = {"net_weights_FLASH"};
  spec.networkName = "net";
  spec.mutableBytes = fp.mutableBytes;
  spec.activationsBytes = fp.activationsBytes;
  FirmwareSources fw = generateFirmware(spec);
  CHECK(has(fw.linkerScript, "INCLUDE net_weights.ld"));
  CHECK_FALSE(has(fw.linkerScript, "LONG(LOADADDR(.net_weights"));
  CHECK(has(fw.startup, "return net((uint8_t *)args[0], bf_mutable, bf_activations);"));

  // A kernel library's image in Flash and its static data in RAM: one
  // section each, after the code and after the SDK's RAM.
  spec.reserved.libraryFlash = 1000;
  spec.reserved.libraryRam = 200;
  fw = generateFirmware(spec);
  // The text the ostream writer produced before the templates (regression pin).
  CHECK(has(fw.linkerScript, "  } > FLASH\n  .bf_library_flash : ALIGN(4)\n  {\n"
                             "    KEEP(*(.bf_library_flash))\n  } > FLASH\n  .data : ALIGN(8)"));
  CHECK(has(fw.linkerScript, "  .bf_library_ram (NOLOAD) : ALIGN(8)\n  {\n"
                             "    KEEP(*(.bf_library_ram))\n  } > " +
                                 rt1062.homes.libraryRam + "\n  .bf_activations (NOLOAD)"));
  CHECK(has(fw.data, "  .syntax unified\n  .section .bf_library_flash,\"a\",%progbits\n"
                     "  .balign 4\n  .global bf_library_flash\n  .type bf_library_flash, %object\n"
                     "bf_library_flash:\n  .space 1000\n  .size bf_library_flash, 1000\n"));
  CHECK(has(fw.data, "  .section .bf_library_ram,\"aw\",%nobits\n  .balign 8\n"
                     "  .global bf_library_ram\n  .type bf_library_ram, %object\n"
                     "bf_library_ram:\n  .space 200\n  .size bf_library_ram, 200\n"
                     "  .section .bf_activations,"));
}

TEST_CASE(
    "compareRegions: 1% of the prediction passes, more fails, an empty region must link empty") {
  device::DeviceDatabase db = database();
  // FLASH, ITCM, DTCM, OCRAM
  const std::vector<FirmwareRegion> rt1062 = driver::firmwarePart(db.get("rt1062")).regions;
  auto checks = compareRegions(rt1062, {100000, 0, 50000, 1000}, {101000, 0, 50600, 1001}, 1.0);
  REQUIRE(checks.size() == 4);
  CHECK(checks[0].withinTolerance);
  CHECK(checks[0].differencePercent == doctest::Approx(1.0));
  CHECK(checks[1].withinTolerance);
  CHECK_FALSE(checks[2].withinTolerance); // +1.2%
  CHECK(checks[3].withinTolerance);
  auto empty = compareRegions(rt1062, {100, 0, 0, 0}, {100, 64, 0, 0}, 1.0);
  CHECK_FALSE(empty[1].withinTolerance);
  auto over = compareRegions(rt1062, {9000000, 0, 0, 0}, {9000100, 0, 0, 0}, 1.0);
  CHECK(over[0].predictedOver);
  CHECK(over[0].linkedOver);
}

TEST_CASE("readElfSections names the file that is not an Arm ELF") {
  fs::path bad = fs::temp_directory_path() / ("bundlefit-not-elf-" + std::to_string(::getpid()));
  std::ofstream(bad) << "not an ELF file at all, but long enough to have a header.............";
  try {
    readElfSections(bad.string());
    FAIL("no error");
  } catch (const Error &e) {
    CHECK(e.code() == ExitCode::BadInputFile);
    CHECK(has(e.what(), bad.string() + ": not a little-endian ELF32 file"));
  }
  fs::remove(bad);
}

TEST_CASE("partToolchain: codegen target and newlib multilib flags per core") {
  device::DeviceDatabase db = database();
  PartToolchain m7 = driver::partToolchain(db.get("rt1062"));
  CHECK(m7.codegenTarget == "cortex-m7");
  CHECK(m7.gccFlags == std::vector<std::string>{"-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard",
                                                "-mfpu=fpv5-d16"});
  CHECK(driver::partToolchain(db.get("stm32f746")).gccFlags.back() ==
        "-mfpu=fpv5-sp-d16"); // single precision
  CHECK(driver::partToolchain(db.get("lpc55s69")).codegenTarget == "cortex-m33");
  CHECK(driver::partToolchain(db.get("nrf52840")).gccFlags.back() == "-mfpu=fpv4-sp-d16");
  PartToolchain m0 = driver::partToolchain(db.get("rp2040"));
  CHECK(m0.floatAbi == "soft");
  CHECK(m0.gccFlags ==
        std::vector<std::string>{"-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft"});
  device::Device dsp = db.get("rt685");
  for (device::Core &core : dsp.cores)
    core.runsBundle = core.type == "hifi4";
  try {
    driver::partToolchain(dsp);
    FAIL("no error");
  } catch (const Error &e) {
    CHECK(e.code() == ExitCode::Unsupported);
    CHECK(has(e.what(), "(hifi4) has no code generation"));
  }
}

// --- Real links, one fitting and one non-fitting case per core family. ---

TEST_CASE("Cortex-M7: LeNet float on rt1062, weights in Flash and auto; stm32f746 overflows" *
          doctest::test_suite("needs_arm_gcc")) {
  SKIP_WITHOUT_ARM_GCC();
  CommandResult flash =
      run("fit " + model("lenet") + " --device rt1060 --weights flash --verify-link --json");
  REQUIRE_MESSAGE(flash.exitCode == 0, flash.output);
  nlohmann::json report = jsonOf(flash);
  checkAgreement(report);
  const nlohmann::json &f = regionOf(report, "FLASH");
  // SDK 21,424 (AN13001 Table 4) + the bundle's code + 1,724,608 B of weights; DTCM: SDK 8,496
  // (Table 4) + activations 14,976 + I/O 3,200 (LeNet by hand: tests/models/README.md).
  CHECK(f["linked"].get<uint64_t>() > 21424 + 1724608);
  CHECK(regionOf(report, "DTCM")["linked"].get<uint64_t>() >= 8496 + 14976 + 3200);
  // ITCM holds only the part file's 10% headroom, reserved in the link too.
  CHECK(regionOf(report, "ITCM")["linked"] == 13107);

  // auto: hottest weights into DTCM, ITCM and OCRAM, copied from Flash.
  CommandResult autoPlaced = run("fit " + model("lenet") + " --device rt1060 --verify-link");
  REQUIRE_MESSAGE(autoPlaced.exitCode == 0, autoPlaced.output);
  CHECK(has(autoPlaced.output, "link check: linked, same verdict as predicted"));
  CHECK(has(autoPlaced.output, "verdict: FITS"));

  CommandResult over =
      run("fit " + model("lenet") + " --device stm32f746 --weights flash --verify-link --json");
  CHECK_MESSAGE(over.exitCode == 3, over.output);
  nlohmann::json overReport = jsonOf(over);
  checkAgreement(overReport);
  CHECK(overReport["verify_link"]["linked"] == false);
  CHECK(has(overReport["verify_link"]["ld_overflow"].dump(), "region `FLASH' overflowed by"));
  CHECK(regionOf(overReport, "FLASH")["linked_over"] == true);
}

TEST_CASE("Cortex-M33: LeNet float links on mcxn947, overflows lpc55s69's Flash" *
          doctest::test_suite("needs_arm_gcc")) {
  SKIP_WITHOUT_ARM_GCC();
  CommandResult fits = run("fit " + model("lenet") + " --device mcxn947 --verify-link --json");
  REQUIRE_MESSAGE(fits.exitCode == 0, fits.output);
  checkAgreement(jsonOf(fits));
  CommandResult over = run("fit " + model("lenet") + " --device lpc55s69 --verify-link");
  CHECK_MESSAGE(over.exitCode == 3, over.output);
  CHECK(has(over.output, "ld: region `FLASH' overflowed by"));
  CHECK(has(over.output, "link check: link failed (region overflow), same verdict as predicted"));
  CHECK(has(over.output, "verdict: DOES NOT FIT"));
}

TEST_CASE("Cortex-M4: ResNet-8 float links on nrf52840, LeNet float overflows it" *
          doctest::test_suite("needs_arm_gcc")) {
  SKIP_WITHOUT_ARM_GCC();
  CommandResult fits = run("fit " + model("resnet8") + " --device nrf52840 --verify-link --json");
  REQUIRE_MESSAGE(fits.exitCode == 0, fits.output);
  checkAgreement(jsonOf(fits));
  CommandResult over = run("fit " + model("lenet") + " --device nrf52840 --verify-link --json");
  CHECK_MESSAGE(over.exitCode == 3, over.output);
  nlohmann::json report = jsonOf(over);
  checkAgreement(report);
  CHECK(regionOf(report, "FLASH")["linked_over"] == true);
}

TEST_CASE("Cortex-M0+: LeNet float links on rp2040 from Flash; weights in RAM overflow SRAM" *
          doctest::test_suite("needs_arm_gcc")) {
  SKIP_WITHOUT_ARM_GCC();
  CommandResult fits =
      run("fit " + model("lenet") + " --device rp2040 --weights flash --verify-link --json");
  REQUIRE_MESSAGE(fits.exitCode == 0, fits.output);
  checkAgreement(jsonOf(fits));
  CommandResult over =
      run("fit " + model("lenet") + " --device rp2040 --weights ram --verify-link --json");
  CHECK_MESSAGE(over.exitCode == 3, over.output);
  nlohmann::json report = jsonOf(over);
  checkAgreement(report);
  CHECK(regionOf(report, "SRAM")["linked_over"] == true);
  CHECK(has(report["verify_link"]["ld_overflow"].dump(), "region `SRAM' overflowed by"));
}

TEST_CASE("a part whose Flash is exactly the prediction: only the link sees the stub, exit 1" *
          doctest::test_suite("needs_arm_gcc")) {
  SKIP_WITHOUT_ARM_GCC();
  CommandResult first =
      run("fit " + model("resnet8") + " --device rp2040 --weights flash --verify-link --json");
  REQUIRE_MESSAGE(first.exitCode == 0, first.output);
  nlohmann::json report = jsonOf(first);
  uint64_t predicted = regionOf(report, "FLASH")["predicted"].get<uint64_t>();
  uint64_t linked = regionOf(report, "FLASH")["linked"].get<uint64_t>();
  REQUIRE(linked > predicted); // vectors, start-up, libgcc soft float

  nlohmann::json part;
  std::ifstream(std::string(DEVICE_PARTS_DIR) + "/rp2040.json") >> part;
  part["id"] = "rp2040-tight";
  part["aliases"] = nlohmann::json::array();
  part["memory"][0]["size"] = predicted;
  fs::path file =
      fs::temp_directory_path() / ("rp2040-tight-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << part.dump(2);
  CommandResult tight = run("fit " + model("resnet8") + " --device-file " + file.string() +
                            " --device rp2040-tight --weights flash --verify-link");
  fs::remove(file);
  CHECK_MESSAGE(tight.exitCode == 1, tight.output);
  CHECK(has(tight.output, "verdict: FITS")); // the prediction
  CHECK(has(tight.output,
            "region `FLASH' overflowed by " + std::to_string(linked - predicted) + " bytes"));
  CHECK(has(tight.output,
            "bundlefit: error: --verify-link: the prediction says FITS but the link failed "
            "(FLASH overflowed in the link only)"));
}

TEST_CASE("Cortex-M7: LeNet int8 links on rt1062 with the compiled bundle's real sizes" *
          doctest::test_suite("needs_arm_gcc")) {
  SKIP_WITHOUT_ARM_GCC();
  fs::path profile =
      fs::temp_directory_path() / ("lenet-int8-" + std::to_string(::getpid()) + ".yaml");
  std::string input = model("lenet");
  input = input.substr(0, input.size() - 5) + ".input.npy";
  CommandResult profiled =
      run("profile " + model("lenet") + " " + input + " -o " + profile.string());
  REQUIRE_MESSAGE(profiled.exitCode == 0, profiled.output);
  CommandResult linked = run("fit " + model("lenet") +
                             " --device rt1060 --variant int8 --weights flash "
                             "--load-profile " +
                             profile.string() + " --verify-link --json");
  fs::remove(profile);
  REQUIRE_MESSAGE(linked.exitCode == 0, linked.output);
  nlohmann::json report = jsonOf(linked);
  checkAgreement(report);
  // 433,088 B of int8 weights (not LeNet float's 1,724,608) read from Flash;
  // 4,800 B of activations (--memory-opt 2) and 3,200 B of I/O in DTCM (LeNet
  // by hand: tests/models/README.md); SDK 21,424 / 8,496 (AN13001 Table 4).
  // 20,000: a loose bound on the code, no figure.
  const uint64_t flash = regionOf(report, "FLASH")["linked"].get<uint64_t>();
  CHECK(flash > 21424 + 433088);
  CHECK(flash < 21424 + 433088 + 20000);
  CHECK(regionOf(report, "DTCM")["linked"].get<uint64_t>() >= 8496 + 4800 + 3200);
}

TEST_CASE("--verify-link errors: no toolchain (exit 7), int8 without a profile (exit 2), "
          "int8-cmsis (exit 5), files kept with --link-dir" *
          doctest::test_suite("needs_arm_gcc")) {
  SKIP_WITHOUT_ARM_GCC();
  // The environment variable must come before the command, so not runBundlefit.
  CommandResult missing = [&] {
    std::string command = "BUNDLEFIT_ARM_GCC=/nonexistent/arm-none-eabi-gcc " +
                          std::string(BUNDLEFIT_EXE) + " --quiet fit " + model("lenet") +
                          " --device rt1060 --verify-link 2>&1";
    CommandResult r;
    FILE *pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe);
    char chunk[4096];
    size_t count;
    while ((count = std::fread(chunk, 1, sizeof chunk, pipe)) > 0)
      r.output.append(chunk, count);
    int status = ::pclose(pipe);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
  }();
  CHECK_MESSAGE(missing.exitCode == 7, missing.output);
  CHECK(has(missing.output, "install the Debian package gcc-arm-none-eabi"));

  // int8 needs the profile to compile; int8-cmsis would need the user's CMSIS-NN.
  CommandResult int8 =
      run("fit " + model("lenet") + " --device rt1060 --variant int8 --verify-link");
  CHECK_MESSAGE(int8.exitCode == 2, int8.output);
  CHECK(has(int8.output, "--verify-link --variant int8: add --load-profile"));
  CommandResult cmsis =
      run("fit " + model("lenet") + " --device rt1060 --variant int8-cmsis --verify-link");
  CHECK_MESSAGE(cmsis.exitCode == 5, cmsis.output);
  CHECK(has(cmsis.output, "--verify-link: variant 'int8-cmsis' cannot be linked here"));

  fs::path dir = fs::temp_directory_path() / ("bundlefit-linkdir-" + std::to_string(::getpid()));
  CommandResult kept =
      run("fit " + model("ds_cnn") + " --device mcxn947 --verify-link --link-dir " + dir.string());
  CHECK_MESSAGE(kept.exitCode == 0, kept.output);
  for (const char *name : {"fw.ld", "fw.c", "fw_data.S", "fw.elf", "fw.map", "bundle/ds_cnn.o"})
    CHECK_MESSAGE(fs::exists(dir / name), name);
  CHECK(has(kept.output, (dir / "fw.elf").string()));
  fs::remove_all(dir);
}

/// LeNet compiled with --device rt1060 (weights auto: FLASH, ITCM and DTCM)
/// into `dir`/bundle, its memory.json, and a firmware spec for it (the
/// sizes' prediction is a hand footprint's: only the call is checked).
FirmwareSpec placedLenetSpec(const fs::path &dir, nlohmann::json &memory, bool swap) {
  CommandResult compiled =
      run("compile " + model("lenet") + " --device rt1060 -o " + (dir / "bundle").string());
  REQUIRE_MESSAGE(compiled.exitCode == 0, compiled.output);
  std::ifstream(dir / "bundle" / "lenet.memory.json") >> memory;
  device::DeviceDatabase db = database();
  const device::Device &rt1062 = db.get("rt1062");
  device::FitRequest request;
  FirmwareSpec spec =
      driver::firmwareSpec(rt1062, device::fitModel(rt1062, handFootprint(), request));
  spec.networkName = "lenet";
  spec.bundleDir = (dir / "bundle").string();
  spec.objectPath = (dir / "bundle" / "lenet.o").string();
  spec.entry = memory["weights_placement"]["entry"];
  for (const nlohmann::json &segment : memory["weights_placement"]["segments"]) {
    std::string region = segment["region"];
    spec.segments.push_back({region, region, segment["size"], segment["copied_to_ram"]});
    spec.entryWeights.push_back("lenet_weights_" + region);
  }
  REQUIRE(spec.segments.size() == 3);
  if (swap) // a wrong weights pointer: DTCM's weights passed as ITCM's and back
    std::swap(spec.entryWeights[1], spec.entryWeights[2]);
  return spec;
}

/// The placed LeNet firmware for rt1062, linked; `swap` plants a wrong
/// weights pointer.
LinkVerification linkPlacedLenet(const fs::path &dir, bool swap) {
  nlohmann::json memory;
  FirmwareSpec spec = placedLenetSpec(dir, memory, swap);
  const device::DeviceDatabase db = database();
  const device::Device &rt1062 = db.get("rt1062");
  spec.mutableBytes = memory["sizes"]["mutable"];
  spec.activationsBytes = memory["sizes"]["activations"];
  return verifyLink(spec, driver::partToolchain(rt1062), dir.string());
}

TEST_CASE("the link check reads the entry's weight pointers back: a planted wrong one fails" *
          doctest::test_suite("needs_arm_gcc")) {
  SKIP_WITHOUT_ARM_GCC();
  fs::path dir = fs::temp_directory_path() / ("bundlefit-call-" + std::to_string(::getpid()));
  fs::create_directories(dir / "right");
  fs::create_directories(dir / "wrong");
  LinkVerification right = linkPlacedLenet(dir / "right", false);
  CHECK_MESSAGE(right.callMatches, right.callProblem);
  CHECK(right.call == "lenet_placed(FLASH, ITCM, DTCM, mutableWeight, activations)");
  LinkVerification wrong = linkPlacedLenet(dir / "wrong", true);
  CHECK_FALSE(wrong.callMatches);
  CHECK_FALSE(wrong.agrees());
  CHECK_MESSAGE(has(wrong.callProblem, "the firmware calls lenet_placed with 0x2"),
                wrong.callProblem);
  CHECK(has(wrong.callProblem, "as its ITCM weights, which were linked at 0x00000000"));
  fs::remove_all(dir);
}

TensorType floats(Shape shape) {
  TensorType type;
  type.shape = std::move(shape);
  return type;
}

/// runBundle's spec of LeNet's bundle in `dir` (from its memory.json).
BundleRunSpec lenetRunSpec(const fs::path &dir, const nlohmann::json &memory) {
  BundleRunSpec spec;
  spec.bundleDir = dir.string();
  spec.networkName = "lenet";
  spec.constantSize = memory["sizes"]["constant"];
  spec.mutableSize = memory["sizes"]["mutable"];
  spec.activationsSize = memory["sizes"]["activations"];
  spec.target = "cortex-m7";
  bool input = true; // LeNet: data, then softmax
  for (const nlohmann::json &p : memory["placeholders"]) {
    spec.placeholders.push_back(
        {p["name"], p["offset"], input ? floats({1, 1, 28, 28}) : floats({1, 10}), input});
    input = false;
  }
  return spec;
}

/// The placed LeNet firmware for rt1062 run under QEMU mps2-an500, its memory
/// map moved onto the board's (fit --verify-run's image); `swap` plants a
/// wrong weights pointer in the entry call.
std::map<std::string, Tensor> runPlacedLenet(const fs::path &dir, bool swap,
                                             const std::map<std::string, Tensor> &inputs) {
  nlohmann::json memory;
  FirmwareSpec spec = placedLenetSpec(dir, memory, swap);
  const CortexMBoard *board = findCortexMBoard("cortex-m7");
  REQUIRE(board);
  BoardMap map = mapPartOnBoard(spec.part, *board, 512 * 1024);
  CHECK(map.moved == "ITCM moved to 0x00080000"); // ITCM's 0x0 is the board's reset vector
  spec.part = map.part;
  BundleRunSpec runSpec = lenetRunSpec(dir / "bundle", memory);
  runSpec.partImage = verifyRunImage(spec, map, *board);
  return runBundle(runSpec, inputs, (dir / "run").string());
}

TEST_CASE("verify-run's firmware computes what Glow's layout does; a wrong pointer does not" *
          doctest::test_suite("needs_qemu")) {
  SKIP_WITHOUT_QEMU();
  fs::path dir = fs::temp_directory_path() / ("bundlefit-run-" + std::to_string(::getpid()));
  std::map<std::string, Tensor> inputs;
  Tensor x(floats({1, 1, 28, 28}));
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data<float>()[i] = float(i % 17) / 17.0f;
  inputs["data"] = x;
  std::map<std::string, Tensor> right = runPlacedLenet(dir / "right", false, inputs);
  std::map<std::string, Tensor> wrong = runPlacedLenet(dir / "wrong", true, inputs);
  // The reference: the same model with Glow's one constantWeight, same core.
  CommandResult glow =
      run("compile " + model("lenet") + " --target cortex-m7 -o " + (dir / "glow").string());
  REQUIRE_MESSAGE(glow.exitCode == 0, glow.output);
  nlohmann::json memory;
  std::ifstream(dir / "glow" / "lenet.memory.json") >> memory;
  std::map<std::string, Tensor> reference =
      runBundle(lenetRunSpec(dir / "glow", memory), inputs, (dir / "glow-run").string());
  REQUIRE(right.count("softmax"));
  CHECK(right.at("softmax").bytes == reference.at("softmax").bytes);
  CHECK(right.at("softmax").bytes != wrong.at("softmax").bytes);
  fs::remove_all(dir);
}

TEST_CASE("fit --verify-run: the placed firmware runs under QEMU on the part's core (M7, M33)" *
          doctest::test_suite("needs_qemu")) {
  SKIP_WITHOUT_QEMU();
  for (const char *device : {"rt1060", "mcxn947"}) {
    CommandResult r =
        run("fit " + model("lenet") + " --device " + std::string(device) + " --verify-run --json");
    REQUIRE_MESSAGE(r.exitCode == 0, r.output);
    nlohmann::json report = jsonOf(r);
    INFO(report["verify_run"].dump());
    CHECK(report["verify_link"]["agrees"] == true);
    CHECK(report["verify_run"]["ran"] == true);
    CHECK(report["verify_run"]["outputs_equal"] == true);
    CHECK(report["verify_run"]["output_bytes"] == 40);
  }
}

TEST_CASE("fit --verify-run, int8 with int8 I/O: the firmware's outputs equal the host build's "
          "byte for byte" *
          doctest::test_suite("needs_qemu")) {
  SKIP_WITHOUT_QEMU();
  fs::path profile =
      fs::temp_directory_path() / ("lenet-int8-run-" + std::to_string(::getpid()) + ".yaml");
  std::string input = model("lenet");
  input = input.substr(0, input.size() - 5) + ".input.npy";
  CommandResult profiled =
      run("profile " + model("lenet") + " " + input + " -o " + profile.string());
  REQUIRE_MESSAGE(profiled.exitCode == 0, profiled.output);
  CommandResult r =
      run("fit " + model("lenet") + " --device rt1060 --variant int8 --load-profile " +
          profile.string() + " --int8-io --verify-run --json");
  fs::remove(profile);
  REQUIRE_MESSAGE(r.exitCode == 0, r.output);
  nlohmann::json report = jsonOf(r);
  INFO(report["verify_run"].dump());
  CHECK(report["verify_run"]["ran"] == true);
  CHECK(report["verify_run"]["outputs_equal"] == true);
  // The int8 kernels are integer arithmetic: the Cortex-M7 firmware and the
  // x86-64 host build agree exactly (float ones may differ in the last bit).
  CHECK(report["verify_run"]["host_outputs_equal"] == true);
  CHECK(report["verify_run"]["output_bytes"] == 10); // softmax int8[1,10]
}
