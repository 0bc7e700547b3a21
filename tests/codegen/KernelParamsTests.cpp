// The kernel ABI's parameter structs (bundlefit/kernels/abi.h): code
// generation and every target family's kernel bitcode agree on each struct,
// a planted difference in field count is refused naming the struct, and a
// field the lowering left unset is refused naming the field.
#include "bundlefit/codegen/BundleCodegen.h"
#include "bundlefit/codegen/Target.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/support/Error.h"

#include <doctest/doctest.h>

#include <iterator>
#include <string>

using namespace bundlefit;

TEST_CASE("kernel parameter structs: bitcode and code generation agree, a planted mismatch fails") {
  // One CPU per kernel bitcode family (BundleCodegen.cpp kernelBitcodeFor).
  for (const char *cpu :
       {"x86_64", "cortex-a53", "cortex-m7", "cortex-m33", "cortex-m55", "cortex-m0plus"}) {
    const TargetOptions target = resolveTarget(cpu, "", "", "", "");
    CAPTURE(describeTarget(target));
    for (const auto &[name, fields] : kernelParamsStructs()) {
      CAPTURE(name);
      CHECK(kernelParamsMismatch(target, name, fields) == "");
      for (size_t planted : {fields - 1, fields + 1}) {
        const std::string why = kernelParamsMismatch(target, name, planted);
        CHECK(why.find("struct " + name + " has " + std::to_string(fields) + " int32 fields") !=
              std::string::npos);
        CHECK(why.find("but " + std::to_string(planted) + " in code generation") !=
              std::string::npos);
      }
    }
    CHECK(kernelParamsMismatch(target, "bf_no_such_params", 1) ==
          "the kernel bitcode has no struct bf_no_such_params");
  }
}

TEST_CASE("kernel parameter structs: two of the same shape are told apart") {
  // bf_mul_params and bf_gemm_params are both 7 int32 fields, so llvm-link
  // gives them one struct type in the kernel bitcode; code generation reads
  // each struct's size from its own global and gives each its own type
  // (KernelParamsCheck.h). A planted mismatch of one is still named.
  static_assert(std::size(KernelParamsInfo<bf_mul_params>::fields) ==
                std::size(KernelParamsInfo<bf_gemm_params>::fields));
  const TargetOptions target = resolveTarget("cortex-m7", "", "", "", "");
  CHECK(kernelParamsMismatch(target, "bf_mul_params", 7) == "");
  CHECK(kernelParamsMismatch(target, "bf_gemm_params", 7) == "");
  CHECK(kernelParamsMismatch(target, "bf_mul_params", 8).find("struct bf_mul_params has 7") !=
        std::string::npos);
}

TEST_CASE("kernel parameter structs: a field the lowering did not set is named") {
  Graph graph;
  const Node &node = *graph.addNode("Conv", "c1", {}, {"y"});
  bf_pool_params pool = unsetKernelParams<bf_pool_params>();
  pool.n = pool.c = pool.h = pool.w = 1;
  pool.oh = pool.ow = pool.kh = pool.kw = pool.stride_h = pool.stride_w = 1;
  pool.pad_t = pool.pad_l = pool.pad_b = pool.pad_r = 0;
  pool.dil_h = pool.dil_w = 1;
  pool.is_max = 1, pool.count_include_pad = 0, pool.pad_value = 0, pool.act_max = 127;
  pool.chunk = 4; // act_min left out
  try {
    kernelParams(node, pool);
    FAIL("an unset field was passed");
  } catch (const Error &e) {
    CHECK(std::string(e.what()).find("bf_pool_params.act_min unset") != std::string::npos);
  }
  pool.act_min = -128;
  const KernelArg arg = kernelParams(node, pool);
  CHECK(arg.kind == KernelArg::Params);
  CHECK(arg.type == "bf_pool_params");
  CHECK(arg.table.size() == 22);
  CHECK(arg.table[19] == -128); // act_min: fields in abi.h's order
}
