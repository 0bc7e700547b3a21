//===- FoldQdq.h - A pre-quantized (QDQ) ONNX graph to float + parameters ---===//
//
// A QDQ model says how to quantize, not how to compute: every int8 activation
// is `QuantizeLinear(x) -> DequantizeLinear` around float ops, every weight a
// `DequantizeLinear(int8 constant)`. foldQdqPairs removes those nodes and
// keeps what they said as parameters, so that quantizeGraph (QuantizeGraph.h)
// builds the same int8 IR as for a profiled float model, with the model's
// scales and zero points instead of the profile's:
//
// - Q(x) -> DQ pairs: x is read directly; the pair's (scale, zero point)
//   becomes x's int8 parameters. A uint8 zero point z becomes z - 128 (the
//   values shift by 128 too, so real values are exactly the same).
// - DQ(constant): becomes the float constant it computes (exact for int8
//   weights: quantizeGraph recovers the same integers); int8 and uint8
//   weights keep their scales and zero points (per tensor or per axis; uint8
//   as int8 minus 128), which the int8 Conv and Gemm kernels use exactly
//   (bf_conv2d_wzp_s8, bf_fully_connected_wzp_s8 when any zero point != 0).
// - Graph inputs and outputs stay float: input -> Q -> DQ and op -> Q -> DQ ->
//   output are the quantize/dequantize at the boundary.
//
// Runs right after import, before the default passes (constant folding would
// otherwise fold the weight DQs and lose their scales). Every malformed or
// unsupported Q/DQ is one Error naming the model file, node and tensor.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/quant/QuantizeGraph.h"

#include <functional>

#include <map>
#include <string>
#include <vector>

namespace bundlefit {

struct QdqFoldResult {
  PresetQuantParams params;
  size_t pairs = 0;     ///< Q -> DQ pairs folded.
  size_t constants = 0; ///< DQ(constant) folded.
  /// One line per place where the model's arithmetic is changed.
  std::vector<std::string> warnings;
};

/// Rewrites QLinearConv, QLinearMatMul and onnxruntime's com.microsoft
/// QLinearAdd/Mul/Concat/AveragePool/GlobalAveragePool/Sigmoid/LeakyRelu/
/// Softmax (the QOperator form) into the QDQ form, the float op keeping the
/// user's node name (ExpandQOperators.cpp); runs on the imported graph before
/// foldQdqPairs. Returns how many nodes it rewrote.
size_t expandQOperators(Graph &graph, const std::string &modelPath);

/// onnxruntime's dynamic quantization, DynamicQuantizeLinear feeding
/// MatMulInteger -> Cast -> Mul by the scales, computed in float: a MatMul by
/// the dequantized constant weights (DynamicQuantFallback.cpp). Adds one line
/// per DynamicQuantizeLinear to `notes`; any other reader of its outputs is
/// Error(Unsupported) naming it. Runs on the imported graph; returns how many.
size_t replaceDynamicQuantization(Graph &graph, const std::string &modelPath,
                                  std::vector<std::string> &notes);

/// After the default passes: each AveragePool / GlobalAveragePool whose
/// model output parameters differ from its input's becomes a depthwise Conv
/// of weights 1/count (one rounding instead of pooling and a Rescale), when
/// every window holds the same count (PoolsAsConvs.cpp). Adds the weights to
/// `preset` and one line per node to `notes`; returns how many.
size_t averagePoolsAsConvs(Graph &graph, PresetQuantParams &preset,
                           std::vector<std::string> &notes);

/// After the default passes: each MatMul of a quantized 2-D activation by a
/// constant 2-D weight the model quantizes becomes a Gemm (transB = 0, no
/// bias), the int8 fully connected layer (MatMulsAsGemms.cpp); a batched
/// activation's rows are viewed as 2-D by Reshapes around it (their values'
/// parameters added to `preset`). Returns how many.
size_t matMulsAsGemms(Graph &graph, PresetQuantParams &preset);

/// The profiled counterpart, before quantizeGraph: each MatMul of an
/// activation `hasRange` knows by a constant 2-D float weight becomes a Gemm;
/// an Add of a constant per-column bias that alone reads it becomes that
/// Gemm's bias C (the unrolled recurrent layers' products, a transformer's
/// Linear, MatMulsAsGemms.cpp). A batched activation's rows are viewed as
/// 2-D by Reshapes around the Gemm; `alias(view, of)` names each new value
/// and the profiled value whose range it takes. Float results are the same
/// sums. Returns how many.
size_t matMulsByConstantAsGemms(
    Graph &graph, const std::function<bool(const std::string &)> &hasRange,
    const std::function<void(const std::string &, const std::string &)> &alias);

/// Whether `graph` has a QuantizeLinear or DequantizeLinear node.
bool hasLinearQuantNodes(const Graph &graph);

/// Rewrites a freshly imported `graph` (see above); `modelPath` names the file
/// in errors and warnings.
QdqFoldResult foldQdqPairs(Graph &graph, const std::string &modelPath);

} // namespace bundlefit
