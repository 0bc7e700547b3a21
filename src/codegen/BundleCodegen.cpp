//===- BundleCodegen.cpp - Kernel bitcode + entry -> optimised ELF object ---===//
#include "bundlefit/codegen/BundleCodegen.h"

#include "BundleConfig.h"
#include "CallMarks.h"
#include "KernelClasses.h"
#include "KernelParamsCheck.h"
#include "KernelParamsFold.h"
#include "LowerGraph.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>

// Kernel bitcode per target family, embedded by cmake/Kernels.cmake.
#define BUNDLEFIT_KERNEL_FAMILY(family)                                                            \
  extern "C" const char bundlefit_kernels_##family##_begin[];                                      \
  extern "C" const char bundlefit_kernels_##family##_end[];
BUNDLEFIT_KERNEL_FAMILY(x86_64)
BUNDLEFIT_KERNEL_FAMILY(x86_64_avx512)
BUNDLEFIT_KERNEL_FAMILY(aarch64)
BUNDLEFIT_KERNEL_FAMILY(thumbv7em)
BUNDLEFIT_KERNEL_FAMILY(thumbv8m_main)
BUNDLEFIT_KERNEL_FAMILY(thumbv81m_mve)
BUNDLEFIT_KERNEL_FAMILY(thumbv6m)
#undef BUNDLEFIT_KERNEL_FAMILY

namespace bundlefit {
namespace {

void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    LLVMInitializeARMTargetInfo();
    LLVMInitializeARMTarget();
    LLVMInitializeARMTargetMC();
    LLVMInitializeARMAsmPrinter();
  });
}

bool startsWith(const std::string &text, const char *prefix) { return text.rfind(prefix, 0) == 0; }

/// Whether `triple` on the machine's CPU takes the x86_64_avx512 kernels,
/// whose register tiles are 16-float (512-bit) vectors.
bool hasWideTiles(const std::string &triple, const llvm::TargetMachine &machine) {
  return startsWith(triple, "x86_64") && machine.getMCSubtargetInfo()->checkFeatures("+avx512f");
}

/// The embedded bitcode whose target family covers `triple` (and, on x86-64,
/// the CPU: AVX-512 gets the 16-float register tiles).
llvm::StringRef kernelBitcodeFor(const std::string &triple, const llvm::TargetMachine &machine) {
#define FAMILY(family)                                                                             \
  llvm::StringRef(bundlefit_kernels_##family##_begin,                                              \
                  size_t(bundlefit_kernels_##family##_end - bundlefit_kernels_##family##_begin))
  if (startsWith(triple, "x86_64"))
    return hasWideTiles(triple, machine) ? FAMILY(x86_64_avx512) : FAMILY(x86_64);
  if (startsWith(triple, "aarch64") || startsWith(triple, "arm64"))
    return FAMILY(aarch64);
  // The thumbv7em and thumbv8m_main families use the DSP extension (int8
  // SMLAD paths); a Thumb CPU without it (Cortex-M0+, M3, M23) gets the
  // portable thumbv6m bitcode, which the CPU attributes then compile for it.
  // A CPU with Helium (Cortex-M55, M85) takes thumbv81m_mve, whose int8
  // kernels run their dot products and requantization on MVE vectors
  // (int8_mve.h); the float kernels are the same C as everywhere.
  const llvm::MCSubtargetInfo &subtarget = *machine.getMCSubtargetInfo();
  bool thumb = startsWith(triple, "thumb") || startsWith(triple, "arm");
  if (startsWith(triple, "thumbv6m") || startsWith(triple, "armv6m") ||
      (thumb && !subtarget.checkFeatures("+dsp")))
    return FAMILY(thumbv6m);
  if (thumb && subtarget.checkFeatures("+mve"))
    return FAMILY(thumbv81m_mve);
  if (startsWith(triple, "thumbv8m") || startsWith(triple, "armv8m"))
    return FAMILY(thumbv8m_main);
  if (startsWith(triple, "thumb") || startsWith(triple, "arm"))
    return FAMILY(thumbv7em);
#undef FAMILY
  throw Error(ExitCode::Usage, "--triple '" + triple + "' has no kernel library");
}

struct ResolvedCpu {
  std::string cpu, features;
};

ResolvedCpu resolveCpu(const TargetOptions &target) {
  ResolvedCpu out{target.cpu, target.features};
  if (target.cpu == "native") {
    out.cpu = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> hostFeatures;
    std::string features;
    if (llvm::sys::getHostCPUFeatures(hostFeatures))
      for (const auto &feature : hostFeatures)
        features += std::string(features.empty() ? "" : ",") + (feature.second ? "+" : "-") +
                    feature.first().str();
    if (!target.features.empty())
      features += (features.empty() ? "" : ",") + target.features;
    out.features = features;
  }
  return out;
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const TargetOptions &target,
                                                         const ResolvedCpu &cpu) {
  initializeTargets();
  std::string error;
  // Normalised ("thumbv6m-none-eabi" -> "thumbv6m-none-unknown-eabi") so LLVM
  // sees the EABI environment and uses the __aeabi_* runtime names.
  const std::string triple = llvm::Triple::normalize(target.triple);
  const llvm::Target *llvmTarget = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    throw Error(ExitCode::Usage, "--triple '" + target.triple + "': " + error);
  llvm::TargetOptions options;
  options.FloatABIType =
      target.floatAbi == FloatAbi::Hard ? llvm::FloatABI::Hard : llvm::FloatABI::Soft;
  options.FunctionSections = true; // Lets firmware linkers drop unused code (--gc-sections).
  options.DataSections = true;
  const auto reloc =
      target.relocationModel == RelocationModel::Pic ? llvm::Reloc::PIC_ : llvm::Reloc::Static;
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, cpu.cpu, cpu.features, options, reloc, std::nullopt, llvm::CodeGenOpt::Default));
  if (!machine)
    throw Error(ExitCode::Usage,
                "--mcpu '" + target.cpu + "': LLVM cannot target it for " + target.triple);
  // An unknown CPU only warns inside LLVM; reject it here instead.
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(cpu.cpu))
    throw Error(ExitCode::Usage,
                "--mcpu '" + target.cpu + "' is not a CPU LLVM knows for " + target.triple);
  return machine;
}

/// Parses the kernels and makes every function carry the requested CPU.
std::unique_ptr<llvm::Module> loadKernels(llvm::LLVMContext &context, const TargetOptions &target,
                                          const ResolvedCpu &cpu, llvm::TargetMachine &machine) {
  llvm::MemoryBufferRef buffer(kernelBitcodeFor(target.triple, machine), "bundlefit-kernels");
  auto module = llvm::parseBitcodeFile(buffer, context);
  if (!module)
    fatalInternal("cannot parse the embedded kernel bitcode: " +
                  llvm::toString(module.takeError()));
  (*module)->setTargetTriple(machine.getTargetTriple().str());
  // clang records AAPCS's 32-bit enums; the bundle's interface has no enums, so
  // drop the flag (Tag_ABI_enum_size absent) and link cleanly with gcc's
  // -fshort-enums default for arm-none-eabi.
  if (llvm::NamedMDNode *flags = (*module)->getModuleFlagsMetadata()) {
    std::vector<llvm::MDNode *> keep;
    for (llvm::MDNode *flag : flags->operands()) {
      auto *key = flag->getNumOperands() > 1 ? llvm::dyn_cast<llvm::MDString>(flag->getOperand(1))
                                             : nullptr;
      if (!key || key->getString() != "min_enum_size")
        keep.push_back(flag);
    }
    flags->clearOperands();
    for (llvm::MDNode *flag : keep)
      flags->addOperand(flag);
  }
  // llvm-link keeps each kernel file's compiler ident and the object writer
  // puts every one in .comment (27 equal strings, 1.1 KB): keep one of each.
  if (llvm::NamedMDNode *idents = (*module)->getNamedMetadata("llvm.ident")) {
    std::vector<llvm::MDNode *> distinct;
    for (llvm::MDNode *ident : idents->operands())
      if (std::find(distinct.begin(), distinct.end(), ident) == distinct.end())
        distinct.push_back(ident);
    idents->clearOperands();
    for (llvm::MDNode *ident : distinct)
      idents->addOperand(ident);
  }
  (*module)->setDataLayout(machine.createDataLayout());
  checkKernelParamsStructs(**module); // abi.h's structs: bitcode == code generation
  return std::move(*module);
}

/// Past kMaxSpecialisedConvolutions uses, unless shareConvolutionsByShape
/// grouped its calls by shape, O2 keeps one shared generic copy of a
/// convolution kernel; O3 specialises every call.
bool isExpensiveToSpecialize(const llvm::Function &fn) {
  return !fn.hasFnAttribute(kShapesGroupedAttribute) &&
         fn.getNumUses() > kMaxSpecialisedConvolutions && hasCallMarked(fn, CallSharing::ByShape);
}

/// conv.c's weak `bf_size_first` becomes a constant: 1 at Os drops the
/// speed-only convolution paths (code size first), 0 folds the checks away.
void setSizeFirstFlag(llvm::Module &module, CodegenOptLevel level) {
  llvm::GlobalVariable *flag = module.getGlobalVariable("bf_size_first");
  if (!flag)
    return;
  flag->setInitializer(
      llvm::ConstantInt::get(flag->getValueType(), level == CodegenOptLevel::Os ? 1 : 0));
  flag->setConstant(true);
  flag->setLinkage(llvm::GlobalValue::InternalLinkage);
}

void setFunctionAttributes(llvm::Module &module, const TargetOptions &target,
                           const ResolvedCpu &cpu, bool wideTiles, llvm::Function *entry) {
  for (llvm::Function &fn : module) {
    if (fn.isDeclaration())
      continue;
    fn.removeFnAttr("target-cpu");
    fn.removeFnAttr("target-features");
    fn.removeFnAttr("tune-cpu");
    fn.removeFnAttr("no-builtins"); // from -ffreestanding: let loops become memcpy/memset
    // clang's per-triple defaults for the generic bitcode: thumbv7em-none-eabi
    // means "no FPU" there, and frame pointers cost a register on Thumb.
    fn.removeFnAttr("use-soft-float");
    fn.removeFnAttr("frame-pointer");
    fn.addFnAttr("target-cpu", cpu.cpu);
    if (!cpu.features.empty())
      fn.addFnAttr("target-features", cpu.features);
    fn.addFnAttr(llvm::Attribute::NoUnwind);
    // AVX-512 hosts run 512-bit vectors: the tiles' 16-float vectors stay
    // whole zmm registers and the loops LLVM vectorizes use them too. LLVM
    // tunes Ice Lake and Sapphire Rapids servers for 256-bit vectors and may
    // split a wider vector the C source did not pass through an intrinsic
    // into two ymm halves: the zero-padded band tiles (conv_bands.h, which
    // ResNet's 56-, 28-, 14- and 7-wide rows take) ran that way, twice the
    // instructions and the 16 accumulators of the two-vector tile spilled
    // (ResNet-18's 3x3 convolutions at 65-70 GFLOP/s on a Sapphire Rapids
    // core, 125-143 with whole zmm registers). 512-bit vectorized loops,
    // side by side: LeNet 1.5x, EfficientNet-B0 1.18x, MobileNetV3 1.07x
    // faster, the autoencoder (12 us) 0.83x, the others within 5% either way.
    if (wideTiles) {
      fn.addFnAttr("min-legal-vector-width", "512");
      fn.addFnAttr("prefer-vector-width", "512");
    }
    if (target.optLevel == CodegenOptLevel::Os) {
      fn.addFnAttr(llvm::Attribute::OptimizeForSize);
    }
    if (&fn == entry || fn.hasFnAttribute(kEntryAttribute))
      continue;
    // Kernels are private to the bundle: unused ones vanish, used ones can be
    // specialised freely.
    fn.setLinkage(llvm::GlobalValue::InternalLinkage);
    if (target.optLevel == CodegenOptLevel::Os)
      continue;
    if (fn.hasFnAttribute(kNodeFunctionAttribute)) {
      // Speed: each node keeps its own (specialised) function.
      fn.addFnAttr(llvm::Attribute::NoInline);
    } else if (!fn.use_empty() && !fn.hasFnAttribute(llvm::Attribute::NoInline) &&
               (target.optLevel == CodegenOptLevel::O3 || !isExpensiveToSpecialize(fn))) {
      // (Kernel helpers marked noinline in C hold hot loops that need no
      // constant shapes; one shared copy keeps compile time and code small.)
      // Speed: the call is inlined and specialised for its constant shapes.
      fn.removeFnAttr(llvm::Attribute::NoInline);
      fn.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  }
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine, CodegenOptLevel level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  const bool speed = level != CodegenOptLevel::Os;
  tuning.LoopVectorization = speed;
  tuning.SLPVectorization = speed;
  tuning.LoopUnrolling = speed;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(
      level == CodegenOptLevel::Os ? llvm::OptimizationLevel::Os : llvm::OptimizationLevel::O2);
  passes.run(module, mam);
}

/// Optimisation remarks and warnings (e.g. "loop not vectorized" on targets
/// without vector units) are not the user's concern; errors still surface.
void quietDiagnostics(llvm::LLVMContext &context) {
  context.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo &info, void *) {
        if (info.getSeverity() != llvm::DS_Error)
          return;
        std::string text;
        llvm::raw_string_ostream stream(text);
        llvm::DiagnosticPrinterRawOStream printer(stream);
        info.print(printer);
        fatalInternal("LLVM: " + stream.str());
      },
      nullptr);
}

/// Builds and optimises the bundle module.
std::unique_ptr<llvm::Module> buildModule(llvm::LLVMContext &context, const Graph &graph,
                                          const MemoryPlan &plan, const std::string &name,
                                          const TargetOptions &target, bool withBundleConfig,
                                          std::unique_ptr<llvm::TargetMachine> &machine,
                                          const LayerCallback &onLayer = {},
                                          size_t *fusedTables = nullptr) {
  if (name.empty())
    throw Error(ExitCode::Usage, "--network-name must not be empty");
  const ResolvedCpu cpu = resolveCpu(target);
  machine = createTargetMachine(target, cpu);
  auto module = loadKernels(context, target, cpu, *machine);
  module->setModuleIdentifier(name);
  llvm::Function *entry = lowerGraphToEntry(*module, graph, plan, name, onLayer, fusedTables);
  if (withBundleConfig)
    emitBundleConfig(*module, plan, name);
  choosePointwiseSharing(*module); // sets a kernel flag (internal, constant) at every level
  if (target.optLevel != CodegenOptLevel::Os) {
    shareKernelsByShapeClass(*module);
    if (target.optLevel != CodegenOptLevel::O3) // O3 specialises every call anyway.
      shareConvolutionsByShape(*module);
  }
  setFunctionAttributes(*module, target, cpu, hasWideTiles(target.triple, *machine), entry);
  setSizeFirstFlag(*module, target.optLevel);
  foldSharedKernelParams(*module); // once the kernels are internal: every caller known
  stripCallMarks(*module);         // read by the sharing and attributes above
  std::string problems;
  llvm::raw_string_ostream problemStream(problems);
  if (llvm::verifyModule(*module, &problemStream))
    fatalInternal("generated module is invalid: " + problemStream.str());
  optimize(*module, *machine, target.optLevel);
  return module;
}

} // namespace

std::string kernelParamsMismatch(const TargetOptions &target, const std::string &cStruct,
                                 size_t fieldCount) {
  llvm::LLVMContext context;
  quietDiagnostics(context);
  const ResolvedCpu cpu = resolveCpu(target);
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(target, cpu);
  llvm::MemoryBufferRef buffer(kernelBitcodeFor(target.triple, *machine), "bundlefit-kernels");
  auto module = llvm::parseBitcodeFile(buffer, context);
  if (!module)
    fatalInternal("cannot parse the embedded kernel bitcode: " +
                  llvm::toString(module.takeError()));
  (*module)->setDataLayout(machine->createDataLayout());
  return kernelParamsMismatch(**module, cStruct, fieldCount);
}

/// A 32-bit core addresses 4 GiB: every region, and the three together,
/// must stay below that, or the offsets in the object would wrap.
static void checkAddressSpace(const MemoryPlan &plan, const TargetOptions &target) {
  if (!llvm::Triple(target.triple).isArch32Bit())
    return;
  const std::pair<const char *, uint64_t> regions[] = {{"constant weights", plan.constantSize},
                                                       {"mutable weights", plan.mutableSize},
                                                       {"activations", plan.activationsSize}};
  uint64_t total = 0;
  for (const auto &[what, bytes] : regions) {
    std::optional<uint64_t> sum = checkedAdd(total, bytes);
    total = sum ? *sum : ~uint64_t(0);
    if (bytes >= k32BitAddressSpace || total >= k32BitAddressSpace)
      throw Error(ExitCode::DoesNotFit, std::string(what) + " need " + std::to_string(bytes) +
                                            " bytes (bundle data " + std::to_string(total) +
                                            " bytes so far); the 32-bit target " + target.triple +
                                            " addresses less than 4 GiB");
  }
}

CodegenResult generateBundleObject(const Graph &graph, const MemoryPlan &plan,
                                   const std::string &networkName, const TargetOptions &target,
                                   bool withBundleConfig, const LayerCallback &onLayer) {
  checkAddressSpace(plan, target);
  const auto start = std::chrono::steady_clock::now();
  llvm::LLVMContext context;
  quietDiagnostics(context);
  std::unique_ptr<llvm::TargetMachine> machine;
  size_t fusedTables = 0;
  auto module = buildModule(context, graph, plan, networkName, target, withBundleConfig, machine,
                            onLayer, &fusedTables);

  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, stream, nullptr, llvm::CGFT_ObjectFile))
    fatalInternal("LLVM cannot emit object files for " + target.triple);
  codegen.run(*module);

  CodegenResult result;
  result.object.assign(buffer.begin(), buffer.end());
  const ObjectSummary summary = inspectObject(result.object);
  result.textBytes = summary.textBytes;
  result.rodataBytes = summary.rodataBytes;
  result.dataBytes = summary.dataBytes;
  result.fusedTables = fusedTables;
  result.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string generateBundleIR(const Graph &graph, const MemoryPlan &plan,
                             const std::string &networkName, const TargetOptions &target) {
  llvm::LLVMContext context;
  quietDiagnostics(context);
  std::unique_ptr<llvm::TargetMachine> machine;
  auto module = buildModule(context, graph, plan, networkName, target, false, machine);
  std::string text;
  llvm::raw_string_ostream stream(text);
  module->print(stream, nullptr);
  return stream.str();
}

ObjectSummary inspectObject(const std::vector<char> &object) {
  llvm::MemoryBufferRef buffer(llvm::StringRef(object.data(), object.size()), "bundle.o");
  auto file = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!file)
    fatalInternal("cannot read back the emitted object: " + llvm::toString(file.takeError()));
  llvm::object::ObjectFile &obj = **file;
  ObjectSummary summary;
  summary.fileFormat = obj.getFileFormatName().str();
  summary.arch = llvm::Triple::getArchTypeName(obj.getArch()).str();
  if (auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(&obj))
    summary.elfMachine = uint16_t(elf->getEMachine());
  for (const llvm::object::SectionRef &section : obj.sections()) {
    if (!section.isText() && !section.isData() && !section.isBSS())
      continue;
    auto name = section.getName();
    const std::string sectionName = name ? name->str() : std::string();
    if (section.isText())
      summary.textBytes += section.getSize();
    else if (section.isBSS())
      summary.dataBytes += section.getSize();
    else if (startsWith(sectionName, ".rodata") || startsWith(sectionName, ".ARM.exidx") ||
             startsWith(sectionName, ".eh_frame"))
      summary.rodataBytes += section.getSize();
    else if (section.isData())
      summary.dataBytes += section.getSize();
  }
  for (const llvm::object::SymbolRef &symbol : obj.symbols()) {
    auto name = symbol.getName();
    auto flags = symbol.getFlags();
    if (!name || !flags || name->empty())
      continue;
    if (*flags & llvm::object::SymbolRef::SF_Undefined)
      summary.undefinedSymbols.push_back(name->str());
    else if (*flags & llvm::object::SymbolRef::SF_Global)
      summary.definedGlobals.push_back(name->str());
  }
  return summary;
}

} // namespace bundlefit
