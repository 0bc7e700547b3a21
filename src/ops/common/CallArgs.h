//===- CallArgs.h - Building kernel calls as data (family-internal) -------===//
//
// The int8 definitions (src/ops/<family>/*Int8.cpp) describe their bundle
// kernel calls (Int8Def::lower) and CMSIS-NN calls (CmsisDef::call) with
// these: argument order is the kernel's (bundlefit_kernels_int8.h,
// arm_nnfunctions.h), values come from Int8Params.h.
//
// CMSIS-NN's structs (arm_nn_types.h) become KernelArg tables and structs:
//   cmsis_nn_context          {void *buf; int32_t size;}
//   cmsis_nn_activation       {int32_t min, max;}
//   cmsis_nn_dims             {int32_t n, h, w, c;}
//   cmsis_nn_conv_params      {input_offset, output_offset, stride, padding, dilation, activation}
//   cmsis_nn_dw_conv_params   {input_offset, output_offset, ch_mult, stride, padding, dilation,
//                              activation}
//   cmsis_nn_pool_params      {stride, padding, activation}
//   cmsis_nn_fc_params        {input_offset, filter_offset, output_offset, activation}
//   cmsis_nn_per_channel_quant_params {int32_t *multiplier, *shift;}
//   cmsis_nn_per_tensor_quant_params  {int32_t multiplier, shift;}
// Structs made of int32 fields only are read-only tables (private constants);
// the context (a pointer into the activation arena) and the per-channel
// quant params (two pointers) are built on the stack.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/Cmsis.h"
#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/ops/KernelCall.h"
#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include <array>
#include <string>
#include <vector>

namespace bundlefit::call_args {

/// Builds one portable kernel call's argument list.
class Args {
public:
  Args &addr(const Value *value, int64_t byteOffset = 0) {
    args_.push_back(KernelArg::address(value, byteOffset));
    return *this;
  }
  Args &i32(int64_t v) {
    args_.push_back(KernelArg::i32(v));
    return *this;
  }
  Args &f32(float v) {
    args_.push_back(KernelArg::f32(v));
    return *this;
  }
  Args &scratch() {
    args_.push_back(KernelArg::scratch());
    return *this;
  }
  /// A table, or a null pointer when empty.
  Args &table(const std::vector<int32_t> &v) {
    if (v.empty())
      return addr(nullptr);
    args_.push_back(KernelArg::i32Table(v));
    return *this;
  }
  /// An int16 table (an int16_t array to the kernel), or a null pointer
  /// when empty.
  Args &table(const std::vector<int16_t> &v) {
    if (v.empty())
      return addr(nullptr);
    args_.push_back(KernelArg::i16Table(v));
    return *this;
  }
  /// A float table, or a null pointer when empty.
  Args &floats(const std::vector<float> &v) {
    if (v.empty())
      return addr(nullptr);
    args_.push_back(KernelArg::f32Table(v));
    return *this;
  }
  Args &table(const std::array<int32_t, 6> &v) {
    return table(std::vector<int32_t>(v.begin(), v.end()));
  }
  /// A parameter struct of abi.h, every field set (kernelParams).
  template <typename T> Args &params(const Node &node, const T &p) {
    args_.push_back(kernelParams(node, p));
    return *this;
  }
  KernelCall call(const std::string &kernel) {
    KernelCall c;
    c.kernel = kernel, c.args = std::move(args_);
    return c;
  }

private:
  std::vector<KernelArg> args_;
};

/// Bias arguments of bf_conv2d_s8 and bf_fully_connected_s8: the int32
/// pointer, then (at the end) the int8 one.
inline const Value *bias32(const Node &node, const Int8ConvArgs &a) {
  return a.int8Bias ? nullptr : node.input(2);
}
inline const Value *bias8(const Node &node, const Int8ConvArgs &a) {
  return a.int8Bias ? node.input(2) : nullptr;
}

/// A table argument, or a null pointer when empty (Args::table).
inline KernelArg tableOrNull(const std::vector<int32_t> &values) {
  return values.empty() ? KernelArg::address(nullptr) : KernelArg::i32Table(values);
}

// CMSIS-NN calls.
inline KernelArg address(const Value *value) { return KernelArg::address(value); }
inline KernelArg i32(int64_t v) { return KernelArg::i32(v); }
inline KernelArg table(std::vector<int32_t> values) {
  return KernelArg::i32Table(std::move(values));
}
/// cmsis_nn_dims.
inline KernelArg dims(int32_t n, int32_t h, int32_t w, int32_t c) { return table({n, h, w, c}); }

/// cmsis_nn_context {buf, size}: the node's workspace in the arena.
inline KernelArg context(const Node &node) {
  return KernelArg::structOf(
      {KernelArg::scratch(), i32(node.attrs.getInt(kCmsisScratchAttribute, 0))});
}

/// A call of a CMSIS-NN function (the user links it): returns a status.
inline KernelCall externalCall(const std::string &function, std::vector<KernelArg> args) {
  KernelCall c;
  c.kernel = function, c.args = std::move(args), c.external = true;
  return c;
}

/// The int32 bias a CMSIS-NN call reads (prepareCmsisGraph widened an int8 one).
inline const Value *cmsisBias(const Node &node, const Int8ConvArgs &a) {
  if (a.int8Bias)
    fatalInternal(node.describe() + ": int8 bias left for a CMSIS-NN call");
  return node.input(2);
}

/// The prototype of CMSIS-NN's layer `function` (CmsisDef::prototypes): the
/// context, its `params` and `quant` structs, then the input, filter, bias
/// and output, each dims then data; the activations are `activation` (int8_t,
/// int16_t), the filter int8_t, the bias `bias` (a pointer type).
inline CmsisPrototype layerPrototype(const char *function, const std::string &params,
                                     const std::string &quant, const std::string &activation,
                                     const std::string &bias) {
  return {function, std::string("arm_cmsis_nn_status ") + function +
                        "(const cmsis_nn_context *, const " + params + " *, const " + quant +
                        " *, const cmsis_nn_dims *, const " + activation +
                        " *, const cmsis_nn_dims *, const int8_t *, const cmsis_nn_dims *, " +
                        bias + ", const cmsis_nn_dims *, " + activation + " *);"};
}

/// An s8 layer's (int32 bias).
inline CmsisPrototype s8LayerPrototype(const char *function, const std::string &params,
                                       const std::string &quant) {
  return layerPrototype(function, params, quant, "int8_t", "const int32_t *");
}

/// The prototype of CMSIS-NN's pooling `function` on `activation` elements:
/// the context, the pool parameters, then input dims and data, filter dims,
/// output dims and data.
inline CmsisPrototype poolPrototype(const char *function, const std::string &activation) {
  return {function, std::string("arm_cmsis_nn_status ") + function +
                        "(const cmsis_nn_context *, const cmsis_nn_pool_params *, "
                        "const cmsis_nn_dims *, const " +
                        activation + " *, const cmsis_nn_dims *, const cmsis_nn_dims *, " +
                        activation + " *);"};
}

} // namespace bundlefit::call_args
