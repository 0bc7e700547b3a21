//===- Col2Im.cpp - Col2Im (opset 18): column blocks summed back into an image ===//
//
// Col2Im is im2col's adjoint: input [N, C * prod(block_shape), L] holds, for
// each of the L sliding-window positions, the C x block values of one window;
// the output [N, C, image_shape...] is their sum at the pixels each window
// covers (overlapping windows add, pixels no window covers are 0). PyTorch's
// nn.Fold exports to it. `image_shape` and `block_shape` are constant
// parameters; 1 or 2 spatial dims (a 1-D image is run as height 1). Float only:
// in an int8 build it runs in float between Dequantize and Quantize, as any op
// without an int8 kernel (a sum of overlapping windows would need its own
// output scale, and no quantizer emits a quantized Col2Im).
//
//===----------------------------------------------------------------------===//
#include "movement/Movement.h"

#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/LowerHelpers.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

#include <algorithm>

namespace bundlefit {

using lowering::unsupported;
namespace {

/// The geometry of one Col2Im as 2-D (a 1-D image is height 1, kernel 1).
struct Geometry {
  int64_t batch = 0, channels = 0;
  int64_t height = 1, width = 1, kernelH = 1, kernelW = 1;
  int64_t dilationH = 1, dilationW = 1, strideH = 1, strideW = 1, padTop = 0, padLeft = 0;
  int64_t blocksH = 1, blocksW = 1;
};

std::vector<int64_t> intsAttr(const Node &node, const char *name, size_t size, int64_t fill) {
  std::vector<int64_t> values = node.attrs.getInts(name, std::vector<int64_t>(size, fill));
  if (values.size() != size)
    unsupported(node, std::string("attribute '") + name + "' has " + std::to_string(values.size()) +
                          " entries, expected " + std::to_string(size));
  return values;
}

/// Checks the node against ONNX's rules and returns its geometry; every
/// product is overflow-checked (the sizes come from the model file).
Geometry geometryOf(const Node &node) {
  const Value *x = node.input(0);
  if (!x || !node.output(0))
    unsupported(node, "needs input 'input' and an output");
  if (x->type.rank() != 3)
    unsupported(node, "input " + x->type.str() + " must have rank 3 [N, C x prod(block_shape), L]");
  const std::vector<int64_t> image = constantOperand(node, 1, "image_shape");
  const std::vector<int64_t> block = constantOperand(node, 2, "block_shape");
  if (image.size() != block.size())
    unsupported(node, "inputs 'image_shape' and 'block_shape' have " +
                          std::to_string(image.size()) + " and " + std::to_string(block.size()) +
                          " entries; they must match");
  if (image.empty() || image.size() > 2)
    unsupported(node,
                std::to_string(image.size()) +
                    " spatial dimensions; bundlefit runs Col2Im on 1 or 2 (1-D or 2-D images)");
  const size_t rank = image.size();
  const std::vector<int64_t> dilations = intsAttr(node, "dilations", rank, 1);
  const std::vector<int64_t> strides = intsAttr(node, "strides", rank, 1);
  const std::vector<int64_t> pads = intsAttr(node, "pads", 2 * rank, 0);
  constexpr int64_t kLimit = int64_t(1) << 31;
  int64_t blockSize = 1, blocks = 1;
  std::vector<int64_t> perDim(rank);
  for (size_t d = 0; d < rank; ++d) {
    const std::string dim = " of spatial dimension " + std::to_string(d);
    if (image[d] < 1 || image[d] >= kLimit || block[d] < 1 || block[d] >= kLimit)
      unsupported(node, "image_shape " + std::to_string(image[d]) + " and block_shape " +
                            std::to_string(block[d]) + dim + " must be in 1..2^31-1");
    if (dilations[d] < 1 || dilations[d] >= kLimit || strides[d] < 1 || strides[d] >= kLimit)
      unsupported(node, "attributes 'dilations' and 'strides'" + dim + " must be in 1..2^31-1");
    if (pads[d] < 0 || pads[d] >= kLimit || pads[d + rank] < 0 || pads[d + rank] >= kLimit)
      unsupported(node, "attribute 'pads'" + dim + " must be in 0..2^31-1");
    // All operands are below 2^31: these sums and products fit in int64.
    const int64_t span = dilations[d] * (block[d] - 1) + 1;
    const int64_t padded = image[d] + pads[d] + pads[d + rank];
    if (padded < span)
      unsupported(node, "the block" + dim + " (" + std::to_string(span) +
                            " with dilation) is larger than the padded image (" +
                            std::to_string(padded) + ")");
    perDim[d] = (padded - span) / strides[d] + 1;
    std::optional<int64_t> nextBlocks = checkedMul(blocks, perDim[d]);
    std::optional<int64_t> nextSize = checkedMul(blockSize, block[d]);
    if (!nextBlocks || !nextSize)
      unsupported(node, "the number of blocks or the block size overflows int64");
    blocks = *nextBlocks, blockSize = *nextSize;
  }
  const Shape &s = x->type.shape;
  if (s[1] % blockSize != 0)
    unsupported(node, "input " + x->type.str() +
                          ": dimension 1 is not a multiple of the block size " +
                          std::to_string(blockSize));
  if (s[2] != blocks)
    unsupported(node, "input " + x->type.str() + ": dimension 2 must be the number of blocks, " +
                          std::to_string(blocks) +
                          " for this image, block, dilations, pads and strides");
  Geometry g;
  g.batch = s[0], g.channels = s[1] / blockSize;
  if (rank == 2) {
    g.height = image[0], g.kernelH = block[0], g.dilationH = dilations[0];
    g.strideH = strides[0], g.padTop = pads[0], g.blocksH = perDim[0];
  }
  const size_t w = rank - 1;
  g.width = image[w], g.kernelW = block[w], g.dilationW = dilations[w];
  g.strideW = strides[w], g.padLeft = pads[w], g.blocksW = perDim[w];
  return g;
}

void inferCol2Im(Node &node) {
  const Geometry g = geometryOf(node);
  const Value *x = node.input(0);
  if (x->type.dtype != DType::Float32)
    unsupported(node, "input " + x->type.str() + ": Col2Im runs on float32");
  const std::vector<int64_t> image = node.input(1)->toInts();
  Shape shape{g.batch, g.channels};
  shape.insert(shape.end(), image.begin(), image.end());
  if (!checkedElementCount(shape))
    unsupported(node, "output " + shapeToString(shape) + " overflows int64");
  node.output(0)->type.dtype = DType::Float32;
  node.output(0)->type.shape = shape;
}

/// One addition per input element.
uint64_t col2ImMacs(const Node &node) {
  return uint64_t(std::max<int64_t>(0, node.input(0)->type.numElements()));
}

/// The reference: out[n][c][y][x] += in[n][(c * kH + i) * kW + j][by * bW + bx]
/// at y = by * strideH - padTop + i * dilationH (x likewise), inside the image.
void col2ImKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs) {
  const Geometry g = geometryOf(node);
  const float *in = inputs[0]->data<float>();
  float *out = outputs[0].data<float>();
  std::fill_n(out, outputs[0].numElements(), 0.0f);
  const int64_t blocks = g.blocksH * g.blocksW;
  for (int64_t nc = 0; nc < g.batch * g.channels; ++nc)
    for (int64_t i = 0; i < g.kernelH; ++i)
      for (int64_t j = 0; j < g.kernelW; ++j) {
        const float *column = in + (nc * g.kernelH * g.kernelW + i * g.kernelW + j) * blocks;
        float *plane = out + nc * g.height * g.width;
        for (int64_t by = 0; by < g.blocksH; ++by) {
          const int64_t y = by * g.strideH - g.padTop + i * g.dilationH;
          if (y < 0 || y >= g.height)
            continue;
          for (int64_t bx = 0; bx < g.blocksW; ++bx) {
            const int64_t xx = bx * g.strideW - g.padLeft + j * g.dilationW;
            if (xx >= 0 && xx < g.width)
              plane[y * g.width + xx] += column[by * g.blocksW + bx];
          }
        }
      }
}

std::vector<KernelCall> lowerCol2Im(const Node &node, const PlanView &) {
  using namespace lowering;
  const Value *x = input(node, 0), *y = node.output(0);
  requireFloat(node, x);
  const Geometry g = geometryOf(node);
  // The kernel takes int32 counts: N x C planes and the element counts must fit.
  if (!checkedMul(g.batch, g.channels) || g.batch * g.channels >= (int64_t(1) << 31) ||
      x->type.numElements() >= (int64_t(1) << 31) || y->type.numElements() >= (int64_t(1) << 31))
    unsupported(node, "tensors of 2^31 elements or more are past the bundle kernels' int32 counts");
  bf_col2im_params p = unsetKernelParams<bf_col2im_params>();
  p.planes = paramI32(node, g.batch * g.channels);
  p.height = paramI32(node, g.height), p.width = paramI32(node, g.width);
  p.kernel_h = paramI32(node, g.kernelH), p.kernel_w = paramI32(node, g.kernelW);
  p.dil_h = paramI32(node, g.dilationH), p.dil_w = paramI32(node, g.dilationW);
  p.pad_t = paramI32(node, g.padTop), p.pad_l = paramI32(node, g.padLeft);
  p.stride_h = paramI32(node, g.strideH), p.stride_w = paramI32(node, g.strideW);
  p.blocks_h = paramI32(node, g.blocksH), p.blocks_w = paramI32(node, g.blocksW);
  return {
      call("bf_col2im_f32", {KernelArg::address(x), KernelArg::address(y), kernelParams(node, p)})};
}

} // namespace

void registerCol2Im(OpRegistry &registry) {
  OpDef &def = registry.add({"Col2Im", inferCol2Im, col2ImMacs})
                   .parameters(kParametersFrom1)
                   .runs(col2ImKernel);
  def.lower = lowerCol2Im;
}

} // namespace bundlefit
