//===- LowerHelpers.cpp - Building float kernel calls as data --------------===//
#include "bundlefit/ops/LowerHelpers.h"

#include <climits>

namespace bundlefit {
namespace lowering {

const Value *input(const Node &node, size_t i) {
  const Value *v = node.input(i);
  if (!v)
    unsupported(node, "operand " + std::to_string(i) + " is missing");
  return v;
}

void requireFloat(const Node &node, const Value *value) {
  if (!value || value->type.dtype != DType::Float32)
    unsupported(node, std::string("only float32 is supported here (") +
                          (value ? value->name + " is " + value->type.str() : "missing operand") +
                          ")");
}

void requireDType(const Node &node, const Value *value, DType dtype) {
  if (!value || value->type.dtype != dtype)
    unsupported(node, std::string("operands must all be ") + dtypeName(dtype) + " (" +
                          (value ? value->name + " is " + value->type.str() : "missing operand") +
                          ")");
}

Ints constantInts(const Node &node, size_t i, const std::string &what) {
  const Value *v = node.input(i);
  if (!v)
    return {};
  if (!v->isConstant())
    unsupported(node, what + " must be a constant");
  return v->toInts();
}

const char *intKernelSuffix(DType dtype) {
  switch (dtype) {
  case DType::Int8:
    return "i8";
  case DType::UInt8:
    return "u8";
  case DType::Int32:
    return "i32";
  case DType::Int64:
    return "i64";
  default:
    return nullptr;
  }
}

const char *sizeSuffix(const Node &node, const Value *v) {
  switch (dtypeSize(v->type.dtype)) {
  case 1:
    return "u8";
  case 4:
    return "u32";
  case 8:
    return "u64";
  }
  unsupported(node, "no kernel for " + std::to_string(dtypeSize(v->type.dtype)) + "-byte elements");
}

std::string indexSuffix(const Node &node, const Value *indices) {
  switch (indices->type.dtype) {
  case DType::Int32:
    return "i32";
  case DType::Int64:
    return "i64";
  case DType::Float32:
    return "f32";
  default:
    unsupported(node, "indices '" + indices->name + "' are " + indices->type.str());
  }
}

Ints denseStrides(const Shape &shape) {
  Ints strides(shape.size(), 1);
  for (int d = int(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i)
    p *= shape[i];
  return p;
}

Ints broadcastStrides(const Node &node, const Value *v, const Shape &out) {
  const size_t rank = out.size();
  Shape s = v->type.shape;
  if (s.size() > rank)
    unsupported(node, v->name + " has a higher rank than the output");
  s.insert(s.begin(), rank - s.size(), 1);
  Ints strides = denseStrides(s);
  for (size_t d = 0; d < rank; ++d) {
    if (s[d] == 1 && out[d] != 1)
      strides[d] = 0;
    else if (s[d] != out[d])
      unsupported(node, v->name + " " + shapeToString(v->type.shape) + " does not broadcast to " +
                            shapeToString(out));
  }
  return strides;
}

void LoopNest::simplify() {
  LoopNest out;
  out.strides.resize(strides.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1)
      continue;
    bool merge = !out.dims.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k)
      merge = out.strides[k].back() == strides[k][d] * dims[d];
    if (merge) {
      out.dims.back() *= dims[d];
      for (size_t k = 0; k < strides.size(); ++k)
        out.strides[k].back() = strides[k][d];
      continue;
    }
    out.dims.push_back(dims[d]);
    for (size_t k = 0; k < strides.size(); ++k)
      out.strides[k].push_back(strides[k][d]);
  }
  *this = std::move(out);
}

std::vector<int32_t> padFront(const Ints &values, int64_t fill, const Node &node) {
  if (values.size() > size_t(kMaxRank))
    unsupported(node, "needs more than 6 dimensions after simplification");
  std::vector<int32_t> out(kMaxRank - values.size(), int32_t(fill));
  for (int64_t v : values) {
    if (v > INT32_MAX || v < INT32_MIN)
      unsupported(node, "a dimension exceeds int32");
    out.push_back(int32_t(v));
  }
  return out;
}

KernelArg intTable(const Node &node, const Ints &values) {
  std::vector<int32_t> narrow;
  for (int64_t v : values) {
    if (v > INT32_MAX || v < INT32_MIN)
      unsupported(node, "value " + std::to_string(v) + " exceeds int32");
    narrow.push_back(int32_t(v));
  }
  return KernelArg::i32Table(std::move(narrow));
}

StridedCopy stridedCopyTables(const Node &node, LoopNest nest, size_t elemSize) {
  nest.simplify();
  const char *kernel = elemSize == 4   ? "bf_copy_strided_f32"
                       : elemSize == 1 ? "bf_copy_strided_u8"
                       : elemSize == 2 ? "bf_copy_strided_u16"
                       : elemSize == 8 ? "bf_copy_strided_i64"
                                       : nullptr;
  if (!kernel)
    unsupported(node, "no copy kernel for " + std::to_string(elemSize) + "-byte elements");
  return {kernel, KernelArg::i32Table(padFront(nest.dims, 1, node)),
          KernelArg::i32Table(padFront(nest.strides[0], 0, node)),
          KernelArg::i32Table(padFront(nest.strides[1], 0, node))};
}

KernelCall stridedCopy(const Node &node, KernelArg src, KernelArg dst, LoopNest nest,
                       size_t elemSize) {
  StridedCopy c = stridedCopyTables(node, std::move(nest), elemSize);
  return call(c.kernel, {std::move(src), std::move(dst), c.dims, c.srcStrides, c.dstStrides});
}

KernelCall copyBytes(const Value *src, const Value *dst) {
  return call("bf_copy_bytes", {KernelArg::address(src), KernelArg::address(dst),
                                KernelArg::i32(int64_t(dst->type.bytes()))});
}

KernelCall unaryCall(const Node &node, const std::string &kernel, float a, float b) {
  const Value *x = input(node, 0), *y = node.output(0);
  requireFloat(node, x), requireFloat(node, y);
  return call(kernel,
              {KernelArg::address(x), KernelArg::address(y), KernelArg::i32(y->type.numElements()),
               KernelArg::f32(a), KernelArg::f32(b)});
}

KernelCall call(std::string kernel, std::vector<KernelArg> args) {
  KernelCall c;
  c.kernel = std::move(kernel);
  c.args = std::move(args);
  return c;
}

} // namespace lowering
} // namespace bundlefit
