//===- MovementInterp.cpp - Reference Expand, Tile, DepthToSpace, Trilu ----===//
//
// Element copies by index arithmetic, on any dtype (elements are moved as
// dtypeSize bytes). Shapes were checked by type inference (MovementOps.cpp).
//
//===----------------------------------------------------------------------===//
#include "movement/Movement.h"

#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/support/Bytes.h"
#include "bundlefit/support/Error.h"
#include "common/Broadcast.h"

#include <algorithm>
#include <cstring>

namespace bundlefit {
namespace movement_interp {

void copyElement(const Tensor &in, int64_t from, Tensor &out, int64_t to) {
  const size_t size = dtypeSize(out.type.dtype);
  copyBytes(out.bytes.data() + size_t(to) * size, in.bytes.data() + size_t(from) * size, size);
}

void expandKernel(const Node &, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs) {
  std::vector<int64_t> map = broadcastIndexMap(inputs[0]->type.shape, outputs[0].type.shape);
  for (size_t i = 0; i < map.size(); ++i)
    copyElement(*inputs[0], map[i], outputs[0], int64_t(i));
}

void tileKernel(const Node &, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs) {
  const Shape &in = inputs[0]->type.shape, &out = outputs[0].type.shape;
  if (numElements(out) == 0)
    return;
  const std::vector<int64_t> strides = rowMajorStrides(in);
  std::vector<int64_t> coords(out.size(), 0);
  int64_t i = 0;
  do {
    int64_t from = 0;
    for (size_t d = 0; d < coords.size(); ++d)
      from += (coords[d] % in[d]) * strides[d];
    copyElement(*inputs[0], from, outputs[0], i++);
  } while (nextCoords(coords, out));
}

/// DepthToSpace (DCR or CRD) and SpaceToDepth, written as the ONNX reference
/// (reshape, transpose, reshape) on output coordinates.
void spaceDepthKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                      std::vector<Tensor> &outputs) {
  const Shape &is = inputs[0]->type.shape;
  const Shape &os = outputs[0].type.shape;
  const int64_t b = node.attrs.getInt("blocksize", 1);
  const bool toSpace = node.opType == "DepthToSpace";
  const bool crd = node.attrs.getString("mode", "DCR") == "CRD";
  int64_t o = 0;
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t c = 0; c < os[1]; ++c)
      for (int64_t h = 0; h < os[2]; ++h)
        for (int64_t w = 0; w < os[3]; ++w, ++o) {
          int64_t ic, ih, iw;
          if (toSpace) {
            const int64_t bh = h % b, bw = w % b;
            ic = crd ? (c * b + bh) * b + bw : (bh * b + bw) * os[1] + c;
            ih = h / b, iw = w / b;
          } else { // output channel = (bh * b + bw) * C + ic
            const int64_t C = is[1];
            const int64_t block = c / C;
            ic = c % C, ih = h * b + block / b, iw = w * b + block % b;
          }
          copyElement(*inputs[0], ((n * is[1] + ic) * is[2] + ih) * is[3] + iw, outputs[0], o);
        }
}

void triluKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                 std::vector<Tensor> &outputs) {
  const Tensor &in = *inputs[0];
  Tensor &out = outputs[0];
  const int64_t k = inputs.size() > 1 && inputs[1] ? int64_t(inputs[1]->at(0)) : 0;
  const bool upper = node.attrs.getInt("upper", 1) != 0;
  const Shape &s = in.type.shape;
  const int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
  const size_t size = dtypeSize(out.type.dtype);
  out.bytes = in.bytes;
  for (int64_t i = 0; i < in.numElements(); ++i) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? c - r >= k : c - r <= k;
    if (!keep)
      std::fill_n(out.bytes.data() + size_t(i) * size, size, uint8_t(0));
  }
}

} // namespace movement_interp

} // namespace bundlefit
