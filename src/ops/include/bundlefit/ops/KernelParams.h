//===- KernelParams.h - The kernels' parameter structs, set by name -*- C++ -*-===//
//
// The C++ side of the parameter structs of bundlefit/kernels/abi.h (every
// struct of its BF_ABI_PARAMS_STRUCTS): the lowering fills the very C struct
// the kernel reads, field by field and by name, and passes it as a
// KernelArg::Params (a private constant global in the bundle, folded into
// the kernel after inlining). A field left unset is an internal error naming
// it; code generation checks the struct's field count against the size the
// kernel bitcode was compiled with (abi.c; KernelParamsCheck in codegen).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/kernels/abi.h"
#include "bundlefit/ops/KernelCall.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace bundlefit {

/// A parameter struct's C name and its fields' names in declaration order,
/// both from abi.h's field list of that struct.
template <typename T> struct KernelParamsInfo;

#define BF_ABI_FIELD_NAME(name) #name,
#define BF_KERNEL_PARAMS_INFO(type, fieldList)                                                     \
  template <> struct KernelParamsInfo<type> {                                                      \
    static constexpr const char *name = #type;                                                     \
    static constexpr const char *fields[] = {fieldList(BF_ABI_FIELD_NAME)};                        \
  };                                                                                               \
  static_assert(sizeof(type) == sizeof(int32_t) * std::size(KernelParamsInfo<type>::fields),       \
                #type " must consist of int32_t fields only");
BF_ABI_PARAMS_STRUCTS(BF_KERNEL_PARAMS_INFO)
#undef BF_KERNEL_PARAMS_INFO
#undef BF_ABI_FIELD_NAME

/// Every parameter struct: (C name, field count), for the bitcode check.
inline std::vector<std::pair<std::string, size_t>> kernelParamsStructs() {
#define BF_KERNEL_PARAMS_ENTRY(type, fieldList)                                                    \
  {KernelParamsInfo<type>::name, std::size(KernelParamsInfo<type>::fields)},
  return {BF_ABI_PARAMS_STRUCTS(BF_KERNEL_PARAMS_ENTRY)};
#undef BF_KERNEL_PARAMS_ENTRY
}

/// The value of a field not set yet (no kernel parameter is INT32_MIN).
constexpr int32_t kUnsetKernelParam = INT32_MIN;

/// A struct whose every field is unset: set each by name, then pass it with
/// kernelParams(), which refuses one left out.
template <typename T> T unsetKernelParams() {
  std::array<int32_t, std::size(KernelParamsInfo<T>::fields)> values;
  values.fill(kUnsetKernelParam);
  T params;
  std::memcpy(&params, values.data(), sizeof params);
  return params;
}

/// `v` as an int32 field of `node`'s kernel parameters (shapes and
/// attributes are int64 in the graph).
inline int32_t paramI32(const Node &node, int64_t v) {
  if (v <= int64_t(kUnsetKernelParam) || v > INT32_MAX)
    throw Error(ExitCode::Unsupported,
                node.describe() + ": kernel parameter " + std::to_string(v) + " exceeds int32");
  return int32_t(v);
}

/// `params` as a kernel argument of `node`'s call: every field must be set.
template <typename T> KernelArg kernelParams(const Node &node, const T &params) {
  using Info = KernelParamsInfo<T>;
  std::vector<int32_t> values(std::size(Info::fields));
  std::memcpy(values.data(), &params, sizeof params);
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] == kUnsetKernelParam)
      fatalInternal(node.describe() + ": the lowering left " + Info::name + "." + Info::fields[i] +
                    " unset");
  return KernelArg::params(Info::name, std::move(values));
}

/// The position of field `field` in struct T (its name in abi.h's list);
/// a name T does not have is an internal error.
template <typename T> size_t kernelParamsFieldIndex(std::string_view field) {
  using Info = KernelParamsInfo<T>;
  for (size_t i = 0; i < std::size(Info::fields); ++i)
    if (field == Info::fields[i])
      return i;
  fatalInternal(std::string(Info::name) + " has no field " + std::string(field));
}

/// kernelParamsFieldIndex of the struct named `cStruct` (C name).
inline size_t kernelParamsFieldIndex(std::string_view cStruct, std::string_view field) {
#define BF_KERNEL_PARAMS_FIELD_INDEX(type, fieldList)                                              \
  if (cStruct == KernelParamsInfo<type>::name)                                                     \
    return kernelParamsFieldIndex<type>(field);
  BF_ABI_PARAMS_STRUCTS(BF_KERNEL_PARAMS_FIELD_INDEX)
#undef BF_KERNEL_PARAMS_FIELD_INDEX
  fatalInternal("no kernel parameter struct " + std::string(cStruct));
}

/// The index of `call`'s KernelArg::Params of struct T: a call takes at most
/// one of each, so the rewrites of a call find its structs by type, never
/// by position. An internal error when it has none.
template <typename T> size_t kernelParamsArg(const KernelCall &call) {
  for (size_t i = 0; i < call.args.size(); ++i)
    if (call.args[i].kind == KernelArg::Params && call.args[i].type == KernelParamsInfo<T>::name)
      return i;
  fatalInternal(call.kernel + " takes no " + KernelParamsInfo<T>::name);
}

/// Field `field` (by name) of the struct T a call passes (kernelParamsArg).
template <typename T> int32_t kernelParamsField(const KernelCall &call, std::string_view field) {
  return call.args[kernelParamsArg<T>(call)].table.at(kernelParamsFieldIndex<T>(field));
}

} // namespace bundlefit
