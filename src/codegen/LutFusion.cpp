//===- LutFusion.cpp - int8 activation tables fused into conv stores -------===//
#include "LutFusion.h"

#include "LowerInt8.h"

#include "bundlefit/ops/Cmsis.h"
#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <string>

namespace bundlefit {
namespace {

/// The conv kernels that take a table, and where: right after biasShift
/// (bundlefit_kernels_int8.h), before the in-place rewrite moves anything.
constexpr size_t kLutArg = 11;
bool takesLut(const std::string &kernel) {
  return kernel == "bf_conv2d_s8" || kernel == "bf_conv2d_im2col_s8" ||
         kernel == "bf_depthwise_conv2d_s8";
}

/// Whether a table in `call`'s stores costs less than its own pass. The
/// pass costs about 4.2 Cortex-M7 instructions per element (qemu-insncount,
/// a per-function profile of MobileNetV3-small and EfficientNet-B0-tiny);
/// in the stores of the shared pointwise copies (bf_i8_pointwise_*_lut) and
/// of the 3x3 depthwise rows (bf_dw3_plane_*_lut) it costs +1.7 to +2.7, a
/// net gain of 1.45 to 4 per output. The general depthwise path (5x5
/// kernels, dilation; bf_i8_conv2d with groups = C) lost 2.7 to 10 per
/// output: its inlined stores keep the table's null test and the table
/// pointer adds stack reloads to a function that already spills. Other
/// convs were not measured to gain, so they keep the separate pass.
bool paysAtStore(const KernelCall &call) {
  auto field = [&](const char *name) { return kernelParamsField<bf_conv_params>(call, name); };
  const bool depthwise3x3 = call.kernel == "bf_depthwise_conv2d_s8" && field("kh") == 3 &&
                            field("kw") == 3 && field("dil_w") == 1 &&
                            (field("stride_w") == 1 || field("stride_w") == 2) &&
                            !(kernelParamsField<bf_quant_params>(call, "quant_flags") &
                              BF_I8_SINGLE_ROUNDING); // bf_i8_depthwise_conv2d's `fast`
  const bool pointwise = call.kernel != "bf_depthwise_conv2d_s8" && field("kh") == 1 &&
                         field("kw") == 1 && field("stride_h") == 1 && field("stride_w") == 1 &&
                         field("pad_t") == 0 && field("pad_l") == 0 && field("groups") == 1 &&
                         field("oh") == field("h") && field("ow") == field("w");
  return depthwise3x3 || pointwise;
}

/// An int8 node that runs the bundle's own kernels (not CMSIS-NN's).
bool ownInt8Kernel(const Node &node) {
  return needsInt8Kernel(node) && !node.attrs.has(kCmsisAttribute);
}

/// `node`'s calls when it is a plain table activation: one bf_lut_s8 call.
bool isTableActivation(const Node &node) {
  if (!ownInt8Kernel(node) || node.inputs.size() != 1 || !node.input(0) || !node.output())
    return false;
  const OpDef *def = OpRegistry::get().find(node.opType);
  if (!def || !def->int8.lower)
    return false;
  const std::vector<KernelCall> calls = describeInt8Calls(node);
  return calls.size() == 1 && calls[0].kernel == "bf_lut_s8";
}

/// The pair's conditions, asked from either end.
bool fusible(const Graph &graph, const PlanView &plan, const Node &conv, const Node &activation) {
  if (conv.opType != "Conv" || !ownInt8Kernel(conv) || !conv.output() || conv.outputs.size() != 1 ||
      conv.output()->isGraphOutput || activation.input(0) != conv.output())
    return false;
  // Nothing else reads the conv's output, and the plan put the activation's
  // output on it: the conv's stores may then write the activated values
  // where the activation would have.
  const std::vector<Node *> users = graph.users(conv.output());
  if (users.size() != 1 || users[0] != &activation || !plan.outputOnInput(activation))
    return false;
  if (!isTableActivation(activation))
    return false;
  const std::vector<KernelCall> calls = describeInt8Calls(conv);
  return std::all_of(calls.begin(), calls.end(),
                     [](const KernelCall &c) { return takesLut(c.kernel) && paysAtStore(c); });
}

} // namespace

const Node *fusedLutConsumer(const Graph &graph, const PlanView &plan, const Node &conv) {
  if (conv.opType != "Conv" || !conv.output())
    return nullptr;
  const std::vector<Node *> users = graph.users(conv.output());
  if (users.size() != 1 || !fusible(graph, plan, conv, *users[0]))
    return nullptr;
  return users[0];
}

bool lutFusedIntoProducer(const Graph &graph, const PlanView &plan, const Node &activation) {
  const Value *x = activation.input(0);
  return x && x->producer && x->producer->opType == "Conv" &&
         fusible(graph, plan, *x->producer, activation);
}

void applyFusedLut(const Node &conv, const Node &activation, std::vector<KernelCall> &convCalls) {
  const std::vector<KernelCall> own = describeInt8Calls(activation);
  const KernelArg &table = own.at(0).args.back();
  if (table.kind != KernelArg::I8Table || table.table.size() != 256)
    fatalInternal(activation.describe() + ": bf_lut_s8's last argument is no 256-entry table");
  for (KernelCall &call : convCalls) {
    if (!takesLut(call.kernel) || call.args.size() <= kLutArg ||
        call.args[kLutArg].kind != KernelArg::Address || call.args[kLutArg].value)
      fatalInternal(conv.describe() + ": " + call.kernel + " has no null table argument " +
                    std::to_string(kLutArg));
    call.args[kLutArg] = table;
  }
}

} // namespace bundlefit
