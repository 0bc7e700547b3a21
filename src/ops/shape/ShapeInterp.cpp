//===- ShapeInterp.cpp - Reference data movement kernels -------------------===//
//
// Dtype-agnostic: elements are copied as bytes of dtypeSize(dtype). Output
// shapes were inferred already (outputs arrive sized); the operands are
// decoded with the same helpers type inference uses (shapeops::...).
//
//===----------------------------------------------------------------------===//
#include "shape/Shape.h"

#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/ops/BroadcastShape.h"
#include "bundlefit/support/Error.h"
#include "common/Broadcast.h"

#include <cstring>

namespace bundlefit {
namespace shape_interp {

using Inputs = std::vector<const Tensor *>;

const Tensor *arg(const Inputs &inputs, size_t index) {
  return index < inputs.size() ? inputs[index] : nullptr;
}

/// The integer elements of an operand tensor (empty if it is omitted).
std::vector<int64_t> intsOf(const Tensor *tensor) {
  std::vector<int64_t> values;
  if (tensor)
    for (int64_t i = 0; i < tensor->numElements(); ++i)
      values.push_back(tensor->type.dtype == DType::Int64 ? tensor->data<int64_t>()[i]
                                                          : int64_t(tensor->at(i)));
  return values;
}

/// An operand given as input `index`, else as the attribute of that name.
std::vector<int64_t> operandInts(const Node &node, const Inputs &inputs, size_t index,
                                 const char *name) {
  if (const Tensor *tensor = arg(inputs, index))
    return intsOf(tensor);
  return node.attrs.getInts(name);
}

int64_t normalizedAxis(int64_t axis, size_t rank) { return axis < 0 ? axis + int64_t(rank) : axis; }

/// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout: same bytes.
void copyKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  if (inputs[0]->bytes.size() != outputs[0].bytes.size())
    fatalInternal(node.describe() + ": copy kernel size mismatch");
  outputs[0].bytes = inputs[0]->bytes;
  if (outputs.size() > 1 && outputs[1].type.dtype == DType::Bool) // Dropout's mask
    std::fill(outputs[1].bytes.begin(), outputs[1].bytes.end(), uint8_t(1));
}

void transposeKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const Tensor &in = *inputs[0];
  Tensor &out = outputs[0];
  std::vector<int64_t> perm = shapeops::transposePerm(node, in.type.rank());
  std::vector<int64_t> inStrides = rowMajorStrides(in.type.shape);
  size_t elem = dtypeSize(in.type.dtype);
  if (out.numElements() == 0)
    return;
  // Output dim i walks input dim perm[i].
  std::vector<int64_t> coords(out.type.rank(), 0);
  int64_t o = 0;
  do {
    int64_t index = 0;
    for (size_t i = 0; i < coords.size(); ++i)
      index += coords[i] * inStrides[size_t(perm[i])];
    std::memcpy(&out.bytes[size_t(o++) * elem], &in.bytes[size_t(index) * elem], elem);
  } while (nextCoords(coords, out.type.shape));
}

/// Bytes of one "row" of dims [axis, rank) and the number of rows before it.
void splitAtAxis(const Shape &shape, int64_t axis, size_t elem, int64_t &outer, int64_t &rowBytes) {
  outer = 1;
  rowBytes = int64_t(elem);
  for (size_t i = 0; i < shape.size(); ++i)
    (int64_t(i) < axis ? outer : rowBytes) *= shape[i];
}

void concatKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  int64_t axis = normalizedAxis(node.attrs.getInt("axis", 0), out.type.rank());
  size_t elem = dtypeSize(out.type.dtype);
  int64_t outer, outRow;
  splitAtAxis(out.type.shape, axis, elem, outer, outRow);
  int64_t offset = 0; // byte offset of the current input inside an output row
  for (const Tensor *in : inputs) {
    int64_t inOuter, inRow;
    splitAtAxis(in->type.shape, axis, elem, inOuter, inRow);
    for (int64_t r = 0; r < outer; ++r)
      if (inRow)
        std::memcpy(&out.bytes[size_t(r * outRow + offset)], &in->bytes[size_t(r * inRow)],
                    size_t(inRow));
    offset += inRow;
  }
}

void splitKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const Tensor &in = *inputs[0];
  int64_t axis = normalizedAxis(node.attrs.getInt("axis", 0), in.type.rank());
  size_t elem = dtypeSize(in.type.dtype);
  int64_t outer, inRow;
  splitAtAxis(in.type.shape, axis, elem, outer, inRow);
  int64_t offset = 0;
  for (Tensor &out : outputs) {
    int64_t outOuter, outRow;
    splitAtAxis(out.type.shape, axis, elem, outOuter, outRow);
    for (int64_t r = 0; r < outer; ++r)
      if (outRow)
        std::memcpy(&out.bytes[size_t(r * outRow)], &in.bytes[size_t(r * inRow + offset)],
                    size_t(outRow));
    offset += outRow;
  }
}

void sliceKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const Tensor &in = *inputs[0];
  Tensor &out = outputs[0];
  std::vector<int64_t> start, step;
  Shape shape;
  shapeops::sliceParams(node, in.type.shape, intsOf(arg(inputs, 1)), intsOf(arg(inputs, 2)),
                        intsOf(arg(inputs, 3)), intsOf(arg(inputs, 4)), start, step, shape);
  if (shape != out.type.shape)
    fatalInternal(node.describe() + ": slice shape disagrees with type inference");
  if (out.numElements() == 0)
    return;
  std::vector<int64_t> inStrides = rowMajorStrides(in.type.shape);
  size_t elem = dtypeSize(in.type.dtype);
  std::vector<int64_t> coords(out.type.rank(), 0);
  int64_t o = 0;
  do {
    int64_t index = 0;
    for (size_t i = 0; i < coords.size(); ++i)
      index += (start[i] + coords[i] * step[i]) * inStrides[i];
    std::memcpy(&out.bytes[size_t(o++) * elem], &in.bytes[size_t(index) * elem], elem);
  } while (nextCoords(coords, out.type.shape));
}

/// Where padding coordinate `i` (may lie outside [0, n)) reads from, or -1
/// for the constant value.
int64_t padSource(int64_t i, int64_t n, const std::string &mode) {
  if (i >= 0 && i < n)
    return i;
  if (mode == "edge")
    return i < 0 ? 0 : n - 1;
  if (mode == "wrap")
    return ((i % n) + n) % n;
  if (mode == "reflect") { // mirror without repeating the edge: period 2(n-1)
    if (n == 1)
      return 0;
    int64_t period = 2 * (n - 1);
    i = ((i % period) + period) % period;
    return i < n ? i : period - i;
  }
  return -1; // constant
}

void padKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const Tensor &in = *inputs[0];
  Tensor &out = outputs[0];
  size_t rank = in.type.rank();
  std::string mode = node.attrs.getString("mode", "constant");
  std::vector<int64_t> pads = shapeops::padAmounts(node, rank, operandInts(node, inputs, 1, "pads"),
                                                   intsOf(arg(inputs, 3)));
  size_t elem = dtypeSize(in.type.dtype);
  // The fill element, as bytes of the data's dtype (0 when omitted).
  std::vector<uint8_t> fill(elem, 0);
  if (const Tensor *value = arg(inputs, 2))
    std::memcpy(fill.data(), value->bytes.data(), elem);
  else if (node.attrs.has("value") && in.type.dtype == DType::Float32) {
    float v = node.attrs.getFloat("value", 0.0f);
    std::memcpy(fill.data(), &v, elem);
  }
  if (out.numElements() == 0)
    return;
  std::vector<int64_t> inStrides = rowMajorStrides(in.type.shape);
  std::vector<int64_t> coords(rank, 0);
  int64_t o = 0;
  do {
    int64_t index = 0;
    for (size_t i = 0; i < rank && index >= 0; ++i) {
      int64_t source = padSource(coords[i] - pads[i], in.type.shape[i], mode);
      index = source < 0 ? -1 : index + source * inStrides[i];
    }
    const uint8_t *from = index < 0 ? fill.data() : &in.bytes[size_t(index) * elem];
    std::memcpy(&out.bytes[size_t(o++) * elem], from, elem);
  } while (nextCoords(coords, out.type.shape));
}

/// Shape's value depends only on the input's type, never on its bytes.
void shapeKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const Value *input = node.input(0);
  const Shape &dims = input ? input->type.shape : inputs[0]->type.shape;
  int64_t rank = int64_t(dims.size());
  int64_t start = node.attrs.getInt("start", 0);
  if (start < 0)
    start += rank;
  start = std::max<int64_t>(0, std::min(start, rank));
  int64_t *o = outputs[0].data<int64_t>();
  for (int64_t i = 0; i < outputs[0].numElements(); ++i)
    o[i] = dims[size_t(start + i)];
}

void sizeKernel(const Node &, const Inputs &inputs, std::vector<Tensor> &outputs) {
  outputs[0].data<int64_t>()[0] = inputs[0]->numElements();
}

/// EyeLike: ones on diagonal k (column = row + k), zeros elsewhere.
void eyeLikeKernel(const Node &node, const Inputs &, std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  const int64_t rows = out.type.shape[0], cols = out.type.shape[1];
  const int64_t k = node.attrs.getInt("k", 0);
  std::fill(out.bytes.begin(), out.bytes.end(), uint8_t(0));
  TensorType scalar;
  scalar.dtype = out.type.dtype;
  scalar.shape = {1};
  Tensor one(scalar);
  switch (out.type.dtype) {
  case DType::Float32:
    one.data<float>()[0] = 1.0f;
    break;
  case DType::Int32:
    one.data<int32_t>()[0] = 1;
    break;
  case DType::Int64:
    one.data<int64_t>()[0] = 1;
    break;
  default:
    one.bytes[0] = 1;
    break; // int8, uint8, bool
  }
  const size_t size = dtypeSize(out.type.dtype);
  for (int64_t r = 0; r < rows; ++r)
    if (r + k >= 0 && r + k < cols)
      std::copy(one.bytes.begin(), one.bytes.end(), out.bytes.begin() + (r * cols + r + k) * size);
}

void gatherKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const Tensor &data = *inputs[0];
  Tensor &out = outputs[0];
  int64_t axis = normalizedAxis(node.attrs.getInt("axis", 0), data.type.rank());
  size_t elem = dtypeSize(data.type.dtype);
  int64_t outer, row; // row = bytes of dims [axis, rank)
  splitAtAxis(data.type.shape, axis, elem, outer, row);
  int64_t dim = data.type.shape[size_t(axis)];
  int64_t inner = dim ? row / dim : 0; // bytes of dims (axis, rank)
  std::vector<int64_t> indices = intsOf(inputs[1]);
  uint8_t *o = out.bytes.data();
  for (int64_t r = 0; r < outer; ++r)
    for (int64_t index : indices) {
      if (index < -dim || index >= dim)
        throw Error(ExitCode::BadInputFile, node.describe() + ": index " + std::to_string(index) +
                                                " is out of range for dim " + std::to_string(dim) +
                                                " of 'data'");
      if (index < 0)
        index += dim;
      std::memcpy(o, &data.bytes[size_t(r * row + index * inner)], size_t(inner));
      o += inner;
    }
}

/// Fills with attribute `value` (a float) converted to the output dtype.
void constantOfShapeKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  double value = node.attrs.getFloat("value", 0.0f);
  for (int64_t i = 0; i < out.numElements(); ++i) {
    switch (out.type.dtype) {
    case DType::Float32:
      out.data<float>()[i] = float(value);
      break;
    case DType::Int8:
      out.data<int8_t>()[i] = int8_t(value);
      break;
    case DType::UInt8:
      out.data<uint8_t>()[i] = uint8_t(value);
      break;
    case DType::Int16:
      out.data<int16_t>()[i] = int16_t(value);
      break;
    case DType::Int32:
      out.data<int32_t>()[i] = int32_t(value);
      break;
    case DType::Int64:
      out.data<int64_t>()[i] = int64_t(value);
      break;
    case DType::Bool:
      out.data<uint8_t>()[i] = value != 0 ? 1 : 0;
      break;
    }
  }
}

/// Range: out[i] = start + i * delta, in the inputs' dtype.
void rangeKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  int64_t count = out.numElements();
  switch (out.type.dtype) {
  case DType::Float32: {
    float start = inputs[0]->data<float>()[0], delta = inputs[2]->data<float>()[0];
    for (int64_t i = 0; i < count; ++i)
      out.data<float>()[i] = float(double(start) + double(i) * double(delta));
    break;
  }
  case DType::Int32: {
    int32_t start = inputs[0]->data<int32_t>()[0], delta = inputs[2]->data<int32_t>()[0];
    for (int64_t i = 0; i < count; ++i)
      out.data<int32_t>()[i] = int32_t(start + i * delta);
    break;
  }
  case DType::Int64: {
    int64_t start = inputs[0]->data<int64_t>()[0], delta = inputs[2]->data<int64_t>()[0];
    for (int64_t i = 0; i < count; ++i)
      // start + i * delta lies between start and limit, but i * delta alone
      // may not fit int64 (Range(2^63-1, -2^63, -2^62)): wrap-around
      // arithmetic in uint64 gives the exact sum.
      out.data<int64_t>()[i] = int64_t(uint64_t(start) + uint64_t(i) * uint64_t(delta));
    break;
  }
  default:
    throw Error(ExitCode::Unsupported,
                node.describe() + ": unsupported dtype " + dtypeName(out.type.dtype));
  }
}

} // namespace shape_interp

} // namespace bundlefit
