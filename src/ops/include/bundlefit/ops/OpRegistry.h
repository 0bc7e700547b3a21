//===- OpRegistry.h - Everything bundlefit knows about each operator -------===//
//
// For every operator bundlefit supports, an OpDef says what the operator
// means and how each engine runs it: output types from input types (static
// shape/dtype inference), multiply-accumulates, traits, the reference
// interpreter's kernel, and how it behaves once quantized. Operators are
// registered explicitly, one family per folder in src/ops/<family>/, listed in
// src/ops/AllOps.cpp, the int8 builds by file name (no static initialisers: they
// vanish when linking static libraries). The rest of bundlefit asks the
// definition; nobody keeps a list of op names (docs/adding-an-operator.md).
//
// Operand conventions are ONNX opset 13 (see Graph.h). Attributes bundlefit
// adds on top of ONNX:
//   Softmax/LogSoftmax  coerce_to_2d=1  opset<13 semantics: normalise over
//                                      the flattened dims [axis, rank).
//   Conv/Gemm/MatMul    activation="Relu"|"Clip"|"LeakyRelu"|"Sigmoid"|...
//                       activation_min/activation_max/activation_alpha:
//                       an activation fused into the producer (passes).
//                       activation_input (activation_gate): the names the
//                       producer's output (and Silu's gate) had, which an
//                       int8 build unfuses under (quant/UnfuseActivations.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ir/Tensor.h"
#include "bundlefit/ops/CmsisBufferSizes.h"

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>

namespace bundlefit {

struct KernelCall; // bundlefit/ops/KernelCall.h
class PlanView;    // bundlefit/ops/KernelCall.h

/// Static traits of an operator. Passes, the planner, the quantizer and code
/// generation ask the definition (hasOpTrait, isViewOp...) instead of keeping
/// their own lists of op names.
enum OpTrait : uint32_t {
  /// Output 0 is input 0's bytes under another shape (Reshape, Flatten,
  /// Squeeze, Unsqueeze, Identity, Dropout): it may share the input's storage.
  kOpView = 1u << 0,
  /// Copies elements without arithmetic (the views and Transpose): runs on
  /// any dtype, and an int8 output keeps the input's parameters.
  kOpMovesBytes = 1u << 1,
  /// Output element i reads only element i of each input (after
  /// broadcasting; BatchNormalization's per-channel parameters count as
  /// broadcast): the output may overwrite a dying input of the same shape
  /// and dtype, so the kernels must be safe in place.
  kOpElementwise = 1u << 2,
  /// The output depends only on input 0's type, not its values (Shape,
  /// Size, EyeLike): constant folding computes it at compile time.
  kOpReadsShapeOnly = 1u << 3,
  /// Runs other operators' kernels, whatever its operands' types (PatchStage
  /// runs its body's): never an int8 kernel of its own.
  kOpCompound = 1u << 4,
  /// ONNX's QuantizeLinear and DequantizeLinear: the quantization nodes of a
  /// pre-quantized (QDQ) model, folded into the int8 IR before anything else
  /// runs (quant/FoldQdq.h).
  kOpLinearQuant = 1u << 5,
  /// An int8 operator of ONNX's QOperator format (QLinearConv,
  /// QLinearMatMul): its quantization parameters are operands; rewritten into
  /// the QDQ form before folding (quant/FoldQdq.h's expandQOperators).
  kOpQOperator = 1u << 6,
};

/// How an operator behaves once quantized (src/quant/QuantizeGraph.cpp).
enum class Int8Rule : uint8_t {
  /// Stays float: the quantizer puts Dequantize/Quantize around it.
  None,
  /// The int8 output carries exactly the input's scale and zero point, so
  /// the kernel never rescales (views, Transpose, MaxPool, Relu, Clip,
  /// AveragePool, GlobalAveragePool).
  SameParams,
  /// The output gets its own parameters from the profiled range and the
  /// int8 kernel rescales (Conv, Gemm, Add, Mul, Concat, Softmax).
  OwnParams,
};

/// Computes a node's outputs from its inputs. `inputs[i]` is nullptr for an
/// omitted optional input. `outputs` arrive sized to node.outputs.size() with
/// types set from node.outputs[i]->type and bytes allocated.
using KernelFn = void (*)(const Node &node, const std::vector<const Tensor *> &inputs,
                          std::vector<Tensor> &outputs);

/// The bundle's kernel call(s) of a float (or plain integer) node, as data
/// (bundlefit_kernels.h; helpers in bundlefit/ops/LowerHelpers.h): code
/// generation emits them. Throws Error(Unsupported, ...) naming the node when
/// no kernel covers its types or attributes.
using LowerFn = std::vector<KernelCall> (*)(const Node &node, const PlanView &plan);

/// How an operator runs once quantized (docs/quantized-ir.md).
struct Int8Def {
  Int8Rule rule = Int8Rule::None;
  /// The reference kernel of a quantized node (needsInt8Kernel): written
  /// from the ONNX/TFLite formulas in plain C++, sharing no code with the
  /// bundles' C kernels, so comparing the two tests both.
  KernelFn interpret = nullptr;
  /// The quantizer's checks of a float node beyond the common ones (its
  /// output is one float32 tensor, its activation operands are not
  /// constants, a fused activation is Relu or Clip): "" when the int8 kernel
  /// covers the node's attributes and operands, else why not. nullptr: none.
  std::string (*whyFloat)(const Node &node) = nullptr;
  /// The operands the int8 kernel reads as activations (the quantizer puts a
  /// Quantize before each float one). nullptr: operand 0.
  std::vector<size_t> (*activationInputs)(const Node &node) = nullptr;
  /// A layer with weights: operand 1 is quantized symmetric int8 with one
  /// scale per channel of this axis (or per tensor), operand 2 (the bias)
  /// per channel at the accumulator scale. nullptr: no weights.
  int (*weightAxis)(const Node &node) = nullptr;
  /// The kernel fixes the output's parameters (Softmax: 1/256, -128) instead
  /// of the profile (OwnParams) or the input (SameParams) choosing them.
  bool fixedOutput = false;
  float outputScale = 0.0f;
  int32_t outputZeroPoint = 0;
  /// A SameParams kernel that can also write other output parameters in an
  /// ONNX model's arithmetic (QuantizationOptions::onnxArithmetic): the 2-D
  /// AveragePool (bf_avgpool2d_requant_s8) keeps a pre-quantized model's.
  bool requantizes = false;
  /// The kernel may round as ONNX defines it, where TFLite differs
  /// (kInt8RoundingAttr "single": Conv and Gemm round the requantized
  /// value once; Quantize rounds half to even).
  bool singleRounding = false;
  /// The kernel reads and writes each operand in the same element order,
  /// whatever it is (Relu, Clip, Rescale; Add and Mul without broadcasting):
  /// a chain of CMSIS-NN NHWC tensors passes through it unchanged.
  bool anyLayout = false;
  /// The bundle's int8 kernel call(s) of a quantized node
  /// (bundlefit_kernels_int8.h, arguments from Int8Params.h), as data:
  /// code generation emits them. nullptr: no int8 bundle kernel.
  std::vector<KernelCall> (*lower)(const Node &node) = nullptr;
  /// --memory-opt: rewrites lower's calls of a node the plan put in place
  /// (PlanView::outputOnInput) into the in-place kernels'. nullptr: the
  /// plan never puts the node's int8 kernel in place.
  void (*lowerInPlace)(const Node &node, const PlanView &plan,
                       std::vector<KernelCall> &calls) = nullptr;
};

/// A CMSIS-NN function the operator may call and the C declarations a
/// --use-cmsis bundle's header states for it (CmsisDef::prototypes).
struct CmsisPrototype {
  const char *function;
  std::string declarations;
};

/// How an int8 node of the operator calls CMSIS-NN's s8 wrapper API
/// (`--use-cmsis`, quant/CmsisLayout.h); the numbers are Int8Params.h's.
struct CmsisDef {
  /// The CMSIS-NN function the op maps to (nullptr: none): what a device's
  /// cmsis_nn library covers (cmsisNnOps).
  const char *function = nullptr;
  /// The function for int8 `node` in the CMSIS-NN build `extension`
  /// (`function` or a form of it: a depthwise Conv calls the wrapper's
  /// depthwise form), or "" with `whyNot` set when the node stays on the
  /// portable kernels.
  std::string (*choose)(const Node &node, CmsisExtension extension, std::string *whyNot) = nullptr;
  /// The bytes of `function`'s context buffer for `node` in the CMSIS-NN
  /// build `extension` (its *_get_buffer_size). Geometry only, so a float
  /// graph sized as its int8 build asks it too. nullptr: none.
  int64_t (*scratch)(const Node &node, const std::string &function,
                     CmsisExtension extension) = nullptr;
  /// Repacks the node's constants as `function` reads them (OHWI weights,
  /// an int32 bias, Helium's kernel sums...). nullptr: none.
  void (*prepare)(Graph &graph, Node &node, const std::string &function,
                  CmsisExtension extension) = nullptr;
  /// `function` reads and writes 4-D activations stored NHWC (conv, pool);
  /// false: 2-D operands, the same bytes in either layout (FC, softmax).
  bool nhwc = true;
  /// Reads a flattened NHWC value ([N, C*H*W]) when its weight columns are
  /// permuted to H, W, C order (fully connected): no layout copy is needed.
  void (*readFlattenedNhwc)(Graph &graph, Node &node, int64_t C, int64_t H, int64_t W) = nullptr;
  /// The call of `function` (the one `choose` picked) for a prepared node,
  /// as data (CMSIS-NN's structs as KernelArg::Struct and tables).
  KernelCall (*call)(const Node &node, const std::string &function) = nullptr;
  /// The prototype `call` assumes of each function `choose` may return (and
  /// the layout of a struct only that function takes), which the bundle
  /// header checks against arm_nnfunctions.h at the firmware's compile time
  /// (cmsisPrototypeFor, Cmsis.h). A function not listed is not checked.
  std::vector<CmsisPrototype> prototypes;
  /// Further C lines the bundle header states for a prepared `node` whose
  /// call relies on more of the API than its function's prototype (Helium's
  /// fully connected call passes kernel sums: arm_vector_sum_s8 must exist),
  /// written once however many nodes give them (cmsisApiChecksFor). nullptr
  /// or "": none.
  std::string (*apiChecks)(const Node &node) = nullptr;
};

/// The class of work a layer is for cost models (device_db's cost per MAC).
enum class CostClass { Conv, Depthwise, FullyConnected, Other };

/// What sizing a build for a device needs beyond the graph (device_db).
struct DeviceDef {
  /// nullptr: CostClass::Other.
  CostClass (*costClass)(const Node &node) = nullptr;
  /// Workspace bytes of Cadence HiFi4 NNLib's kernel for `node` (an
  /// approximation of its xa_nn_*_getsize). nullptr: none.
  uint64_t (*nnlibScratch)(const Node &node) = nullptr;
};

struct OpDef {
  std::string opType;
  /// Sets node.outputs[i]->type (and typeKnown) from the inputs and
  /// attributes. Inputs that must be constants (Reshape's shape, Slice's
  /// starts...) are read from Value::data. Throws Error(Unsupported, ...)
  /// starting with node.describe() when the node is invalid or uses a mode
  /// bundlefit does not support.
  void (*inferTypes)(Node &node) = nullptr;
  /// Multiply-accumulates for one inference (0 for pure data movement).
  uint64_t (*countMacs)(const Node &node) = nullptr;
  /// OpTrait bits.
  uint32_t traits = 0;
  /// Bit i set: input i is a compile-time parameter (Reshape's shape, Slice's
  /// starts, Clip's bounds...): baked into the code, never a weight.
  uint32_t parameterOperands = 0;
  /// The reference interpreter's kernel (float and the other plain dtypes):
  /// simple, obviously correct loops; the yardstick for bundles, the engine
  /// of constant folding and of the quantization profiler.
  KernelFn interpret = nullptr;
  /// The bundle's float kernel calls. nullptr: none (codegen's own emitters
  /// for the convolution family, or no bundle kernel).
  LowerFn lower = nullptr;
  Int8Def int8 = {};
  CmsisDef cmsis = {};
  DeviceDef device = {};
  /// Operand index of the bias of a layer with weights (Conv, ConvTranspose,
  /// Gemm): int32 in int8 builds. -1: none.
  int biasOperand = -1;
  /// Other names of the op in Glow's command lines
  /// (-keep-original-precision-for-nodes=convolution), besides its own.
  std::vector<std::string> glowNames = {};

  // Chainable setters for the registration lines:
  //   registry.add({"Reshape", inferReshape, noMacs}).with(kOpView | kOpMovesBytes)
  //       .parameters(kParametersFrom1).runs(copyKernel).quantized(Int8Rule::SameParams);
  OpDef &with(uint32_t opTraits) {
    traits |= opTraits;
    return *this;
  }
  OpDef &parameters(uint32_t mask) {
    parameterOperands = mask;
    return *this;
  }
  OpDef &runs(KernelFn kernel) {
    interpret = kernel;
    return *this;
  }
  OpDef &quantized(Int8Rule rule) {
    int8.rule = rule;
    return *this;
  }
  OpDef &int8Runs(KernelFn reference) {
    int8.interpret = reference;
    return *this;
  }
};

/// parameterOperands masks.
constexpr uint32_t kParametersFrom1 = ~1u; ///< every input but the data input 0
constexpr uint32_t kAllParameters = ~0u;

class OpRegistry {
public:
  /// The registry of all supported operators.
  static const OpRegistry &get();

  OpRegistry() = default;
  OpRegistry(const OpRegistry &) = delete; // byName_ points into defs_
  OpRegistry &operator=(const OpRegistry &) = delete;

  /// Adds a definition; returns it so the registration line can set the rest.
  OpDef &add(OpDef def);
  /// A definition added before, for the registration of its int8 build and
  /// int8 reference (src/ops/<family>/*Int8.cpp, *Reference.cpp), which
  /// follows the family's float registration. Internal error when absent.
  OpDef &at(const std::string &opType);
  const OpDef *find(const std::string &opType) const;
  std::vector<std::string> supportedOps() const;

private:
  // A deque keeps the references add() returns valid.
  std::deque<OpDef> defs_;
  std::unordered_map<std::string, OpDef *> byName_;
};

/// Infers the types of one node (throws if its op is unknown or invalid).
void inferNodeTypes(Node &node);
/// The most MACs a model may have (2^56, 7.2e16; MobileNetV2 has 3e8): sums
/// of node MACs, with --memory-opt 2's recomputation, cannot wrap.
constexpr uint64_t kMaxModelMacs = uint64_t(1) << 56;
/// Infers types for every node in execution order; Error(Unsupported) naming
/// the node where the model's MACs pass kMaxModelMacs.
void inferGraphTypes(Graph &graph);
/// MACs of one node, 0 if unknown (at most kMaxModelMacs: macProduct).
uint64_t countNodeMacs(const Node &node);
/// An operator's MAC count from its factors (output elements x products per
/// output...): Error(Unsupported) naming the node when it passes
/// kMaxModelMacs, never a wrapped count.
uint64_t macProduct(const Node &node, std::initializer_list<uint64_t> factors);
/// Whether input `index` of `node` is a compile-time parameter (Reshape's
/// shape, Slice's starts, Clip's bounds, Resize's scales...) rather than data
/// the kernel reads at run time. Parameters are baked into the code; they
/// never occupy the constant-weight region.
bool isParameterOperand(const Node &node, size_t index);
/// Whether the registered `opType` has every bit of `traits` (false when unknown).
bool hasOpTrait(const std::string &opType, uint32_t traits);
/// A view op (kOpView): its output may alias its input's storage.
inline bool isViewOp(const std::string &opType) { return hasOpTrait(opType, kOpView); }
/// QuantizeLinear or DequantizeLinear (kOpLinearQuant).
inline bool isLinearQuantOp(const std::string &opType) {
  return hasOpTrait(opType, kOpLinearQuant);
}
/// The int8 rule of `opType` (None when unknown).
Int8Rule int8RuleOf(const std::string &opType);

/// Node attribute choosing the Conv/Gemm int8 output rounding: "single" (one
/// rounding of the exact product, as ONNX's QLinearConv and onnxruntime) or
/// absent (TFLM's and CMSIS-NN's default double rounding).
inline constexpr const char *kInt8RoundingAttr = "int8_rounding";

/// Attributes of a producer with a fused activation (FuseActivations.cpp):
/// the name of the value the activation read, and of Silu's (x *
/// Sigmoid(x)) or XHardSigmoid's gate, so that an int8 build can split the
/// activation off again under the names its profile or its QDQ parameters use.
inline constexpr const char *kActivationInputAttr = "activation_input";
inline constexpr const char *kActivationGateAttr = "activation_gate";

/// Attribute of the nodes of an unrolled recurrent layer's step
/// (ExpandRecurrent.cpp): "<layer>/<direction>/<k>", the same on the k-th
/// node of every step. The quantizer gives the outputs of one role one range
/// (the union of the steps'), so that every step runs with the same int8
/// parameters and shares the weights' and biases' int8 constants.
inline constexpr const char *kRecurrentRoleAttr = "recurrent_role";

/// Whether `node` computes on quantized int8 data: any operand that is Int8
/// with quantization parameters (Quantize's output, Dequantize's input...).
bool isInt8Node(const Node &node);
/// Whether the node needs an int8 kernel (isInt8Node, and neither moves
/// bytes - views and Transpose run the ordinary kernels on any dtype - nor
/// is compound).
bool needsInt8Kernel(const Node &node);

/// Evaluates one node whose output types are already inferred: its
/// definition's reference kernel (the int8 one when needsInt8Kernel). Its
/// outputs are checked against the memory budget (support/MemoryBudget.h)
/// before they are allocated: Error(Unsupported) naming the node and
/// --max-memory.
std::vector<Tensor> evaluateNode(const Node &node, const std::vector<const Tensor *> &inputs);

/// The bytes of `node`'s outputs, from their inferred types.
uint64_t outputBytes(const Node &node);

// One registration function per operator family (src/ops/<family>/<Family>Ops.cpp).
void registerConvOps(OpRegistry &registry);        // Conv, ConvTranspose
void registerPoolOps(OpRegistry &registry);        // MaxPool, AveragePool, Global*Pool
void registerMatMulOps(OpRegistry &registry);      // Gemm, MatMul
void registerNormOps(OpRegistry &registry);        // BatchNormalization, Softmax, LogSoftmax
void registerResizeOps(OpRegistry &registry);      // Resize (Upsample is imported as Resize)
void registerElementwiseOps(OpRegistry &registry); // Add..Min, PRelu, unary activations, Cast
void registerShapeOps(OpRegistry &registry);       // Reshape..Range, Identity, Dropout
void registerReduceOps(OpRegistry &registry);      // ReduceMean, ReduceMax
void registerQuantOps(OpRegistry &registry);       // Quantize, Dequantize, Rescale (internal)
void registerLinearQuantOps(OpRegistry &registry); // ONNX QuantizeLinear, DequantizeLinear
void registerFusedOps(OpRegistry &registry);       // ConvPool (FusedOps.h)
void registerMovementOps(OpRegistry &registry);    // Expand, Tile, DepthToSpace, Trilu...
void registerIndexOps(OpRegistry &registry); // GatherElements, GatherND, ScatterElements, OneHot
void registerUnaryMathOps(OpRegistry &registry); // Neg, Log, Erf, Selu... (UnaryMath.h)
void registerRecurrentOps(OpRegistry &registry); // LSTM, GRU, RNN (unrolled by a pass)
void registerInt16x8Ops(OpRegistry &registry);   // TFLite int16x8 (Int16Conv, Int16Add...)

} // namespace bundlefit
