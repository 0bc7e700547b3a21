//===- CmsisNnHeaderCheck.cpp - The bundle header's CMSIS-NN API check -----===//
//
// A --use-cmsis bundle calls CMSIS-NN with argument structs laid out as the
// version bundlefit generated them for. Its header therefore includes
// arm_nnfunctions.h when the firmware has it on the include path and states,
// at compile time, what the object code assumes: each function it calls with
// that exact prototype (a changed signature is a "conflicting types" error),
// each parameter struct's size and field offsets, and whatever else a call
// relies on (Helium fully connected layers that pass compile-time kernel
// sums: that the library has arm_vector_sum_s8, CMSIS-NN v5.0 and later). The
// pinned CMSIS-NN defines no version macro, so the API itself is what is
// checked. The prototypes and further checks are the operators' definitions'
// (CmsisDef::prototypes and apiChecks, passed in); this file only writes them.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/bundle/BundleWriter.h"

#include <set>

namespace bundlefit {

namespace {

/// Struct layouts the generated argument tables follow (src/ops/common/CallArgs.h).
const char *kLayoutChecks = R"(#define BF_CMSIS_NN_LAYOUT(type, field, offset) \
  BF_CMSIS_NN_ASSERT(offsetof(type, field) == (offset), #type "." #field " at " #offset)
BF_CMSIS_NN_ASSERT(sizeof(cmsis_nn_dims) == 16, "cmsis_nn_dims is {n, h, w, c}");
BF_CMSIS_NN_ASSERT(sizeof(cmsis_nn_context) == 2 * sizeof(void *), "cmsis_nn_context is {buf, size}");
BF_CMSIS_NN_LAYOUT(cmsis_nn_conv_params, stride, 8);
BF_CMSIS_NN_LAYOUT(cmsis_nn_conv_params, activation, 32);
BF_CMSIS_NN_ASSERT(sizeof(cmsis_nn_conv_params) == 40, "cmsis_nn_conv_params: 10 int32");
BF_CMSIS_NN_LAYOUT(cmsis_nn_dw_conv_params, ch_mult, 8);
BF_CMSIS_NN_LAYOUT(cmsis_nn_dw_conv_params, activation, 36);
BF_CMSIS_NN_ASSERT(sizeof(cmsis_nn_dw_conv_params) == 44, "cmsis_nn_dw_conv_params: 11 int32");
BF_CMSIS_NN_LAYOUT(cmsis_nn_pool_params, activation, 16);
BF_CMSIS_NN_ASSERT(sizeof(cmsis_nn_pool_params) == 24, "cmsis_nn_pool_params: 6 int32");
BF_CMSIS_NN_LAYOUT(cmsis_nn_fc_params, activation, 12);
BF_CMSIS_NN_ASSERT(sizeof(cmsis_nn_fc_params) == 20, "cmsis_nn_fc_params: 5 int32");
BF_CMSIS_NN_ASSERT(sizeof(cmsis_nn_per_tensor_quant_params) == 8, "per-tensor quant: {multiplier, shift}");
)";

} // namespace

std::string renderCmsisNnCheck(const MemoryPlan &plan, const CmsisNnChecks &checks) {
  std::set<std::string> functions;
  for (const Node *node : plan.schedule) {
    const std::string function = node->attrs.getString("cmsis", "");
    if (!function.empty())
      functions.insert(function);
  }
  if (functions.empty())
    return "";
  std::string text = "// CMSIS-NN: this bundle calls ";
  for (const std::string &f : functions)
    text += f + (f == *functions.rbegin() ? "" : ", ");
  text += ".\n// Generated for CMSIS-NN v7.0.0-43 (arm_nnfunctions.h V.19.1.0); any version from\n"
          "// v5.0 with the same API works. With arm_nnfunctions.h on the include path (or\n"
          "// BUNDLEFIT_CHECK_CMSIS_NN defined) the API is checked here, at compile time.\n";
  text += "#if defined(BUNDLEFIT_CHECK_CMSIS_NN) || (defined(__has_include) && "
          "__has_include(<arm_nnfunctions.h>))\n";
  text += "#include <stddef.h>\n#include <arm_nnfunctions.h>\n";
  text += "#ifdef __cplusplus\n#define BF_CMSIS_NN_ASSERT(c, m) static_assert(c, m)\n"
          "extern \"C\" {\n#else\n#define BF_CMSIS_NN_ASSERT(c, m) _Static_assert(c, m)\n#endif\n";
  text += kLayoutChecks;
  text += "// The prototypes the object code calls (a different one: conflicting types).\n";
  for (const std::string &f : functions)
    if (auto prototype = checks.prototypes.find(f);
        prototype != checks.prototypes.end() && !prototype->second.empty())
      text += prototype->second + "\n";
  for (const std::string &check : checks.apiChecks)
    text += check + "\n";
  text += "#undef BF_CMSIS_NN_LAYOUT\n#undef BF_CMSIS_NN_ASSERT\n"
          "#ifdef __cplusplus\n}\n#endif\n#endif\n\n";
  return text;
}

} // namespace bundlefit
