//===- CliTests.cpp - bundlefit devices / fit / pick end to end ------------===//
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "../cli/CliTestSupport.h"

#include <string>

namespace {

using bundlefit::test::CommandResult;

CommandResult run(const std::string &arguments) { return bundlefit::test::runBundlefit(arguments); }
std::string lenet() { return std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.onnx"; }
bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("bundlefit devices lists the parts, as a table and as JSON") {
  CommandResult table = run("devices");
  CHECK(table.exitCode == 0);
  CHECK(has(table.output, "rt1062"));
  CHECK(has(table.output, "cortex-m7 600 MHz"));
  CommandResult json = run("devices --json");
  REQUIRE(json.exitCode == 0);
  auto report = nlohmann::json::parse(json.output);
  CHECK(report["schema"] == "bundlefit.devices/1");
  CHECK(report["devices"].size() >= 13);
  CommandResult user =
      run(std::string("devices --device-file ") + DEVICE_TEST_DATA + "/my_board.json");
  CHECK(has(user.output, "my-board"));
  CommandResult bad =
      run(std::string("devices --device-file ") + DEVICE_TEST_DATA + "/bad_size_type.json");
  CHECK(bad.exitCode == 4);
  CHECK_MESSAGE(has(bad.output, "bad_size_type.json: memory[2].size: expected integer"),
                bad.output);
  // Boards say which part they are built on; libraries say what their figures rest on.
  const nlohmann::json *evk = nullptr;
  for (const auto &device : report["devices"])
    if (device["id"] == "rt1060-evk")
      evk = &device;
  REQUIRE(evk);
  CHECK((*evk)["part"] == "rt1062");
  CHECK((*evk)["kernel_libraries"]["cmsis_nn"]["provenance"] == "published");
  CommandResult board =
      run(std::string("devices --device-file ") + DEVICE_TEST_DATA + "/my_evk.json");
  CHECK(board.exitCode == 0);
  CHECK(has(board.output, "my-evk"));
}

TEST_CASE("bundlefit devices --calibration lists every published timing with its error and role") {
  CommandResult table = run("devices --calibration");
  REQUIRE_MESSAGE(table.exitCode == 0, table.output);
  CHECK(has(table.output, "held out"));
  CHECK(has(table.output, "fitted"));
  CHECK_MESSAGE(has(table.output, "over 9 figures (claimed in device_db/README.md: within 2.3%)"),
                table.output);
  CommandResult json = run("devices --calibration --json");
  REQUIRE(json.exitCode == 0);
  auto report = nlohmann::json::parse(json.output);
  CHECK(report["points"].size() == 9);
  CHECK(report["claimed_error_percent"] == 2.3);
  CHECK(report["worst_error_percent"].get<double>() <= 2.3);
  // AN13001's plain int8 rows time Glow's int8 kernels: they check the
  // labelled comparison figures, and say what bundlefit's own kernels give.
  size_t comparisons = 0;
  for (const auto &point : report["points"])
    if (point["role"] == "comparison") {
      ++comparisons;
      CHECK(point["variant"] == "int8");
      CHECK(point["comparison_of"].get<std::string>().find("Glow's int8 kernels") == 0);
      CHECK(point["own_kernels_ms"].get<double>() < point["predicted_ms"].get<double>());
    }
  CHECK(comparisons == 2);
  CHECK(has(table.output, "a comparison, Glow's int8 kernels"));
}

TEST_CASE("rt1062 prices the kernels it links: MobileNetV1-0.25 int8 below float, pick follows") {
  std::string model = std::string(BUNDLEFIT_MODELS_DIR) + "/mobilenet_v1_025.onnx";
  auto predicted = [&](const char *variant) {
    CommandResult r =
        run("fit " + model + " --device rt1060 --variant " + variant + " --json --no-suggestions");
    REQUIRE_MESSAGE(r.exitCode == 0, r.output);
    return nlohmann::json::parse(r.output)["predicted_ms"].get<double>();
  };
  double floatMs = predicted("float"), int8Ms = predicted("int8");
  INFO("float " << floatMs << " ms, int8 " << int8Ms << " ms");
  // Each as fit places it: the float weights do not fit the RAM whole
  // beside the activations and part is read from Flash; the int8 ones do. With
  // the measured figures (own int8 conv 2.32 cycles/MAC, float 2.04) int8 is
  // below float (the AN13001 Glow figure, 6.77, made it three times slower).
  CHECK(int8Ms < floatMs);
  CommandResult pick = run("pick " + model + " --device rt1060 --json");
  REQUIRE_MESSAGE(pick.exitCode == 0, pick.output);
  auto report = nlohmann::json::parse(pick.output);
  REQUIRE(report["best"].is_number());
  const auto &best = report["candidates"][report["best"].get<int>()];
  CHECK(best["variant"].get<std::string>().rfind("int8", 0) == 0);
  // The devices database's part file carries the AN13001 figure as a
  // comparison only.
  auto devices = nlohmann::json::parse(run("devices --json").output);
  for (const auto &device : devices["devices"])
    if (device["id"] == "rt1062") {
      const auto &library = device["kernel_libraries"]["portable_int8"];
      CHECK(library["provenance"] == "measured");
      CHECK(library["comparison"]["cycles_per_mac"] == 6.77);
      CHECK(library["comparison"]["used_for_predictions"] == false);
      CHECK(library["cycles_per_mac"].get<double>() < 3);
    }
}

TEST_CASE("float LeNet (1.7 MB weights) does not fit lpc55s69: exit 3 with changes") {
  CommandResult r = run("fit " + lenet() + " --device lpc55s69");
  CHECK_MESSAGE(r.exitCode == 3, r.output);
  CHECK(has(r.output, "DOES NOT FIT"));
  CHECK(has(r.output, "FLASH needs"));
  CHECK_MESSAGE(has(r.output, "quantize to int8"), r.output);
  CHECK(has(r.output, "use part "));

  CommandResult json = run("fit " + lenet() + " --device lpc55s69 --json");
  CHECK(json.exitCode == 3);
  auto report = nlohmann::json::parse(json.output);
  CHECK(report["fits"] == false);
  bool int8Fits = false;
  for (const auto &s : report["suggestions"])
    int8Fits = int8Fits ||
               (s["change"].get<std::string>().find("quantize to int8") == 0 && s["fits"] == true);
  CHECK(int8Fits);
}

TEST_CASE("float LeNet fits rt1060-evk: exit 0, per-region usage and homes") {
  CommandResult r = run("fit " + lenet() + " --device rt1060-evk");
  CHECK_MESSAGE(r.exitCode == 0, r.output);
  CHECK(has(r.output, "verdict: FITS"));
  CHECK(has(r.output, "activations: DTCM"));
  CommandResult json = run("fit " + lenet() + " --device evkb-mimxrt1060 --weights ram --json");
  REQUIRE_MESSAGE(json.exitCode == 0, json.output);
  auto report = nlohmann::json::parse(json.output);
  CHECK(report["bundle"]["constant"] == 1724608); // LeNet by hand: tests/models/README.md
  CHECK(report["totals"]["weights_in_ram"] == 1724608);
  CHECK(report["predicted_ms"].get<double>() > 0);
  CHECK(report["regions"].size() == 5);
}

TEST_CASE("int8-hifi4 on a part without HiFi4 and unknown devices are usage errors") {
  CommandResult r = run("fit " + lenet() + " --device rt1062 --variant int8-hifi4");
  CHECK(r.exitCode == 2);
  CHECK(has(r.output, "has no hifi4_nnlib library"));
  CommandResult unknown = run("fit " + lenet() + " --device rt9999");
  CHECK(unknown.exitCode == 2);
  CHECK(has(unknown.output, "unknown device 'rt9999' (option --device); known: "));
}

TEST_CASE("bundlefit pick on rt685 compares the builds; HiFi4 rows are estimates, not the best") {
  CommandResult r = run("pick " + lenet() + " --device rt685");
  CHECK_MESSAGE(r.exitCode == 0, r.output);
  CHECK(has(r.output, "int8-hifi4"));
  CHECK(has(r.output, "no HiFi4 DSP code"));
  CommandResult json = run("pick " + lenet() + " --device rt685 --json");
  REQUIRE(json.exitCode == 0);
  auto report = nlohmann::json::parse(json.output);
  CHECK(report["candidates"].size() == 10); // 5 variants x Flash/RAM (rt685's libraries)
  REQUIRE(report["best"].is_number());
  int best = report["best"];
  CHECK(report["candidates"][best]["fits"] == true);
  // bundlefit cannot build the HiFi4 rows: the best is a build it makes.
  CHECK(report["candidates"][best]["buildable"] == true);
  CHECK(report["candidates"][best]["variant"].get<std::string>().find("hifi4") ==
        std::string::npos);
}

TEST_CASE("fit and pick size int8 builds from the quantized model, options included") {
  // The real plan of LeNet int8 (as `plan --load-profile` reports it): CONSTANT
  // 433,088 with Int32 bias, 431,296 with power-of-2 scales and Int8 bias;
  // FullyConnected kept float keeps fc1/fc2's float weights. No profile is
  // needed: the sizes do not depend on the ranges.
  auto bundleOf = [](const std::string &options) {
    CommandResult r = run("fit " + lenet() + " --device rt1062 --json -q " + options);
    REQUIRE_MESSAGE(r.exitCode == 0, r.output);
    auto report = nlohmann::json::parse(r.output);
    CHECK(report["bundle"]["sizes_estimated"] == false);
    return report["bundle"];
  };
  // By hand (LeNet's shapes in tests/models/make_models.py, every buffer
  // 64-byte aligned): int8 weights conv1 500, conv2 25,000, fc1 400,000, fc2
  // 5,000; Int32 biases of 20, 50, 500 and 10 channels; Int8 biases a quarter
  // of that. MUTABLE is the float input 3,136 + the output 64. ACTIVATIONS at
  // --memory-opt 2 (no patch stage in LeNet, so as at level 1): the conv2+pool2
  // ConvPool step holds pool1's 20x12x12 = 2,880, a workspace of a scratch row
  // of 8 channels (FuseConvPool's chunk) x 8 conv columns and two im2col
  // columns of 20x5x5 (1,064), then pool2's 800 at the next 64-byte offset,
  // 3,968 (tests/models/README.md).
  auto int8 = bundleOf("--variant int8");
  CHECK(int8["constant"] == 512 + 128 + 25024 + 256 + 400000 + 2048 + 5056 + 64); // 433,088
  CHECK(int8["mutable"] == 3136 + 64);
  CHECK(int8["activations"] == 3968 + 800 + 32); // 4,800: 4,768 rounded up to 64
  CHECK(bundleOf("--variant int8 --quantization-schema symmetric_with_power2_scale "
                 "--quantization-precision-bias Int8")["constant"] ==
        512 + 64 + 25024 + 64 + 400000 + 512 + 5056 + 64); // 431,296
  CHECK(bundleOf("--variant int8 --keep-original-precision-for-nodes FullyConnected")["constant"] ==
        512 + 128 + 25024 + 256 + 1600000 + 2048 + 20032 + 64);
  auto cmsis = bundleOf("--variant int8-cmsis");
  CHECK(cmsis["constant"] == 433088);            // the same weights and Int32 biases
  CHECK(cmsis["kernel_scratch"].get<int>() > 0); // conv2's im2col buffer

  CommandResult pick = run("pick " + lenet() +
                           " --device rt1062 --json -q "
                           "--quantization-schema symmetric_with_power2_scale "
                           "--quantization-precision-bias Int8");
  REQUIRE_MESSAGE(pick.exitCode == 0, pick.output);
  auto report = nlohmann::json::parse(pick.output);
  bool quantizedNote = false;
  for (const auto &note : report["notes"])
    quantizedNote = quantizedNote || has(note.get<std::string>(), "int8 rows: the bundle compiled");
  CHECK(quantizedNote);
  // int8, weights in RAM: CONSTANT 431,296 + MUTABLE + ACTIVATIONS and the library RAM.
  CommandResult fit = run("fit " + lenet() +
                          " --device rt1062 --variant int8 --weights ram --json -q "
                          "--quantization-schema symmetric_with_power2_scale "
                          "--quantization-precision-bias Int8");
  REQUIRE(fit.exitCode == 0);
  auto fitReport = nlohmann::json::parse(fit.output);
  bool samePick = false;
  for (const auto &c : report["candidates"])
    samePick = samePick || (c["variant"] == "int8" && c["weights"] == "ram" &&
                            c["ram"] == fitReport["totals"]["ram"] &&
                            c["flash"] == fitReport["totals"]["flash"]);
  CHECK(samePick);

  // With --load-profile the profile is read and checked: a missing one is exit 4.
  CommandResult wrong = run("fit " + lenet() + " --device rt1062 --variant int8 --load-profile " +
                            std::string(DEVICE_TEST_DATA) + "/no-such-profile.yaml");
  CHECK(wrong.exitCode == 4);
}

TEST_CASE("fit and pick plan at the model's --memory-opt (default 2; 0 is Glow's layout)") {
  auto fitActivations = [](const std::string &options) {
    CommandResult r = run("fit " + lenet() + " --device rt1062 --json -q " + options);
    REQUIRE_MESSAGE(r.exitCode == 0, r.output);
    return nlohmann::json::parse(r.output)["bundle"]["activations"].get<uint64_t>();
  };
  // By hand, 64-byte aligned buffers: at level 0 conv1's output 20x24x24 and
  // pool1's 20x12x12 live together (float 46,080 + 11,520; int8 11,520 +
  // 2,880). At levels 1 and 2 the peak is a ConvPool step: float conv2+pool2
  // holds pool1's 11,520, its output 50x4x4x4 = 3,200 and a scratch row of 8
  // channels x 8 columns x 4 = 256; int8 conv2+pool2 holds pool1's 2,880, a
  // workspace of 8 x 8 + 2 x 500 im2col bytes and pool2's 800 at 3,968.
  CHECK(fitActivations("--memory-opt 0") == 46080 + 11520);                  // 57,600
  CHECK(fitActivations("") == 11520 + 3200 + 256);                           // 14,976
  CHECK(fitActivations("--variant int8 --memory-opt 0") == 11520 + 2880);    // 14,400
  CHECK(fitActivations("--variant int8 --memory-opt 1") == 3968 + 800 + 32); // 4,800
  // CMSIS-NN calls keep their layers (compile prepares them before the
  // memory-opt passes, and so does the sizing): the layer bound, as compiled.
  CHECK(fitActivations("--variant int8-cmsis") == 14400);
  // pick's RAM for the float build in Flash: the same arena difference.
  auto pickRam = [](const std::string &options) {
    CommandResult r = run("pick " + lenet() + " --device rt1062 --json -q " + options);
    REQUIRE_MESSAGE(r.exitCode == 0, r.output);
    const nlohmann::json report = nlohmann::json::parse(r.output);
    for (const auto &row : report["candidates"])
      if (row["variant"] == "float" && row["weights"] == "flash")
        return row["ram"].get<uint64_t>();
    FAIL("no float/flash row");
    return uint64_t(0);
  };
  CHECK(pickRam("--memory-opt 0") - pickRam("") == 57600 - 14976); // the two arenas above
}
