//===- CompileCommand.cpp - bundlefit compile MODEL -o DIR -----------------===//
#include "BundleCompilation.h"
#include "PlacementOptions.h"
#include "Progress.h"
#include "ReportSupport.h"

#include "bundlefit/reports/TextTable.h"

#include <iostream>

namespace bundlefit {

namespace {

/// What `compile` adds to the compilation: where the bundle goes, reports.
struct CompileCommandOptions {
  driver::CompilationOptions compilation;
  std::string outputDir;
  JsonReportOption json;
  HtmlReportOption html;
  PlacementCliOptions placement;
};

int runCompile(const CompileCommandOptions &given) {
  given.html.checkFileWritable(); // before the bundle is written: all or nothing
  given.json.checkFileWritable();
  driver::CompilationOptions options = given.compilation;
  options.placement = partPlacementOf(given.placement);
  driver::Compilation compilation(std::move(options));
  const CompiledBundle &bundle = compilation.writeBundle(given.outputDir);
  const std::string &modelPath = compilation.options().model.path;
  const MemoryPlan &plan = bundle.plan;
  const std::string &net = bundle.networkName;
  if (given.html.wanted()) {
    HtmlReport html;
    html.title = net + ": bundle for " + describeTarget(bundle.target);
    html.summary = {
        modelPath + " -> " + given.outputDir + ": .text " + withThousands(bundle.code.textBytes) +
        ", CONSTANT " + withThousands(plan.constantSize) + ", MUTABLE " +
        withThousands(plan.mutableSize) + ", ACTIVATIONS " + withThousands(plan.activationsSize)};
    html.plan = &plan;
    given.html.write(html);
  }
  if (given.json.wanted()) {
    // Exactly what the bundle's <net>.memory.json holds (sizes, code size, target).
    given.json.emit(compilation.memoryReport(), modelPath);
    if (given.json.replacesText())
      return 0;
  }
  printText("bundle " + net + " for " + describeTarget(bundle.target) + " written to " +
            given.outputDir + "\n");
  if (!plan.weightSegments.empty())
    printText("weights placed for " + plan.weightPlacementSource + ": " +
              driver::describeWeightSegments(plan) + "; entry " + net +
              (plan.weightSegments.size() > 1 ? "_placed" : "") + ", " + net + "_run(), " + net +
              "_weights.c, " + net + "_weights.ld\n");
  if (verbosity() == Verbosity::Quiet) // -q: the result line, no tables (20,000-row models)
    return 0;
  TextTable table({"file / region", "bytes"}, {false, true});
  table.addRow({net + ".o  .text", withThousands(bundle.code.textBytes)});
  table.addRow({net + ".o  .rodata", withThousands(bundle.code.rodataBytes)});
  table.addRow({"CONSTANT_MEM_SIZE (" + net + ".weights.bin)", withThousands(plan.constantSize)});
  for (const WeightSegment &segment : plan.weightSegments)
    table.addRow({"  " + segment.region + " (" + net + ".weights." +
                      regionIdentifier(segment.region) + ".bin" +
                      (segment.copiedToRam ? ", copied at start-up" : ", read in place") + ")",
                  withThousands(segment.size)});
  table.addRow({"MUTABLE_MEM_SIZE", withThousands(plan.mutableSize)});
  table.addRow(
      {"ACTIVATIONS_MEM_SIZE (lower bound " + withThousands(plan.activationsLowerBound) + ")",
       withThousands(plan.activationsSize)});
  std::cout << "\n" << table.render() << "\n" << renderLayerTable(plan, nullptr);
  return 0;
}

} // namespace

void addCompileCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<CompileCommandOptions>();
  CLI::App *command = app.add_subcommand(
      "compile", "Compile a model into a Glow-compatible bundle (.o, .h, .weights.bin/.txt, "
                 ".memory.json)");
  addModelOptions(*command, options->compilation.model);
  command->add_option("-o,--output-dir", options->outputDir, "Bundle directory")->required();
  addCompileOptions(*command, options->compilation);
  addQuantOptions(*command, options->compilation.quant);
  addPlacementOptions(*command, options->placement);
  options->json.addTo(*command, "the bundle's <net>.memory.json, bundlefit.memory/1");
  options->html.addTo(*command, "memory timeline, layers");
  command->callback([options, &action] { action = [options] { return runCompile(*options); }; });
}

} // namespace bundlefit
