// Kernel unit tests: src/kernels/*.c compiled with the host C compiler into
// this executable, compared with plain reference loops on random data.
#include "PositionalKernels.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using Vec = std::vector<float>;

Vec randomVec(size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Vec v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

void checkClose(const Vec &got, const Vec &want, float tol = 1e-4f) {
  REQUIRE(got.size() == want.size());
  float maxRef = 0.0f;
  for (float w : want)
    maxRef = std::max(maxRef, std::fabs(w));
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("index " << i << " got " << got[i] << " want " << want[i]);
    REQUIRE(std::fabs(got[i] - want[i]) <= tol * std::max(1.0f, maxRef));
  }
}

struct ConvCase {
  int N, C, H, W, M, KH, KW, sH, sW, pT, pL, pB, pR, dH, dW, groups;
};

Vec referenceConv(const ConvCase &c, const Vec &x, const Vec &w, const Vec *bias, int &OH,
                  int &OW) {
  OH = (c.H + c.pT + c.pB - ((c.KH - 1) * c.dH + 1)) / c.sH + 1;
  OW = (c.W + c.pL + c.pR - ((c.KW - 1) * c.dW + 1)) / c.sW + 1;
  const int Cg = c.C / c.groups, Mg = c.M / c.groups;
  Vec y(size_t(c.N) * c.M * OH * OW);
  for (int n = 0; n < c.N; ++n)
    for (int m = 0; m < c.M; ++m)
      for (int oh = 0; oh < OH; ++oh)
        for (int ow = 0; ow < OW; ++ow) {
          double acc = bias ? (*bias)[m] : 0.0;
          const int g = m / Mg;
          for (int cg = 0; cg < Cg; ++cg)
            for (int kh = 0; kh < c.KH; ++kh)
              for (int kw = 0; kw < c.KW; ++kw) {
                int ih = oh * c.sH - c.pT + kh * c.dH, iw = ow * c.sW - c.pL + kw * c.dW;
                if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W)
                  continue;
                acc += double(x[((size_t(n) * c.C + g * Cg + cg) * c.H + ih) * c.W + iw]) *
                       w[((size_t(m) * Cg + cg) * c.KH + kh) * c.KW + kw];
              }
          y[((size_t(n) * c.M + m) * OH + oh) * OW + ow] = float(acc);
        }
  return y;
}

} // namespace

TEST_CASE("kernel conv2d matches reference loops (groups, dilation, pads, strides)") {
  const ConvCase cases[] = {
      {1, 3, 7, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    // 4-channel blocks, same pads
      {2, 4, 9, 9, 6, 3, 2, 2, 1, 1, 0, 2, 1, 2, 1, 2},    // groups, dilation, asym pads
      {1, 6, 10, 10, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6},  // depthwise stride 2
      {1, 5, 6, 7, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},    // pointwise fast path
      {1, 2, 5, 5, 3, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1},    // kernel as big as input
      {1, 1, 28, 28, 20, 5, 5, 1, 1, 0, 0, 0, 0, 1, 1, 1}, // LeNet conv1
      {1, 3, 11, 13, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, // stride 2 both ways
      {1, 4, 9, 21, 8, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},   // dilation 2 both ways
      {1, 16, 5, 19, 24, 1, 1, 1, 2, 0, 0, 0, 0, 1, 1, 1}, // 1x1, stride 2 in W
      {1, 8, 6, 6, 8, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 2},    // groups with 4 channels each
      {2, 5, 13, 17, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5},  // depthwise stride 1
      {1, 3, 12, 23, 3, 5, 3, 1, 2, 2, 3, 2, 1, 2, 3, 3},  // depthwise, dilated, odd pads
      // Stride-1 rows as whole tiles: padded borders through shifted windows,
      // the last tile shifted left over its neighbour (any tile width).
      {1, 5, 6, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  // "same" 3x3, 32 wide
      {1, 3, 5, 21, 8, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1},   // 5x5 pads 2, ragged rows
      {1, 4, 4, 19, 8, 3, 5, 1, 1, 0, 3, 1, 1, 1, 1, 1},   // left pad 3, right pad 1
      {1, 2, 3, 17, 8, 1, 7, 1, 1, 0, 0, 0, 6, 1, 1, 1},   // right pad only, 1x7
      {1, 3, 4, 16, 8, 3, 3, 1, 1, 1, 0, 1, 2, 1, 1, 1},   // row exactly 16 wide
      {1, 2, 3, 40, 8, 1, 3, 1, 1, 0, 20, 0, 20, 1, 1, 1}, // padding wider than a tile
      // Depthwise K x K: small planes through the zero-padded copy (hosts),
      // larger ones through the row kernels (5x5, 7x7; stride 1 and 2), and
      // their fallbacks (stride 3, dilation 2) to the per-tap scatter.
      {1, 3, 14, 14, 3, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 3},  // 5x5 "same": flat span
      {2, 4, 7, 7, 4, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 4},    // 5x5 on a 7x7 plane
      {1, 3, 15, 16, 3, 5, 5, 2, 2, 1, 1, 2, 2, 1, 1, 3},  // 5x5 stride 2, TF "same"
      {1, 2, 3, 4, 2, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 2},    // plane smaller than the kernel
      {1, 2, 12, 19, 2, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1, 2},  // 7x7 "same"
      {1, 3, 17, 13, 3, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 3},  // 7x7 stride 2
      {1, 2, 11, 23, 2, 5, 5, 1, 2, 0, 1, 0, 3, 1, 1, 2},  // stride 1 down, 2 across; odd pads
      {1, 2, 9, 9, 2, 7, 7, 2, 1, 0, 0, 0, 0, 1, 1, 2},    // unpadded, rows stride 2
      {1, 2, 68, 66, 2, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 2},  // 5x5 rows on a large plane
      {1, 2, 140, 30, 2, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 2}, // 7x7 stride 2 rows, large plane
      {1, 2, 66, 70, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},  // 3x3 rows, large plane
      {1, 4, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4},    // 3x3 padded copy, 7x7
      {1, 4, 14, 14, 4, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 4},  // 3x3 stride 2, TF "same"
      // Stride 2 on hosts: the padded plane's four phases, one flat span.
      {1, 3, 10, 11, 3, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 3}, // last row/column unread
      {2, 2, 13, 12, 2, 5, 5, 2, 2, 2, 1, 2, 2, 1, 1, 2}, // asymmetric pads, odd extents
      {1, 2, 28, 28, 2, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 2}, // 7x7 stride 2
      {1, 3, 56, 56, 3, 5, 5, 2, 2, 1, 1, 2, 2, 1, 1, 3}, // phases fill most of the buffer
      {1, 2, 13, 13, 2, 5, 5, 3, 3, 2, 2, 2, 2, 1, 1, 2}, // stride 3: scatter fallback
      {1, 2, 13, 13, 2, 5, 5, 1, 1, 4, 4, 4, 4, 2, 2, 2}, // dilation 2: scatter fallback
      // Full convolutions through the zero-padded, phase-split band copy
      // (hosts): stride-1 rows narrower than the widest tile, stride 2 at
      // any width; bands of rows, the last one moved up when too short.
      {1, 16, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   // 7x7 "same" (ResNet-18 layer4)
      {1, 8, 14, 14, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  // 14x14, 4 leftover channels
      {1, 6, 16, 16, 16, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, 1},  // stride 2, TF "same" (ResNet-8)
      {1, 5, 15, 13, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},   // stride 2, odd sizes
      {1, 3, 23, 21, 8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},   // 7x7 stride 2 (a stem)
      {2, 4, 9, 10, 8, 5, 5, 2, 2, 2, 2, 1, 2, 1, 1, 1},    // 5x5 stride 2, asym pads
      {1, 4, 5, 40, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2},   // stride 2, groups, wide rows
      {1, 512, 30, 6, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},  // bands of 7 rows, last one short
      {1, 1200, 20, 5, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, // stride 1, bands of 5 rows
      {1, 8, 1, 9, 8, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1},     // one row of 9
      {1, 3, 200, 200, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, // flat span of 10 rows of 101
      // Stride-1 rows of any width on AVX-512 (bf_phase_tile_wide2 spans).
      {1, 8, 55, 55, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  // SqueezeNet expand: bands of 17
      {1, 300, 27, 27, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, // bands of 5 rows (buffer-bound)
      {1, 4, 21, 40, 12, 5, 5, 1, 1, 2, 1, 0, 3, 1, 1, 1},  // 5x5, uneven pads, 4 leftover
      {1, 3, 12, 33, 8, 7, 7, 1, 1, 3, 3, 3, 3, 1, 1, 1},   // 7x7 "same", 33 columns
      {1, 2, 3, 1100, 8, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1, 1},  // row wider than a band: rows
      {1, 8, 13, 13, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  // span of 193: 6 x 32 + one 16
      {1, 4, 10, 10, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   // span of 118: 3 x 32 + one 32
      // Pointwise column tails as dot products (hosts), over channel chunks.
      {1, 300, 7, 7, 10, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, // 7x7 plane: 48 + 1 columns
      {1, 40, 14, 14, 6, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, // 14x14: 192 + 4 columns
      {1, 64, 1, 67, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},  // whole tail vectors + 3
      // Pointwise on planes of 9-15 floats (AVX-512: one vector per channel).
      {1, 37, 3, 3, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, // 3x3: 2 tiles of 16 + 8 rows
      {2, 20, 3, 5, 32, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2}, // 15, groups: last tile ends M
      {1, 1, 1, 9, 17, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},  // one channel: the padded copy
      // 1x1 planes (squeeze-and-excitation FCs) as dot products (hosts).
      {2, 37, 1, 1, 21, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}, // batch 2, 5 channels past 32
      {1, 64, 1, 1, 8, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2},  // groups
      {1, 3, 1, 1, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},   // fewer channels than a vector
      // Planes narrower than a tile (patch-stage tiles) as flat runs (hosts):
      // in place when unpadded, else through a zero-padded copy; leftover
      // channels beside the blocks; exactly one tile; stride 2 beside them.
      {1, 16, 6, 5, 16, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1},  // interior tile, 3 columns
      {1, 16, 5, 4, 12, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 1},  // corner tile: top/left pads
      {1, 8, 7, 6, 8, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, 1},    // bottom/right pads, 4 columns
      {1, 8, 6, 7, 8, 3, 3, 1, 1, 0, 0, 0, -2, 1, 1, 1},   // pitch 7 read in place, 5 used
      {1, 16, 12, 9, 16, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, 1}, // stride 2, 4 columns
      {1, 16, 8, 7, 8, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1},   // 1x1 stride 2, 4 columns
      {1, 4, 4, 5, 8, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1},    // run of exactly 8 outputs
      {1, 3, 9, 9, 8, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1},    // 5x5 same, 9 columns: wide
      // Runs shorter than 16 (AVX-512 hosts: one 16-lane tile over the padded
      // copy, lanes past the run dropped): ResNet-8's 3x3 patch-stage tiles.
      {1, 32, 5, 5, 32, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1}, // interior 3x3 tile: run of 13
      {1, 16, 4, 4, 20, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 1}, // corner 3x3, 4 leftover channels
      {1, 8, 4, 4, 16, 3, 3, 1, 1, 1, 1, 0, 1, 1, 1, 1},  // 3x4 tile: run of 16 exactly
      {1, 200, 5, 5, 8, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1}, // copy too large: 8-lane tiles
      // Runs of 17-32: one two-vector tile over the padded copy (AVX-512).
      {1, 32, 6, 6, 32, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1}, // interior 4x4 tile: run of 22
      {1, 16, 5, 5, 20, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, 1}, // corner 4x4, 4 leftover channels
      {1, 2, 9, 9, 8, 7, 7, 1, 1, 0, 0, 0, 0, 1, 1, 1},   // 7x7 taps, pitch 9: run of 21
  };
  unsigned seed = 1;
  for (const ConvCase &c : cases) {
    CAPTURE(seed);
    Vec x = randomVec(size_t(c.N) * c.C * c.H * c.W, seed++);
    Vec w = randomVec(size_t(c.M) * (c.C / c.groups) * c.KH * c.KW, seed++);
    Vec b = randomVec(size_t(c.M), seed++);
    int OH, OW;
    for (int withBias = 0; withBias < 2; ++withBias) {
      Vec want = referenceConv(c, x, w, withBias ? &b : nullptr, OH, OW);
      Vec got(want.size(), 123.0f);
      kernel_tests::conv2d(x.data(), w.data(), withBias ? b.data() : nullptr, got.data(), c.N, c.C,
                           c.H, c.W, c.M, OH, OW, c.KH, c.KW, c.sH, c.sW, c.pT, c.pL, c.dH, c.dW,
                           c.groups, BF_ACT_NONE, 0, 0);
      checkClose(got, want);
      // Fused Relu and Clip.
      kernel_tests::conv2d(x.data(), w.data(), b.data(), got.data(), c.N, c.C, c.H, c.W, c.M, OH,
                           OW, c.KH, c.KW, c.sH, c.sW, c.pT, c.pL, c.dH, c.dW, c.groups,
                           BF_ACT_CLIP, -0.25f, 0.5f);
      Vec clipped = referenceConv(c, x, w, &b, OH, OW);
      for (float &v : clipped)
        v = std::min(std::max(v, -0.25f), 0.5f);
      checkClose(got, clipped);
      kernel_tests::conv2d(x.data(), w.data(), b.data(), got.data(), c.N, c.C, c.H, c.W, c.M, OH,
                           OW, c.KH, c.KW, c.sH, c.sW, c.pT, c.pL, c.dH, c.dW, c.groups,
                           BF_ACT_RELU, 0, 0);
      Vec rectified = referenceConv(c, x, w, &b, OH, OW);
      for (float &v : rectified)
        v = std::max(v, 0.0f);
      checkClose(got, rectified);
    }
  }
}

TEST_CASE(
    "kernel pointwise on 1x1 and 9-15 float planes: fused activations, nothing past the end") {
  // On AVX-512 9-15 float planes take one 16-lane vector per channel, whose
  // lanes past the plane read the next channel and are stored over the next
  // row. The last row must store only its plane, and the activation cover
  // every row. 1x1 planes are dot products, activated after the last one.
  const ConvCase cases[] = {
      {1, 40, 1, 1, 19, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {1, 24, 3, 3, 33, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {1, 16, 3, 4, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
      {1, 5, 1, 15, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},
  };
  unsigned seed = 900;
  for (const ConvCase &c : cases) {
    CAPTURE(c.C);
    CAPTURE(c.M);
    Vec x = randomVec(size_t(c.N) * c.C * c.H * c.W, seed++, -3.0f, 3.0f);
    Vec w = randomVec(size_t(c.M) * c.C, seed++);
    Vec b = randomVec(size_t(c.M), seed++);
    int OH, OW;
    const Vec plain = referenceConv(c, x, w, &b, OH, OW);
    for (int act : {BF_ACT_NONE, BF_ACT_RELU, BF_ACT_CLIP, BF_ACT_SILU, BF_ACT_SIGMOID}) {
      CAPTURE(act);
      Vec want = plain;
      for (float &v : want) {
        const double d = v;
        v = act == BF_ACT_RELU      ? std::max(v, 0.0f)
            : act == BF_ACT_CLIP    ? std::min(std::max(v, -0.25f), 0.5f)
            : act == BF_ACT_SILU    ? float(d / (1.0 + std::exp(-d)))
            : act == BF_ACT_SIGMOID ? float(1.0 / (1.0 + std::exp(-d)))
                                    : v;
      }
      const size_t guard = 16;
      Vec got(want.size() + guard, 123.0f);
      kernel_tests::conv2d(x.data(), w.data(), b.data(), got.data(), c.N, c.C, c.H, c.W, c.M, OH,
                           OW, 1, 1, 1, 1, 0, 0, 1, 1, c.groups, act, -0.25f, 0.5f);
      for (size_t i = want.size(); i < got.size(); ++i)
        REQUIRE(got[i] == 123.0f);
      got.resize(want.size());
      checkClose(got, want);
    }
  }
}

TEST_CASE("kernel pointwise in place: pixel blocks over the conv's own input") {
  // The output shares the input's address (planes m >= C past it); blocks of
  // 16 pixels, the first holding the plane's leftover pixels: DS-CNN's
  // 25x5 (125 = 13 + 7 x 16), a 4x4 plane (one vector, 16 channels at a
  // time plus 4s and 1s), 7x7, and a plane smaller than a block. Everything
  // the kernel writes past the output and its workspace would be caught.
  struct Case {
    int C, H, W, M, block;
  };
  const Case cases[] = {{64, 25, 5, 64, 16}, {24, 4, 4, 37, 16}, {40, 7, 7, 8, 16},
                        {8, 7, 7, 40, 16},   {12, 3, 3, 20, 16}, {33, 9, 9, 21, 27}};
  unsigned seed = 950;
  for (const Case &c : cases) {
    CAPTURE(c.C);
    CAPTURE(c.H);
    CAPTURE(c.M);
    const ConvCase cc{1, c.C, c.H, c.W, c.M, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1};
    const size_t P = size_t(c.H) * c.W, block = std::min<size_t>(c.block, P);
    Vec x = randomVec(size_t(c.C) * P, seed++, -3.0f, 3.0f);
    Vec w = randomVec(size_t(c.M) * c.C, seed++);
    Vec b = randomVec(size_t(c.M), seed++);
    int OH, OW;
    const Vec plain = referenceConv(cc, x, w, &b, OH, OW);
    for (int act : {BF_ACT_NONE, BF_ACT_RELU, BF_ACT_SIGMOID}) {
      CAPTURE(act);
      Vec want = plain;
      for (float &v : want)
        v = act == BF_ACT_RELU      ? std::max(v, 0.0f)
            : act == BF_ACT_SIGMOID ? float(1.0 / (1.0 + std::exp(-double(v))))
                                    : v;
      const size_t guard = 16, n = std::max(x.size(), want.size());
      Vec arena(n + guard, 123.0f), scratch(size_t(c.M) * block + guard, 123.0f);
      std::copy(x.begin(), x.end(), arena.begin());
      const bf_conv_params p =
          kernel_tests::convParams(1, c.C, c.H, c.W, c.M, c.H, c.W, 1, 1, 1, 1, 0, 0, 1, 1, 1);
      bf_pointwise_inplace_f32(arena.data(), w.data(), b.data(), arena.data(), scratch.data(), &p,
                               c.block, act, 0.0f, 0.0f);
      for (size_t i = n; i < arena.size(); ++i)
        REQUIRE(arena[i] == 123.0f);
      for (size_t i = scratch.size() - guard; i < scratch.size(); ++i)
        REQUIRE(scratch[i] == 123.0f);
      arena.resize(want.size());
      checkClose(arena, want);
    }
  }
}

TEST_CASE("kernel conv_transpose2d matches the scatter definition") {
  const int N = 1, C = 4, H = 3, W = 4, M = 6, KH = 3, KW = 3, s = 2, p = 1, groups = 2;
  const int OH = (H - 1) * s - 2 * p + KH + 1,
            OW = (W - 1) * s - 2 * p + KW; // output_padding 1 on H
  Vec x = randomVec(size_t(N) * C * H * W, 7), w = randomVec(size_t(C) * (M / groups) * KH * KW, 8),
      b = randomVec(M, 9);
  Vec want(size_t(N) * M * OH * OW);
  for (int m = 0; m < M; ++m)
    for (int i = 0; i < OH * OW; ++i)
      want[m * OH * OW + i] = b[m];
  const int Cg = C / groups, Mg = M / groups;
  for (int c = 0; c < C; ++c)
    for (int mg = 0; mg < Mg; ++mg)
      for (int ih = 0; ih < H; ++ih)
        for (int iw = 0; iw < W; ++iw)
          for (int kh = 0; kh < KH; ++kh)
            for (int kw = 0; kw < KW; ++kw) {
              int oh = ih * s - p + kh, ow = iw * s - p + kw, m = (c / Cg) * Mg + mg;
              if (oh >= 0 && oh < OH && ow >= 0 && ow < OW)
                want[(m * OH + oh) * OW + ow] +=
                    x[(c * H + ih) * W + iw] * w[((c * Mg + mg) * KH + kh) * KW + kw];
            }
  Vec got(want.size());
  kernel_tests::convTranspose2d(x.data(), w.data(), b.data(), got.data(), N, C, H, W, M, OH, OW, KH,
                                KW, s, s, p, p, 1, 1, groups, BF_ACT_NONE, 0, 0);
  checkClose(got, want);
}

TEST_CASE("kernel pools match reference loops") {
  const int NC = 3, H = 7, W = 6, K = 3, s = 2, pT = 1, pL = 1, pB = 1, pR = 1;
  const int OH = (H + pT + pB - K) / s + 1, OW = (W + pL + pR - K) / s + 1;
  Vec x = randomVec(size_t(NC) * H * W, 11);
  Vec wantMax(size_t(NC) * OH * OW), wantAvg(wantMax.size()), wantAvgPad(wantMax.size());
  for (int p = 0; p < NC; ++p)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        float mx = -FLT_MAX, sum = 0;
        int count = 0, countPad = 0;
        for (int kh = 0; kh < K; ++kh)
          for (int kw = 0; kw < K; ++kw) {
            int ih = oh * s - pT + kh, iw = ow * s - pL + kw;
            if (ih >= -pT && ih < H + pB && iw >= -pL && iw < W + pR)
              ++countPad;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W)
              continue;
            mx = std::max(mx, x[(p * H + ih) * W + iw]);
            sum += x[(p * H + ih) * W + iw];
            ++count;
          }
        const size_t o = (size_t(p) * OH + oh) * OW + ow;
        wantMax[o] = mx, wantAvg[o] = sum / count, wantAvgPad[o] = sum / countPad;
      }
  Vec got(wantMax.size());
  kernel_tests::maxpool2d(bf_maxpool2d_f32, x.data(), got.data(), NC, H, W, OH, OW, K, K, s, s, pT,
                          pL, 1, 1);
  checkClose(got, wantMax);
  kernel_tests::avgpool2d(x.data(), got.data(), NC, H, W, OH, OW, K, K, s, s, pT, pL, pB, pR, 0);
  checkClose(got, wantAvg);
  kernel_tests::avgpool2d(x.data(), got.data(), NC, H, W, OH, OW, K, K, s, s, pT, pL, pB, pR, 1);
  checkClose(got, wantAvgPad);

  Vec gavg(NC), gmax(NC), want(NC), wantM(NC);
  bf_global_avgpool_f32(x.data(), gavg.data(), NC, H * W);
  bf_global_maxpool_f32(x.data(), gmax.data(), NC, H * W);
  for (int p = 0; p < NC; ++p) {
    float sum = 0, mx = -FLT_MAX;
    for (int i = 0; i < H * W; ++i)
      sum += x[p * H * W + i], mx = std::max(mx, x[p * H * W + i]);
    want[p] = sum / (H * W), wantM[p] = mx;
  }
  checkClose(gavg, want);
  checkClose(gmax, wantM);
}

// Float MaxPool through the row-first path (hosts) and, for rows wider than
// its stack row, the window loop: exact maxima, so compared for equality.
TEST_CASE("kernel maxpool matches the window definition") {
  struct PoolCase {
    int NC, H, W, KH, KW, sH, sW, pT, pL, pB, pR, dH, dW;
  };
  const PoolCase cases[] = {
      {64, 111, 111, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1}, // SqueezeNet: ceil mode, last window short
      {3, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},  // ResNet-18 stem
      {2, 9, 10, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1},     // LeNet-style 2x2
      {2, 11, 13, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1},    // 5x5 "same", stride 1
      {2, 12, 14, 3, 3, 1, 2, 2, 1, 0, 3, 2, 2},    // dilation 2, uneven strides and pads
      {1, 3, 2, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1},      // windows wholly in the padding
      {1, 4, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1},      // one column
      {1, 2, 5000, 2, 3, 1, 2, 0, 1, 0, 1, 1, 1},   // row wider than the stack row
  };
  unsigned seed = 300;
  for (const PoolCase &c : cases) {
    CAPTURE(seed);
    const int OH = (c.H + c.pT + c.pB - ((c.KH - 1) * c.dH + 1)) / c.sH + 1;
    const int OW = (c.W + c.pL + c.pR - ((c.KW - 1) * c.dW + 1)) / c.sW + 1;
    Vec x = randomVec(size_t(c.NC) * c.H * c.W, seed++, -4.0f, 1.0f);
    Vec want(size_t(c.NC) * OH * OW);
    for (int p = 0; p < c.NC; ++p)
      for (int oh = 0; oh < OH; ++oh)
        for (int ow = 0; ow < OW; ++ow) {
          float mx = -FLT_MAX;
          for (int kh = 0; kh < c.KH; ++kh)
            for (int kw = 0; kw < c.KW; ++kw) {
              const int ih = oh * c.sH - c.pT + kh * c.dH, iw = ow * c.sW - c.pL + kw * c.dW;
              if (ih >= 0 && ih < c.H && iw >= 0 && iw < c.W)
                mx = std::max(mx, x[(size_t(p) * c.H + ih) * c.W + iw]);
            }
          want[(size_t(p) * OH + oh) * OW + ow] = mx;
        }
    Vec got(want.size(), 123.0f);
    kernel_tests::maxpool2d(bf_maxpool2d_f32, x.data(), got.data(), c.NC, c.H, c.W, OH, OW, c.KH,
                            c.KW, c.sH, c.sW, c.pT, c.pL, c.dH, c.dW);
    checkClose(got, want, 0.0f);
  }
}

TEST_CASE("kernel gemm and matmul match reference loops") {
  const int M = 3, N = 17, K = 33;
  Vec a = randomVec(size_t(M) * K, 21), b = randomVec(size_t(K) * N, 22), c = randomVec(N, 23);
  for (int transA = 0; transA < 2; ++transA)
    for (int transB = 0; transB < 2; ++transB) {
      CAPTURE(transA);
      CAPTURE(transB);
      Vec want(size_t(M) * N);
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double acc = 0;
          for (int k = 0; k < K; ++k)
            acc += double(transA ? a[k * M + i] : a[i * K + k]) *
                   (transB ? b[j * K + k] : b[k * N + j]);
          want[i * N + j] = std::max(0.0f, float(0.5 * acc + 2.0 * c[j]));
        }
      Vec got(want.size());
      const bf_gemm_params gemm = {M, N, K, transA, transB, 0, 1};
      bf_gemm_f32(a.data(), b.data(), c.data(), got.data(), &gemm, 0.5f, 2.0f, BF_ACT_RELU, 0, 0);
      checkClose(got, want);
    }
  // Batched matmul, B broadcast over the batch.
  const int batch = 4;
  Vec A = randomVec(size_t(batch) * M * K, 24), B = randomVec(size_t(K) * N, 25);
  Vec want(size_t(batch) * M * N), got(want.size());
  for (int t = 0; t < batch; ++t)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0;
        for (int k = 0; k < K; ++k)
          acc += double(A[(t * M + i) * K + k]) * B[k * N + j];
        want[(t * M + i) * N + j] = float(acc);
      }
  const bf_matmul_params mm = {batch, M, K, N, M * K, 0};
  bf_matmul_f32(A.data(), B.data(), got.data(), &mm, BF_ACT_NONE, 0, 0);
  checkClose(got, want);
}

TEST_CASE("kernel softmax / logsoftmax / batchnorm / reduce") {
  const int outer = 3, axis = 5, inner = 4;
  Vec x = randomVec(size_t(outer) * axis * inner, 31, -5, 5);
  Vec want(x.size()), wantLog(x.size());
  for (int o = 0; o < outer; ++o)
    for (int i = 0; i < inner; ++i) {
      double mx = -1e30, sum = 0;
      for (int a = 0; a < axis; ++a)
        mx = std::max(mx, double(x[(o * axis + a) * inner + i]));
      for (int a = 0; a < axis; ++a)
        sum += std::exp(x[(o * axis + a) * inner + i] - mx);
      for (int a = 0; a < axis; ++a) {
        const size_t k = (o * axis + a) * inner + i;
        want[k] = float(std::exp(x[k] - mx) / sum);
        wantLog[k] = float(x[k] - mx - std::log(sum));
      }
    }
  Vec got(x.size());
  bf_softmax_f32(x.data(), got.data(), outer, axis, inner);
  checkClose(got, want, 1e-6f);
  bf_logsoftmax_f32(x.data(), got.data(), outer, axis, inner);
  checkClose(got, wantLog, 1e-5f);
  Vec inPlace = x;
  bf_softmax_f32(inPlace.data(), inPlace.data(), outer, axis, inner);
  checkClose(inPlace, want, 1e-6f);

  // BatchNorm over [2,3,4].
  Vec bx = randomVec(24, 32), sc = randomVec(3, 33), bi = randomVec(3, 34), mean = randomVec(3, 35),
      var = randomVec(3, 36, 0.1f, 2.0f), by(24), bw(24);
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 4; ++i) {
        const int k = (n * 3 + c) * 4 + i;
        bw[k] = (bx[k] - mean[c]) / std::sqrt(var[c] + 1e-5f) * sc[c] + bi[c];
      }
  bf_batchnorm_f32(bx.data(), by.data(), 2, 3, 4, sc.data(), bi.data(), mean.data(), var.data(),
                   1e-5f);
  checkClose(by, bw);

  // ReduceMean over axes {1,3} of [2,3,4,5] (keepdims) and ReduceMax over axis 2.
  Vec r = randomVec(120, 37);
  const int32_t dims[6] = {1, 1, 2, 3, 4, 5};
  const int32_t meanStrides[6] = {0, 0, 4, 0, 1, 0}; // out [2,1,4,1]
  Vec rm(8), rmWant(8, 0.0f);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d)
          rmWant[a * 4 + c] += r[((a * 3 + b) * 4 + c) * 5 + d] / 15.0f;
  bf_reduce_f32(r.data(), rm.data(), dims, meanStrides, 8, BF_REDUCE_SUM, 1.0f / 15.0f);
  checkClose(rm, rmWant);
  const int32_t maxStrides[6] = {0, 0, 15, 5, 0, 1}; // out [2,3,1,5]
  Vec rx(30), rxWant(30, -FLT_MAX);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d)
          rxWant[(a * 3 + b) * 5 + d] =
              std::max(rxWant[(a * 3 + b) * 5 + d], r[((a * 3 + b) * 4 + c) * 5 + d]);
  bf_reduce_f32(r.data(), rx.data(), dims, maxStrides, 30, BF_REDUCE_MAX, 1.0f);
  checkClose(rx, rxWant);
}

TEST_CASE("kernel strided copy implements transpose, concat and slice") {
  // Transpose [2,3,4] -> perm (2,0,1) -> [4,2,3].
  Vec x = randomVec(24, 41);
  const int32_t tDims[6] = {1, 1, 1, 4, 2, 3};
  const int32_t tSrc[6] = {0, 0, 0, 1, 12, 4};
  const int32_t tDst[6] = {0, 0, 0, 6, 3, 1};
  Vec got(24), want(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        want[(k * 2 + i) * 3 + j] = x[(i * 3 + j) * 4 + k];
  bf_copy_strided_f32(x.data(), got.data(), tDims, tSrc, tDst);
  checkClose(got, want);

  // Concat [2,3] and [2,2] on axis 1 -> [2,5].
  Vec p = randomVec(6, 42), q = randomVec(4, 43), cat(10), catWant(10);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j)
      catWant[i * 5 + j] = p[i * 3 + j];
    for (int j = 0; j < 2; ++j)
      catWant[i * 5 + 3 + j] = q[i * 2 + j];
  }
  const int32_t pDims[6] = {1, 1, 1, 1, 2, 3}, pSrc[6] = {0, 0, 0, 0, 3, 1},
                cDst[6] = {0, 0, 0, 0, 5, 1};
  const int32_t qDims[6] = {1, 1, 1, 1, 2, 2}, qSrc[6] = {0, 0, 0, 0, 2, 1};
  bf_copy_strided_f32(p.data(), cat.data(), pDims, pSrc, cDst);
  bf_copy_strided_f32(q.data(), cat.data() + 3, qDims, qSrc, cDst);
  checkClose(cat, catWant);

  // Slice [6,8] rows 1:6:2, columns 7:0:-3 -> [3,3].
  Vec s = randomVec(48, 44), sl(9), slWant(9);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      slWant[i * 3 + j] = s[(1 + 2 * i) * 8 + 7 - 3 * j];
  const int32_t sDims[6] = {1, 1, 1, 1, 3, 3}, sSrc[6] = {0, 0, 0, 0, 16, -3},
                sDst[6] = {0, 0, 0, 0, 3, 1};
  bf_copy_strided_f32(s.data() + 8 + 7, sl.data(), sDims, sSrc, sDst);
  checkClose(sl, slWant);
}

TEST_CASE("kernel concat by table reads each piece from its region, row by row") {
  // Three regions; pieces [2,1] (constant, offset 4), [2,3] (activations,
  // offset 0) and [2,2] (mutable, offset 8) concatenated on axis 1 -> [2,6].
  Vec c = randomVec(8, 51), m = randomVec(8, 52), a = randomVec(8, 53), got(12), want;
  for (int r = 0; r < 2; ++r) {
    want.push_back(c[1 + r]);
    for (int j = 0; j < 3; ++j)
      want.push_back(a[r * 3 + j]);
    for (int j = 0; j < 2; ++j)
      want.push_back(m[2 + r * 2 + j]);
  }
  const int32_t pieces[9] = {0, 4, 4, 2, 0, 12, 1, 8, 8};
  bf_concat_table(reinterpret_cast<const uint8_t *>(c.data()),
                  reinterpret_cast<const uint8_t *>(m.data()),
                  reinterpret_cast<const uint8_t *>(a.data()),
                  reinterpret_cast<uint8_t *>(got.data()), 2, 3, pieces);
  CHECK(got == want);
}

TEST_CASE("kernel split by table writes each piece to its region, row by row") {
  // src [2,6] split on axis 1 into [2,1] (mutable, offset 4), [2,3] (skipped:
  // nobody reads it) and [2,2] (activations, offset 8).
  Vec src = randomVec(12, 54), m(4, 0.0f), a(6, 0.0f), mWant = m, aWant = a;
  for (int r = 0; r < 2; ++r) {
    mWant[1 + r] = src[r * 6];
    for (int j = 0; j < 2; ++j)
      aWant[2 + r * 2 + j] = src[r * 6 + 4 + j];
  }
  const int32_t pieces[9] = {1, 4, 4, -1, 0, 12, 2, 8, 8};
  bf_split_table(reinterpret_cast<const uint8_t *>(src.data()),
                 reinterpret_cast<uint8_t *>(m.data()), reinterpret_cast<uint8_t *>(a.data()), 2, 3,
                 pieces);
  CHECK(m == mWant);
  CHECK(a == aWant);
}

TEST_CASE("kernel pad: constant, reflect, edge") {
  const int H = 3, W = 4, pT = 2, pL = 1, pB = 1, pR = 3;
  const int OH = H + pT + pB, OW = W + pL + pR;
  Vec x = randomVec(size_t(H) * W, 51);
  const int32_t inDims[6] = {1, 1, 1, 1, H, W}, outDims[6] = {1, 1, 1, 1, OH, OW},
                begin[6] = {0, 0, 0, 0, pT, pL};
  auto reflect = [](int i, int n) {
    while (i < 0 || i >= n)
      i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
  };
  for (int mode = 0; mode < 3; ++mode) {
    CAPTURE(mode);
    Vec want(size_t(OH) * OW), got(want.size());
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        int ih = oh - pT, iw = ow - pL;
        float v;
        if (mode == BF_PAD_CONSTANT)
          v = (ih < 0 || ih >= H || iw < 0 || iw >= W) ? 0.5f : x[ih * W + iw];
        else if (mode == BF_PAD_EDGE)
          v = x[std::clamp(ih, 0, H - 1) * W + std::clamp(iw, 0, W - 1)];
        else
          v = x[reflect(ih, H) * W + reflect(iw, W)];
        want[oh * OW + ow] = v;
      }
    bf_pad_f32(x.data(), got.data(), inDims, outDims, begin, mode, 0.5f);
    checkClose(got, want);
  }
}

TEST_CASE("kernel resize nearest and linear (half_pixel tables)") {
  const int NC = 2, IH = 3, IW = 4, OH = 6, OW = 8;
  Vec x = randomVec(size_t(NC) * IH * IW, 61);
  std::vector<int32_t> hIdx(OH), wIdx(OW), h0(OH), h1(OH), w0(OW), w1(OW);
  Vec hw(OH), ww(OW);
  auto tables = [](int inLen, int outLen, std::vector<int32_t> &nearest, std::vector<int32_t> &i0,
                   std::vector<int32_t> &i1, Vec &wt) {
    for (int o = 0; o < outLen; ++o) {
      double src = (o + 0.5) * inLen / outLen - 0.5;
      nearest[o] = std::clamp(int(std::floor(src + 0.5)), 0, inLen - 1);
      double c = std::clamp(src, 0.0, double(inLen - 1));
      i0[o] = int(std::floor(c));
      i1[o] = std::min(i0[o] + 1, inLen - 1);
      wt[o] = float(c - i0[o]);
    }
  };
  tables(IH, OH, hIdx, h0, h1, hw);
  tables(IW, OW, wIdx, w0, w1, ww);
  Vec got(size_t(NC) * OH * OW), wantN(got.size()), wantL(got.size());
  for (int p = 0; p < NC; ++p)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        const float *P = x.data() + p * IH * IW;
        wantN[(p * OH + oh) * OW + ow] = P[hIdx[oh] * IW + wIdx[ow]];
        float a = P[h0[oh] * IW + w0[ow]], b = P[h0[oh] * IW + w1[ow]], c = P[h1[oh] * IW + w0[ow]],
              d = P[h1[oh] * IW + w1[ow]];
        wantL[(p * OH + oh) * OW + ow] = (a * (1 - ww[ow]) + b * ww[ow]) * (1 - hw[oh]) +
                                         (c * (1 - ww[ow]) + d * ww[ow]) * hw[oh];
      }
  bf_resize_params params;
  params.nc = NC, params.ih = IH, params.iw = IW, params.oh = OH, params.ow = OW;
  params.in_zero_point = params.out_zero_point = 0; // float: unread
  bf_resize_nearest_f32(x.data(), got.data(), &params, hIdx.data(), wIdx.data());
  checkClose(got, wantN);
  bf_resize_linear_f32(x.data(), got.data(), &params, h0.data(), h1.data(), hw.data(), w0.data(),
                       w1.data(), ww.data());
  checkClose(got, wantL);
}

TEST_CASE("kernel binary broadcasting, unary ops, gather, cast") {
  // [2,3,4] + [3,1] -> a strides {12,4,1}, b strides {0,1,0}.
  Vec a = randomVec(24, 71), b = randomVec(3, 72, 0.5f, 2.0f), got(24), want(24);
  const int32_t dims[6] = {1, 1, 1, 2, 3, 4}, sa[6] = {0, 0, 0, 12, 4, 1},
                sb[6] = {0, 0, 0, 0, 1, 0};
  for (int i = 0; i < 24; ++i)
    want[i] = a[i] / b[(i / 4) % 3];
  bf_div_f32(a.data(), b.data(), got.data(), dims, sa, sb);
  checkClose(got, want);
  for (int i = 0; i < 24; ++i)
    want[i] = a[i] < 0 ? a[i] * b[(i / 4) % 3] : a[i];
  bf_prelu_f32(a.data(), b.data(), got.data(), dims, sa, sb);
  checkClose(got, want);
  // In place, same shapes.
  Vec c = a;
  bf_add_f32(c.data(), a.data(), c.data(), dims, sa, sa);
  for (int i = 0; i < 24; ++i)
    want[i] = 2 * a[i];
  checkClose(c, want);

  Vec u = randomVec(50, 73, -6, 6), out(50);
  struct Unary {
    void (*fn)(const float *, float *, int32_t, float, float);
    double (*ref)(double);
  } unaries[] = {
      {bf_relu_f32, [](double v) { return v > 0 ? v : 0; }},
      {bf_sigmoid_f32, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {bf_tanh_f32, [](double v) { return std::tanh(v); }},
      {bf_hard_swish_f32, [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); }},
      {bf_exp_f32, [](double v) { return std::exp(v); }},
      {bf_abs_f32, [](double v) { return std::fabs(v); }},
  };
  for (const Unary &op : unaries) {
    Vec ref(50);
    for (int i = 0; i < 50; ++i)
      ref[i] = float(op.ref(u[i]));
    op.fn(u.data(), out.data(), 50, 0, 0);
    checkClose(out, ref, 1e-5f);
  }
  Vec ref(50);
  for (int i = 0; i < 50; ++i)
    ref[i] = std::clamp(u[i], -1.0f, 2.0f);
  bf_clip_f32(u.data(), out.data(), 50, -1.0f, 2.0f);
  checkClose(out, ref);
  for (int i = 0; i < 50; ++i)
    ref[i] = u[i] >= 0 ? u[i] : 0.1f * u[i];
  bf_leaky_relu_f32(u.data(), out.data(), 50, 0.1f, 0);
  checkClose(out, ref);

  // Gather rows of a [4,3] matrix with negative indices (axis 0).
  Vec data = randomVec(12, 74), g(9);
  const int64_t idx[3] = {2, -1, 0};
  bf_gather_i64(reinterpret_cast<const uint8_t *>(data.data()), idx,
                reinterpret_cast<uint8_t *>(g.data()), 1, 4, 12, 3);
  Vec gWant = {data[6], data[7], data[8], data[9], data[10], data[11], data[0], data[1], data[2]};
  checkClose(g, gWant);

  const int64_t ints[3] = {-3, 0, 7};
  Vec f(3);
  bf_cast_i64_f32(ints, f.data(), 3);
  checkClose(f, {-3.0f, 0.0f, 7.0f});
}

TEST_CASE("kernel integer arithmetic wraps, Div truncates and x / 0 is 0") {
  const int32_t dims[6] = {1, 1, 1, 1, 1, 4}, dense[6] = {0, 0, 0, 0, 0, 1};
  const int32_t bcast[6] = {0, 0, 0, 0, 0, 0};
  const int32_t a32[4] = {7, -7, INT32_MIN, 5}, b32[4] = {2, 2, -1, 0};
  int32_t o32[4];
  bf_binary_i32(a32, b32, o32, dims, dense, dense, BF_OP_DIV);
  CHECK(o32[0] == 3);
  CHECK(o32[1] == -3);        // toward zero, not floor
  CHECK(o32[2] == INT32_MIN); // wraps instead of trapping
  CHECK(o32[3] == 0);         // x / 0
  bf_binary_i32(a32, b32, o32, dims, dense, dense, BF_OP_MUL);
  CHECK(o32[2] == INT32_MIN); // INT32_MIN * -1 wraps
  const int32_t big[1] = {INT32_MAX};
  bf_binary_i32(a32, big, o32, dims, dense, bcast, BF_OP_ADD);
  CHECK(o32[0] == int32_t(uint32_t(7) + uint32_t(INT32_MAX)));

  // uint8: 255 is not -1 for Div; Mul wraps modulo 256.
  const uint8_t a8[4] = {200, 255, 16, 3}, b8[4] = {255, 255, 17, 0};
  uint8_t o8[4];
  bf_binary_u8(a8, b8, o8, dims, dense, dense, BF_OP_DIV);
  CHECK(o8[0] == 0);
  CHECK(o8[1] == 1);
  CHECK(o8[3] == 0);
  bf_binary_u8(a8, b8, o8, dims, dense, dense, BF_OP_MUL);
  CHECK(o8[2] == uint8_t(16 * 17));
  const int8_t ai8[4] = {-128, 100, -5, 9}, bi8[4] = {-1, 100, 3, -4};
  int8_t oi8[4];
  bf_binary_i8(ai8, bi8, oi8, dims, dense, dense, BF_OP_DIV);
  CHECK(oi8[0] == -128);
  CHECK(oi8[2] == -1);
  CHECK(oi8[3] == -2);
  bf_binary_i8(ai8, bi8, oi8, dims, dense, dense, BF_OP_MIN);
  CHECK(oi8[1] == 100);
  CHECK(oi8[3] == -4);

  // Clip with bounds in memory; NULL = no bound.
  const int64_t x64[3] = {-10, 0, 10}, lo = -2;
  int64_t c64[3];
  bf_clip_bounds_i64(x64, c64, 3, &lo, nullptr);
  CHECK(c64[0] == -2);
  CHECK(c64[2] == 10);

  // Pad moves bit patterns: int32 edge padding through the 4-byte kernel.
  const uint32_t px[2] = {0xFFFFFFFFu, 0x7FC00001u}; // -1 and a NaN pattern
  uint32_t po[4];
  const int32_t inDims[6] = {1, 1, 1, 1, 1, 2}, outDims[6] = {1, 1, 1, 1, 1, 4};
  const int32_t begin[6] = {0, 0, 0, 0, 0, 1};
  bf_pad_u32(px, po, inDims, outDims, begin, BF_PAD_EDGE, 0);
  CHECK(po[0] == 0xFFFFFFFFu);
  CHECK(po[2] == 0x7FC00001u);
  CHECK(po[3] == 0x7FC00001u);

  // uint8 MaxPool: a window entirely in the padding gives 0.
  const uint8_t mp[4] = {1, 200, 3, 4};
  uint8_t mo[9];
  kernel_tests::maxpool2d(bf_maxpool2d_u8, mp, mo, 1, 2, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1);
  CHECK(mo[0] == 0);
  CHECK(mo[4] == 1);
  CHECK(mo[5] == 200);
}

// The 3-D kernels with a depth-1 input and kernel must agree with the 2-D
// ones (checked against reference loops above); depth padding must not count.
TEST_CASE("kernel 3-D conv, conv_transpose and pools agree with 2-D on depth 1") {
  const int N = 1, C = 4, H = 6, W = 7, M = 6, KH = 3, KW = 2, groups = 2;
  const int sH = 2, sW = 1, pT = 1, pL = 1, dH = 1, dW = 2;
  const int OH = (H + 2 * pT - ((KH - 1) * dH + 1)) / sH + 1;
  const int OW = (W + 2 * pL - ((KW - 1) * dW + 1)) / sW + 1;
  Vec x = randomVec(size_t(N) * C * H * W, 91),
      w = randomVec(size_t(M) * (C / groups) * KH * KW, 92);
  Vec b = randomVec(M, 93);
  const int32_t inDims[3] = {1, H, W}, outDims[3] = {1, OH, OW}, kernel[3] = {1, KH, KW};
  const int32_t strides[3] = {1, sH, sW}, pads[3] = {0, pT, pL}, dil[3] = {1, dH, dW};
  Vec want(size_t(N) * M * OH * OW), got(want.size(), 5.0f);
  kernel_tests::conv2d(x.data(), w.data(), b.data(), want.data(), N, C, H, W, M, OH, OW, KH, KW, sH,
                       sW, pT, pL, dH, dW, groups, BF_ACT_RELU, 0, 0);
  const bf_window3d_params conv3 =
      kernel_tests::conv3dParams(N, C, M, inDims, outDims, kernel, strides, pads, dil, groups);
  bf_conv3d_f32(x.data(), w.data(), b.data(), got.data(), &conv3, BF_ACT_RELU, 0, 0);
  checkClose(got, want);

  // ConvTranspose: w [C, M/groups, 1, KH, KW], output = the full scatter.
  const int TH = (H - 1) * sH - 2 * pT + (KH - 1) * dH + 1,
            TW = (W - 1) * sW - 2 * pL + (KW - 1) * dW + 1;
  const int32_t tOut[3] = {1, TH, TW};
  Vec wt = randomVec(size_t(C) * (M / groups) * KH * KW, 94);
  Vec tWant(size_t(N) * M * TH * TW), tGot(tWant.size(), 5.0f);
  kernel_tests::convTranspose2d(x.data(), wt.data(), b.data(), tWant.data(), N, C, H, W, M, TH, TW,
                                KH, KW, sH, sW, pT, pL, dH, dW, groups, BF_ACT_NONE, 0, 0);
  const bf_window3d_params transpose3 =
      kernel_tests::conv3dParams(N, C, M, inDims, tOut, kernel, strides, pads, dil, groups);
  bf_conv_transpose3d_f32(x.data(), wt.data(), b.data(), tGot.data(), &transpose3, BF_ACT_NONE, 0,
                          0);
  checkClose(tGot, tWant);

  // Pools (no dilation, symmetric pads): max and average with/without pads.
  const int PK = 3, ps = 2, pp = 1, POH = (H + 2 * pp - PK) / ps + 1,
            POW = (W + 2 * pp - PK) / ps + 1;
  const int32_t pOut[3] = {1, POH, POW}, pKernel[3] = {1, PK, PK}, pStrides[3] = {1, ps, ps};
  const int32_t pBegin[3] = {0, pp, pp}, pEnd[3] = {0, pp, pp}, one[3] = {1, 1, 1};
  Vec pWant(size_t(C) * POH * POW), pGot(pWant.size());
  kernel_tests::maxpool2d(bf_maxpool2d_f32, x.data(), pWant.data(), C, H, W, POH, POW, PK, PK, ps,
                          ps, pp, pp, 1, 1);
  kernel_tests::pool3d(x.data(), pGot.data(), C, inDims, pOut, pKernel, pStrides, pBegin, pEnd, one,
                       1, 0);
  checkClose(pGot, pWant);
  for (int include = 0; include < 2; ++include) {
    kernel_tests::avgpool2d(x.data(), pWant.data(), C, H, W, POH, POW, PK, PK, ps, ps, pp, pp, pp,
                            pp, include);
    kernel_tests::pool3d(x.data(), pGot.data(), C, inDims, pOut, pKernel, pStrides, pBegin, pEnd,
                         one, 0, include);
    checkClose(pGot, pWant);
  }
}
