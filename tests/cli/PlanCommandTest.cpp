// End-to-end: `bundlefit plan` on the reference models, checked against the
// figures Glow's bundles and AN13001 publish (shared/docs/mission.md §3).
#include "CliTestSupport.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace bundlefit::test;
using nlohmann::json;

static bool contains(const std::string &output, const std::string &text) {
  return output.find(text) != std::string::npos;
}

static json planJson(const std::string &model) {
  CommandResult result = runBundlefit("plan " + modelPath(model) + " --json -");
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  return json::parse(result.output);
}

TEST_CASE("Caffe LeNet float: Glow-compatible sizes and offsets, activations at most Glow's") {
  json report = planJson("lenet");
  CHECK(report["schema"] == "bundlefit.memory/1");
  CHECK(report["network"] == "lenet");
  // The sum of its eight 64-aligned weights (Glow's 1,724,672 has a spare 64):
  // conv1 20x1x5x5 and bias 20, conv2 50x20x5x5 and 50, fc1 500x800 and 500,
  // fc2 10x500 and 10 floats. MUTABLE: the input 1x28x28 and output 10 floats.
  CHECK(report["sizes"]["constant"] ==
        2048 + 128 + 100032 + 256 + 1600000 + 2048 + 20032 + 64); // 1,724,608
  CHECK(report["sizes"]["mutable"] == 3136 + 64);
  CHECK(report["sizes"]["alignment"] == 64);
  CHECK(report["sizes"]["activations"].get<uint64_t>() <=
        57600); // 46,080 + 11,520 (LeNet by hand: tests/models/README.md)
  CHECK(report["sizes"]["activations"] == report["activations_lower_bound"]);
  // At the bound: no limit ended the search, and the work it did is counted.
  CHECK(report["activations_search"]["stopped_by"] == "");
  CHECK(report["activations_search"]["stopped_in"] == "");
  CHECK(report["activations_search"]["work_units"].get<uint64_t>() > 0);
  REQUIRE(report["placeholders"].size() == 2);
  CHECK(report["placeholders"][0]["name"] == "data");
  CHECK(report["placeholders"][0]["kind"] == "input");
  CHECK(report["placeholders"][0]["offset"] == 0);
  CHECK(report["placeholders"][1]["name"] == "softmax");
  CHECK(report["placeholders"][1]["kind"] == "output");
  CHECK(report["placeholders"][1]["offset"] == 3136); // after data's 784 floats
  CHECK(report["constants"].size() == 8);
}

TEST_CASE("every reference model plans at its lower bound and the offsets are 64-aligned") {
  for (const char *model : {"resnet8", "ds_cnn", "mobilenet_v1_025", "autoencoder", "branchy"}) {
    CAPTURE(model);
    json report = planJson(model);
    uint64_t arena = report["sizes"]["activations"];
    CHECK(arena >= report["activations_lower_bound"].get<uint64_t>());
    for (const json &buffer : report["buffers"]) {
      CHECK(buffer["offset"].get<uint64_t>() % 64 == 0);
      CHECK(buffer["offset"].get<uint64_t>() + buffer["size"].get<uint64_t>() <= arena);
    }
  }
}

TEST_CASE("plan writes the JSON file it is asked for and prints the text report") {
  std::string path = std::string(BUNDLEFIT_TEST_TMP) + "/lenet.memory.json";
  std::remove(path.c_str());
  CommandResult result = runBundlefit("plan " + modelPath("lenet") + " --json " + path);
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  CHECK(contains(result.output, "constantWeight"));
  CHECK(contains(result.output, "1,724,608")); // CONSTANT, derived above
  FILE *file = std::fopen(path.c_str(), "r");
  REQUIRE(file);
  std::fclose(file);
}

TEST_CASE("bad input gets one line naming the file and a documented exit code") {
  CommandResult missing = runBundlefit("plan /nonexistent/model.onnx");
  CHECK(missing.exitCode == 4);
  CHECK(contains(missing.output, "/nonexistent/model.onnx"));

  CommandResult unknownOption = runBundlefit("plan " + modelPath("lenet") + " --no-such-option");
  CHECK(unknownOption.exitCode == 2);
  CHECK(contains(unknownOption.output, "--no-such-option"));
}

TEST_CASE("plan-buffers solves a MiniMalloc CSV, writes offsets, and gates on capacity") {
  std::string dir = BUNDLEFIT_TEST_TMP;
  // Five buffers whose lower bound is 12: only an exact placement fits 12.
  std::ofstream(dir + "/small.csv") << "id,lower,upper,size\n"
                                       "b0,0,3,4\nb1,3,9,4\nb2,0,9,4\nb3,9,21,4\nb4,0,21,4\n";
  CommandResult fits = runBundlefit(
      "plan-buffers " + dir + "/small.csv --format csv --capacity 12 -o " + dir + "/small.out.csv");
  CHECK_MESSAGE(fits.exitCode == 0, fits.output);
  CHECK(contains(fits.output, "fits in capacity 12"));
  std::ifstream out(dir + "/small.out.csv");
  std::string header;
  std::getline(out, header);
  CHECK(header == "id,lower,upper,size,offset");

  CommandResult tooSmall =
      runBundlefit("plan-buffers " + dir + "/small.csv --format csv --capacity 11");
  CHECK(tooSmall.exitCode == 3);
  CHECK(contains(tooSmall.output, "does not fit"));

  std::ofstream(dir + "/trace.txt") << "MODEL tiny\nALIGN 64\nALLOC 0 100\nALLOC 1 64\nFREE 0\n"
                                       "ALLOC 2 128\nFREE 1\nFREE 2\nMEM 256\nEFF 1.0\n";
  CommandResult glow =
      runBundlefit("plan-buffers " + dir + "/trace.txt --format glow --model tiny");
  CHECK_MESSAGE(glow.exitCode == 0, glow.output);
  CHECK(contains(glow.output, "tiny"));
}

TEST_CASE("plan -v names the peak layer and why: an SE gate's broadcast Mul ends the run") {
  // With no recompute budget no stage forms; the peak is stage 2's expansion,
  // whose run of patchable layers lies between two squeeze-and-excitation ops.
  CommandResult result = runBundlefit("plan " + modelPath("efficientnet_b0_tiny") +
                                      " --memory-opt 2 --patch-recompute-budget 0 -v");
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  CHECK_MESSAGE(
      contains(result.output,
               "peak layer stage2_block1_expand (Conv, live 229,376 B): patchable, but no "
               "stage over it lowered the peak within the recompute budget; its run of "
               "patchable layers is bounded by stage1_block1_se_scale: op Mul broadcasts "
               "float32[1,8,1,1] to float32[1,8,32,32] (no patch form) and by "
               "stage2_block1_se_pool: op GlobalAveragePool reads its whole input (no patch "
               "form)"),
      result.output);
  // At the default budget a stage takes that peak; -v then names the stage.
  result = runBundlefit("plan " + modelPath("efficientnet_b0_tiny") + " -v");
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  CHECK_MESSAGE(contains(result.output, "peak layer patch_stage_stage2_block1_dw_silu (PatchStage"),
                result.output);
  // Without -v, no such line.
  result = runBundlefit("plan " + modelPath("efficientnet_b0_tiny"));
  CHECK(!contains(result.output, "peak layer"));
}

TEST_CASE("plan -v says what each patch stage saves in bytes and costs in recomputed MACs") {
  CommandResult result = runBundlefit("plan " + modelPath("resnet8") + " -v");
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  // By hand (float, 64-aligned): the stage's largest layer run whole is stage1_add, two inputs
  // and its output of 16x32x32 x 4 B = 3 x 65,536 = 196,608; the stage holds its 45,056 B
  // arena, the input 3x32x32 x 4 = 12,288 and its output 65,536 = 122,880. Its layers' MACs:
  // conv1 16x32x32 x 27 = 442,368, two 3x3 convs 16x32x32 x 144 = 2,359,296 each, the Add
  // 16,384 = 5,177,344; the tiles run 6,596,608 (the layer table): 1,419,264 more, 27.4%, and
  // 9.2% of the model's 15,479,680. It does not set the peak, so it takes full-width row
  // bands, estimated faster than 4x2 tiles for +10.8% more MACs (and measured 0.95x the model's
  // time), past the recompute budget.
  CHECK_MESSAGE(
      contains(result.output,
               "patch stage patch_stage_stage1_add: 4 layers in 8x1 tiles (full-width row "
               "bands); saves 73,728 B (its largest layer run whole holds 196,608 B, the "
               "stage 122,880 B with a 45,056 B tile arena); costs 1,419,264 extra MACs "
               "recomputing halos (+27.4% of its layers', +9.2% of the model's"),
      result.output);
  // Its time, estimated: the tiles' 6,596,608 MACs x (1 + 0.6 log2 1 + 0.05 log2 8) over the
  // layers' 5,177,344 = 1.47.
  CHECK_MESSAGE(contains(result.output,
                         "of the model's); estimated time 1.47x its layers' run whole "
                         "(its MACs, times 1 + 0.60 log2 of its 1 column band(s), for "
                         "the cropped, shorter rows, + 0.05 log2 of its 8 row band(s)"),
                result.output);
  // The second stage sets the peak: its 3-column tiles are what the bytes allow.
  CHECK_MESSAGE(
      contains(result.output, "patch stage patch_stage_stage2_add: 5 layers in 5x5 tiles"),
      result.output);
  CHECK(contains(result.output,
                 "tiles of 3 columns (< 16) miss the 16-pixel convolution tiles of "
                 "AVX-512 hosts (below 8 columns, 64-bit hosts run them as flat runs"));
  // The budget's line: 1,419,264 + 1,501,440 = 2,920,704 extra MACs over the model's 12,558,976
  // run whole (12,558,976 + 2,920,704 = 15,479,680 scheduled) = 23.3%, past 0.2: the first
  // stage's row bands recompute more than its 4x2 tiles within the budget, estimated 0.74x their
  // time, under kPastBudgetTimeRatio (printed from the constant).
  CHECK_MESSAGE(
      contains(result.output,
               "patch stages: 2,920,704 extra MACs recomputed (+23.3% of the model's MACs "
               "run whole); --patch-recompute-budget 0.2 bounds those of the grids that set "
               "the peak; past it, each stage that recomputes more than its grid within the "
               "budget runs a grid of no higher peak estimated under 0.8x that grid's time "
               "(patchTimeMacs)"),
      result.output);
  result = runBundlefit("plan " + modelPath("resnet8") + " -v --patch-recompute-budget 0.3");
  CHECK_MESSAGE(contains(result.output,
                         "--patch-recompute-budget 0.3 bounds those of the grids that "
                         "set the peak (within it)"),
                result.output);
  result = runBundlefit("plan " + modelPath("resnet8"));
  CHECK(!contains(result.output, "patch stage"));
}
