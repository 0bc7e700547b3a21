//===- WindowParams.cpp - 2-D window geometry as kernel structs -----------===//
#include "common/WindowParams.h"

#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/ShapeHelpers.h"
#include "bundlefit/support/Error.h"

namespace bundlefit::window_params {

using Ints = std::vector<int64_t>;

SpatialWindow resolveSpatial(const Node &node, const Shape &in, const Shape &out,
                             const Ints &kernel, bool transposed, bool ceilMode) {
  const size_t rank = in.size();
  if (rank < 3 || rank > 5)
    throw Error(ExitCode::Unsupported, node.describe() + ": only 1-D, 2-D and 3-D windows (input " +
                                           shapeToString(in) + ") are supported");
  const size_t spatial = rank - 2;
  if (kernel.size() != spatial || out.size() != rank)
    throw Error(ExitCode::Unsupported, node.describe() + ": kernel/output do not match the rank");
  const Ints inSpatial(in.begin() + 2, in.end());
  SpatialWindow w;
  Ints outSpatial;
  if (transposed) {
    shape_helpers::TransposeWindow t =
        shape_helpers::resolveTransposeWindow(node, inSpatial, kernel);
    w = {t.strides, t.dilations, t.padsBegin, t.padsEnd};
    outSpatial = t.outSpatial;
  } else {
    shape_helpers::Window t = shape_helpers::resolveWindow(node, inSpatial, kernel, ceilMode);
    w = {t.strides, t.dilations, t.padsBegin, t.padsEnd};
    outSpatial = t.outSpatial;
  }
  for (size_t i = 0; i < spatial; ++i)
    if (outSpatial[i] != out[2 + i])
      throw Error(ExitCode::Unsupported, node.describe() + ": output " + shapeToString(out) +
                                             " differs from the window geometry");
  return w;
}

namespace {

/// A 1-D or 2-D window as 2-D: 1-D gets h = 1 (kernel, stride, dilation 1,
/// no pads on that axis).
struct Window2d {
  int64_t h = 1, w = 1, oh = 1, ow = 1, kh = 1, kw = 1, strideH = 1, strideW = 1, dilH = 1,
          dilW = 1, padT = 0, padL = 0, padB = 0, padR = 0;
};

Window2d window2d(const Node &node, const Shape &in, const Shape &out, const Ints &kernel,
                  bool transposed, bool ceilMode) {
  const size_t rank = in.size();
  if (rank != 3 && rank != 4)
    throw Error(ExitCode::Unsupported, node.describe() + ": only 1-D and 2-D windows (input " +
                                           shapeToString(in) + ") are supported");
  const SpatialWindow sw = resolveSpatial(node, in, out, kernel, transposed, ceilMode);
  Window2d w;
  w.w = in[rank - 1], w.ow = out[rank - 1];
  if (rank == 4) {
    w.h = in[2], w.oh = out[2];
    w.kh = kernel[0], w.kw = kernel[1];
    w.strideH = sw.strides[0], w.strideW = sw.strides[1];
    w.dilH = sw.dilations[0], w.dilW = sw.dilations[1];
    w.padT = sw.padsBegin[0], w.padL = sw.padsBegin[1];
    w.padB = sw.padsEnd[0], w.padR = sw.padsEnd[1];
  } else {
    w.kw = kernel[0], w.strideW = sw.strides[0], w.dilW = sw.dilations[0];
    w.padL = sw.padsBegin[0], w.padR = sw.padsEnd[0];
  }
  return w;
}

} // namespace

bf_conv_params convParams(const Node &node, const Shape &in, const Shape &out, const Ints &kernel,
                          bool transposed) {
  const Window2d win = window2d(node, in, out, kernel, transposed, false);
  const int64_t groups = node.attrs.getInt("group", 1);
  if (groups <= 0 || in[1] % groups != 0 || out[1] % groups != 0)
    throw Error(ExitCode::Unsupported, node.describe() + ": group " + std::to_string(groups) +
                                           " does not divide the channels");
  const Node &n = node;
  bf_conv_params p = unsetKernelParams<bf_conv_params>();
  p.n = paramI32(n, in[0]), p.c = paramI32(n, in[1]), p.h = paramI32(n, win.h);
  p.w = paramI32(n, win.w), p.m = paramI32(n, out[1]), p.oh = paramI32(n, win.oh);
  p.ow = paramI32(n, win.ow), p.kh = paramI32(n, win.kh), p.kw = paramI32(n, win.kw);
  p.stride_h = paramI32(n, win.strideH), p.stride_w = paramI32(n, win.strideW);
  p.pad_t = paramI32(n, win.padT), p.pad_l = paramI32(n, win.padL);
  p.dil_h = paramI32(n, win.dilH), p.dil_w = paramI32(n, win.dilW);
  p.groups = paramI32(n, groups);
  return p;
}

bf_pool_params poolParams(const Node &node, const Shape &in, const Shape &out, bool isMax) {
  const bool ceilMode = node.attrs.getInt("ceil_mode", 0) != 0;
  const Window2d win = window2d(node, in, out, node.attrs.getInts("kernel_shape"), false, ceilMode);
  const Node &n = node;
  bf_pool_params p = unsetKernelParams<bf_pool_params>();
  p.n = paramI32(n, in[0]), p.c = paramI32(n, in[1]), p.h = paramI32(n, win.h);
  p.w = paramI32(n, win.w), p.oh = paramI32(n, win.oh), p.ow = paramI32(n, win.ow);
  p.kh = paramI32(n, win.kh), p.kw = paramI32(n, win.kw);
  p.stride_h = paramI32(n, win.strideH), p.stride_w = paramI32(n, win.strideW);
  p.pad_t = paramI32(n, win.padT), p.pad_l = paramI32(n, win.padL);
  p.pad_b = paramI32(n, win.padB), p.pad_r = paramI32(n, win.padR);
  p.dil_h = paramI32(n, win.dilH), p.dil_w = paramI32(n, win.dilW);
  p.is_max = isMax;
  p.count_include_pad = node.attrs.getInt("count_include_pad", 0) != 0;
  p.pad_value = 0, p.act_min = 0, p.act_max = 0, p.chunk = 0;
  return p;
}

namespace {

/// The fields of bf_window3d_params that convolutions and pools share.
bf_window3d_params window3d(const Node &n, const Shape &in, const Shape &out, const Ints &kernel,
                            const SpatialWindow &sw) {
  bf_window3d_params p = unsetKernelParams<bf_window3d_params>();
  p.n = paramI32(n, in[0]), p.c = paramI32(n, in[1]), p.m = paramI32(n, out[1]);
  p.d = paramI32(n, in[2]), p.h = paramI32(n, in[3]), p.w = paramI32(n, in[4]);
  p.od = paramI32(n, out[2]), p.oh = paramI32(n, out[3]), p.ow = paramI32(n, out[4]);
  p.kd = paramI32(n, kernel[0]), p.kh = paramI32(n, kernel[1]), p.kw = paramI32(n, kernel[2]);
  p.stride_d = paramI32(n, sw.strides[0]), p.stride_h = paramI32(n, sw.strides[1]);
  p.stride_w = paramI32(n, sw.strides[2]);
  p.pad_d = paramI32(n, sw.padsBegin[0]), p.pad_h = paramI32(n, sw.padsBegin[1]);
  p.pad_w = paramI32(n, sw.padsBegin[2]);
  p.pad_d_end = paramI32(n, sw.padsEnd[0]), p.pad_h_end = paramI32(n, sw.padsEnd[1]);
  p.pad_w_end = paramI32(n, sw.padsEnd[2]);
  p.dil_d = paramI32(n, sw.dilations[0]), p.dil_h = paramI32(n, sw.dilations[1]);
  p.dil_w = paramI32(n, sw.dilations[2]);
  return p;
}

} // namespace

bf_window3d_params conv3dParams(const Node &node, const Shape &in, const Shape &out,
                                const Ints &kernel, bool transposed) {
  const int64_t groups = node.attrs.getInt("group", 1);
  if (groups <= 0 || in[1] % groups != 0 || out[1] % groups != 0)
    throw Error(ExitCode::Unsupported, node.describe() + ": group " + std::to_string(groups) +
                                           " does not divide the channels");
  bf_window3d_params p =
      window3d(node, in, out, kernel, resolveSpatial(node, in, out, kernel, transposed, false));
  p.groups = paramI32(node, groups), p.is_max = 0, p.count_include_pad = 0;
  return p;
}

bf_window3d_params pool3dParams(const Node &node, const Shape &in, const Shape &out, bool isMax) {
  const Ints kernel = node.attrs.getInts("kernel_shape");
  const bool ceilMode = node.attrs.getInt("ceil_mode", 0) != 0;
  bf_window3d_params p =
      window3d(node, in, out, kernel, resolveSpatial(node, in, out, kernel, false, ceilMode));
  p.groups = 1, p.is_max = isMax;
  p.count_include_pad = node.attrs.getInt("count_include_pad", 0) != 0;
  return p;
}

} // namespace bundlefit::window_params
