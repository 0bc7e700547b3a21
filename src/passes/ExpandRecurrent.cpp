//===- ExpandRecurrent.cpp - LSTM, GRU and RNN unrolled over their sequence -===//
//
// An MCU model's recurrent layer has a short static sequence (a keyword
// spotter's 49 frames), so bundlefit unrolls it, as an ONNX function body
// would, into nodes every engine runs: per step the input and recurrent
// MatMuls, the gate Slices, Sigmoid, Tanh, Mul and Add. Weights that are
// constants fold (pre-transposed and sliced once per direction, every step
// reading the same constants) in the next folding round;
// int8 quantizes the unrolled nodes like any others; the planner sees each
// step's state as a short-lived buffer. Equations: ONNX's LSTM/GRU/RNN
// (default activations; inference in ops/recurrent/RecurrentOps.cpp refuses
// the others, and ONNX's `clip`).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/passes/Passes.h"

#include "PassUtils.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/MemoryBudget.h"

#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace bundlefit {

namespace {

/// Builds nodes just before the recurrent node, named after it.
class Unroller {
public:
  Unroller(Graph &graph, Node &node) : graph_(graph), node_(node) {}

  Value *op(Op type, const std::vector<Value *> &inputs) {
    const std::string name = node_.name + "_" + opName(type);
    Node *created = graph_.insertNodeBefore(&node_, type, name, inputs, {name});
    if (!role_.empty())
      created->attrs.setString(kRecurrentRoleAttr, role_ + std::to_string(stepNodes_++));
    last_ = created;
    return created->output();
  }

  /// Nodes made from here until endStep() are a step of direction `d`: the
  /// k-th node of every step computes the same quantity at another time, and
  /// says so in its kRecurrentRoleAttr (the quantizer gives those one range).
  void beginStep(int64_t d) {
    role_ = node_.name + "/" + std::to_string(d) + "/";
    stepNodes_ = 0;
  }
  void endStep() { role_.clear(); }

  /// An int64 (or int32) constant: a vector, or with `scalar` one value.
  /// One constant per distinct value: every step's Slice and Reshape read
  /// the same few, as the weights are shared by the steps.
  Value *ints(const std::vector<int64_t> &values, bool scalar = false, DType dtype = DType::Int64) {
    Value *&cached = ints_[{values, scalar, int(dtype)}];
    if (cached)
      return cached;
    TensorType type;
    type.dtype = dtype;
    if (!scalar)
      type.shape = {int64_t(values.size())};
    std::vector<uint8_t> bytes;
    for (int64_t value : values) {
      size_t at = bytes.size();
      if (dtype == DType::Int32) {
        int32_t narrow = int32_t(value);
        bytes.resize(at + sizeof narrow);
        std::memcpy(bytes.data() + at, &narrow, sizeof narrow);
      } else {
        bytes.resize(at + sizeof value);
        std::memcpy(bytes.data() + at, &value, sizeof value);
      }
    }
    return cached = graph_.addConstant(graph_.uniqueValueName(node_.name + "_const"), type,
                                       std::move(bytes));
  }
  Value *floats(const Shape &shape, float value) {
    Value *&cached = floats_[{shape, value}];
    if (cached)
      return cached;
    // An initial state of [batch, hidden]: a 300-byte LSTM with batch 2^30
    // once asked for 23 GB here and in the folding that follows.
    checkMemoryBudget(uint64_t(numElements(shape)) * sizeof(float),
                      node_.describe() + ": its unrolled constant of shape " +
                          shapeToString(shape));
    std::vector<float> values(size_t(numElements(shape)), value);
    return cached = pass_utils::addFloatConstant(graph_, node_.name + "_const", shape, values);
  }

  /// x[index] along `axis`, the axis dropped.
  Value *pick(Value *x, int64_t index, int64_t axis = 0) {
    Value *out = op(Op::Gather, {x, ints({index}, /*scalar=*/true)});
    last_->attrs.setInt("axis", axis);
    return out;
  }
  /// x[index] along `axis`, the axis dropped, as a Slice and a Reshape: a
  /// Slice's bounds are compiled into the kernel call, where a Gather's
  /// index would be a constant per step.
  Value *step(Value *x, int64_t index, int64_t axis, const std::vector<int64_t> &shape) {
    return reshape(slice(x, axis, index, index + 1), shape);
  }
  /// Columns [begin, end) of the last axis `axis`.
  Value *slice(Value *x, int64_t axis, int64_t begin, int64_t end) {
    return op(Op::Slice, {x, ints({begin}), ints({end}), ints({axis})});
  }
  Value *transpose(Value *x, const std::vector<int64_t> &perm) {
    Value *out = op(Op::Transpose, {x});
    last_->attrs.setInts("perm", perm);
    return out;
  }
  Value *reshape(Value *x, const std::vector<int64_t> &shape) {
    return op(Op::Reshape, {x, ints(shape)});
  }
  Value *concat(const std::vector<Value *> &parts, int64_t axis) {
    Value *out = op(Op::Concat, parts);
    last_->attrs.setInt("axis", axis);
    return out;
  }
  Value *add(Value *a, Value *b) { return op(Op::Add, {a, b}); }
  Value *mul(Value *a, Value *b) { return op(Op::Mul, {a, b}); }
  Value *matmul(Value *a, Value *b) { return op(Op::MatMul, {a, b}); }
  Value *sigmoid(Value *x) { return op(Op::Sigmoid, {x}); }
  Value *tanh(Value *x) { return op(Op::Tanh, {x}); }

private:
  Graph &graph_;
  Node &node_;
  Node *last_ = nullptr;
  std::string role_;
  size_t stepNodes_ = 0;
  std::map<std::tuple<std::vector<int64_t>, bool, int>, Value *> ints_;
  std::map<std::pair<Shape, float>, Value *> floats_;
};

struct Dims {
  int64_t seq, batch, input, hidden, directions, gates;
  bool batchMajor; // layout 1
};

/// One direction's weights: transposed for `state x W^T`, biases summed
/// where the equations only ever add them.
struct DirectionWeights {
  Value *inputWeightsT = nullptr;     // [I, G*H]
  Value *recurrentWeightsT = nullptr; // [H, G*H]
  Value *inputBias = nullptr;         // [G*H] (null: no B)
  Value *recurrentBias = nullptr;     // [G*H]
  Value *peepholes = nullptr;         // [3H] (LSTM, iof)
  // Parts the steps read, sliced once per direction: a Slice per step would
  // fold into a copy of the weights per step (GRU, 49 steps: 2.41 MB of
  // constants for 81 KB of weights).
  Value *peepholeI = nullptr, *peepholeO = nullptr, *peepholeF = nullptr; // [H] each
  Value *recurrentZrT = nullptr, *recurrentHT = nullptr;                  // GRU: [H, 2H], [H, H]
  Value *recurrentBiasH = nullptr;                                        // GRU: Rb_h [H]
};

class RecurrentExpander {
public:
  RecurrentExpander(Graph &graph, Node &node) : graph_(graph), node_(node), b_(graph, node) {}

  void run() {
    readDims();
    Value *x = node_.input(0);
    Value *lengths = variableLengths();
    std::vector<Value *> ys, finalH, finalC;
    for (int64_t d = 0; d < dims_.directions; ++d) {
      DirectionWeights weights = directionWeights(d);
      Value *h = initialState(5, d), *c = node_.is(Op::LSTM) ? initialState(6, d) : nullptr;
      Value *bias = weights.inputBias ? inputSideBias(weights) : nullptr;
      const bool reverse = isReverse(d);
      std::vector<Value *> steps(size_t(dims_.seq));
      for (int64_t i = 0; i < dims_.seq; ++i) {
        const int64_t t = reverse ? dims_.seq - 1 - i : i;
        b_.beginStep(d);
        // Each step's input products when the step comes, [B, I] x [I, G*H],
        // as TFLM's kernel computes them: all steps' at once would be a
        // [S, B, G*H] buffer live through the whole sequence (mnist_lstm:
        // 8,960 bytes, more than TFLM's whole planned arena).
        Value *xt = b_.step(x, t, dims_.batchMajor ? 1 : 0, {dims_.batch, dims_.input});
        Value *gates = b_.matmul(xt, weights.inputWeightsT);
        if (bias)
          gates = b_.add(gates, bias);
        Value *newH = nullptr, *newC = nullptr;
        if (node_.is(Op::LSTM))
          lstmStep(gates, weights, h, c, newH, newC);
        else if (node_.is(Op::GRU))
          newH = gruStep(gates, weights, h);
        else
          newH = b_.tanh(b_.add(gates, b_.matmul(h, weights.recurrentWeightsT)));
        Value *y = newH;
        if (lengths) {
          // Past a batch entry's length the state holds and Y is zero.
          Value *step = b_.ints({t}, /*scalar=*/true, lengths->type.dtype);
          Value *valid = b_.reshape(b_.op(Op::Less, {step, lengths}), {dims_.batch, 1});
          newH = b_.op(Op::Where, {valid, newH, h});
          if (newC)
            newC = b_.op(Op::Where, {valid, newC, c});
          y = b_.op(Op::Where, {valid, newH, b_.floats({1}, 0.0f)});
        }
        steps[size_t(t)] = b_.reshape(y, {1, 1, dims_.batch, dims_.hidden});
        b_.endStep();
        h = newH;
        c = newC;
      }
      ys.push_back(steps.size() == 1 ? steps[0] : b_.concat(steps, 0));
      finalH.push_back(b_.reshape(h, {1, dims_.batch, dims_.hidden}));
      if (c)
        finalC.push_back(b_.reshape(c, {1, dims_.batch, dims_.hidden}));
    }
    bindOutput(0, ys, 1, {2, 0, 1, 3});
    bindOutput(1, finalH, 0, {1, 0, 2});
    if (node_.is(Op::LSTM))
      bindOutput(2, finalC, 0, {1, 0, 2});
    graph_.eraseNode(&node_);
  }

private:
  [[noreturn]] void unsupported(const std::string &what) const {
    throw Error(ExitCode::Unsupported, node_.describe() + ": " + what);
  }

  void readDims() {
    const Shape &x = node_.input(0)->type.shape, &r = node_.input(2)->type.shape;
    dims_.batchMajor = node_.attrs.getInt("layout", 0) == 1;
    dims_.seq = x[dims_.batchMajor ? 1 : 0];
    dims_.batch = x[dims_.batchMajor ? 0 : 1];
    dims_.input = x[2];
    dims_.directions = r[0];
    dims_.hidden = r[2];
    dims_.gates = node_.is(Op::LSTM) ? 4 : node_.is(Op::GRU) ? 3 : 1;
    // Folding turns each step into constants-free nodes: keep the unrolled
    // graph to a size a microcontroller model can have.
    if (dims_.seq * dims_.directions > 4096)
      unsupported("a sequence of " + std::to_string(dims_.seq) +
                  " steps is longer than the 4096 bundlefit unrolls");
  }

  bool isReverse(int64_t d) const {
    std::string direction = node_.attrs.getString("direction", "forward");
    return direction == "reverse" || (direction == "bidirectional" && d == 1);
  }

  /// sequence_lens when it can cut a sequence short (null when absent or a
  /// constant equal to the sequence length everywhere).
  Value *variableLengths() {
    Value *lengths = node_.input(4);
    if (!lengths)
      return nullptr;
    if (lengths->isConstant()) {
      std::vector<int64_t> values = lengths->toInts();
      bool full = true;
      for (int64_t value : values)
        full = full && value == dims_.seq;
      if (full)
        return nullptr;
    }
    for (int64_t d = 0; d < dims_.directions; ++d)
      if (isReverse(d))
        unsupported("input 'sequence_lens' with a reverse direction is not supported");
    return lengths;
  }

  DirectionWeights directionWeights(int64_t d) {
    DirectionWeights weights;
    weights.inputWeightsT = b_.transpose(b_.pick(node_.input(1), d), {1, 0});
    weights.recurrentWeightsT = b_.transpose(b_.pick(node_.input(2), d), {1, 0});
    const int64_t rows = dims_.gates * dims_.hidden;
    if (Value *bias = node_.input(3)) {
      Value *both = b_.pick(bias, d);
      weights.inputBias = b_.slice(both, 0, 0, rows);
      weights.recurrentBias = b_.slice(both, 0, rows, 2 * rows);
    }
    const int64_t H = dims_.hidden;
    if (node_.is(Op::LSTM))
      if (Value *peepholes = node_.input(7)) {
        weights.peepholes = b_.pick(peepholes, d);
        weights.peepholeI = b_.slice(weights.peepholes, 0, 0, H);
        weights.peepholeO = b_.slice(weights.peepholes, 0, H, 2 * H);
        weights.peepholeF = b_.slice(weights.peepholes, 0, 2 * H, 3 * H);
      }
    if (node_.is(Op::GRU)) {
      weights.recurrentZrT = b_.slice(weights.recurrentWeightsT, 1, 0, 2 * H);
      weights.recurrentHT = b_.slice(weights.recurrentWeightsT, 1, 2 * H, 3 * H);
      if (weights.recurrentBias)
        weights.recurrentBiasH = b_.slice(weights.recurrentBias, 0, 2 * H, 3 * H);
    }
    return weights;
  }

  /// The bias added to the input products: Wb + Rb, except that GRU with
  /// linear_before_reset keeps Rb's h part for inside the reset gate.
  Value *inputSideBias(const DirectionWeights &weights) {
    if (node_.is(Op::GRU) && linearBeforeReset()) {
      Value *zr = b_.slice(weights.recurrentBias, 0, 0, 2 * dims_.hidden);
      Value *padded = b_.concat({zr, b_.floats({dims_.hidden}, 0.0f)}, 0);
      return b_.add(weights.inputBias, padded);
    }
    return b_.add(weights.inputBias, weights.recurrentBias);
  }

  bool linearBeforeReset() const { return node_.attrs.getInt("linear_before_reset", 0) != 0; }

  /// initial_h (input 5) or initial_c (6) of direction d as [B, H]; zeros
  /// when absent.
  Value *initialState(size_t index, int64_t d) {
    Value *state = node_.input(index);
    if (!state)
      return b_.floats({dims_.batch, dims_.hidden}, 0.0f);
    if (dims_.batchMajor)
      state = b_.transpose(state, {1, 0, 2});
    return b_.pick(state, d);
  }

  /// Gates i, o, f, c (ONNX order) from the input products plus h R^T.
  void lstmStep(Value *xGates, const DirectionWeights &w, Value *h, Value *c, Value *&newH,
                Value *&newC) {
    const int64_t H = dims_.hidden;
    Value *gates = b_.add(xGates, b_.matmul(h, w.recurrentWeightsT));
    Value *i = b_.slice(gates, 1, 0, H), *o = b_.slice(gates, 1, H, 2 * H);
    Value *f = b_.slice(gates, 1, 2 * H, 3 * H), *cell = b_.slice(gates, 1, 3 * H, 4 * H);
    if (w.peepholes) {
      i = b_.add(i, b_.mul(w.peepholeI, c));
      f = b_.add(f, b_.mul(w.peepholeF, c));
    }
    newC = b_.add(b_.mul(b_.sigmoid(f), c), b_.mul(b_.sigmoid(i), b_.tanh(cell)));
    if (w.peepholes)
      o = b_.add(o, b_.mul(w.peepholeO, newC));
    newH = b_.mul(b_.sigmoid(o), b_.tanh(newC));
  }

  /// Gates z, r, h: z and r from h R_zr^T; the candidate from (r * h) R_h^T,
  /// or r * (h R_h^T + Rb_h) with linear_before_reset.
  Value *gruStep(Value *xGates, const DirectionWeights &w, Value *h) {
    const int64_t H = dims_.hidden;
    Value *rh = w.recurrentHT;
    Value *hzr = b_.matmul(h, w.recurrentZrT);
    Value *z = b_.sigmoid(b_.add(b_.slice(xGates, 1, 0, H), b_.slice(hzr, 1, 0, H)));
    Value *r = b_.sigmoid(b_.add(b_.slice(xGates, 1, H, 2 * H), b_.slice(hzr, 1, H, 2 * H)));
    Value *hh;
    if (linearBeforeReset()) {
      Value *product = b_.matmul(h, rh);
      if (w.recurrentBiasH)
        product = b_.add(product, w.recurrentBiasH);
      hh = b_.mul(r, product);
    } else {
      hh = b_.matmul(b_.mul(r, h), rh);
    }
    Value *candidate = b_.tanh(b_.add(b_.slice(xGates, 1, 2 * H, 3 * H), hh));
    // (1 - z) * candidate + z * h, as the ONNX equation reads.
    Value *keep = b_.op(Op::Sub, {b_.floats({1}, 1.0f), z});
    return b_.add(b_.mul(keep, candidate), b_.mul(z, h));
  }

  /// Output `index` from the per-direction parts (concatenated on `axis`),
  /// batch-major when layout is 1.
  void bindOutput(size_t index, const std::vector<Value *> &parts, int64_t axis,
                  const std::vector<int64_t> &batchMajorPerm) {
    Value *target = node_.output(index);
    if (!target || parts.empty())
      return;
    Value *value = parts.size() == 1 ? parts[0] : b_.concat(parts, axis);
    if (dims_.batchMajor)
      value = b_.transpose(value, batchMajorPerm);
    // A fresh node computes the output value the model's readers know.
    Node *producer = b_.op(Op::Identity, {value})->producer;
    pass_utils::takeOverOutput(producer, 0, target);
  }

  Graph &graph_;
  Node &node_;
  Unroller b_;
  Dims dims_{};
};

} // namespace

size_t expandRecurrentOps(Graph &graph) {
  size_t expanded = 0;
  for (Node *node : graph.nodes()) {
    if (!node->isAnyOf(Op::LSTM, Op::GRU, Op::RNN))
      continue;
    RecurrentExpander(graph, *node).run();
    ++expanded;
  }
  return expanded;
}

} // namespace bundlefit
