//===- CmsisLayout.cpp - Prepare an int8 graph for CMSIS-NN calls ----------===//
//
// Three steps (CmsisLayout.h has the why): choose the nodes, repack their
// constants the way CMSIS-NN reads them, then insert the NCHW <-> NHWC copies
// where an NHWC value meets a reader that wants the other layout.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/int8/CmsisLayout.h"

#include "bundlefit/int8/Int8Params.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Bytes.h"
#include "bundlefit/support/Error.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace bundlefit {

namespace {

/// Conv and pooling read and write NHWC activations; FC and softmax are 2-D.
bool usesNhwc(const std::string &function) {
  return function != "arm_fully_connected_s8" && function != "arm_softmax_s8";
}

/// NCHW and NHWC hold the same bytes when C == 1 or H*W == 1.
bool layoutFree(const Value *value) {
  const Shape &s = value->type.shape;
  return s.size() != 4 || s[1] == 1 || s[2] * s[3] == 1;
}

/// The constant `node` reads at `index`, cloned first when another node
/// reads it too (repacking must not change what the others see).
Value *ownConstant(Graph &graph, Node &node, size_t index) {
  Value *value = node.inputs[index];
  for (const Node *user : graph.users(value))
    if (user != &node) {
      Value *copy = graph.addConstant(graph.uniqueValueName(value->name + "_cmsis"), value->type,
                                      value->data);
      node.inputs[index] = copy;
      return copy;
    }
  return value;
}

/// [M, C, KH, KW] -> OHWI [M, KH, KW, C] (the logical shape stays).
void repackConvWeights(Value &w) {
  const Shape &s = w.type.shape;
  const int64_t M = s[0], C = s[1], KH = s[2], KW = s[3];
  std::vector<uint8_t> out(w.data.size());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < KH; ++y)
        for (int64_t x = 0; x < KW; ++x)
          out[size_t(((m * KH + y) * KW + x) * C + c)] =
              w.data[size_t(((m * C + c) * KH + y) * KW + x)];
  w.data = std::move(out);
}

/// Depthwise [M, 1, KH, KW] -> 1HWC [1, KH, KW, M].
void repackDepthwiseWeights(Value &w) {
  const Shape &s = w.type.shape;
  const int64_t M = s[0], KH = s[2], KW = s[3];
  std::vector<uint8_t> out(w.data.size());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < KH * KW; ++k)
      out[size_t(k * M + m)] = w.data[size_t(m * KH * KW + k)];
  w.data = std::move(out);
}

/// Gemm B [K, N] (transB = 0) -> [N, K], transB = 1: CMSIS-NN's [out, in].
void transposeGemmWeights(Node &node, Value &b) {
  const int64_t K = b.type.shape[0], N = b.type.shape[1];
  std::vector<uint8_t> out(b.data.size());
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n)
      out[size_t(n * K + k)] = b.data[size_t(k * N + n)];
  b.data = std::move(out);
  b.type.shape = {N, K};
  if (b.type.quant.axis >= 0)
    b.type.quant.axis = 1 - b.type.quant.axis;
  node.attrs.setInt("transB", 1);
}

/// bf_i8_scale_bias (int8_util.h): round-half-away(b * mult * 2^(shift-31)),
/// saturated; the portable kernels add exactly this to the accumulator.
int32_t scaleBias(int32_t b, int32_t mult, int32_t shift) {
  int64_t p = int64_t(b) * int64_t(mult);
  const int32_t right = 31 - shift;
  if (right > 0) {
    const int64_t half = int64_t(1) << (right - 1);
    p = p >= 0 ? (p + half) >> right : -((-p + half) >> right);
  } else if (right < 0) {
    const int32_t left = -right > 24 ? 24 : -right;
    p = p >= 0 ? p << left : -((-p) << left);
  }
  return int32_t(std::max<int64_t>(INT32_MIN, std::min<int64_t>(INT32_MAX, p)));
}

/// An int8 bias becomes the int32 bias at the accumulator scale CMSIS-NN
/// takes, computed once here (bit-identical to what the kernels compute).
void widenInt8Bias(Graph &graph, Node &node, const Int8ConvArgs &a, int64_t channels) {
  if (!a.int8Bias)
    return;
  const Value *bias8 = node.input(2);
  std::vector<int32_t> values(size_t(channels), 0);
  for (int64_t c = 0; c < channels; ++c) {
    const size_t k = a.biasMult.size() > 1 ? size_t(c) : 0;
    values[size_t(c)] = scaleBias(bias8->dataAs<int8_t>()[c], a.biasMult[k], a.biasShift[k]);
  }
  TensorType type;
  type.dtype = DType::Int32;
  type.shape = {channels};
  const float inScale = node.input(0)->type.quant.scales.at(0);
  for (float ws : node.input(1)->type.quant.scales)
    type.quant.scales.push_back(inScale * ws);
  type.quant.zeroPoints.assign(type.quant.scales.size(), 0);
  type.quant.axis = type.quant.scales.size() > 1 ? 0 : -1;
  std::vector<uint8_t> bytes(values.size() * 4);
  copyBytes(bytes.data(), values.data(), bytes.size());
  node.inputs[2] = graph.addConstant(graph.uniqueValueName(bias8->name + "_i32"), type, bytes);
}

/// Helium's arm_fully_connected_s8 starts each row's accumulator from
/// kernel_sum[r] = bias[r] + input_offset * (sum_k w[r][k] + K * filter_offset)
/// (arm_vector_sum_s8), read from its context buffer. Computed here once, in
/// the int32 arithmetic the library uses (wrapping), and stored as a constant
/// read by the node at kCmsisKernelSumsInput: weights.bin holds it, CONSTANT
/// counts it, and no arena scratch is needed.
void addKernelSums(Graph &graph, Node &node, const Int8ConvArgs &a) {
  const Value *w = node.input(1);
  const Value *bias = node.inputs.size() > 2 ? node.inputs[2] : nullptr;
  const int64_t rows = a.outDepth, cols = a.accumDepth;
  if (int64_t(w->data.size()) != rows * cols)
    fatalInternal(node.describe() + ": fully connected weights are not [out, in]");
  std::vector<int32_t> sums(size_t(rows), 0);
  const int8_t *wd = w->dataAs<int8_t>();
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t rowSum = 0; // int32 arithmetic as CMSIS-NN's, without signed overflow
    for (int64_t k = 0; k < cols; ++k)
      rowSum += uint32_t(int32_t(wd[r * cols + k]));
    rowSum += uint32_t(int32_t(cols)) * uint32_t(a.filterOffset);
    uint32_t sum = rowSum * uint32_t(a.inputOffset);
    if (bias)
      sum += uint32_t(bias->dataAs<int32_t>()[r]);
    sums[size_t(r)] = int32_t(sum);
  }
  TensorType type;
  type.dtype = DType::Int32;
  type.shape = {rows};
  std::vector<uint8_t> bytes(sums.size() * 4);
  copyBytes(bytes.data(), sums.data(), bytes.size());
  Value *value = graph.addConstant(graph.uniqueValueName(node.name + "_kernel_sums"), type, bytes);
  while (node.inputs.size() < size_t(kCmsisKernelSumsInput))
    node.inputs.push_back(nullptr);
  node.inputs.push_back(value);
}

void prepareConstants(Graph &graph, Node &node, const std::string &function,
                      CmsisExtension extension) {
  if (function == "arm_convolve_wrapper_s8" || function == "arm_depthwise_conv_wrapper_s8") {
    const Int8ConvArgs a = int8ConvArgs(node);
    widenInt8Bias(graph, node, a, a.M);
    Value *w = ownConstant(graph, node, 1);
    function == "arm_convolve_wrapper_s8" ? repackConvWeights(*w) : repackDepthwiseWeights(*w);
    node.attrs.setString("cmsis_weight_layout",
                         function == "arm_convolve_wrapper_s8" ? "OHWI" : "1HWC");
  } else if (function == "arm_fully_connected_s8") {
    const Int8ConvArgs a = int8GemmArgs(node);
    widenInt8Bias(graph, node, a, a.outDepth);
    if (!a.transB)
      transposeGemmWeights(node, *ownConstant(graph, node, 1));
    // Column permutations (absorbIntoFullyConnected) keep every row's sum.
    if (cmsisFullyConnectedNeedsKernelSums(extension))
      addKernelSums(graph, node, a);
  }
}

bool isInt8(const Value *v) { return v && v->type.dtype == DType::Int8; }

/// An int8 elementwise node whose kernel reads and writes every operand in
/// the same element order, whatever it is: Relu, Clip, Rescale, and Add/Mul
/// of two activations of the output's shape (no broadcasting, no constant
/// operand in NCHW order). Its output is not a graph output (those stay NCHW).
bool followsLayout(const Node &node) {
  static const std::set<std::string> ops = {"Relu", "Clip", "Rescale", "Add", "Mul"};
  const Value *y = node.output(0);
  if (!ops.count(node.opType) || !needsInt8Kernel(node) || !isInt8(y) || y->isGraphOutput ||
      y->type.rank() != 4)
    return false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value *x = node.inputs[i];
    if (node.opType == "Clip" && i > 0)
      continue; // bounds: parameters compiled into the code
    if (!x || x->isConstant() || !isInt8(x) || x->type.shape != y->type.shape)
      return false;
  }
  return true;
}

/// Gemm weights [out, C*H*W] re-ordered to [out, H*W*C]: the columns a
/// flattened NHWC vector meets (TFLM-style), so no layout copy is needed.
void permuteColumnsToHwc(Value &w, int64_t C, int64_t H, int64_t W) {
  const int64_t outs = w.type.shape[0], depth = C * H * W;
  std::vector<uint8_t> out(w.data.size());
  for (int64_t o = 0; o < outs; ++o)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x)
          out[size_t(o * depth + (y * W + x) * C + c)] =
              w.data[size_t(o * depth + (c * H + y) * W + x)];
  w.data = std::move(out);
}

/// A Flatten/Reshape of NHWC `value` to [N, C*H*W] read only by CMSIS-NN
/// fully connected layers: their weight columns are permuted instead of
/// copying the activation back to NCHW. Returns whether it did.
bool absorbIntoFullyConnected(Graph &graph, Node &view, const Value *value,
                              const std::map<const Node *, std::string> &chosen) {
  if (view.opType != "Flatten" && view.opType != "Reshape")
    return false;
  const Shape &s = value->type.shape;
  const Value *flat = view.output(0);
  if (!flat || flat->isGraphOutput || flat->type.rank() != 2 || flat->type.shape[0] != s[0] ||
      flat->type.shape[1] != s[1] * s[2] * s[3])
    return false;
  std::vector<Node *> users = graph.users(flat);
  for (const Node *user : users) {
    auto it = chosen.find(user);
    if (it == chosen.end() || it->second != "arm_fully_connected_s8" || user->inputs[0] != flat ||
        user->inputs[1] == flat)
      return false;
  }
  for (Node *user : users) {
    permuteColumnsToHwc(*ownConstant(graph, *user, 1), s[1], s[2], s[3]);
    user->attrs.setString("cmsis_input_order", "HWC");
  }
  return !users.empty();
}

} // namespace

std::vector<std::string> cmsisNnOps() {
  std::vector<std::string> ops;
  for (const std::string &op : OpRegistry::get().supportedOps())
    if (OpRegistry::get().find(op)->cmsisFunction)
      ops.push_back(op);
  return ops;
}

std::string cmsisFunctionFor(const Node &node, std::string *whyNot) {
  auto portable = [&](const std::string &reason) {
    if (whyNot)
      *whyNot = reason;
    return std::string();
  };
  if (!needsInt8Kernel(node) || !isInt8(node.input(0)) || !isInt8(node.output(0)))
    return portable("not an int8 operator");
  const std::string &op = node.opType;
  // The op schema says which ops map to CMSIS-NN (OpDef::cmsisFunction);
  // the checks below say whether this node's attributes fit the call.
  const OpDef *schema = OpRegistry::get().find(op);
  if (!schema || !schema->cmsisFunction)
    return portable("no CMSIS-NN s8 function for " + op);
  const std::string function = schema->cmsisFunction;
  const Shape &xs = node.input(0)->type.shape;
  if (op == "Conv") {
    if (xs.size() != 4)
      return portable("only 2-D convolutions call CMSIS-NN");
    const Int8ConvArgs a = int8ConvArgs(node);
    if (a.groups == 1)
      return function;
    if (a.depthwise) // The same wrapper's depthwise form.
      return "arm_depthwise_conv_wrapper_s8";
    return portable("grouped convolution (group " + std::to_string(a.groups) + ")");
  }
  if (op == "Gemm") {
    int8GemmArgs(node); // validates
    if (node.input(1)->type.quant.scales.size() > 1)
      return portable("per-channel weights (arm_fully_connected_s8 is per tensor)");
    return function;
  }
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") {
    if (xs.size() != 4 || xs[0] != 1)
      return portable("only single-batch 2-D pooling calls CMSIS-NN");
    const Int8PoolArgs a = int8PoolArgs(node);
    if (op == "MaxPool")
      return a.dilH == 1 && a.dilW == 1 ? function : portable("dilated max pooling");
    if (a.countIncludePad && (a.padT || a.padL || a.padB || a.padR))
      return portable("count_include_pad with padding (arm_avgpool_s8 divides by valid elements)");
    return function;
  }
  if (op == "Softmax")
    return int8SoftmaxArgs(node).inner == 1 ? function : portable("softmax over a strided axis");
  return function; // Mapped by the schema with no condition on the node.
}

int64_t cmsisScratchFor(const Node &node, CmsisExtension extension) {
  const std::string function = cmsisFunctionFor(node);
  if (function == "arm_convolve_wrapper_s8" || function == "arm_depthwise_conv_wrapper_s8") {
    const Int8ConvArgs a = int8ConvArgs(node);
    CmsisConvShape s;
    s.n = a.N, s.inH = a.H, s.inW = a.W, s.inC = a.C, s.kH = a.KH, s.kW = a.KW;
    s.outH = a.OH, s.outW = a.OW, s.outC = a.M, s.strideH = a.strideH, s.strideW = a.strideW;
    s.padH = a.padT, s.padW = a.padL, s.dilH = a.dilH, s.dilW = a.dilW;
    return function == "arm_convolve_wrapper_s8" ? cmsisConvBufferSize(s, extension)
                                                 : cmsisDepthwiseBufferSize(s, extension);
  }
  if (function == "arm_fully_connected_s8")
    return cmsisFullyConnectedNeedsKernelSums(extension)
               ? 0 // a constant (addKernelSums), not scratch
               : cmsisFullyConnectedBufferSize(int8GemmArgs(node).outDepth, extension);
  if (function == "arm_avgpool_s8")
    return cmsisAvgPoolBufferSize(int32_t(node.output(0)->type.shape[3]),
                                  int32_t(node.input(0)->type.shape[1]), extension);
  return 0;
}

CmsisPreparation prepareCmsisGraph(Graph &graph, CmsisExtension extension) {
  static const std::set<std::string> families = {
      "Conv", "Gemm", "MaxPool", "AveragePool", "GlobalAveragePool", "Softmax"};
  CmsisPreparation result;
  std::map<const Node *, std::string> chosen;
  for (Node *node : graph.nodes()) {
    if (node->attrs.has(kCmsisAttribute) || !families.count(node->opType))
      continue;
    std::string why;
    std::string function = cmsisFunctionFor(*node, &why);
    if (!function.empty() && usesNhwc(function) && node->output(0)->isGraphOutput &&
        !layoutFree(node->output(0)))
      function.clear(), why = "its output is a graph output (kept NCHW)";
    if (function.empty()) {
      if (why != "not an int8 operator")
        result.portable.push_back(node->describe() + ": " + why);
      continue;
    }
    node->attrs.setInt(kCmsisScratchAttribute, cmsisScratchFor(*node, extension));
    prepareConstants(graph, *node, function, extension);
    node->attrs.setString(kCmsisAttribute, function);
    chosen[node] = function;
    ++result.cmsisNodes;
  }

  // Stored layouts, in execution order: a CMSIS-NN conv/pool writes NHWC; a
  // layout-free elementwise node (followsLayout) writes NHWC when one of its
  // inputs is, so residual Adds and Relus keep a CMSIS-NN chain in NHWC.
  auto readsNhwc = [&](const Node *node) {
    auto it = chosen.find(node);
    return it != chosen.end() && usesNhwc(it->second);
  };
  std::set<const Value *> nhwc;
  for (const Node *node : graph.nodes()) {
    bool stored = readsNhwc(node);
    if (followsLayout(*node))
      for (const Value *input : node->inputs)
        stored = stored || (input && nhwc.count(input));
    if (stored && !layoutFree(node->output(0)))
      nhwc.insert(node->output(0));
  }
  // What each reader wants; where it differs, one shared copy per value.
  auto wantsNhwc = [&](const Node *reader, const Value *value) {
    if (readsNhwc(reader))
      return reader->inputs[0] == value;
    return followsLayout(*reader) && nhwc.count(reader->output(0)) != 0;
  };
  std::vector<Value *> values;
  for (Node *node : graph.nodes())
    for (Value *input : node->inputs)
      if (input && !input->isConstant() && input->type.dtype == DType::Int8 && !layoutFree(input))
        values.push_back(input);
  std::set<const Value *> done;
  for (Value *value : values) {
    if (!done.insert(value).second)
      continue;
    const bool storedNhwc = nhwc.count(value) != 0;
    std::vector<Node *> readers;
    for (Node *user : graph.users(value)) {
      if (wantsNhwc(user, value) == storedNhwc)
        continue;
      if (storedNhwc && absorbIntoFullyConnected(graph, *user, value, chosen))
        continue;
      readers.push_back(user);
    }
    if (readers.empty())
      continue;
    const std::string suffix = storedNhwc ? "_nchw" : "_nhwc";
    Node *copy = graph.insertNodeBefore(readers.front(), kCmsisLayoutOp,
                                        graph.uniqueNodeName(value->name + suffix), {value},
                                        {value->name + suffix});
    copy->attrs.setString("to", storedNhwc ? "NCHW" : "NHWC");
    copy->output(0)->type = value->type;
    copy->output(0)->typeKnown = true;
    for (Node *reader : readers)
      for (Value *&input : reader->inputs)
        if (input == value)
          input = copy->output(0);
    ++result.layoutNodes;
  }
  graph.removeUnusedValues();
  return result;
}

} // namespace bundlefit
