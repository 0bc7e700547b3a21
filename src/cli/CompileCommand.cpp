//===- CompileCommand.cpp - bundlefit compile MODEL -o DIR -----------------===//
#include "BundleCompilation.h"

#include "bundlefit/reports/TextTable.h"

#include <iostream>

namespace bundlefit {

namespace {

int runCompile(const CompileRequest &request) {
  CompiledBundle bundle = compileBundle(request);
  const MemoryPlan &plan = bundle.plan;
  const std::string &net = bundle.networkName;
  TextTable table({"file / region", "bytes"}, {false, true});
  table.addRow({net + ".o  .text", withThousands(bundle.code.textBytes)});
  table.addRow({net + ".o  .rodata", withThousands(bundle.code.rodataBytes)});
  table.addRow({"CONSTANT_MEM_SIZE (" + net + ".weights.bin)", withThousands(plan.constantSize)});
  table.addRow({"MUTABLE_MEM_SIZE", withThousands(plan.mutableSize)});
  table.addRow({"ACTIVATIONS_MEM_SIZE (lower bound " + withThousands(plan.activationsLowerBound) +
                    ")",
                withThousands(plan.activationsSize)});
  std::cout << "bundle " << net << " for " << describeTarget(bundle.target) << " written to "
            << request.outputDir << "\n\n"
            << table.render();
  return 0;
}

} // namespace

void addCompileCommand(CLI::App &app, CommandAction &action) {
  auto request = std::make_shared<CompileRequest>();
  CLI::App *command = app.add_subcommand(
      "compile", "Compile a model into a Glow-compatible bundle (.o, .h, .weights.bin/.txt, "
                 ".memory.json)");
  addModelOptions(*command, request->model);
  command->add_option("-o,--output-dir", request->outputDir, "Bundle directory")->required();
  addCompileOptions(*command, *request);
  command->callback([request, &action] { action = [request] { return runCompile(*request); }; });
}

} // namespace bundlefit
