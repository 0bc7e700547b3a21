//===- Runner.cpp - runBundle: build the driver/firmware, run, read outputs -===//
#include "Harness.h"

#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace bundlefit {

namespace {

using namespace harness;

std::vector<uint8_t> readBytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ExitCode::BadInputFile, "cannot read '" + path.string() + "'");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeBytes(const fs::path &path, const void *data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out && size)
    out.write(static_cast<const char *>(data), std::streamsize(size));
  out.close();
  if (!out)
    throw Error(ExitCode::CannotWrite, "cannot write '" + path.string() + "'");
}

void writeText(const fs::path &path, const std::string &text) {
  writeBytes(path, text.data(), text.size());
}

std::string joinCommand(const std::vector<std::string> &argv) {
  std::string s;
  for (const std::string &a : argv)
    s += (s.empty() ? "" : " ") + a;
  return s;
}

/// Runs a build step; a failure is a ToolMissing error with its output.
ProcessResult build(const std::vector<std::string> &argv, const fs::path &dir,
                    const std::string &logName, double timeout, const std::string &what) {
  ProcessResult r = runProcess(argv, dir.string(), timeout, (dir / logName).string());
  if (!r.ok()) {
    std::string why = r.timedOut      ? "timed out"
                      : r.startFailed ? "could not be started"
                      : r.termSignal  ? "was killed by signal " + std::to_string(r.termSignal)
                                      : "failed (exit status " + std::to_string(r.exitCode) + ")";
    throw Error(ExitCode::ToolMissing,
                what + " " + why + ": " + joinCommand(argv) + "\n" + lastLines(r.output, 20));
  }
  return r;
}

void checkSpec(const BundleRunSpec &spec, const std::map<std::string, Tensor> &inputs,
               std::vector<IoSlot> &slots) {
  if (spec.networkName.empty())
    throw Error(ExitCode::Usage, "runBundle: empty network name");
  for (char ch : spec.networkName)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'))
      throw Error(ExitCode::Usage,
                  "runBundle: network name '" + spec.networkName + "' is not a C identifier");
  if (spec.target != "host" && !findCortexMBoard(spec.target)) {
    std::string known;
    for (const std::string &t : supportedRunTargets())
      known += (known.empty() ? "" : ", ") + t;
    throw Error(ExitCode::Usage,
                "cannot run bundles for target '" + spec.target + "' (supported: " + known + ")");
  }
  if (spec.batch == 0)
    throw Error(ExitCode::Usage, "runBundle: batch must be at least 1");
  std::set<std::string> names;
  int nin = 0, nout = 0;
  for (const PlaceholderSpec &p : spec.placeholders) {
    if (!names.insert(p.name).second)
      throw Error(ExitCode::Usage, "placeholder '" + p.name + "' is listed twice");
    uint64_t bytes = p.type.bytes();
    if (p.offset + bytes > spec.mutableSize)
      fatalInternal("placeholder '" + p.name + "' [" + std::to_string(p.offset) + ", +" +
                    std::to_string(bytes) + ") lies outside mutableWeight (" +
                    std::to_string(spec.mutableSize) + " bytes)");
    IoSlot s;
    s.name = p.name;
    s.offset = p.offset;
    s.bytes = bytes;
    s.isInput = p.isInput;
    s.index = p.isInput ? nin++ : nout++;
    slots.push_back(s);
    if (!p.isInput)
      continue;
    auto it = inputs.find(p.name);
    if (it == inputs.end())
      throw Error(ExitCode::Usage,
                  "no value given for input '" + p.name + "' (" + p.type.str() + ")");
    const Tensor &t = it->second;
    if (t.type.dtype != p.type.dtype || t.bytes.size() != bytes * spec.batch)
      throw Error(ExitCode::BadInputFile,
                  "input '" + p.name + "' is " + t.type.str() + " (" +
                      std::to_string(t.bytes.size()) + " bytes), the bundle expects " +
                      (spec.batch == 1 ? "" : std::to_string(spec.batch) + " samples of ") +
                      p.type.str());
  }
  for (const auto &[name, tensor] : inputs) {
    bool known = false;
    for (const PlaceholderSpec &p : spec.placeholders)
      known |= p.isInput && p.name == name;
    if (!known)
      throw Error(ExitCode::Usage,
                  "'" + name + "' is not an input of bundle '" + spec.networkName + "'");
  }
}

/// Copies the object and weights into the run directory and writes inputs.
void stageFiles(const BundleRunSpec &spec, const std::map<std::string, Tensor> &inputs,
                const std::vector<IoSlot> &slots, const fs::path &dir) {
  fs::path bundle(spec.bundleDir);
  fs::path object = bundle / (spec.networkName + ".o");
  fs::path weights = bundle / (spec.networkName + ".weights.bin");
  std::error_code ec;
  if (!fs::is_regular_file(object, ec))
    throw Error(ExitCode::BadInputFile, "bundle object '" + object.string() + "' not found");
  if (spec.constantSize > 0 || fs::exists(weights, ec)) {
    if (!fs::is_regular_file(weights, ec))
      throw Error(ExitCode::BadInputFile, "bundle weights '" + weights.string() + "' not found");
    uint64_t size = fs::file_size(weights, ec);
    if (ec || size != spec.constantSize)
      throw Error(ExitCode::BadInputFile, "'" + weights.string() + "' holds " +
                                              std::to_string(size) +
                                              " bytes; the bundle's constantWeight region is " +
                                              std::to_string(spec.constantSize) + " bytes");
    fs::copy_file(weights, dir / "weights.bin", fs::copy_options::overwrite_existing, ec);
    if (ec)
      throw Error(ExitCode::CannotWrite, "cannot copy '" + weights.string() + "' to '" +
                                             dir.string() + "': " + ec.message());
  } else {
    writeBytes(dir / "weights.bin", nullptr, 0);
  }
  fs::copy_file(object, dir / "bundle.o", fs::copy_options::overwrite_existing, ec);
  if (ec)
    throw Error(ExitCode::CannotWrite,
                "cannot copy '" + object.string() + "' to '" + dir.string() + "': " + ec.message());
  for (const IoSlot &s : slots) {
    if (s.isInput) {
      const Tensor &t = inputs.at(s.name);
      writeBytes(dir / ("in" + std::to_string(s.index) + ".bin"), t.bytes.data(), t.bytes.size());
    } else {
      fs::remove(dir / ("out" + std::to_string(s.index) + ".bin"), ec);
    }
  }
}

/// `type` holding `batch` samples: the leading dimension times `batch`.
TensorType batchedType(TensorType type, uint64_t batch) {
  if (batch == 1)
    return type;
  if (type.shape.empty())
    type.shape = {int64_t(batch)};
  else
    type.shape[0] *= int64_t(batch);
  return type;
}

std::map<std::string, Tensor> readOutputs(const BundleRunSpec &spec,
                                          const std::vector<IoSlot> &slots, const fs::path &dir,
                                          const std::string &programOutput) {
  std::map<std::string, Tensor> outputs;
  for (const IoSlot &s : slots) {
    if (s.isInput)
      continue;
    fs::path file = dir / ("out" + std::to_string(s.index) + ".bin");
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
      throw Error(ExitCode::ToolMissing, "the " + spec.target + " run of bundle '" +
                                             spec.networkName + "' wrote no '" + file.string() +
                                             "':\n" + lastLines(programOutput, 20));
    std::vector<uint8_t> bytes = readBytes(file);
    if (bytes.size() != s.bytes * spec.batch)
      throw Error(ExitCode::ToolMissing, "'" + file.string() + "' holds " +
                                             std::to_string(bytes.size()) + " bytes, expected " +
                                             std::to_string(s.bytes * spec.batch));
    for (const PlaceholderSpec &p : spec.placeholders)
      if (p.name == s.name)
        outputs[s.name] = Tensor(batchedType(p.type, spec.batch), std::move(bytes));
  }
  return outputs;
}

/// Turns a non-zero exit, crash or timeout of the program into an Error.
void checkRun(const ProcessResult &r, const BundleRunSpec &spec, const std::string &what) {
  if (r.ok())
    return;
  std::string tail = lastLines(r.output, 20);
  std::string head = "bundle '" + spec.networkName + "' on " + what;
  if (r.timedOut)
    throw Error(ExitCode::ToolMissing, head + " timed out after " +
                                           std::to_string(int(spec.timeoutSeconds + 0.5)) +
                                           " s; last output:\n" + tail);
  if (r.startFailed)
    throw Error(ExitCode::ToolMissing, head + " could not be started:\n" + tail);
  if (r.termSignal)
    throw Error(ExitCode::ToolMissing, head + " crashed (signal " + std::to_string(r.termSignal) +
                                           "); last output:\n" + tail);
  if (r.exitCode == StatusEntryFailed)
    throw Error(ExitCode::Internal, head + ": the entry point returned non-zero:\n" + tail);
  if (r.exitCode == StatusFault)
    throw Error(ExitCode::ToolMissing, head + " crashed (fault); last output:\n" + tail);
  throw Error(ExitCode::ToolMissing, head + " failed (exit status " + std::to_string(r.exitCode) +
                                         "); last output:\n" + tail);
}

using Clock = std::chrono::steady_clock;
/// Compiling and linking a driver takes about a second; this only guards
/// against a wedged toolchain (spec.timeoutSeconds is for the program).
constexpr double kBuildTimeoutSeconds = 600;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::map<std::string, Tensor> runHost(const BundleRunSpec &spec, const std::vector<IoSlot> &slots,
                                      const fs::path &dir, BundleRunStats &stats) {
  std::string cc = requireHostCC(spec.tools);
  writeText(dir / "driver.c", hostDriverSource(spec, slots));
  auto t0 = Clock::now();
  // -no-pie: codegen's default (static relocation model) host objects are not PIC.
  std::vector<std::string> argv = {cc,   "-std=c11", "-O1",      "-g",      "-no-pie",
                                   "-o", "driver",   "driver.c", "bundle.o"};
  argv.insert(argv.end(), spec.linkInputs.begin(), spec.linkInputs.end());
  argv.push_back("-lm");
  build(argv, dir, "build.log", kBuildTimeoutSeconds, "linking the host driver with '" + cc + "'");
  stats.buildSeconds = since(t0);
  ProcessResult r = runProcess({(dir / "driver").string()}, dir.string(), spec.timeoutSeconds,
                               (dir / "run.log").string());
  stats.runSeconds = r.seconds;
  stats.output = r.output;
  checkRun(r, spec, "the host");
  return readOutputs(spec, slots, dir, r.output);
}

/// Where the weights and buffers go on the board: the weights in the code
/// SSRAM (as they would sit in Flash), the writable regions in the data SSRAM,
/// spilling to the 16 MiB PSRAM when they do not fit.
FirmwareLayout boardLayout(const BundleRunSpec &spec, const std::vector<IoSlot> &slots,
                           const fs::path &dir, const CortexMBoard &board) {
  FirmwareLayout layout;
  layout.board = &board;
  std::error_code ec;
  uint64_t objectBytes = fs::file_size(dir / "bundle.o", ec);
  uint64_t codeReserve = objectBytes + 256 * 1024; // code + libc/libm + vectors
  uint64_t dataBytes = alignUp(spec.constantSize, 64) + 64;
  for (const IoSlot &s : slots)
    if (s.isInput)
      dataBytes += alignUp(s.bytes * spec.batch, 64) + 64;
  uint64_t regionBytes = alignUp(spec.mutableSize, 64) + alignUp(spec.activationsSize, 64) + 128;
  uint64_t ramReserve = layout.stackBytes + layout.heapBytes + 64 * 1024;
  layout.weightsInExtra = codeReserve + dataBytes > board.code.size;
  layout.regionsInExtra = regionBytes + ramReserve > board.ram.size;
  uint64_t extraBytes =
      (layout.weightsInExtra ? dataBytes : 0) + (layout.regionsInExtra ? regionBytes : 0);
  if (extraBytes > board.extra.size)
    throw Error(ExitCode::DoesNotFit,
                "bundle '" + spec.networkName + "' does not fit QEMU " + board.machine +
                    ": constantWeight " + std::to_string(spec.constantSize) + " B, mutable " +
                    std::to_string(spec.mutableSize) + " B, activations " +
                    std::to_string(spec.activationsSize) + " B (code memory " +
                    std::to_string(board.code.size) + " B, RAM " + std::to_string(board.ram.size) +
                    " B, PSRAM " + std::to_string(board.extra.size) + " B)");
  return layout;
}

std::map<std::string, Tensor> runCortexM(const BundleRunSpec &spec,
                                         const std::vector<IoSlot> &slots, const fs::path &dir,
                                         BundleRunStats &stats) {
  const CortexMBoard &board = *findCortexMBoard(spec.target);
  std::string gcc = requireArmGcc(spec.tools);
  requireNewlib(gcc, board, dir.string());
  std::string qemu = requireQemuArm(spec.tools);

  if (spec.partImage) {
    stats.layout = board.machine + ": the part's memory map (" + spec.target + ")";
    writeText(dir / "fw.c", firmwareSource(spec, slots, FirmwareLayout{&board}));
    writeText(dir / "fw.ld", spec.partImage->linkerScript);
  } else {
    FirmwareLayout layout = boardLayout(spec, slots, dir, board);
    stats.layout = layout.describe(spec);
    writeText(dir / "fw.c", firmwareSource(spec, slots, layout));
    writeText(dir / "fw.ld", linkerScript(layout));
  }
  std::vector<std::string> argv = {gcc};
  argv.insert(argv.end(), board.cflags.begin(), board.cflags.end());
  for (const char *a : {"-std=gnu11", "-O1", "-g", "-ffunction-sections", "-fdata-sections"})
    argv.push_back(a);
  if (spec.partImage)
    for (const std::string &include : spec.partImage->includeDirs)
      argv.insert(argv.end(), {"-I" + include, "-L" + include});
  auto t0 = Clock::now();
  std::string harness = "fw.c";
  if (spec.partImage) { // its own object: the part image's script places it by name
    std::vector<std::string> compile = argv;
    compile.insert(compile.end(), {"-c", "fw.c", "-o", "fw.o"});
    build(compile, dir, "compile.log", kBuildTimeoutSeconds,
          "compiling the " + spec.target + " firmware with '" + gcc + "'");
    harness = "fw.o";
  }
  for (const char *a :
       {"-nostartfiles", "--specs=nosys.specs", "-T", "fw.ld", "-Wl,--gc-sections",
        "-Wl,-Map=fw.map", "-Wl,--no-warn-rwx-segments", "-Wl,-z,noexecstack", "-o", "fw.elf"})
    argv.push_back(a);
  argv.insert(argv.end(), {harness, "bundle.o"});
  if (spec.partImage)
    argv.insert(argv.end(), spec.partImage->sources.begin(), spec.partImage->sources.end());
  argv.insert(argv.end(), spec.linkInputs.begin(), spec.linkInputs.end());
  argv.push_back("-lm");
  build(argv, dir, "build.log", kBuildTimeoutSeconds,
        "building the " + spec.target + " firmware with '" + gcc + "'");
  stats.buildSeconds = since(t0);

  std::vector<std::string> run = {qemu,
                                  "-machine",
                                  board.machine,
                                  "-cpu",
                                  board.cpu,
                                  "-nographic",
                                  "-monitor",
                                  "none",
                                  "-serial",
                                  "null",
                                  "-semihosting-config",
                                  "enable=on,target=native",
                                  "-kernel",
                                  "fw.elf"};
  writeText(dir / "run.sh",
            "#!/bin/sh\n# How bundlefit ran this firmware (from this directory).\n" +
                joinCommand(run) + "\n");
  ProcessResult r = runProcess(run, dir.string(), spec.timeoutSeconds, (dir / "run.log").string());
  stats.runSeconds = r.seconds;
  stats.output = r.output;
  checkRun(r, spec, "QEMU " + board.machine + " (" + board.cpu + ")");
  return readOutputs(spec, slots, dir, r.output);
}

} // namespace

std::map<std::string, Tensor> runBundle(const BundleRunSpec &spec,
                                        const std::map<std::string, Tensor> &inputs,
                                        const std::string &workDir, BundleRunStats *statsOut) {
  std::vector<IoSlot> slots;
  checkSpec(spec, inputs, slots);
  fs::path dir = fs::path(workDir.empty() ? "." : workDir) / (spec.networkName + "." + spec.target);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw Error(ExitCode::CannotWrite,
                "cannot create run directory '" + dir.string() + "': " + ec.message());
  dir = fs::absolute(dir);
  stageFiles(spec, inputs, slots, dir);
  BundleRunStats stats;
  stats.runDir = dir.string();
  std::map<std::string, Tensor> outputs = spec.target == "host"
                                              ? runHost(spec, slots, dir, stats)
                                              : runCortexM(spec, slots, dir, stats);
  if (statsOut)
    *statsOut = stats;
  return outputs;
}

} // namespace bundlefit
