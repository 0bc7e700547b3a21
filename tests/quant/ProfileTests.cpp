//===- ProfileTests.cpp - Recording, Glow's YAML, the parser's robustness --===//
#include "bundlefit/quant/Profile.h"

#include "bundlefit/support/Error.h"

#include <doctest/doctest.h>

#include <numeric>
#include <random>

using namespace bundlefit;

namespace {

Tensor floats(const std::vector<float> &values) {
  return Tensor::fromFloats({int64_t(values.size())}, values);
}

double total(const std::vector<double> &counts) {
  return std::accumulate(counts.begin(), counts.end(), 0.0);
}

/// parseProfile must either succeed or throw bundlefit::Error(BadInputFile)
/// naming the source; anything else fails the test.
void expectCleanOutcome(const std::string &text) {
  try {
    parseProfile(text, "fuzz.yaml");
  } catch (const Error &e) {
    CHECK(e.code() == ExitCode::BadInputFile);
    CHECK(std::string(e.what()).rfind("fuzz.yaml: ", 0) == 0);
  }
}

ProfileData sampleProfile() {
  ProfileData profile;
  profile.modelHash = 0x0123456789abcdefull;
  profile.modelName = "lenet.onnx";
  profile.samples = 3;
  profile.tensors.push_back({"data", 0.0f, 1.0f, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}});
  profile.tensors.push_back({"conv1:0 'x'", -0.123456789f, 3.0e-7f, std::vector<double>(10, 0.0)});
  profile.tensors.push_back({"fc", 0.1f, 0.1f, {1e9, 0, 0, 0, 0, 0, 0, 0, 0, 0}});
  return profile;
}

} // namespace

TEST_CASE("rebinning keeps every count and moves it to the overlapping bins") {
  std::vector<double> counts(10, 0.0);
  counts[0] = 7;
  counts[9] = 5;
  counts[4] = 3;
  std::vector<double> wider = rebinHistogram(counts, 0.0, 10.0, 0.0, 20.0);
  CHECK(total(wider) == 15); // 7 + 5 + 3
  CHECK(wider[0] == 7);      // [0,1) -> [0,2)
  CHECK(wider[2] == 3);      // [4,5) -> [4,6)
  CHECK(wider[4] == 5);      // [9,10) -> [8,10)
  // A bin straddling two new bins splits its count by overlap.
  std::vector<double> shifted = rebinHistogram(counts, 0.0, 10.0, -1.0, 19.0);
  CHECK(total(shifted) == 15);
  CHECK(shifted[0] + shifted[1] == 7);
  // A zero-width old range (a constant tensor so far) lands in one bin.
  std::vector<double> point(10, 0.0);
  point[0] = 4;
  std::vector<double> spread = rebinHistogram(point, 2.0, 2.0, 0.0, 10.0);
  CHECK(spread[2] == 4);
}

TEST_CASE("the recorder tracks min, max and a histogram that counts every value") {
  ProfileRecorder recorder;
  recorder.observe("a", floats({0.0f, 1.0f, 2.0f, 3.0f}));
  recorder.observe("b", floats({5.0f, 5.0f}));
  recorder.finishSample();
  recorder.observe("a", floats({-4.0f, 10.0f, 2.5f}));
  recorder.observe("b", floats({5.0f}));
  recorder.observe("ints", Tensor::fromInts({2}, {1, 2})); // not float: ignored
  recorder.observe("nan", floats({std::nanf("")}));        // nothing finite: ignored
  recorder.finishSample();
  ProfileData profile = recorder.result(42, "m.onnx");
  REQUIRE(profile.tensors.size() == 2);
  CHECK(profile.samples == 2);
  CHECK(profile.modelHash == 42);
  const TensorProfile &a = *profile.find("a");
  CHECK(a.min == -4.0f);
  CHECK(a.max == 10.0f);
  CHECK(a.histogram.size() == kProfileHistogramBins);
  CHECK(total(a.histogram) == 7);
  CHECK(a.histogram[9] == 1); // 10 is the last bin's right edge
  CHECK(a.histogram[0] == 1); // -4
  const TensorProfile &b = *profile.find("b");
  CHECK(b.min == 5.0f);
  CHECK(b.max == 5.0f);
  CHECK(total(b.histogram) == 3);
  CHECK(profile.find("ints") == nullptr);
}

TEST_CASE("a profile survives the YAML round trip exactly") {
  ProfileData profile = sampleProfile();
  std::string text = renderProfile(profile);
  CHECK(text.find("GraphPreLowerHash: 0x0123456789ABCDEF") != std::string::npos);
  CHECK(text.find("- NodeOutputName: 'data'") != std::string::npos);
  ProfileData back = parseProfile(text, "p.yaml");
  CHECK(back.modelHash == profile.modelHash);
  CHECK(back.modelName == "lenet.onnx");
  CHECK(back.samples == 3);
  REQUIRE(back.tensors.size() == profile.tensors.size());
  for (size_t i = 0; i < back.tensors.size(); ++i) {
    CHECK(back.tensors[i].name == profile.tensors[i].name);
    CHECK(back.tensors[i].min == profile.tensors[i].min); // bit-exact floats
    CHECK(back.tensors[i].max == profile.tensors[i].max);
    CHECK(back.tensors[i].histogram == profile.tensors[i].histogram);
  }
  CHECK(renderProfile(back) == text);
}

TEST_CASE("tensor names with line breaks and quotes survive the round trip") {
  // YAML folds a line break inside single quotes into a space, so such names
  // must go out double-quoted with escapes (found by fuzz/ProfileFuzzer.cpp).
  ProfileData profile = sampleProfile();
  profile.tensors[0].name = "two\nlines";
  profile.tensors[1].name = "tab\there, 'quote' \"double\" back\\slash\r\x7f";
  profile.modelName = "model\nname.onnx";
  std::string text = renderProfile(profile);
  CHECK(text.find("- NodeOutputName: \"two\\x0alines\"") != std::string::npos);
  ProfileData back = parseProfile(text, "p.yaml");
  REQUIRE(back.tensors.size() == profile.tensors.size());
  CHECK(back.tensors[0].name == profile.tensors[0].name);
  CHECK(back.tensors[1].name == profile.tensors[1].name);
  CHECK(back.modelName == profile.modelName);
  CHECK(renderProfile(back) == text);
}

TEST_CASE("a profile in Glow's own output style parses (two documents, no bundlefit extras)") {
  std::string glow = "---\n"
                     "GraphPreLowerHash: 0x00000000DEADBEEF\n"
                     "...\n"
                     "---\n"
                     "- NodeOutputName:  'conv1__1:0'\n"
                     "  Min:             -0.5\n"
                     "  Max:             2.25\n"
                     "  Histogram:       [ 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 3 ]\n"
                     "...\n";
  ProfileData data = parseProfile(glow, "glow.yaml");
  CHECK(data.modelHash == 0xDEADBEEFull);
  REQUIRE(data.tensors.size() == 1);
  CHECK(data.tensors[0].name == "conv1__1:0");
  CHECK(data.tensors[0].min == -0.5f);
  CHECK(data.modelName.empty());
}

TEST_CASE("malformed profiles fail with one BadInputFile line naming the file") {
  const char *cases[] = {
      "",
      "hello",
      "---\nGraphPreLowerHash: 0x12\n",                         // no tensor list
      "---\nGraphPreLowerHash: 12zz\n---\n[]\n",                // bad hash
      "---\nGraphPreLowerHash: 0x12345678901234567\n---\n[]\n", // > 64 bits
      "---\nGraphPreLowerHash: 0x1\n---\n- NodeOutputName: a\n  Min: 1\n  Max: 0\n  Histogram: "
      "[]\n",
      "---\nGraphPreLowerHash: 0x1\n---\n- NodeOutputName: a\n  Min: nan\n  Max: 0\n  Histogram: "
      "[]\n",
      "---\nGraphPreLowerHash: 0x1\n---\n- NodeOutputName: a\n  Min: 0\n  Max: 1e400\n  Histogram: "
      "[]\n",
      "---\nGraphPreLowerHash: 0x1\n---\n- NodeOutputName: a\n  Min: 0\n  Max: 1\n  Histogram: "
      "[-1]\n",
      "---\nGraphPreLowerHash: 0x1\n---\n- NodeOutputName: a\n  Min: 0\n  Max: 1\n",
      "---\nGraphPreLowerHash: 0x1\n---\n- NodeOutputName: [a]\n  Min: 0\n  Max: 1\n  Histogram: "
      "[]\n",
      "---\nGraphPreLowerHash: 0x1\n---\n- {NodeOutputName: a, Min: 0, Max: 1, Histogram: []}\n"
      "- {NodeOutputName: a, Min: 0, Max: 1, Histogram: []}\n", // duplicate
      "---\nGraphPreLowerHash: 0x1\n---\n{a: 1}\n",
      "---\nGraphPreLowerHash: [\n",
      "\t\x01\xff: : :\n",
  };
  for (const char *text : cases) {
    CAPTURE(text);
    CHECK_THROWS_AS(parseProfile(text, "bad.yaml"), Error);
    try {
      parseProfile(text, "bad.yaml");
    } catch (const Error &e) {
      CHECK(e.code() == ExitCode::BadInputFile);
      CHECK(std::string(e.what()).rfind("bad.yaml: ", 0) == 0);
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("deeply nested or random input never escapes as anything but Error") {
  expectCleanOutcome(std::string(100000, '['));
  expectCleanOutcome(std::string(5000, '{') + std::string(5000, '}'));
  std::string dashes;
  for (int i = 0; i < 3000; ++i)
    dashes += "- ";
  expectCleanOutcome(dashes + "x\n");
  std::string indented;
  for (int i = 0; i < 400; ++i)
    indented += std::string(size_t(i), ' ') + "a:\n";
  expectCleanOutcome(indented);

  // Mutations of a valid profile, and random bytes.
  std::string valid = renderProfile(sampleProfile());
  std::mt19937 rng(1234);
  for (int round = 0; round < 1500; ++round) {
    std::string text = valid;
    int edits = 1 + int(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
      case 0:
        text[at] = char(rng() % 256);
        break;
      case 1:
        text.erase(at, 1 + rng() % 10);
        break;
      default:
        text.insert(at, 1, "-:[]{}'\"#&*!|>%@`,?\n 0"[rng() % 23]);
        break;
      }
      if (text.empty())
        text = "x";
    }
    expectCleanOutcome(text);
  }
  for (int round = 0; round < 300; ++round) {
    std::string text(size_t(rng() % 200), ' ');
    for (char &c : text)
      c = char(rng() % 256);
    expectCleanOutcome(text);
  }
}

TEST_CASE("the model hash is FNV-1a 64") {
  CHECK(fnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a64("foobar") == 0x85944171f73967e8ull);
}
