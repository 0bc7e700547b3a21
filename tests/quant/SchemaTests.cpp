//===- SchemaTests.cpp - Glow's schemas and TFLM's weight parameters -------===//
#include "bundlefit/quant/QuantizationSchema.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

using namespace bundlefit;

TEST_CASE("schema names are Glow's spellings") {
  QuantSchema schema;
  CHECK(parseQuantSchema("symmetric_with_power2_scale", schema));
  CHECK(schema == QuantSchema::SymmetricWithPower2Scale);
  CHECK(parseQuantSchema("symmetric_with_uint8", schema));
  CHECK(schema == QuantSchema::SymmetricWithUInt8);
  CHECK_FALSE(parseQuantSchema("Asymmetric", schema));
  CHECK(std::string(quantSchemaName(QuantSchema::Asymmetric)) == "asymmetric");
  CHECK(quantSchemaNames().size() == 4);
}

TEST_CASE("asymmetric: the range maps onto [-128, 127], real 0 exact") {
  ScaleZeroPoint p = chooseQuantParams(-1.0f, 3.0f, QuantSchema::Asymmetric);
  CHECK(p.scale == doctest::Approx(4.0 / 255.0));
  CHECK(p.zeroPoint == -64); // -128 + 1 / (4/255) = -64.25
  // A positive-only range is widened to include 0: 0 -> -128.
  p = chooseQuantParams(0.5f, 2.0f, QuantSchema::Asymmetric);
  CHECK(p.scale == doctest::Approx(2.0 / 255.0));
  CHECK(p.zeroPoint == -128);
  // Negative-only: 0 -> 127.
  p = chooseQuantParams(-2.0f, -0.5f, QuantSchema::Asymmetric);
  CHECK(p.zeroPoint == 127);
}

TEST_CASE("symmetric: zero point 0, the larger side decides the scale") {
  ScaleZeroPoint p = chooseQuantParams(-1.0f, 3.0f, QuantSchema::Symmetric);
  CHECK(p.zeroPoint == 0);
  CHECK(p.scale == doctest::Approx(3.0 / 127.0));
  p = chooseQuantParams(-4.0f, 1.0f, QuantSchema::Symmetric);
  CHECK(p.zeroPoint == 0);
  CHECK(p.scale == doctest::Approx(4.0 / 128.0));
}

TEST_CASE("symmetric_with_uint8: positive ranges use zero point -128, others fall back") {
  ScaleZeroPoint p = chooseQuantParams(0.0f, 2.55f, QuantSchema::SymmetricWithUInt8);
  CHECK(p.zeroPoint == -128);
  CHECK(p.scale == doctest::Approx(0.01));
  p = chooseQuantParams(-1.0f, 2.0f, QuantSchema::SymmetricWithUInt8);
  CHECK(p.zeroPoint == 0);
  CHECK(p.scale == doctest::Approx(2.0 / 127.0));
}

TEST_CASE("symmetric_with_power2_scale rounds the symmetric scale up to 2^k") {
  ScaleZeroPoint p = chooseQuantParams(-1.0f, 3.0f, QuantSchema::SymmetricWithPower2Scale);
  CHECK(p.zeroPoint == 0);
  CHECK(p.scale == 0.03125f); // 3/127 = 0.0236 -> 2^-5
  CHECK(isPowerOfTwo(p.scale));
  CHECK_FALSE(isPowerOfTwo(0.03f));
  CHECK_FALSE(isPowerOfTwo(0.0f));
}

TEST_CASE("a constant-zero tensor gets Glow's fallback scale 0.1") {
  ScaleZeroPoint p = chooseQuantParams(0.0f, 0.0f, QuantSchema::Asymmetric);
  CHECK(p.scale == doctest::Approx(0.1));
  CHECK(p.zeroPoint == 0);
}

TEST_CASE("every schema represents 0 exactly and covers the profiled range") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-50.0f, 50.0f);
  for (QuantSchema schema :
       {QuantSchema::Asymmetric, QuantSchema::Symmetric, QuantSchema::SymmetricWithUInt8,
        QuantSchema::SymmetricWithPower2Scale}) {
    for (int i = 0; i < 500; ++i) {
      float a = dist(rng), b = dist(rng);
      if (i % 3 == 0)
        a = std::abs(a), b = std::abs(b); // positive-only ranges
      float lo = std::min(a, b), hi = std::max(a, b);
      ScaleZeroPoint p = chooseQuantParams(lo, hi, schema);
      CAPTURE(quantSchemaName(schema));
      CAPTURE(lo);
      CAPTURE(hi);
      REQUIRE(p.scale > 0);
      REQUIRE(p.zeroPoint >= -128);
      REQUIRE(p.zeroPoint <= 127);
      CHECK(dequantizeValue(quantizeValue(0.0f, p), p) == 0.0f);
      // The ends of the range come back within half a step (plus float noise).
      for (float x : {lo, hi})
        CHECK(std::abs(dequantizeValue(quantizeValue(x, p), p) - x) <= p.scale * 0.5001f + 1e-6f);
      if (schema != QuantSchema::Asymmetric &&
          !(schema == QuantSchema::SymmetricWithUInt8 && lo >= 0))
        CHECK(p.zeroPoint == 0);
    }
  }
}

TEST_CASE("weights: symmetric in [-127, 127], TFLM's spec") {
  ScaleZeroPoint p = chooseWeightParams(1.27f, false);
  CHECK(p.zeroPoint == 0);
  CHECK(p.scale == doctest::Approx(0.01));
  CHECK(quantizeValue(-1.27f, p, -127, 127) == -127);
  CHECK(quantizeValue(5.0f, p, -127, 127) == 127);
  p = chooseWeightParams(1.27f, true);
  CHECK(p.scale == 0.015625f); // 0.01 -> 2^-6
  CHECK(chooseWeightParams(0.0f, false).scale == 1.0f);
}

TEST_CASE("quantizeValue rounds half away from zero, then clamps") {
  ScaleZeroPoint unit{1.0f, 0};
  CHECK(quantizeValue(0.5f, unit) == 1);
  CHECK(quantizeValue(-0.5f, unit) == -1);
  CHECK(quantizeValue(1.49f, unit) == 1);
  CHECK(quantizeValue(1000.0f, unit) == 127);
  CHECK(quantizeValue(-1000.0f, unit) == -128);
  CHECK(quantizeValue(0.5f, {1.0f, 10}) == 11);
  CHECK(dequantizeValue(11, {0.5f, 10}) == 0.5f);
}
