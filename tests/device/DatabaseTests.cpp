//===- DatabaseTests.cpp - Parts load, validate, and errors name file+field ===//
#include "bundlefit/device/Device.h"
#include "bundlefit/device/JsonSchema.h"
#include "bundlefit/support/Error.h"

#include <doctest/doctest.h>

#include <fstream>

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
  for (const char *id : {"rt1011", "rt1062", "rt1064", "rt1176", "rt685", "rt595", "lpc55s69",
                         "mcxn947", "stm32h743", "stm32f746", "nrf52840", "rp2040", "rt1060-evk"})
    CHECK_MESSAGE(db.find(id) != nullptr, id);
  CHECK(db.devices().size() >= 13);
  // Aliases.
  REQUIRE(db.find("rt1060"));
  CHECK(db.find("rt1060")->id == "rt1062");
  CHECK(db.find("EVKB-MIMXRT1060")->id == "rt1060-evk");
  // Facts the fit depends on (mission §6, AN13001).
  const Device &rt = *db.find("rt1062");
  CHECK(rt.bundleCore().clockMhz == 600);
  CHECK(rt.findRegion("OCRAM")->base == 0x20200000);
  CHECK(rt.findRegion("OCRAM")->size == 768 * 1024);
  CHECK(rt.findRegion("DTCM")->size == 128 * 1024);
  CHECK(rt.sdkBaselineFlash == 21424);
  CHECK(rt.sdkBaselineRam == 8496);
  REQUIRE(rt.flexram);
  CHECK(rt.flexram->banks * rt.flexram->bankBytes == 512 * 1024);
  const Device &evk = *db.find("rt1060-evk");
  CHECK(evk.findRegion("SDRAM")->size == 32u * 1024 * 1024);
  CHECK(evk.findRegion("FLASH")->size == 8u * 1024 * 1024);
  const Device &rt685 = *db.find("rt685");
  REQUIRE(rt685.findLibrary("hifi4_nnlib"));
  CHECK(rt685.findLibrary("hifi4_nnlib")->flashBytes == 676 * 1024);
  CHECK(rt685.findLibrary("hifi4_nnlib")->ramBytes == 676 * 1024);
  CHECK(rt685.findRegion("SRAM")->size == 4608 * 1024);
  for (const Device &device : db.devices())
    CHECK_MESSAGE(!device.sources.empty(), device.id);
}

TEST_CASE("schema errors name the file and the field") {
  ExitCode code = ExitCode::Success;
  std::string message = addError(data("bad_size_type.json"), &code);
  CHECK(code == ExitCode::BadInputFile);
  CHECK_MESSAGE(message.find("bad_size_type.json: memory[2].size: expected integer, got string") !=
                    std::string::npos,
                message);

  message = addError(data("missing_cores.json"));
  CHECK_MESSAGE(message.find("missing_cores.json: cores: required field is missing") != std::string::npos,
                message);

  message = addError(data("bad_kind_and_field.json"));
  CHECK_MESSAGE(message.find("bad_kind_and_field.json: memory[0].kind: expected one of") != std::string::npos,
                message);
  CHECK_MESSAGE(message.find("bad_kind_and_field.json: memory[1].speed: unknown field") != std::string::npos,
                message);

  message = addError(data("bad_home.json"));
  CHECK_MESSAGE(message.find("bad_home.json: homes.activations: names no memory region ('SRAM_DTC')") !=
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
  CHECK(db.find("my-board")->findRegion("SDRAM")->size == 64u * 1024 * 1024);
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
  CHECK(validateJson(schema, nlohmann::json::parse("[]"))[0].str() == "(document): expected object, got array");
}
