//===- FormatsTest.cpp - Glow traces and MiniMalloc CSV in and out --------===//
#include "SkipTest.h"
#include "TestUtil.h"

#include "bundlefit/planner/formats/GlowTrace.h"
#include "bundlefit/planner/formats/MiniMallocCsv.h"
#include "bundlefit/planner/formats/PerfectPacking.h"

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace bundlefit::planner;
using bundlefit::planner::test::dataDir;
using bundlefit::planner::test::requireValid;

TEST_CASE("Glow trace: event indices become steps, ALIGN applies") {
  std::istringstream in("# a comment\n"
                        "MODEL m1\nALIGN 64\n"
                        "ALLOC 1 100\nALLOC 2 10\nFREE 1\nALLOC 3 64\nFREE 2\nFREE 3\n"
                        "MEM 192\nEFF 1.000000\n"
                        "MODEL m2\nALIGN 32\nALLOC 7 5\nFREE 7\n");
  std::string error;
  auto models = formats::parseGlowTraces(in, &error);
  REQUIRE_MESSAGE(models, error);
  REQUIRE(models->size() == 2);
  const formats::GlowTraceModel &m = (*models)[0];
  CHECK(m.name == "m1");
  CHECK(m.glowArena == 192); // the trace's MEM line
  CHECK(m.glowEfficiency == doctest::Approx(1.0));
  REQUIRE(m.problem.buffers.size() == 3);
  // ALLOC at event i, FREE at event j: live on [i, j).
  CHECK(m.problem.buffers[0].first == 0);
  CHECK(m.problem.buffers[0].last == 1);
  CHECK(m.problem.buffers[1].first == 1);
  CHECK(m.problem.buffers[1].last == 3);
  CHECK(m.problem.buffers[2].first == 3);
  CHECK(m.problem.buffers[2].last == 4);
  CHECK(m.problem.buffers[2].id == 3);
  CHECK(m.problem.buffers[0].alignment == 64);
  CHECK(computeLowerBound(m.problem) == 192); // event 1: 100 -> 128 + 10 -> 64
  CHECK((*models)[1].problem.buffers[0].alignment == 32);
  CHECK((*models)[1].problem.buffers[0].first == 0);
  CHECK((*models)[1].problem.buffers[0].last == 0);
}

TEST_CASE("Glow trace errors name the line") {
  std::string error;
  std::istringstream unknown("MODEL m\nALIGN 64\nFREE 3\n");
  CHECK_FALSE(formats::parseGlowTraces(unknown, &error));
  CHECK(error.find("line 3") != std::string::npos);
  std::istringstream leak("MODEL m\nALLOC 1 4\n");
  CHECK_FALSE(formats::parseGlowTraces(leak, &error));
  CHECK(error.find("never freed") != std::string::npos);
  std::istringstream orphan("ALLOC 1 4\n");
  CHECK_FALSE(formats::parseGlowTraces(orphan, &error));
}

TEST_CASE("MiniMalloc CSV: half-open lifetimes and names") {
  std::istringstream in("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\n");
  auto csv = formats::parseMiniMallocCsv(in);
  REQUIRE(csv);
  REQUIRE(csv->problem.buffers.size() == 3);
  CHECK(csv->names[1] == "b2");
  CHECK(csv->problem.buffers[0].first == 0);
  CHECK(csv->problem.buffers[0].last == 2);
  CHECK(csv->problem.buffers[1].first == 3);
  CHECK(csv->offsets.empty());
  CHECK(computeLowerBound(csv->problem) == 8);
}

TEST_CASE("MiniMalloc CSV: a written solution reads back the same") {
  std::istringstream in("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\n");
  auto csv = formats::parseMiniMallocCsv(in);
  REQUIRE(csv);
  Plan plan = planMemory(csv->problem);
  requireValid(csv->problem, plan);
  std::ostringstream out;
  formats::writeMiniMallocCsv(out, csv->problem, plan, csv->names);
  CHECK(out.str().rfind("id,lower,upper,size,offset\nb1,0,3,4,", 0) == 0);
  std::istringstream back(out.str());
  auto again = formats::parseMiniMallocCsv(back);
  REQUIRE(again);
  CHECK(again->offsets == plan.offsets);
  CHECK(again->names == csv->names);
}

TEST_CASE("MiniMalloc CSV: a written problem reads back the same, with no offsets") {
  Problem p;
  p.buffers = {{0, 4, 1, 0, 2}, {1, 7, 1, 3, 8}, {2, 5, 1, 0, 8}};
  std::ostringstream out;
  formats::writeMiniMallocProblemCsv(out, p);
  CHECK(out.str() == "id,lower,upper,size\n0,0,3,4\n1,3,9,7\n2,0,9,5\n");
  std::istringstream back(out.str());
  auto again = formats::parseMiniMallocCsv(back);
  REQUIRE(again);
  CHECK(again->offsets.empty());
  REQUIRE(again->problem.buffers.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(again->problem.buffers[i].size == p.buffers[i].size);
    CHECK(again->problem.buffers[i].first == p.buffers[i].first);
    CHECK(again->problem.buffers[i].last == p.buffers[i].last);
  }
}

TEST_CASE("MiniMalloc CSV errors") {
  std::string error;
  std::istringstream noColumn("id,lower,size\n");
  CHECK_FALSE(formats::parseMiniMallocCsv(noColumn, &error));
  CHECK(error.find("upper") != std::string::npos);
  std::istringstream badNumber("id,lower,upper,size\nx,0,z,4\n");
  CHECK_FALSE(formats::parseMiniMallocCsv(badNumber, &error));
  CHECK(error.find("line 2") != std::string::npos);
  std::istringstream empty("id,lower,upper,size\nx,5,5,4\n");
  CHECK_FALSE(formats::parseMiniMallocCsv(empty, &error));
}

TEST_CASE("all 71 Glow traces plan at their lower bound" *
          doctest::test_suite("needs_planner_data")) {
  std::ifstream in(dataDir() / "glow_memory_traces.txt");
  if (!in)
    BUNDLEFIT_SKIP_TEST("no benchmark data at " << dataDir());
  std::string error;
  auto models = formats::parseGlowTraces(in, &error);
  REQUIRE_MESSAGE(models, error);
  CHECK(models->size() == 71); // the MODEL lines of the shared trace file
  int glowAtBound = 0;
  for (const formats::GlowTraceModel &m : *models) {
    Plan plan = planMemory(m.problem);
    CAPTURE(m.name);
    requireValid(m.problem, plan);
    CHECK(plan.arenaSize == plan.lowerBound);
    CHECK(plan.lowerBound <= m.glowArena);
    glowAtBound += m.glowArena == plan.lowerBound;
  }
  CHECK(glowAtBound == 70); // Glow misses the bound on resnet50_v2.onnx only.
}

TEST_CASE("MiniMalloc benchmark files parse" * doctest::test_suite("needs_planner_data")) {
  // Rows: the buffers in each of MiniMalloc's challenging instances (wc -l of the files, less
  // the header).
  const std::pair<const char *, size_t> files[] = {{"A.1048576.csv", 154}, {"B.1048576.csv", 170},
                                                   {"C.1048576.csv", 203}, {"D.1048576.csv", 213},
                                                   {"E.1048576.csv", 215}, {"F.1048576.csv", 296}};
  for (auto [name, rows] : files) {
    std::ifstream in(dataDir() / "minimalloc" / name);
    if (!in)
      BUNDLEFIT_SKIP_TEST("no benchmark data at " << dataDir());
    auto csv = formats::parseMiniMallocCsv(in);
    REQUIRE(csv);
    CHECK(csv->problem.buffers.size() == rows);
    CHECK(computeLowerBound(csv->problem) <= 1048576); // the capacity each file is named for
  }
}

TEST_CASE("MiniMalloc CSV: out-of-range fields are errors naming the line and field") {
  auto errorOf = [](const std::string &rows) {
    std::istringstream in("id,lower,upper,size\nok,0,2,8\n" + rows);
    std::string error;
    CHECK_FALSE(formats::parseMiniMallocCsv(in, &error));
    return error;
  };
  // Steps are ints: a lifetime past 2^31 used to be truncated into a crash.
  std::string late = errorOf("b,0,2147483648,4\n");
  CHECK(late.find("line 3") != std::string::npos);
  CHECK(late.find("'upper'") != std::string::npos);
  std::string negative = errorOf("b,0,1,-100\n");
  CHECK(negative.find("'size'") != std::string::npos);
  CHECK(errorOf("b,-5,1,1x\n").find("'size'") != std::string::npos);
  CHECK(errorOf("b,0,99999999999999999999,4\n").find("'upper'") != std::string::npos);
  // Two halves of 2^62 do not add up to something that wraps.
  std::string huge = errorOf("h1,0,2,2305843009213693952\nh2,0,2,2305843009213693952\n");
  CHECK(huge.find("line 4") != std::string::npos);
  CHECK(huge.find("2^62") != std::string::npos);
  CHECK(errorOf("b,3,3,4\n").find("'upper'") != std::string::npos);
}

TEST_CASE("Glow trace: signed or oversized byte counts are errors naming the line") {
  auto errorOf = [](const std::string &text) {
    std::istringstream in(text);
    std::string error;
    CHECK_FALSE(formats::parseGlowTraces(in, &error));
    return error;
  };
  // ">> uint64_t" used to read -100 as 2^64 - 100.
  std::string negative = errorOf("MODEL m\nALIGN 64\nALLOC 1 -100\nFREE 1\n");
  CHECK(negative.find("line 3") != std::string::npos);
  CHECK(negative.find("ALLOC size") != std::string::npos);
  std::string huge = errorOf("MODEL m\nALLOC 1 9223372036854775807\nALLOC 2 9223372036854775807\n"
                             "FREE 1\nFREE 2\n");
  CHECK(huge.find("line 2") != std::string::npos);
  std::string sum = errorOf("MODEL m\nALIGN 64\nALLOC 1 3458764513820540928\n"
                            "ALLOC 2 3458764513820540928\nFREE 1\nFREE 2\n");
  CHECK(sum.find("line 4") != std::string::npos);
  CHECK(sum.find("2^62") != std::string::npos);
  CHECK(errorOf("MODEL m\nALIGN -1\n").find("ALIGN") != std::string::npos);
}

TEST_CASE("perfect packings: every step has the strip's height live, so the bound is the optimum") {
  for (formats::PackingFamily family : formats::allPackingFamilies()) {
    Problem p = formats::perfectPackingProblem(3000, family, 7);
    std::string name = formats::toString(family);
    CAPTURE(name);
    // About n buffers: the last step's births go over it, never far.
    CHECK(p.buffers.size() >= 3000);
    CHECK(p.buffers.size() < 3300);
    int steps = 0;
    for (const Buffer &b : p.buffers) {
      CHECK(b.first <= b.last);
      CHECK(b.size > 0);
      CHECK(b.alignment == 1);
      steps = std::max(steps, b.last + 1);
      if (family == formats::PackingFamily::PowerOfTwo)
        CHECK((b.size & (b.size - 1)) == 0);
    }
    // Live bytes per step, every step: the strip, no more, no less.
    std::vector<int64_t> live(size_t(steps) + 1, 0);
    for (const Buffer &b : p.buffers) {
      live[size_t(b.first)] += int64_t(b.size);
      live[size_t(b.last) + 1] -= int64_t(b.size);
    }
    int64_t running = 0;
    for (int s = 0; s < steps; ++s) {
      running += live[size_t(s)];
      REQUIRE(running == int64_t(1) << 24);
    }
    CHECK(computeLowerBound(p) == uint64_t(1) << 24);
    // Deterministic from the seed; another seed, another problem.
    Problem again = formats::perfectPackingProblem(3000, family, 7);
    Problem other = formats::perfectPackingProblem(3000, family, 8);
    CHECK(again.buffers.size() == p.buffers.size());
    bool same = true, differs = other.buffers.size() != p.buffers.size();
    for (size_t i = 0; i < p.buffers.size() && i < other.buffers.size(); ++i) {
      same &= again.buffers[i].size == p.buffers[i].size &&
              again.buffers[i].first == p.buffers[i].first &&
              again.buffers[i].last == p.buffers[i].last;
      differs |= other.buffers[i].size != p.buffers[i].size;
    }
    CHECK(same);
    CHECK(differs);
  }
  formats::PackingFamily family;
  CHECK(formats::packingFamilyFromString("long-lived", family));
  CHECK((family == formats::PackingFamily::LongLived));
  CHECK_FALSE(formats::packingFamilyFromString("normal", family));
}

TEST_CASE("perfect packings: the families differ where they say they do") {
  auto mean = [](const Problem &p, bool lifetime) {
    double sum = 0;
    for (const Buffer &b : p.buffers)
      sum += lifetime ? double(b.last - b.first + 1) : double(b.size);
    return sum / double(p.buffers.size());
  };
  auto longest = [](const Problem &p) {
    int most = 0;
    for (const Buffer &b : p.buffers)
      most = std::max(most, b.last - b.first + 1);
    return most;
  };
  Problem uniform = formats::perfectPackingProblem(5000, formats::PackingFamily::Uniform, 3);
  Problem longLived = formats::perfectPackingProblem(5000, formats::PackingFamily::LongLived, 3);
  Problem heavy = formats::perfectPackingProblem(5000, formats::PackingFamily::HeavyTailed, 3);
  CHECK(longest(uniform) <= 16);
  CHECK(longest(longLived) >= 64);
  CHECK(longest(heavy) > 16);
  // Heavy tails: many small buffers and a few very large ones.
  uint64_t largest = 0;
  for (const Buffer &b : heavy.buffers)
    largest = std::max(largest, b.size);
  CHECK(double(largest) > 20 * mean(heavy, false));
  CHECK(mean(uniform, true) > 4);
}
