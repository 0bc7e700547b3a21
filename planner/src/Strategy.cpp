//===- Strategy.cpp - What the planner does, in the order it does it ------===//
//
//   1. TFLM's greedy pass (Greedy.cpp) when the work covers it, so that no
//      plan is worse than TFLM's planner, and the bottom-left placement
//      (BottomLeft.cpp), O(n log n) whatever the lifetimes, when half the
//      work left covers it or nothing was placed. With a capacity under the
//      live-peak bound the answer is "does not fit", proven, at once.
//   2. Glow's greedy order, begun only while half the work left covers it.
//   3. Unless the plan meets the bound (or fits a capacity it was only asked
//      to fit), the problem is split into sections where no item crosses
//      (Sections.h): the arena is the largest section's, so each only has
//      to reach a target, never its own minimum. With a capacity every
//      section is first brought under it; then the largest go lower in
//      turn, towards the highest floor anyone has, bisecting upwards:
//        - a section of up to kMostSearchItems items by the exact search
//          (Search.h), a node limit per target that grows fourfold per
//          round, so an unreachable floor does not take every node;
//        - a larger one, where the search proves nothing and ejection
//          alone ends lower, by ejection
//          (EjectionRepair.h) from its critical items placed first
//          (CriticalFirst.h), a fixed number of moves per target.
//      Each section gets an equal share of the work still left.
//
// Everything is counted in work units (Budget.h), so where the work, not
// the clock, ends a step the plan does not depend on the machine's load.
// planner/README.md says why each step is there and what leaving it out
// costs (bench_planner --ablation).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/planner/Planner.h"

#include "Budget.h"
#include "CriticalFirst.h"
#include "EjectionRepair.h"
#include "Placement.h"
#include "Search.h"
#include "Sections.h"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <memory>
#include <numeric>

namespace bundlefit::planner {

namespace {
using namespace detail;

// Work units the bottom-left placement costs per sortUnits(n): 0.085 s of
// CPU for 10^5 buffers, 1.4 s for 10^6 (with Budget's scaling for size).
constexpr uint64_t kBottomLeftUnits = 24;
// Search nodes per item the first bisection round gives each target (a
// whole search's first round robin spends 2 per item and preorder).
constexpr uint64_t kFirstNodesPerItem = 8;
// Moves per ejection search: one that reaches its target on 10^5
// network-like buffers takes up to a few thousand. Each round of the
// descent that closes its gap without reaching the floor is followed by one
// with four times the moves, up to kMostEjectionMoves.
constexpr uint64_t kEjectionMoves = 8192;
constexpr uint64_t kMostEjectionMoves = 8192 << 8;
// The first ejection search from the critical-first start aims at the
// floor plus this fraction of the gap to it (straight to the floor fails
// more often; halving the gap reaches less).
constexpr uint64_t kFirstEjectionStep = 20;
// Then each aims this fraction of the gap under the best placement: on the
// tuning seeds, 1/16 ends lower than halving the gap on 11 of 12 perfect
// packings of 10^4 buffers and 2 of 5 network-like problems of 10^5 (equal
// on the others).
constexpr uint64_t kDescent = 16;
// A placement that is only a start (the bottom-left after TFLM's pass, the
// other greedy passes, the critical-first start) is begun only when it can
// finish within 1/kStartShare of what is left: one that takes the rest
// leaves nothing to improve it. At 10^6 network-like buffers and 5 s,
// beginning each when "the work left covers it" spent 1.4 s on a
// bottom-left placement 2% above TFLM's, then ran out inside the
// critical-first start: 0.9-1.7% above the bound, where ejection from
// TFLM's placement with that time ends within 0.1%.
constexpr uint64_t kStartShare = 2;

class Planner {
public:
  Planner(const Problem &problem, const PlanOptions &options)
      : budget(options.exact.timeBudgetSeconds, options.exact.workLimit, options.exact.clockEnds),
        problem(problem), options(options), exact(options.exact), items(buildItems(problem)),
        bound(lowerBoundOf(problem, items)),
        nodesLeft(exact.nodeLimit ? exact.nodeLimit : UINT64_MAX) {
    budget.scaleForItems(items.items.size());
  }

  Plan run() {
    firstPlacement();
    if (exact.capacity != 0 && exact.capacity < bound) {
      provedInfeasible = true; // The bound is a proof: no search needed.
      return finish();
    }
    if (!finished())
      greedyPasses();
    if (!finished() && options.useExact)
      improveSections();
    return finish();
  }

private:
  struct SectionState {
    std::vector<uint64_t> offsets; ///< Per local item.
    uint64_t arena, provenLow;     ///< Nothing under provenLow fits (proved).
    uint64_t nodesPerTarget = 0;   ///< The bisection's next round's limit.
  };
  struct Checkpoint {
    std::vector<uint64_t> offsets;
    uint64_t arena;
    std::string algorithm;
  };

  bool skipped(const std::string &step) const { return options.skip.count(step) != 0; }
  bool fits() const { return exact.capacity != 0 && arena <= exact.capacity; }
  bool finished() const {
    return arena <= bound || (fits() && exact.stopAtCapacity) || budget.exhausted();
  }

  // 1. TFLM's pass first when the work covers it, so that no plan is worse
  // than TFLM's planner (at 10^6 network-like buffers the two first
  // placements together take most of a 5 s limit, and TFLM's order ends
  // 2-5% lower there); then the bottom-left placement when half the work
  // left covers it, or whatever the limit when nothing was placed.
  void firstPlacement() {
    stage = "first placement";
    bool known = exact.capacity != 0 && exact.capacity < bound; // "Does not fit", proven.
    if (!known)
      tryGreedy(greedyOrders().front());
    if (skipped("bottom-left")) {
      if (offsets.empty()) { // For the ablation: TFLM's pass, whatever it costs.
        Budget unlimited(1e7);
        greedyPass(items, GreedyOrder::BySize, offsets, unlimited);
        algorithm = greedyName(GreedyOrder::BySize);
        arena = arenaOf(items, offsets);
      }
      return;
    }
    uint64_t cost = kBottomLeftUnits * sortUnits(items.items.size());
    if (!offsets.empty() && (arena <= bound || !budget.covers(cost, kStartShare)))
      return;
    // With nothing placed it runs whatever the work left: where that runs
    // out part way, the rest goes on shelves above it (valid, not tight), so a
    // tiny limit is still a limit. A capacity under the bound is a proof
    // already: the placement is only the answer's plan, so it is not cut.
    std::vector<uint64_t> placed;
    bool whole = known ? (placed = placeBottomLeft(items), true)
                       : placeBottomLeft(items, placed, &budget, cost);
    uint64_t placedArena = arenaOf(items, placed);
    if (offsets.empty() || placedArena <= arena) { // Ties: the placement the search knows best.
      offsets = std::move(placed);
      arena = placedArena;
      algorithm = whole ? "bottom-left" : "bottom-left+shelves";
    }
  }

  // 2. The other greedy passes.
  void greedyPasses() {
    stage = "greedy passes";
    const std::vector<GreedyOrder> &all = greedyOrders();
    for (auto g = std::next(all.begin()); g != all.end() && !finished(); ++g)
      if (!tryGreedy(*g, kStartShare))
        break;
  }

  // One greedy pass, not begun when the work left would not cover it
  // (counted beforehand from the pairs of items that meet in time: a pass
  // cut short places nothing); kept when lower. False when the work ran out.
  bool tryGreedy(GreedyOrder order, uint64_t share = 1) {
    std::string name = greedyName(order);
    if (!budget.covers(orderUnits(items, order) + passUnits(items), share))
      return false;
    if (skipped(name))
      return true;
    std::vector<uint64_t> placed;
    if (!greedyPass(items, order, placed, budget))
      return false;
    uint64_t placedArena = arenaOf(items, placed);
    if (offsets.empty() || placedArena < arena) {
      offsets = std::move(placed);
      arena = placedArena;
      algorithm = name;
    }
    return true;
  }

  // 3.
  void improveSections() {
    sections = splitIntoSections(items);
    for (const Section &s : sections) {
      std::vector<uint64_t> local;
      for (int g : s.global)
        local.push_back(offsets[g]);
      uint64_t sectionArena = arenaOf(s.items, local);
      state.push_back({std::move(local), sectionArena, s.lowerBound});
    }
    indexes.resize(sections.size());
    std::string before = algorithm;
    // A capacity not met (proved or not) still gets the lowest plan the
    // work left can give.
    bool fit = exact.capacity == 0 || fits() || fitCapacity();
    if (!(fit && exact.stopAtCapacity))
      minimise();
    gather(before);
  }

  // Every section under the capacity; false when one is not (proved or not).
  bool fitCapacity() {
    std::vector<size_t> over;
    for (size_t c = 0; c < sections.size(); ++c)
      if (state[c].arena > exact.capacity)
        over.push_back(c);
    for (size_t k = 0; k < over.size(); ++k) {
      uint64_t held = budget.begin(budget.left() / (over.size() - k));
      size_t c = over[k];
      // A small section by the search alone (a round of ejection before it
      // changed no result of the ablation benchmark); it can also prove the
      // capacity out of reach.
      if (large(c))
        repairLarge(c, exact.capacity, exact.capacity);
      else if (search(c, exact.capacity, UINT64_MAX) == Outcome::Infeasible)
        provedInfeasible = true;
      budget.end(held);
      if (state[c].arena > exact.capacity)
        return false;
    }
    return true;
  }

  // The largest sections go lower while work is left: none needs to go
  // under the highest floor anyone has.
  void minimise() {
    uint64_t floor = 0;
    for (const SectionState &s : state)
      floor = std::max(floor, s.provenLow);
    std::vector<size_t> order(sections.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return state[a].arena > state[b].arena; });
    for (size_t k = 0; k < order.size() && !budget.exhausted(); ++k) {
      size_t c = order[k];
      if (state[c].arena <= floor)
        break; // Sorted: every later section is at or under the floor too.
      size_t sharers = 0;
      for (size_t j = k; j < order.size(); ++j)
        sharers += state[order[j]].arena > floor;
      uint64_t held = budget.begin(budget.left() / sharers);
      if (large(c))
        repairLarge(c, floor, 0);
      else
        repairWhole(c, floor);
      budget.end(held);
      floor = std::max(floor, state[c].arena);
    }
  }

  // Left out ("search", for the ablation), the search runs nowhere: every
  // section is then repaired the way a large one is.
  bool large(size_t c) const {
    return sections[c].items.items.size() > kMostSearchItems || skipped("search");
  }

  // A whole section: from its critical items placed first, then the
  // bisection; the better of that and where it was stays.
  void repairWhole(size_t c, uint64_t floor) {
    Checkpoint was = checkpoint(c);
    startCriticalFirst(c, floor);
    // The bisection's first round, with an eighth of the share at most:
    // often the answer, and a proof, in a few nodes.
    uint64_t held = budget.begin(budget.left() / 8);
    bisect(c, floor, 1);
    budget.end(held);
    // Half of what is left at most: the search after it is the only one
    // to prove.
    uint64_t rest = budget.begin(budget.left() / 2);
    descend(c, floor);
    budget.end(rest);
    bisect(c, floor);
    if (state[c].arena > was.arena)
      restore(c, std::move(was));
  }

  // A large section: from its critical items placed first, one ejection
  // search towards the floor plus 1/kFirstEjectionStep of the gap (its
  // peaks are packed: a long way down is within reach), then the descent
  // from the best placement. `stopAt`: done once the section is there (a
  // capacity to fit), 0 for none.
  void repairLarge(size_t c, uint64_t floor, uint64_t stopAt) {
    Checkpoint was = checkpoint(c);
    uint64_t low = std::max(state[c].provenLow, floor);
    if (startCriticalFirst(c, floor) && state[c].arena > low && !skipped("ejection"))
      ejectOnce(c, low + (state[c].arena - low) / kFirstEjectionStep, state[c].offsets, nullptr);
    if (stopAt == 0 || state[c].arena > stopAt)
      descend(c, floor);
    if (state[c].arena > was.arena)
      restore(c, std::move(was));
  }

  // The section's critical items placed first and the rest around them,
  // then ejection with the critical items held; kept even when above the
  // incumbent (the caller keeps the better at the end): its peaks are
  // packed, which is what later moves cannot undo. Not begun when half
  // the work left would not cover one greedy pass over the section and its
  // ordering (a spend that fails ends the work).
  bool startCriticalFirst(size_t c, uint64_t floor) {
    if (skipped("critical-first"))
      return false;
    SectionState &s = state[c];
    uint64_t target = std::max(s.provenLow, floor);
    if (s.arena <= target ||
        !budget.covers(passUnits(sections[c].items) +
                           orderUnits(sections[c].items, GreedyOrder::MaxLiveBySize),
                       kStartShare))
      return false;
    stage = "critical-first start towards " + std::to_string(target);
    std::vector<uint64_t> placed;
    std::vector<char> critical;
    if (!placeCriticalFirst(sections[c].items, target, budget, placed, critical,
                            !skipped("search")))
      return false;
    s.offsets = std::move(placed);
    s.arena = arenaOf(sections[c].items, s.offsets);
    note("critical-first");
    // A quarter of what is left: the held items can stop it short of the
    // floor, and the moves after it need the rest.
    uint64_t rest = budget.begin(budget.left() / 4);
    descend(c, floor, &critical, kEjectionMoves);
    budget.end(rest);
    return true;
  }

  // Brings section c down by targets: the floor first, then bisecting
  // upwards. Each target gets a node limit, and the bisection is repeated
  // with four times the limit while one hit it: a plan below the start
  // comes early, and the floor is still reached (or proved out of reach)
  // where it was, a little later.
  // `rounds`: at most this many (a later call goes on from the next).
  void bisect(size_t c, uint64_t floor, uint64_t rounds = UINT64_MAX) {
    SectionState &s = state[c];
    if (s.nodesPerTarget == 0)
      s.nodesPerTarget = kFirstNodesPerItem * std::max<size_t>(sections[c].items.items.size(), 64);
    for (bool limited = true; limited && rounds-- > 0 && !budget.exhausted();) {
      limited = false;
      uint64_t lo = std::max(s.provenLow, floor);
      for (bool first = true; lo < s.arena && !budget.exhausted(); first = false) {
        uint64_t target = first ? lo : lo + (s.arena - 1 - lo) / 2;
        Outcome result = search(c, target, s.nodesPerTarget);
        if (result == Outcome::Infeasible || result == Outcome::Unsolved)
          lo = target + 1;
        limited |= result == Outcome::Unsolved;
      }
      s.nodesPerTarget = s.nodesPerTarget > UINT64_MAX / 4 ? UINT64_MAX : s.nodesPerTarget * 4;
    }
  }

  // One whole search of section c for a placement within `target`.
  Outcome search(size_t c, uint64_t target, uint64_t perTarget) {
    SectionState &s = state[c];
    if (s.arena <= target)
      return Outcome::Found;
    if (target < s.provenLow)
      return Outcome::Infeasible;
    stage = "search towards " + std::to_string(target);
    const Items &local = sections[c].items;
    uint64_t nodes = std::min(perTarget, nodesLeft);
    std::vector<uint64_t> placed;
    Outcome result = searchCapacity(local, target, budget, nodes, placed);
    searchNodes += nodes;
    nodesLeft -= nodes;
    if (nodesLeft == 0 && result == Outcome::Unsolved) {
      budget.stopForNodes();
      result = Outcome::OutOfBudget;
    }
    if (result == Outcome::Infeasible)
      s.provenLow = std::max(s.provenLow, target + 1);
    if (result == Outcome::Found)
      adopt(c, std::move(placed), "exact");
    return result;
  }

  // One ejection search over section c (EjectionRepair.h) for a placement
  // within `target`, from `start`: first with long-lived items kept where
  // they are (cheap moves), then with every item as movable. `failedUpTo`:
  // on a failure, every target up to this one would fail the same way.
  bool ejectOnce(size_t c, uint64_t target, const std::vector<uint64_t> &start,
                 const std::vector<char> *held, uint64_t moves = kEjectionMoves,
                 uint64_t *failedUpTo = nullptr) {
    uint64_t same = UINT64_MAX;
    stage = "ejection towards " + std::to_string(target);
    if (!indexes[c]) { // Built once per section: a sort.
      if (!budget.spend(sortUnits(sections[c].items.items.size())))
        return false;
      indexes[c] = std::make_unique<ItemsByTime>(sections[c].items);
    }
    for (bool weighLifetime : {true, false}) {
      std::vector<uint64_t> moved = start;
      uint64_t upTo = target;
      Outcome result =
          repairByEjection(sections[c].items, moved, target,
                           {moves, weighLifetime, held, indexes[c].get()}, budget, &upTo);
      if (result == Outcome::Found) {
        adopt(c, std::move(moved), "ejection");
        return true;
      }
      if (result == Outcome::OutOfBudget)
        return false;
      same = std::min(same, upTo);
    }
    if (failedUpTo)
      *failedUpTo = same;
    return false;
  }

  // Ejection searches from the best placement down towards the floor, each
  // aiming 1/kDescent of the gap under it: after a success under the new
  // best, after a failure at 1/kDescent of what is left of the gap
  // (nothing is proved). When the gap is closed that way, again with four
  // times the moves, while work is left. `held`: items that may not move.
  // A target that the last failure's moves would have failed the same way
  // (from the same placement, with as many moves) counts as failed
  // without them: on power-of-two sizes the steps after a failure often
  // fall there, and each repeat cost what the failure did.
  void descend(size_t c, uint64_t floor, const std::vector<char> *held = nullptr,
               uint64_t mostMoves = kMostEjectionMoves) {
    if (skipped("ejection"))
      return;
    SectionState &s = state[c];
    for (uint64_t moves = kEjectionMoves; moves <= mostMoves; moves *= 4) {
      uint64_t low = std::max(s.provenLow, floor);
      uint64_t failedFrom = 0, failedUpTo = 0; // failedFrom: the arena it started from.
      while (s.arena > low && !budget.exhausted()) {
        uint64_t target = s.arena - (s.arena - low) / kDescent - 1;
        uint64_t upTo = target;
        bool known = failedFrom == s.arena && target <= failedUpTo;
        if (known || !ejectOnce(c, target, s.offsets, held, moves, &upTo))
          low = target + 1;
        if (!known && s.arena > target) // The attempt failed.
          failedFrom = s.arena, failedUpTo = upTo;
      }
      if (s.arena <= std::max(s.provenLow, floor) || budget.exhausted())
        return;
    }
  }

  void adopt(size_t c, std::vector<uint64_t> placed, const char *how) {
    uint64_t placedArena = arenaOf(sections[c].items, placed);
    if (placedArena >= state[c].arena)
      return;
    state[c].offsets = std::move(placed);
    state[c].arena = placedArena;
    note(how);
  }

  void note(const std::string &how) {
    if (sectionAlgorithm.find(how) == std::string::npos)
      sectionAlgorithm += (sectionAlgorithm.empty() ? "" : "+") + how;
  }

  Checkpoint checkpoint(size_t c) const {
    return {state[c].offsets, state[c].arena, sectionAlgorithm};
  }
  void restore(size_t c, Checkpoint &&was) {
    state[c].offsets = std::move(was.offsets);
    state[c].arena = was.arena;
    sectionAlgorithm = std::move(was.algorithm);
  }

  // The sections' placements back into the whole problem's.
  void gather(const std::string &before) {
    uint64_t low = 0;
    arena = 0;
    for (size_t c = 0; c < sections.size(); ++c) {
      for (size_t i = 0; i < sections[c].global.size(); ++i)
        offsets[sections[c].global[i]] = state[c].offsets[i];
      arena = std::max(arena, state[c].arena);
      low = std::max(low, state[c].provenLow);
    }
    provedBySearch = low >= arena;
    algorithm = sectionAlgorithm.empty() ? before : sectionAlgorithm;
  }

  Plan finish() {
    Plan plan = makePlan(problem, items, offsets, algorithm, bound);
    plan.provedOptimal = plan.arenaSize <= bound || provedBySearch;
    plan.provedInfeasible = provedInfeasible;
    plan.sections = sections.size();
    plan.searchNodes = searchNodes;
    plan.workUnits = budget.spent();
    bool settled = plan.provedOptimal || provedInfeasible || (fits() && exact.stopAtCapacity);
    static const char *const kWhy[] = {"", "work", "time", "nodes"};
    if (budget.exhausted() && !settled) {
      plan.stoppedBy = kWhy[int(budget.limit())];
      plan.stoppedIn = stage;
    }
    plan.budgetExhausted = !plan.stoppedBy.empty();
    return plan;
  }

  Budget budget; // First: the clock starts before anything is built.
  const Problem &problem;
  const PlanOptions &options;
  const ExactOptions &exact;
  Items items;
  uint64_t bound;
  uint64_t nodesLeft, searchNodes = 0;
  std::vector<uint64_t> offsets; ///< Per item.
  uint64_t arena = 0;
  std::string algorithm, sectionAlgorithm, stage;
  std::vector<Section> sections;
  std::vector<SectionState> state;
  std::vector<std::unique_ptr<ItemsByTime>> indexes; ///< Per section, for ejection.
  bool provedInfeasible = false, provedBySearch = false;
};
} // namespace

Plan planMemory(const Problem &problem, const PlanOptions &options) {
  assert(!checkProblem(problem) && "planMemory needs a well-formed problem");
  Plan plan = Planner(problem, options).run();
#ifndef NDEBUG
  std::optional<std::string> error = checkPlan(problem, plan);
  assert(!error && "planMemory produced an invalid plan");
#endif
  return plan;
}

Plan planExact(const Problem &problem, const ExactOptions &options) {
  PlanOptions all;
  all.exact = options;
  return planMemory(problem, all);
}

const char *proofOf(const Plan &plan, uint64_t capacity) {
  if (capacity != 0 && plan.arenaSize > capacity)
    return plan.provedInfeasible || plan.provedOptimal ? "proven not to fit" : "best effort";
  if (plan.provedOptimal)
    return "proven optimal";
  return capacity != 0 ? "proven to fit" : "best effort";
}

} // namespace bundlefit::planner
