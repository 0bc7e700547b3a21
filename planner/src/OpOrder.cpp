//===- OpOrder.cpp - Peak-minimising topological order --------------------===//
//
// The bytes resident between two steps depend only on the *set* of ops
// already run, not on their order. So the best peak to reach a set S is
//   best(S + o) = min over ready o of max(best(S), resident(S) + out(o) + scratch(o))
// a shortest-path over the lattice of sets, explored one layer (|S|) at a
// time. When a layer grows past maxStates we keep the most promising sets
// (lowest peak, then lowest resident bytes): a beam search, no longer exact.
// The work (successors looked at, words copied) has a limit too: each layer
// gets an equal share of what is left, and keeps only the states that
// share pays for, at least one. A graph too large for even one state per
// layer (past twice the limit) keeps the order it was given.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/planner/OpOrder.h"

#include <algorithm>
#include <numeric>

namespace bundlefit::planner {

namespace {
// Facts about the graph that every query needs.
struct GraphFacts {
  int numOps = 0;
  std::vector<int> producer;                                   // Per tensor, -1 for graph inputs.
  std::vector<std::vector<int>> consumers;                     // Per tensor, unique ops.
  std::vector<bool> keep;                                      // Per tensor.
  std::vector<std::vector<int>> inputs, outputs, preds, succs; // Per op, unique.

  explicit GraphFacts(const OpGraph &g) : numOps(int(g.ops.size())) {
    size_t numTensors = g.tensorSizes.size();
    producer.assign(numTensors, -1);
    consumers.assign(numTensors, {});
    keep.assign(numTensors, false);
    for (int t : g.keepAlive)
      keep[t] = true;
    inputs.resize(numOps);
    outputs.resize(numOps);
    preds.resize(numOps);
    succs.resize(numOps);
    for (int o = 0; o < numOps; ++o) {
      inputs[o] = unique(g.ops[o].inputs);
      outputs[o] = unique(g.ops[o].outputs);
      for (int t : outputs[o])
        producer[t] = o;
      for (int t : inputs[o])
        consumers[t].push_back(o);
    }
    for (int o = 0; o < numOps; ++o) {
      for (int t : inputs[o])
        if (producer[t] >= 0 && producer[t] != o)
          preds[o].push_back(producer[t]);
      preds[o] = unique(preds[o]);
      for (int p : preds[o])
        succs[p].push_back(o);
    }
  }

  /// Whether the tensor ever takes bytes (an unused graph input does not).
  bool counted(int t) const { return producer[t] >= 0 || keep[t] || !consumers[t].empty(); }

  static std::vector<int> unique(std::vector<int> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  }
};

// One layer of the search: every state is a set of executed ops (|S| equal
// across the layer), stored flat so a layer costs a few allocations, not a
// few per state. State i's bitset is done[i * words, (i + 1) * words) and its
// ready ops readyOps[readyBegin[i], readyBegin[i + 1]).
struct Layer {
  size_t words = 0;
  std::vector<uint64_t> done;
  std::vector<uint64_t> hash; // Zobrist hash of the set: XOR of per-op keys.
  std::vector<uint64_t> peak, resident;
  std::vector<size_t> readyBegin{0};
  std::vector<int> readyOps; // Ops not done whose predecessors all are; sorted.

  size_t size() const { return hash.size(); }
  const uint64_t *bits(size_t i) const { return done.data() + i * words; }
};

bool has(const uint64_t *bits, int o) { return (bits[o / 64] >> (o % 64)) & 1; }

// A successor of a state: its parent's set plus op. Its bitset is built only
// if it survives deduplication and the beam cut.
struct Candidate {
  int parent; // Index in the previous layer.
  int op;     // The op that led here.
  uint64_t hash, peak, resident;
};

class OrderSearch {
public:
  OrderSearch(const OpGraph &graph, const OrderOptions &options)
      : graph(graph), facts(graph), options(options) {
    // Fixed seed: the same graph gets the same order on every run.
    uint64_t x = 0x9e3779b97f4a7c15ull;
    zobrist.resize(facts.numOps);
    for (uint64_t &z : zobrist) { // splitmix64
      x += 0x9e3779b97f4a7c15ull;
      uint64_t v = x;
      v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
      v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
      z = v ^ (v >> 31);
    }
  }

  OrderResult run() {
    Layer layer;
    layer.words = (size_t(facts.numOps) + 63) / 64;
    layer.done.assign(layer.words, 0);
    layer.hash.push_back(0);
    layer.peak.push_back(0);
    layer.resident.push_back(initialResident());
    for (int o = 0; o < facts.numOps; ++o)
      if (facts.preds[o].empty())
        layer.readyOps.push_back(o);
    layer.readyBegin.push_back(layer.readyOps.size());
    history.push_back({{-1, -1}});
    bool exact = true;
    uint64_t workLeft = options.maxWork, overrun = 0, spent = 0;
    for (int step = 0; step < facts.numOps; ++step) {
      // A state costs its successors, its set and its ready list.
      uint64_t perState =
          1 + layer.words + layer.readyOps.size() / std::max<size_t>(layer.size(), 1);
      uint64_t cost = perState * layer.size();
      overrun += cost > workLeft ? cost - workLeft : 0;
      workLeft -= std::min(workLeft, cost);
      spent += cost;
      if (overrun > options.maxWork)
        return {{}, 0, false, "given: too large to reorder", spent};
      uint64_t share = workLeft / uint64_t(facts.numOps - step);
      size_t width = size_t(std::clamp<uint64_t>(share / perState, 1, options.maxStates));
      std::vector<Candidate> next = expand(layer);
      if (next.empty())
        return {}; // A cycle: no topological order exists.
      if (next.size() > width) {
        keepMostPromising(next, width);
        exact = false;
      }
      std::vector<std::pair<int, int>> links;
      links.reserve(next.size());
      for (const Candidate &c : next)
        links.push_back({c.parent, c.op});
      history.push_back(std::move(links));
      layer = materialise(layer, next);
    }
    OrderResult result;
    size_t best = 0;
    for (size_t i = 1; i < layer.size(); ++i)
      if (layer.peak[i] < layer.peak[best])
        best = i;
    result.peak = layer.size() == 0 ? 0 : layer.peak[best];
    result.order = reconstruct(int(best));
    result.provedOptimal = exact;
    result.method = exact ? "exact-dp" : "beam";
    result.work = spent;
    return result;
  }

private:
  uint64_t initialResident() const {
    uint64_t bytes = 0;
    for (size_t t = 0; t < graph.tensorSizes.size(); ++t)
      if (facts.producer[t] < 0 && facts.counted(int(t)))
        bytes += graph.tensorSizes[t];
    return bytes;
  }

  // Resident bytes after running o from the set done (o not yet in it).
  uint64_t residentAfter(uint64_t resident, const uint64_t *done, int o) const {
    uint64_t bytes = resident;
    for (int t : facts.outputs[o])
      if (facts.keep[t] || !facts.consumers[t].empty())
        bytes += graph.tensorSizes[t];
    for (int t : facts.inputs[o]) {
      if (facts.keep[t])
        continue;
      // Consumers are in op order, and the later ones are the likelier to be
      // still waiting: scan from the back and stop at the first.
      bool lastUse = true;
      for (auto c = facts.consumers[t].rbegin(); lastUse && c != facts.consumers[t].rend(); ++c)
        lastUse = *c == o || has(done, *c);
      if (lastUse)
        bytes -= graph.tensorSizes[t];
    }
    return bytes;
  }

  uint64_t stepBytes(uint64_t resident, int o) const {
    uint64_t bytes = resident + graph.ops[o].scratch;
    for (int t : facts.outputs[o])
      bytes += graph.tensorSizes[t];
    return bytes;
  }

  // Whether two candidates name the same set: parent a's set plus opA equals
  // parent b's set plus opB, compared word by word without building either.
  static bool sameSet(const Layer &layer, const Candidate &a, const Candidate &b) {
    const uint64_t *x = layer.bits(size_t(a.parent)), *y = layer.bits(size_t(b.parent));
    for (size_t w = 0; w < layer.words; ++w) {
      uint64_t xw = x[w], yw = y[w];
      if (size_t(a.op) / 64 == w)
        xw |= uint64_t(1) << (a.op % 64);
      if (size_t(b.op) / 64 == w)
        yw |= uint64_t(1) << (b.op % 64);
      if (xw != yw)
        return false;
    }
    return true;
  }

  // Every successor of every state, one per distinct set, each with the
  // lowest peak reaching it (the first found among equals), in the order the
  // sets were first reached.
  std::vector<Candidate> expand(const Layer &layer) const {
    std::vector<Candidate> next;
    // Open addressing over candidate indices, keyed by the Zobrist hash; equal
    // hashes are confirmed by comparing the sets, so a collision never merges
    // two different sets.
    size_t slots = 16;
    while (slots < 2 * (layer.readyOps.size() + 1))
      slots *= 2;
    std::vector<int> table(slots, -1);
    for (size_t i = 0; i < layer.size(); ++i) {
      const uint64_t *done = layer.bits(i);
      for (size_t r = layer.readyBegin[i]; r < layer.readyBegin[i + 1]; ++r) {
        int o = layer.readyOps[r];
        Candidate c{int(i), o, layer.hash[i] ^ zobrist[o],
                    std::max(layer.peak[i], stepBytes(layer.resident[i], o)),
                    residentAfter(layer.resident[i], done, o)};
        size_t slot = size_t(c.hash) & (slots - 1);
        while (table[slot] >= 0) {
          Candidate &seen = next[size_t(table[slot])];
          if (seen.hash == c.hash && sameSet(layer, seen, c))
            break;
          slot = (slot + 1) & (slots - 1);
        }
        if (table[slot] < 0) {
          table[slot] = int(next.size());
          next.push_back(c);
        } else if (c.peak < next[size_t(table[slot])].peak) {
          next[size_t(table[slot])] = c;
        }
      }
    }
    return next;
  }

  void keepMostPromising(std::vector<Candidate> &next, size_t width) const {
    std::stable_sort(next.begin(), next.end(), [](const Candidate &a, const Candidate &b) {
      if (a.peak != b.peak)
        return a.peak < b.peak;
      return a.resident < b.resident;
    });
    next.resize(width);
  }

  // The next layer's states from the surviving candidates: the set (parent's
  // plus op) and its ready ops (op leaves, successors whose last predecessor
  // was op join; sorted, as the order of expansion depends on it).
  Layer materialise(const Layer &layer, const std::vector<Candidate> &next) const {
    Layer out;
    out.words = layer.words;
    out.done.resize(next.size() * out.words);
    out.hash.reserve(next.size());
    out.peak.reserve(next.size());
    out.resident.reserve(next.size());
    out.readyBegin.reserve(next.size() + 1);
    for (size_t k = 0; k < next.size(); ++k) {
      const Candidate &c = next[k];
      uint64_t *bits = out.done.data() + k * out.words;
      std::copy_n(layer.bits(size_t(c.parent)), out.words, bits);
      bits[c.op / 64] |= uint64_t(1) << (c.op % 64);
      out.hash.push_back(c.hash);
      out.peak.push_back(c.peak);
      out.resident.push_back(c.resident);
      size_t first = out.readyOps.size();
      for (size_t r = layer.readyBegin[size_t(c.parent)];
           r < layer.readyBegin[size_t(c.parent) + 1]; ++r)
        if (layer.readyOps[r] != c.op)
          out.readyOps.push_back(layer.readyOps[r]);
      // The parent's list stays sorted: only the newly ready are sorted
      // and merged in (a sort of thousands of ready ops per state was most
      // of the time on a wide graph).
      size_t kept = out.readyOps.size();
      for (int succ : facts.succs[c.op])
        if (allPredsDone(bits, succ))
          out.readyOps.push_back(succ);
      auto middle = out.readyOps.begin() + std::ptrdiff_t(kept);
      std::sort(middle, out.readyOps.end());
      std::inplace_merge(out.readyOps.begin() + std::ptrdiff_t(first), middle, out.readyOps.end());
      out.readyBegin.push_back(out.readyOps.size());
    }
    return out;
  }

  bool allPredsDone(const uint64_t *done, int o) const {
    for (int p : facts.preds[o])
      if (!has(done, p))
        return false;
    return true;
  }

  std::vector<int> reconstruct(int index) const {
    std::vector<int> order;
    for (size_t layer = history.size() - 1; layer > 0; --layer) {
      order.push_back(history[layer][index].second);
      index = history[layer][index].first;
    }
    std::reverse(order.begin(), order.end());
    return order;
  }

  const OpGraph &graph;
  GraphFacts facts;
  OrderOptions options;
  std::vector<uint64_t> zobrist; // Per op.
  // Per layer, per state: (parent index, op).
  std::vector<std::vector<std::pair<int, int>>> history;
};
} // namespace

bool isTopologicalOrder(const OpGraph &graph, const std::vector<int> &order) {
  GraphFacts facts(graph);
  if (order.size() != graph.ops.size())
    return false;
  std::vector<bool> done(graph.ops.size(), false);
  for (int o : order) {
    if (o < 0 || o >= facts.numOps || done[o])
      return false;
    for (int p : facts.preds[o])
      if (!done[p])
        return false;
    done[o] = true;
  }
  return true;
}

std::vector<uint64_t> computeLiveBytes(const OpGraph &graph, const std::vector<int> &order) {
  GraphFacts facts(graph);
  int n = int(order.size());
  std::vector<int> position(graph.ops.size(), 0);
  for (int k = 0; k < n; ++k)
    position[order[k]] = k;
  std::vector<int64_t> delta(n + 1, 0);
  for (size_t t = 0; t < graph.tensorSizes.size(); ++t) {
    if (!facts.counted(int(t)))
      continue;
    int birth = facts.producer[t] < 0 ? 0 : position[facts.producer[t]];
    int death = birth;
    for (int c : facts.consumers[t])
      death = std::max(death, position[c]);
    if (facts.keep[t])
      death = n - 1;
    delta[birth] += int64_t(graph.tensorSizes[t]);
    delta[death + 1] -= int64_t(graph.tensorSizes[t]);
  }
  std::vector<uint64_t> live(n);
  int64_t running = 0;
  for (int k = 0; k < n; ++k) {
    running += delta[k];
    live[k] = uint64_t(running) + graph.ops[order[k]].scratch;
  }
  return live;
}

uint64_t computePeak(const OpGraph &graph, const std::vector<int> &order) {
  std::vector<uint64_t> live = computeLiveBytes(graph, order);
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

OrderResult optimiseOrder(const OpGraph &graph, const std::vector<int> &initialOrder,
                          const OrderOptions &options) {
  OrderResult found = OrderSearch(graph, options).run();
  if (!isTopologicalOrder(graph, initialOrder))
    return found;
  uint64_t givenPeak = computePeak(graph, initialOrder);
  if (found.order.empty() && !found.method.empty())
    return {initialOrder, givenPeak, false, found.method, found.work};
  if (!found.order.empty() && found.peak < givenPeak)
    return found;
  if (!found.order.empty() && found.peak == givenPeak && found.provedOptimal) {
    // Equal peaks: keep the caller's order, it is the least surprising.
    return {initialOrder, givenPeak, true, "given", found.work};
  }
  return {initialOrder, givenPeak, false, "given", found.work};
}

} // namespace bundlefit::planner
