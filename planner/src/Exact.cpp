//===- Exact.cpp - Meet a capacity, then minimise, section by section -----===//
//
// The best greedy plan is the incumbent, so the answer is never worse. The
// problem is split into sections (no item crosses from one to the next);
// the arena is the largest section's, so each section only has to reach a
// target, never its own minimum:
//   1. With a capacity, every section above it is brought under it: first
//      by the other greedy strategies on that section alone, then by search.
//   2. Then, while time is left, the largest sections go lower: the target
//      starts at the highest floor anyone has (a section's own bound, or an
//      arena another section could not beat) and bisects upwards.
// Each section searched gets an equal share of the time still left, so one
// hard section cannot starve the others; one the search cannot finish keeps
// its best greedy placement. A section not at its floor starts from its
// critical items placed first (CriticalFirst.h), and keeps the greedy
// placement if that start never catches up.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/planner/Exact.h"
#include "bundlefit/planner/Greedy.h"

#include "CriticalFirst.h"
#include "EjectionRepair.h"
#include "ExactSearch.h"
#include "GreedyInternal.h"
#include "LargeStack.h"
#include "PerturbedGreedy.h"
#include "Sections.h"
#include "WindowRepair.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>

namespace bundlefit::planner {

namespace {
using detail::Outcome;
using Clock = std::chrono::steady_clock;

// Search nodes per item the first bisection gives each target (a whole
// search's first round robin spends 2 per item and preorder).
constexpr uint64_t kFirstNodesPerItem = 8;
// Random-order greedy passes over a large section's top window before its
// search (PerturbedGreedy.h); about 0.3 s at 10^5 network-like buffers. More
// is not better: at 96, seed 3's window search no longer reached the bound
// from the placement they left (+0.90% at 5 s; seed 43 +3.07% -> +2.50%).
constexpr uint64_t kFirstPerturbTries = 24;
// Moves each ejection search (EjectionRepair.h) gets per target: a search
// that reaches a target on 10^5 network-like buffers takes 50 to 7,700; one
// that fails costs about 1.2 s at this limit when long-lived items move.
constexpr uint64_t kEjectionMoves = 8192;
// Where windows do not reach a large section's floor, the first ejection
// search starts from the section's start placement and aims straight at the
// floor plus 1/20 of its gap; then ejection searches from the best
// placement halve the gap while they succeed (repairLarge). The starting
// placement matters more than the moves: before the critical-first start,
// on seed 43 of 10^5 network-like buffers the search from the greedy plan
// (+5.19%) reached +0.03%, while from the random-order passes' placement
// (+3.07%) it did not get under +1.53% in 40,000 moves; on seed 1 it was
// the other way round. Halving from the greedy plan left seed 43 at +2.51%,
// and 1/10 at +0.50%.
constexpr uint64_t kFirstEjectionStep = 20;

class SectionSolver {
public:
  SectionSolver(const Problem &problem, const ExactOptions &options, const Plan &incumbent,
                double greedySeconds, Clock::time_point deadline)
      : problem(problem), options(options), items(detail::buildItems(problem)), deadline(deadline) {
    // At least two passes made the incumbent; a section's pass costs its share.
    passPerItem = greedySeconds / 2 / double(std::max<size_t>(items.items.size(), 1));
    budget.nodesLeft = options.nodeLimit ? options.nodeLimit : UINT64_MAX;
    itemOffsets.assign(items.items.size(), 0);
    for (size_t b = 0; b < problem.buffers.size(); ++b)
      itemOffsets[items.itemOfBuffer[b]] = incumbent.offsets[b] - items.offsetInItem[b];
    sections = detail::splitIntoSections(items);
    for (detail::Section &s : sections) {
      std::vector<uint64_t> offsets;
      for (int g : s.global)
        offsets.push_back(itemOffsets[g]);
      uint64_t arena = detail::arenaOf(s.items, offsets);
      // A large section is repaired from its placement by windows
      // (WindowRepair.h); whole greedy passes over it would only cost time.
      // The only section is the problem the incumbent's passes ran on.
      bool skipGreedy = s.items.items.size() > detail::kWholeSearchItems || sections.size() == 1;
      state.push_back({std::move(offsets), arena, s.lowerBound, skipGreedy});
    }
  }

  /// Phase 1: every section under the capacity. False when one is not.
  bool fitCapacity(Plan &plan) {
    std::vector<size_t> over;
    for (size_t c = 0; c < sections.size(); ++c)
      if (state[c].arena > options.capacity)
        over.push_back(c);
    for (size_t k = 0; k < over.size(); ++k) {
      Clock::time_point until = shareOfTimeLeft(over.size() - k);
      // Large sections only: on MiniMalloc's A-F (whole sections) the
      // search fits the capacity sooner from the greedy placement (1.5 s
      // for all six against 2.4 s).
      if (sections[over[k]].items.items.size() > detail::kWholeSearchItems &&
          fitCriticalFirst(over[k], options.capacity, until))
        continue;
      bool hitLimit = false;
      Outcome result = improve(over[k], options.capacity, until, UINT64_MAX, hitLimit);
      if (result == Outcome::Infeasible)
        plan.provedInfeasible = true;
      if (result != Outcome::Found)
        return false;
    }
    return true;
  }

  /// Phase 2: lower the largest sections while time is left.
  void minimise() {
    uint64_t floor = 0;
    for (const SectionState &s : state)
      floor = std::max(floor, s.provenLow);
    std::vector<size_t> order(sections.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return state[a].arena > state[b].arena; });
    for (size_t k = 0; k < order.size(); ++k) {
      SectionState &s = state[order[k]];
      if (s.arena <= floor)
        break; // Sorted: every later section is at or under the floor too.
      size_t left = 0;
      for (size_t j = k; j < order.size(); ++j)
        left += state[order[j]].arena > floor;
      Clock::time_point until = shareOfTimeLeft(left);
      bool windows = sections[order[k]].items.items.size() > detail::kWholeSearchItems;
      if (windows)
        repairLarge(order[k], floor, until);
      else
        repairWhole(order[k], floor, until);
      floor = std::max(floor, s.arena);
    }
  }

  // A section repaired by windows (more than kWholeSearchItems items):
  //   0. the critical-first start (startCriticalFirst);
  //   1. a few random-order greedy passes over its top window
  //      (PerturbedGreedy.h), a fixed number so the search starts from the
  //      same placement on any machine;
  //   2. the window bisection for a third of the share: where windows reach
  //      the floor they mostly do so in about a second (10^5 network-like
  //      buffers), and the result then does not depend on the machine. A
  //      third, not a half (measured before step 0 existed): seeds 13 and
  //      17 then end +0.33% and +0.23%, not
  //      +1.45% and +1.96%, while seeds 2 and 18 end +0.12% and +0.07%, not
  //      at the bound (at --time-limit 5);
  //   3. if the floor is not reached, ejection searches (EjectionRepair.h):
  //      one from the start placement, then halving the gap from the best
  //      placement while they succeed (where no window reaches a target in
  //      seconds, seeds 1 and 43 before step 0 existed, the search would
  //      otherwise spend the whole share: +1.42% and +3.07% at
  //      --time-limit 5);
  //   4. the bisection again, and random-order passes with the time left.
  void repairLarge(size_t c, uint64_t floor, Clock::time_point until) {
    SectionState &s = state[c];
    Checkpoint incumbent = checkpoint(c);
    startCriticalFirst(c, floor, until);
    std::vector<uint64_t> start = s.offsets;
    uint64_t startArena = s.arena;
    perturb(c, floor, until, kFirstPerturbTries);
    Clock::time_point now = Clock::now();
    bool wasOutOfBudget = outOfBudget;
    bisect(c, floor, now < until ? now + (until - now) / 3 : until);
    // Running out of the third is not running out of the limit.
    outOfBudget = wasOutOfBudget || Clock::now() >= until;
    if (s.arena > std::max(s.provenLow, floor)) {
      eject(c, floor, until, kFirstEjectionStep, &start, startArena);
      eject(c, floor, until, 2, nullptr, 0);
      bisect(c, floor, until);
    }
    perturb(c, floor, until, 0);
    if (s.arena > incumbent.arena) // The critical-first start never caught up.
      restore(c, std::move(incumbent));
  }

  // A section searched whole starts from its critical items too
  // (startCriticalFirst), then the bisection; the better of that and the
  // greedy placement stays.
  void repairWhole(size_t c, uint64_t floor, Clock::time_point until) {
    Checkpoint incumbent = checkpoint(c);
    startCriticalFirst(c, floor, until);
    bisect(c, floor, until);
    if (state[c].arena > incumbent.arena)
      restore(c, std::move(incumbent));
  }

  // Section c under `capacity` from the critical-first start, else as it
  // was (the window repair goes on from the greedy placement).
  bool fitCriticalFirst(size_t c, uint64_t capacity, Clock::time_point until) {
    Checkpoint incumbent = checkpoint(c);
    startCriticalFirst(c, capacity, until);
    if (state[c].arena <= capacity)
      return true;
    restore(c, std::move(incumbent));
    return false;
  }

  // Section c starts from its critical items placed first (CriticalFirst.h)
  // and lowered by ejection searches with them held, even when that is
  // above the greedy placement (repairLarge keeps the better of the two at
  // the end): its peaks are packed, which is what the rest cannot undo.
  void startCriticalFirst(size_t c, uint64_t floor, Clock::time_point until) {
    SectionState &s = state[c];
    // About one greedy pass over the section: not started when it would end
    // past `until` at the incumbent's pace (10^6 buffers at the default 5 s
    // limit: the greedy passes leave no time for it).
    Clock::duration pass = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(passPerItem * double(sections[c].items.items.size())));
    if (Clock::now() + pass >= until)
      return;
    std::vector<uint64_t> offsets;
    std::vector<char> critical;
    if (!detail::placeCriticalFirst(sections[c].items, std::max(s.provenLow, floor), until, offsets,
                                    critical))
      return;
    s.offsets = std::move(offsets);
    s.arena = detail::arenaOf(sections[c].items, s.offsets);
    improved = criticalFirst = true;
    eject(c, floor, until, 2, nullptr, 0, &critical);
  }

  // Brings section c down by targets: the floor first, then bisecting
  // upwards, until `until`.
  void bisect(size_t c, uint64_t floor, Clock::time_point until) {
    SectionState &s = state[c];
    // A whole search at an unreachable floor would spend all the time
    // before any higher target is tried, and end with the greedy plan. So
    // each target gets a node limit (kFirstNodesPerItem per item) and the
    // bisection is repeated with four times the limit while one hit it:
    // a plan below the greedy one comes early, and the floor is still
    // reached (or proved out of reach) where it was before, a little later.
    // Nodes, not seconds: the same result on any machine.
    uint64_t perTarget = kFirstNodesPerItem * std::max<size_t>(sections[c].items.items.size(), 64);
    bool limited = true;
    while (limited) {
      limited = false;
      uint64_t lo = std::max(s.provenLow, floor);
      bool first = true;
      while (lo < s.arena) {
        // The floor first (usually the answer), then bisect upwards.
        uint64_t target = first ? lo : lo + (s.arena - 1 - lo) / 2;
        first = false;
        bool hitLimit = false;
        Outcome result = improve(c, target, until, perTarget, hitLimit);
        if (result == Outcome::OutOfBudget)
          return; // Out of time: no next round either.
        // Unsolved proves nothing, but a window that gave up at this
        // target would give up again: go higher.
        if (result == Outcome::Infeasible || result == Outcome::Unsolved)
          lo = target + 1;
        limited |= hitLimit;
      }
      perTarget = perTarget > UINT64_MAX / 4 ? UINT64_MAX : perTarget * 4;
    }
  }

  Plan finish(Plan incumbent) {
    incumbent.sections = sections.size();
    incumbent.searchNodes = budget.nodesUsed;
    incumbent.budgetExhausted |= outOfBudget;
    if (!improved) {
      incumbent.provedOptimal = incumbent.arenaSize == incumbent.lowerBound || provedOptimal();
      return incumbent;
    }
    for (size_t c = 0; c < sections.size(); ++c)
      for (size_t i = 0; i < sections[c].global.size(); ++i)
        itemOffsets[sections[c].global[i]] = state[c].offsets[i];
    Plan plan =
        detail::makePlan(problem, items, itemOffsets, algorithmName(), incumbent.lowerBound);
    plan.provedOptimal = plan.arenaSize == plan.lowerBound || provedOptimal();
    plan.provedInfeasible = incumbent.provedInfeasible;
    plan.sections = incumbent.sections;
    plan.searchNodes = incumbent.searchNodes;
    plan.budgetExhausted = incumbent.budgetExhausted;
    if (Clock::now() >= deadline && !plan.provedOptimal)
      plan.budgetExhausted = true; // Found what it did, but the limit ended it.
    return plan;
  }

  // What placed the sections that moved: the search (windows included),
  // random-order greedy passes over a window, ejection searches, or greedy
  // passes per section.
  std::string algorithmName() const {
    std::string name;
    for (auto [used, part] :
         {std::pair{criticalFirst, "critical-first"}, std::pair{searched, "exact"},
          std::pair{perturbed, "perturbed-greedy"}, std::pair{ejected, "ejection"}})
      if (used)
        name += (name.empty() ? "" : "+") + std::string(part);
    return name.empty() ? "greedy:per-section" : name;
  }

  bool timeLeft() const { return Clock::now() < deadline && budget.nodesLeft > 0; }

private:
  struct SectionState {
    std::vector<uint64_t> offsets; ///< Per local item.
    uint64_t arena;
    uint64_t provenLow; ///< Nothing below this fits the section (proved).
    bool greedyTried;   ///< The other greedy strategies ran on it alone.
  };

  // Nothing below a section's proven floor fits, so the whole arena cannot
  // go below the highest one.
  bool provedOptimal() const {
    uint64_t arena = 0, low = 0;
    for (const SectionState &s : state) {
      arena = std::max(arena, s.arena);
      low = std::max(low, s.provenLow);
    }
    return low >= arena;
  }

  Clock::time_point shareOfTimeLeft(size_t sharers) const {
    Clock::time_point now = Clock::now();
    if (now >= deadline)
      return deadline;
    return now + (deadline - now) / Clock::rep(std::max<size_t>(sharers, 1));
  }

  // Random-order greedy passes over section c's top window, towards the
  // floor, until `until` or `tries` of them (0: no count).
  void perturb(size_t c, uint64_t floor, Clock::time_point until, uint64_t tries) {
    SectionState &s = state[c];
    uint64_t low = std::max(s.provenLow, floor);
    if (s.arena <= low || Clock::now() >= until)
      return;
    std::vector<uint64_t> offsets = s.offsets;
    detail::perturbWindows(sections[c].items, offsets, low, {until, tries});
    uint64_t arena = detail::arenaOf(sections[c].items, offsets);
    if (arena > low && Clock::now() >= until)
      outOfBudget = true; // The clock ended the passes, not the floor.
    if (arena < s.arena) {
      s.offsets = std::move(offsets);
      s.arena = arena;
      improved = perturbed = true;
    }
  }

  // Ejection searches (EjectionRepair.h) over section c, each towards the
  // floor plus 1/step of the gap to it: first with long-lived items kept
  // where they are (cheap moves), then with every item as movable. After a
  // success the next target is lower again; after a failure it is half-way
  // back up (nothing is proved: the ejection floor rises only for these
  // searches). `from` (with arena `fromArena`): one search from that
  // placement, not from the best.
  void eject(size_t c, uint64_t floor, Clock::time_point until, uint64_t step,
             const std::vector<uint64_t> *from, uint64_t fromArena,
             const std::vector<char> *held = nullptr) {
    SectionState &s = state[c];
    uint64_t low = std::max(s.provenLow, floor);
    while (s.arena > low) {
      uint64_t target = low + ((from ? fromArena : s.arena) - low) / step;
      if (target >= s.arena)
        return; // The start is no better than the best.
      bool found = false;
      for (double exponent : {1.0, 0.0}) {
        std::vector<uint64_t> offsets = from ? *from : s.offsets;
        Outcome result = detail::repairByEjection(sections[c].items, offsets, target,
                                                  {kEjectionMoves, until, exponent, held});
        if (result == Outcome::OutOfBudget) {
          outOfBudget = true;
          return;
        }
        if (result == Outcome::Found) {
          s.offsets = std::move(offsets);
          s.arena = detail::arenaOf(sections[c].items, s.offsets);
          improved = ejected = found = true;
          break;
        }
      }
      if (from)
        return;
      if (!found)
        low = target + 1;
    }
  }

  // Brings section c to arena <= target: the greedy strategies first (once
  // per section), then the search until `until`, a whole search within
  // `nodes` (hitLimit: it stopped there; the result is then Unsolved).
  Outcome improve(size_t c, uint64_t target, Clock::time_point until, uint64_t nodes,
                  bool &hitLimit) {
    SectionState &s = state[c];
    const detail::Items &local = sections[c].items;
    if (!s.greedyTried) {
      s.greedyTried = true;
      // A pass is not interrupted, so none starts that would end past
      // `until` at the pace of the last one.
      Clock::duration pass = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(passPerItem * double(local.items.size())));
      for (const detail::GreedyStrategy &g : detail::greedyStrategies()) {
        Clock::time_point begin = Clock::now();
        if (s.arena <= target || begin + pass >= until)
          break;
        std::vector<uint64_t> offsets;
        if (!detail::placeItems(local, detail::orderItems(local, g.order), g.fit, offsets,
                                detail::PlaceLimits{&until}))
          break; // Cut by the clock: nothing placed counts.
        pass = Clock::now() - begin;
        uint64_t arena = detail::arenaOf(local, offsets);
        if (arena < s.arena) {
          s.offsets = std::move(offsets);
          s.arena = arena;
          improved = true;
        }
      }
    }
    if (s.arena <= target)
      return Outcome::Found;
    if (target < s.provenLow)
      return Outcome::Infeasible;
    if (Clock::now() >= until) {
      outOfBudget = true;
      return Outcome::OutOfBudget;
    }
    budget.deadline = until;
    budget.timedOut = false;
    std::vector<uint64_t> offsets;
    bool windows = local.items.size() > detail::kWholeSearchItems;
    if (windows)
      offsets = s.offsets; // Repaired in place, window by window.
    // The whole search spends from a copy capped at `nodes`; the shared
    // budget pays for what it used.
    detail::SearchBudget own = budget;
    if (!windows)
      own.nodesLeft = std::min(budget.nodesLeft, nodes);
    own.nodesUsed = 0;
    Outcome result = detail::runOnLargeStack(local.items.size(), [&] {
      return windows ? detail::repairByWindows(local, offsets, target, own)
                     : detail::searchCapacity(local, target, own, offsets);
    });
    budget.nodesLeft -= std::min(budget.nodesLeft, own.nodesUsed);
    budget.nodesUsed += own.nodesUsed;
    budget.timedOut = own.timedOut;
    if (result == Outcome::OutOfBudget && !own.timedOut && budget.nodesLeft > 0) {
      hitLimit = true;
      result = Outcome::Unsolved; // Nothing proved; a larger limit may do.
    }
    if (windows && result != Outcome::Found) {
      // A partial repair is still a valid placement, and no higher.
      uint64_t arena = detail::arenaOf(local, offsets);
      if (arena < s.arena) {
        s.offsets = std::move(offsets);
        s.arena = arena;
        improved = searched = true;
      }
    }
    if (result == Outcome::OutOfBudget) {
      outOfBudget = true;
      return result;
    }
    if (result == Outcome::Infeasible)
      s.provenLow = std::max(s.provenLow, target + 1);
    if (result == Outcome::Found) {
      uint64_t arena = detail::arenaOf(local, offsets);
      if (arena < s.arena) {
        s.offsets = std::move(offsets);
        s.arena = arena;
        improved = searched = true;
      }
    }
    return result;
  }

  const Problem &problem;
  const ExactOptions &options;
  detail::Items items;
  Clock::time_point deadline;
  std::vector<uint64_t> itemOffsets;
  std::vector<detail::Section> sections;
  std::vector<SectionState> state;
  detail::SearchBudget budget;
  double passPerItem = 0; ///< Seconds per item of one greedy pass.
  // What placed the sections, for the plan's algorithm: put back with a
  // section's placement when its work is undone.
  struct Flags {
    bool improved, searched, perturbed, ejected, criticalFirst;
  };
  // A section's placement with the flags, to go back to when a start that
  // may be worse than the incumbent (the critical-first one) never catches up.
  struct Checkpoint {
    std::vector<uint64_t> offsets;
    uint64_t arena;
    Flags flags;
  };
  Checkpoint checkpoint(size_t c) const {
    return {
        state[c].offsets, state[c].arena, {improved, searched, perturbed, ejected, criticalFirst}};
  }
  void restore(size_t c, Checkpoint &&saved) {
    state[c].offsets = std::move(saved.offsets);
    state[c].arena = saved.arena;
    improved = saved.flags.improved;
    searched = saved.flags.searched;
    perturbed = saved.flags.perturbed;
    ejected = saved.flags.ejected;
    criticalFirst = saved.flags.criticalFirst;
  }
  bool improved = false, searched = false, outOfBudget = false;
  bool perturbed = false;     ///< Random-order greedy passes lowered a section.
  bool ejected = false;       ///< An ejection search lowered a section.
  bool criticalFirst = false; ///< A section started from its critical items.
};
} // namespace

Plan planExact(const Problem &problem, const ExactOptions &options) {
  Clock::time_point deadline = detail::deadlineAfter(options.timeBudgetSeconds);
  double greedySeconds = 0;
  Plan best = detail::timedBestGreedy(problem, deadline, greedySeconds);
  return detail::improveByExactSearch(problem, options, std::move(best), greedySeconds, deadline);
}

Clock::time_point detail::deadlineAfter(double seconds) {
  // Clamped so that "practically forever" cannot overflow the clock.
  auto limit = std::chrono::duration<double>(std::min(std::max(seconds, 0.0), 1e7));
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(limit);
}

Plan detail::timedBestGreedy(const Problem &problem, Clock::time_point deadline, double &seconds) {
  Clock::time_point start = Clock::now();
  Plan plan = bestGreedy(problem, buildItems(problem), &deadline);
  seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return plan;
}

Plan detail::improveByExactSearch(const Problem &problem, const ExactOptions &options, Plan best,
                                  double greedySeconds, Clock::time_point deadline) {
  bool fits = options.capacity != 0 && best.arenaSize <= options.capacity;
  if (best.arenaSize <= best.lowerBound || (fits && options.stopAtCapacity)) {
    best.provedOptimal = best.arenaSize <= best.lowerBound;
    return best;
  }
  // A greedy pass the clock skipped or cut leaves budgetExhausted set; the
  // search still gets whatever time is left (window repair often finds
  // something in a second).
  if (Clock::now() >= deadline)
    return best;
  SectionSolver solver(problem, options, best, greedySeconds, deadline);
  if (options.capacity != 0 && !fits) {
    fits = solver.fitCapacity(best);
    if (fits && options.stopAtCapacity)
      return solver.finish(std::move(best));
  }
  if (solver.timeLeft())
    solver.minimise();
  return solver.finish(std::move(best));
}

const char *proofOf(const Plan &plan, uint64_t capacity) {
  if (capacity != 0 && plan.arenaSize > capacity)
    return plan.provedInfeasible || plan.provedOptimal ? "proven not to fit" : "best effort";
  if (plan.provedOptimal)
    return "proven optimal";
  return capacity != 0 ? "proven to fit" : "best effort";
}

} // namespace bundlefit::planner
