//===- bench/scale/main.cpp - Compile time against model size --------------===//
//
// Issue 16 asks for compile time linear in nodes: a 20,000-node Relu chain
// under 8x the 2,500-node time and under 20 s, one Concat of 5,000 inputs
// under 5 s, and `-q` printing no tables. This builds those models, times
// `bundlefit -q compile --target host` on each, prints a table and writes
// bench/results/scale.json with the git commit it measured.
//
// Usage: bench_scale [OUT.json] [--quick] [--keep DIR]
//   --quick: the smaller sizes only; --keep DIR: write the models and bundles
//   into DIR and keep them (to profile one compile by hand).
//
//===----------------------------------------------------------------------===//
#include <onnx/onnx_pb.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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

/// x[1,16] -> Relu -> ... -> Relu (nodes of them) -> y.
onnx::ModelProto reluChain(int nodes) {
  onnx::ModelProto model = emptyModel();
  onnx::GraphProto &graph = *model.mutable_graph();
  addInput(graph, "x", 16);
  std::string last = "x";
  for (int i = 0; i < nodes; ++i) {
    onnx::NodeProto *node = graph.add_node();
    node->set_op_type("Relu");
    node->set_name("relu" + std::to_string(i));
    node->add_input(last);
    last = i + 1 == nodes ? "y" : "t" + std::to_string(i);
    node->add_output(last);
  }
  graph.add_output()->set_name("y");
  return model;
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
};

Measurement timeCompile(const std::string &name, int nodes, const onnx::ModelProto &model,
                        const fs::path &dir) {
  fs::path file = dir / (name + ".onnx");
  {
    std::ofstream out(file, std::ios::binary);
    model.SerializeToOstream(&out);
  }
  fs::path stdoutFile = dir / (name + ".stdout");
  std::string command = std::string(BUNDLEFIT_EXE) + " -q compile '" + file.string() +
                        "' --target host -o '" + (dir / name).string() + "' >'" +
                        stdoutFile.string() + "' 2>&1";
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
  return m;
}

} // namespace

int main(int argc, char **argv) {
  std::string outPath = std::string(BUNDLEFIT_SOURCE_DIR) + "/bench/results/scale.json";
  bool quick = false;
  fs::path keepDir;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--quick")
      quick = true;
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
  std::vector<int> chains = quick ? std::vector<int>{2500, 5000} : std::vector<int>{2500, 5000, 20000};
  std::vector<int> concats = quick ? std::vector<int>{1000} : std::vector<int>{1000, 5000};
  for (int nodes : chains)
    results.push_back(timeCompile("relu_chain_" + std::to_string(nodes), nodes, reluChain(nodes), dir));
  for (int inputs : concats)
    results.push_back(timeCompile("concat_" + std::to_string(inputs), inputs, wideConcat(inputs), dir));
  if (keepDir.empty())
    fs::remove_all(dir);

  std::printf("%-18s %8s %10s %10s %9s %5s\n", "model", "nodes", "seconds", "cpu s", "-q lines",
              "exit");
  nlohmann::json rows = nlohmann::json::array();
  for (const Measurement &m : results) {
    std::printf("%-18s %8d %10.2f %10.2f %9zu %5d\n", m.model.c_str(), m.nodes, m.seconds,
                m.cpuSeconds, m.stdoutLines, m.exitCode);
    rows.push_back({{"model", m.model}, {"nodes", m.nodes}, {"seconds", m.seconds},
                    {"cpu_seconds", m.cpuSeconds},
                    {"stdout_lines_with_q", m.stdoutLines}, {"exit_code", m.exitCode}});
  }
  double ratio = 0, cpuRatio = 0;
  if (!quick && results.size() >= 3 && results[0].seconds > 0 && results[0].cpuSeconds > 0) {
    ratio = results[2].seconds / results[0].seconds;
    cpuRatio = results[2].cpuSeconds / results[0].cpuSeconds;
  }
  if (ratio > 0)
    std::printf("relu chain 20000 / 2500 nodes: %.2fx wall, %.2fx cpu (goal < 8x and < 20 s)\n",
                ratio, cpuRatio);
  nlohmann::json doc = {
      {"benchmark", "bench_scale"},
      {"commit", commandOutput("git -C '" + std::string(BUNDLEFIT_SOURCE_DIR) + "' rev-parse HEAD")},
      {"host", commandOutput("uname -srm")},
      {"cpu_load_1min", commandOutput("cut -d' ' -f1 /proc/loadavg")},
      {"results", rows},
      {"chain_ratio_20000_over_2500", ratio},
      {"chain_cpu_ratio_20000_over_2500", cpuRatio}};
  std::ofstream(outPath) << doc.dump(2) << "\n";
  std::printf("wrote %s\n", outPath.c_str());
  return 0;
}
