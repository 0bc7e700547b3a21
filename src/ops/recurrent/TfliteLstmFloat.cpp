//===- TfliteLstmFloat.cpp - TFLite's float LSTM kernel --------------------===//
//
// `TfliteLstm` (TfliteLstm.cpp) with float32 X, W, R, B and Y (attribute
// cell_clip) is TFLM's float LSTM, kernel bf_lstm_f32: the float model's LSTM
// as one node, each step's hidden state written straight into Y (the IR's
// unrolled LSTM kept one buffer per step). A quantized build keeps it float
// (whyFloat).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include "common/CallArgs.h"
#include "recurrent/TfliteLstm.h"

namespace bundlefit {

using namespace shape_helpers;

namespace {

/// The float LSTM (float32 W) stays float in a quantized build: TFLite's
/// int8 LSTM needs the int8 weights and the cell scale of a converted model.
std::string whyFloat(const Node &node) {
  const Value *w = node.input(1);
  return w && w->type.dtype == DType::Float32
             ? "TFLite's float LSTM (float32 weights) has no int8 kernel here"
             : "";
}

/// bf_lstm_f32: TFLite's float LSTM; its one parameter, cell_clip (0: none).
std::vector<KernelCall> lowerFloat(const Node &node, const PlanView &) {
  const TfliteLstmGeometry g = tfliteLstmGeometry(node);
  if (node.input(1)->type.dtype != DType::Float32)
    unsupported(node, "int8 W in a float build (the int8 LSTM runs quantized only)");
  call_args::Args args;
  args.addr(node.input(0)).addr(node.input(1)).addr(node.input(2)).addr(node.input(3));
  args.floats({node.attrs.getFloat("cell_clip", 0.0f)}).addr(node.output(0)).scratch();
  args.i32(g.batch).i32(g.steps).i32(g.inputs).i32(g.cells).i32(g.timeMajor ? 1 : 0);
  return {args.call("bf_lstm_f32")};
}

} // namespace

void addTfliteLstmFloatKernel(OpDef &def) {
  def.lower = lowerFloat;
  def.int8.whyFloat = whyFloat;
}

} // namespace bundlefit
