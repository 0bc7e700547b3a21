//===- main.cpp - The bundlefit command-line tool ---------------------------===//
//
// `bundlefit <command> ...`. Every failure prints one line on stderr and exits
// with a documented code (README, "Exit codes"; support/Error.h).
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "HelpFormatter.h"
#include "ReportSupport.h"
#include "bundlefit/driver/ToolInfo.h"
#include "bundlefit/driver/VariantBuild.h"
#include "bundlefit/reports/TextTable.h"

#include "bundlefit/support/Error.h"
#include "bundlefit/support/MemoryBudget.h"
#include "bundlefit/support/OutputFile.h"

#include <iostream>

#include "CodeIdentity.h" // generated: cmake/CodeIdentity.cmake

using namespace bundlefit;

int main(int argc, char **argv) {
  // The Python module names its code the same way: one code-size cache.
  driver::setCodeIdentity(BUNDLEFIT_CODE_IDENTITY);
  CLI::App app{"bundlefit: compile ONNX models into Glow-compatible bundles for "
               "microcontrollers, and plan their memory"};
  app.formatter(std::make_shared<HelpFormatter>()); // before the subcommands, which copy it
  app.require_subcommand(0, 1);
  // --version before or after the subcommand (fallthrough, below).
  app.set_version_flag("--version", "bundlefit " + bundlefitVersion());
  bool quiet = false, verbose = false, wide = false;
  std::string maxMemory;
  app.add_flag("-q,--quiet", quiet, "Print only results and errors");
  app.add_flag("-v,--verbose", verbose, "Print what each stage did, and every column (as --wide)");
  app.add_flag("--wide", wide,
               "Every column and whole lines; by default text reports fit 100 columns");
  app.add_option("--max-memory", maxMemory,
                 "Memory a command may use for tensors and files: BYTES or e.g. 512M, 4G "
                 "(default: half of the RAM, ulimit -v, ulimit -d or the cgroup's limit, "
                 "whichever is least)");
  // -q/-v also after the subcommand (`bundlefit fit m.onnx --device x -q`):
  // subcommands inherit this and hand options they do not know to the app.
  app.fallthrough();

  CommandAction action;
  addInspectCommand(app, action);
  addPlanCommand(app, action);
  addPlanBuffersCommand(app, action);
  addDevicesCommand(app, action);
  addFitCommand(app, action);
  addPickCommand(app, action);
  addCompileCommand(app, action);
  addRunCommand(app, action);
  addProfileCommand(app, action);
  addCompareQuantCommand(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::cerr << "bundlefit: error: " << e.what() << " (see bundlefit --help)\n";
    return int(ExitCode::Usage);
  }
  setVerbosity(quiet ? Verbosity::Quiet : verbose ? Verbosity::Verbose : Verbosity::Normal);
  if (wide || verbose)
    setTextWidth(0);

  try {
    if (!maxMemory.empty())
      setMemoryBudget(parseMemorySize(maxMemory, "--max-memory"));
    if (!action) {
      std::cerr << "bundlefit: error: a command is required (see bundlefit --help)\n";
      return int(ExitCode::Usage);
    }
    setStatusNotesSuppressed(jsonReplacesText()); // JSON alone: nothing else on the terminal
    // Every output of the command is staged and put in place only once all
    // were written: a failed --json must not leave a new bundle behind.
    OutputSet outputs(/*holdStandardOutput=*/true);
    int code = action();
    outputs.commit();
    flushStandardOutput(); // `bundlefit plan m.onnx > /dev/full` must not exit 0
    printMemoryOptNote();  // after the results, and never beside an error
    return code;
  } catch (const Error &e) {
    std::cerr << "bundlefit: error: " << e.what() << "\n";
    return int(e.code());
  } catch (const std::bad_alloc &) {
    // What the budget's checks did not foresee: still one line, never an
    // "internal error" or a crash.
    std::cerr << "bundlefit: error: out of memory (the memory budget is " << memoryBudget()
              << " bytes, --max-memory; ulimit -v may be lower)\n";
    return int(ExitCode::Unsupported);
  } catch (const std::exception &e) {
    std::cerr << "bundlefit: internal error: " << e.what() << "\n";
    return int(ExitCode::Internal);
  }
}
