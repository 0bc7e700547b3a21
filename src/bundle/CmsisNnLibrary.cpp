//===- CmsisNnLibrary.cpp - Find or build CMSIS-NN for a Cortex-M core -----===//
#include "bundlefit/bundle/CmsisNnLibrary.h"

#include "bundlefit/support/Error.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace bundlefit {

namespace {

/// FNV-1a: a cache key that stays the same from one bundlefit build to the next.
std::string stableHash(const std::string &text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

bool hasHeader(const fs::path &dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "arm_nnfunctions.h", ec);
}

/// A prebuilt libcmsis-nn.a at the top of `root`, under lib/ or build/, or
/// (a CMake build tree) a few levels down.
fs::path findPrebuilt(const fs::path &root) {
  std::error_code ec;
  for (const char *sub : {"", "lib", "build"})
    if (fs::is_regular_file(root / sub / "libcmsis-nn.a", ec))
      return root / sub / "libcmsis-nn.a";
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 3) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().filename() == "libcmsis-nn.a")
      return it->path();
  }
  return {};
}

fs::path findIncludeDir(const fs::path &root) {
  for (const fs::path &dir : {root / "Include", root / "include", root.parent_path() / "Include",
                              root.parent_path() / "include"})
    if (hasHeader(dir))
      return dir;
  return {};
}

void runStep(const std::vector<std::string> &argv, const fs::path &dir, double timeout,
             const std::string &log, const std::string &what) {
  ProcessResult r = runProcess(argv, dir.string(), timeout, (dir / log).string());
  if (!r.ok())
    throw Error(ExitCode::ToolMissing,
                what + " failed (" +
                    (r.timedOut ? std::string("timed out") : "exit " + std::to_string(r.exitCode)) +
                    "; log: " + (dir / log).string() + ")\n" + lastLines(r.output, 12));
}

/// Configures and builds CMSIS-NN's CMakeLists for `core` into `out`.
void buildLibrary(const fs::path &source, const std::string &core, const fs::path &out,
                  const ToolOverrides &tools) {
  const std::string gcc = requireArmGcc(tools);
  const std::string cmake = findTool("cmake");
  if (cmake.empty())
    throw Error(ExitCode::ToolMissing,
                "building CMSIS-NN needs cmake (install the Debian package cmake)");
  std::string flags;
  for (const std::string &f : cmsisNnCoreFlags(core))
    flags += f + " ";
  std::ofstream(out / "toolchain.cmake")
      << "# Written by bundlefit: CMSIS-NN for " << core << "\n"
      << "set(CMAKE_SYSTEM_NAME Generic)\nset(CMAKE_SYSTEM_PROCESSOR arm)\n"
      << "set(CMAKE_C_COMPILER \"" << gcc << "\")\n"
      << "set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)\n"
      << "set(CMAKE_C_FLAGS_INIT \"" << flags << "-ffunction-sections -fdata-sections\")\n";
  std::vector<std::string> configure = {cmake,
                                        "-S",
                                        source.string(),
                                        "-B",
                                        (out / "build").string(),
                                        "-DCMAKE_TOOLCHAIN_FILE=" +
                                            (out / "toolchain.cmake").string(),
                                        "-DCMSIS_OPTIMIZATION_LEVEL=-O2"};
  if (!findTool("ninja").empty())
    configure.insert(configure.begin() + 1, {"-G", "Ninja"});
  runStep(configure, out, 300, "configure.log", "configuring CMSIS-NN (" + source.string() + ")");
  runStep({cmake, "--build", (out / "build").string(), "-j2"}, out, 1800, "build.log",
          "building CMSIS-NN for " + core);
  const fs::path built = findPrebuilt(out / "build");
  if (built.empty())
    throw Error(ExitCode::ToolMissing, "building CMSIS-NN for " + core +
                                           " produced no libcmsis-nn.a (see " +
                                           (out / "build.log").string() + ")");
  fs::copy_file(built, out / "libcmsis-nn.a", fs::copy_options::overwrite_existing);
  std::error_code ec;
  fs::remove_all(out / "build", ec);
  std::ofstream(out / "source.txt") << source.string() << "\n" << core << "\n";
}

} // namespace

std::vector<std::string> cmsisNnCoreFlags(const std::string &core) {
  if (core == "cortex-m0plus" || core == "cortex-m3")
    return {"-mcpu=" + core, "-mthumb", "-mfloat-abi=soft"};
  // GCC 12 has no -mcpu=cortex-m85; CMSIS-NN only asks for Helium (MVE), which
  // the Cortex-M55 build uses the same way.
  if (core == "cortex-m55" || core == "cortex-m85")
    return {"-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"};
  if (const CortexMBoard *board = findCortexMBoard(core))
    return board->cflags; // the firmware's own flags: M4, M7, M33
  return {};
}

std::string defaultCmsisNnCacheDir() {
  if (const char *dir = std::getenv("BUNDLEFIT_CACHE_DIR"); dir && *dir)
    return (fs::path(dir) / "cmsis-nn").string();
  if (const char *dir = std::getenv("XDG_CACHE_HOME"); dir && *dir)
    return (fs::path(dir) / "bundlefit" / "cmsis-nn").string();
  const char *home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/tmp") / ".cache" / "bundlefit" / "cmsis-nn").string();
}

CmsisNnLibrary findOrBuildCmsisNn(const std::string &dir, const std::string &core,
                                  const std::string &cacheDir, const ToolOverrides &tools) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(ExitCode::BadInputFile, "--cmsis-nn '" + dir + "': no such directory");
  if (cmsisNnCoreFlags(core).empty())
    throw Error(ExitCode::Usage, "CMSIS-NN: no build for target '" + core +
                                     "' (cortex-m0plus, m3, m4, m7, m33, m55, m85)");
  const fs::path root = fs::canonical(dir);
  CmsisNnLibrary result;
  const bool sourceCheckout = hasHeader(root / "Include") &&
                              fs::is_regular_file(root / "CMakeLists.txt", ec) &&
                              fs::is_directory(root / "Source", ec);
  if (!sourceCheckout) {
    const fs::path library = findPrebuilt(root);
    const fs::path include = findIncludeDir(root);
    if (library.empty() || include.empty())
      throw Error(ExitCode::BadInputFile,
                  "--cmsis-nn '" + dir +
                      "': neither a CMSIS-NN source checkout (Include/, "
                      "Source/, CMakeLists.txt) nor a directory holding libcmsis-nn.a and "
                      "Include/arm_nnfunctions.h");
    result.library = library.string(), result.includeDir = include.string();
    return result;
  }
  result.includeDir = (root / "Include").string();
  const fs::path final = fs::path(cacheDir) / (core + "-" + stableHash(root.string()));
  result.library = (final / "libcmsis-nn.a").string();
  if (fs::is_regular_file(result.library, ec))
    return result;
  fs::create_directories(cacheDir, ec);
  const fs::path work =
      fs::path(cacheDir) / (final.filename().string() + ".tmp" + std::to_string(::getpid()));
  fs::remove_all(work, ec);
  fs::create_directories(work, ec);
  if (ec)
    throw Error(ExitCode::CannotWrite, "cannot create '" + work.string() + "': " + ec.message());
  buildLibrary(root, core, work, tools);
  fs::rename(work, final, ec);
  if (ec) { // another process finished first: use its library
    fs::remove_all(work, ec);
    if (!fs::is_regular_file(result.library, ec))
      throw Error(ExitCode::CannotWrite,
                  "cannot move the CMSIS-NN build into '" + final.string() + "'");
  }
  result.built = true;
  return result;
}

} // namespace bundlefit
