//===- ConvInterp.cpp - Reference Conv and ConvTranspose -------------------===//
//
// Plain loops over N, output channel, output position, input channel and
// kernel position, any spatial rank; double accumulation. Geometry (pads,
// auto_pad, output_shape) comes from ShapeHelpers.h, shared with inference.
//
//===----------------------------------------------------------------------===//
#include "conv/Conv.h"

#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "common/FusedActivation.h"

namespace bundlefit {

using namespace kernel_util;

namespace conv_interp {

/// Unravels a flat index over `dims` into `index`.
void unravel(int64_t flat, const std::vector<int64_t> &dims, std::vector<int64_t> &index) {
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = flat % dims[d];
    flat /= dims[d];
  }
}

/// The flat offset, in a plane of extent `extent` with row-major `strides`, that
/// kernel tap `tap` reaches from window position `pos`; false when the tap falls
/// in the padding. Conv reads its input there and ConvTranspose scatters into its
/// output there, so both walk their window through this one function.
template <typename WindowT>
bool tapOffset(const WindowT &w, const std::vector<int64_t> &pos, const std::vector<int64_t> &tap,
               const std::vector<int64_t> &extent, const std::vector<int64_t> &strides,
               int64_t &offset) {
  offset = 0;
  for (size_t d = 0; d < pos.size(); ++d) {
    int64_t p = pos[d] * w.strides[d] - w.padsBegin[d] + tap[d] * w.dilations[d];
    if (p < 0 || p >= extent[d])
      return false;
    offset += p * strides[d];
  }
  return true;
}

void convKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs) {
  const Tensor &xt = in(node, inputs, 0), &wt = in(node, inputs, 1);
  const Tensor *bt = optionalIn(inputs, 2);
  Tensor &yt = outputs[0];
  const Shape &xs = xt.type.shape, &ws = wt.type.shape, &ys = yt.type.shape;
  size_t sr = xs.size() - 2;
  std::vector<int64_t> inSp(xs.begin() + 2, xs.end()), kSp(ws.begin() + 2, ws.end());
  std::vector<int64_t> outSp(ys.begin() + 2, ys.end());
  shape_helpers::Window w = shape_helpers::resolveWindow(node, inSp, kSp, false);
  int64_t group = node.attrs.getInt("group", 1);
  int64_t N = xs[0], C = xs[1], M = ws[0], Cg = C / group, Mg = M / group;
  int64_t inVol = numElements(inSp), kVol = numElements(kSp), outVol = numElements(outSp);
  std::vector<double> x = toDoubles(xt), wv = toDoubles(wt);
  std::vector<double> b = bt ? toDoubles(*bt) : std::vector<double>(M, 0.0);
  FusedActivation act(node);
  std::vector<int64_t> inStrides = stridesOf(inSp);

  // Kernel positions as multi-indices.
  std::vector<std::vector<int64_t>> kIdx(kVol, std::vector<int64_t>(sr));
  for (int64_t k = 0; k < kVol; ++k)
    unravel(k, kSp, kIdx[k]);

  std::vector<int64_t> o(sr);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      int64_t g = m / Mg;
      for (int64_t op = 0; op < outVol; ++op) {
        unravel(op, outSp, o);
        double acc = b[m];
        for (int64_t k = 0; k < kVol; ++k) {
          int64_t offset;
          if (!tapOffset(w, o, kIdx[k], inSp, inStrides, offset))
            continue;
          for (int64_t c = 0; c < Cg; ++c) {
            double xv = x[((n * C) + g * Cg + c) * inVol + offset];
            double wvv = wv[(m * Cg + c) * kVol + k];
            acc += xv * wvv;
          }
        }
        store(yt, (n * M + m) * outVol + op, act.apply(acc));
      }
    }
}

void convTransposeKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                         std::vector<Tensor> &outputs) {
  const Tensor &xt = in(node, inputs, 0), &wt = in(node, inputs, 1);
  const Tensor *bt = optionalIn(inputs, 2);
  Tensor &yt = outputs[0];
  const Shape &xs = xt.type.shape, &ws = wt.type.shape, &ys = yt.type.shape;
  size_t sr = xs.size() - 2;
  std::vector<int64_t> inSp(xs.begin() + 2, xs.end()), kSp(ws.begin() + 2, ws.end());
  std::vector<int64_t> outSp(ys.begin() + 2, ys.end());
  shape_helpers::TransposeWindow w = shape_helpers::resolveTransposeWindow(node, inSp, kSp);
  int64_t group = node.attrs.getInt("group", 1);
  int64_t N = xs[0], C = xs[1], Cg = C / group, Mg = ws[1], M = Mg * group;
  int64_t inVol = numElements(inSp), kVol = numElements(kSp), outVol = numElements(outSp);
  std::vector<double> x = toDoubles(xt), wv = toDoubles(wt);
  std::vector<double> b = bt ? toDoubles(*bt) : std::vector<double>(M, 0.0);
  FusedActivation act(node);
  std::vector<int64_t> outStrides = stridesOf(outSp);

  std::vector<std::vector<int64_t>> kIdx(kVol, std::vector<int64_t>(sr));
  for (int64_t k = 0; k < kVol; ++k)
    unravel(k, kSp, kIdx[k]);

  std::vector<double> y(size_t(N * M * outVol), 0.0);
  std::vector<int64_t> i(sr);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      int64_t g = c / Cg;
      for (int64_t ip = 0; ip < inVol; ++ip) {
        unravel(ip, inSp, i);
        double xv = x[(n * C + c) * inVol + ip];
        for (int64_t k = 0; k < kVol; ++k) {
          int64_t offset;
          if (!tapOffset(w, i, kIdx[k], outSp, outStrides, offset))
            continue;
          for (int64_t ml = 0; ml < Mg; ++ml) {
            int64_t m = g * Mg + ml;
            y[(n * M + m) * outVol + offset] += xv * wv[(c * Mg + ml) * kVol + k];
          }
        }
      }
    }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t op = 0; op < outVol; ++op) {
        int64_t idx = (n * M + m) * outVol + op;
        store(yt, idx, act.apply(y[idx] + b[m]));
      }
}

} // namespace conv_interp

} // namespace bundlefit
