//===- ResizeAxes.h - Resize-18's axes as full-rank operands (internal) ----===//
#pragma once

#include "bundlefit/ir/Graph.h"

namespace bundlefit {

/// Resize-18 may give roi, scales or sizes for the dimensions in attribute
/// `axes` only. Once X's type is known and those operands are constants, they
/// become full-rank constants (roi [0, 1], scale 1, X's size elsewhere) and
/// `axes` goes: the form the operator and its kernels compute. Otherwise the
/// node is left as it is and the operator refuses `axes` by name. Returns
/// whether it rewrote the node.
bool expandResizeAxes(Graph &graph, Node &node);

} // namespace bundlefit
