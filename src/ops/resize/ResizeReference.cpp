//===- ResizeReference.cpp - The int8 reference Resize ----------------------===//
//
// Nearest copies codes: the float reference (resize_interp::resizeKernel)
// reads and writes any dtype. Linear is onnxruntime's
// DequantizeLinear -> Resize -> QuantizeLinear: each neighbour dequantized
// in float, the four weighted in its bilinear order (lower row, lower
// column first), the sum divided by the output scale and rounded half to
// even with the host's nearbyint. The neighbours and weights are those of
// onnxruntime's setup (linearAxisF32), the blend is this file's own.
//
//===----------------------------------------------------------------------===//
#include "resize/Resize.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "common/Int8Reference.h"

#include <algorithm>

#include <cmath>

namespace bundlefit::resize_reference {

using namespace int8_ref;

namespace {

void linear(const Node &node, const std::vector<const Tensor *> &inputs,
            std::vector<Tensor> &outputs) {
  const Value &x = *node.input(0), &y = *node.output(0);
  const Affine in = activationOf(node, &x, "input"), out = activationOf(node, &y, "output");
  const Shape &xs = x.type.shape, &ys = y.type.shape;
  if (xs.size() != 4 || xs[0] != ys[0] || xs[1] != ys[1])
    shape_helpers::unsupported(node, "only 2-D resizes of NCHW tensors run in int8");
  const LinearAxis h = linearAxisF32(node, 2), w = linearAxisF32(node, 3);
  const int8_t *xd = inputs[0]->data<int8_t>();
  int8_t *yd = outputs[0].data<int8_t>();
  const int64_t IH = xs[2], IW = xs[3], OH = ys[2], OW = ys[3];
  auto real = [&](int64_t plane, int64_t r, int64_t c) {
    return float(in.scale) * float(int32_t(xd[(plane * IH + r) * IW + c]) - in.zeroPoint);
  };
  for (int64_t plane = 0; plane < xs[0] * xs[1]; ++plane)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const float corner[4] = {real(plane, h.lo[oh], w.lo[ow]), real(plane, h.lo[oh], w.hi[ow]),
                                 real(plane, h.hi[oh], w.lo[ow]), real(plane, h.hi[oh], w.hi[ow])};
        const float weight[4] = {w.loWeight[ow] * h.loWeight[oh], w.hiWeight[ow] * h.loWeight[oh],
                                 w.loWeight[ow] * h.hiWeight[oh], w.hiWeight[ow] * h.hiWeight[oh]};
        float sum = 0.0f;
        for (int k = 0; k < 4; ++k) {
          const float term = weight[k] * corner[k];
          sum += term;
        }
        const float q = std::nearbyint(sum / float(out.scale));
        yd[(plane * OH + oh) * OW + ow] =
            clampToInt8(int64_t(std::max(-1e6f, std::min(1e6f, q))) + out.zeroPoint);
      }
}

} // namespace

void resize(const Node &node, const std::vector<const Tensor *> &inputs,
            std::vector<Tensor> &outputs) {
  if (node.attrs.getString("mode", "nearest") == "linear")
    linear(node, inputs, outputs);
  else
    resize_interp::resizeKernel(node, inputs, outputs);
}

} // namespace bundlefit::resize_reference

namespace bundlefit {

void registerResizeInt8Reference(OpRegistry &registry) {
  registry.at("Resize").int8Runs(resize_reference::resize);
}

} // namespace bundlefit
