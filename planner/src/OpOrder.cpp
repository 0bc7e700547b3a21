//===- OpOrder.cpp - Peak-minimising topological order --------------------===//
//
// The bytes resident between two steps depend only on the *set* of ops
// already run, not on their order. So the best peak to reach a set S is
//   best(S + o) = min over ready o of max(best(S), resident(S) + out(o) + scratch(o))
// a shortest-path over the lattice of sets, explored one layer (|S|) at a
// time. When a layer grows past maxStates we keep the most promising sets
// (lowest peak, then lowest resident bytes): a beam search, no longer exact.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/planner/OpOrder.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

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

using Key = std::vector<uint64_t>; // Bitset of executed ops.

struct KeyHash {
  size_t operator()(const Key &k) const {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint64_t w : k)
      h = (h ^ w) * 0xff51afd7ed558ccdull + (h >> 29);
    return size_t(h);
  }
};

bool has(const Key &k, int o) { return (k[o / 64] >> (o % 64)) & 1; }
void set(Key &k, int o) { k[o / 64] |= uint64_t(1) << (o % 64); }

struct State {
  Key done;
  std::vector<int> ready; // Ops not done whose predecessors all are.
  uint64_t peak = 0, resident = 0;
  int parent = -1; // Index in the previous layer.
  int op = -1;     // The op that led here.
};

class OrderSearch {
public:
  OrderSearch(const OpGraph &graph, const OrderOptions &options)
      : graph(graph), facts(graph), options(options) {}

  OrderResult run() {
    std::vector<State> layer(1);
    layer[0].done.assign((facts.numOps + 63) / 64, 0);
    layer[0].resident = initialResident();
    for (int o = 0; o < facts.numOps; ++o)
      if (facts.preds[o].empty())
        layer[0].ready.push_back(o);
    history.push_back({{-1, -1}});
    bool exact = true;
    for (int step = 0; step < facts.numOps; ++step) {
      std::vector<State> next = expand(layer);
      if (next.empty())
        return {}; // A cycle: no topological order exists.
      if (next.size() > options.maxStates) {
        keepMostPromising(next);
        exact = false;
      }
      std::vector<std::pair<int, int>> links;
      for (const State &s : next)
        links.push_back({s.parent, s.op});
      history.push_back(std::move(links));
      layer = std::move(next);
    }
    OrderResult result;
    size_t best = 0;
    for (size_t i = 1; i < layer.size(); ++i)
      if (layer[i].peak < layer[best].peak)
        best = i;
    result.peak = layer.empty() ? 0 : layer[best].peak;
    result.order = reconstruct(int(best));
    result.provedOptimal = exact;
    result.method = exact ? "exact-dp" : "beam";
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

  bool allPredsDone(const Key &done, int o) const {
    for (int p : facts.preds[o])
      if (!has(done, p))
        return false;
    return true;
  }

  // The ready list after running o: o leaves, successors whose last
  // predecessor was o join. Kept sorted so equal sets compare equal.
  std::vector<int> readyAfter(const State &s, const Key &done, int o) const {
    std::vector<int> next;
    next.reserve(s.ready.size() + facts.succs[o].size());
    for (int r : s.ready)
      if (r != o)
        next.push_back(r);
    for (int succ : facts.succs[o])
      if (allPredsDone(done, succ))
        next.push_back(succ);
    std::sort(next.begin(), next.end());
    return next;
  }

  // Resident bytes after running o from the set done (o not yet in it).
  uint64_t residentAfter(const State &s, int o) const {
    uint64_t bytes = s.resident;
    for (int t : facts.outputs[o])
      if (facts.keep[t] || !facts.consumers[t].empty())
        bytes += graph.tensorSizes[t];
    for (int t : facts.inputs[o]) {
      if (facts.keep[t])
        continue;
      bool lastUse = true;
      for (int c : facts.consumers[t])
        if (c != o && !has(s.done, c))
          lastUse = false;
      if (lastUse)
        bytes -= graph.tensorSizes[t];
    }
    return bytes;
  }

  uint64_t stepBytes(const State &s, int o) const {
    uint64_t bytes = s.resident + graph.ops[o].scratch;
    for (int t : facts.outputs[o])
      bytes += graph.tensorSizes[t];
    return bytes;
  }

  std::vector<State> expand(const std::vector<State> &layer) const {
    std::vector<State> next;
    std::unordered_map<Key, size_t, KeyHash> index;
    for (size_t i = 0; i < layer.size(); ++i) {
      const State &s = layer[i];
      for (int o : s.ready) {
        State t;
        t.done = s.done;
        set(t.done, o);
        t.peak = std::max(s.peak, stepBytes(s, o));
        t.resident = residentAfter(s, o);
        t.parent = int(i);
        t.op = o;
        auto [it, inserted] = index.try_emplace(t.done, next.size());
        if (!inserted && t.peak >= next[it->second].peak)
          continue;
        t.ready = readyAfter(s, t.done, o);
        if (inserted)
          next.push_back(std::move(t));
        else
          next[it->second] = std::move(t);
      }
    }
    return next;
  }

  void keepMostPromising(std::vector<State> &next) const {
    std::stable_sort(next.begin(), next.end(), [](const State &a, const State &b) {
      if (a.peak != b.peak)
        return a.peak < b.peak;
      return a.resident < b.resident;
    });
    next.resize(options.maxStates);
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
  // Per layer, per state: (parent index, op). Keys are dropped once used.
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
  if (!found.order.empty() && found.peak < givenPeak)
    return found;
  if (!found.order.empty() && found.peak == givenPeak && found.provedOptimal) {
    // Equal peaks: keep the caller's order, it is the least surprising.
    return {initialOrder, givenPeak, true, "given"};
  }
  return {initialOrder, givenPeak, false, "given"};
}

} // namespace bundlefit::planner
