// int8 kernels (src/kernels/int8_*.c compiled natively) against hand-computed
// TFLM arithmetic (exact) and double-precision references (within one
// quantization step where the kernels round twice).
#include "bundlefit_kernels_int8.h"
extern "C" {
#include "int8_util.h" // bf_i8_requantize, bf_i8_clamp: what every int8 kernel rounds with
}

#include "bundlefit/ops/Int8Params.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

using namespace bundlefit;

namespace {

using I8 = std::vector<int8_t>;

// The convolution entry points take abi.h's structs; these build them from
// the positional lists the cases below were written with.
bf_conv_params convParams(int32_t N, int32_t C, int32_t H, int32_t W, int32_t M, int32_t OH,
                          int32_t OW, int32_t KH, int32_t KW, int32_t sH, int32_t sW, int32_t pT,
                          int32_t pL, int32_t dH, int32_t dW, int32_t groups) {
  return {N, C, H, W, M, OH, OW, KH, KW, sH, sW, pT, pL, dH, dW, groups};
}

void conv2dS8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out, int32_t N,
              int32_t C, int32_t H, int32_t W, int32_t M, int32_t OH, int32_t OW, int32_t KH,
              int32_t KW, int32_t sH, int32_t sW, int32_t pT, int32_t pL, int32_t dH, int32_t dW,
              int32_t groups, int32_t inOff, int32_t outOff, const int32_t *outMult,
              const int32_t *outShift, int32_t flags, int32_t actMin, int32_t actMax,
              const int8_t *bias8, const int32_t *biasMult, const int32_t *biasShift) {
  const bf_conv_params conv =
      convParams(N, C, H, W, M, OH, OW, KH, KW, sH, sW, pT, pL, dH, dW, groups);
  const bf_quant_params quant = {inOff, outOff, flags, actMin, actMax};
  bf_conv2d_s8(in, w, bias, out, &conv, &quant, outMult, outShift, bias8, biasMult, biasShift,
               nullptr);
}

void depthwiseS8(const int8_t *in, const int8_t *w, const int32_t *bias, int8_t *out, int32_t N,
                 int32_t C, int32_t H, int32_t W, int32_t chMult, int32_t OH, int32_t OW,
                 int32_t KH, int32_t KW, int32_t sH, int32_t sW, int32_t pT, int32_t pL, int32_t dH,
                 int32_t dW, int32_t inOff, int32_t outOff, const int32_t *outMult,
                 const int32_t *outShift, int32_t flags, int32_t actMin, int32_t actMax,
                 const int8_t *bias8, const int32_t *biasMult, const int32_t *biasShift) {
  const bf_conv_params conv =
      convParams(N, C, H, W, C * chMult, OH, OW, KH, KW, sH, sW, pT, pL, dH, dW, C);
  const bf_quant_params quant = {inOff, outOff, flags, actMin, actMax};
  bf_depthwise_conv2d_s8(in, w, bias, out, &conv, &quant, outMult, outShift, bias8, biasMult,
                         biasShift, nullptr);
}

I8 randomI8(size_t n, unsigned seed, int lo = -128, int hi = 127) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  I8 v(n);
  for (int8_t &x : v)
    x = int8_t(dist(rng));
  return v;
}

/// round-half-away(real / scale) + zp, clamped: the exact quantization.
int quantizeRef(double real, double scale, int zp, int lo = -128, int hi = 127) {
  const double q = std::round(real / scale) + zp;
  return int(std::max<double>(lo, std::min<double>(hi, q)));
}

struct Requant {
  int32_t mult;
  int shift;
};
Requant requant(double real) {
  Requant r;
  quantizeMultiplier(real, r.mult, r.shift);
  return r;
}

/// Every element within `tolerance` steps; returns the largest difference.
int maxStepDiff(const I8 &got, const std::vector<int> &want, int tolerance = 1) {
  REQUIRE(got.size() == want.size());
  int worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << int(got[i]) << ", want " << want[i]);
    CHECK(std::abs(int(got[i]) - want[i]) <= tolerance);
    worst = std::max(worst, std::abs(int(got[i]) - want[i]));
  }
  return worst;
}

/// The int8 kernels' requantization of one value (int8_util.h), clamped to
/// int8.
int requantizeOne(int32_t x, int32_t mult, int32_t shift) {
  return bf_i8_clamp(bf_i8_requantize(x, mult, shift), -128, 127);
}

} // namespace

TEST_CASE("quantizeMultiplier matches TFLM's QuantizeMultiplier on hand-computed values") {
  struct Case {
    double real;
    int32_t mult;
    int shift;
  } cases[] = {
      {0.5, 1 << 30, 0},           // 0.5 = 2^30 * 2^(0-31)
      {0.25, 1 << 30, -1},         // one more right shift
      {1.0, 1 << 30, 1},           // frexp(1) = 0.5 * 2^1
      {0.75, 1610612736, 0},       // 0.75 * 2^31
      {3.0, 1610612736, 2},        // 0.75 * 2^2
      {0.0, 0, 0},                 // zero stays zero
      {1.0 / 3.0, 1431655765, -1}, // round(2/3 * 2^31) = 1431655765.33 -> ...765
      {1e-12, 0, 0},               // below 2^-31: flushed to zero
  };
  for (const Case &c : cases) {
    INFO("real " << c.real);
    int32_t m = -1;
    int s = -99;
    quantizeMultiplier(c.real, m, s);
    CHECK(m == c.mult);
    CHECK(s == c.shift);
  }
  // A q that rounds up to 1.0 moves to the next power of two.
  int32_t m = 0;
  int s = 0;
  quantizeMultiplier(std::nextafter(1.0, 0.0), m, s);
  CHECK(m == (1 << 30));
  CHECK(s == 1);
}

TEST_CASE("requantize = SaturatingRoundingDoublingHighMul then RoundingDivideByPOT (exact)") {
  // x * 0.5: 100 -> 50; 101 -> 50.5 rounds up to 51 in the high multiply.
  CHECK(requantizeOne(100, 1 << 30, 0) == 50);
  CHECK(requantizeOne(101, 1 << 30, 0) == 51);
  // x * 0.25 = high multiply by 0.5, then a rounding shift by 1:
  // -102 -> -51 -> -25.5 rounds away from zero to -26; -100 -> -50 -> -25.
  CHECK(requantizeOne(-102, 1 << 30, -1) == -26);
  CHECK(requantizeOne(-100, 1 << 30, -1) == -25);
  // gemmlowp's nudge: -101 * 0.5 = -50.5 becomes -50 in the high multiply.
  CHECK(requantizeOne(-101, 1 << 30, 0) == -50);
  // Positive shift: a left shift before the multiply (x * 1.0 * 2 = 2x).
  CHECK(requantizeOne(5, 1 << 30, 2) == 10);
  CHECK(requantizeOne(-7, 1 << 30, 1) == -7);
  // 0.75 * 3 = 2.25 -> 2; 0.75 * 5 = 3.75 -> 4.
  CHECK(requantizeOne(3, 1610612736, 0) == 2);
  CHECK(requantizeOne(5, 1610612736, 0) == 4);
  // Saturation to int8 after the output offset.
  CHECK(requantizeOne(1000, 1 << 30, 0) == 127);
  CHECK(requantizeOne(-1000, 1 << 30, 0) == -128);
}

TEST_CASE("requantize agrees with a double reference within one step over random values") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> ratio(1e-4, 4.0);
  std::uniform_int_distribution<int> value(-30000, 30000);
  for (int i = 0; i < 2000; ++i) {
    const double r = ratio(rng);
    const Requant q = requant(r);
    const int x = value(rng);
    const int out = requantizeOne(x, q.mult, q.shift);
    const int want = quantizeRef(x * r, 1.0, 0);
    INFO("x " << x << " ratio " << r);
    REQUIRE(std::abs(int(out) - want) <= 1);
  }
}

namespace {

struct ConvCase {
  int N, C, H, W, M, KH, KW, sH, sW, pT, pL, pB, pR, dH, dW, groups;
};

struct ConvData {
  I8 x, w;
  std::vector<int32_t> bias;
  std::vector<float> wScales;
  float inScale = 0.05f, outScale = 1.0f;
  int inZp = 3, outZp = -5;
  int OH = 0, OW = 0;
  std::vector<double> real; ///< Real outputs (double).
};

ConvData makeConv(const ConvCase &c, bool perChannel, unsigned seed) {
  ConvData d;
  d.OH = (c.H + c.pT + c.pB - ((c.KH - 1) * c.dH + 1)) / c.sH + 1;
  d.OW = (c.W + c.pL + c.pR - ((c.KW - 1) * c.dW + 1)) / c.sW + 1;
  const int Cg = c.C / c.groups, Mg = c.M / c.groups;
  d.x = randomI8(size_t(c.N) * c.C * c.H * c.W, seed);
  d.w = randomI8(size_t(c.M) * Cg * c.KH * c.KW, seed + 1, -127, 127);
  std::mt19937 rng(seed + 2);
  std::uniform_real_distribution<float> sd(0.002f, 0.02f);
  std::uniform_int_distribution<int> bd(-3000, 3000);
  d.wScales.assign(perChannel ? size_t(c.M) : 1, 0.01f);
  for (float &s : d.wScales)
    s = perChannel ? sd(rng) : 0.01f;
  for (int m = 0; m < c.M; ++m)
    d.bias.push_back(bd(rng));
  d.real.assign(size_t(c.N) * c.M * d.OH * d.OW, 0.0);
  double maxAbs = 0;
  for (int n = 0; n < c.N; ++n)
    for (int m = 0; m < c.M; ++m) {
      const double accScale = double(d.inScale) * d.wScales[perChannel ? m : 0];
      for (int oh = 0; oh < d.OH; ++oh)
        for (int ow = 0; ow < d.OW; ++ow) {
          int64_t acc = d.bias[m];
          const int g = m / Mg;
          for (int cg = 0; cg < Cg; ++cg)
            for (int kh = 0; kh < c.KH; ++kh)
              for (int kw = 0; kw < c.KW; ++kw) {
                const int ih = oh * c.sH - c.pT + kh * c.dH, iw = ow * c.sW - c.pL + kw * c.dW;
                if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W)
                  continue;
                const int xv =
                    d.x[((size_t(n) * c.C + g * Cg + cg) * c.H + ih) * c.W + iw] - d.inZp;
                acc += int64_t(xv) * d.w[((size_t(m) * Cg + cg) * c.KH + kh) * c.KW + kw];
              }
          const double r = double(acc) * accScale;
          d.real[((size_t(n) * c.M + m) * d.OH + oh) * d.OW + ow] = r;
          maxAbs = std::max(maxAbs, std::fabs(r));
        }
    }
  d.outScale = float(maxAbs / 100.0); // most outputs in range, a few saturate with Relu6
  return d;
}

I8 runConv(const ConvCase &c, const ConvData &d, bool depthwise, int actMin, int actMax) {
  std::vector<int32_t> mult, shift;
  for (float ws : d.wScales) {
    const Requant q = requant(double(d.inScale) * ws / d.outScale);
    mult.push_back(q.mult), shift.push_back(q.shift);
  }
  const int perChannel = d.wScales.size() > 1;
  I8 y(size_t(c.N) * c.M * d.OH * d.OW);
  if (depthwise)
    depthwiseS8(d.x.data(), d.w.data(), d.bias.data(), y.data(), c.N, c.C, c.H, c.W, c.M / c.C,
                d.OH, d.OW, c.KH, c.KW, c.sH, c.sW, c.pT, c.pL, c.dH, c.dW, -d.inZp, d.outZp,
                mult.data(), shift.data(), perChannel, actMin, actMax, nullptr, nullptr, nullptr);
  else
    conv2dS8(d.x.data(), d.w.data(), d.bias.data(), y.data(), c.N, c.C, c.H, c.W, c.M, d.OH, d.OW,
             c.KH, c.KW, c.sH, c.sW, c.pT, c.pL, c.dH, c.dW, c.groups, -d.inZp, d.outZp,
             mult.data(), shift.data(), perChannel, actMin, actMax, nullptr, nullptr, nullptr);
  return y;
}

std::vector<int> expectedConv(const ConvData &d, int actMin, int actMax) {
  std::vector<int> want;
  for (double r : d.real)
    want.push_back(quantizeRef(r, d.outScale, d.outZp, actMin, actMax));
  return want;
}

} // namespace

TEST_CASE("bf_conv2d_s8 within one step of the double reference (groups, pads, strides)") {
  const ConvCase cases[] = {
      {1, 3, 7, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    // same pads
      {2, 4, 9, 9, 6, 3, 2, 2, 1, 1, 0, 2, 1, 2, 1, 2},    // groups, dilation, asym pads
      {1, 1, 28, 28, 20, 5, 5, 1, 1, 0, 0, 0, 0, 1, 1, 1}, // LeNet conv1
      {1, 16, 5, 7, 24, 1, 1, 1, 2, 0, 0, 0, 0, 1, 1, 1},  // pointwise, stride 2 in W
      {1, 2, 5, 5, 3, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1},    // kernel as big as input
  };
  unsigned seed = 10;
  for (const ConvCase &c : cases)
    for (bool perChannel : {false, true}) {
      INFO("case C=" << c.C << " M=" << c.M << " groups=" << c.groups << " perChannel "
                     << perChannel);
      const ConvData d = makeConv(c, perChannel, seed++);
      maxStepDiff(runConv(c, d, false, -128, 127), expectedConv(d, -128, 127));
      // Fused Relu: clamp from the output zero point.
      const int reluMin = quantizeToInt8(0.0, d.outScale, d.outZp);
      CHECK(reluMin == d.outZp);
      maxStepDiff(runConv(c, d, false, reluMin, 127), expectedConv(d, reluMin, 127));
    }
}

TEST_CASE("depthwise kernel equals the grouped kernel and the reference (channel multiplier)") {
  const ConvCase cases[] = {
      {1, 6, 10, 10, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6}, // stride 2
      {1, 4, 8, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4},   // chMult 2
      {2, 3, 7, 7, 3, 5, 3, 1, 2, 2, 1, 2, 1, 1, 2, 3},   // dilation, batches
  };
  unsigned seed = 40;
  for (const ConvCase &c : cases) {
    const ConvData d = makeConv(c, true, seed++);
    const I8 dw = runConv(c, d, true, -128, 127);
    CHECK(dw == runConv(c, d, false, -128, 127));
    maxStepDiff(dw, expectedConv(d, -128, 127));
  }
}

TEST_CASE("depthwise fast path (3x3 rows) equals the grouped kernel on random shapes") {
  // int8_depthwise.c folds the input offset into the bias and reads the zero
  // point outside the input; its bounds send some channels to the grouped
  // kernel. Narrow planes (W < 4, W = 3), odd widths, every padding up to 2,
  // stride 1/2, vertical stride and dilation, ReLU-style clamps, input offsets
  // at the ends of the fast range and beyond, biases near its bound, int8
  // biases and single rounding (the general path): byte-identical results.
  std::mt19937 rng(77);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int it = 0; it < 1500; ++it) {
    const int N = pick(1, 2), C = pick(1, 3), chMult = pick(1, 2), H = pick(1, 9), W = pick(1, 13);
    const int KH = pick(0, 5) ? 3 : pick(1, 4), KW = pick(0, 5) ? 3 : pick(1, 4);
    const int sH = pick(1, 3), sW = pick(1, 2), dH = pick(0, 3) ? 1 : 2, dW = pick(0, 5) ? 1 : 2;
    const int pT = pick(0, 2), pL = pick(0, 2), pB = pick(0, 2), pR = pick(0, 2);
    const int spanH = H + pT + pB - dH * (KH - 1) - 1, spanW = W + pL + pR - dW * (KW - 1) - 1;
    if (spanH < 0 || spanW < 0)
      continue;
    const int OH = spanH / sH + 1, OW = spanW / sW + 1, M = C * chMult;
    const int inOff = pick(0, 4) ? pick(-127, 128) : pick(0, 1) ? -128 : 129;
    const int flags = pick(0, 3), outOff = pick(-128, 127);
    const int actMin = pick(0, 1) ? -128 : pick(-128, 0), actMax = pick(0, 1) ? 127 : pick(0, 127);
    const I8 x = randomI8(size_t(N) * C * H * W, 1000 + it);
    const I8 w = randomI8(size_t(M) * KH * KW, 5000 + it, pick(0, 3) ? -40 : -128, 127);
    std::vector<int32_t> bias(M), mult(M), shift(M), biasMult(M), biasShift(M);
    I8 bias8(M);
    for (int m = 0; m < M; ++m) {
      const int big = pick(0, 9) == 0;
      bias[m] = big ? pick(-(1 << 30) - (1 << 20), (1 << 30) + (1 << 20)) : pick(-20000, 20000);
      mult[m] = pick(0, 49) ? pick(1 << 30, INT_MAX) : pick(-3, 3);
      shift[m] = pick(0, 9) ? pick(-14, -4) : pick(-2, 2);
      bias8[m] = int8_t(pick(-128, 127));
      biasMult[m] = pick(1 << 30, INT_MAX);
      biasShift[m] = pick(-4, 8);
    }
    const bool int8Bias = pick(0, 7) == 0;
    const int32_t *b32 = int8Bias ? nullptr : bias.data();
    const int8_t *b8 = int8Bias ? bias8.data() : nullptr;
    INFO("it " << it << ": N" << N << " C" << C << " mult" << chMult << " " << H << "x" << W << " k"
               << KH << "x" << KW << " s" << sH << "," << sW << " d" << dH << "," << dW << " pads "
               << pT << "," << pL << " inOff " << inOff << " flags " << flags);
    I8 dw(size_t(N) * M * OH * OW), grouped(dw.size());
    depthwiseS8(x.data(), w.data(), b32, dw.data(), N, C, H, W, chMult, OH, OW, KH, KW, sH, sW, pT,
                pL, dH, dW, inOff, outOff, mult.data(), shift.data(), flags, actMin, actMax, b8,
                biasMult.data(), biasShift.data());
    conv2dS8(x.data(), w.data(), b32, grouped.data(), N, C, H, W, M, OH, OW, KH, KW, sH, sW, pT, pL,
             dH, dW, C, inOff, outOff, mult.data(), shift.data(), flags, actMin, actMax, b8,
             biasMult.data(), biasShift.data());
    REQUIRE(dw == grouped);
  }
}

TEST_CASE("int8 bias: brought to the accumulator scale, exact for power-of-two scales") {
  // 1x1 conv, one input channel: out = x * w + bias; power-of-two scales.
  const float inScale = 0.125f, wScale = 0.0625f, biasScale = 0.5f, outScale = 0.25f;
  const I8 x = {10, -20, 30, 0}, w = {3, -2};
  const I8 bias8 = {5, -7};
  // biasScale / (inScale * wScale) = 0.5 / 2^-7 = 64.
  Requant b = {};
  quantizeMultiplierUnbounded(double(biasScale) / (double(inScale) * wScale), b.mult, b.shift);
  CHECK(b.mult == (1 << 30));
  CHECK(b.shift == 7);
  const Requant o = requant(double(inScale) * wScale / outScale); // 2^-5
  I8 y(8);
  const int32_t om = o.mult, os = o.shift, bm = b.mult, bs = b.shift;
  conv2dS8(x.data(), w.data(), nullptr, y.data(), 1, 1, 2, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0,
           0, &om, &os, 0, -128, 127, bias8.data(), &bm, &bs);
  std::vector<int> want;
  for (int m = 0; m < 2; ++m)
    for (int i = 0; i < 4; ++i) {
      const double real = inScale * wScale * x[i] * w[m] + biasScale * bias8[m];
      want.push_back(quantizeRef(real, outScale, 0));
    }
  // e.g. m=0, x=10: 0.0078125 * 30 + 2.5 = 2.734 -> 10.94 -> 11
  CHECK(int(y[0]) == 11);
  maxStepDiff(y, want);
}

TEST_CASE("bf_fully_connected_s8 (both weight layouts) within one step of the reference") {
  const int B = 3, K = 50, N = 10, inZp = -7, outZp = 4;
  const I8 x = randomI8(size_t(B) * K, 70), wT = randomI8(size_t(N) * K, 71, -127, 127);
  I8 w(size_t(K) * N); // [K, N] layout of the same weights
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      w[size_t(k) * N + n] = wT[size_t(n) * K + k];
  std::vector<int32_t> bias;
  std::vector<float> ws;
  for (int n = 0; n < N; ++n)
    bias.push_back(n * 100 - 450), ws.push_back(0.004f + 0.001f * n);
  const float inScale = 0.03f;
  std::vector<double> real;
  double maxAbs = 0;
  for (int b = 0; b < B; ++b)
    for (int n = 0; n < N; ++n) {
      int64_t acc = bias[n];
      for (int k = 0; k < K; ++k)
        acc += int64_t(x[size_t(b) * K + k] - inZp) * wT[size_t(n) * K + k];
      real.push_back(double(acc) * inScale * ws[n]);
      maxAbs = std::max(maxAbs, std::fabs(real.back()));
    }
  const float outScale = float(maxAbs / 110.0);
  std::vector<int32_t> mult, shift;
  for (float s : ws) {
    const Requant q = requant(double(inScale) * s / outScale);
    mult.push_back(q.mult), shift.push_back(q.shift);
  }
  std::vector<int> want;
  for (double r : real)
    want.push_back(quantizeRef(r, outScale, outZp));
  for (int transB : {0, 1}) {
    I8 y(size_t(B) * N);
    const bf_fc_params fc = {B, K, N, transB, 0};
    const bf_quant_params quant = {-inZp, outZp, 1, -128, 127};
    bf_fully_connected_s8(x.data(), transB ? wT.data() : w.data(), bias.data(), y.data(), &fc,
                          &quant, mult.data(), shift.data(), nullptr, nullptr, nullptr);
    maxStepDiff(y, want);
  }
}

/// bf_fully_connected_s8 on one value: round(acc * mult * 2^(shift - 31)).
int fullyConnectedOne(int8_t x, int8_t w, int32_t bias, int32_t mult, int32_t shift,
                      int32_t quantFlags) {
  int8_t y = 0;
  const bf_fc_params fc = {1, 1, 1, 1, 0};
  const bf_quant_params quant = {0, 0, quantFlags, -128, 127};
  bf_fully_connected_s8(&x, &w, &bias, &y, &fc, &quant, &mult, &shift, nullptr, nullptr, nullptr);
  return y;
}

TEST_CASE("BF_I8_SINGLE_ROUNDING: one rounding of the exact product; double rounding ties") {
  // M = (2^31 - 1) * 2^-33, a hair under 1/4: 2 * M = 0.5 - 2^-32 is 0. Double
  // rounding first makes 2 * M * 4 = 2 (a tie at 1/4 of it), then rounds away.
  const int32_t mult = INT32_MAX;
  CHECK(fullyConnectedOne(2, 1, 0, mult, -2, BF_I8_SINGLE_ROUNDING) == 0);
  CHECK(fullyConnectedOne(2, 1, 0, mult, -2, 0) == 1);
  // An exact half rounds up (CMSIS-NN's single rounding): -25.5 -> -25, 25.5 -> 26.
  CHECK(fullyConnectedOne(-102, 1, 0, 1 << 30, -1, BF_I8_SINGLE_ROUNDING) == -25);
  CHECK(fullyConnectedOne(102, 1, 0, 1 << 30, -1, BF_I8_SINGLE_ROUNDING) == 26);
  // A multiplier above 1 (shift > 0) saturates instead of wrapping.
  CHECK(fullyConnectedOne(127, 127, 1 << 24, 1 << 30, 20, BF_I8_SINGLE_ROUNDING) == 127);
  CHECK(fullyConnectedOne(-127, 127, -(1 << 24), 1 << 30, 20, BF_I8_SINGLE_ROUNDING) == -128);

  // Random accumulators and ratios: single rounding is exactly
  // floor(acc * mult / 2^(31 - shift) + 1/2); double rounding is not always.
  std::mt19937 rng(18);
  std::uniform_real_distribution<double> ratio(1e-4, 0.02); // |acc * ratio| <= 120
  std::uniform_int_distribution<int32_t> bias(-6000, 6000);
  int doubleOff = 0;
  const int trials = 20000;
  for (int i = 0; i < trials; ++i) {
    const Requant q = requant(ratio(rng));
    const int32_t b = bias(rng);
    const __int128 p = __int128(b) * q.mult;
    const int right = 31 - q.shift;
    const int64_t exact = int64_t((p + (__int128(1) << (right - 1))) >> right);
    const int want = int(std::max<int64_t>(-128, std::min<int64_t>(127, exact)));
    INFO("acc " << b << " mult " << q.mult << " shift " << q.shift);
    CHECK(fullyConnectedOne(0, 0, b, q.mult, q.shift, BF_I8_SINGLE_ROUNDING) == want);
    doubleOff += fullyConnectedOne(0, 0, b, q.mult, q.shift, 0) != want;
  }
  MESSAGE("double rounding differs from the exact rounding on " << doubleOff << " of " << trials);
  CHECK(doubleOff > 0);
}

TEST_CASE("int8 pooling: max exact, average = rounded integer mean (exact)") {
  const int C = 3, H = 7, W = 6;
  const I8 x = randomI8(size_t(C) * H * W, 80);
  // 3x3 stride 2 pads 1: windows at the border are partial.
  const int OH = (H + 2 - 3) / 2 + 1, OW = (W + 2 - 3) / 2 + 1;
  I8 ymax(size_t(C) * OH * OW), yavg(ymax.size()), yavgInc(ymax.size());
  bf_pool_params pool;
  pool.n = 1, pool.c = C, pool.h = H, pool.w = W, pool.oh = OH, pool.ow = OW, pool.kh = 3;
  pool.kw = 3, pool.stride_h = 2, pool.stride_w = 2, pool.pad_t = 1, pool.pad_l = 1;
  pool.pad_b = 1, pool.pad_r = 1, pool.dil_h = 1, pool.dil_w = 1, pool.is_max = 1;
  pool.count_include_pad = 0, pool.pad_value = 0, pool.act_min = -128, pool.act_max = 127;
  pool.chunk = 0;
  bf_maxpool2d_s8(x.data(), ymax.data(), &pool);
  pool.is_max = 0;
  bf_avgpool2d_s8(x.data(), yavg.data(), &pool);
  const int zp = -20;
  pool.count_include_pad = 1, pool.pad_value = zp;
  bf_avgpool2d_s8(x.data(), yavgInc.data(), &pool);
  for (int c = 0; c < C; ++c)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        int best = -128, sum = 0, count = 0, total = 0;
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw) {
            const int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
            if (ih >= -1 && ih <= H && iw >= -1 && iw <= W)
              ++total;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W)
              continue;
            const int v = x[(size_t(c) * H + ih) * W + iw];
            best = std::max(best, v), sum += v, ++count;
          }
        const size_t o = (size_t(c) * OH + oh) * OW + ow;
        CHECK(int(ymax[o]) == best);
        // Exact rational mean, rounded half away from zero.
        const double mean = double(sum) / count;
        CHECK(int(yavg[o]) == int(std::round(mean)));
        const double meanInc = (double(sum) + (total - count) * zp) / total;
        CHECK(int(yavgInc[o]) == int(std::round(meanInc)));
      }
  // Global average, with a clamp.
  I8 g(C);
  bf_pool_params global = pool;
  global.h = 1, global.w = H * W, global.oh = 1, global.ow = 1, global.kh = 1, global.kw = H * W;
  global.stride_h = 1, global.stride_w = 1, global.pad_t = 0, global.pad_l = 0, global.pad_b = 0;
  global.pad_r = 0, global.count_include_pad = 0, global.act_min = -10, global.act_max = 10;
  bf_global_avgpool_s8(x.data(), g.data(), &global);
  for (int c = 0; c < C; ++c) {
    int sum = 0;
    for (int i = 0; i < H * W; ++i)
      sum += x[size_t(c) * H * W + i];
    CHECK(int(g[c]) == std::clamp(int(std::round(double(sum) / (H * W))), -10, 10));
  }
}

TEST_CASE("bf_add_s8 / bf_mul_s8 (TFLM schemes, broadcasting) within one step") {
  const float sa = 0.05f, sb = 0.02f, so = 0.06f, sm = 0.1f;
  const int za = 10, zb = -3, zo = -1;
  const int C = 4, HW = 6;
  const I8 a = randomI8(size_t(C) * HW, 90), b = randomI8(C, 91); // b broadcasts over HW
  const int32_t dims[6] = {1, 1, 1, 1, C, HW};
  const int32_t aStrides[6] = {0, 0, 0, 0, HW, 1}, bStrides[6] = {0, 0, 0, 0, 1, 0};
  const double twiceMax = 2.0 * std::max(sa, sb);
  const Requant ra = requant(sa / twiceMax), rb = requant(sb / twiceMax);
  const Requant ro = requant(twiceMax / ((1 << 20) * double(so)));
  const Requant rm = requant(double(sa) * sb / sm);
  I8 yadd(size_t(C) * HW), ymul(yadd.size());
  const bf_add_params add = {-za, ra.mult, ra.shift, -zb,      rb.mult, rb.shift,
                             20,  zo,      ro.mult,  ro.shift, -128,    127};
  const bf_mul_params mul = {-za, -zb, zo, rm.mult, rm.shift, -128, 127};
  bf_add_s8(a.data(), b.data(), yadd.data(), dims, aStrides, bStrides, &add);
  bf_mul_s8(a.data(), b.data(), ymul.data(), dims, aStrides, bStrides, &mul);
  std::vector<int> wantAdd, wantMul;
  for (int c = 0; c < C; ++c)
    for (int i = 0; i < HW; ++i) {
      const double ra_ = sa * (a[size_t(c) * HW + i] - za), rb_ = sb * (b[c] - zb);
      wantAdd.push_back(quantizeRef(ra_ + rb_, so, zo));
      wantMul.push_back(quantizeRef(ra_ * rb_, sm, zo));
    }
  maxStepDiff(yadd, wantAdd);
  maxStepDiff(ymul, wantMul);
  // In place: out == a gives the same result.
  I8 inplace = a;
  bf_add_s8(inplace.data(), b.data(), inplace.data(), dims, aStrides, bStrides, &add);
  CHECK(inplace == yadd);
}

TEST_CASE("bf_mul_ratio_s8 is onnxruntime's QLinearMul for every operand pair") {
  // MLAS: nearbyint(float(aScale * bScale / outScale) * float(product)) +
  // zero point, saturated. The kernel emulates the float multiply in
  // integers; here the host's float does it, for all 65,536 pairs and
  // ratios from tiny to above 1, including ones that hit exact halves.
  I8 a(256), b(256);
  for (int i = 0; i < 256; ++i)
    a[size_t(i)] = int8_t(i - 128), b[size_t(i)] = int8_t(i - 128);
  const int32_t dims[6] = {1, 1, 1, 1, 256, 256};
  const int32_t aStrides[6] = {0, 0, 0, 0, 1, 0}, bStrides[6] = {0, 0, 0, 0, 0, 1};
  for (float ratio : {0.0078125f, 0.25f, 0.5f, 0.003137f, 0.0123457f, 1.7f, 3.0e-6f, 1.0e-12f}) {
    for (int za : {0, 7, -128}) {
      const int zb = -za / 2, zo = za == 0 ? 0 : 5;
      int exponent = 0;
      const float fraction = std::frexp(ratio, &exponent);
      I8 y(size_t(256) * 256);
      const bf_mul_params mul = {-za,           -zb,  zo, int32_t(std::ldexp(fraction, 24)),
                                 exponent - 24, -128, 127};
      bf_mul_ratio_s8(a.data(), b.data(), y.data(), dims, aStrides, bStrides, &mul);
      int wrong = 0;
      for (int i = 0; i < 256; ++i)
        for (int j = 0; j < 256; ++j) {
          const int32_t product = (a[size_t(i)] - za) * (b[size_t(j)] - zb);
          const float scaled = ratio * float(product);
          const long want = std::min(127L, std::max(-128L, std::lrint(double(scaled)) + long(zo)));
          wrong += y[size_t(i) * 256 + size_t(j)] != want;
        }
      CHECK_MESSAGE(wrong == 0, "ratio " << ratio << " zero point " << za);
    }
  }
}

TEST_CASE("bf_quantize_even_f32_s8 rounds half to even, bf_quantize_f32_s8 half away") {
  const std::vector<float> x = {0.25f, 0.75f, 1.25f, -0.25f, -0.75f, -1.25f, 0.3f, -0.8f};
  I8 even(x.size()), away(x.size());
  bf_quantize_even_f32_s8(x.data(), even.data(), int32_t(x.size()), 0.5f, 3);
  bf_quantize_f32_s8(x.data(), away.data(), int32_t(x.size()), 0.5f, 3);
  CHECK(even == I8{3, 5, 5, 3, 1, 1, 4, 1});
  CHECK(away == I8{4, 5, 6, 2, 1, 0, 4, 1});
}

TEST_CASE("quantize / dequantize / rescale / concat copy") {
  const float scale = 0.1f;
  const int zp = -4;
  const std::vector<float> x = {0.0f, 0.05f,  -0.05f,  0.15f,    -0.25f,
                                1.0f, 100.0f, -100.0f, 0.34999f, std::nanf("")};
  I8 q(x.size());
  bf_quantize_f32_s8(x.data(), q.data(), int32_t(x.size()), scale, zp);
  // 0.05/0.1 = 0.5 (in float, 0.05f/0.1f rounds to exactly 0.5) -> 1 away from zero.
  const I8 want = {-4, -3, -5, -2, -7, 6, 127, -128, -1, -4};
  CHECK(q == want);
  std::vector<float> back(q.size());
  bf_dequantize_s8_f32(q.data(), back.data(), int32_t(q.size()), scale, zp);
  CHECK(back[5] == doctest::Approx(1.0f));
  CHECK(back[0] == 0.0f);
  CHECK(back[6] == doctest::Approx(13.1f));

  // Rescale 0.1/zp -4 -> 0.25/zp 10: within one step of the exact value.
  const I8 in = randomI8(256, 100);
  const Requant r = requant(0.1 / 0.25);
  I8 out;
  for (int8_t v : in)
    out.push_back(int8_t(bf_i8_clamp(bf_i8_requantize(v + 4, r.mult, r.shift) + 10, -128, 127)));
  std::vector<int> wantRescale;
  for (int8_t v : in)
    wantRescale.push_back(quantizeRef(0.1 * (v + 4), 0.25, 10));
  maxStepDiff(out, wantRescale);

  // Concat piece through a requantization table (here x -> 2x - 1, four
  // little-endian entries a word): the [2,3] input into columns 1..3 of a
  // [2,5] output.
  int8_t entries[256];
  for (int x = -128; x <= 127; ++x)
    entries[x + 128] = int8_t(std::clamp(2 * x - 1, -128, 127));
  int32_t table[64];
  std::memcpy(table, entries, sizeof(table));
  const I8 piece = {1, 2, 3, -4, 5, 100};
  I8 dst(10, 0);
  const int32_t dims[6] = {1, 1, 1, 1, 2, 3}, ss[6] = {0, 0, 0, 0, 3, 1},
                ds[6] = {0, 0, 0, 0, 5, 1};
  bf_requantize_table_strided_s8(piece.data(), dst.data() + 1, dims, ss, ds, table);
  CHECK(dst == I8{0, 1, 3, 5, 0, 0, -9, 9, 127, 0});
  I8 flat = piece;
  bf_requantize_table_s8(flat.data(), flat.data(), int32_t(flat.size()), table); // in place
  CHECK(flat == I8{1, 3, 5, -9, 9, 127});
}

TEST_CASE("bf_softmax_s8 within one step of the double softmax; rows and strided axis") {
  const float inScales[] = {0.02f, 0.1f, 0.5f};
  unsigned seed = 110;
  for (float inScale : inScales) {
    const int outer = 4, axis = 10, inner = 3;
    const I8 x = randomI8(size_t(outer) * axis * inner, seed++);
    // TFLM preparation (through the shared builder's formulas).
    const double real = std::min(double(inScale) * (1 << 26), double(INT32_MAX));
    Requant r = requant(real);
    REQUIRE(r.shift >= 0);
    const int diffMin = -int(std::floor(31.0 * double(1 << 26) / double(1ll << r.shift)));
    I8 y(x.size());
    bf_softmax_s8(x.data(), y.data(), outer, axis, inner, r.mult, r.shift, diffMin);
    std::vector<int> want(x.size());
    for (int o = 0; o < outer; ++o)
      for (int j = 0; j < inner; ++j) {
        double maxv = -1e9, sum = 0;
        for (int i = 0; i < axis; ++i)
          maxv = std::max(maxv, double(x[(size_t(o) * axis + i) * inner + j]));
        for (int i = 0; i < axis; ++i)
          sum += std::exp(inScale * (x[(size_t(o) * axis + i) * inner + j] - maxv));
        for (int i = 0; i < axis; ++i) {
          const size_t k = (size_t(o) * axis + i) * inner + j;
          want[k] = quantizeRef(std::exp(inScale * (x[k] - maxv)) / sum, 1.0 / 256, -128);
        }
      }
    INFO("input scale " << inScale);
    maxStepDiff(y, want);
    // The same rows contiguous (inner = 1, arm_softmax_s8's layout).
    I8 rows(size_t(outer) * inner * axis), rowsOut(rows.size());
    for (int o = 0; o < outer; ++o)
      for (int j = 0; j < inner; ++j)
        for (int i = 0; i < axis; ++i)
          rows[(size_t(o) * inner + j) * axis + i] = x[(size_t(o) * axis + i) * inner + j];
    bf_softmax_s8(rows.data(), rowsOut.data(), outer * inner, axis, 1, r.mult, r.shift, diffMin);
    for (int o = 0; o < outer; ++o)
      for (int j = 0; j < inner; ++j)
        for (int i = 0; i < axis; ++i)
          CHECK(rowsOut[(size_t(o) * inner + j) * axis + i] ==
                y[(size_t(o) * axis + i) * inner + j]);
  }
}

TEST_CASE("bf_softmax_s8 matches hand-checked fixed-point values") {
  // Two equal logits: exactly one half each = 128/256 -> q = 0.
  const I8 x = {5, 5};
  I8 y(2);
  const Requant r = requant(0.1 * (1 << 26));
  bf_softmax_s8(x.data(), y.data(), 1, 2, 1, r.mult, r.shift, -1000000);
  CHECK(int(y[0]) == 0);
  CHECK(int(y[1]) == 0);
  // One logit far above the others: it takes everything (255/256 -> 127).
  const I8 z = {127, -128, -128};
  I8 yz(3);
  bf_softmax_s8(z.data(), yz.data(), 1, 3, 1, r.mult, r.shift, -1000000);
  CHECK(int(yz[0]) == 127);
  CHECK(int(yz[1]) == -128);
}
