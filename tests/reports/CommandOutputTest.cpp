// --json on every command, the text layer table, --dump-graph-DAG contents,
// and what --quiet / --verbose put on stderr.
#include "ReportTestSupport.h"

#include <cstdlib>
#include <fstream>
#include <regex>

using namespace bundlefit::test;
using nlohmann::json;

TEST_CASE("every command accepts --json and prints one JSON document") {
  CHECK(runJson("inspect " + modelPath("lenet") + " --json")["schema"] == "bundlefit.inspect/1");
  CHECK(runJson("plan " + modelPath("lenet") + " --json")["schema"] == "bundlefit.memory/1");
  CHECK(runJson("devices --json")["schema"] == "bundlefit.devices/1");
  CHECK(runJson("fit " + modelPath("lenet") + " --device rt1060 --json")["schema"] ==
        "bundlefit.fit/1");
  CHECK(runJson("pick " + modelPath("lenet") + " --device rt1060 --json")["schema"] ==
        "bundlefit.pick/1");
  CHECK(runJson("compile " + modelPath("autoencoder") + " -o " + tmpPath("json_ae") +
                " --json")["schema"] == "bundlefit.memory/1");

  std::string csv = tmpPath("small.csv");
  std::ofstream(csv) << "id,lower,upper,size\nb0,0,3,4\nb1,3,9,4\nb2,0,9,4\nb3,9,21,4\nb4,0,21,4\n";
  json buffers = runJson("plan-buffers " + csv + " --format csv --capacity 12 --json");
  CHECK(buffers["schema"] == "bundlefit.plan-buffers/1");
  CHECK(buffers["problems"][0]["arena"] == 12);
  CHECK(buffers["problems"][0]["lower_bound"] == 12);
  CHECK(buffers["capacity"]["fits"] == true);
  runJson("plan-buffers " + csv + " --format csv --capacity 8 --json", 3);

  // `run` needs a host C compiler, which the build itself needs, and the
  // models' inputs, which the build generates (reference_models).
  std::string npy = std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.input.npy";
  REQUIRE_MESSAGE(bool(std::ifstream(npy)), npy << " is missing: build reference_models");
  json run = runJson("run " + modelPath("lenet") + " --input " + npy + " --output-dir " +
                     tmpPath("run_out") + " --compare --json");
  CHECK(run["schema"] == "bundlefit.run/1");
  REQUIRE(run["outputs"].size() == 1);
  CHECK(run["outputs"][0]["name"] == "softmax");
  CHECK(run["outputs"][0]["shape"] == json::array({1, 10}));
  CHECK(run["outputs"][0]["max_abs_diff"].get<double>() < 1e-4);
}

TEST_CASE("plan --json FILE writes the file and still prints the text report") {
  std::string path = tmpPath("lenet.plan.json");
  std::remove(path.c_str());
  SplitResult result = runSplit("plan " + modelPath("lenet") + " --json " + path);
  REQUIRE(result.exitCode == 0);
  CHECK(result.out.find("constantWeight") != std::string::npos);
  CHECK(json::parse(readText(path))["sizes"]["constant"] ==
        1724608); // LeNet by hand: tests/models/README.md
}

TEST_CASE("the text layer table: aligned, peak live bytes, time only with a device") {
  // Layer by layer (Glow's layout), conv1: 288,000 MACs (20x24x24 x 25), 2,080
  // weight bytes (500 + 20 floats), 46,080 live (20x24x24 floats), right-aligned;
  // peaks 57,600 and 14,976 and step 0's 13,440 (11,520 + a 1,920 B workspace):
  // LeNet by hand: tests/models/README.md.
  SplitResult plain = runSplit("plan " + modelPath("lenet") + " --memory-opt 0");
  REQUIRE(plain.exitCode == 0);
  CHECK(plain.out.find("predicted") == std::string::npos);
  CHECK(plain.out.find("peak 57,600") != std::string::npos);
  CHECK(std::regex_search(
      plain.out,
      std::regex(R"(\n +0  conv1 +Conv +float32\[1,20,24,24\] +288,000 +2,080 +46,080\n)")));
  // The default (--memory-opt 2): conv1 and pool1 are one ConvPool; live
  // bytes count its workspace, and the peak is the arena.
  SplitResult fused = runSplit("plan " + modelPath("lenet"));
  REQUIRE(fused.exitCode == 0);
  CHECK(fused.out.find("peak 14,976") != std::string::npos);
  CHECK(std::regex_search(
      fused.out,
      std::regex(
          R"(\n +0  conv1_pool1 +ConvPool +float32\[1,20,12,12\] +288,000 +2,080 +13,440\n)")));

  SplitResult timed = runSplit("plan " + modelPath("lenet") + " --memory-opt 0 --device rt1060");
  REQUIRE(timed.exitCode == 0);
  CHECK(timed.out.find("predicted") != std::string::npos);
  CHECK(std::regex_search(timed.out, std::regex(R"(\n +0  conv1 .* 46,080 +[0-9.]+ ms\n)")));
  CHECK(timed.out.find("predicted inference time on rt1062") != std::string::npos);
  // The same per-layer table is part of the fit report.
  SplitResult fit = runSplit("fit " + modelPath("lenet") + " --device rt1060");
  REQUIRE(fit.exitCode == 0);
  CHECK(std::regex_search(fit.out, std::regex(R"(\n +3  fc1 +Gemm\+Relu .* ms\n)")));

  SplitResult compile = runSplit("compile " + modelPath("lenet") + " -o " + tmpPath("text_lenet"));
  REQUIRE(compile.exitCode == 0);
  CHECK(compile.out.find("ACTIVATIONS_MEM_SIZE") != std::string::npos);
  CHECK(compile.out.find("live act.") != std::string::npos);
}

TEST_CASE("--dump-graph-DAG: every tensor with its shape, region and offset") {
  std::string dir = tmpPath("dag_lenet"), dot = tmpPath("lenet.dot");
  std::remove(dot.c_str());
  SplitResult result =
      runSplit("compile " + modelPath("lenet") + " -o " + dir + " --dump-graph-DAG " + dot);
  REQUIRE(result.exitCode == 0);
  std::string graph = readText(dot);
  REQUIRE(graph.rfind("digraph", 0) == 0);
  json memory = json::parse(readText(dir + "/lenet.memory.json"));
  // Labels: "<tensor>\n<type>\n<region> @<offset>, <size> bytes" ("\n" is a DOT line break).
  // data 784 floats = 3,136 B at 0, softmax 10 floats = 40 B at 3,136 (64-aligned), conv1.weight
  // 20x1x5x5 floats = 2,000 B first in constantWeight.
  for (const json &buffer : memory["buffers"]) {
    if (buffer.value("scratch", false))
      continue; // A kernel workspace, not a tensor of the graph.
    std::string label = buffer["name"].get<std::string>() + "\\nfloat32[";
    CAPTURE(label);
    size_t at = graph.find("label=\"" + label);
    REQUIRE(at != std::string::npos);
    std::string line = graph.substr(at, graph.find('\n', at) - at);
    CHECK(line.find("\\nactivations @" + std::to_string(buffer["offset"].get<uint64_t>()) + ", " +
                    std::to_string(buffer["size"].get<uint64_t>()) + " bytes\"") !=
          std::string::npos);
  }
  CHECK(graph.find("label=\"data\\nfloat32[1,1,28,28]\\nmutableWeight @0, 3136 bytes\"") !=
        std::string::npos);
  CHECK(graph.find("label=\"softmax\\nfloat32[1,10]\\nmutableWeight @3136, 40 bytes\"") !=
        std::string::npos);
  CHECK(graph.find("label=\"conv1.weight\\nfloat32[20,1,5,5]\\nconstantWeight @0, 2000 bytes\"") !=
        std::string::npos);
  CHECK(graph.find("label=\"conv1_pool1\\nConvPool\\nstep 0\"") != std::string::npos);
  // No doubled backslashes: Graphviz would print them instead of breaking the line.
  CHECK(graph.find("\\\\") == std::string::npos);
  // Graphviz accepts it, when installed.
  if (std::system("command -v dot >/dev/null 2>&1") == 0)
    CHECK(std::system(("dot -Tsvg " + dot + " -o " + dot + ".svg").c_str()) == 0);
}

TEST_CASE("--quiet: nothing on stderr on success; --verbose: each stage with its time") {
  SplitResult quiet =
      runSplit("-q compile " + modelPath("lenet") + " -o " + tmpPath("quiet_lenet"));
  CHECK(quiet.exitCode == 0);
  CHECK_MESSAGE(quiet.err.empty(), quiet.err);
  CHECK(!quiet.out.empty());
  SplitResult quietAfter = runSplit("fit " + modelPath("lenet") + " --device rt1060 --quiet");
  CHECK(quietAfter.exitCode == 0);
  CHECK_MESSAGE(quietAfter.err.empty(), quietAfter.err);
  // -q: plan, fit and pick print their verdict line alone (issue 36: 19, 42
  // and 18 lines before).
  CHECK(quietAfter.out == "verdict: FITS\n");
  SplitResult quietPlan = runSplit("-q plan " + modelPath("lenet"));
  CHECK(quietPlan.exitCode == 0);
  CHECK(std::regex_match(quietPlan.out,
                         std::regex("lenet: CONSTANT [0-9,]+, MUTABLE 3,200, ACTIVATIONS "
                                    "[0-9,]+ \\(lower bound [0-9,]+\\)\n")));
  SplitResult quietPick = runSplit("-q pick " + modelPath("lenet") + " --device rt1060");
  CHECK(quietPick.exitCode == 0);
  CHECK(std::regex_match(quietPick.out, std::regex("\\* best for latency [^\n]*\n")));
  // Even with progress forced on (as on a terminal), --quiet wins.
  SplitResult forced =
      runSplit("--quiet plan " + modelPath("mobilenet_v2"), "BUNDLEFIT_PROGRESS=1");
  CHECK(forced.exitCode == 0);
  CHECK_MESSAGE(forced.err.empty(), forced.err);

  SplitResult verbose =
      runSplit("--verbose compile " + modelPath("lenet") + " -o " + tmpPath("verbose_lenet"));
  CHECK(verbose.exitCode == 0);
  for (const char *stage : {"import ", "graph passes", "plan memory", "generate code"}) {
    CAPTURE(stage);
    CHECK(std::regex_search(
        verbose.err, std::regex(std::string("bundlefit: ") + stage + ".*: [0-9]+\\.[0-9]{3} s\n")));
  }
  // Errors still reach stderr under --quiet.
  SplitResult error = runSplit("-q plan /nonexistent/model.onnx");
  CHECK(error.exitCode == 4);
  CHECK(error.err.find("/nonexistent/model.onnx") != std::string::npos);
}

TEST_CASE("progress: drawn on a terminal for a slow stage, never in a pipe") {
  // Piped stderr (a CI log): no progress line.
  SplitResult piped = runSplit("plan " + modelPath("mobilenet_v2"));
  REQUIRE(piped.exitCode == 0);
  CHECK(piped.err.find("...") == std::string::npos);
  // BUNDLEFIT_PROGRESS=1 stands in for a terminal: MobileNetV2 takes longer than
  // the half second before a stage shows, and the line is erased at the end.
  SplitResult shown =
      runSplit("compile " + modelPath("mobilenet_v2") + " -o " + tmpPath("progress_mnv2"),
               "BUNDLEFIT_PROGRESS=1");
  REQUIRE(shown.exitCode == 0);
  CHECK(std::regex_search(shown.err, std::regex(R"(\r\x1b\[K[a-z ]+\.\.\. [0-9]+\.[0-9] s)")));
  CHECK(shown.err.find("\r\x1b[K") != std::string::npos);
}

TEST_CASE("an unwritable --html path fails with exit 6 before anything is written") {
  std::string dir = tmpPath("html_unwritable_bundle");
  std::system(("rm -rf " + dir).c_str());
  SplitResult compile = runSplit("compile " + modelPath("lenet") + " -o " + dir +
                                 " --html /nonexistent/dir/lenet.html");
  CHECK(compile.exitCode == 6);
  CHECK(compile.err.find("/nonexistent/dir/lenet.html") != std::string::npos);
  CHECK(!std::ifstream(dir + "/lenet.o"));
  std::string json = tmpPath("unwritable.plan.json");
  std::remove(json.c_str());
  SplitResult plan = runSplit("plan " + modelPath("lenet") + " --json " + json +
                              " --html /nonexistent/dir/plan.html");
  CHECK(plan.exitCode == 6);
  CHECK(plan.out.empty());
  CHECK(!std::ifstream(json));
}
