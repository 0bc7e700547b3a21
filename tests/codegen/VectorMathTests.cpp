// Accuracy of the polynomial exp and the activations built on it
// (src/kernels/vector_math.h), through the exported kernels, against libm's
// double-precision functions rounded to float: a stride through every float
// bit pattern, dense runs where the functions change regime, and the edge
// cases (+-inf, NaN, -0, subnormals, saturation).
#include "PositionalKernels.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// Distance in representable floats (0 when both are NaN or equal).
double ulpDistance(float got, float want) {
  if (std::isnan(got) || std::isnan(want))
    return std::isnan(got) && std::isnan(want) ? 0.0 : 1e30;
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? int64_t(INT32_MIN) - i : int64_t(i);
  };
  return std::fabs(double(ordered(got) - ordered(want)));
}

struct Function {
  const char *name;
  void (*kernel)(const float *, float *, int32_t);
  double (*reference)(double);
  double maxUlp; // the bound vector_math.h states, for normal results
};

void unaryKernel(const float *in, float *out, int32_t n, int32_t op) {
  bf_unary_f32(in, out, n, op, 1.0f, 0.0f);
}

const Function kFunctions[] = {
    {"exp", [](const float *i, float *o, int32_t n) { bf_exp_f32(i, o, n, 0, 0); },
     [](double x) { return std::exp(x); }, 2},
    {"sigmoid", [](const float *i, float *o, int32_t n) { bf_sigmoid_f32(i, o, n, 0, 0); },
     [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 3},
    {"silu", [](const float *i, float *o, int32_t n) { unaryKernel(i, o, n, BF_UNARY_SILU); },
     [](double x) { return x / (1.0 + std::exp(-x)); }, 3},
    {"tanh", [](const float *i, float *o, int32_t n) { bf_tanh_f32(i, o, n, 0, 0); },
     [](double x) { return std::tanh(x); }, 3},
    {"elu", [](const float *i, float *o, int32_t n) { bf_elu_f32(i, o, n, 1.0f, 0); },
     [](double x) { return x >= 0 ? x : std::expm1(x); }, 2},
    {"erf", [](const float *i, float *o, int32_t n) { unaryKernel(i, o, n, BF_UNARY_ERF); },
     [](double x) { return std::erf(x); }, 1},
};

/// Largest error over `inputs`; where the reference is subnormal (or 0) the
/// error is held to 2 subnormal steps (2^-148) instead.
void checkAccuracy(const Function &f, const std::vector<float> &inputs) {
  std::vector<float> got(inputs.size());
  f.kernel(inputs.data(), got.data(), int32_t(inputs.size()));
  double worst = 0, worstTiny = 0;
  float worstAt = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const float want = float(f.reference(double(inputs[i])));
    if (std::fabs(want) < std::numeric_limits<float>::min()) {
      worstTiny = std::max(worstTiny, std::fabs(double(got[i]) - double(want)));
      continue;
    }
    const double d = ulpDistance(got[i], want);
    if (d > worst) {
      worst = d;
      worstAt = inputs[i];
    }
  }
  INFO(std::string(f.name) << ": " << worst << " ULP at x = " << worstAt);
  CHECK(worst <= f.maxUlp);
  CHECK(worstTiny <= std::ldexp(1.0, -148));
  MESSAGE(std::string(f.name) << ": max " << worst << " ULP over " << inputs.size()
                              << " inputs, subnormal results within " << worstTiny);
}

} // namespace

TEST_CASE("vector math: exp, sigmoid, SiLU, tanh, ELU, erf within their ULP bounds of libm") {
  std::vector<float> inputs;
  // Every 4099th bit pattern: all exponents, both signs, NaN payloads, inf.
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4099)
    inputs.push_back(fromBits(uint32_t(u)));
  // Dense runs around 0, 1, the regime edges and the saturation points.
  for (float centre : {0.0f, 0.5f, 0.875f, 1.0f, 2.0f, 3.92f, 9.0f, 17.0f, 20.0f, 24.0f, 87.3f,
                       88.72f, 103.9f, 110.0f}) {
    for (float sign : {1.0f, -1.0f}) {
      float x = sign * centre;
      for (int i = 0; i < 20000; ++i) {
        inputs.push_back(x);
        x = std::nextafter(x, std::numeric_limits<float>::infinity());
      }
    }
  }
  for (const Function &f : kFunctions) {
    checkAccuracy(f, inputs);
  }
}

TEST_CASE("vector math: edge cases") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float denorm = std::numeric_limits<float>::denorm_min() * 5;
  const std::vector<float> x = {-inf, inf, nan, -0.0f, 0.0f, denorm, -denorm, 200.0f, -200.0f};
  std::vector<float> y(x.size());

  bf_exp_f32(x.data(), y.data(), int32_t(x.size()), 0, 0);
  CHECK(y[0] == 0.0f);
  CHECK(y[1] == inf);
  CHECK(std::isnan(y[2]));
  CHECK(y[3] == 1.0f);
  CHECK(y[4] == 1.0f);
  CHECK(y[5] == 1.0f);
  CHECK(y[6] == 1.0f);
  CHECK(y[7] == inf);
  CHECK(y[8] == 0.0f);

  bf_sigmoid_f32(x.data(), y.data(), int32_t(x.size()), 0, 0);
  CHECK(y[0] == 0.0f);
  CHECK(y[1] == 1.0f);
  CHECK(std::isnan(y[2]));
  CHECK(y[3] == 0.5f);
  CHECK(y[7] == 1.0f);
  CHECK(y[8] == 0.0f);

  bf_tanh_f32(x.data(), y.data(), int32_t(x.size()), 0, 0);
  CHECK(y[0] == -1.0f);
  CHECK(y[1] == 1.0f);
  CHECK(std::isnan(y[2]));
  CHECK((y[3] == 0.0f && std::signbit(y[3]))); // tanh(-0) = -0
  CHECK((y[4] == 0.0f && !std::signbit(y[4])));
  CHECK(y[5] == denorm); // tanh x = x for tiny x
  CHECK(y[6] == -denorm);

  bf_elu_f32(x.data(), y.data(), int32_t(x.size()), 1.0f, 0);
  CHECK(y[0] == -1.0f);
  CHECK(y[1] == inf);
  CHECK(std::isnan(y[2]));
  CHECK((y[3] == 0.0f && std::signbit(y[3])));
  CHECK(y[6] == -denorm); // e^x - 1 = x for tiny x
  CHECK(y[8] == -1.0f);

  bf_unary_f32(x.data(), y.data(), int32_t(x.size()), BF_UNARY_SILU, 0, 0);
  CHECK((y[0] == 0.0f && std::signbit(y[0]))); // the limit, where numpy's x * sigmoid(x) is NaN
  CHECK(y[1] == inf);
  CHECK(std::isnan(y[2]));
  CHECK(y[3] == 0.0f);
  CHECK(y[7] == 200.0f);
  CHECK((y[8] == 0.0f && std::signbit(y[8])));

  bf_unary_f32(x.data(), y.data(), int32_t(x.size()), BF_UNARY_ERF, 0, 0);
  CHECK(y[0] == -1.0f);
  CHECK(y[1] == 1.0f);
  CHECK(std::isnan(y[2]));
  CHECK((y[3] == 0.0f && std::signbit(y[3]))); // erf(-0) = -0
  CHECK((y[4] == 0.0f && !std::signbit(y[4])));
  CHECK(y[5] > 0.0f);
  CHECK(y[6] == -y[5]); // odd
  CHECK(y[7] == 1.0f);
  CHECK(y[8] == -1.0f);
}

TEST_CASE("vector math: Gelu (erf and tanh forms) against the double-precision formulas") {
  // Relative to |Gelu(x)| + |x| / 2: the formula's 1 + erf cancels for
  // negative x, so there the error is measured on the scale of the terms
  // that cancel (whatever erf's accuracy: it did with libm too).
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 1.0f / 64)
    x.push_back(v);
  std::vector<float> y(x.size());
  for (float approx : {0.0f, 1.0f}) {
    bf_unary_f32(x.data(), y.data(), int32_t(x.size()), BF_UNARY_GELU, approx, 0);
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double want =
          approx != 0.0f
              ? 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
              : 0.5 * v * (1.0 + std::erf(v * 0.70710678118654752));
      worst = std::max(worst, std::fabs(y[i] - want) / (std::fabs(want) + 0.5 * std::fabs(v)));
    }
    INFO("approximate " << approx << ": " << worst / std::ldexp(1.0, -24) << " x 2^-24");
    CHECK(worst <= 4 * std::ldexp(1.0, -24));
  }
}

TEST_CASE("vector math: fused SiLU and Sigmoid in a convolution match the unary kernels") {
  // The activation loops of bf_activate_array (one per kind) and the unary
  // kernels must agree bit for bit: a 1x1 convolution with weight 1 is the
  // identity, so its fused activation is the activation of the input.
  std::vector<float> x(64), want(64), got(64);
  for (int i = 0; i < 64; ++i)
    x[i] = -12.0f + 0.37f * float(i);
  const float one = 1.0f;
  kernel_tests::conv2d(x.data(), &one, nullptr, got.data(), 1, 1, 1, 64, 1, 1, 64, 1, 1, 1, 1, 0, 0,
                       1, 1, 1, BF_ACT_SILU, 0, 0);
  bf_unary_f32(x.data(), want.data(), 64, BF_UNARY_SILU, 0, 0);
  CHECK(got == want);
  kernel_tests::conv2d(x.data(), &one, nullptr, got.data(), 1, 1, 1, 64, 1, 1, 64, 1, 1, 1, 1, 0, 0,
                       1, 1, 1, BF_ACT_SIGMOID, 0, 0);
  bf_sigmoid_f32(x.data(), want.data(), 64, 0, 0);
  CHECK(got == want);
}
