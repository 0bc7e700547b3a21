//===- DatabaseTests.cpp - Parts load, validate, and errors name file+field ===//
#include "bundlefit/device/Device.h"
#include "bundlefit/device/JsonSchema.h"
#include "bundlefit/support/Error.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

using namespace bundlefit;
using namespace bundlefit::device;

namespace {

std::string data(const std::string &name) { return std::string(DEVICE_TEST_DATA) + "/" + name; }

/// The message of the error that adding `file` raises ("" if none).
std::string addError(const std::string &file, ExitCode *code = nullptr) {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  try {
    db.addFile(file);
  } catch (const Error &e) {
    if (code)
      *code = e.code();
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("every shipped part validates and the mission's parts are there") {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  // The parts and boards TinyML work benchmarks on (issue 21), by id or alias.
  for (const char *id :
       {"rt1011",        "rt1062",    "rt1064",     "rt1176",      "rt685",
        "rt595",         "lpc55s69",  "mcxn947",    "stm32h743",   "stm32f746",
        "nrf52840",      "rp2040",    "rt1060-evk", "stm32l4r5zi", "nucleo-l4r5zi",
        "stm32h7a3zi",   "stm32u575", "stm32u585",  "disco-f746",  "stm32n6",
        "nrf5340",       "ra6m4",     "rp2350",     "alif-e7",     "arduino-nano-33-ble",
        "sparkfun-edge", "apollo3",   "psoc62",     "rt1170-evk",  "nucleo-h743zi"})
    CHECK_MESSAGE(db.find(id) != nullptr, id);
  CHECK(db.devices().size() >= 30);
  // Aliases.
  REQUIRE(db.find("rt1060"));
  CHECK(db.find("rt1060")->id == "rt1062");
  CHECK(db.find("EVKB-MIMXRT1060")->id == "rt1060-evk");
  // Facts the fit depends on (mission §6, AN13001), each from the document named beside it (the
  // "sources" of device_db/parts/rt1062.json, rt685.json and boards/rt1060-evk.json).
  const Device &rt = *db.find("rt1062");
  CHECK(rt.bundleCore().clockMhz == 600);            // i.MX RT1060 datasheet (IMXRT1060CEC)
  CHECK(rt.findRegion("OCRAM")->base == 0x20200000); // IMXRT1060RM memory map
  CHECK(rt.findRegion("OCRAM")->size == 768 * 1024); // 512 KB OCRAM + FlexRAM's default 256 KB
  CHECK(rt.findRegion("DTCM")->size == 128 * 1024);  // FlexRAM default 128/128/256 KB (RM)
  CHECK(rt.sdkBaselineFlash == 21424);               // AN13001 Table 4, "Bare-Bones"
  CHECK(rt.sdkBaselineRam == 8496);                  // AN13001 Table 4, "Bare-Bones"
  REQUIRE(rt.flexram);
  CHECK(rt.flexram->banks * rt.flexram->bankBytes == 512 * 1024); // RM: 16 x 32 KB banks
  const Device &evk = *db.find("rt1060-evk");
  CHECK(evk.findRegion("SDRAM")->size == 32u * 1024 * 1024); // MIMXRT1060-EVKB user guide
  CHECK(evk.findRegion("FLASH")->size == 8u * 1024 * 1024);  // MIMXRT1060-EVKB user guide
  const Device &rt685 = *db.find("rt685");
  REQUIRE(rt685.findLibrary("hifi4_nnlib"));
  CHECK(rt685.findLibrary("hifi4_nnlib")->flashBytes == 676 * 1024); // AN13001 section 2.2.3
  CHECK(rt685.findLibrary("hifi4_nnlib")->ramBytes == 676 * 1024);   // AN13001 section 2.2.3
  CHECK(rt685.findRegion("SRAM")->size == 4608 * 1024);              // RT600 datasheet: 4.5 MB
  for (const Device &device : db.devices())
    CHECK_MESSAGE(!device.sources.empty(), device.id);
}

TEST_CASE("every board names a part and only adds to it") {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  size_t boards = 0;
  for (const Device &board : db.devices()) {
    if (board.part.empty())
      continue;
    ++boards;
    INFO(board.id);
    CHECK(board.file.find("/boards/") != std::string::npos);
    const Device *part = db.find(board.part);
    REQUIRE(part);
    CHECK(part->part.empty()); // a part, not another board
    // The part's cores, regions and libraries come through unchanged.
    REQUIRE(board.cores.size() == part->cores.size());
    CHECK(board.cores[0].clockMhz == part->cores[0].clockMhz);
    for (const MemoryRegionInfo &region : part->memory) {
      const MemoryRegionInfo *same = board.findRegion(region.name);
      REQUIRE(same);
      CHECK(same->base == region.base);
      CHECK(same->size == region.size);
    }
    CHECK(board.memory.size() >= part->memory.size());
    CHECK(board.libraries.size() == part->libraries.size());
    CHECK(board.sources.size() > part->sources.size());
  }
  CHECK(boards >= 15);
  // RT1060-EVKB: the RT1062 plus 32 MB SDRAM; DISCO-F746: 8 MB SDRAM + 16 MB QSPI.
  CHECK(db.get("rt1060-evk").memory.size() == db.get("rt1062").memory.size() + 1);
  CHECK(db.get("disco-f746").findRegion("SDRAM")->base == 0xC0000000u);
  CHECK(db.get("disco-f746").findRegion("QSPI")->size == 16u * 1024 * 1024);
}

TEST_CASE("every region, core and library figure says where it comes from") {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  for (const Device &device : db.devices()) {
    INFO(device.id);
    for (const MemoryRegionInfo &region : device.memory)
      CHECK_MESSAGE(!region.source.empty(), region.name);
    for (const Core &core : device.cores)
      CHECK_MESSAGE(!core.source.empty(), core.name);
    for (const auto &[key, library] : device.libraries) {
      CHECK_MESSAGE(!library.provenanceFrom.empty(), key);
      // Only a part with a published timing may claim one.
      if (library.provenance == CostProvenance::Published)
        CHECK(library.calibrated);
    }
  }
  // The shipped files state provenance explicitly (the default exists only
  // for users' older files).
  std::string dir = DeviceDatabase::defaultDirectory() + "/parts";
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path());
    nlohmann::json doc = nlohmann::json::parse(in);
    for (const auto &item : doc["kernel_libraries"].items())
      CHECK_MESSAGE(item.value().contains("provenance"),
                    (entry.path().string() + " " + item.key()));
  }
  // Facts checked against their sources (Zephyr devicetree, ST's LL driver).
  const Device &l4 = db.get("stm32l4r5");
  CHECK(l4.bundleCore().clockMhz == 120);
  CHECK(l4.findRegion("FLASH")->waitStates == 5);
  CHECK(l4.totalRam() == 640u * 1024); // STM32L4R5 datasheet: 640 KB SRAM
  CHECK(db.get("stm32h7a3").findRegion("AXI_SRAM")->size == 1024u * 1024); // RM0455: 1 MB AXI SRAM
  CHECK(db.get("rp2350").findRegion("SRAM")->size == 520u * 1024);         // RP2350 datasheet
  CHECK(db.get("nrf5340").findRegion("SRAM")->size == 512u * 1024); // nRF5340 app core: 512 KB
  CHECK(db.get("stm32n657").bundleCore().type == "cortex-m55");
  CHECK(db.get("stm32n657").bundleCore().helium);
  // Published only where AN13001 timed the part (not the RT1064, whose die it
  // did not time); CMSIS-NN elsewhere rests on instruction counts measured on
  // the core type (bench/cost/measure_cmsis.py, apply_measured.py).
  CHECK(db.get("rt1062").findLibrary("cmsis_nn")->provenance == CostProvenance::Published);
  CHECK(db.get("rt685").findLibrary("hifi4_nnlib")->provenance == CostProvenance::Published);
  CHECK(db.get("rt1064").findLibrary("cmsis_nn")->provenance == CostProvenance::Measured);
  CHECK(db.get("rt1064").findLibrary("portable_int8")->provenance == CostProvenance::Measured);
  CHECK(db.get("rp2040").findLibrary("portable_float")->provenance == CostProvenance::Carried);
  const KernelLibrary &h7 = *db.get("stm32h743").findLibrary("cmsis_nn");
  CHECK(h7.provenance == CostProvenance::Measured);
  // Depthwise costs several times a regular convolution per MAC (measured).
  CHECK(h7.depthwiseCyclesPerMac > 2 * h7.cyclesPerMac);
  CHECK(db.get("rp2040").findLibrary("cmsis_nn")->provenance ==
        CostProvenance::Carried); // Cortex-M0+: not measured
}

TEST_CASE("board errors name the file and the field") {
  std::string message = addError(data("bad_board_part.json"));
  CHECK_MESSAGE(message.find("bad_board_part.json: part: names no part ('rt9999')") !=
                    std::string::npos,
                message);
  message = addError(data("bad_board_region.json"));
  CHECK_MESSAGE(
      message.find("bad_board_region.json: memory[0].name: region 'OCRAM' is already in part "
                   "rt1062") != std::string::npos,
      message);
  message = addError(data("bad_board_field.json"));
  CHECK_MESSAGE(message.find("bad_board_field.json: cores: unknown field") != std::string::npos,
                message);
  CHECK_MESSAGE(
      message.find("bad_board_field.json: memory[0].size: expected integer, got string") !=
          std::string::npos,
      message);
  message = addError(data("bad_board_reserve.json"));
  CHECK_MESSAGE(message.find("bad_board_reserve.json: reserve.ram lots: expected BYTES") !=
                    std::string::npos,
                message);
  // A board cannot be built on another board.
  message = addError(data("bad_board_on_board.json"));
  CHECK_MESSAGE(message.find("bad_board_on_board.json: part: names no part ('rt1060-evk')") !=
                    std::string::npos,
                message);
}

TEST_CASE("a user's board file adds memory to a shipped part") {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  db.addFile(data("my_evk.json"));
  const Device *board = db.find("my-evk");
  REQUIRE(board);
  CHECK(board->part == "rt1062");
  CHECK(board->findRegion("HYPERRAM")->size == 8u * 1024 * 1024); // as my_evk.json says
  CHECK(board->homes.weightsRam == "HYPERRAM");
  CHECK(board->homes.activations == "DTCM");              // from the part
  CHECK(board->findRegion("OCRAM")->size == 768u * 1024); // rt1062's, checked above
}

TEST_CASE("schema errors name the file and the field") {
  ExitCode code = ExitCode::Success;
  std::string message = addError(data("bad_size_type.json"), &code);
  CHECK(code == ExitCode::BadInputFile);
  CHECK_MESSAGE(message.find("bad_size_type.json: memory[2].size: expected integer, got string") !=
                    std::string::npos,
                message);

  message = addError(data("missing_cores.json"));
  CHECK_MESSAGE(message.find("missing_cores.json: cores: required field is missing") !=
                    std::string::npos,
                message);

  message = addError(data("bad_kind_and_field.json"));
  CHECK_MESSAGE(message.find("bad_kind_and_field.json: memory[0].kind: expected one of") !=
                    std::string::npos,
                message);
  CHECK_MESSAGE(message.find("bad_kind_and_field.json: memory[1].speed: unknown field") !=
                    std::string::npos,
                message);

  message = addError(data("bad_home.json"));
  CHECK_MESSAGE(
      message.find("bad_home.json: homes.activations: names no memory region ('SRAM_DTC')") !=
          std::string::npos,
      message);

  message = addError(data("not_json.json"), &code);
  CHECK(code == ExitCode::BadInputFile);
  CHECK(message.find("not_json.json: not valid JSON") != std::string::npos);
}

TEST_CASE("a user's part file is added with --device-file semantics") {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  size_t before = db.devices().size();
  db.addFile(data("my_board.json"));
  CHECK(db.devices().size() == before + 1);
  REQUIRE(db.find("my-board"));
  CHECK(db.find("my-board")->findRegion("SDRAM")->size == 64u * 1024 * 1024); // my_board.json's
}

TEST_CASE("unknown device is a usage error listing the known parts") {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  try {
    db.get("rt9999");
    FAIL("expected an error");
  } catch (const Error &e) {
    CHECK(e.code() == ExitCode::Usage);
    std::string message = e.what();
    CHECK(message.rfind("unknown device 'rt9999' (option --device); known: ", 0) == 0);
    CHECK(message.find("rt1062") != std::string::npos);
  }
}

TEST_CASE("validator: type lists, minimum, nested arrays") {
  nlohmann::json schema = nlohmann::json::parse(R"({
    "type": "object", "required": ["a"], "additionalProperties": false,
    "properties": {"a": {"type": "array", "minItems": 1, "items": {"type": ["integer", "null"], "minimum": 0}},
                   "b": {"type": "number", "exclusiveMinimum": 0}}})");
  CHECK(validateJson(schema, nlohmann::json::parse(R"({"a": [1, null]})")).empty());
  auto v = validateJson(schema, nlohmann::json::parse(R"({"a": [-1, "x"], "b": 0, "c": 1})"));
  REQUIRE(v.size() == 4);
  CHECK(v[0].str() == "a[0]: must be >= 0");
  CHECK(v[1].str() == "a[1]: expected integer or null, got string");
  CHECK(v[2].str() == "b: must be > 0");
  CHECK(v[3].str() == "c: unknown field");
  CHECK(validateJson(schema, nlohmann::json::parse("[]"))[0].str() ==
        "(document): expected object, got array");
}
