//===- bench/scale/main.cpp - Compile time against model size --------------===//
//
// Issue 16 asks for compile time linear in nodes: a 20,000-node Relu chain
// under 8x the 2,500-node time and under 20 s, one Concat of 5,000 inputs
// under 5 s, and `-q` printing no tables. This builds those models, times
// `bundlefit -q compile --target host` on each (and on Splits of as many
// outputs as the Concats have inputs), prints a table and writes
// bench/results/scale.json with the git commit it measured.
//
// The graph passes are timed on chains that every pass rewrites (Relu,
// Identity, BatchNormalization repeated) with `bundlefit -q plan`, which runs
// the passes and the planner but no code generation; and the planner alone by
// `bundlefit plan-buffers` on network-like random problems of 10^4..10^6
// buffers (the problems bench_planner plans, written as MiniMalloc CSV), with
// its default 5 s time limit: the issue asks for 10^6 buffers under 30 s.
//
// Usage: bench_scale [OUT.json] [--quick] [--keep DIR] [--only compile|passes|plan-buffers]
//   --quick: the smaller sizes only; --keep DIR: write the models and bundles
//   into DIR and keep them (to profile one compile by hand); --only: one part
//   (the JSON then holds only its rows).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/planner/formats/NetworkLike.h"

#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

void addInput(onnx::GraphProto &graph, const std::string &name, int64_t width) {
  onnx::ValueInfoProto *input = graph.add_input();
  input->set_name(name);
  auto *tensor = input->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->add_dim()->set_dim_value(1);
  tensor->mutable_shape()->add_dim()->set_dim_value(width);
}

onnx::ModelProto emptyModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  model.mutable_graph()->set_name("scale");
  return model;
}

/// x[1,16] -> `nodes` one-input nodes in a chain -> y; opType(i) names node
/// i's operator, and decorate (if any) adds its other inputs.
onnx::ModelProto
chainModel(int nodes, const std::function<std::string(int)> &opType,
           const std::function<void(onnx::GraphProto &, onnx::NodeProto &, int)> &decorate = {}) {
  onnx::ModelProto model = emptyModel();
  onnx::GraphProto &graph = *model.mutable_graph();
  addInput(graph, "x", 16);
  std::string last = "x";
  for (int i = 0; i < nodes; ++i) {
    onnx::NodeProto *node = graph.add_node();
    node->set_op_type(opType(i));
    node->set_name("n" + std::to_string(i));
    node->add_input(last);
    if (decorate)
      decorate(graph, *node, i);
    last = i + 1 == nodes ? "y" : "t" + std::to_string(i);
    node->add_output(last);
  }
  graph.add_output()->set_name("y");
  return model;
}

/// x[1,16] -> Relu -> ... -> Relu (nodes of them) -> y.
onnx::ModelProto reluChain(int nodes) {
  return chainModel(nodes, [](int) { return std::string("Relu"); });
}

void addFloatInitializer(onnx::GraphProto &graph, const std::string &name, int64_t width,
                         float value) {
  onnx::TensorProto *tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(width);
  for (int64_t i = 0; i < width; ++i)
    tensor->add_float_data(value);
}

/// x[1,16] -> (Relu, Identity, BatchNormalization) repeated, `nodes` in all
/// -> y: EliminateIdentities removes a third of the nodes, FoldBatchNorm
/// turns each BN (no Conv before it) into a Mul and an Add.
onnx::ModelProto passChain(int nodes) {
  static const char *const kOps[] = {"Relu", "Identity", "BatchNormalization"};
  return chainModel(
      nodes, [](int i) { return std::string(kOps[i % 3]); },
      [](onnx::GraphProto &graph, onnx::NodeProto &node, int i) {
        if (i % 3 != 2)
          return;
        for (const char *param : {"scale", "bias", "mean", "var"}) {
          std::string name = std::string(param) + std::to_string(i);
          addFloatInitializer(graph, name, 16, param == std::string("var") ? 1.0f : 0.5f);
          node.add_input(name);
        }
      });
}

/// inputs x0..x(n-1), each [1,4], concatenated along axis 1 into y.
onnx::ModelProto wideConcat(int inputs) {
  onnx::ModelProto model = emptyModel();
  onnx::GraphProto &graph = *model.mutable_graph();
  onnx::NodeProto *node = graph.add_node();
  node->set_op_type("Concat");
  node->set_name("concat");
  for (int i = 0; i < inputs; ++i) {
    addInput(graph, "x" + std::to_string(i), 4);
    node->add_input("x" + std::to_string(i));
  }
  onnx::AttributeProto *axis = node->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  node->add_output("y");
  graph.add_output()->set_name("y");
  return model;
}

/// x[1, 4n] split along axis 1 into n outputs y0..y(n-1), each [1,4].
onnx::ModelProto wideSplit(int outputs) {
  onnx::ModelProto model = emptyModel();
  onnx::GraphProto &graph = *model.mutable_graph();
  addInput(graph, "x", 4 * int64_t(outputs));
  onnx::NodeProto *node = graph.add_node();
  node->set_op_type("Split");
  node->set_name("split");
  node->add_input("x");
  onnx::AttributeProto *axis = node->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  for (int i = 0; i < outputs; ++i) {
    node->add_output("y" + std::to_string(i));
    graph.add_output()->set_name("y" + std::to_string(i));
  }
  return model;
}

std::string commandOutput(const std::string &command) {
  std::string text;
  if (FILE *pipe = ::popen(command.c_str(), "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe))
      text += buffer;
    ::pclose(pipe);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

/// CPU seconds (user + system) of the children that have ended so far.
double childCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  auto seconds = [](const timeval &t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Measurement {
  std::string model;
  int nodes = 0;
  double seconds = 0;
  /// CPU time of the compile: on a shared machine the wall time also counts
  /// the other jobs' share of the cores, the CPU time does not.
  double cpuSeconds = 0;
  size_t stdoutLines = 0;
  int exitCode = 0;
  /// plan-buffers only: its JSON report's row (arena, bound, limit reached).
  nlohmann::json planRow;
};

/// Times `bundlefit ARGS` (its output in dir/name.stdout).
Measurement timeBundlefit(const std::string &name, int nodes, const std::string &args,
                          const fs::path &dir) {
  fs::path stdoutFile = dir / (name + ".stdout");
  std::string command =
      std::string(BUNDLEFIT_EXE) + " " + args + " >'" + stdoutFile.string() + "' 2>&1";
  const double cpuStart = childCpuSeconds();
  auto start = std::chrono::steady_clock::now();
  int status = std::system(command.c_str());
  Measurement m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.cpuSeconds = childCpuSeconds() - cpuStart;
  m.model = name;
  m.nodes = nodes;
  m.exitCode = WEXITSTATUS(status);
  std::ifstream lines(stdoutFile);
  for (std::string line; std::getline(lines, line);)
    ++m.stdoutLines;
  std::ifstream report(stdoutFile);
  nlohmann::json doc = nlohmann::json::parse(report, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object() && doc.contains("problems") && !doc["problems"].empty())
    m.planRow = doc["problems"][0];
  return m;
}

fs::path writeModel(const onnx::ModelProto &model, const fs::path &file) {
  std::ofstream out(file, std::ios::binary);
  model.SerializeToOstream(&out);
  return file;
}

Measurement timeCompile(const std::string &name, int nodes, const onnx::ModelProto &model,
                        const fs::path &dir) {
  fs::path file = writeModel(model, dir / (name + ".onnx"));
  return timeBundlefit(
      name, nodes,
      "-q compile '" + file.string() + "' --target host -o '" + (dir / name).string() + "'", dir);
}

/// `bundlefit -q plan`: import, passes, schedule and memory plan, no codegen.
Measurement timePlan(const std::string &name, int nodes, const onnx::ModelProto &model,
                     const fs::path &dir) {
  fs::path file = writeModel(model, dir / (name + ".onnx"));
  return timeBundlefit(name, nodes, "-q plan '" + file.string() + "'", dir);
}

/// `bundlefit plan-buffers --format csv` (default 5 s limit) on n network-like
/// buffers; the seed is the one bench_planner uses for that size's row.
Measurement timePlanBuffers(int buffers, uint32_t seed, const fs::path &dir) {
  namespace bp = bundlefit::planner;
  std::string name = "plan_buffers_" + std::to_string(buffers);
  fs::path file = dir / (name + ".csv");
  {
    bp::Problem problem = bp::formats::networkLikeProblem(buffers, seed);
    std::ofstream out(file);
    out << "id,lower,upper,size,alignment\n"; // MiniMalloc's columns + alignment.
    for (const bp::Buffer &b : problem.buffers)
      out << b.id << ',' << b.first << ',' << b.last + 1 << ',' << b.size << ',' << b.alignment
          << '\n';
  }
  return timeBundlefit(name, buffers, "plan-buffers '" + file.string() + "' --format csv --json",
                       dir);
}

} // namespace

int main(int argc, char **argv) {
  std::string outPath = std::string(BUNDLEFIT_SOURCE_DIR) + "/bench/results/scale.json";
  bool quick = false;
  std::string only;
  fs::path keepDir;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--quick")
      quick = true;
    else if (arg == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (arg == "--keep" && i + 1 < argc)
      keepDir = argv[++i];
    else
      outPath = arg;
  }
  fs::path dir = !keepDir.empty()
                     ? keepDir
                     : fs::temp_directory_path() / ("bench-scale-" + std::to_string(::getpid()));
  fs::create_directories(dir);

  std::vector<Measurement> results;
  std::vector<int> chains =
      quick ? std::vector<int>{2500, 5000} : std::vector<int>{2500, 5000, 20000};
  std::vector<int> concats = quick ? std::vector<int>{1000} : std::vector<int>{1000, 5000};
  std::vector<int> passChains =
      quick ? std::vector<int>{2000, 20000} : std::vector<int>{2000, 20000, 100000};
  // bench_planner's seeds: 42 + the row (1,000 / 10^4 / 10^5 / 10^6).
  std::vector<std::pair<int, uint32_t>> problems = {{10000, 43}, {100000, 44}};
  if (!quick)
    problems.push_back({1000000, 45});
  if (only.empty() || only == "compile") {
    for (int nodes : chains)
      results.push_back(
          timeCompile("relu_chain_" + std::to_string(nodes), nodes, reluChain(nodes), dir));
    for (int inputs : concats)
      results.push_back(
          timeCompile("concat_" + std::to_string(inputs), inputs, wideConcat(inputs), dir));
    for (int outputs : concats)
      results.push_back(
          timeCompile("split_" + std::to_string(outputs), outputs, wideSplit(outputs), dir));
  }
  if (only.empty() || only == "passes")
    for (int nodes : passChains)
      results.push_back(
          timePlan("pass_chain_" + std::to_string(nodes), nodes, passChain(nodes), dir));
  if (only.empty() || only == "plan-buffers")
    for (auto [buffers, seed] : problems)
      results.push_back(timePlanBuffers(buffers, seed, dir));
  if (keepDir.empty())
    fs::remove_all(dir);

  std::printf("%-18s %8s %10s %10s %9s %5s\n", "model", "nodes", "seconds", "cpu s", "-q lines",
              "exit");
  nlohmann::json rows = nlohmann::json::array();
  for (const Measurement &m : results) {
    std::printf("%-18s %8d %10.2f %10.2f %9zu %5d\n", m.model.c_str(), m.nodes, m.seconds,
                m.cpuSeconds, m.stdoutLines, m.exitCode);
    nlohmann::json row = {{"model", m.model},
                          {"nodes", m.nodes},
                          {"seconds", m.seconds},
                          {"cpu_seconds", m.cpuSeconds},
                          {"stdout_lines_with_q", m.stdoutLines},
                          {"exit_code", m.exitCode}};
    if (!m.planRow.is_null()) {
      for (const char *key : {"lower_bound", "arena", "proof", "limit_reached", "algorithm"})
        row[key] = m.planRow.value(key, nlohmann::json());
      row["planner_seconds"] = m.planRow.value("seconds", 0.0);
      std::printf("%18s arena %s, lower bound %s, %s%s\n", "", row["arena"].dump().c_str(),
                  row["lower_bound"].dump().c_str(), row["proof"].dump().c_str(),
                  m.planRow.value("limit_reached", false) ? ", time limit reached" : "");
    }
    rows.push_back(row);
  }
  double ratio = 0, cpuRatio = 0;
  if (!quick && only.empty() && results.size() >= 3 && results[0].seconds > 0 &&
      results[0].cpuSeconds > 0) {
    ratio = results[2].seconds / results[0].seconds;
    cpuRatio = results[2].cpuSeconds / results[0].cpuSeconds;
  }
  if (ratio > 0)
    std::printf("relu chain 20000 / 2500 nodes: %.2fx wall, %.2fx cpu (goal < 8x and < 20 s)\n",
                ratio, cpuRatio);
  nlohmann::json doc = {{"benchmark", "bench_scale"},
                        {"commit", commandOutput("git -C '" + std::string(BUNDLEFIT_SOURCE_DIR) +
                                                 "' rev-parse HEAD")},
                        {"parts", only.empty() ? "all" : only},
                        {"host", commandOutput("uname -srm")},
                        {"cpu_load_1min", commandOutput("cut -d' ' -f1 /proc/loadavg")},
                        {"results", rows},
                        {"chain_ratio_20000_over_2500", ratio},
                        {"chain_cpu_ratio_20000_over_2500", cpuRatio}};
  std::ofstream(outPath) << doc.dump(2) << "\n";
  std::printf("wrote %s\n", outPath.c_str());
  return 0;
}
