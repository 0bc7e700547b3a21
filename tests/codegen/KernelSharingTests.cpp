//===- KernelSharingTests.cpp - Kernel code shared as the call marks say --===//
//
// Code generation shares a kernel's code between calls only as the operator
// family marked its calls (KernelCall.h: CallSharing, noAlias,
// pointwiseShape; codegen/CallMarks.h), never by the kernel's name. These
// checks fail when a family stops marking: Conv's int8 depthwise calls share
// one noalias wrapper per shape class, and three 1x1 shapes switch the int8
// kernels to their shared pointwise function. (The float convolutions'
// per-shape grouping past 64 call sites: tests/memory_opt, MobileNetV1-0.25
// at --memory-opt 2.)
//
//===----------------------------------------------------------------------===//
#include "../quant_kernels/QuantGraphBuilder.h"
#include "bundlefit/codegen/BundleCodegen.h"
#include "bundlefit/codegen/Target.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <doctest/doctest.h>

#include <functional>
#include <string>

using namespace bundlefit;
using namespace bundlefit::test;

namespace {

std::function<void(Attributes &)> window(int64_t k, int64_t pad, int64_t group = 1) {
  return [=](Attributes &a) {
    a.setInts("kernel_shape", {k, k});
    a.setInts("strides", {1, 1});
    a.setInts("pads", {pad, pad, pad, pad});
    if (group > 1)
      a.setInt("group", group);
  };
}

/// Two depthwise 3x3 convolutions of one shape (their own weights and
/// requantization tables, so their node functions differ), then three 1x1
/// convolutions of three shapes; every zero point 0.
std::unique_ptr<Graph> buildNet() {
  Builder b("share", 31);
  Value *x = b.input("x", {1, 8, 6, 6});
  Value *q = b.op("Quantize", "q", {x}, int8Type({1, 8, 6, 6}, 1.0f / 64, 0));
  Value *d1 =
      b.op("Conv", "d1",
           {q, b.weights("wd1", {8, 1, 3, 3}, {0.01f}), b.int32Bias("bd1", 8, {0.01f / 64})},
           int8Type({1, 8, 6, 6}, 0.05f, 0), window(3, 1, 8));
  Value *d2 =
      b.op("Conv", "d2",
           {d1, b.weights("wd2", {8, 1, 3, 3}, {0.02f}), b.int32Bias("bd2", 8, {0.02f * 0.05f})},
           int8Type({1, 8, 6, 6}, 0.06f, 0), window(3, 1, 8));
  Value *p1 = b.op("Conv", "p1", {d2, b.weights("wp1", {12, 8, 1, 1}, {0.01f}), nullptr},
                   int8Type({1, 12, 6, 6}, 0.04f, 0), window(1, 0));
  Value *p2 = b.op("Conv", "p2", {p1, b.weights("wp2", {16, 12, 1, 1}, {0.01f}), nullptr},
                   int8Type({1, 16, 6, 6}, 0.04f, 0), window(1, 0));
  Value *p3 = b.op("Conv", "p3", {p2, b.weights("wp3", {8, 16, 1, 1}, {0.01f}), nullptr},
                   int8Type({1, 8, 6, 6}, 0.04f, 0), window(1, 0));
  b.graph->markOutput(b.op("Dequantize", "y", {p3}, floatType({1, 8, 6, 6})));
  return std::move(b.graph);
}

/// Two depthwise convolutions of one shape class, each followed by a Sigmoid
/// (an int8 table activation) that LutFusion.h runs in the conv's stores.
std::unique_ptr<Graph> buildLutNet() {
  Builder b("share_lut", 31);
  Value *x = b.input("x", {1, 8, 6, 6});
  // Zero point -128 as the Sigmoids' outputs: both convs take one input
  // offset, so they fall in one shape class.
  Value *q = b.op("Quantize", "q", {x}, int8Type({1, 8, 6, 6}, 1.0f / 256, -128));
  Value *d1 =
      b.op("Conv", "d1",
           {q, b.weights("wd1", {8, 1, 3, 3}, {0.01f}), b.int32Bias("bd1", 8, {0.01f / 256})},
           int8Type({1, 8, 6, 6}, 0.05f, 0), window(3, 1, 8));
  Value *s1 = b.op("Sigmoid", "s1", {d1}, int8Type({1, 8, 6, 6}, 1.0f / 256, -128));
  Value *d2 =
      b.op("Conv", "d2",
           {s1, b.weights("wd2", {8, 1, 3, 3}, {0.02f}), b.int32Bias("bd2", 8, {0.02f / 256})},
           int8Type({1, 8, 6, 6}, 0.06f, 0), window(3, 1, 8));
  Value *s2 = b.op("Sigmoid", "s2", {d2}, int8Type({1, 8, 6, 6}, 1.0f / 256, -128));
  b.graph->markOutput(b.op("Dequantize", "y", {s2}, floatType({1, 8, 6, 6})));
  return std::move(b.graph);
}

/// The `define` line of the first function whose name starts with `prefix`
/// ("" when there is none).
std::string defineLine(const std::string &ir, const std::string &prefix) {
  for (size_t at = ir.find("\ndefine "); at != std::string::npos;
       at = ir.find("\ndefine ", at + 1)) {
    const std::string line = ir.substr(at + 1, ir.find('\n', at + 1) - at - 1);
    if (line.find("@" + prefix) != std::string::npos)
      return line;
  }
  return "";
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

} // namespace

TEST_CASE("int8 depthwise calls of one shape share a noalias wrapper; 1x1 shapes the pointwise "
          "function") {
  std::unique_ptr<Graph> graph = buildNet();
  const MemoryPlan plan = planGraphMemory(*graph);
  const std::string ir = generateBundleIR(*graph, plan, "share", resolveTarget("cortex-m7"));
  // CallSharing::ShapeClass on Conv's depthwise call: one wrapper for d1 and
  // d2. Its pointers (the kernel's restrict tensors, then the two calls'
  // requantization tables, marked KernelArg::noAlias) are all noalias.
  const std::string wrapper = defineLine(ir, "bf_depthwise_conv2d_s8.class");
  INFO(wrapper);
  CHECK_FALSE(wrapper.empty());
  CHECK(count(wrapper, "(ptr ") + count(wrapper, ", ptr ") == 6);
  CHECK(count(wrapper, "ptr noalias ") == 6);
  // KernelCall::pointwiseShape on the 1x1 calls: three shapes set
  // bf_pointwise_shared, so the shared function is kept.
  CHECK_FALSE(defineLine(ir, "bf_i8_pointwise_off0").empty());
}

TEST_CASE("a table fused into int8 depthwise calls is noalias in their shared wrapper") {
  std::unique_ptr<Graph> graph = buildLutNet();
  const MemoryPlan plan = planGraphMemory(*graph);
  const std::string ir = generateBundleIR(*graph, plan, "share_lut", resolveTarget("cortex-m7"));
  // Both Sigmoids run in the convs' stores: no bf_lut_s8 call is left.
  CHECK(ir.find("call void @bf_lut_s8") == std::string::npos);
  // The wrapper takes buildNet's six pointers and the fused table, which is
  // as read-only and planned apart as the requantization tables: every
  // pointer is noalias.
  const std::string wrapper = defineLine(ir, "bf_depthwise_conv2d_s8.class");
  INFO(wrapper);
  CHECK_FALSE(wrapper.empty());
  CHECK(count(wrapper, "(ptr ") + count(wrapper, ", ptr ") == 7);
  CHECK(count(wrapper, "ptr noalias ") == 7);
}
