//===- ConvReference.cpp - The int8 reference Conv --------------------------===//
//
// TFLite's int8 convolution (reference_integer_ops::ConvPerChannel), NCHW,
// any group (depthwise included), 1-D or 2-D, written as the definition:
//
//   acc[n, m, o] = bias[m] + sum over c in m's group and k in the window
//                  of (x[n, c, o * stride + k * dilation - pad] - xZeroPoint)
//                   * (w[m, c, k] - wZeroPoint[m])        (int64, then int32)
//   y = clamp(requantize(acc, xScale * wScale[m] / yScale) + yZeroPoint)
//
// Window positions in the padding read the input's zero point, i.e. add 0.
//
//===----------------------------------------------------------------------===//
#include "conv/Conv.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "common/Int8Reference.h"

namespace bundlefit::conv_reference {

using namespace int8_ref;

void conv(const Node &node, const std::vector<const Tensor *> &inputs,
          std::vector<Tensor> &outputs) {
  const Shape &xs = node.input(0)->type.shape, &ws = node.input(1)->type.shape;
  const Shape &ys = node.output(0)->type.shape;
  if (xs.size() != 3 && xs.size() != 4)
    shape_helpers::unsupported(node, "int8 convolutions are 1-D or 2-D");
  const WeightedOutput stage(node, inputs, ys[1]);
  const std::vector<int64_t> inSpatial(xs.begin() + 2, xs.end()), kernel(ws.begin() + 2, ws.end());
  const shape_helpers::Window win = shape_helpers::resolveWindow(node, inSpatial, kernel, false);
  // 1-D as 2-D with a height of 1.
  const bool twoD = xs.size() == 4;
  const size_t v = win.kernel.size() - 1; // W's index among the spatial dims
  const int64_t N = xs[0], C = xs[1], H = twoD ? xs[2] : 1, W = xs.back();
  const int64_t M = ys[1], OH = twoD ? ys[2] : 1, OW = ys.back();
  const int64_t KH = twoD ? kernel[0] : 1, KW = kernel.back();
  const int64_t strideH = twoD ? win.strides[0] : 1, strideW = win.strides[v];
  const int64_t dilH = twoD ? win.dilations[0] : 1, dilW = win.dilations[v];
  const int64_t padT = twoD ? win.padsBegin[0] : 0, padL = win.padsBegin[v];
  const int64_t group = node.attrs.getInt("group", 1);
  const int64_t Cg = C / group, Mg = M / group;
  const int32_t xZero = stage.input().zeroPoint;
  const int8_t *xd = inputs[0]->data<int8_t>(), *wd = inputs[1]->data<int8_t>();
  int8_t *yd = outputs[0].data<int8_t>();
  for (int64_t m = 0; m < M; ++m) {
    const int64_t g = m / Mg, wZero = stage.weightZeroPoint(m);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t acc = stage.bias(m);
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh) {
              const int64_t ih = oh * strideH + kh * dilH - padT;
              if (ih < 0 || ih >= H)
                continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t iw = ow * strideW + kw * dilW - padL;
                if (iw < 0 || iw >= W)
                  continue;
                const int64_t xv = xd[((n * C + g * Cg + c) * H + ih) * W + iw];
                const int64_t wv = wd[((m * Cg + c) * KH + kh) * KW + kw];
                acc += (xv - xZero) * (wv - wZero);
              }
            }
          yd[((n * M + m) * OH + oh) * OW + ow] = stage.finish(acc, m);
        }
  }
}

} // namespace bundlefit::conv_reference

namespace bundlefit {

void registerConvInt8Reference(OpRegistry &registry) {
  registry.at("Conv").int8Runs(conv_reference::conv);
}

} // namespace bundlefit
