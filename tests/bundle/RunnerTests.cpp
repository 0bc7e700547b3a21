// runBundle end to end, without LLVM: a small hand-written C "bundle" with the
// Glow entry signature is compiled by the host cc and by arm-none-eabi-gcc for
// each Cortex-M core, then linked into the generated driver / firmware and run
// natively or under QEMU. The arithmetic uses dyadic values only, so every
// target must return exactly the same bits.
#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/support/Error.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace bundlefit;

namespace {

// Constants: w float32[4] @0, bias float32[1] @64       -> CONSTANT 128
// Placeholders: a float32[2,3] @0, b float32[2,3] @64 (inputs),
//               y float32[2,3] @128, n int32[4] @192 (outputs) -> MUTABLE 256
// Activations: tmp float32[6] @0                          -> ACTIVATIONS 64
// a[0] selects failure modes: -1000 entry returns 7, -2000 traps, -3000 hangs.
const char *kBundleSource = R"(
#include <math.h>
#include <stdint.h>

int testnet(uint8_t *constantWeight, uint8_t *mutableWeight, uint8_t *activations) {
  const float *w = (const float *)(constantWeight + 0);
  const float *bias = (const float *)(constantWeight + 64);
  const float *a = (const float *)(mutableWeight + 0);
  const float *b = (const float *)(mutableWeight + 64);
  float *y = (float *)(mutableWeight + 128);
  int32_t *n = (int32_t *)(mutableWeight + 192);
  float *tmp = (float *)(activations + 0);
  int i;
  if ((((uintptr_t)constantWeight) | ((uintptr_t)mutableWeight) | ((uintptr_t)activations)) & 63)
    return 9;
  if (a[0] == -1000.0f)
    return 7;
  if (a[0] == -2000.0f)
    __builtin_trap();
  if (a[0] == -3000.0f)
    for (;;)
      __asm__ volatile("");
  for (i = 0; i < 6; ++i)
    tmp[i] = (a[i] + b[i]) * w[i % 4];
  for (i = 0; i < 6; ++i)
    y[i] = tmp[i] + bias[0] + sqrtf(b[i]) + expf(a[i] - a[i]);
  for (i = 0; i < 4; ++i)
    n[i] = (int32_t)(a[i] * 4.0f) - 3;
  return 0;
}
)";

const float kW[4] = {2.0f, 0.5f, -1.0f, 4.0f};
const float kBias = 0.125f;
const std::vector<float> kA = {0.5f, -1.5f, 2.0f, 3.25f, -4.0f, 1.0f};
const std::vector<float> kB = {1.0f, 4.0f, 9.0f, 16.0f, 0.25f, 2.25f};

fs::path testRoot() {
  static fs::path root = [] {
    fs::path p = fs::temp_directory_path() / ("bundle_runner_tests." + std::to_string(::getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    // Set BUNDLEFIT_KEEP_TEST_FILES to keep the generated drivers and images.
    if (!std::getenv("BUNDLEFIT_KEEP_TEST_FILES"))
      std::atexit([] {
        std::error_code ec;
        fs::remove_all(
            fs::temp_directory_path() / ("bundle_runner_tests." + std::to_string(::getpid())), ec);
      });
    return p;
  }();
  return root;
}

TensorType typeOf(DType dtype, Shape shape) {
  TensorType t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

void writeWeights(const fs::path &file, uint64_t size) {
  std::vector<uint8_t> bytes(size, 0);
  std::memcpy(bytes.data(), kW, sizeof kW);
  std::memcpy(bytes.data() + 64, &kBias, sizeof kBias);
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

/// Compiles the test bundle for `target` into <root>/<target>/testnet.o and
/// writes its weights.bin; returns the spec.
BundleRunSpec makeBundle(const std::string &target, uint64_t constantSize = 128) {
  fs::path dir = testRoot() / ("bundle-" + target + "-" + std::to_string(constantSize));
  fs::create_directories(dir);
  { std::ofstream(dir / "testnet.c") << kBundleSource; }
  std::vector<std::string> argv;
  if (target == "host") {
    argv = {requireHostCC(), "-c", "-O2"};
  } else {
    const CortexMBoard *board = findCortexMBoard(target);
    REQUIRE(board != nullptr);
    argv = {requireArmGcc()};
    argv.insert(argv.end(), board->cflags.begin(), board->cflags.end());
    argv.push_back("-c");
    argv.push_back("-O2");
  }
  argv.insert(argv.end(), {"-o", "testnet.o", "testnet.c"});
  ProcessResult r = runProcess(argv, dir.string(), 60, (dir / "cc.log").string());
  INFO(r.output);
  REQUIRE(r.ok());
  writeWeights(dir / "testnet.weights.bin", constantSize);

  BundleRunSpec spec;
  spec.bundleDir = dir.string();
  spec.networkName = "testnet";
  spec.constantSize = constantSize;
  spec.mutableSize = 256;
  spec.activationsSize = 64;
  spec.target = target;
  spec.timeoutSeconds = 60;
  spec.placeholders = {
      {"a", 0, typeOf(DType::Float32, {2, 3}), true},
      {"b", 64, typeOf(DType::Float32, {2, 3}), true},
      {"y", 128, typeOf(DType::Float32, {2, 3}), false},
      {"n", 192, typeOf(DType::Int32, {4}), false},
  };
  return spec;
}

std::map<std::string, Tensor> inputsWith(std::vector<float> a) {
  return {{"a", Tensor::fromFloats({2, 3}, a)}, {"b", Tensor::fromFloats({2, 3}, kB)}};
}

void checkOutputs(const std::map<std::string, Tensor> &out) {
  REQUIRE(out.size() == 2);
  const Tensor &y = out.at("y");
  CHECK(y.type.dtype == DType::Float32);
  CHECK(y.type.shape == Shape{2, 3});
  REQUIRE(y.bytes.size() == 24); // 2 x 3 floats
  for (int i = 0; i < 6; ++i) {
    float tmp = (kA[i] + kB[i]) * kW[i % 4];
    float expected = tmp + kBias + std::sqrt(kB[i]) + 1.0f;
    CHECK(y.data<float>()[i] == expected); // exact: dyadic values only
  }
  const Tensor &n = out.at("n");
  CHECK(n.type.dtype == DType::Int32);
  REQUIRE(n.bytes.size() == 16); // 4 int32
  for (int i = 0; i < 4; ++i)
    CHECK(n.data<int32_t>()[i] == int32_t(kA[i] * 4.0f) - 3);
}

/// Runs `fn` expecting an Error; returns it.
template <typename F> Error expectError(F fn) {
  try {
    fn();
  } catch (const Error &e) {
    return e;
  }
  FAIL("expected a bundlefit::Error");
  return Error(ExitCode::Success, "");
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// Restores PATH on scope exit.
struct PathGuard {
  std::string saved;
  PathGuard() {
    const char *p = std::getenv("PATH");
    saved = p ? p : "";
  }
  ~PathGuard() { ::setenv("PATH", saved.c_str(), 1); }
};

const std::vector<std::string> kCortexM = {"cortex-m7", "cortex-m33", "cortex-m4"};

} // namespace

TEST_CASE("findTool searches PATH and accepts explicit paths") {
  std::string sh = findTool("sh");
  CHECK(!sh.empty());
  CHECK(sh[0] == '/');
  CHECK(findTool("/bin/sh") == "/bin/sh");
  CHECK(findTool("bundlefit-no-such-tool-xyz").empty());
  CHECK(findTool("/nonexistent/dir/cc").empty());
  CHECK(findTool("").empty());
}

TEST_CASE("runProcess captures output, exit status, start failures and timeouts") {
  fs::path dir = testRoot() / "proc";
  fs::create_directories(dir);
  std::string log = (dir / "log").string();
  ProcessResult ok =
      runProcess({"sh", "-c", "echo out; echo err >&2; pwd; exit 3"}, dir.string(), 10, log);
  CHECK(!ok.startFailed);
  CHECK(ok.exitCode == 3);
  CHECK(contains(ok.output, "out\n"));
  CHECK(contains(ok.output, "err\n"));
  CHECK(contains(ok.output, dir.string()));
  CHECK(lastLines("a\nb\nc\n", 2) == "b\nc");
  CHECK(lastLines("a\nb\nc", 5) == "a\nb\nc");

  ProcessResult missing = runProcess({"/nonexistent/tool"}, dir.string(), 10, log);
  CHECK(missing.startFailed);
  CHECK(!missing.ok());

  // The time limit kills the whole process group (the shell and its sleep).
  ProcessResult slow = runProcess({"sh", "-c", "sleep 30 & sleep 30"}, dir.string(), 0.3, log);
  CHECK(slow.timedOut);
  CHECK(slow.seconds < 5);
}

TEST_CASE("missing tools name the Debian package to install") {
  PathGuard guard;
  fs::path empty = testRoot() / "empty-path";
  fs::create_directories(empty);
  ::setenv("PATH", empty.c_str(), 1);
  ::unsetenv("BUNDLEFIT_CC");
  ::unsetenv("BUNDLEFIT_ARM_GCC");
  ::unsetenv("BUNDLEFIT_QEMU_ARM");

  Error cc = expectError([] { requireHostCC(); });
  CHECK(cc.code() == ExitCode::ToolMissing);
  CHECK(contains(cc.what(), "install the Debian package gcc"));
  Error arm = expectError([] { requireArmGcc(); });
  CHECK(arm.code() == ExitCode::ToolMissing);
  CHECK(contains(arm.what(), "install the Debian package gcc-arm-none-eabi"));
  Error qemu = expectError([] { requireQemuArm(); });
  CHECK(qemu.code() == ExitCode::ToolMissing);
  CHECK(contains(qemu.what(), "install the Debian package qemu-system-arm"));
}

TEST_CASE("runBundle reports missing tools through overrides") {
  BundleRunSpec spec = makeBundle("host");
  spec.tools.cc = "/nonexistent/bin/cc";
  Error cc = expectError([&] { runBundle(spec, inputsWith(kA), (testRoot() / "w").string()); });
  CHECK(cc.code() == ExitCode::ToolMissing);
  CHECK(contains(cc.what(), "'/nonexistent/bin/cc'"));
  CHECK(contains(cc.what(), "install the Debian package gcc"));

  BundleRunSpec m7 = makeBundle("cortex-m7");
  m7.tools.armGcc = "/nonexistent/arm-none-eabi-gcc";
  Error arm = expectError([&] { runBundle(m7, inputsWith(kA), (testRoot() / "w").string()); });
  CHECK(arm.code() == ExitCode::ToolMissing);
  CHECK(contains(arm.what(), "gcc-arm-none-eabi"));

  m7.tools.armGcc.clear();
  m7.tools.qemu = "/nonexistent/qemu-system-arm";
  Error qemu = expectError([&] { runBundle(m7, inputsWith(kA), (testRoot() / "w").string()); });
  CHECK(qemu.code() == ExitCode::ToolMissing);
  CHECK(contains(qemu.what(), "install the Debian package qemu-system-arm"));

  // A cross compiler without newlib: -print-file-name echoes the bare name.
  fs::path fake = testRoot() / "fake-arm-gcc";
  {
    std::ofstream s(fake);
    s << "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in -print-file-name=*) echo "
         "\"${a#-print-file-name=}\";; esac; done\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  m7.tools.qemu.clear();
  m7.tools.armGcc = fake.string();
  Error newlib = expectError([&] { runBundle(m7, inputsWith(kA), (testRoot() / "w").string()); });
  CHECK(newlib.code() == ExitCode::ToolMissing);
  CHECK(contains(newlib.what(), "install the Debian package libnewlib-arm-none-eabi"));
}

TEST_CASE("runBundle on the host returns the exact outputs") {
  BundleRunSpec spec = makeBundle("host");
  BundleRunStats stats;
  auto out = runBundle(spec, inputsWith(kA), (testRoot() / "work").string(), &stats);
  checkOutputs(out);
  CHECK(fs::exists(fs::path(stats.runDir) / "driver.c"));
  CHECK(contains(stats.output, "bundlefit-driver: ok"));
  MESSAGE("host: build " << stats.buildSeconds << " s, run " << stats.runSeconds << " s");

  // Running again in the same work directory reuses it.
  checkOutputs(runBundle(spec, inputsWith(kA), (testRoot() / "work").string()));
}

TEST_CASE("runBundle on Cortex-M under QEMU returns the exact outputs") {
  for (const std::string &target : kCortexM) {
    SUBCASE(target.c_str()) {
      BundleRunSpec spec = makeBundle(target);
      BundleRunStats stats;
      auto out = runBundle(spec, inputsWith(kA), (testRoot() / "work").string(), &stats);
      INFO(stats.output);
      checkOutputs(out);
      CHECK(contains(stats.output, "bundlefit-firmware: ok"));
      CHECK(fs::exists(fs::path(stats.runDir) / "fw.elf"));
      MESSAGE(target << " (" << stats.layout << "): build " << stats.buildSeconds << " s, QEMU "
                     << stats.runSeconds << " s");
      CHECK(stats.runSeconds < 10);
    }
  }
}

TEST_CASE("a non-zero entry status is an Internal error") {
  for (const std::string &target : {std::string("host"), std::string("cortex-m7")}) {
    BundleRunSpec spec = makeBundle(target);
    std::vector<float> a = kA;
    a[0] = -1000.0f;
    Error e = expectError([&] { runBundle(spec, inputsWith(a), (testRoot() / "fail").string()); });
    INFO(std::string(e.what()));
    CHECK(e.code() == ExitCode::Internal);
    CHECK(contains(e.what(), "returned 7"));
  }
}

TEST_CASE("a crash is a ToolMissing-class error with the program's last output") {
  BundleRunSpec host = makeBundle("host");
  std::vector<float> a = kA;
  a[0] = -2000.0f;
  Error h = expectError([&] { runBundle(host, inputsWith(a), (testRoot() / "crash").string()); });
  INFO(std::string(h.what()));
  CHECK(h.code() == ExitCode::ToolMissing);
  CHECK(contains(h.what(), "crashed"));

  for (const std::string &target : kCortexM) {
    BundleRunSpec spec = makeBundle(target);
    Error e = expectError([&] { runBundle(spec, inputsWith(a), (testRoot() / "crash").string()); });
    INFO(target << ": " << std::string(e.what()));
    CHECK(e.code() == ExitCode::ToolMissing);
    CHECK(contains(e.what(), "crashed (fault)"));
    CHECK(contains(e.what(), "bundlefit-firmware: fault"));
    CHECK(contains(e.what(), "HardFault"));
    CHECK(contains(e.what(), "cfsr=0x00010000")); // UNDEFINSTR: __builtin_trap's udf
  }
}

TEST_CASE("a hanging firmware times out") {
  BundleRunSpec spec = makeBundle("cortex-m7");
  spec.timeoutSeconds = 1.5;
  std::vector<float> a = kA;
  a[0] = -3000.0f;
  Error e = expectError([&] { runBundle(spec, inputsWith(a), (testRoot() / "hang").string()); });
  INFO(std::string(e.what()));
  CHECK(e.code() == ExitCode::ToolMissing);
  CHECK(contains(e.what(), "timed out"));
}

TEST_CASE("regions that overflow the SSRAMs go to the 16 MiB PSRAM") {
  // 4.5 MiB of weights and 5 MiB of activations: neither fits a 4 MiB SSRAM.
  const uint64_t constant = 4608 * 1024;
  for (const std::string &target : {std::string("cortex-m7"), std::string("cortex-m33")}) {
    BundleRunSpec spec = makeBundle(target, constant);
    spec.activationsSize = 5 * 1024 * 1024;
    BundleRunStats stats;
    auto out = runBundle(spec, inputsWith(kA), (testRoot() / "big").string(), &stats);
    INFO(stats.layout);
    checkOutputs(out);
    CHECK(contains(stats.layout,
                   target == "cortex-m7" ? "in PSRAM @0x60000000" : "in MPS_RAM @0x80000000"));
    MESSAGE(target << " big (" << stats.layout << "): build " << stats.buildSeconds << " s, QEMU "
                   << stats.runSeconds << " s");
  }

  BundleRunSpec tooBig = makeBundle("cortex-m4");
  tooBig.activationsSize = 20 * 1024 * 1024;
  Error e = expectError([&] { runBundle(tooBig, inputsWith(kA), (testRoot() / "big").string()); });
  CHECK(e.code() == ExitCode::DoesNotFit);
}

TEST_CASE("runBundle validates its inputs") {
  BundleRunSpec spec = makeBundle("host");
  std::string work = (testRoot() / "validate").string();

  auto missing = inputsWith(kA);
  missing.erase("b");
  Error m = expectError([&] { runBundle(spec, missing, work); });
  CHECK(m.code() == ExitCode::Usage);
  CHECK(contains(m.what(), "'b'"));

  auto extra = inputsWith(kA);
  extra["zzz"] = Tensor::fromFloats({1}, {1.0f});
  CHECK(expectError([&] { runBundle(spec, extra, work); }).code() == ExitCode::Usage);

  auto wrongShape = inputsWith(kA);
  wrongShape["a"] = Tensor::fromFloats({2}, {1.0f, 2.0f});
  CHECK(expectError([&] { runBundle(spec, wrongShape, work); }).code() == ExitCode::BadInputFile);

  BundleRunSpec badWeights = spec;
  badWeights.constantSize = 192;
  Error w = expectError([&] { runBundle(badWeights, inputsWith(kA), work); });
  CHECK(w.code() == ExitCode::BadInputFile);
  CHECK(contains(w.what(), "128 bytes"));

  BundleRunSpec badTarget = spec;
  badTarget.target = "cortex-m85";
  Error t = expectError([&] { runBundle(badTarget, inputsWith(kA), work); });
  CHECK(t.code() == ExitCode::Usage);
  CHECK(contains(t.what(), "cortex-m33"));

  BundleRunSpec noObject = spec;
  noObject.bundleDir = (testRoot() / "nowhere").string();
  CHECK(expectError([&] { runBundle(noObject, inputsWith(kA), work); }).code() ==
        ExitCode::BadInputFile);
}

TEST_CASE("a batch runs every sample in one program and stacks the outputs") {
  // Three samples of a (dyadic scalings of kA), b repeated: inputs [6,3]
  // for the [2,3] placeholders; outputs come back as y [6,3] and n [12].
  const std::vector<float> scales = {1.0f, 2.0f, -0.5f};
  std::vector<float> a, b;
  for (float scale : scales)
    for (int i = 0; i < 6; ++i) {
      a.push_back(kA[i] * scale);
      b.push_back(kB[i]);
    }
  std::map<std::string, Tensor> inputs = {{"a", Tensor::fromFloats({6, 3}, a)},
                                          {"b", Tensor::fromFloats({6, 3}, b)}};
  for (const std::string &target : {std::string("host"), std::string("cortex-m7")}) {
    CAPTURE(target);
    BundleRunSpec spec = makeBundle(target);
    spec.batch = scales.size();
    BundleRunStats stats;
    auto out = runBundle(spec, inputs, (testRoot() / "batch").string(), &stats);
    INFO(stats.output);
    const Tensor &y = out.at("y");
    const Tensor &n = out.at("n");
    CHECK(y.type.shape == Shape{6, 3});
    CHECK(n.type.shape == Shape{12});
    REQUIRE(y.bytes.size() == 3 * 24);
    REQUIRE(n.bytes.size() == 3 * 16);
    for (size_t s = 0; s < scales.size(); ++s) {
      for (int i = 0; i < 6; ++i) {
        float ai = kA[i] * scales[s];
        float expected = (ai + kB[i]) * kW[i % 4] + kBias + std::sqrt(kB[i]) + 1.0f;
        CHECK(y.data<float>()[s * 6 + i] == expected);
      }
      for (int i = 0; i < 4; ++i)
        CHECK(n.data<int32_t>()[s * 4 + i] == int32_t(kA[i] * scales[s] * 4.0f) - 3);
    }
  }

  // The inputs must hold exactly `batch` samples.
  BundleRunSpec spec = makeBundle("host");
  spec.batch = 2;
  Error e = expectError([&] { runBundle(spec, inputs, (testRoot() / "batch").string()); });
  CHECK(e.code() == ExitCode::BadInputFile);
  CHECK(contains(e.what(), "2 samples of"));
}
