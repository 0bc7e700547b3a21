//===- ShapeOps.cpp - Data movement and shape arithmetic -------------------===//
//
// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Pad,
// Identity, Dropout, Shape, Gather, ConstantOfShape, Range. Operands that
// decide an output shape (Reshape's shape, Slice's starts...) must be
// constants: bundlefit compiles static shapes. Operand conventions are ONNX
// opset 13+ (axes/pads/split as inputs); the older attribute spellings are
// accepted too when the input is absent.
//
// ConstantOfShape: bundlefit stores the ONNX `value` tensor attribute as a
// float attribute `value` (default 0) plus an int attribute `value_dtype`
// holding a DType enumerator (default Float32).
//
// Type inference sets only dtype and shape of the outputs (quantization
// parameters are left alone). MACs: all of these are data movement, 0.
//
//===----------------------------------------------------------------------===//
#include "shape/Shape.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include "bundlefit/ops/BroadcastShape.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

namespace bundlefit {

using shape_helpers::requireInput;
using shape_helpers::unsupported;
namespace {

/// The elements of a constant operand (shape, starts, axes...).
std::vector<int64_t> constantInts(const Node &node, size_t index, const char *name) {
  const Value &value = requireInput(node, index, name);
  if (!value.isConstant())
    unsupported(node, std::string("input '") + name +
                          "' must be a constant (bundlefit compiles static shapes)");
  return value.toInts();
}

/// An optional constant operand, falling back to the attribute of the same
/// name (older opsets), then to `fallback`. `present` says if either was given.
std::vector<int64_t> optionalInts(const Node &node, size_t index, const char *name,
                                  bool *present = nullptr) {
  if (present)
    *present = true;
  if (node.input(index))
    return constantInts(node, index, name);
  if (node.attrs.has(name))
    return node.attrs.getInts(name);
  if (present)
    *present = false;
  return {};
}

/// Maps an axis in [-rank, rank) to [0, rank); `what` names it in errors.
int64_t normalizeAxis(const Node &node, int64_t axis, int64_t rank, const std::string &what) {
  if (axis < -rank || axis >= rank)
    unsupported(node, what + " = " + std::to_string(axis) + " is out of range for rank " +
                          std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

void setOutput(Node &node, size_t index, DType dtype, const Shape &shape) {
  Value *out = node.output(index);
  if (!out)
    unsupported(node, "missing output " + std::to_string(index));
  out->type.dtype = dtype;
  out->type.shape = shape;
}

} // namespace

namespace shapeops {

/// Transpose's permutation: attribute `perm`, by default the reversed dims.
std::vector<int64_t> transposePerm(const Node &node, size_t rank) {
  std::vector<int64_t> perm = node.attrs.getInts("perm");
  if (perm.empty() && !node.attrs.has("perm"))
    for (size_t i = rank; i-- > 0;)
      perm.push_back(int64_t(i));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != int64_t(i) || sorted.size() != rank)
      unsupported(node, "attribute 'perm' " + shapeToString(perm) +
                            " is not a permutation of the " + std::to_string(rank) + " dims");
  if (perm.size() != rank)
    unsupported(node, "attribute 'perm' " + shapeToString(perm) + " does not match rank " +
                          std::to_string(rank));
  return perm;
}

/// Split's part sizes along `axis`: input/attribute `split`, else equal parts
/// (ONNX 18: ceil(dim / n) each, the last one smaller).
std::vector<int64_t> splitSizes(const Node &node, int64_t dim) {
  bool given = false;
  std::vector<int64_t> sizes = optionalInts(node, 1, "split", &given);
  size_t parts = node.outputs.size();
  if (node.attrs.has("num_outputs") && node.attrs.getInt("num_outputs", 0) != int64_t(parts))
    unsupported(node, "attribute 'num_outputs' does not match the node's " + std::to_string(parts) +
                          " outputs");
  if (given) {
    int64_t sum = 0;
    for (int64_t s : sizes) {
      std::optional<int64_t> next = checkedAdd(sum, s);
      if (s < 0 || !next)
        unsupported(node, "input 'split' has a negative size or sizes past int64");
      sum = *next;
    }
    if (sizes.size() != parts || sum != dim)
      unsupported(node, "input 'split' " + shapeToString(sizes) + " does not split " +
                            std::to_string(dim) + " elements into " + std::to_string(parts) +
                            " outputs");
    return sizes;
  }
  if (parts == 0)
    unsupported(node, "has no outputs");
  int64_t chunk = (dim + int64_t(parts) - 1) / int64_t(parts);
  int64_t last = dim - chunk * int64_t(parts - 1);
  if (last < 0)
    unsupported(node, "cannot split " + std::to_string(dim) + " elements into " +
                          std::to_string(parts) + " parts");
  sizes.assign(parts, chunk);
  sizes.back() = last;
  return sizes;
}

/// Per-dim start and step of a Slice (clamped as ONNX specifies) and the
/// resulting shape. Exposed for the reference kernel.
void sliceParams(const Node &node, const Shape &inShape, const std::vector<int64_t> &starts,
                 const std::vector<int64_t> &ends, const std::vector<int64_t> &axesIn,
                 const std::vector<int64_t> &stepsIn, std::vector<int64_t> &start,
                 std::vector<int64_t> &step, Shape &outShape) {
  int64_t rank = int64_t(inShape.size());
  if (starts.size() != ends.size())
    unsupported(node, "inputs 'starts' and 'ends' have different lengths");
  std::vector<int64_t> axes = axesIn;
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(int64_t(i));
  std::vector<int64_t> steps = stepsIn.empty() ? std::vector<int64_t>(starts.size(), 1) : stepsIn;
  if (axes.size() != starts.size() || steps.size() != starts.size())
    unsupported(node, "inputs 'axes'/'steps' do not match the length of 'starts'");
  start.assign(size_t(rank), 0);
  step.assign(size_t(rank), 1);
  outShape = inShape;
  std::set<int64_t> seen;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = normalizeAxis(node, axes[i], rank, "input 'axes' entry");
    if (!seen.insert(axis).second)
      unsupported(node, "input 'axes' repeats axis " + std::to_string(axes[i]));
    int64_t dim = inShape[size_t(axis)];
    int64_t s = starts[i], e = ends[i], st = steps[i];
    if (st == 0)
      unsupported(node, "input 'steps' has a 0 step");
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    int64_t count;
    if (st > 0) {
      s = std::max<int64_t>(0, std::min(s, dim));
      e = std::max<int64_t>(0, std::min(e, dim));
      count = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::max<int64_t>(0, std::min(s, dim - 1));
      e = std::max<int64_t>(-1, std::min(e, dim - 1));
      count = s > e ? (s - e + (-st) - 1) / (-st) : 0;
    }
    start[size_t(axis)] = s;
    step[size_t(axis)] = st;
    outShape[size_t(axis)] = count;
  }
}

/// Pad's per-dim begin/end amounts (2 * rank values, ONNX order: all begins
/// then all ends) from the `pads` and optional `axes` operands.
std::vector<int64_t> padAmounts(const Node &node, size_t rank, const std::vector<int64_t> &pads,
                                const std::vector<int64_t> &axesIn) {
  std::vector<int64_t> axes = axesIn;
  if (axes.empty())
    for (size_t i = 0; i < rank; ++i)
      axes.push_back(int64_t(i));
  if (pads.size() != 2 * axes.size())
    unsupported(node, "input 'pads' has " + std::to_string(pads.size()) + " values, expected " +
                          std::to_string(2 * axes.size()));
  std::vector<int64_t> full(2 * rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = normalizeAxis(node, axes[i], int64_t(rank), "input 'axes' entry");
    full[size_t(axis)] = pads[i];
    full[rank + size_t(axis)] = pads[axes.size() + i];
  }
  return full;
}

} // namespace shapeops

namespace {

using namespace shapeops;

void inferReshape(Node &node) {
  const Value &data = requireInput(node, 0, "data");
  std::vector<int64_t> requested = constantInts(node, 1, "shape");
  bool allowZero = node.attrs.getInt("allowzero", 0) != 0;
  Shape shape;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < requested.size(); ++i) {
    int64_t dim = requested[i];
    if (dim == 0 && !allowZero) {
      if (i >= data.type.rank())
        unsupported(node, "input 'shape' copies dim " + std::to_string(i) + " (0) but 'data' is " +
                              data.type.str());
      dim = data.type.shape[i];
    }
    if (dim == -1) {
      if (inferred >= 0)
        unsupported(node, "input 'shape' has more than one -1");
      inferred = int64_t(i);
    } else if (dim < 0) {
      unsupported(node, "input 'shape' has invalid dim " + std::to_string(dim));
    } else {
      std::optional<int64_t> product = checkedMul(known, dim);
      if (!product)
        unsupported(node,
                    "input 'shape' " + shapeToString(requested) + " overflows int64 elements");
      known = *product;
    }
    shape.push_back(dim);
  }
  int64_t total = data.type.numElements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      unsupported(node, "cannot infer the -1 in input 'shape' " + shapeToString(requested) +
                            " for 'data' " + data.type.str());
    shape[size_t(inferred)] = total / known;
  }
  if (numElements(shape) != total)
    unsupported(node, "input 'shape' " + shapeToString(requested) + " does not match 'data' " +
                          data.type.str());
  setOutput(node, 0, data.type.dtype, shape);
}

void inferFlatten(Node &node) {
  const Value &input = requireInput(node, 0, "input");
  int64_t rank = int64_t(input.type.rank());
  int64_t axis = node.attrs.getInt("axis", 1);
  if (axis < -rank || axis > rank)
    unsupported(node, "attribute 'axis' = " + std::to_string(axis) + " is out of range for " +
                          input.type.str());
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= input.type.shape[size_t(i)];
  setOutput(node, 0, input.type.dtype, {outer, inner});
}

void inferSqueeze(Node &node) {
  const Value &data = requireInput(node, 0, "data");
  int64_t rank = int64_t(data.type.rank());
  bool given = false;
  std::vector<int64_t> axes = optionalInts(node, 1, "axes", &given);
  std::set<int64_t> squeezed;
  for (int64_t axis : axes) {
    int64_t a = normalizeAxis(node, axis, rank, "axes entry");
    if (data.type.shape[size_t(a)] != 1)
      unsupported(node, "cannot squeeze axis " + std::to_string(axis) + " of 'data' " +
                            data.type.str() + " (size is not 1)");
    squeezed.insert(a);
  }
  Shape shape;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t dim = data.type.shape[size_t(i)];
    bool drop = given ? squeezed.count(i) != 0 : dim == 1;
    if (!drop)
      shape.push_back(dim);
  }
  setOutput(node, 0, data.type.dtype, shape);
}

void inferUnsqueeze(Node &node) {
  const Value &data = requireInput(node, 0, "data");
  bool given = false;
  std::vector<int64_t> axes = optionalInts(node, 1, "axes", &given);
  if (!given)
    unsupported(node, "missing input 'axes'");
  int64_t outRank = int64_t(data.type.rank() + axes.size());
  std::set<int64_t> inserted;
  for (int64_t axis : axes)
    if (!inserted.insert(normalizeAxis(node, axis, outRank, "axes entry")).second)
      unsupported(node, "input 'axes' repeats axis " + std::to_string(axis));
  Shape shape;
  size_t next = 0;
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(inserted.count(i) ? 1 : data.type.shape[next++]);
  setOutput(node, 0, data.type.dtype, shape);
}

void inferTranspose(Node &node) {
  const Value &data = requireInput(node, 0, "data");
  std::vector<int64_t> perm = transposePerm(node, data.type.rank());
  Shape shape;
  for (int64_t p : perm)
    shape.push_back(data.type.shape[size_t(p)]);
  setOutput(node, 0, data.type.dtype, shape);
}

void inferConcat(Node &node) {
  if (node.inputs.empty())
    unsupported(node, "needs at least one input");
  const Value &first = requireInput(node, 0, "inputs");
  if (!node.attrs.has("axis"))
    unsupported(node, "missing attribute 'axis'");
  int64_t rank = int64_t(first.type.rank());
  int64_t axis = normalizeAxis(node, node.attrs.getInt("axis", 0), rank, "attribute 'axis'");
  Shape shape = first.type.shape;
  shape[size_t(axis)] = 0;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value &input = requireInput(node, i, "inputs");
    bool compatible = input.type.dtype == first.type.dtype && int64_t(input.type.rank()) == rank;
    for (int64_t d = 0; compatible && d < rank; ++d)
      compatible = d == axis || input.type.shape[size_t(d)] == first.type.shape[size_t(d)];
    if (!compatible)
      unsupported(node, "input " + std::to_string(i) + " '" + input.name + "' " + input.type.str() +
                            " cannot be concatenated with " + first.type.str() + " on axis " +
                            std::to_string(axis));
    shape[size_t(axis)] += input.type.shape[size_t(axis)];
  }
  setOutput(node, 0, first.type.dtype, shape);
}

void inferSplit(Node &node) {
  const Value &input = requireInput(node, 0, "input");
  int64_t axis = normalizeAxis(node, node.attrs.getInt("axis", 0), int64_t(input.type.rank()),
                               "attribute 'axis'");
  std::vector<int64_t> sizes = splitSizes(node, input.type.shape[size_t(axis)]);
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape shape = input.type.shape;
    shape[size_t(axis)] = sizes[i];
    setOutput(node, i, input.type.dtype, shape);
  }
}

void inferSlice(Node &node) {
  const Value &data = requireInput(node, 0, "data");
  std::vector<int64_t> starts = constantInts(node, 1, "starts");
  std::vector<int64_t> ends = constantInts(node, 2, "ends");
  std::vector<int64_t> axes =
      node.input(3) ? constantInts(node, 3, "axes") : std::vector<int64_t>{};
  std::vector<int64_t> steps =
      node.input(4) ? constantInts(node, 4, "steps") : std::vector<int64_t>{};
  std::vector<int64_t> start, step;
  Shape shape;
  sliceParams(node, data.type.shape, starts, ends, axes, steps, start, step, shape);
  setOutput(node, 0, data.type.dtype, shape);
}

void inferPad(Node &node) {
  const Value &data = requireInput(node, 0, "data");
  std::string mode = node.attrs.getString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    unsupported(node, "attribute 'mode' = '" + mode +
                          "' is not supported (constant, reflect, edge, wrap)");
  bool given = false;
  std::vector<int64_t> pads = optionalInts(node, 1, "pads", &given);
  if (!given)
    unsupported(node, "missing input 'pads'");
  std::vector<int64_t> axes =
      node.input(3) ? constantInts(node, 3, "axes") : std::vector<int64_t>{};
  if (const Value *value = node.input(2))
    if (value->type.numElements() != 1 || value->type.dtype != data.type.dtype)
      unsupported(node, "input 'constant_value' must be a " +
                            std::string(dtypeName(data.type.dtype)) + " scalar, got " +
                            value->type.str());
  size_t rank = data.type.rank();
  std::vector<int64_t> full = padAmounts(node, rank, pads, axes);
  Shape shape = data.type.shape;
  for (size_t i = 0; i < rank; ++i) {
    // Pads are any int64 values: a sum past int64 is refused, not wrapped.
    std::optional<int64_t> padded = checkedAdd(full[i], full[rank + i]);
    if (padded)
      padded = checkedAdd(shape[i], *padded);
    if (!padded)
      unsupported(node, "input 'pads' of dim " + std::to_string(i) + " overflow int64");
    shape[i] = *padded;
    if (shape[i] < 0)
      unsupported(node, "input 'pads' crops dim " + std::to_string(i) + " of " + data.type.str() +
                            " below 0");
    if (mode != "constant" && data.type.shape[i] == 0 && shape[i] > 0)
      unsupported(node, "mode '" + mode + "' cannot pad an empty dim");
  }
  setOutput(node, 0, data.type.dtype, shape);
}

void inferIdentity(Node &node) {
  const Value &input = requireInput(node, 0, "input");
  setOutput(node, 0, input.type.dtype, input.type.shape);
}

/// Dropout at inference is the identity; the optional mask is all true.
void inferDropout(Node &node) {
  const Value &data = requireInput(node, 0, "data");
  if (const Value *training = node.input(2))
    if (!training->isConstant() || training->toInts() != std::vector<int64_t>{0})
      unsupported(node, "input 'training_mode' must be a constant false (inference only)");
  setOutput(node, 0, data.type.dtype, data.type.shape);
  if (node.output(1))
    setOutput(node, 1, DType::Bool, data.type.shape);
}

void inferShape(Node &node) {
  const Value &data = requireInput(node, 0, "data");
  int64_t rank = int64_t(data.type.rank());
  auto clampIndex = [rank](int64_t i) {
    if (i < 0)
      i += rank;
    return std::max<int64_t>(0, std::min(i, rank));
  };
  int64_t start = clampIndex(node.attrs.getInt("start", 0));
  int64_t end = clampIndex(node.attrs.getInt("end", rank));
  setOutput(node, 0, DType::Int64, {std::max<int64_t>(0, end - start)});
}

/// Size: the element count of 'data' as an int64 scalar.
void inferSize(Node &node) {
  requireInput(node, 0, "data");
  setOutput(node, 0, DType::Int64, {});
}

/// EyeLike: a 2-D tensor of input's shape with ones on diagonal k; dtype from
/// the attribute (an ONNX TensorProto number) or the input's.
void inferEyeLike(Node &node) {
  const Value &input = requireInput(node, 0, "input");
  if (input.type.rank() != 2)
    unsupported(node, "input " + input.type.str() + " must be 2-D");
  DType dtype = input.type.dtype;
  if (node.attrs.has("dtype")) {
    switch (node.attrs.getInt("dtype", 1)) {
    case 1:
      dtype = DType::Float32;
      break;
    case 2:
      dtype = DType::UInt8;
      break;
    case 3:
      dtype = DType::Int8;
      break;
    case 6:
      dtype = DType::Int32;
      break;
    case 7:
      dtype = DType::Int64;
      break;
    case 9:
      dtype = DType::Bool;
      break;
    default:
      unsupported(node, "attribute 'dtype'=" + std::to_string(node.attrs.getInt("dtype", 1)) +
                            " is not supported");
    }
  }
  setOutput(node, 0, dtype, input.type.shape);
}

void inferGather(Node &node) {
  const Value &data = requireInput(node, 0, "data");
  const Value &indices = requireInput(node, 1, "indices");
  if (indices.type.dtype != DType::Int64 && indices.type.dtype != DType::Int32)
    unsupported(node, "input 'indices' must be int32 or int64, got " + indices.type.str());
  int64_t rank = int64_t(data.type.rank());
  int64_t axis = normalizeAxis(node, node.attrs.getInt("axis", 0), rank, "attribute 'axis'");
  if (indices.isConstant()) {
    int64_t dim = data.type.shape[size_t(axis)];
    for (int64_t index : indices.toInts())
      if (index < -dim || index >= dim)
        unsupported(node, "input 'indices' holds " + std::to_string(index) +
                              ", out of range for dim " + std::to_string(dim) + " of 'data' " +
                              data.type.str());
  }
  Shape shape(data.type.shape.begin(), data.type.shape.begin() + axis);
  shape.insert(shape.end(), indices.type.shape.begin(), indices.type.shape.end());
  shape.insert(shape.end(), data.type.shape.begin() + axis + 1, data.type.shape.end());
  setOutput(node, 0, data.type.dtype, shape);
}

void inferConstantOfShape(Node &node) {
  Shape shape = constantInts(node, 0, "input");
  for (int64_t dim : shape)
    if (dim < 0)
      unsupported(node, "input 'input' has a negative dim " + std::to_string(dim));
  int64_t dtype = node.attrs.getInt("value_dtype", int64_t(DType::Float32));
  if (dtype < 0 || dtype > int64_t(DType::Bool))
    unsupported(node, "attribute 'value_dtype' = " + std::to_string(dtype) + " is not a DType");
  setOutput(node, 0, DType(dtype), shape);
}

void inferRange(Node &node) {
  const char *names[] = {"start", "limit", "delta"};
  double v[3];
  DType dtype = requireInput(node, 0, "start").type.dtype;
  for (size_t i = 0; i < 3; ++i) {
    const Value &input = requireInput(node, i, names[i]);
    if (!input.isConstant())
      unsupported(node, std::string("input '") + names[i] +
                            "' must be a constant (bundlefit compiles static shapes)");
    if (input.type.numElements() != 1 || input.type.dtype != dtype)
      unsupported(node, std::string("input '") + names[i] +
                            "' must be a scalar of the same type as "
                            "'start', got " +
                            input.type.str());
    v[i] = input.elementAsDouble(0);
  }
  if (dtype != DType::Float32 && dtype != DType::Int32 && dtype != DType::Int64)
    unsupported(node, std::string("dtype ") + dtypeName(dtype) + " is not supported");
  if (v[2] == 0)
    unsupported(node, "input 'delta' is 0");
  // The element count must be exact and fit int64 for every input: a float
  // quotient that is not finite (or past 2^62) and an integer span past
  // int64 would otherwise wrap or be undefined.
  int64_t count = 0;
  if (dtype == DType::Float32) {
    for (size_t i = 0; i < 3; ++i)
      if (!std::isfinite(v[i]))
        unsupported(node, std::string("input '") + names[i] + "' is not finite");
    double quotient = std::ceil((v[1] - v[0]) / v[2]);
    if (!(quotient < 0x1p62))
      unsupported(node, "(limit - start) / delta is past 2^62 elements");
    count = quotient > 0 ? int64_t(quotient) : 0;
  } else {
    // Exact integer ceil division in 128 bits: limit - start of two int64
    // values and -delta of INT64_MIN both fit there.
    const Value &s = *node.input(0), &l = *node.input(1), &d = *node.input(2);
    __int128 a = s.toInts()[0], b = l.toInts()[0], step = d.toInts()[0];
    __int128 span = b - a;
    if (step < 0)
      span = -span, step = -step;
    __int128 elements = span > 0 ? (span + step - 1) / step : 0;
    if (elements > std::numeric_limits<int64_t>::max())
      unsupported(node, "(limit - start) / delta is past 2^63 elements");
    count = int64_t(elements);
  }
  setOutput(node, 0, dtype, {count});
}

uint64_t noMacs(const Node &) { return 0; }

} // namespace

void registerShapeOps(OpRegistry &registry) {
  using namespace shape_interp;
  // Views: output 0 is input 0's bytes, so the kernel is a copy.
  auto view = [&](const char *op, void (*infer)(Node &)) -> OpDef & {
    return registry.add({op, infer, noMacs})
        .with(kOpView | kOpMovesBytes)
        .runs(copyKernel)
        .quantized(Int8Rule::SameParams);
  };
  view("Reshape", inferReshape).parameters(kParametersFrom1);
  view("Flatten", inferFlatten);
  view("Squeeze", inferSqueeze).parameters(kParametersFrom1);
  view("Unsqueeze", inferUnsqueeze).parameters(kParametersFrom1);
  view("Identity", inferIdentity);
  view("Dropout", inferDropout);
  registry.add({"Transpose", inferTranspose, noMacs})
      .with(kOpMovesBytes)
      .runs(transposeKernel)
      .quantized(Int8Rule::SameParams);
  registry.add({"Concat", inferConcat, noMacs}).runs(concatKernel);
  registry.add({"Split", inferSplit, noMacs}).parameters(kParametersFrom1).runs(splitKernel);
  // Slice and Gather copy elements (of any size): an int8 input's slice or
  // row is int8 with its parameters (an unrolled LSTM's gates and steps).
  registry.add({"Slice", inferSlice, noMacs})
      .parameters(kParametersFrom1)
      .with(kOpMovesBytes)
      .runs(sliceKernel)
      .quantized(Int8Rule::SameParams);
  registry.add({"Pad", inferPad, noMacs}).parameters(kParametersFrom1).runs(padKernel);
  registry.add({"Shape", inferShape, noMacs}).with(kOpReadsShapeOnly).runs(shapeKernel);
  registry.add({"Size", inferSize, noMacs}).with(kOpReadsShapeOnly).runs(sizeKernel);
  registry.add({"EyeLike", inferEyeLike, noMacs}).with(kOpReadsShapeOnly).runs(eyeLikeKernel);
  registry.add({"Gather", inferGather, noMacs})
      .with(kOpMovesBytes)
      .runs(gatherKernel)
      .quantized(Int8Rule::SameParams);
  registry.add({"ConstantOfShape", inferConstantOfShape, noMacs})
      .parameters(1u)
      .runs(constantOfShapeKernel);
  registry.add({"Range", inferRange, noMacs}).parameters(kAllParameters).runs(rangeKernel);
  registerShapeLowering(registry);
}

} // namespace bundlefit
