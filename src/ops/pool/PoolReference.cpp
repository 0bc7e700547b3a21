//===- PoolReference.cpp - The int8 reference pooling ------------------------===//
//
// TFLite's int8 MaxPool and AveragePool (reference_integer_ops), NCHW, 1-D
// or 2-D. The quantizer gives the output the input's parameters, so pooling
// works on the raw values: the maximum of the window's values inside the
// input; the average of their sum rounded half away from zero as TFLite
// does, (sum +- count / 2) / count truncated. With count_include_pad each
// padded position inside the padded input counts as the zero point (0.0).
// An AveragePool at other output parameters (a pre-quantized ONNX model's)
// is onnxruntime's QLinearAveragePool: the window's dequantized values summed
// in float, divided by the count, quantized half to even.
//
//===----------------------------------------------------------------------===//
#include "pool/Pool.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "common/Int8Reference.h"

#include <algorithm>
#include <cmath>

namespace bundlefit::pool_reference {

using namespace int8_ref;

namespace {

/// TFLite's rounded integer mean; an empty window averages to `empty`.
int64_t roundedMean(int64_t sum, int64_t count, int64_t empty) {
  if (count == 0)
    return empty;
  return (sum > 0 ? sum + count / 2 : sum - count / 2) / count;
}

} // namespace

void pool(const Node &node, const std::vector<const Tensor *> &inputs,
          std::vector<Tensor> &outputs) {
  const Value &x = *node.input(0), &y = *node.output(0);
  const Affine in = activationOf(node, &x, "input"), out = activationOf(node, &y, "output");
  // A pre-quantized ONNX model's AveragePool may have its own output
  // parameters: onnxruntime's QLinearAveragePool, in float.
  const bool requant = !(in == out);
  if (requant && node.opType != "AveragePool")
    shape_helpers::unsupported(node, "int8 pooling needs equal input and output parameters");
  if (node.outputs.size() > 1 && node.output(1) && !node.output(1)->name.empty())
    shape_helpers::unsupported(node, "MaxPool's Indices output has no int8 kernel");
  const Shape &xs = x.type.shape, &ys = y.type.shape;
  if (xs.size() != 3 && xs.size() != 4)
    shape_helpers::unsupported(node, "int8 pooling is 1-D or 2-D");
  const bool twoD = xs.size() == 4, isMax = node.opType == "MaxPool";
  const shape_helpers::Window win = shape_helpers::resolveWindow(
      node, std::vector<int64_t>(xs.begin() + 2, xs.end()), node.attrs.getInts("kernel_shape"),
      node.attrs.getInt("ceil_mode", 0) != 0);
  const size_t v = win.kernel.size() - 1;
  const int64_t H = twoD ? xs[2] : 1, W = xs.back(), OH = twoD ? ys[2] : 1, OW = ys.back();
  const int64_t KH = twoD ? win.kernel[0] : 1, KW = win.kernel[v];
  const int64_t sH = twoD ? win.strides[0] : 1, sW = win.strides[v];
  const int64_t dH = twoD ? win.dilations[0] : 1, dW = win.dilations[v];
  const int64_t padT = twoD ? win.padsBegin[0] : 0, padL = win.padsBegin[v];
  const int64_t padB = twoD ? win.padsEnd[0] : 0, padR = win.padsEnd[v];
  if (!isMax && (dH != 1 || dW != 1))
    shape_helpers::unsupported(node, "dilated AveragePool has no int8 kernel");
  const bool countPad = !isMax && node.attrs.getInt("count_include_pad", 0) != 0;
  const int8_t *xd = inputs[0]->data<int8_t>();
  int8_t *yd = outputs[0].data<int8_t>();
  for (int64_t plane = 0; plane < xs[0] * xs[1]; ++plane)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t best = -128, sum = 0, count = 0, padded = 0;
        float realSum = 0.0f;
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t ih = oh * sH + kh * dH - padT, iw = ow * sW + kw * dW - padL;
            const bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
            if (ih >= -padT && ih < H + padB && iw >= -padL && iw < W + padR)
              ++padded;
            if (!inside)
              continue;
            const int64_t value = xd[(plane * H + ih) * W + iw];
            best = std::max(best, value);
            sum += value, ++count;
            realSum += float(in.scale) * float(value - in.zeroPoint);
          }
        if (requant) {
          // onnxruntime counts kernel_shape's product with count_include_pad.
          const int64_t n = countPad ? KH * KW : count;
          const float mean = n > 0 ? realSum / float(n) : 0.0f;
          const float q = std::nearbyint(mean / float(out.scale) + float(out.zeroPoint));
          yd[(plane * OH + oh) * OW + ow] =
              clampToInt8(int64_t(std::max(-1e6f, std::min(1e6f, q))));
          continue;
        }
        if (countPad) {
          sum += (padded - count) * in.zeroPoint;
          count = padded;
        }
        yd[(plane * OH + oh) * OW + ow] =
            clampToInt8(isMax ? best : roundedMean(sum, count, in.zeroPoint));
      }
}

void globalAveragePool(const Node &node, const std::vector<const Tensor *> &inputs,
                       std::vector<Tensor> &outputs) {
  const Value &x = *node.input(0), &y = *node.output(0);
  if (!(activationOf(node, &x, "input") == activationOf(node, &y, "output")))
    shape_helpers::unsupported(node, "int8 pooling needs equal input and output parameters");
  const int64_t planes = x.type.shape.at(0) * x.type.shape.at(1);
  const int64_t size = planes == 0 ? 0 : x.type.numElements() / planes;
  const int8_t *xd = inputs[0]->data<int8_t>();
  int8_t *yd = outputs[0].data<int8_t>();
  for (int64_t plane = 0; plane < planes; ++plane) {
    int64_t sum = 0;
    for (int64_t i = 0; i < size; ++i)
      sum += xd[plane * size + i];
    yd[plane] = clampToInt8(roundedMean(sum, size, 0));
  }
}

} // namespace bundlefit::pool_reference

namespace bundlefit {

void registerPoolInt8Reference(OpRegistry &registry) {
  registry.at("MaxPool").int8Runs(pool_reference::pool);
  registry.at("AveragePool").int8Runs(pool_reference::pool);
  registry.at("GlobalAveragePool").int8Runs(pool_reference::globalAveragePool);
}

} // namespace bundlefit
