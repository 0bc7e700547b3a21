//===- SuggestionTests.cpp - What would make a model fit: checked, cheap ---===//
//
// fit's suggestions (driver/FitSuggestions.h): each one is the fit of the
// build it describes (following it gives its figures), they cost at most one
// more build, none when --no-suggestions, and the parts they name are the
// device's family's or the user's list.
//
//===----------------------------------------------------------------------===//
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "../cli/CliTestSupport.h"

#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

using bundlefit::test::CommandResult;

CommandResult run(const std::string &arguments) { return bundlefit::test::runBundlefit(arguments); }
std::string model(const std::string &name) {
  return std::string(BUNDLEFIT_MODELS_DIR) + "/" + name + ".onnx";
}

/// The builds a run made: -v prints one "plan X for CORE" stage per build
/// (then "compile X for CORE" when its code size is not cached).
int buildsIn(const std::string &verboseOutput) {
  static const std::regex stage("^bundlefit: plan [a-z0-9-]+ for ");
  std::istringstream in(verboseOutput);
  int builds = 0;
  for (std::string line; std::getline(in, line);)
    builds += std::regex_search(line, stage);
  return builds;
}

nlohmann::json jsonOf(const std::string &arguments, int exitCode = 3) {
  CommandResult r = run(arguments + " --json");
  REQUIRE_MESSAGE(r.exitCode == exitCode, r.output);
  return nlohmann::json::parse(r.output);
}

std::string joined(const nlohmann::json &options) {
  std::string text;
  for (const auto &option : options)
    text += " " + option.get<std::string>();
  return text;
}

/// The --device values of the suggestions that name a part.
std::vector<std::string> partsNamed(const nlohmann::json &report) {
  std::vector<std::string> parts;
  for (const auto &s : report["suggestions"]) {
    const auto &options = s["options"];
    for (size_t i = 0; i + 1 < options.size(); ++i)
      if (options[i] == "--device")
        parts.push_back(options[i + 1]);
  }
  return parts;
}

} // namespace

TEST_CASE("suggestions: following one that fits gives its figures") {
  // Float LeNet's 1.7 MB of weights do not fit the LPC55S69's 640 KB of Flash.
  const nlohmann::json report = jsonOf("fit " + model("lenet") + " --device lpc55s69");
  REQUIRE(!report["suggestions"].empty());
  int followed = 0;
  for (const auto &s : report["suggestions"]) {
    INFO(s.dump());
    CHECK(!s["options"].empty());
    if (!s["fits"].get<bool>() || !s["estimate"].is_null())
      continue;
    std::string options = joined(s["options"]);
    std::string device = options.find("--device") == std::string::npos ? " --device lpc55s69" : "";
    nlohmann::json followedReport = jsonOf("fit " + model("lenet") + device + options, 0);
    CHECK(followedReport["fits"] == true);
    CHECK(followedReport["totals"]["flash"] == s["flash"]);
    CHECK(followedReport["totals"]["ram"] == s["ram"]);
    ++followed;
  }
  CHECK(followed >= 1); // int8 fits the part, checked by its own build
}

TEST_CASE("suggestions: at most one more build; none when int8 cannot fit or asked for none") {
  // MobileNetV2's int8 weights alone (3.4 MB) exceed the nRF52840's 1 MB of Flash: the float
  // build is the only one made, and the suggestion says int8 cannot fit, as a bound.
  CommandResult big = run("fit " + model("mobilenet_v2") + " --device nrf52840 -v");
  CHECK_MESSAGE(big.exitCode == 3, big.output);
  CHECK_MESSAGE(buildsIn(big.output) == 1, big.output);
  CHECK_MESSAGE(big.output.find("quantize to int8: cannot fit") != std::string::npos, big.output);

  CommandResult lenet = run("fit " + model("lenet") + " --device lpc55s69 -v");
  CHECK_MESSAGE(buildsIn(lenet.output) == 2, lenet.output); // float, then int8

  CommandResult none = run("fit " + model("lenet") + " --device lpc55s69 -v --no-suggestions");
  CHECK_MESSAGE(none.exitCode == 3, none.output);
  CHECK_MESSAGE(buildsIn(none.output) == 1, none.output);
  CHECK(none.output.find("changes: not looked for (--no-suggestions)") != std::string::npos);
  CHECK(jsonOf("fit " + model("lenet") + " --device lpc55s69 --no-suggestions")["suggestions"]
            .empty());
}

TEST_CASE("suggestions: parts of the device's family, or the user's list") {
  // MobileNetV1-0.25 float with half of every RAM region kept for the application: the
  // nRF5340 (512 KB) holds it, not the nRF52840 (256 KB); no part of another vendor is offered.
  const std::string fit =
      "fit " + model("mobilenet_v1_025") + " --device nrf52840 --reserve-ram 50%";
  nlohmann::json family = jsonOf(fit);
  std::vector<std::string> parts = partsNamed(family);
  REQUIRE_MESSAGE(parts.size() == 1, family["suggestions"].dump());
  CHECK(parts[0] == "nrf5340");

  nlohmann::json listed = jsonOf(fit + " --suggest-parts stm32h743,rt1062,rp2040");
  std::vector<std::string> named = partsNamed(listed);
  CHECK_MESSAGE(named.size() >= 2, listed["suggestions"].dump());
  for (const std::string &part : named)
    CHECK((part == "stm32h743" || part == "rt1062" || part == "rp2040"));

  CommandResult unknown = run(fit + " --suggest-parts stm32h743,nope");
  CHECK(unknown.exitCode == 2);
  CHECK_MESSAGE(unknown.output.find("unknown device 'nope' (option --suggest-parts)") !=
                    std::string::npos,
                unknown.output);
}
