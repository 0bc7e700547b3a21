//===- QuantizeGraph.h - Float graph + profile -> mixed float/int8 graph ----===//
//
// Produces the graph docs/quantized-ir.md describes. In short:
//
// - A node becomes int8 when its op is int8-capable (isInt8CapableOp), its kind
//   is not kept float (--keep-original-precision-for-nodes), its operands suit
//   the int8 kernels (constant weights, Relu/Clip as the only fused
//   activations, no broadcasting Add...), and the profile covers the
//   tensors whose parameters it needs. A fused Sigmoid, Tanh, HardSigmoid,
//   HardSwish, LeakyRelu, Silu or XHardSigmoid is first split off its layer
//   when the profile (or model) has the layer's own output
//   (UnfuseActivations.h): the layer then runs in int8 and the activation
//   as a lookup table. Views and Transpose are int8 exactly
//   when their input is.
// - An int8 node keeps its op type and its output Value (same name): only the
//   type changes to int8 with `quant`. Float inputs reach it through a
//   `Quantize`, int8 values reach float readers through a `Dequantize` (one
//   per value, shared by all readers). Graph inputs and outputs stay float: an
//   int8 graph output is renamed `<name>_int8` and a Dequantize computes the
//   float output under the original name.
// - Parameters: activations from the profile with the chosen schema;
//   MaxPool, Relu, Clip, AveragePool, GlobalAveragePool, views and Transpose
//   reuse their input's; Softmax outputs scale 1/256, zero point -128. Weights
//   are symmetric in [-127, 127] (power-of-two scales with
//   symmetric_with_power2_scale), per tensor or per output channel. Bias:
//   Int32 at scale inScale * wScale[c], or Int8 with its own symmetric scale.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/quant/Profile.h"
#include "bundlefit/quant/QuantizationSchema.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace bundlefit {

/// Parameters a pre-quantized model fixes, by value name (FoldQdq.h).
struct PresetQuantParams {
  std::map<std::string, ScaleZeroPoint> activations; ///< int8, zero point in [-128, 127]
  std::map<std::string, QuantParams> weights;        ///< int8 symmetric (zero points 0)
  /// The model's bias scales (int32 DQ constants), to check against
  /// inputScale * weightScale when quantizeGraph rebuilds the bias.
  std::map<std::string, std::vector<float>> biasScales;
  /// Their integers (minus the zero point), used as they are when the
  /// scales match: the float round trip is exact only below 2^24.
  std::map<std::string, std::vector<int64_t>> biasIntegers;
};

enum class BiasPrecision : uint8_t { Int8, Int32 };

struct QuantizationOptions {
  QuantSchema schema = QuantSchema::Asymmetric;
  BiasPrecision biasPrecision = BiasPrecision::Int32;
  /// ONNX op types that stay float (from --keep-original-precision-for-nodes).
  std::set<std::string> keepFloatOps;
  /// One weight scale per output channel instead of per tensor.
  bool channelwise = false;
  /// A pre-quantized model's parameters: used instead of a profile (which
  /// is then empty); a node runs in int8 only where they cover it, and every
  /// change to the model's arithmetic is a QuantizationSummary warning.
  const PresetQuantParams *preset = nullptr;
  /// The preset comes from an ONNX model, whose arithmetic is onnxruntime's:
  /// an int8 AveragePool keeps the model's output parameters (the kernel
  /// averages in float as QLinearAveragePool, one rounding) instead of a
  /// Rescale after it (two). TFLite pools keep their input's, as TFLM.
  bool onnxArithmetic = false;
  /// --int8-io: graph inputs and outputs are int8, with no Quantize or
  /// Dequantize at the boundary. With a preset: those the model quantizes,
  /// with its parameters. With a profile: every float input and output, with
  /// the parameters the profile's ranges give under the schema (an output a
  /// float node computes gets a Quantize at the end).
  bool keepInt8Io = false;
  /// Glow's -model-input NAME,int8q,SCALE,OFFSET: these graph inputs are
  /// int8 with these parameters (with or without keepInt8Io). A preset model
  /// must quantize the input with the same ones.
  std::map<std::string, ScaleZeroPoint> int8Inputs;
};

/// What quantizeGraph did, for --verbose output and tests.
struct QuantizationSummary {
  size_t int8Nodes = 0;     ///< Nodes computing in int8 (views included).
  size_t floatNodes = 0;    ///< Original nodes left in float.
  size_t quantizeNodes = 0; ///< Conversions inserted.
  size_t dequantizeNodes = 0;
  /// "node 'x' (Op): reason" for every int8-capable node left float.
  std::vector<std::string> keptFloat;
  /// With a preset: "node 'x' (Op): what was done", one per deviation.
  std::vector<std::string> warnings;
};

/// One line: "quantized 9 of 10 nodes to int8 (2 Quantize, 1 Dequantize) ...".
std::string describeQuantization(const QuantizationSummary &summary);

/// Op types the int8 kernels implement (docs/quantized-ir.md, "Nodes").
bool isInt8CapableOp(const std::string &opType);

/// Maps a --keep-original-precision-for-nodes name to an ONNX op type: ONNX
/// names as they are, Glow's node kinds (Convolution, FullyConnected, SoftMax,
/// AvgPool...) to theirs; case-insensitive. Returns "" for an unknown name.
std::string opTypeForKindName(const std::string &name);

/// Rewrites a type-inferred, pass-optimised float graph in place. `profile`
/// must be this graph's (checkProfileMatchesModel); a tensor it lacks throws
/// Error(BadInputFile) naming `profileName` and the tensor.
QuantizationSummary quantizeGraph(Graph &graph, const ProfileData &profile,
                                  const QuantizationOptions &options,
                                  const std::string &profileName);

} // namespace bundlefit
