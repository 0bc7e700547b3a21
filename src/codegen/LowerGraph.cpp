//===- LowerGraph.cpp - Graph + MemoryPlan -> the bundle entry function ----===//
//
// Each scheduled node becomes one call into the kernel bitcode
// (src/kernels/bundlefit_kernels.h documents every signature). Shapes are
// i32 constants, small vectors are private constant globals, and tensor
// addresses are `region base + planned offset`. Nothing here optimises: the
// LLVM pipeline specialises the calls afterwards.
//
// Operators describe their calls as data (OpDef::lower, Int8Def::lower,
// CmsisDef::call: KernelCall.h) and emitKernelCall is the one place that
// turns a call into IR, marking it with what its family said about sharing
// its kernel (CallMarks.h). Gemm and MatMul still have emitters below, until
// their kernels take parameter structs.
//
//===----------------------------------------------------------------------===//
#include "LowerGraph.h"
#include "CallMarks.h"
#include "KernelParamsCheck.h"
#include "LowerInt8.h"
#include "LutFusion.h"
#include "NodeFunctions.h"

#include "bundlefit/ops/Cmsis.h"
#include "bundlefit/ops/FusedActivations.h"
#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/LowerHelpers.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/PatchStage.h"
#include "bundlefit/support/Error.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <climits>
#include <map>
#include <optional>

namespace bundlefit {

namespace {

using namespace lowering; // Ints, LoopNest, product, denseStrides...

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

class Lowering : public PlanView {
public:
  Lowering(llvm::Module &module, const Graph &graph, const MemoryPlan &plan)
      : module_(module), ctx_(module.getContext()), builder_(ctx_), graph_(graph), plan_(plan) {}

  llvm::Function *run(const std::string &name, const LayerCallback &onLayer);
  /// Table activations applied in their convs' stores (LutFusion.h).
  size_t fusedTables() const { return fusedTables_; }

  // PlanView, for the families' float lowerings (OpDef::lower).
  std::optional<Where> placementOf(const Value *value) const override {
    auto tile = tilePlacements_.find(value);
    if (tile != tilePlacements_.end())
      return Where{int(tile->second.region), tile->second.offset};
    auto it = plan_.placements.find(value);
    if (it == plan_.placements.end())
      return std::nullopt;
    return Where{int(it->second.region), it->second.offset};
  }
  bool splitWeights() const override { return plan_.weightSegments.size() > 1; }
  bool outputOnInput(const Node &node) const override {
    if (!node.input(0) || !node.output())
      return false;
    auto x = plan_.placements.find(node.input(0)), y = plan_.placements.find(node.output());
    if (x == plan_.placements.end() || y == plan_.placements.end())
      return false;
    return x->second.region == y->second.region && x->second.offset == y->second.offset &&
           x->second.size > 0 && y->second.size > 0;
  }
  std::optional<uint64_t> scratchBytes(const Node &node) const override {
    if (const Placement *scratch = plan_.scratchOf(&node))
      return scratch->size;
    return std::nullopt;
  }

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
  /// `values` (each in the range of `bits`-bit integers: KernelArg::I8Table,
  /// I16Table) as a private constant array of that width.
  llvm::Value *narrowTable(const std::vector<int32_t> &values, unsigned bits);
  llvm::Value *paramsGlobal(const std::string &cStruct, const std::vector<int32_t> &values);
  /// intTable of int64 values (3-D window vectors), each checked to fit int32.
  llvm::Value *intTable(const Ints &values) {
    return intTable(lowering::intTable(*current_, values).table);
  }
  llvm::Value *floatTable(const std::vector<float> &values);
  /// Address of `value` plus `byteOffset` (nullptr value -> null pointer).
  llvm::Value *address(const Value *value, int64_t byteOffset = 0);
  /// `base of region + offset`; inside the node function being lowered, a
  /// GEP the NodeFunctionPool turns into a parameter.
  llvm::Value *regionAddress(MemoryRegion region, int64_t offset, const llvm::Twine &name = "");
  const Placement &placement(const Value *value);

  llvm::CallInst *call(const std::string &kernel, std::vector<llvm::Value *> args);

  // ---- helpers ---------------------------------------------------------
  [[noreturn]] void unsupported(const std::string &what) {
    throw Error(ExitCode::Unsupported, current_->describe() + ": " + what);
  }
  void requireFloat(const Value *value) { lowering::requireFloat(*current_, value); }
  void requireDType(const Value *value, DType dtype) {
    lowering::requireDType(*current_, value, dtype);
  }
  /// First element of constant `value` as a private global of its dtype.
  llvm::Value *scalarGlobal(const Value *value);
  const Value *in(const Node &node, size_t i) { return input(node, i); }
  void stridedCopy(llvm::Value *src, llvm::Value *dst, LoopNest nest, size_t elemSize);

  // ---- operators -------------------------------------------------------
  void lowerNode(const Node &node);
  void emitKernelCall(const KernelCall &kernelCall); // KernelCall.h
  void appendKernelArg(const KernelArg &arg, std::vector<llvm::Value *> &args);
  void emitInt8Calls(const Node &node);   // LowerInt8.h
  void lowerPatchStage(const Node &node); // ops/PatchStage.h
  void lowerView(const Node &node);

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
  size_t fusedTables_ = 0;
  std::optional<Placement> patchIm2col_;
  /// The node function being lowered and its tensor addresses, in order.
  llvm::Function *nodeFunction_ = nullptr;
  std::vector<llvm::GetElementPtrInst *> nodeAddresses_;
  /// Tile buffers of the PatchStage being lowered (inside its scratch).
  std::map<const Value *, Placement> tilePlacements_;
  std::map<std::vector<int32_t>, llvm::GlobalVariable *> intTables_;
  std::map<std::pair<unsigned, std::vector<int32_t>>, llvm::GlobalVariable *> narrowTables_;
  std::map<std::vector<float>, llvm::GlobalVariable *> floatTables_;
  std::map<std::pair<std::string, std::vector<int32_t>>, llvm::GlobalVariable *> paramsGlobals_;
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

/// A kernel parameter struct (KernelArg::Params) as a private constant of
/// code generation's type of it (kernelParamsType: not the bitcode's, whose
/// names llvm-link merges), so the kernel's field loads fold once inlined,
/// as the integer arguments they replace did.
llvm::Value *Lowering::paramsGlobal(const std::string &cStruct,
                                    const std::vector<int32_t> &values) {
  auto key = std::make_pair(cStruct, values);
  if (auto it = paramsGlobals_.find(key); it != paramsGlobals_.end())
    return it->second;
  llvm::StructType *type = kernelParamsType(module_, cStruct, values.size());
  std::vector<llvm::Constant *> fields;
  for (int32_t v : values)
    fields.push_back(llvm::ConstantInt::get(builder_.getInt32Ty(), uint64_t(uint32_t(v))));
  auto *global = new llvm::GlobalVariable(module_, type, /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage,
                                          llvm::ConstantStruct::get(type, fields), "bf.params");
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  global->setAlignment(llvm::Align(4));
  paramsGlobals_[key] = global;
  return global;
}

llvm::Value *Lowering::narrowTable(const std::vector<int32_t> &values, unsigned bits) {
  auto key = std::make_pair(bits, values);
  auto it = narrowTables_.find(key);
  if (it != narrowTables_.end())
    return it->second;
  llvm::Constant *init; // two's complement
  if (bits == 8) {
    const std::vector<uint8_t> raw(values.begin(), values.end());
    init = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint8_t>(raw));
  } else {
    const std::vector<uint16_t> raw(values.begin(), values.end());
    init = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint16_t>(raw));
  }
  auto *global = new llvm::GlobalVariable(module_, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init, "bf.lut");
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  narrowTables_[key] = global;
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

llvm::CallInst *Lowering::call(const std::string &kernel, std::vector<llvm::Value *> args) {
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
  return builder_.CreateCall(fn, args);
}

void Lowering::stridedCopy(llvm::Value *src, llvm::Value *dst, LoopNest nest, size_t elemSize) {
  StridedCopy c = stridedCopyTables(*current_, std::move(nest), elemSize);
  call(c.kernel, {src, dst, intTable(c.dims.table), intTable(c.srcStrides.table),
                  intTable(c.dstStrides.table)});
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
  if (node.is(Op::PatchStage))
    return lowerPatchStage(node);
  // Quantized: the int8 kernels (LowerInt8.cpp); a CMSIS-NN call (an int16x8 ADD's too).
  if (needsInt8Kernel(node) || node.attrs.has(kCmsisAttribute))
    return emitInt8Calls(node);
  // The families' float lowerings describe their calls (OpDef::lower).
  if (const OpDef *def = OpRegistry::get().find(op); def && def->lower) {
    for (const KernelCall &c : def->lower(node, *this))
      emitKernelCall(c);
    return;
  }
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
    args.push_back(narrowTable(arg.table, 8));
    return;
  case KernelArg::I16Table:
    args.push_back(narrowTable(arg.table, 16));
    return;
  case KernelArg::F32Table:
    args.push_back(floatTable(arg.floats));
    return;
  case KernelArg::Scalar:
    args.push_back(scalarGlobal(arg.value));
    return;
  case KernelArg::Bits:
    args.push_back(builder_.getIntN(arg.bits, uint64_t(arg.i) & (~uint64_t(0) >> (64 - arg.bits))));
    return;
  case KernelArg::RegionBase:
    args.push_back(bases_.at(size_t(arg.i)));
    return;
  case KernelArg::Params:
    args.push_back(paramsGlobal(arg.type, arg.table));
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
  std::vector<unsigned> noAliasArgs; // positions in `args`
  for (const KernelArg &arg : kernelCall.args) {
    if (arg.noAlias)
      noAliasArgs.push_back(unsigned(args.size()));
    appendKernelArg(arg, args);
  }
  if (!kernelCall.external) {
    markCall(*call(kernelCall.kernel, std::move(args)), kernelCall, noAliasArgs);
    return;
  }
  // A library function the user links (CMSIS-NN): declared here, its status
  // ignored (arguments are valid by construction).
  std::vector<llvm::Type *> types;
  for (llvm::Value *arg : args)
    types.push_back(arg->getType());
  llvm::Type *result = kernelCall.returnsVoid ? builder_.getVoidTy() : builder_.getInt32Ty();
  llvm::FunctionCallee fn =
      module_.getOrInsertFunction(kernelCall.kernel, llvm::FunctionType::get(result, types, false));
  markCall(*builder_.CreateCall(fn, args), kernelCall, noAliasArgs);
}

void Lowering::emitInt8Calls(const Node &node) {
  // A table activation fused into its producing conv (LutFusion.h): the conv
  // applies the table at its stores, the activation emits nothing. Not in a
  // patch stage's tiles, which run their steps unfused.
  if (!inPatchTile_ && lutFusedIntoProducer(graph_, *this, node))
    return;
  std::vector<KernelCall> calls = describeInt8Calls(node);
  if (!inPatchTile_)
    if (const Node *activation = fusedLutConsumer(graph_, *this, node)) {
      applyFusedLut(node, *activation, calls);
      ++fusedTables_;
    }
  if (outputOnInput(node)) // --memory-opt: the family's in-place kernels
    if (const OpDef *def = OpRegistry::get().find(node.opType); def && def->int8.lowerInPlace)
      def->int8.lowerInPlace(node, *this, calls);
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

} // namespace

llvm::Function *lowerGraphToEntry(llvm::Module &module, const Graph &graph, const MemoryPlan &plan,
                                  const std::string &name, const LayerCallback &onLayer,
                                  size_t *fusedTables) {
  Lowering lowering(module, graph, plan);
  llvm::Function *entry = lowering.run(name, onLayer);
  if (fusedTables)
    *fusedTables = lowering.fusedTables();
  return entry;
}

} // namespace bundlefit
