//===- CompileCommand.cpp - bundlefit compile MODEL -o DIR -----------------===//
#include "BundleCompilation.h"
#include "PlacementOptions.h"
#include "Progress.h"
#include "ReportSupport.h"

#include "bundlefit/reports/TextTable.h"

#include <iostream>

namespace bundlefit {

namespace {

/// Report options of `compile` only (CompileRequest is shared with `run`).
struct CompileReportOptions {
  JsonReportOption json;
  HtmlReportOption html;
  PlacementCliOptions placement;
};

int runCompile(const CompileRequest &given, const CompileReportOptions &reports) {
  reports.html.checkFileWritable(); // before the bundle is written: all or nothing
  reports.json.checkFileWritable();
  CompileRequest request = given;
  request.placement = partPlacementOf(reports.placement);
  CompiledBundle bundle = compileBundle(request);
  const MemoryPlan &plan = bundle.plan;
  const std::string &net = bundle.networkName;
  if (reports.html.wanted()) {
    HtmlReport html;
    html.title = net + ": bundle for " + describeTarget(bundle.target);
    html.summary = {request.model.path + " -> " + request.outputDir + ": .text " +
                    withThousands(bundle.code.textBytes) + ", CONSTANT " +
                    withThousands(plan.constantSize) + ", MUTABLE " +
                    withThousands(plan.mutableSize) + ", ACTIVATIONS " +
                    withThousands(plan.activationsSize)};
    html.plan = &plan;
    reports.html.write(html);
  }
  if (reports.json.wanted()) {
    // Exactly what the bundle's <net>.memory.json holds (sizes, code size, target).
    reports.json.emit(bundleMemoryReport(request, bundle), request.model.path);
    if (reports.json.replacesText())
      return 0;
  }
  printText("bundle " + net + " for " + describeTarget(bundle.target) + " written to " +
            request.outputDir + "\n");
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
  auto request = std::make_shared<CompileRequest>();
  CLI::App *command = app.add_subcommand(
      "compile", "Compile a model into a Glow-compatible bundle (.o, .h, .weights.bin/.txt, "
                 ".memory.json)");
  addModelOptions(*command, request->model);
  command->add_option("-o,--output-dir", request->outputDir, "Bundle directory")->required();
  addCompileOptions(*command, *request);
  addQuantOptions(*command, request->quant);
  auto reports = std::make_shared<CompileReportOptions>();
  addPlacementOptions(*command, reports->placement);
  reports->json.addTo(*command, "the bundle's <net>.memory.json, bundlefit.memory/1");
  reports->html.addTo(*command, "memory timeline, layers");
  command->callback([request, reports, &action] {
    action = [request, reports] {
      markPreQuantized(request->model.path, request->quant);
      return runCompile(*request, *reports);
    };
  });
}

} // namespace bundlefit
