//===- Toolchain.cpp - Finding and running the external tools --------------===//
//
// PATH lookup, the Debian package that provides each tool, the MPS2 boards
// QEMU 7.2 models for each Cortex-M core, and a fork/exec runner with a time
// limit that kills the whole process group.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/support/Error.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <signal.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace bundlefit {

namespace {

bool isExecutableFile(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return false;
  return ::access(path.c_str(), X_OK) == 0;
}

std::string envOr(const char *var) {
  const char *v = std::getenv(var);
  return v ? std::string(v) : std::string();
}

/// Resolves an override (explicit, then environment) or the default names.
std::string resolveTool(const std::string &override, const char *envVar,
                        const std::vector<std::string> &defaults, std::string &tried) {
  std::string explicitName = !override.empty() ? override : envOr(envVar);
  if (!explicitName.empty()) {
    tried = "'" + explicitName + "'";
    return findTool(explicitName);
  }
  tried.clear();
  for (const std::string &name : defaults) {
    tried += (tried.empty() ? "'" : " and '") + name + "'";
    std::string path = findTool(name);
    if (!path.empty())
      return path;
  }
  return "";
}

// Memory maps checked against QEMU 7.2 (`info mtree` on each machine):
//  mps2-an500 / mps2-an386 (hw/arm/mps2.c): ZBT SSRAM1 4 MiB @0x00000000
//    (mirrored @0x00400000), ZBT SSRAM2&3 4 MiB @0x20000000, 16 MiB PSRAM
//    ("mps.ram") @0x60000000 on AN500 and @0x21000000 on AN386. VTOR = 0.
//  mps2-an505 (hw/arm/mps2-tz.c, IoTKit): SSRAM-0 4 MiB @0x00000000 (NS) /
//    0x10000000 (S), SSRAM-1/2 2+2 MiB @0x28000000 (NS) / 0x38000000 (S),
//    16 MiB "mps.ram" @0x80000000. The core boots Secure with VTOR_S =
//    0x10000000 and the MPCs' reset state makes every block Secure, so code
//    and data use the Secure aliases.
//  mps3-an547 (SSE-300, Cortex-M55): ITCM 512 KiB @0x00000000 (NS) /
//    0x10000000 (S), DTCM 512 KiB @0x20000000 / 0x30000000, SRAM 4 MiB
//    @0x21000000 / 0x31000000, DDR @0x60000000 / 0x70000000 (256 MiB
//    windows). It boots Secure like the AN505; code runs from the Secure ITCM
//    alias, data from the Secure SRAM alias.
const std::vector<CortexMBoard> &boards() {
  static const std::vector<CortexMBoard> table = {
      {"cortex-m7",
       "mps2-an500",
       "cortex-m7",
       {"-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"},
       {"SSRAM1", 0x00000000, 0x400000},
       {"SSRAM2_3", 0x20000000, 0x400000},
       {"PSRAM", 0x60000000, 0x1000000}},
      {"cortex-m33",
       "mps2-an505",
       "cortex-m33",
       {"-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"},
       {"SSRAM0_S", 0x10000000, 0x400000},
       {"SSRAM1_2_S", 0x38000000, 0x400000},
       {"MPS_RAM", 0x80000000, 0x1000000}},
      {"cortex-m4",
       "mps2-an386",
       "cortex-m4",
       {"-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"},
       {"SSRAM1", 0x00000000, 0x400000},
       {"SSRAM2_3", 0x20000000, 0x400000},
       {"PSRAM", 0x21000000, 0x1000000}},
      // mps2-an385: Cortex-M3 (no FPU), the memory map of the AN386.
      {"cortex-m3",
       "mps2-an385",
       "cortex-m3",
       {"-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"},
       {"SSRAM1", 0x00000000, 0x400000},
       {"SSRAM2_3", 0x20000000, 0x400000},
       {"PSRAM", 0x21000000, 0x1000000}},
      {"cortex-m55",
       "mps3-an547",
       "cortex-m55",
       {"-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"},
       {"ITCM_S", 0x10000000, 0x80000},
       {"SRAM_S", 0x31000000, 0x400000},
       {"DDR_S", 0x70000000, 0x1000000}},
  };
  return table;
}

} // namespace

std::string findTool(const std::string &name) {
  if (name.empty())
    return "";
  if (name.find('/') != std::string::npos)
    return isExecutableFile(name) ? name : "";
  const char *pathEnv = std::getenv("PATH");
  std::string path = pathEnv ? pathEnv : "";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos)
      end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty())
      dir = ".";
    std::string candidate = dir + "/" + name;
    if (isExecutableFile(candidate))
      return candidate;
    start = end + 1;
  }
  return "";
}

const CortexMBoard *findCortexMBoard(const std::string &target) {
  for (const CortexMBoard &b : boards())
    if (b.target == target)
      return &b;
  return nullptr;
}

std::vector<std::string> supportedRunTargets() {
  std::vector<std::string> t = {"host"};
  for (const CortexMBoard &b : boards())
    t.push_back(b.target);
  return t;
}

std::string requireHostCC(const ToolOverrides &tools) {
  std::string tried;
  std::string path = resolveTool(tools.cc, "BUNDLEFIT_CC", {"cc", "gcc"}, tried);
  if (path.empty())
    throw Error(ExitCode::ToolMissing, "host C compiler not found (looked for " + tried +
                                           " on PATH): install the Debian package gcc");
  return path;
}

std::string requireArmGcc(const ToolOverrides &tools) {
  std::string tried;
  std::string path = resolveTool(tools.armGcc, "BUNDLEFIT_ARM_GCC", {"arm-none-eabi-gcc"}, tried);
  if (path.empty())
    throw Error(ExitCode::ToolMissing,
                "Arm cross compiler not found (looked for " + tried +
                    " on PATH): install the Debian package gcc-arm-none-eabi");
  return path;
}

std::string requireQemuArm(const ToolOverrides &tools) {
  std::string tried;
  std::string path = resolveTool(tools.qemu, "BUNDLEFIT_QEMU_ARM", {"qemu-system-arm"}, tried);
  if (path.empty())
    throw Error(ExitCode::ToolMissing, "QEMU not found (looked for " + tried +
                                           " on PATH): install the Debian package qemu-system-arm");
  return path;
}

void requireNewlib(const std::string &armGcc, const CortexMBoard &board,
                   const std::string &scratchDir) {
  // `gcc -print-file-name=libm.a` prints an existing absolute path when the
  // multilib for these flags has it, and just "libm.a" otherwise.
  std::string log = (scratchDir.empty() ? std::string(".") : scratchDir) + "/newlib-check.log";
  std::string missing;
  for (const char *lib : {"libc.a", "libm.a"}) {
    std::vector<std::string> argv = {armGcc};
    argv.insert(argv.end(), board.cflags.begin(), board.cflags.end());
    argv.push_back(std::string("-print-file-name=") + lib);
    ProcessResult r = runProcess(argv, ".", 30, log);
    std::string out = r.output;
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' '))
      out.pop_back();
    struct stat st;
    if (!r.ok() || out.empty() || out[0] != '/' || ::stat(out.c_str(), &st) != 0)
      missing += std::string(missing.empty() ? "" : ", ") + lib;
  }
  if (!missing.empty()) {
    std::string flags;
    for (const std::string &f : board.cflags)
      flags += " " + f;
    throw Error(ExitCode::ToolMissing, "newlib (" + missing + ") not found for" + flags +
                                           ": install the Debian package libnewlib-arm-none-eabi");
  }
}

ProcessResult runProcess(const std::vector<std::string> &argv, const std::string &cwd,
                         double timeoutSeconds, const std::string &logPath) {
  ProcessResult result;
  if (argv.empty())
    fatalInternal("runProcess: empty command");
  std::vector<char *> cargv;
  for (const std::string &a : argv)
    cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);
  // The tools' own temporary files (cc's .s and .o) go into the work
  // directory too, so a killed bundlefit leaves nothing behind in the user's
  // TMPDIR beyond that directory, which the next run removes. Built before
  // fork: the child may only call async-signal-safe functions.
  std::vector<std::string> envText;
  for (char **e = environ; *e; ++e)
    if (std::strncmp(*e, "TMPDIR=", 7) != 0)
      envText.push_back(*e);
  if (!cwd.empty() && cwd != ".")
    envText.push_back("TMPDIR=" + cwd);
  std::vector<char *> cenv;
  for (std::string &e : envText)
    cenv.push_back(e.data());
  cenv.push_back(nullptr);

  // A close-on-exec pipe tells the parent whether exec succeeded: the child
  // writes errno into it only when exec fails.
  int execPipe[2];
  if (::pipe2(execPipe, O_CLOEXEC) != 0)
    throw Error(ExitCode::ToolMissing,
                "cannot start '" + argv[0] + "': pipe failed: " + std::strerror(errno));
  auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(execPipe[0]);
    ::close(execPipe[1]);
    throw Error(ExitCode::ToolMissing,
                "cannot start '" + argv[0] + "': fork failed: " + std::strerror(errno));
  }
  if (pid == 0) {
    // Child: own process group (so a timeout kills grandchildren too),
    // stdin from /dev/null, stdout+stderr into the log.
    ::setpgid(0, 0);
    ::close(execPipe[0]);
    int in = ::open("/dev/null", O_RDONLY);
    int out = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in >= 0)
      ::dup2(in, 0);
    if (out >= 0) {
      ::dup2(out, 1);
      ::dup2(out, 2);
    }
    int err = 0;
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
      err = errno;
      const char msg[] = "bundlefit: cannot chdir to the run directory\n";
      (void)!::write(2, msg, sizeof(msg) - 1);
    } else {
      ::execvpe(cargv[0], cargv.data(), cenv.data());
      err = errno;
      const char msg[] = "bundlefit: exec failed\n";
      (void)!::write(2, msg, sizeof(msg) - 1);
    }
    (void)!::write(execPipe[1], &err, sizeof err);
    ::_exit(127);
  }
  ::setpgid(pid, pid); // Also from the parent, to avoid the race.
  ::close(execPipe[1]);
  int execErrno = 0;
  ssize_t got;
  while ((got = ::read(execPipe[0], &execErrno, sizeof execErrno)) < 0 && errno == EINTR) {
  }
  ::close(execPipe[0]);
  result.startFailed = got > 0;

  int status = 0;
  auto deadline = start + std::chrono::duration<double>(timeoutSeconds);
  auto sleepFor = std::chrono::microseconds(200);
  while (true) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid)
      break;
    if (w < 0 && errno != EINTR) {
      status = 0;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      result.timedOut = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(sleepFor);
    if (sleepFor < std::chrono::milliseconds(10))
      sleepFor *= 2;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.timedOut) {
    if (WIFEXITED(status))
      result.exitCode = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
      result.termSignal = WTERMSIG(status);
  }
  std::ifstream log(logPath, std::ios::binary);
  std::ostringstream text;
  text << log.rdbuf();
  result.output = text.str();
  return result;
}

std::string lastLines(const std::string &text, int lines) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r'))
    t.pop_back();
  size_t pos = t.size();
  for (int i = 0; i < lines; ++i) {
    size_t nl = t.rfind('\n', pos == 0 ? 0 : pos - 1);
    if (nl == std::string::npos || pos == 0) {
      pos = 0;
      break;
    }
    pos = nl;
  }
  std::string tail = t.substr(pos == 0 ? 0 : pos + 1);
  if (tail.size() > 4000)
    tail = "..." + tail.substr(tail.size() - 4000);
  return tail;
}

} // namespace bundlefit
