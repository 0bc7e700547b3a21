//===- LowerGraph.cpp - Graph + MemoryPlan -> the bundle entry function ----===//
//
// Each scheduled node becomes one call into the kernel bitcode
// (src/kernels/bundlefit_kernels.h documents every signature). Shapes are
// i32 constants, small vectors are private constant globals, and tensor
// addresses are `region base + planned offset`. Nothing here optimises: the
// LLVM pipeline specialises the calls afterwards.
//
//===----------------------------------------------------------------------===//
#include "LowerGraph.h"
#include "LowerFused.h"
#include "LowerInt8.h"
#include "NodeFunctions.h"

#include "bundlefit/kernels/abi.h" // bf_binary_op, bf_pad_mode
#include "bundlefit/ops/ShapeHelpers.h"

#include "bundlefit/ops/FusedActivations.h"
#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/PatchStage.h"
#include "bundlefit/ops/Softmax.h"
#include "bundlefit/ops/UnaryMath.h"
#include "bundlefit/support/Error.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <climits>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

namespace bundlefit {

namespace {

constexpr int kMaxRank = 6; // BF_MAX_RANK

using Ints = std::vector<int64_t>;

/// Suffix of the integer kernel variants (bf_binary_i8, ...) or nullptr.
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

/// Loop nest over `dims` with one stride vector per operand. Drops size-1
/// dimensions and merges neighbours that are contiguous for every operand.
struct LoopNest {
  Ints dims;
  std::vector<Ints> strides;

  void simplify() {
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
};

/// Pads at the front to kMaxRank with `fill`.
std::vector<int32_t> padFront(const Ints &values, int64_t fill, const Node &node) {
  if (values.size() > size_t(kMaxRank))
    throw Error(ExitCode::Unsupported,
                node.describe() + ": needs more than 6 dimensions after simplification");
  std::vector<int32_t> out(kMaxRank - values.size(), int32_t(fill));
  for (int64_t v : values) {
    if (v > INT32_MAX || v < INT32_MIN)
      throw Error(ExitCode::Unsupported, node.describe() + ": a dimension exceeds int32");
    out.push_back(int32_t(v));
  }
  return out;
}

struct Activation {
  int32_t kind = 0;
  float a = 0.0f, b = 0.0f;
};

Activation fusedActivation(const Node &node) {
  const FusedActivationKind &kind = fusedActivationOf(node); // ops/FusedActivations.h
  Activation act;
  act.kind = kind.code;
  fusedActivationParams(kind, node, act.a, act.b);
  return act;
}

/// Spatial parameters of a 1-D or 2-D window op, as 2-D (1-D gets H = 1).
struct Window {
  int64_t N = 1, C = 1, H = 1, W = 1, OH = 1, OW = 1, KH = 1, KW = 1;
  int64_t strideH = 1, strideW = 1, dilH = 1, dilW = 1;
  int64_t padT = 0, padL = 0, padB = 0, padR = 0;
};

/// Window geometry of Conv/Pool (`transposed` false) or ConvTranspose. Pads
/// come from bundlefit/ops/ShapeHelpers.h, the helper type inference and the
/// interpreter use, so auto_pad / output_shape / ceil_mode resolve exactly as
/// they do there (ConvTranspose SAME pads depend on the *input* length and may
/// be negative with output_shape; a private copy of the formula got it wrong).
struct SpatialWindow {
  Ints strides, dilations, padsBegin, padsEnd;
};

SpatialWindow resolveSpatial(const Node &node, const Shape &in, const Shape &out,
                             const Ints &kernel, bool transposed, bool ceilMode) {
  const size_t rank = in.size();
  if (rank < 3 || rank > 5)
    throw Error(ExitCode::Unsupported, node.describe() + ": only 1-D, 2-D and 3-D windows (input " +
                                           shapeToString(in) + ") are supported");
  const size_t spatial = rank - 2;
  if (kernel.size() != spatial || out.size() != rank)
    throw Error(ExitCode::Unsupported, node.describe() + ": kernel/output do not match the rank");
  const Ints inSpatial(in.begin() + 2, in.end());
  Ints strides, dilations, padsBegin, padsEnd, outSpatial;
  if (transposed) {
    shape_helpers::TransposeWindow t =
        shape_helpers::resolveTransposeWindow(node, inSpatial, kernel);
    strides = t.strides, dilations = t.dilations, outSpatial = t.outSpatial;
    padsBegin = t.padsBegin, padsEnd = t.padsEnd;
  } else {
    shape_helpers::Window t = shape_helpers::resolveWindow(node, inSpatial, kernel, ceilMode);
    strides = t.strides, dilations = t.dilations, outSpatial = t.outSpatial;
    padsBegin = t.padsBegin, padsEnd = t.padsEnd;
  }
  // The kernels take the output extent from `out`: it must be what the
  // geometry above produces, or the pads would be applied to another shape.
  for (size_t i = 0; i < spatial; ++i)
    if (outSpatial[i] != out[2 + i])
      throw Error(ExitCode::Unsupported, node.describe() + ": output " + shapeToString(out) +
                                             " differs from the window geometry");
  return {strides, dilations, padsBegin, padsEnd};
}

Window windowOf(const Node &node, const Shape &in, const Shape &out, const Ints &kernel,
                bool transposed, bool ceilMode) {
  const size_t rank = in.size();
  if (rank != 3 && rank != 4)
    throw Error(ExitCode::Unsupported, node.describe() + ": only 1-D and 2-D windows (input " +
                                           shapeToString(in) + ") are supported");
  const SpatialWindow sw = resolveSpatial(node, in, out, kernel, transposed, ceilMode);
  const Ints &strides = sw.strides, &dilations = sw.dilations;
  const Ints &padsBegin = sw.padsBegin, &padsEnd = sw.padsEnd;
  Window w;
  w.N = in[0];
  w.C = in[1];
  w.OH = rank == 4 ? out[2] : 1;
  w.OW = out[rank - 1];
  w.H = rank == 4 ? in[2] : 1;
  w.W = in[rank - 1];
  if (rank == 4) {
    w.KH = kernel[0], w.KW = kernel[1];
    w.strideH = strides[0], w.strideW = strides[1];
    w.dilH = dilations[0], w.dilW = dilations[1];
    w.padT = padsBegin[0], w.padL = padsBegin[1], w.padB = padsEnd[0], w.padR = padsEnd[1];
  } else {
    w.KW = kernel[0], w.strideW = strides[0], w.dilW = dilations[0];
    w.padL = padsBegin[0], w.padR = padsEnd[0];
  }
  return w;
}

class Lowering {
public:
  Lowering(llvm::Module &module, const Graph &graph, const MemoryPlan &plan)
      : module_(module), ctx_(module.getContext()), builder_(ctx_), graph_(graph), plan_(plan) {}

  llvm::Function *run(const std::string &name, const LayerCallback &onLayer);

private:
  // ---- values ----------------------------------------------------------
  llvm::Value *i32(int64_t v) {
    if (v > INT32_MAX || v < INT32_MIN)
      throw Error(ExitCode::Unsupported,
                  current_->describe() + ": value " + std::to_string(v) + " exceeds int32");
    return builder_.getInt32(uint32_t(int32_t(v)));
  }
  llvm::Value *f32(double v) { return llvm::ConstantFP::get(builder_.getFloatTy(), v); }
  llvm::Value *nullPtr() { return llvm::ConstantPointerNull::get(builder_.getPtrTy()); }

  llvm::Value *intTable(const std::vector<int32_t> &values);
  /// `values` (each in int8 range) as a private constant int8 array.
  llvm::Value *byteTable(const std::vector<int32_t> &values);
  /// intTable of int64 values (3-D window vectors), each checked to fit int32.
  llvm::Value *intTable(const Ints &values) {
    std::vector<int32_t> narrow;
    for (int64_t v : values) {
      if (v > INT32_MAX || v < INT32_MIN)
        unsupported("value " + std::to_string(v) + " exceeds int32");
      narrow.push_back(int32_t(v));
    }
    return intTable(narrow);
  }
  llvm::Value *floatTable(const std::vector<float> &values);
  /// Address of `value` plus `byteOffset` (nullptr value -> null pointer).
  llvm::Value *address(const Value *value, int64_t byteOffset = 0);
  /// `base of region + offset`; inside the node function being lowered, a
  /// GEP the NodeFunctionPool turns into a parameter.
  llvm::Value *regionAddress(MemoryRegion region, int64_t offset, const llvm::Twine &name = "");
  const Placement &placement(const Value *value);

  void call(const std::string &kernel, std::vector<llvm::Value *> args);

  // ---- helpers ---------------------------------------------------------
  [[noreturn]] void unsupported(const std::string &what) {
    throw Error(ExitCode::Unsupported, current_->describe() + ": " + what);
  }
  void requireFloat(const Value *value) {
    if (!value || value->type.dtype != DType::Float32)
      unsupported(std::string("only float32 is supported here (") +
                  (value ? value->name + " is " + value->type.str() : "missing operand") + ")");
  }
  void requireDType(const Value *value, DType dtype) {
    if (!value || value->type.dtype != dtype)
      unsupported(std::string("operands must all be ") + dtypeName(dtype) + " (" +
                  (value ? value->name + " is " + value->type.str() : "missing operand") + ")");
  }
  /// First element of constant `value` as a private global of its dtype.
  llvm::Value *scalarGlobal(const Value *value);
  const Value *in(const Node &node, size_t i) {
    const Value *v = node.input(i);
    if (!v)
      unsupported("operand " + std::to_string(i) + " is missing");
    return v;
  }
  Ints constantInts(const Node &node, size_t i, const std::string &what) {
    const Value *v = node.input(i);
    if (!v)
      return {};
    if (!v->isConstant())
      unsupported(what + " must be a constant");
    return v->toInts();
  }
  void stridedCopy(llvm::Value *src, llvm::Value *dst, LoopNest nest, size_t elemSize);

  // ---- operators -------------------------------------------------------
  void lowerNode(const Node &node);
  void emitKernelCall(const KernelCall &kernelCall); // KernelCall.h
  void appendKernelArg(const KernelArg &arg, std::vector<llvm::Value *> &args);
  void emitInt8Calls(const Node &node);   // LowerInt8.h
  void lowerPatchStage(const Node &node); // ops/PatchStage.h
  void lowerView(const Node &node);
  void lowerConv(const Node &node, bool transposed);
  void lowerPool(const Node &node, bool isMax);
  void lowerGlobalPool(const Node &node, bool isMax);
  void lowerGemm(const Node &node);
  void lowerMatMul(const Node &node);
  void lowerBatchNorm(const Node &node);
  void lowerSoftmax(const Node &node, bool logarithm);
  void lowerBinary(const Node &node, const std::string &floatKernel, int32_t op);
  void lowerClip(const Node &node);
  void lowerUnary(const Node &node, const std::string &kernel, float a, float b);
  void lowerUnaryMath(const Node &node, const UnaryMathOp &op);
  void lowerCast(const Node &node);
  void lowerTranspose(const Node &node);
  void lowerConcat(const Node &node);
  void lowerSplit(const Node &node);
  void lowerSlice(const Node &node);
  void lowerPad(const Node &node);
  void lowerReduce(const Node &node, int32_t op);
  void lowerMean(const Node &node);
  void lowerCompare(const Node &node, int32_t op);
  void lowerLogical(const Node &node);
  void lowerWhere(const Node &node);
  void lowerArgMax(const Node &node);
  void lowerHardmax(const Node &node);
  void lowerExpand(const Node &node);
  void lowerTile(const Node &node);
  void lowerSpaceDepth(const Node &node);
  void lowerTrilu(const Node &node);
  void lowerLayerNorm(const Node &node);
  void lowerGatherElements(const Node &node, bool scatter);
  void lowerGatherND(const Node &node);
  void lowerOneHot(const Node &node);
  void lowerFloatTest(const Node &node);
  /// Kernel-name suffix of an index operand (i32, i64, f32).
  std::string indexSuffix(const Value *indices);
  void lowerInstanceNorm(const Node &node);
  /// Strides reading `v` broadcast to `out` (0 on broadcast dims).
  Ints broadcastStrides(const Value *v, const Shape &out);
  /// Kernel-name suffix for elements of `size` bytes (u8, u32, u64).
  const char *sizeSuffix(const Value *v);
  void lowerResize(const Node &node);
  void lowerGather(const Node &node);

  llvm::Module &module_;
  llvm::LLVMContext &ctx_;
  llvm::IRBuilder<> builder_;
  const Graph &graph_;
  const MemoryPlan &plan_;
  /// constantWeight (or the first weight segment), mutableWeight,
  /// activations, then the bases of weight segments 1.. (split placements).
  std::vector<llvm::Value *> bases_ = std::vector<llvm::Value *>(3, nullptr);
  unsigned baseCount() const {
    return unsigned(3 + (plan_.weightSegments.size() > 1 ? plan_.weightSegments.size() - 1 : 0));
  }
  /// The pointer parameters of node and tile functions: every base.
  std::vector<llvm::Type *> baseParams() {
    return std::vector<llvm::Type *>(baseCount(), builder_.getPtrTy());
  }
  void nameBases(llvm::Function *fn);
  const Node *current_ = nullptr;
  /// Lowering a patch stage's tile: current_ is the stage, whose scratch is
  /// the tiles' arena; a step's workspace is the arena's im2col part (int8
  /// convolutions), or none.
  bool inPatchTile_ = false;
  std::optional<Placement> patchIm2col_;
  /// The node function being lowered and its tensor addresses, in order.
  llvm::Function *nodeFunction_ = nullptr;
  std::vector<llvm::GetElementPtrInst *> nodeAddresses_;
  /// Tile buffers of the PatchStage being lowered (inside its scratch).
  std::map<const Value *, Placement> tilePlacements_;
  std::map<std::vector<int32_t>, llvm::GlobalVariable *> intTables_;
  std::map<std::vector<int32_t>, llvm::GlobalVariable *> byteTables_;
  std::map<std::vector<float>, llvm::GlobalVariable *> floatTables_;
};

llvm::Value *Lowering::intTable(const std::vector<int32_t> &values) {
  auto it = intTables_.find(values);
  if (it != intTables_.end())
    return it->second;
  std::vector<uint32_t> raw(values.begin(), values.end());
  auto *init = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint32_t>(raw));
  auto *global = new llvm::GlobalVariable(module_, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init, "bf.dims");
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  global->setAlignment(llvm::Align(4));
  intTables_[values] = global;
  return global;
}

llvm::Value *Lowering::byteTable(const std::vector<int32_t> &values) {
  auto it = byteTables_.find(values);
  if (it != byteTables_.end())
    return it->second;
  std::vector<uint8_t> raw(values.begin(), values.end()); // two's complement
  auto *init = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint8_t>(raw));
  auto *global = new llvm::GlobalVariable(module_, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init, "bf.lut");
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  byteTables_[values] = global;
  return global;
}

llvm::Value *Lowering::floatTable(const std::vector<float> &values) {
  auto it = floatTables_.find(values);
  if (it != floatTables_.end())
    return it->second;
  auto *init = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<float>(values));
  auto *global = new llvm::GlobalVariable(module_, init->getType(), true,
                                          llvm::GlobalValue::PrivateLinkage, init, "bf.table");
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  global->setAlignment(llvm::Align(4));
  floatTables_[values] = global;
  return global;
}

llvm::Value *Lowering::scalarGlobal(const Value *value) {
  llvm::Constant *init;
  if (value->type.dtype == DType::Float32)
    init = llvm::ConstantFP::get(builder_.getFloatTy(), value->elementAsDouble(0));
  else // toInts is exact for int64, unlike a double.
    init = llvm::ConstantInt::get(builder_.getIntNTy(unsigned(dtypeSize(value->type.dtype) * 8)),
                                  uint64_t(value->toInts().at(0)));
  auto *global = new llvm::GlobalVariable(module_, init->getType(), true,
                                          llvm::GlobalValue::PrivateLinkage, init, "bf.scalar");
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  global->setAlignment(llvm::Align(dtypeSize(value->type.dtype)));
  return global;
}

const Placement &Lowering::placement(const Value *value) {
  if (auto tile = tilePlacements_.find(value); tile != tilePlacements_.end())
    return tile->second;
  auto it = plan_.placements.find(value);
  if (it == plan_.placements.end())
    fatalInternal((current_ ? current_->describe() + ": " : std::string()) + "value '" +
                  value->name + "' has no placement in the memory plan");
  return it->second;
}

llvm::Value *Lowering::address(const Value *value, int64_t byteOffset) {
  if (!value)
    return nullPtr();
  const Placement &where = placement(value);
  return regionAddress(where.region, int64_t(where.offset) + byteOffset, value->name);
}

llvm::Value *Lowering::regionAddress(MemoryRegion region, int64_t offset, const llvm::Twine &name) {
  llvm::Value *base = bases_[int(region)];
  if (region == MemoryRegion::ConstantWeight && plan_.weightSegments.size() > 1) {
    // A split placement: the segment's own base, the offset inside it.
    const size_t segment = plan_.segmentAt(uint64_t(offset));
    if (segment > 0)
      base = bases_[2 + segment];
    offset -= int64_t(plan_.weightSegments[segment].offset);
  }
  const bool inNodeFunction = builder_.GetInsertBlock()->getParent() == nodeFunction_;
  if (offset == 0 && !inNodeFunction)
    return base;
  llvm::Value *at =
      builder_.CreateInBoundsGEP(builder_.getInt8Ty(), base, builder_.getInt64(offset), name);
  if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(at); gep && inNodeFunction)
    nodeAddresses_.push_back(gep);
  return at;
}

void Lowering::nameBases(llvm::Function *fn) {
  static const char *const names[3] = {"constantWeight", "mutableWeight", "activations"};
  for (unsigned i = 0; i < baseCount(); ++i) {
    fn->getArg(i)->setName(i < 3 ? std::string(names[i])
                                 : "weights_" + plan_.weightSegments[i - 2].region);
    // The application allocates the regions separately (Glow's contract).
    fn->addParamAttr(i, llvm::Attribute::NoAlias);
  }
  if (plan_.weightSegments.size() > 1)
    fn->getArg(0)->setName("weights_" + plan_.weightSegments[0].region);
}

void Lowering::call(const std::string &kernel, std::vector<llvm::Value *> args) {
  llvm::Function *fn = module_.getFunction(kernel);
  if (!fn || fn->isDeclaration())
    fatalInternal("kernel bitcode has no definition of " + kernel);
  llvm::FunctionType *type = fn->getFunctionType();
  if (type->getNumParams() != args.size())
    fatalInternal(kernel + " takes " + std::to_string(type->getNumParams()) +
                  " arguments, code generation passed " + std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i]->getType() != type->getParamType(i))
      fatalInternal(kernel + ": argument " + std::to_string(i) + " has the wrong type");
  builder_.CreateCall(fn, args);
}

void Lowering::stridedCopy(llvm::Value *src, llvm::Value *dst, LoopNest nest, size_t elemSize) {
  nest.simplify();
  const char *kernel = elemSize == 4   ? "bf_copy_strided_f32"
                       : elemSize == 1 ? "bf_copy_strided_u8"
                       : elemSize == 8 ? "bf_copy_strided_i64"
                                       : nullptr;
  if (!kernel)
    unsupported("no copy kernel for " + std::to_string(elemSize) + "-byte elements");
  call(kernel, {src, dst, intTable(padFront(nest.dims, 1, *current_)),
                intTable(padFront(nest.strides[0], 0, *current_)),
                intTable(padFront(nest.strides[1], 0, *current_))});
}

llvm::Function *Lowering::run(const std::string &name, const LayerCallback &onLayer) {
  const bool split = plan_.weightSegments.size() > 1;
  for (const std::string &symbol : {name, placedEntryName(name)})
    if (module_.getFunction(symbol))
      throw Error(ExitCode::Usage, "--network-name '" + name + "' clashes with a kernel symbol (" +
                                       symbol + "); choose another name");
  llvm::Type *ptr = builder_.getPtrTy();
  auto *glowType = llvm::FunctionType::get(builder_.getInt32Ty(), {ptr, ptr, ptr}, false);
  auto *glowEntry =
      llvm::Function::Create(glowType, llvm::GlobalValue::ExternalLinkage, name, module_);
  glowEntry->addFnAttr(kEntryAttribute);
  glowEntry->setDoesNotThrow();
  const char *glowNames[3] = {"constantWeight", "mutableWeight", "activations"};
  for (unsigned i = 0; i < 3; ++i) {
    glowEntry->getArg(i)->setName(glowNames[i]);
    glowEntry->addParamAttr(i, llvm::Attribute::NoAlias);
  }
  // The entry whose body runs the schedule: Glow's, or with a split
  // placement <net>_placed (weight segments..., mutableWeight, activations),
  // which Glow's entry calls with each segment's offset in constantWeight.
  llvm::Function *entry = glowEntry;
  std::vector<llvm::Value *> entryBases = {glowEntry->getArg(0), glowEntry->getArg(1),
                                           glowEntry->getArg(2)};
  if (split) {
    const size_t segments = plan_.weightSegments.size();
    std::vector<llvm::Type *> params(segments + 2, ptr);
    entry =
        llvm::Function::Create(llvm::FunctionType::get(builder_.getInt32Ty(), params, false),
                               llvm::GlobalValue::ExternalLinkage, placedEntryName(name), module_);
    entry->addFnAttr(kEntryAttribute);
    entry->addFnAttr(llvm::Attribute::NoInline); // one copy of the schedule, not two
    entry->setDoesNotThrow();
    for (unsigned i = 0; i < segments + 2; ++i) {
      entry->getArg(i)->setName(i < segments ? "weights_" + plan_.weightSegments[i].region
                                             : std::string(glowNames[i - segments + 1]));
      entry->addParamAttr(i, llvm::Attribute::NoAlias);
    }
    std::vector<llvm::Value *> args;
    builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", glowEntry));
    for (const WeightSegment &segment : plan_.weightSegments)
      args.push_back(builder_.CreateInBoundsGEP(builder_.getInt8Ty(), glowEntry->getArg(0),
                                                builder_.getInt64(int64_t(segment.offset))));
    args.push_back(glowEntry->getArg(1));
    args.push_back(glowEntry->getArg(2));
    builder_.CreateRet(builder_.CreateCall(entry, args));
    entryBases = {entry->getArg(0), entry->getArg(unsigned(segments)),
                  entry->getArg(unsigned(segments + 1))};
    for (unsigned i = 1; i < segments; ++i)
      entryBases.push_back(entry->getArg(i));
  }
  bases_.assign(baseCount(), nullptr);
  auto *nodeType = llvm::FunctionType::get(builder_.getVoidTy(), baseParams(), false);
  auto setUp = [&](llvm::Function *fn) {
    fn->setDoesNotThrow();
    nameBases(fn);
  };
  llvm::BasicBlock *entryBlock = llvm::BasicBlock::Create(ctx_, "entry", entry);
  std::vector<const Node *> schedule = plan_.schedule;
  if (schedule.empty())
    for (const Node *node : graph_.nodes())
      schedule.push_back(node);
  // One internal function per kind of node, `void <net>.<index>.<Op>(bases...,
  // offsets...)`: the kernels are specialised inside it, each kind is
  // optimised on its own, and nodes that differ only in their tensors'
  // offsets share it (compile time grows with the kinds, not the nodes).
  NodeFunctionPool pool(baseCount());
  int index = 0;
  for (const Node *node : schedule) {
    if (onLayer)
      onLayer(size_t(index) + 1, schedule.size(), node->name);
    current_ = node;
    auto *fn =
        llvm::Function::Create(nodeType, llvm::GlobalValue::InternalLinkage,
                               name + "." + std::to_string(index++) + "." + node->opType, module_);
    setUp(fn);
    fn->addFnAttr(kNodeFunctionAttribute);
    for (unsigned i = 0; i < baseCount(); ++i)
      bases_[i] = fn->getArg(i);
    nodeFunction_ = fn;
    nodeAddresses_.clear();
    builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
    lowerNode(*node);
    builder_.CreateRetVoid();
    nodeFunction_ = nullptr;
    if (std::all_of(fn->getEntryBlock().begin(), fn->getEntryBlock().end(),
                    [](const llvm::Instruction &inst) {
                      return llvm::isa<llvm::GetElementPtrInst, llvm::ReturnInst>(inst);
                    })) { // A shared view: no code.
      fn->eraseFromParent();
      continue;
    }
    NodeFunctionPool::Use use = pool.add(fn, nodeAddresses_);
    std::vector<llvm::Value *> args = entryBases;
    args.insert(args.end(), use.offsets.begin(), use.offsets.end());
    builder_.SetInsertPoint(entryBlock);
    builder_.CreateCall(use.fn, args);
  }
  pool.specialiseSingleUses();
  current_ = nullptr;
  builder_.SetInsertPoint(entryBlock);
  builder_.CreateRet(builder_.getInt32(0));
  return glowEntry;
}

void Lowering::lowerNode(const Node &node) {
  const std::string &op = node.opType;
  if (isViewOp(op))
    return lowerView(node);
  if (op == kPatchStageOp)
    return lowerPatchStage(node);
  if (needsInt8Kernel(node)) // Quantized: the int8 kernels (LowerInt8.cpp).
    return emitInt8Calls(node);
  if (std::optional<KernelCall> memoryOpt = describeMemoryOptCall(node, plan_))
    return emitKernelCall(*memoryOpt);
  // One entry per operator with a float (or integer) bundle kernel.
  using Emitter = std::function<void(Lowering &, const Node &)>;
  struct UnaryKernel {
    const char *kernel;
    const char *attrA = nullptr;
    float a = 0;
    const char *attrB = nullptr;
    float b = 0;
  };
  static const std::unordered_map<std::string, Emitter> emitters = [] {
    std::unordered_map<std::string, Emitter> t;
    t["Conv"] = [](Lowering &l, const Node &n) { l.lowerConv(n, false); };
    t["ConvTranspose"] = [](Lowering &l, const Node &n) { l.lowerConv(n, true); };
    t["MaxPool"] = [](Lowering &l, const Node &n) { l.lowerPool(n, true); };
    t["AveragePool"] = [](Lowering &l, const Node &n) { l.lowerPool(n, false); };
    t["GlobalMaxPool"] = [](Lowering &l, const Node &n) { l.lowerGlobalPool(n, true); };
    t["GlobalAveragePool"] = [](Lowering &l, const Node &n) { l.lowerGlobalPool(n, false); };
    t["Gemm"] = [](Lowering &l, const Node &n) { l.lowerGemm(n); };
    t["MatMul"] = [](Lowering &l, const Node &n) { l.lowerMatMul(n); };
    t["BatchNormalization"] = [](Lowering &l, const Node &n) { l.lowerBatchNorm(n); };
    t["Softmax"] = [](Lowering &l, const Node &n) { l.lowerSoftmax(n, false); };
    t["LogSoftmax"] = [](Lowering &l, const Node &n) { l.lowerSoftmax(n, true); };
    const std::pair<const char *, std::pair<const char *, int32_t>> binaries[] = {
        {"Add", {"bf_add_f32", BF_OP_ADD}}, {"Sub", {"bf_sub_f32", BF_OP_SUB}},
        {"Mul", {"bf_mul_f32", BF_OP_MUL}}, {"Div", {"bf_div_f32", BF_OP_DIV}},
        {"Max", {"bf_max_f32", BF_OP_MAX}}, {"Min", {"bf_min_f32", BF_OP_MIN}},
        {"Sum", {"bf_add_f32", BF_OP_ADD}}, {"PRelu", {"bf_prelu_f32", BF_OP_PRELU}}};
    for (const auto &[op, kernel] : binaries)
      t[op] = [kernel = kernel](Lowering &l, const Node &n) {
        l.lowerBinary(n, kernel.first, kernel.second);
      };
    const std::pair<const char *, UnaryKernel> unaries[] = {
        {"Relu", {"bf_relu_f32"}},
        {"LeakyRelu", {"bf_leaky_relu_f32", "alpha", 0.01f}},
        {"Sigmoid", {"bf_sigmoid_f32"}},
        {"Tanh", {"bf_tanh_f32"}},
        {"HardSigmoid", {"bf_hard_sigmoid_f32", "alpha", 0.2f, "beta", 0.5f}},
        {"HardSwish", {"bf_hard_swish_f32"}},
        {"Exp", {"bf_exp_f32"}},
        {"Sqrt", {"bf_sqrt_f32"}},
        {"Neg", {"bf_neg_f32"}},
        {"Abs", {"bf_abs_f32"}},
        {"Elu", {"bf_elu_f32", "alpha", 1.0f}},
        {"Reciprocal", {"bf_reciprocal_f32"}}};
    for (const auto &[op, u] : unaries)
      t[op] = [u = u](Lowering &l, const Node &n) {
        l.lowerUnary(n, u.kernel, u.attrA ? n.attrs.getFloat(u.attrA, u.a) : 0.0f,
                     u.attrB ? n.attrs.getFloat(u.attrB, u.b) : 0.0f);
      };
    t["Clip"] = [](Lowering &l, const Node &n) { l.lowerClip(n); };
    t["Cast"] = [](Lowering &l, const Node &n) { l.lowerCast(n); };
    t["Transpose"] = [](Lowering &l, const Node &n) { l.lowerTranspose(n); };
    t["Concat"] = [](Lowering &l, const Node &n) { l.lowerConcat(n); };
    t["Split"] = [](Lowering &l, const Node &n) { l.lowerSplit(n); };
    t["Slice"] = [](Lowering &l, const Node &n) { l.lowerSlice(n); };
    t["Pad"] = [](Lowering &l, const Node &n) { l.lowerPad(n); };
    const std::pair<const char *, int32_t> reductions[] = {
        {"ReduceSum", BF_REDUCE_SUM},        {"ReduceMean", BF_REDUCE_SUM},
        {"ReduceMax", BF_REDUCE_MAX},        {"ReduceMin", BF_REDUCE_MIN},
        {"ReduceProd", BF_REDUCE_PROD},      {"ReduceL1", BF_REDUCE_L1},
        {"ReduceL2", BF_REDUCE_L2},          {"ReduceSumSquare", BF_REDUCE_SUM_SQUARE},
        {"ReduceLogSum", BF_REDUCE_LOG_SUM}, {"ReduceLogSumExp", BF_REDUCE_LOG_SUM_EXP}};
    for (const auto &[op, code] : reductions)
      t[op] = [code = code](Lowering &l, const Node &n) { l.lowerReduce(n, code); };
    const std::pair<const char *, int32_t> comparisons[] = {{"Equal", BF_CMP_EQ},
                                                            {"Less", BF_CMP_LT},
                                                            {"LessOrEqual", BF_CMP_LE},
                                                            {"Greater", BF_CMP_GT},
                                                            {"GreaterOrEqual", BF_CMP_GE}};
    for (const auto &[op, code] : comparisons)
      t[op] = [code = code](Lowering &l, const Node &n) { l.lowerCompare(n, code); };
    for (const char *op : {"And", "Or", "Xor", "Not"})
      t[op] = [](Lowering &l, const Node &n) { l.lowerLogical(n); };
    t["Where"] = [](Lowering &l, const Node &n) { l.lowerWhere(n); };
    t["Pow"] = [](Lowering &l, const Node &n) { l.lowerBinary(n, "bf_pow_f32", BF_OP_POW); };
    t["Mod"] = [](Lowering &l, const Node &n) {
      l.lowerBinary(n, "bf_fmod_f32", n.attrs.getInt("fmod", 0) != 0 ? BF_OP_FMOD : BF_OP_MOD);
    };
    t["Mean"] = [](Lowering &l, const Node &n) { l.lowerMean(n); };
    t["ArgMax"] = [](Lowering &l, const Node &n) { l.lowerArgMax(n); };
    t["ArgMin"] = [](Lowering &l, const Node &n) { l.lowerArgMax(n); };
    t["Hardmax"] = [](Lowering &l, const Node &n) { l.lowerHardmax(n); };
    t["Expand"] = [](Lowering &l, const Node &n) { l.lowerExpand(n); };
    t["Tile"] = [](Lowering &l, const Node &n) { l.lowerTile(n); };
    t["DepthToSpace"] = [](Lowering &l, const Node &n) { l.lowerSpaceDepth(n); };
    t["SpaceToDepth"] = [](Lowering &l, const Node &n) { l.lowerSpaceDepth(n); };
    t["Trilu"] = [](Lowering &l, const Node &n) { l.lowerTrilu(n); };
    t["LayerNormalization"] = [](Lowering &l, const Node &n) { l.lowerLayerNorm(n); };
    t["InstanceNormalization"] = [](Lowering &l, const Node &n) { l.lowerInstanceNorm(n); };
    t["GatherElements"] = [](Lowering &l, const Node &n) { l.lowerGatherElements(n, false); };
    t["ScatterElements"] = [](Lowering &l, const Node &n) { l.lowerGatherElements(n, true); };
    t["GatherND"] = [](Lowering &l, const Node &n) { l.lowerGatherND(n); };
    t["OneHot"] = [](Lowering &l, const Node &n) { l.lowerOneHot(n); };
    t["IsNaN"] = [](Lowering &l, const Node &n) { l.lowerFloatTest(n); };
    t["IsInf"] = [](Lowering &l, const Node &n) { l.lowerFloatTest(n); };
    t["Resize"] = [](Lowering &l, const Node &n) { l.lowerResize(n); };
    t["Gather"] = [](Lowering &l, const Node &n) { l.lowerGather(n); };
    return t;
  }();
  if (auto it = emitters.find(op); it != emitters.end())
    return it->second(*this, node);
  if (const UnaryMathOp *math = findUnaryMathOp(op))
    return lowerUnaryMath(node, *math);
  unsupported("no bundle kernel for this operator");
}

void Lowering::appendKernelArg(const KernelArg &arg, std::vector<llvm::Value *> &args) {
  switch (arg.kind) {
  case KernelArg::Address:
    args.push_back(address(arg.value, arg.i));
    return;
  case KernelArg::I32:
    args.push_back(i32(arg.i));
    return;
  case KernelArg::F32:
    args.push_back(f32(arg.f));
    return;
  case KernelArg::I32Table:
    args.push_back(intTable(arg.table));
    return;
  case KernelArg::I8Table:
    args.push_back(byteTable(arg.table));
    return;
  case KernelArg::Scratch: {
    const Placement *where = !inPatchTile_  ? plan_.scratchOf(current_)
                             : patchIm2col_ ? &*patchIm2col_
                                            : nullptr;
    args.push_back(where ? regionAddress(where->region, int64_t(where->offset)) : nullPtr());
    return;
  }
  case KernelArg::Activation: {
    const Activation act = fusedActivation(*arg.node);
    args.insert(args.end(), {i32(act.kind), f32(act.a), f32(act.b)});
    return;
  }
  case KernelArg::Struct: {
    // A C struct of the fields' types on the stack (CMSIS-NN's context and
    // per-channel quant params), filled here; SROA/mem2reg keep it cheap.
    std::vector<llvm::Value *> fields;
    for (const KernelArg &field : arg.fields)
      appendKernelArg(field, fields);
    std::vector<llvm::Type *> types;
    for (llvm::Value *field : fields)
      types.push_back(field->getType());
    auto *type = llvm::StructType::get(ctx_, types);
    llvm::IRBuilder<> entry(&builder_.GetInsertBlock()->getParent()->getEntryBlock(),
                            builder_.GetInsertBlock()->getParent()->getEntryBlock().begin());
    llvm::AllocaInst *slot = entry.CreateAlloca(type);
    for (unsigned i = 0; i < fields.size(); ++i)
      builder_.CreateStore(fields[i], builder_.CreateStructGEP(type, slot, i));
    args.push_back(slot);
    return;
  }
  }
}

void Lowering::emitKernelCall(const KernelCall &kernelCall) {
  std::vector<llvm::Value *> args;
  for (const KernelArg &arg : kernelCall.args)
    appendKernelArg(arg, args);
  if (!kernelCall.external)
    return call(kernelCall.kernel, std::move(args));
  // A library function the user links (CMSIS-NN): declared here, its status
  // ignored (arguments are valid by construction).
  std::vector<llvm::Type *> types;
  for (llvm::Value *arg : args)
    types.push_back(arg->getType());
  llvm::Type *result = kernelCall.returnsVoid ? builder_.getVoidTy() : builder_.getInt32Ty();
  llvm::FunctionCallee fn =
      module_.getOrInsertFunction(kernelCall.kernel, llvm::FunctionType::get(result, types, false));
  builder_.CreateCall(fn, args);
}

void Lowering::emitInt8Calls(const Node &node) {
  std::vector<KernelCall> calls = describeInt8Calls(node);
  rewriteInt8InPlaceCalls(node, plan_, calls); // --memory-opt (LowerFused.h)
  for (const KernelCall &c : calls)
    emitKernelCall(c);
}

/// The stage's tile program. Tiles whose steps differ only in where they
/// read the stage input and write the stage output (interior tiles of one
/// size) share one internal function, called per tile with those byte
/// offsets: code grows with the kinds of tiles, not their number.
void Lowering::lowerPatchStage(const Node &node) {
  std::unique_ptr<PatchProgram> program = buildPatchProgram(node);
  const Placement *arena = plan_.scratchOf(&node);
  if (!arena || arena->size < program->arenaBytes)
    fatalInternal(node.describe() + ": the memory plan reserved no arena for its tiles");
  for (const auto &[value, offset] : program->arenaOffset)
    tilePlacements_[value] = {arena->region, arena->offset + offset, value->type.bytes()};
  patchIm2col_.reset();
  if (program->im2colBytes)
    patchIm2col_ =
        Placement{arena->region, arena->offset + program->im2colOffset, program->im2colBytes};
  auto inArena = [&](const Value *v) { return program->arenaOffset.count(v) != 0; };
  auto describeValue = [&](const Value *v) {
    if (!v)
      return std::string("-");
    if (inArena(v))
      return "@" + std::to_string(program->arenaOffset.at(v)) + ":" + v->type.str();
    return "%" + v->name;
  };
  // A tile's kind: everything but the offsets into full-size values.
  auto kindOf = [&](const std::vector<PatchStep> &tile, std::vector<int64_t> &offsets) {
    std::string kind;
    for (const PatchStep &step : tile) {
      if (step.node) {
        kind += step.node->opType + "(";
        for (const Value *v : step.node->inputs)
          kind += describeValue(v) + ",";
        kind += describeValue(step.node->output()) + ")";
        for (int64_t p : step.node->attrs.getInts("pads", {}))
          kind += std::to_string(p) + ",";
        kind += ";";
        continue;
      }
      const PatchCopy &c = step.copy;
      const int64_t es = int64_t(dtypeSize(c.src->type.dtype));
      kind += "copy(" + describeValue(c.src) + "," + describeValue(c.dst);
      for (const std::vector<int64_t> *v : {&c.dims, &c.srcStrides, &c.dstStrides})
        for (int64_t x : *v)
          kind += "," + std::to_string(x);
      for (auto [value, offset] : {std::pair{c.src, c.srcOffset}, std::pair{c.dst, c.dstOffset}}) {
        if (inArena(value))
          kind += "," + std::to_string(offset);
        else
          offsets.push_back(offset * es);
      }
      kind += ");";
    }
    return kind;
  };
  std::map<std::string, llvm::Function *> kinds;
  llvm::Function *stageFn = builder_.GetInsertBlock()->getParent();
  const std::vector<llvm::Value *> outerBases = bases_;
  for (const std::vector<PatchStep> &tile : program->tiles) {
    std::vector<int64_t> offsets;
    const std::string kind = kindOf(tile, offsets);
    llvm::Function *&fn = kinds[kind];
    if (!fn) {
      std::vector<llvm::Type *> params = baseParams();
      params.insert(params.end(), offsets.size(), builder_.getInt64Ty());
      fn = llvm::Function::Create(llvm::FunctionType::get(builder_.getVoidTy(), params, false),
                                  llvm::GlobalValue::InternalLinkage,
                                  stageFn->getName() + ".tile" + std::to_string(kinds.size()),
                                  module_);
      fn->setDoesNotThrow();
      fn->addFnAttr(llvm::Attribute::NoInline);
      fn->addFnAttr(kTileFunctionAttribute);
      for (unsigned i = 0; i < baseCount(); ++i)
        fn->addParamAttr(i, llvm::Attribute::NoAlias);
      llvm::IRBuilderBase::InsertPoint saved = builder_.saveIP();
      builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
      for (unsigned i = 0; i < baseCount(); ++i)
        bases_[i] = fn->getArg(i);
      unsigned nextOffset = baseCount();
      for (const PatchStep &step : tile) {
        if (step.node) {
          inPatchTile_ = true;
          lowerNode(*step.node);
          inPatchTile_ = false;
          continue;
        }
        const PatchCopy &c = step.copy;
        const int64_t es = int64_t(dtypeSize(c.src->type.dtype));
        auto pointer = [&](const Value *v, int64_t offset) -> llvm::Value * {
          if (inArena(v))
            return address(v, offset * es);
          return builder_.CreateInBoundsGEP(builder_.getInt8Ty(), address(v),
                                            fn->getArg(nextOffset++));
        };
        llvm::Value *src = pointer(c.src, c.srcOffset);
        llvm::Value *dst = pointer(c.dst, c.dstOffset);
        stridedCopy(src, dst, LoopNest{c.dims, {c.srcStrides, c.dstStrides}}, size_t(es));
      }
      builder_.CreateRetVoid();
      builder_.restoreIP(saved);
      bases_ = outerBases;
    }
    std::vector<llvm::Value *> args = bases_;
    for (int64_t offset : offsets)
      args.push_back(builder_.getInt64(offset));
    builder_.CreateCall(fn, args);
  }
  tilePlacements_.clear();
}

void Lowering::lowerView(const Node &node) {
  const Value *src = in(node, 0), *dst = node.output(0);
  const Placement &from = placement(src), &to = placement(dst);
  if (from.region == to.region && from.offset == to.offset)
    return; // Shared storage: nothing to do.
  call("bf_copy_bytes", {address(src), address(dst), i32(int64_t(dst->type.bytes()))});
}

void Lowering::lowerConv(const Node &node, bool transposed) {
  const Value *x = in(node, 0), *w = in(node, 1), *b = node.input(2), *y = node.output(0);
  requireFloat(x), requireFloat(w), requireFloat(y);
  if (b)
    requireFloat(b);
  const Shape &ws = w->type.shape;
  if (ws.size() != x->type.rank())
    unsupported("weight rank differs from input rank");
  // The weight's spatial dims are the kernel (as in the interpreter).
  const Ints kernel(ws.begin() + 2, ws.end());
  if (x->type.rank() == 5) { // 3-D: direct-loop kernels taking {D, H, W} tables.
    const SpatialWindow sw =
        resolveSpatial(node, x->type.shape, y->type.shape, kernel, transposed, false);
    const Shape &xs = x->type.shape, &ys = y->type.shape;
    const int64_t groups = node.attrs.getInt("group", 1);
    if (groups <= 0 || xs[1] % groups != 0 || ys[1] % groups != 0)
      unsupported("group " + std::to_string(groups) + " does not divide the channels");
    const Activation act = fusedActivation(node);
    call(transposed ? "bf_conv_transpose3d_f32" : "bf_conv3d_f32",
         {address(x), address(w), address(b), address(y), i32(xs[0]), i32(xs[1]), i32(ys[1]),
          intTable(Ints(xs.begin() + 2, xs.end())), intTable(Ints(ys.begin() + 2, ys.end())),
          intTable(kernel), intTable(sw.strides), intTable(sw.padsBegin), intTable(sw.dilations),
          i32(groups), i32(act.kind), f32(act.a), f32(act.b)});
    return;
  }
  const Window win = windowOf(node, x->type.shape, y->type.shape, kernel, transposed, false);
  const int64_t groups = node.attrs.getInt("group", 1);
  const int64_t M = y->type.shape[1];
  if (groups <= 0 || win.C % groups != 0 || M % groups != 0)
    unsupported("group " + std::to_string(groups) + " does not divide the channels");
  const Activation act = fusedActivation(node);
  call(transposed ? "bf_conv_transpose2d_f32" : "bf_conv2d_f32",
       {address(x),    address(w),    address(b),    address(y),       i32(win.N),
        i32(win.C),    i32(win.H),    i32(win.W),    i32(M),           i32(win.OH),
        i32(win.OW),   i32(win.KH),   i32(win.KW),   i32(win.strideH), i32(win.strideW),
        i32(win.padT), i32(win.padL), i32(win.dilH), i32(win.dilW),    i32(groups),
        i32(act.kind), f32(act.a),    f32(act.b)});
}

void Lowering::lowerPool(const Node &node, bool isMax) {
  const Value *x = in(node, 0), *y = node.output(0);
  // MaxPool also has uint8/int8 kernels (the max of integers is exact).
  const DType dtype = y->type.dtype;
  const bool intMax = isMax && (dtype == DType::UInt8 || dtype == DType::Int8);
  if (!intMax)
    requireFloat(y);
  requireDType(x, dtype);
  if (node.outputs.size() > 1 && node.output(1) && !graph_.users(node.output(1)).empty())
    unsupported("MaxPool's Indices output");
  if (node.attrs.getInt("storage_order", 0) != 0)
    unsupported("storage_order=1");
  const Ints kernel = node.attrs.getInts("kernel_shape");
  const bool ceilMode = node.attrs.getInt("ceil_mode", 0) != 0;
  if (x->type.rank() == 5) { // 3-D: one direct-loop kernel for max and average.
    if (intMax)
      requireFloat(y);
    const SpatialWindow sw =
        resolveSpatial(node, x->type.shape, y->type.shape, kernel, false, ceilMode);
    const Shape &xs = x->type.shape, &ys = y->type.shape;
    call("bf_pool3d_f32",
         {address(x), address(y), i32(xs[0] * xs[1]), intTable(Ints(xs.begin() + 2, xs.end())),
          intTable(Ints(ys.begin() + 2, ys.end())), intTable(kernel), intTable(sw.strides),
          intTable(sw.padsBegin), intTable(sw.padsEnd), intTable(sw.dilations), i32(isMax ? 1 : 0),
          i32(node.attrs.getInt("count_include_pad", 0) != 0)});
    return;
  }
  const Window win = windowOf(node, x->type.shape, y->type.shape, kernel, false, ceilMode);
  if (isMax) {
    call(std::string("bf_maxpool2d_") + (intMax ? intKernelSuffix(dtype) : "f32"),
         {address(x), address(y), i32(win.N * win.C), i32(win.H), i32(win.W), i32(win.OH),
          i32(win.OW), i32(win.KH), i32(win.KW), i32(win.strideH), i32(win.strideW), i32(win.padT),
          i32(win.padL), i32(win.dilH), i32(win.dilW)});
    return;
  }
  if (win.dilH != 1 || win.dilW != 1)
    unsupported("AveragePool with dilations");
  call("bf_avgpool2d_f32", {address(x), address(y), i32(win.N * win.C), i32(win.H), i32(win.W),
                            i32(win.OH), i32(win.OW), i32(win.KH), i32(win.KW), i32(win.strideH),
                            i32(win.strideW), i32(win.padT), i32(win.padL), i32(win.padB),
                            i32(win.padR), i32(node.attrs.getInt("count_include_pad", 0))});
}

void Lowering::lowerGlobalPool(const Node &node, bool isMax) {
  const Value *x = in(node, 0), *y = node.output(0);
  requireFloat(x), requireFloat(y);
  const Shape &s = x->type.shape;
  if (s.size() < 2)
    unsupported("input rank below 2");
  call(isMax ? "bf_global_maxpool_f32" : "bf_global_avgpool_f32",
       {address(x), address(y), i32(s[0] * s[1]), i32(product(s, 2, s.size()))});
}

void Lowering::lowerGemm(const Node &node) {
  const Value *a = in(node, 0), *b = in(node, 1), *c = node.input(2), *y = node.output(0);
  requireFloat(a), requireFloat(b), requireFloat(y);
  const int64_t transA = node.attrs.getInt("transA", 0), transB = node.attrs.getInt("transB", 0);
  const Shape &as = a->type.shape, &ys = y->type.shape;
  if (as.size() != 2 || b->type.rank() != 2 || ys.size() != 2)
    unsupported("Gemm operands must be 2-D");
  const int64_t M = ys[0], N = ys[1], K = transA ? as[0] : as[1];
  int64_t cStrideM = 0, cStrideN = 0;
  if (c) {
    requireFloat(c);
    Shape cs = c->type.shape;
    while (cs.size() < 2)
      cs.insert(cs.begin(), 1);
    if (cs.size() != 2 || (cs[0] != 1 && cs[0] != M) || (cs[1] != 1 && cs[1] != N))
      unsupported("C of shape " + shapeToString(c->type.shape) + " does not broadcast to " +
                  shapeToString(ys));
    cStrideM = cs[0] == 1 ? 0 : cs[1];
    cStrideN = cs[1] == 1 ? 0 : 1;
  }
  const Activation act = fusedActivation(node);
  call("bf_gemm_f32", {address(a), address(b), address(c), address(y), i32(M), i32(N), i32(K),
                       i32(transA), i32(transB), f32(node.attrs.getFloat("alpha", 1.0f)),
                       f32(node.attrs.getFloat("beta", 1.0f)), i32(cStrideM), i32(cStrideN),
                       i32(act.kind), f32(act.a), f32(act.b)});
}

void Lowering::lowerMatMul(const Node &node) {
  const Value *a = in(node, 0), *b = in(node, 1), *y = node.output(0);
  requireFloat(a), requireFloat(b), requireFloat(y);
  Shape as = a->type.shape, bs = b->type.shape;
  if (as.empty() || bs.empty())
    unsupported("scalar operand");
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K)
    unsupported("inner dimensions differ");
  // Broadcast the batch dimensions.
  Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(aBatch.size(), bBatch.size());
  aBatch.insert(aBatch.begin(), rank - aBatch.size(), 1);
  bBatch.insert(bBatch.begin(), rank - bBatch.size(), 1);
  Shape batch(rank);
  for (size_t d = 0; d < rank; ++d)
    batch[d] = std::max(aBatch[d], bBatch[d]);
  const int64_t count = product(batch, 0, rank);
  const Ints aStride = denseStrides(aBatch), bStride = denseStrides(bBatch);
  std::vector<int64_t> aOff(count), bOff(count);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, ao = 0, bo = 0;
    for (int d = int(rank) - 1; d >= 0; --d) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      ao += (aBatch[d] == 1 ? 0 : idx) * aStride[d];
      bo += (bBatch[d] == 1 ? 0 : idx) * bStride[d];
    }
    aOff[i] = ao * M * K;
    bOff[i] = bo * K * N;
  }
  bool linear = true;
  for (int64_t i = 0; i < count && linear; ++i)
    linear = aOff[i] == i * (count > 1 ? aOff[1] : 0) && bOff[i] == i * (count > 1 ? bOff[1] : 0);
  const Activation act = fusedActivation(node);
  if (linear) {
    call("bf_matmul_f32", {address(a), address(b), address(y), i32(count), i32(M), i32(K), i32(N),
                           i32(count > 1 ? aOff[1] : 0), i32(count > 1 ? bOff[1] : 0),
                           i32(act.kind), f32(act.a), f32(act.b)});
    return;
  }
  for (int64_t i = 0; i < count; ++i)
    call("bf_matmul_f32",
         {address(a, aOff[i] * 4), address(b, bOff[i] * 4), address(y, i * M * N * 4), i32(1),
          i32(M), i32(K), i32(N), i32(0), i32(0), i32(act.kind), f32(act.a), f32(act.b)});
}

void Lowering::lowerBatchNorm(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  requireFloat(x), requireFloat(y);
  for (size_t i = 1; i < 5; ++i)
    requireFloat(in(node, i));
  const Shape &s = x->type.shape;
  if (s.size() < 2)
    unsupported("input rank below 2");
  call("bf_batchnorm_f32",
       {address(x), address(y), i32(s[0]), i32(s[1]), i32(product(s, 2, s.size())),
        address(in(node, 1)), address(in(node, 2)), address(in(node, 3)), address(in(node, 4)),
        f32(node.attrs.getFloat("epsilon", 1e-5f))});
}

void Lowering::lowerSoftmax(const Node &node, bool logarithm) {
  const Value *x = in(node, 0), *y = node.output(0);
  requireFloat(x), requireFloat(y);
  const SoftmaxExtents e = softmaxExtents(node, x->type.shape);
  call(logarithm ? "bf_logsoftmax_f32" : "bf_softmax_f32",
       {address(x), address(y), i32(e.outer), i32(e.len), i32(e.inner)});
}

void Lowering::lowerBinary(const Node &node, const std::string &floatKernel, int32_t op) {
  const Value *y = node.output(0);
  // float32 has one kernel per operator; integers one kernel per type that
  // takes the operator as a (constant) argument. All operands share y's type.
  const DType dtype = y->type.dtype;
  const char *suffix = intKernelSuffix(dtype);
  if (dtype != DType::Float32 && (!suffix || op == BF_OP_PRELU))
    requireFloat(y);
  const std::string kernel =
      dtype == DType::Float32 ? floatKernel : std::string("bf_binary_") + suffix;
  const Shape &out = y->type.shape;
  auto stridesFor = [&](const Value *v) {
    requireDType(v, dtype);
    return broadcastStrides(v, out);
  };
  auto emit = [&](const Value *a, llvm::Value *aPtr, Ints aStrides, const Value *b) {
    LoopNest nest{out, {std::move(aStrides), stridesFor(b)}};
    nest.simplify();
    std::vector<llvm::Value *> args = {aPtr,
                                       address(b),
                                       address(y),
                                       intTable(padFront(nest.dims, 1, node)),
                                       intTable(padFront(nest.strides[0], 0, node)),
                                       intTable(padFront(nest.strides[1], 0, node))};
    if (dtype != DType::Float32)
      args.push_back(i32(op));
    call(kernel, args);
  };
  if (node.inputs.size() < 2) {
    if (node.inputs.size() == 1) // Variadic Max/Min/Sum of one tensor: a copy.
      call("bf_copy_bytes", {address(in(node, 0)), address(y), i32(int64_t(y->type.bytes()))});
    return;
  }
  emit(in(node, 0), address(in(node, 0)), stridesFor(in(node, 0)), in(node, 1));
  // Variadic Max/Min/Sum: fold the rest into the (dense) output in place.
  for (size_t i = 2; i < node.inputs.size(); ++i)
    emit(y, address(y), denseStrides(out), in(node, i));
}

void Lowering::lowerClip(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  const Value *lo = node.input(1), *hi = node.input(2);
  auto isConstantOrAbsent = [](const Value *v) { return !v || v->isConstant(); };
  const DType dtype = y->type.dtype;
  if (dtype == DType::Float32 && isConstantOrAbsent(lo) && isConstantOrAbsent(hi)) {
    // The common case: bounds folded into the call as immediates.
    auto bound = [&](const Value *v, float fallback) {
      return v && v->type.numElements() > 0 ? float(v->elementAsDouble(0)) : fallback;
    };
    return lowerUnary(node, "bf_clip_f32", bound(lo, -FLT_MAX), bound(hi, FLT_MAX));
  }
  // Runtime bounds or an integer type: the kernel reads the bounds through
  // pointers (a constant bound becomes a private global; NULL = no bound).
  const char *suffix = dtype == DType::Float32 ? "f32" : intKernelSuffix(dtype);
  if (!suffix)
    requireFloat(y);
  requireDType(x, dtype);
  auto boundPtr = [&](const Value *v) -> llvm::Value * {
    if (!v || v->type.numElements() == 0)
      return nullPtr();
    requireDType(v, dtype);
    return v->isConstant() ? scalarGlobal(v) : address(v);
  };
  call(std::string("bf_clip_bounds_") + suffix,
       {address(x), address(y), i32(y->type.numElements()), boundPtr(lo), boundPtr(hi)});
}

void Lowering::lowerUnary(const Node &node, const std::string &kernel, float a, float b) {
  const Value *x = in(node, 0), *y = node.output(0);
  requireFloat(x), requireFloat(y);
  call(kernel, {address(x), address(y), i32(y->type.numElements()), f32(a), f32(b)});
}

void Lowering::lowerUnaryMath(const Node &node, const UnaryMathOp &op) {
  const Value *x = in(node, 0), *y = node.output(0);
  requireFloat(x), requireFloat(y);
  float a, b;
  unaryMathParams(op, node, a, b);
  call("bf_unary_f32",
       {address(x), address(y), i32(y->type.numElements()), i32(op.code), f32(a), f32(b)});
}

void Lowering::lowerCast(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  const DType from = x->type.dtype, to = y->type.dtype;
  const int64_t n = y->type.numElements();
  if (from == to) {
    call("bf_copy_bytes", {address(x), address(y), i32(int64_t(y->type.bytes()))});
    return;
  }
  std::string kernel;
  if (to == DType::Float32) {
    if (from == DType::Int64)
      kernel = "bf_cast_i64_f32";
    if (from == DType::Int32)
      kernel = "bf_cast_i32_f32";
    if (from == DType::Int8)
      kernel = "bf_cast_i8_f32";
    if (from == DType::UInt8 || from == DType::Bool)
      kernel = "bf_cast_u8_f32";
  } else if (from == DType::Float32) {
    if (to == DType::Int32)
      kernel = "bf_cast_f32_i32";
    if (to == DType::Int64)
      kernel = "bf_cast_f32_i64";
  }
  if (kernel.empty())
    unsupported(std::string("Cast from ") + dtypeName(from) + " to " + dtypeName(to));
  call(kernel, {address(x), address(y), i32(n)});
}

void Lowering::lowerTranspose(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  const Shape &s = x->type.shape;
  const size_t rank = s.size();
  Ints perm = node.attrs.getInts("perm");
  if (perm.empty())
    for (size_t d = 0; d < rank; ++d)
      perm.push_back(int64_t(rank - 1 - d));
  if (perm.size() != rank)
    unsupported("perm does not match the rank");
  const Ints inStrides = denseStrides(s);
  LoopNest nest;
  nest.dims = y->type.shape;
  nest.strides = {Ints(rank), denseStrides(y->type.shape)};
  for (size_t d = 0; d < rank; ++d)
    nest.strides[0][d] = inStrides[perm[d] < 0 ? perm[d] + rank : perm[d]];
  stridedCopy(address(x), address(y), nest, dtypeSize(y->type.dtype));
}

/// Beyond this many inputs a Concat copies by table (bf_concat_table), and
/// beyond this many outputs a Split (bf_split_table): one specialised copy
/// per piece made a 5,000-input Concat one function of 5,000 loops, whose
/// machine scheduling alone is quadratic (34 s).
constexpr size_t kMaxSpecialisedPieces = 16;

/// Appends a copy table's piece for `x` (region, byte offset, bytes per row
/// from `axis` on); false when the offset or row does not fit its int32
/// entry or `x` has no placement. An empty tensor adds nothing.
bool appendPiece(const Value *x, int64_t axis, const MemoryPlan &plan,
                 std::vector<int32_t> &pieces) {
  if (x->type.numElements() == 0)
    return true;
  auto where = plan.placements.find(x);
  if (where == plan.placements.end())
    return false;
  const int64_t rowBytes = product(x->type.shape, size_t(axis), x->type.shape.size()) *
                           int64_t(dtypeSize(x->type.dtype));
  if (where->second.offset > uint64_t(INT32_MAX) || rowBytes > INT32_MAX)
    return false;
  pieces.insert(pieces.end(),
                {int32_t(where->second.region), int32_t(where->second.offset), int32_t(rowBytes)});
  return true;
}

/// bf_concat_table's pieces for `node`, or nothing when one does not fit.
std::optional<std::vector<int32_t>> concatPieces(const Node &node, int64_t axis,
                                                 const MemoryPlan &plan) {
  std::vector<int32_t> pieces;
  for (const Value *x : node.inputs)
    if (x && !appendPiece(x, axis, plan, pieces))
      return std::nullopt;
  return pieces;
}

/// bf_split_table's pieces for `node`: an output nobody reads has no
/// placement and becomes a skip (region -1) of its row bytes. Nothing when
/// a piece does not fit, or an output would be written to the constants.
std::optional<std::vector<int32_t>> splitPieces(const Node &node, int64_t axis,
                                                const MemoryPlan &plan) {
  std::vector<int32_t> pieces;
  for (const Value *y : node.outputs) {
    if (!y || y->type.numElements() == 0)
      continue;
    if (!plan.placements.count(y)) {
      const int64_t rowBytes = product(y->type.shape, size_t(axis), y->type.shape.size()) *
                               int64_t(dtypeSize(y->type.dtype));
      if (rowBytes > INT32_MAX)
        return std::nullopt;
      pieces.insert(pieces.end(), {-1, 0, int32_t(rowBytes)});
      continue;
    }
    if (!appendPiece(y, axis, plan, pieces) || pieces[pieces.size() - 3] == 0)
      return std::nullopt;
  }
  return pieces;
}

void Lowering::lowerConcat(const Node &node) {
  const Value *y = node.output(0);
  const Shape &out = y->type.shape;
  int64_t axis = node.attrs.getInt("axis", 0);
  if (axis < 0)
    axis += int64_t(out.size());
  // The table addresses constants from constantWeight: not with split weights.
  const bool constantInSegment = plan_.weightSegments.size() > 1 &&
                                 std::any_of(node.inputs.begin(), node.inputs.end(),
                                             [](const Value *x) { return x && x->isConstant(); });
  if (node.inputs.size() > kMaxSpecialisedPieces && y->type.numElements() > 0 && !constantInSegment)
    if (auto pieces = concatPieces(node, axis, plan_)) {
      call("bf_concat_table",
           {bases_[0], bases_[1], bases_[2], address(y), i32(product(out, 0, size_t(axis))),
            i32(int64_t(pieces->size() / 3)), intTable(*pieces)});
      return;
    }
  const Ints outStrides = denseStrides(out);
  const size_t elem = dtypeSize(y->type.dtype);
  int64_t offset = 0;
  for (const Value *x : node.inputs) {
    if (!x)
      continue;
    if (x->type.numElements() > 0) {
      LoopNest nest{x->type.shape, {denseStrides(x->type.shape), outStrides}};
      stridedCopy(address(x), address(y, offset * outStrides[axis] * int64_t(elem)), nest, elem);
    }
    offset += x->type.shape[axis];
  }
}

void Lowering::lowerSplit(const Node &node) {
  const Value *x = in(node, 0);
  const Shape &s = x->type.shape;
  int64_t axis = node.attrs.getInt("axis", 0);
  if (axis < 0)
    axis += int64_t(s.size());
  // Many outputs: one table-driven copy, as for a wide Concat.
  if (node.outputs.size() > kMaxSpecialisedPieces && x->type.numElements() > 0)
    if (auto pieces = splitPieces(node, axis, plan_)) {
      call("bf_split_table", {address(x), bases_[1], bases_[2], i32(product(s, 0, size_t(axis))),
                              i32(int64_t(pieces->size() / 3)), intTable(*pieces)});
      return;
    }
  const Ints inStrides = denseStrides(s);
  const size_t elem = dtypeSize(x->type.dtype);
  int64_t offset = 0;
  for (const Value *y : node.outputs) {
    if (!y)
      continue;
    if (y->type.numElements() > 0 && plan_.placements.count(y)) {
      LoopNest nest{y->type.shape, {inStrides, denseStrides(y->type.shape)}};
      stridedCopy(address(x, offset * inStrides[axis] * int64_t(elem)), address(y), nest, elem);
    }
    offset += y->type.shape[axis];
  }
}

void Lowering::lowerSlice(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  const Shape &s = x->type.shape;
  const int64_t rank = int64_t(s.size());
  Ints starts = constantInts(node, 1, "starts"), ends = constantInts(node, 2, "ends");
  Ints axes = constantInts(node, 3, "axes"), steps = constantInts(node, 4, "steps");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(int64_t(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  Ints begin(rank, 0), step(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    const int64_t dim = s[axis], st = steps[i];
    if (st == 0)
      unsupported("step 0");
    int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i];
    b = st > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, 0, dim - 1);
    begin[axis] = b;
    // A step longer than the dim takes one element: clamping it keeps that
    // element and keeps inStrides * step below overflow (steps come from the file).
    step[axis] = std::clamp<int64_t>(st, -dim, dim);
  }
  const Ints inStrides = denseStrides(s);
  LoopNest nest{y->type.shape, {Ints(rank), denseStrides(y->type.shape)}};
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    nest.strides[0][d] = inStrides[d] * step[d];
    offset += begin[d] * inStrides[d];
  }
  if (y->type.numElements() == 0)
    return;
  const size_t elem = dtypeSize(y->type.dtype);
  stridedCopy(address(x, offset * int64_t(elem)), address(y), nest, elem);
}

void Lowering::lowerPad(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  requireDType(x, y->type.dtype);
  const int64_t rank = int64_t(x->type.rank());
  Ints pads = constantInts(node, 1, "pads");
  if (pads.empty())
    pads = node.attrs.getInts("pads");
  Ints axes = constantInts(node, 3, "axes");
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  if (pads.size() != 2 * axes.size())
    unsupported("pads has " + std::to_string(pads.size()) + " values for " +
                std::to_string(axes.size()) + " axes");
  Ints begin(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (pads[i] < 0 || pads[i + axes.size()] < 0)
      unsupported("negative pads");
    begin[axis] = pads[i];
  }
  // Pad only moves elements: one kernel per element size, and the fill value
  // is passed as the bit pattern of y's type (as the interpreter copies the
  // constant_value bytes; the float attribute 'value' only applies to float).
  const DType dtype = y->type.dtype;
  const bool isFloat = dtype == DType::Float32;
  float value = 0.0f;
  int64_t intValue = 0;
  if (const Value *v = node.input(2)) {
    if (!v->isConstant())
      unsupported("constant_value must be a constant");
    requireDType(v, dtype);
    if (v->type.numElements() > 0) {
      if (isFloat)
        value = float(v->elementAsDouble(0));
      else
        intValue = v->toInts().at(0);
    }
  } else if (isFloat) {
    value = node.attrs.getFloat("value", 0.0f);
  }
  const std::string mode = node.attrs.getString("mode", "constant");
  int32_t modeId = mode == "constant"  ? BF_PAD_CONSTANT
                   : mode == "reflect" ? BF_PAD_REFLECT
                   : mode == "edge"    ? BF_PAD_EDGE
                                       : -1;
  if (modeId < 0)
    unsupported("pad mode '" + mode + "'");
  const size_t elem = dtypeSize(dtype);
  llvm::Value *fill = nullptr;
  const char *kernel = nullptr;
  if (isFloat) {
    kernel = "bf_pad_f32", fill = f32(value);
  } else if (elem == 1) {
    kernel = "bf_pad_u8", fill = builder_.getInt8(uint8_t(intValue));
  } else if (elem == 4) {
    kernel = "bf_pad_u32", fill = builder_.getInt32(uint32_t(intValue));
  } else if (elem == 8) {
    kernel = "bf_pad_u64", fill = builder_.getInt64(uint64_t(intValue));
  } else {
    unsupported("no pad kernel for " + std::to_string(elem) + "-byte elements");
  }
  call(kernel, {address(x), address(y), intTable(padFront(x->type.shape, 1, node)),
                intTable(padFront(y->type.shape, 1, node)), intTable(padFront(begin, 0, node)),
                i32(modeId), fill});
}

void Lowering::lowerReduce(const Node &node, int32_t op) {
  const Value *x = in(node, 0), *y = node.output(0);
  requireFloat(x), requireFloat(y);
  const Shape &s = x->type.shape;
  const int64_t rank = int64_t(s.size());
  Ints axes = node.attrs.getInts("axes");
  if (axes.empty())
    axes = constantInts(node, 1, "axes");
  if (axes.empty()) {
    if (node.attrs.getInt("noop_with_empty_axes", 0)) {
      call("bf_copy_bytes", {address(x), address(y), i32(int64_t(y->type.bytes()))});
      return;
    }
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  Shape kept = s;
  for (int64_t a : axes)
    kept[a < 0 ? a + rank : a] = 1;
  Ints outStrides = denseStrides(kept);
  for (int64_t d = 0; d < rank; ++d)
    if (kept[d] == 1)
      outStrides[d] = 0;
  LoopNest nest{s, {denseStrides(s), outStrides}};
  nest.simplify();
  const int64_t outCount = y->type.numElements();
  // ReduceMean is a sum scaled by the reduced count.
  const double scale = current_->opType == "ReduceMean"
                           ? double(outCount) / double(std::max<int64_t>(1, x->type.numElements()))
                           : 1.0;
  call("bf_reduce_f32",
       {address(x), address(y), intTable(padFront(nest.dims, 1, node)),
        intTable(padFront(nest.strides[1], 0, node)), i32(outCount), i32(op), f32(scale)});
}

Ints Lowering::broadcastStrides(const Value *v, const Shape &out) {
  const size_t rank = out.size();
  Shape s = v->type.shape;
  if (s.size() > rank)
    unsupported(v->name + " has a higher rank than the output");
  s.insert(s.begin(), rank - s.size(), 1);
  Ints strides = denseStrides(s);
  for (size_t d = 0; d < rank; ++d) {
    if (s[d] == 1 && out[d] != 1)
      strides[d] = 0;
    else if (s[d] != out[d])
      unsupported(v->name + " " + shapeToString(v->type.shape) + " does not broadcast to " +
                  shapeToString(out));
  }
  return strides;
}

const char *Lowering::sizeSuffix(const Value *v) {
  switch (dtypeSize(v->type.dtype)) {
  case 1:
    return "u8";
  case 4:
    return "u32";
  case 8:
    return "u64";
  }
  unsupported("no kernel for " + std::to_string(dtypeSize(v->type.dtype)) + "-byte elements");
}

void Lowering::lowerMean(const Node &node) {
  const Value *y = node.output(0);
  requireFloat(y);
  lowerBinary(node, "bf_add_f32", BF_OP_ADD);
  call("bf_unary_f32", {address(y), address(y), i32(y->type.numElements()), i32(BF_UNARY_SCALE),
                        f32(1.0 / double(node.inputs.size())), f32(0)});
}

void Lowering::lowerCompare(const Node &node, int32_t op) {
  const Value *a = in(node, 0), *b = in(node, 1), *y = node.output(0);
  const DType dtype = a->type.dtype;
  requireDType(b, dtype);
  const char *suffix = dtype == DType::Float32 ? "f32"
                       : dtype == DType::Bool  ? "u8"
                                               : intKernelSuffix(dtype);
  if (!suffix)
    unsupported(std::string("no comparison kernel for ") + dtypeName(dtype));
  const Shape &out = y->type.shape;
  LoopNest nest{out, {broadcastStrides(a, out), broadcastStrides(b, out)}};
  nest.simplify();
  call(std::string("bf_compare_") + suffix,
       {address(a), address(b), address(y), intTable(padFront(nest.dims, 1, node)),
        intTable(padFront(nest.strides[0], 0, node)), intTable(padFront(nest.strides[1], 0, node)),
        i32(op)});
}

void Lowering::lowerLogical(const Node &node) {
  const Value *a = in(node, 0), *y = node.output(0);
  if (node.opType == "Not") {
    call("bf_not_u8", {address(a), address(y), i32(y->type.numElements())});
    return;
  }
  const Value *b = in(node, 1);
  const int32_t op = node.opType == "And"  ? BF_LOGIC_AND
                     : node.opType == "Or" ? BF_LOGIC_OR
                                           : BF_LOGIC_XOR;
  const Shape &out = y->type.shape;
  LoopNest nest{out, {broadcastStrides(a, out), broadcastStrides(b, out)}};
  nest.simplify();
  call("bf_logical_u8", {address(a), address(b), address(y), intTable(padFront(nest.dims, 1, node)),
                         intTable(padFront(nest.strides[0], 0, node)),
                         intTable(padFront(nest.strides[1], 0, node)), i32(op)});
}

void Lowering::lowerWhere(const Node &node) {
  const Value *c = in(node, 0), *a = in(node, 1), *b = in(node, 2), *y = node.output(0);
  const Shape &out = y->type.shape;
  LoopNest nest{out,
                {broadcastStrides(c, out), broadcastStrides(a, out), broadcastStrides(b, out)}};
  nest.simplify();
  call(std::string("bf_where_") + sizeSuffix(y),
       {address(c), address(a), address(b), address(y), intTable(padFront(nest.dims, 1, node)),
        intTable(padFront(nest.strides[0], 0, node)), intTable(padFront(nest.strides[1], 0, node)),
        intTable(padFront(nest.strides[2], 0, node))});
}

/// outer x n x inner around `axis` of `shape`.
static void splitAround(const Shape &shape, int64_t axis, int64_t &outer, int64_t &n,
                        int64_t &inner) {
  const int64_t rank = int64_t(shape.size());
  if (axis < 0)
    axis += rank;
  outer = product(shape, 0, size_t(axis));
  n = shape[size_t(axis)];
  inner = product(shape, size_t(axis) + 1, shape.size());
}

void Lowering::lowerArgMax(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  requireFloat(x);
  int64_t outer, n, inner;
  splitAround(x->type.shape, node.attrs.getInt("axis", 0), outer, n, inner);
  call("bf_argmax_f32",
       {address(x), address(y), i32(outer), i32(n), i32(inner), i32(node.opType == "ArgMin"),
        i32(node.attrs.getInt("select_last_index", 0) != 0)});
}

void Lowering::lowerHardmax(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  requireFloat(x);
  int64_t outer, n, inner;
  splitAround(x->type.shape, node.attrs.getInt("axis", -1), outer, n, inner);
  if (node.attrs.getInt("coerce_to_2d", 0) != 0) // opset < 13: over dims [axis, rank)
    n *= inner, inner = 1;
  call("bf_hardmax_f32", {address(x), address(y), i32(outer), i32(n), i32(inner)});
}

void Lowering::lowerExpand(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  const Shape &out = y->type.shape;
  stridedCopy(address(x), address(y), LoopNest{out, {broadcastStrides(x, out), denseStrides(out)}},
              dtypeSize(y->type.dtype));
}

void Lowering::lowerTile(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  const Shape &is = x->type.shape, &os = y->type.shape;
  const Ints inStrides = denseStrides(is), outStrides = denseStrides(os);
  // Output coordinate d = r * is[d] + i: a (repeat, index) pair of loops.
  LoopNest nest;
  nest.strides.resize(2);
  for (size_t d = 0; d < is.size(); ++d) {
    const int64_t repeats = is[d] == 0 ? 0 : os[d] / is[d];
    nest.dims.insert(nest.dims.end(), {repeats, is[d]});
    nest.strides[0].insert(nest.strides[0].end(), {0, inStrides[d]});
    nest.strides[1].insert(nest.strides[1].end(), {is[d] * outStrides[d], outStrides[d]});
  }
  if (y->type.numElements() == 0)
    return;
  stridedCopy(address(x), address(y), nest, dtypeSize(y->type.dtype));
}

void Lowering::lowerSpaceDepth(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  const Shape &is = x->type.shape, &os = y->type.shape;
  const int64_t b = node.attrs.getInt("blocksize", 1);
  LoopNest nest;
  if (node.opType == "DepthToSpace") {
    // Output loops (n, c, h, bh, w, bw) read channel (bh*b + bw)*C' + c (DCR)
    // or c*b*b + bh*b + bw (CRD) at (h, w).
    const int64_t C = os[1], H = is[2], W = is[3], plane = H * W;
    const bool crd = node.attrs.getString("mode", "DCR") == "CRD";
    nest.dims = {os[0], C, H, b, W, b};
    nest.strides = {{is[1] * plane, crd ? b * b * plane : plane, W, crd ? b * plane : b * C * plane,
                     1, crd ? plane : C * plane},
                    {C * H * b * W * b, H * b * W * b, b * W * b, W * b, b, 1}};
  } else {
    // Output loops (n, bh, bw, c, h, w) read (c, h*b + bh, w*b + bw).
    const int64_t C = is[1], H = is[2], W = is[3], OH = os[2], OW = os[3];
    nest.dims = {os[0], b, b, C, OH, OW};
    nest.strides = {{C * H * W, W, 1, H * W, b * W, b},
                    {os[1] * OH * OW, b * C * OH * OW, C * OH * OW, OH * OW, OW, 1}};
  }
  stridedCopy(address(x), address(y), nest, dtypeSize(y->type.dtype));
}

void Lowering::lowerTrilu(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  const Shape &s = x->type.shape;
  const Ints k = constantInts(node, 1, "k");
  const int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
  // k beyond the matrix keeps everything or nothing: clamp into int32.
  const int64_t diagonal =
      k.empty() ? 0 : std::max<int64_t>(-cols - rows, std::min(k[0], cols + rows));
  call(std::string("bf_trilu_") + sizeSuffix(y),
       {address(x), address(y), i32(product(s, 0, s.size() - 2)), i32(rows), i32(cols),
        i32(diagonal), i32(node.attrs.getInt("upper", 1) != 0)});
}

void Lowering::lowerLayerNorm(const Node &node) {
  const Value *x = in(node, 0), *scale = in(node, 1), *y = node.output(0);
  requireFloat(x), requireFloat(y);
  const Shape &s = x->type.shape;
  int64_t axis = node.attrs.getInt("axis", -1);
  if (axis < 0)
    axis += int64_t(s.size());
  const int64_t inner = product(s, size_t(axis), s.size());
  const int64_t outer = inner == 0 ? 0 : x->type.numElements() / inner;
  auto optionalOutput = [&](size_t i) {
    const Value *v = node.output(i);
    return v && !v->name.empty() && plan_.placements.count(v) ? address(v) : nullPtr();
  };
  call("bf_layernorm_f32",
       {address(x), address(scale), address(node.input(2)), address(y), optionalOutput(1),
        optionalOutput(2), i32(outer), i32(inner), f32(node.attrs.getFloat("epsilon", 1e-5f))});
}

std::string Lowering::indexSuffix(const Value *indices) {
  switch (indices->type.dtype) {
  case DType::Int32:
    return "i32";
  case DType::Int64:
    return "i64";
  case DType::Float32:
    return "f32";
  default:
    unsupported("indices '" + indices->name + "' are " + indices->type.str());
  }
}

void Lowering::lowerGatherElements(const Node &node, bool scatter) {
  const Value *data = in(node, 0), *indices = in(node, 1), *y = node.output(0);
  const Shape &ds = data->type.shape, &is = indices->type.shape;
  int64_t axis = node.attrs.getInt("axis", 0);
  if (axis < 0)
    axis += int64_t(ds.size());
  const int64_t outer = product(ds, 0, size_t(axis)),
                inner = product(ds, size_t(axis) + 1, ds.size());
  const int64_t elemSize = int64_t(dtypeSize(y->type.dtype));
  const std::string suffix = indexSuffix(indices);
  if (!scatter) {
    call("bf_gather_elements_" + suffix,
         {address(data), address(indices), address(y), i32(outer), i32(ds[size_t(axis)]),
          i32(is[size_t(axis)]), i32(inner), i32(elemSize)});
    return;
  }
  const std::string mode = node.attrs.getString("reduction", "none");
  const int32_t reduction = mode == "add"   ? BF_SCATTER_ADD
                            : mode == "mul" ? BF_SCATTER_MUL
                                            : BF_SCATTER_NONE;
  if (reduction != BF_SCATTER_NONE)
    requireFloat(y);
  const Placement &from = placement(data), &to = placement(y);
  if (from.region != to.region || from.offset != to.offset)
    call("bf_copy_bytes", {address(data), address(y), i32(int64_t(y->type.bytes()))});
  call("bf_scatter_elements_" + suffix,
       {address(y), address(indices), address(in(node, 2)), i32(outer), i32(ds[size_t(axis)]),
        i32(is[size_t(axis)]), i32(inner), i32(elemSize), i32(reduction)});
}

void Lowering::lowerGatherND(const Node &node) {
  const Value *data = in(node, 0), *indices = in(node, 1), *y = node.output(0);
  const Shape &ds = data->type.shape, &is = indices->type.shape;
  const int64_t b = node.attrs.getInt("batch_dims", 0), k = is.back();
  const Ints strides = denseStrides(ds);
  const int64_t batches = product(is, 0, size_t(b));
  const int64_t tuples = k == 0 || batches == 0 ? 0 : indices->type.numElements() / k / batches;
  call("bf_gather_nd_" + indexSuffix(indices),
       {address(data), address(indices), address(y), i32(batches), i32(tuples), i32(k),
        intTable(Ints(ds.begin() + b, ds.begin() + b + k)),
        intTable(Ints(strides.begin() + b, strides.begin() + b + k)),
        i32(product(ds, size_t(b), ds.size())), i32(product(ds, size_t(b + k), ds.size())),
        i32(int64_t(dtypeSize(y->type.dtype)))});
}

void Lowering::lowerOneHot(const Node &node) {
  const Value *indices = in(node, 0), *y = node.output(0);
  const Shape &os = y->type.shape;
  int64_t axis = node.attrs.getInt("axis", -1);
  if (axis < 0)
    axis += int64_t(os.size());
  call("bf_one_hot_" + indexSuffix(indices),
       {address(indices), address(in(node, 2)), address(y), i32(product(os, 0, size_t(axis))),
        i32(os[size_t(axis)]), i32(product(os, size_t(axis) + 1, os.size())),
        i32(int64_t(dtypeSize(y->type.dtype)))});
}

void Lowering::lowerFloatTest(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  requireFloat(x);
  if (node.opType == "IsNaN") {
    call("bf_isnan_f32", {address(x), address(y), i32(y->type.numElements())});
    return;
  }
  call("bf_isinf_f32", {address(x), address(y), i32(y->type.numElements()),
                        i32(node.attrs.getInt("detect_negative", 1) != 0),
                        i32(node.attrs.getInt("detect_positive", 1) != 0)});
}

void Lowering::lowerInstanceNorm(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  requireFloat(x), requireFloat(y);
  const Shape &s = x->type.shape;
  call("bf_instancenorm_f32",
       {address(x), address(in(node, 1)), address(in(node, 2)), address(y), i32(s[0]), i32(s[1]),
        i32(product(s, 2, s.size())), f32(node.attrs.getFloat("epsilon", 1e-5f))});
}

void Lowering::lowerResize(const Node &node) {
  const Value *x = in(node, 0), *y = node.output(0);
  requireFloat(x), requireFloat(y);
  const Shape &is = x->type.shape, &os = y->type.shape;
  if (is.size() != 4 || is[0] != os[0] || is[1] != os[1])
    unsupported("only 2-D resizes of NCHW tensors (N and C unchanged)");
  std::vector<float> scales;
  if (const Value *sc = node.input(2)) {
    if (!sc->isConstant())
      unsupported("scales must be a constant");
    scales = sc->toFloats();
  }
  const std::string mode = node.attrs.getString("mode", "nearest");
  const std::string coord = node.attrs.getString("coordinate_transformation_mode", "half_pixel");
  const std::string nearestMode = node.attrs.getString("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear")
    unsupported("resize mode '" + mode + "'");
  // tf_crop_and_resize samples the region of interest (input 1, per axis
  // start fractions then end fractions); N and C must be left whole.
  const bool crop = coord == "tf_crop_and_resize";
  std::vector<float> roi;
  if (crop) {
    const Value *r = node.input(1);
    if (!r || !r->isConstant())
      unsupported("tf_crop_and_resize needs a constant roi");
    roi = r->toFloats();
    if (roi.size() != 8)
      unsupported("tf_crop_and_resize roi must have 8 values (4-D)");
    for (size_t axis = 0; axis < 2; ++axis)
      if (is[axis] != 1 && (roi[axis] != 0.0f || roi[axis + 4] != 1.0f))
        unsupported("tf_crop_and_resize cropping N or C");
  }
  // Source coordinate of output index o along one axis, exactly as
  // src/interp/ResizeKernels.cpp (the ONNX reference): with scales, the
  // "resized length" of align_corners / pytorch_half_pixel is scale * inLen,
  // not the (floored) output length, which differs when downsampling.
  const Value *sizes = node.input(3);
  // Without 4 scales the output shape alone defines the scale (sizes input).
  const bool useSizes = (sizes && sizes->type.rank() > 0) || scales.size() != 4;
  auto source = [&](int64_t o, int64_t inLen, int64_t outLen, size_t axis) {
    const double scale = useSizes ? double(outLen) / double(inLen) : double(scales[axis]);
    const double resizedLen = useSizes ? double(outLen) : scale * double(inLen);
    if (coord == "half_pixel")
      return (o + 0.5) / scale - 0.5;
    if (coord == "pytorch_half_pixel")
      return resizedLen == 1 ? -0.5 : (o + 0.5) / scale - 0.5;
    if (coord == "align_corners")
      return resizedLen == 1 ? 0.0 : double(o) * double(inLen - 1) / (resizedLen - 1);
    if (coord == "asymmetric")
      return o / scale;
    if (coord == "tf_half_pixel_for_nn")
      return (o + 0.5) / scale;
    if (crop) {
      const double start = roi[axis], end = roi[axis + 4];
      const double v = resizedLen == 1
                           ? (end - start) * double(inLen - 1) / 2.0
                           : double(o) * (end - start) * double(inLen - 1) / (resizedLen - 1);
      return v + start * double(inLen - 1);
    }
    unsupported("coordinate_transformation_mode '" + coord + "'");
  };
  auto clampIndex = [](int64_t i, int64_t n) { return int32_t(std::clamp<int64_t>(i, 0, n - 1)); };
  // Nearest picks floor(v) or floor(v) + 1 by the fraction, as the interpreter.
  if (nearestMode != "round_prefer_floor" && nearestMode != "round_prefer_ceil" &&
      nearestMode != "floor" && nearestMode != "ceil")
    unsupported("nearest_mode '" + nearestMode + "'");
  auto nearest = [&](double v) -> int64_t {
    const double f = std::floor(v), ratio = v - f;
    bool up = false;
    if (nearestMode == "round_prefer_ceil")
      up = ratio >= 0.5;
    else if (nearestMode == "ceil")
      up = ratio > 0;
    else if (nearestMode == "round_prefer_floor")
      up = ratio > 0.5;
    return int64_t(f) + (up ? 1 : 0);
  };
  const int64_t NC = is[0] * is[1], IH = is[2], IW = is[3], OH = os[2], OW = os[3];
  // tf_crop_and_resize writes extrapolation_value where the source coordinate
  // falls outside the input. The coordinate is linear in the output index, so
  // the inside outputs of an axis are one interval [begin, end); the resize
  // kernels compute every output (clamped, in bounds) and bf_fill_outside_f32
  // overwrites the rest.
  auto insideInterval = [&](int64_t inLen, int64_t outLen, size_t axis) {
    int32_t begin = 0, end = 0;
    bool seen = false;
    for (int64_t o = 0; o < outLen; ++o) {
      const double v = source(o, inLen, outLen, axis);
      const bool inside = !(v < 0 || v > double(inLen - 1));
      if (inside && !seen)
        begin = int32_t(o), seen = true;
      if (inside && end != 0 && end != o)
        unsupported("tf_crop_and_resize with a non-contiguous region");
      if (inside)
        end = int32_t(o + 1);
    }
    return std::make_pair(begin, end);
  };
  auto fillOutside = [&]() {
    if (!crop)
      return;
    const auto [hBegin, hEnd] = insideInterval(IH, OH, 2);
    const auto [wBegin, wEnd] = insideInterval(IW, OW, 3);
    if (hBegin == 0 && hEnd == OH && wBegin == 0 && wEnd == OW)
      return;
    call("bf_fill_outside_f32",
         {address(y), i32(NC), i32(OH), i32(OW), i32(hBegin), i32(hEnd), i32(wBegin), i32(wEnd),
          f32(node.attrs.getFloat("extrapolation_value", 0.0f))});
  };
  if (mode == "nearest") {
    std::vector<int32_t> hIdx(OH), wIdx(OW);
    for (int64_t o = 0; o < OH; ++o)
      hIdx[o] = clampIndex(nearest(source(o, IH, OH, 2)), IH);
    for (int64_t o = 0; o < OW; ++o)
      wIdx[o] = clampIndex(nearest(source(o, IW, OW, 3)), IW);
    call("bf_resize_nearest_f32", {address(x), address(y), i32(NC), i32(IH), i32(IW), i32(OH),
                                   i32(OW), intTable(hIdx), intTable(wIdx)});
    fillOutside();
    return;
  }
  auto linearTables = [&](int64_t inLen, int64_t outLen, size_t axis, std::vector<int32_t> &i0,
                          std::vector<int32_t> &i1, std::vector<float> &wt) {
    for (int64_t o = 0; o < outLen; ++o) {
      double v = std::clamp(source(o, inLen, outLen, axis), 0.0, double(inLen - 1));
      const int64_t f = int64_t(std::floor(v));
      i0.push_back(clampIndex(f, inLen));
      i1.push_back(clampIndex(f + 1, inLen));
      wt.push_back(float(v - double(f)));
    }
  };
  std::vector<int32_t> h0, h1, w0, w1;
  std::vector<float> hw, ww;
  linearTables(IH, OH, 2, h0, h1, hw);
  linearTables(IW, OW, 3, w0, w1, ww);
  call("bf_resize_linear_f32",
       {address(x), address(y), i32(NC), i32(IH), i32(IW), i32(OH), i32(OW), intTable(h0),
        intTable(h1), floatTable(hw), intTable(w0), intTable(w1), floatTable(ww)});
  fillOutside();
}

void Lowering::lowerGather(const Node &node) {
  const Value *data = in(node, 0), *indices = in(node, 1), *y = node.output(0);
  const Shape &s = data->type.shape;
  int64_t axis = node.attrs.getInt("axis", 0);
  if (axis < 0)
    axis += int64_t(s.size());
  if (axis < 0 || axis >= int64_t(s.size()))
    unsupported("axis out of range");
  const char *kernel = indices->type.dtype == DType::Int64   ? "bf_gather_i64"
                       : indices->type.dtype == DType::Int32 ? "bf_gather_i32"
                                                             : nullptr;
  if (!kernel)
    unsupported("indices must be int32 or int64");
  const int64_t inner = product(s, axis + 1, s.size()) * int64_t(dtypeSize(data->type.dtype));
  call(kernel, {address(data), address(indices), address(y), i32(product(s, 0, axis)), i32(s[axis]),
                i32(inner), i32(indices->type.numElements())});
}

} // namespace

llvm::Function *lowerGraphToEntry(llvm::Module &module, const Graph &graph, const MemoryPlan &plan,
                                  const std::string &name, const LayerCallback &onLayer) {
  return Lowering(module, graph, plan).run(name, onLayer);
}

} // namespace bundlefit
