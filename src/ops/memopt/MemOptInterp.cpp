//===- MemOptInterp.cpp - Reference kernels of fused operators -------------===//
//
// ConvPool is evaluated as what it replaced: the reference Conv, then the
// reference pool, on a temporary. The interpreter has no memory limit; the
// fused bundle kernel is checked against exactly this.
//
//===----------------------------------------------------------------------===//
#include "memopt/MemOpt.h"

#include "bundlefit/ops/FusedOps.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/PatchStage.h"

#include <cstring>
#include <map>

namespace bundlefit {

namespace memopt_interp {

void convPoolKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                    std::vector<Tensor> &outputs) {
  std::unique_ptr<ConvPoolParts> parts = splitConvPool(node);
  std::vector<const Tensor *> convInputs(inputs.begin(), inputs.begin() + 2);
  if (parts->hasBias)
    convInputs.push_back(inputs.at(2));
  std::vector<Tensor> conv = evaluateNode(parts->conv, convInputs);
  std::vector<Tensor> pooled = evaluateNode(parts->pool, {&conv[0]});
  outputs[0] = std::move(pooled[0]);
}

/// PatchStage runs its tile program, the very steps the bundle runs, on
/// tile-sized tensors: so the interpreter checks the tiling, not only the
/// layers it replaced.
void patchStageKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                      std::vector<Tensor> &outputs) {
  std::unique_ptr<PatchProgram> program = buildPatchProgram(node);
  std::map<const Value *, Tensor *> tensors;
  std::map<const Value *, Tensor> tileTensors;
  for (size_t i = 0; i < node.inputs.size(); ++i)
    tensors[node.inputs[i]] = const_cast<Tensor *>(inputs.at(i));
  tensors[node.output()] = &outputs[0];
  auto tensorOf = [&](const Value *v) -> Tensor * {
    auto it = tensors.find(v);
    if (it != tensors.end())
      return it->second;
    Tensor &t = tileTensors[v];
    if (t.bytes.size() != v->type.bytes())
      t = Tensor(v->type);
    return &t;
  };
  for (const std::vector<PatchStep> &tile : program->tiles) {
    for (const PatchStep &step : tile) {
      if (!step.node) {
        const PatchCopy &c = step.copy;
        const size_t es = dtypeSize(c.src->type.dtype);
        const uint8_t *src = tensorOf(c.src)->bytes.data();
        uint8_t *dst = tensorOf(c.dst)->bytes.data();
        for (int64_t a = 0; a < c.dims[0]; ++a)
          for (int64_t b = 0; b < c.dims[1]; ++b)
            std::memcpy(dst + (c.dstOffset + a * c.dstStrides[0] + b * c.dstStrides[1]) * es,
                        src + (c.srcOffset + a * c.srcStrides[0] + b * c.srcStrides[1]) * es,
                        size_t(c.dims[2]) * es);
        continue;
      }
      std::vector<const Tensor *> args;
      for (const Value *v : step.node->inputs)
        args.push_back(v ? (v->isConstant() && !tensors.count(v) ? nullptr : tensorOf(v))
                         : nullptr);
      for (size_t i = 0; i < args.size(); ++i)
        if (!args[i] && step.node->inputs[i]) { // A parameter constant: its own bytes.
          Tensor &t = tileTensors[step.node->inputs[i]];
          t = Tensor(step.node->inputs[i]->type, step.node->inputs[i]->data);
          args[i] = &t;
        }
      std::vector<Tensor> results = evaluateNode(*step.node, args);
      *tensorOf(step.node->output()) = std::move(results[0]);
    }
  }
}

} // namespace memopt_interp

} // namespace bundlefit
