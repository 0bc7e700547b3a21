// Text reports fit 100 columns by default (a split editor, a CI log), and
// --wide gives back what was left out; --html FILE works on every command
// with a report and is checked before any work; layer progress goes to
// stderr only. Issue 20: what a firmware engineer trips on.
#include "CliTestSupport.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace bundlefit::test;
namespace fs = std::filesystem;

namespace {

std::string tmp(const std::string &name) {
  fs::path path = fs::path(BUNDLEFIT_TEST_TMP) / name;
  fs::remove_all(path);
  return path.string();
}

/// stdout alone (stderr to a log, shown only on failure).
CommandResult runStdout(const std::string &arguments, const std::string &environment = "") {
  return runProgram(environment + " " + BUNDLEFIT_EXE, arguments, tmp("width.stderr"));
}

std::string longLines(const std::string &text, size_t width) {
  std::string found;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.size() > width)
      found += line + "\n";
  return found;
}

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

const std::string lenet = modelPath("lenet");
const std::string lenetInput = std::string(BUNDLEFIT_MODELS_DIR) + "/lenet.input.npy";

/// A profile of LeNet for the int8 commands.
std::string lenetProfile() {
  std::string profile = tmp("width_profile.yml");
  REQUIRE(runBundlefit("-q profile " + lenet + " " + lenetInput + " -o " + profile).exitCode == 0);
  return profile;
}

} // namespace

TEST_CASE("every command's text report fits 100 columns") {
  std::string csv = tmp("width.csv");
  std::ofstream(csv) << "id,lower,upper,size\nb0,0,3,4\nb1,3,9,4\nb2,0,9,4\n";
  std::string profile = lenetProfile();
  const std::string commands[] = {
      "inspect " + lenet,
      "plan " + lenet,
      "plan " + lenet + " --device rt1060",
      "devices",
      "devices --calibration",
      "plan-buffers " + csv + " --format csv",
      "fit " + lenet + " --device rt1060",
      "fit " + lenet + " --device lpc55s69",
      "fit " + lenet + " --device rt685",
      "pick " + lenet + " --device rt1060",
      "pick " + lenet + " --device lpc55s69",
      "pick " + lenet + " --device rt685",
      "compile " + lenet + " -o " + tmp("width_bundle"),
      "run " + lenet + " --input " + lenetInput + " --output-dir " + tmp("width_run") +
          " --compare",
      "profile " + lenet + " " + lenetInput + " -o " + tmp("width_profile2.yml"),
      "compare-quant " + lenet + " --load-profile " + profile + " " + lenetInput,
      "--help",
      "fit --help",
      "plan --help",
      "pick --help",
      "run --help",
      "plan-buffers --help",
  };
  for (const std::string &command : commands) {
    CAPTURE(command);
    CommandResult result = runStdout(command);
    CHECK(result.exitCode != 2); // 0, or 3 for a model that does not fit
    CHECK(!result.output.empty());
    CHECK(longLines(result.output, 100) == "");
  }
}

TEST_CASE("--wide and -v give back the columns and lines left out at 100") {
  CommandResult narrow = runStdout("fit " + lenet + " --device rt1060");
  REQUIRE(narrow.exitCode == 0);
  CHECK(narrow.output.find("(left out to fit 100 columns: base; --wide shows them)") !=
        std::string::npos);
  CHECK(narrow.output.find("0x20000000") == std::string::npos); // DTCM's base
  CommandResult wide = runStdout("fit " + lenet + " --device rt1060 --wide");
  REQUIRE(wide.exitCode == 0);
  CHECK(wide.output.find("--wide shows them") == std::string::npos);
  CHECK(wide.output.find("0x20000000") != std::string::npos);
  CHECK(longLines(wide.output, 100) != ""); // the notes, unwrapped
  CHECK(runStdout("fit " + lenet + " --device rt1060 -v").output == wide.output);
  CHECK(runStdout("--wide fit " + lenet + " --device rt1060").output == wide.output);
}

TEST_CASE("--html FILE on every command with a report") {
  std::string csv = tmp("html.csv");
  std::ofstream(csv) << "id,lower,upper,size\nb0,0,3,4\nb1,3,9,4\n";
  std::string profile = lenetProfile();
  struct Case {
    std::string command, marker; // marker: a cell of the page's table
  };
  const Case cases[] = {
      {"inspect " + lenet, "conv1_pool1"},
      {"devices", "rt1062"},
      {"plan-buffers " + csv + " --format csv", "lower bound"},
      {"plan " + lenet, "class=\"timeline\""},
      {"fit " + lenet + " --device rt1060", "class=\"regions\""},
      {"pick " + lenet + " --device rt1060", "class=\"variants\""},
      {"run " + lenet + " --input " + lenetInput + " --output-dir " + tmp("html_run"), "softmax"},
      {"profile " + lenet + " " + lenetInput + " -o " + tmp("html_profile.yml"), "<td>conv1</td>"},
      {"compare-quant " + lenet + " --load-profile " + profile + " " + lenetInput, "SNR"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.command);
    std::string page = tmp("report.html");
    CommandResult ok = runStdout(c.command + " --html " + page);
    CHECK(ok.exitCode == 0);
    std::string html = readText(page);
    CHECK(html.find("<!DOCTYPE html>") == 0);
    CHECK(html.find(c.marker) != std::string::npos);
    CHECK(html.rfind("</html>") != std::string::npos);

    // A bad path: one line naming the option and the path, exit 6, nothing
    // written (not even the --json file) and nothing on stdout.
    std::string json = tmp("report.json");
    CommandResult bad = runProgram(BUNDLEFIT_EXE, c.command + " --json " + json +
                                                      " --html /nonexistent/dir/r.html");
    CHECK(bad.exitCode == 6);
    CHECK(bad.output == "bundlefit: error: --html /nonexistent/dir/r.html: cannot write file\n");
    CHECK(!fs::exists(json));
  }
}

TEST_CASE("layer progress: on stderr when asked, stdout unchanged") {
  std::string plain = tmp("progress_plain.out");
  std::string shown = tmp("progress_shown.out");
  std::string err = tmp("progress.err");
  auto compile = [&](const std::string &env, const std::string &out, const std::string &stderrFile,
                     const std::string &flags = "") {
    std::string command = env + " " + BUNDLEFIT_EXE + flags + " compile " + lenet + " -o " +
                          tmp("progress_bundle") + " > " + out + " 2> " + stderrFile;
    return std::system(command.c_str());
  };
  REQUIRE(compile("", plain, tmp("progress_plain.err")) == 0);
  CHECK(readText(tmp("progress_plain.err")).find("layer ") == std::string::npos); // a pipe
  REQUIRE(compile("BUNDLEFIT_PROGRESS=1 BUNDLEFIT_PROGRESS_AFTER_MS=0", shown, err) == 0);
  std::string progress = readText(err);
  CHECK(progress.find("generate code: layer 1/6 conv1_pool1") != std::string::npos);
  CHECK(progress.find("generate code: layer 6/6 softmax") != std::string::npos);
  CHECK(readText(shown) == readText(plain));
  // -q: never.
  REQUIRE(compile("BUNDLEFIT_PROGRESS=1 BUNDLEFIT_PROGRESS_AFTER_MS=0", shown, err, " -q") == 0);
  CHECK(readText(err).find("layer ") == std::string::npos);
}
