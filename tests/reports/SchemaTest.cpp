// The JSON reports of the real commands on the reference models, validated
// against reports/schemas/*.schema.json, and the schemas shown to reject
// broken documents (so a passing validation means something).
#include "ReportTestSupport.h"

#include "bundlefit/device/JsonSchema.h"

using namespace bundlefit::test;
using bundlefit::device::validateJson;
using nlohmann::json;

namespace {

std::string violationsText(const json &schema, const json &document) {
  std::string text;
  for (const auto &violation : validateJson(schema, document))
    text += violation.str() + "\n";
  return text;
}

void checkValid(const char *schemaName, const json &document) {
  json schema = loadSchema(schemaName);
  std::string violations = violationsText(schema, document);
  CHECK_MESSAGE(violations.empty(), schemaName << ":\n" << violations);
}

bool anyViolationAt(const json &schema, const json &document, const std::string &path) {
  for (const auto &violation : validateJson(schema, document))
    if (violation.path == path)
      return true;
  return false;
}

} // namespace

TEST_CASE("plan --json validates against memory.schema.json on every reference model") {
  for (const char *model :
       {"lenet", "resnet8", "ds_cnn", "mobilenet_v1_025", "autoencoder", "branchy"}) {
    CAPTURE(model);
    json report = runJson("plan " + modelPath(model) + " --json");
    checkValid("memory.schema.json", report);
    CHECK(report["schema"] == "bundlefit.memory/1");
  }
}

TEST_CASE("plan --device adds per-layer predicted time; the report still validates") {
  json report = runJson("plan " + modelPath("lenet") + " --device rt1060 --json -");
  checkValid("memory.schema.json", report);
  REQUIRE(report.contains("predicted"));
  CHECK(report["predicted"]["device"] == "rt1062");
  double sum = 0;
  int timed = 0;
  for (const json &layer : report["layers"])
    if (layer.contains("predicted_ms")) {
      sum += layer["predicted_ms"].get<double>();
      ++timed;
    }
  CHECK(timed >= 5); // conv+pool twice (fused), fc, fc, softmax (flatten is a view)
  // Every node of the float build is a row, so the rows add up to the total.
  CHECK(sum == doctest::Approx(report["predicted"]["ms"].get<double>()).epsilon(1e-6));
  // The same total as `fit` on the same part.
  json fit = runJson("fit " + modelPath("lenet") + " --device rt1060 --json");
  CHECK(report["predicted"]["ms"].get<double>() ==
        doctest::Approx(fit["predicted_ms"].get<double>()).epsilon(1e-9));
}

TEST_CASE("compile --json prints the bundle's memory.json, which validates") {
  std::string dir = tmpPath("bundle_lenet_json");
  json report = runJson("compile " + modelPath("lenet") + " -o " + dir + " --json");
  checkValid("memory.schema.json", report);
  CHECK(report["code_size"]["text"].get<uint64_t>() > 0);
  CHECK(report == json::parse(readText(dir + "/lenet.memory.json")));
}

TEST_CASE("fit --json validates against fit.schema.json, fitting or not") {
  json fits = runJson("fit " + modelPath("lenet") + " --device rt1060 --json");
  checkValid("fit.schema.json", fits);
  CHECK(fits["fits"] == true);
  json tooBig = runJson("fit " + modelPath("lenet") + " --device lpc55s69 --json", 3);
  checkValid("fit.schema.json", tooBig);
  CHECK(tooBig["fits"] == false);
  CHECK(!tooBig["problems"].empty());
  json int8 = runJson("fit " + modelPath("ds_cnn") + " --device rt685 --variant int8-hifi4 --json");
  checkValid("fit.schema.json", int8);
}

TEST_CASE("pick --json validates against pick.schema.json") {
  json pick = runJson("pick " + modelPath("lenet") + " --device rt685 --json");
  checkValid("pick.schema.json", pick);
  REQUIRE(pick["best"].is_number_integer());
  CHECK(pick["candidates"][pick["best"].get<size_t>()]["best"] == true);
  json none = runJson("pick " + modelPath("mobilenet_v2") + " --device lpc55s69 --json", 3);
  checkValid("pick.schema.json", none);
  CHECK(none["best"].is_null());
}

TEST_CASE("the schemas reject broken documents") {
  json memorySchema = loadSchema("memory.schema.json");
  json plan = runJson("plan " + modelPath("lenet") + " --json");
  REQUIRE(validateJson(memorySchema, plan).empty());

  json missing = plan;
  missing.erase("sizes");
  CHECK(anyViolationAt(memorySchema, missing, "sizes"));
  json wrongType = plan;
  wrongType["sizes"]["constant"] = "1,724,608";
  CHECK(anyViolationAt(memorySchema, wrongType, "sizes.constant"));
  json negative = plan;
  negative["buffers"][0]["offset"] = -64;
  CHECK(anyViolationAt(memorySchema, negative, "buffers[0].offset"));
  json unknown = plan;
  unknown["activation_size"] = 1; // a misspelt key must not pass silently
  CHECK(anyViolationAt(memorySchema, unknown, "activation_size"));
  json badKind = plan;
  badKind["placeholders"][0]["kind"] = "weights";
  CHECK(anyViolationAt(memorySchema, badKind, "placeholders[0].kind"));
  json wrongSchema = plan;
  wrongSchema["schema"] = "bundlefit.memory/2";
  CHECK(anyViolationAt(memorySchema, wrongSchema, "schema"));

  json fitSchema = loadSchema("fit.schema.json");
  json fit = runJson("fit " + modelPath("lenet") + " --device rt1060 --json");
  REQUIRE(validateJson(fitSchema, fit).empty());
  json noVerdict = fit;
  noVerdict.erase("fits");
  CHECK(anyViolationAt(fitSchema, noVerdict, "fits"));
  json badRegion = fit;
  badRegion["regions"][0]["used"] = 1.5;
  CHECK(anyViolationAt(fitSchema, badRegion, "regions[0].used"));
  // A memory report is not a fit report.
  CHECK(!validateJson(fitSchema, plan).empty());

  json pickSchema = loadSchema("pick.schema.json");
  json pick = runJson("pick " + modelPath("lenet") + " --device rt685 --json");
  REQUIRE(validateJson(pickSchema, pick).empty());
  json badBest = pick;
  badBest["best"] = "float";
  CHECK(anyViolationAt(pickSchema, badBest, "best"));
  json badWeights = pick;
  badWeights["candidates"][0]["weights"] = "sdram";
  CHECK(anyViolationAt(pickSchema, badWeights, "candidates[0].weights"));
}

TEST_CASE("live bytes per layer count each buffer at the plan's own alignment") {
  // EfficientNet-B0-tiny has activations whose sizes are not multiples of
  // 64, so at --buffer-alignment 16 a layer counted at Glow's 64 would show
  // more live bytes than the whole arena holds.
  for (const char *alignment : {"16", "64"}) {
    CAPTURE(alignment);
    json report = runJson("plan " + modelPath("efficientnet_b0_tiny") +
                          " --json --buffer-alignment " + std::string(alignment));
    checkValid("memory.schema.json", report);
    CHECK(report["sizes"]["buffer_alignment"] == std::stoi(alignment));
    uint64_t peak = 0;
    for (const json &layer : report["layers"])
      peak = std::max(peak, layer["live_activation_bytes"].get<uint64_t>());
    CHECK(peak <= report["sizes"]["activations"].get<uint64_t>());
  }
}
