//===- VariantBuild.cpp - Size the bundle a variant would build on a part --===//
#include "bundlefit/driver/VariantBuild.h"

#include "bundlefit/bundle/LinkVerify.h"
#include "bundlefit/device/LibraryCode.h"
#include "bundlefit/driver/CompileBundle.h"
#include "bundlefit/driver/PartLink.h"
#include "bundlefit/driver/Progress.h"
#include "bundlefit/driver/VariantFootprint.h"
#include "bundlefit/quant/CmsisLayout.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"
#include "bundlefit/support/TemporaryDirectory.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace bundlefit::driver {

namespace fs = std::filesystem;
using namespace bundlefit::device;

namespace {

/// FNV-1a, 64 bits: stable across runs and builds (std::hash is not promised to be).
uint64_t fnv1a(const std::string &bytes, uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", (unsigned long long)value);
  return text;
}

/// setCodeIdentity's value; empty: the running binary's.
std::string &givenCodeIdentity() {
  static std::string identity;
  return identity;
}

/// The file this code was loaded from: the bundlefit executable, or the
/// Python module (whose process is python3, so not /proc/self/exe).
fs::path driverBinary() {
  Dl_info info;
  if (::dladdr(reinterpret_cast<void *>(&variantBuildable), &info) && info.dli_fname &&
      std::string(info.dli_fname).find(".so") != std::string::npos)
    return info.dli_fname;
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec);
}

/// The code that sizes builds: the build-time hash given by the tool and the
/// Python module, else the size and modification time of the binary this
/// code runs in. Code sizes cached by another build of the compiler are not
/// this one's (sharing node functions took 10 KB off DS-CNN's Cortex-M7
/// .text, for one).
const std::string &codeIdentity() {
  static const std::string identity = [] {
    if (!givenCodeIdentity().empty())
      return givenCodeIdentity();
    std::error_code ec;
    const fs::path binary = driverBinary();
    const auto size = fs::file_size(binary, ec);
    const auto mtime = fs::last_write_time(binary, ec);
    if (ec)
      return std::string("unknown-build");
    return std::to_string(size) + "@" + std::to_string(mtime.time_since_epoch().count());
  }();
  return identity;
}

/// The model file's bytes and the identity of the code sizing it.
std::string modelHash(const ModelOptions &model) {
  return hex(fnv1a(codeIdentity(), fnv1a(readInputFile(model.path, "model"))));
}

std::string joinedOptions(const BuildOptions &o, const Variant &variant,
                          const std::string &target) {
  std::string text = codeIdentity() + "|" + variant.name + "|" + target + "|" + o.optLevel + "|" +
                     std::to_string(o.model.memoryOpt) + "|" +
                     std::to_string(o.model.patchRecomputeBudget) + "|" +
                     (o.model.fuseActivations ? "fuse" : "nofuse") +
                     (o.model.keepModelOrder ? "|model-order" : "");
  for (const std::string &s : o.model.defineSymbols)
    text += "|d:" + s;
  for (const std::string &s : o.model.modelInputs)
    text += "|i:" + s;
  if (variant.precision == Precision::Int8) {
    text += o.model.keepInt8Io ? "|int8-io" : "";
    text += "|q:" + o.quant.schema + "," + o.quant.biasPrecision + "," +
            (o.quant.channelwise ? "cw" : "") + ",";
    for (const std::string &k : o.quant.keepOriginal)
      text += k + ",";
    if (!o.quant.profilePath.empty())
      text += "p:" + hex(fnv1a(readInputFile(o.quant.profilePath, "profile")));
  }
  return text;
}

/// What decides a weights placement besides the part: the fit request.
std::string placementKey(const Device &device, const FitRequest &r) {
  std::string key = "|place:" + device.id + "," + weightsPolicyName(r.weights) + "," +
                    r.reserveRam.origin + r.reserveRam.str() + "," + r.reserveFlash.origin +
                    r.reserveFlash.str() + "," + (r.appRam ? std::to_string(*r.appRam) : "-") +
                    "," + (r.appFlash ? std::to_string(*r.appFlash) : "-") + "," +
                    std::to_string(r.extraStaticBytes);
  for (const auto &[name, region] : r.givenRegions)
    key += "," + name + "=" + region;
  return key;
}

/// Which segment each weight falls in (placed builds): builds alike in this
/// have the same code, whatever the part's region names.
std::string segmentSignature(const MemoryPlan &plan) {
  if (plan.weightSegments.size() < 2)
    return "";
  std::string text = "|segments:";
  for (const Value *constant : plan.constants)
    text += std::to_string(plan.segmentAt(plan.placementOf(constant).offset)) + ",";
  return text;
}

std::string cacheDirectory() {
  if (const char *dir = std::getenv("BUNDLEFIT_CACHE_DIR"); dir && *dir)
    return std::string(dir) == "off" ? "" : std::string(dir);
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/bundlefit";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/bundlefit";
  return "";
}

/// The Arm cross compiler the runtime figure was linked with (path, size and
/// modification time), "none" without one: an entry measured with another
/// toolchain, or without one, is not this run's figure.
std::string toolchainIdentity() {
  std::string gcc;
  try {
    gcc = requireArmGcc();
  } catch (const Error &) {
    return "none";
  }
  std::error_code ec;
  const fs::path resolved = fs::canonical(gcc, ec);
  const auto size = fs::file_size(resolved, ec);
  const auto mtime = fs::last_write_time(resolved, ec);
  if (ec)
    return "unknown";
  return resolved.string() + "@" + std::to_string(size) + "@" +
         std::to_string(mtime.time_since_epoch().count());
}

/// The first line of the entry at `path`: what it was measured for, the
/// model and options hashes of its name and the toolchain. An entry whose
/// line differs (copied from another model or build, another toolchain) is
/// not used.
std::string cacheEntryKey(const std::string &path) {
  static const std::string toolchain = toolchainIdentity();
  return "bundlefit-code-size/2 " + fs::path(path).stem().string() + " toolchain " + toolchain;
}

/// Reads a cached code size when the entry is this build's and its figures
/// are plausible: each below the 32-bit address space, .text not empty, the
/// flag 0 or 1, nothing else in the file. Anything else (a corrupt,
/// truncated or hand-edited entry such as "18446744073707851616 0 0 658 1")
/// is ignored, and the build compiles again: a cache entry never reaches a
/// verdict unchecked.
bool readCachedCode(const std::string &path, CodeBreakdown &code) {
  std::string contents;
  try {
    contents = readInputFile(path, "code-size cache entry", 4096);
  } catch (const Error &) {
    return false;
  }
  std::istringstream in(contents);
  std::string line;
  if (!std::getline(in, line) || line != cacheEntryKey(path))
    return false;
  unsigned long long text, rodata, data, runtime, measured;
  std::string rest;
  if (!(in >> text >> rodata >> data >> runtime >> measured) || (in >> rest))
    return false;
  for (unsigned long long bytes : {text, rodata, data, runtime})
    if (bytes >= k32BitAddressSpace)
      return false;
  if (text == 0 || measured > 1 || text + rodata + runtime >= k32BitAddressSpace)
    return false;
  code.text = text, code.rodata = rodata, code.data = data, code.runtime = runtime;
  code.runtimeMeasured = measured != 0;
  code.fromCache = true;
  return true;
}

/// A cache that cannot be written is no error: the next run compiles again.
void writeCachedCode(const std::string &path, const CodeBreakdown &code) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  // Threads of one process (fit --batch, Python) may write the same entry.
  std::string temporary = path + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  {
    std::ofstream out(temporary);
    out << cacheEntryKey(path) << "\n"
        << code.text << " " << code.rodata << " " << code.data << " " << code.runtime << " "
        << (code.runtimeMeasured ? 1 : 0) << "\n";
    if (!out)
      return;
  }
  fs::rename(temporary, path, ec);
  if (ec)
    fs::remove(temporary, ec);
}

/// The object linked alone for the part (--gc-sections, the entry as root):
/// what stays in Flash (everything but .data), unresolved CMSIS-NN calls
/// ignored (their code is the table's). Throws Error(ToolMissing) without
/// arm-none-eabi-gcc.
uint64_t linkedObjectBytes(const CodegenResult &code, const std::string &entry,
                           const PartToolchain &toolchain) {
  std::string gcc = requireArmGcc();
  TemporaryDirectory work("size", "to size the bundle code");
  fs::path dir(work.path());
  {
    std::ofstream out(dir / "bundle.o", std::ios::binary);
    out.write(code.object.data(), std::streamsize(code.object.size()));
  }
  std::vector<std::string> argv = {gcc};
  argv.insert(argv.end(), toolchain.gccFlags.begin(), toolchain.gccFlags.end());
  argv.insert(argv.end(),
              {"--specs=nano.specs", "--specs=nosys.specs", "-nostartfiles", "-Wl,--gc-sections",
               "-Wl,--no-warn-rwx-segments", "-Wl,--no-warn-execstack",
               "-Wl,--unresolved-symbols=ignore-all", "-Wl,-e," + entry, "-Wl,--undefined=" + entry,
               "bundle.o", "-lm", "-o", "code.elf"});
  ProcessResult result = runProcess(argv, dir.string(), 600, (dir / "code.log").string());
  if (!result.ok())
    throw Error(ExitCode::ToolMissing,
                gcc + " could not link the bundle object alone to size its code");
  uint64_t bytes = 0;
  for (const LinkedSection &s : readElfSections((dir / "code.elf").string()))
    if (s.hasContents && s.name.rfind(".data", 0) != 0)
      bytes += s.size;
  return bytes;
}

std::string describeCore(const PartToolchain &toolchain) {
  return toolchain.codegenTarget + " (" + toolchain.floatAbi + " float)";
}

bool isHiFi(const Variant &variant) {
  return variant.kernels == Kernels::HiFi4 || variant.kernels == Kernels::HiFi4WithCmsis;
}

} // namespace

bool variantBuildable(const Variant &variant) { return !isHiFi(variant); }

void setCodeIdentity(const std::string &identity) { givenCodeIdentity() = identity; }

BuildSizer::BuildSizer(BuildOptions options)
    : options_(std::move(options)), modelHash_(modelHash(options_.model)) {
  // A profile that cannot be read is an error now, never a float verdict.
  checkProfileReadable(options_.quant);
}

const VariantBuild &BuildSizer::build(const Device &device, const Variant &variant,
                                      const FitRequest *placeFor) {
  if (isHiFi(variant))
    placeFor = nullptr; // not built: nothing to place
  PartToolchain toolchain = partToolchain(device);
  // Parts with the same core and libraries share the build.
  std::string key = variant.name + "|" + describeCore(toolchain) + "|" +
                    (variant.kernels == Kernels::CmsisNn
                         ? std::string(cmsisExtensionName(cmsisExtensionOf(device.bundleCore())))
                         : std::string()) +
                    "|" + (isHiFi(variant) ? device.id : std::string());
  if (options_.arenaRoomsFor)
    for (uint64_t room : device::arenaRooms(device, variant, *options_.arenaRoomsFor))
      key += "|" + std::to_string(room);
  if (placeFor)
    key += placementKey(device, *placeFor);
  auto it = builds_.find(key);
  if (it == builds_.end())
    it = builds_.emplace(key, make(device, variant, placeFor)).first;
  return it->second;
}

FootprintSource BuildSizer::footprints() {
  return [this](const Device &device, const Variant &variant) {
    return build(device, variant).footprint;
  };
}

std::string BuildSizer::cachePathFor(const Variant &variant, const std::string &target,
                                     const std::string &segments) const {
  const std::string dir = cacheDirectory();
  if (dir.empty())
    return "";
  return dir + "/code-" + modelHash_ + "-" +
         hex(fnv1a(joinedOptions(options_, variant, target) + segments)) + ".txt";
}

std::optional<CodeBreakdown> BuildSizer::cachedCode(const Device &device,
                                                    const Variant &variant) const {
  if (isHiFi(variant))
    return std::nullopt;
  CodeBreakdown code;
  const std::string path = cachePathFor(variant, describeCore(partToolchain(device)));
  if (path.empty() || !readCachedCode(path, code))
    return std::nullopt;
  code.data = 0; // as make() counts it: Flash code only
  return code;
}

VariantBuild BuildSizer::make(const Device &device, const Variant &variant,
                              const FitRequest *placeFor) {
  if (!variantAvailable(device, variant))
    mainLibrary(device, variant); // Throws: the part lacks the library.
  PartToolchain toolchain = partToolchain(device);
  VariantBuild out;
  out.buildable = variantBuildable(variant);
  out.target = describeCore(toolchain);

  CompileRequest request;
  // A float variant has float inputs and outputs whatever --int8-io says.
  request.model =
      variant.precision == Precision::Int8 ? options_.model : floatIoModel(options_.model);
  request.target = toolchain.codegenTarget;
  request.floatAbi = toolchain.floatAbi;
  request.optLevel = options_.optLevel;
  request.exactTimeBudgetSeconds = options_.exactTimeBudgetSeconds;
  if (options_.arenaRoomsFor)
    request.activationRooms = device::arenaRooms(device, variant, *options_.arenaRoomsFor);
  if (variant.precision == Precision::Int8) {
    request.quant = options_.quant;
    request.syntheticProfile = !options_.quant.enabled();
  }
  request.useCmsis = variant.kernels == Kernels::CmsisNn;
  if (placeFor) // the weights where this request's fit puts them (`compile --device`)
    request.placement = PartPlacement{device.id, {}, &device, *placeFor, false};

  if (isHiFi(variant)) {
    // No DSP code: the int8 graph as quantized, NNLib scratch, layer by layer.
    std::unique_ptr<Graph> int8 = quantizedGraphForSizing(options_.model, options_.quant);
    PlanOptions plan = planOptionsFor(options_.model, options_.exactTimeBudgetSeconds);
    plan.memoryOpt = 0;
    out.footprint = footprintOfQuantized(*int8, variant, device, plan);
    out.estimates.push_back("code: the device file's " + mainLibrary(device, variant).key +
                            " figure, because bundlefit generates no HiFi4 DSP code");
    out.estimates.push_back("RAM: NNLib scratch approximated (not xa_nn_*_getsize)");
    out.footprint.buildable = false;
    out.footprint.estimates = out.estimates;
    return out;
  }

  // Plan first (cheap): a placed build's code depends on how its weights fall
  // into segments, which the plan decides, so that is part of the cache key.
  request.generateCode = false;
  auto compiled = std::make_shared<CompiledBundle>();
  CompiledBundle &bundle = *compiled;
  const std::string what = variant.name + " for " + out.target;
  {
    Stage stage("plan " + what);
    // One status line per variant, not the compile's; -v still shows them.
    std::optional<QuietScope> quiet;
    if (verbosity() == Verbosity::Normal)
      quiet.emplace();
    bundle = buildBundle(request);
  }
  const std::string cachePath =
      options_.useCache ? cachePathFor(variant, out.target, segmentSignature(bundle.plan)) : "";
  bool cached = !cachePath.empty() && readCachedCode(cachePath, out.code);
  if (!cached) {
    Stage stage("compile " + what);
    std::optional<QuietScope> quiet;
    if (verbosity() == Verbosity::Normal)
      quiet.emplace();
    generateBundleCode(bundle, request);
  }
  out.footprint = footprintOfPlan(bundle.plan, variant, device);
  out.footprint.portable = bundle.cmsisPortable;
  if (!cached) {
    out.code.text = bundle.code.textBytes;
    out.code.rodata = bundle.code.rodataBytes;
    out.code.data = bundle.code.dataBytes;
    try {
      uint64_t linked = linkedObjectBytes(
          bundle.code, firmwareEntryName(bundle.plan, bundle.networkName), toolchain);
      uint64_t object = out.code.text + out.code.rodata;
      // What the link adds: runtime routines, alignment, .ARM.exidx.
      out.code.runtime = linked > object ? linked - object : 0;
      out.code.runtimeMeasured = true;
    } catch (const Error &e) {
      if (e.code() != ExitCode::ToolMissing)
        throw;
    }
    if (!cachePath.empty())
      writeCachedCode(cachePath, out.code);
  }
  out.code.data = 0; // Writable data is RAM, and codegen emits none; Flash code only.
  if (!out.code.runtimeMeasured)
    out.estimates.push_back("code: runtime routines (memcpy, expf, soft float) not counted, "
                            "because arm-none-eabi-gcc is not installed to link them");
  if (variant.kernels == Kernels::CmsisNn) {
    std::set<std::string> functions;
    for (const Node *node : bundle.graph->nodes())
      if (node->attrs.has(kCmsisAttribute))
        functions.insert(node->attrs.getString(kCmsisAttribute, ""));
    LibraryCodeSize library = cmsisNnCodeBytes(
        toolchain.codegenTarget, std::vector<std::string>(functions.begin(), functions.end()));
    out.code.library = library.bytes;
    if (!library.measured)
      out.estimates.push_back("code: CMSIS-NN library " + library.why);
  }
  out.footprint.codeBytes = out.code.total();
  out.footprint.codeEstimated = out.estimated();
  out.footprint.sizesEstimated = false;
  out.footprint.buildable = out.buildable;
  out.footprint.estimates = out.estimates;
  out.bundle = std::move(compiled);
  return out;
}

} // namespace bundlefit::driver
