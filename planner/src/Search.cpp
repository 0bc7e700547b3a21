//===- Search.cpp - Branch and bound over canonical placements ------------===//
//
// A solution is "settled" when no item can move down. Listing a settled
// solution by (offset, preorder rank) gives a sequence in which every item
// sits exactly on the highest end of the earlier items it meets in time, its
// "min offset". So the search only ever places an item at its min offset, in
// non-decreasing (offset, rank) order (canonical), and never at or above the
// lowest min offset + size of another unplaced item (dominance: that item
// would fit underneath and the solution would not be settled).
//
// Pruning: in each section (the live set of a step on which some item dies;
// every other step's live set is contained in one of these) the unplaced
// items are stacked above both the section's floor (end of its last placed
// item) and the current offset, so floor + unplaced bytes must fit. Once no
// unplaced item crosses a section boundary, the two sides are solved as
// independent subproblems (temporal decomposition), each with a preorder of
// its own. A failed candidate that met no unplaced item in time ("hatless")
// ends its node: its min offset is final and below every later candidate,
// so no sibling branch could still place it canonically.
//
//===----------------------------------------------------------------------===//
#include "Search.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <iterator>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

namespace bundlefit::planner::detail {

namespace {
constexpr uint64_t kUnplaced = std::numeric_limits<uint64_t>::max();

// Immutable facts about the items that take bytes.
struct Instance {
  std::vector<int> itemOf; // Local index -> item index.
  std::vector<uint64_t> size, alignment;
  std::vector<int> lo, hi;      // Sections spanned, inclusive.
  std::vector<uint64_t> length; // Lifetime in original steps.
  std::vector<std::vector<int>> overlaps;
  std::vector<std::vector<int>> sectionItems; // Items live in each section.
  std::vector<uint64_t> sectionBytes;         // Initial bytes per section.
  int numSections = 0;
};

// Building costs O(items + pairs live together), each pair a unit of work:
// false when the budget runs out first.
bool buildInstance(const Items &items, Budget &budget, Instance &in) {
  // Sections are the compressed steps on which some item dies: the live set
  // of any other step is contained in the one of the next such step, so
  // these "maximal" sections carry every constraint (as MiniMalloc's sweep
  // does) and there are about half as many to update per node.
  int steps = std::max(items.numSteps, 1);
  std::vector<int> cliquesBefore(steps + 1, 0); // Dying steps < s.
  std::vector<char> dies(steps, 0);
  for (const Item &it : items.items)
    if (it.size != 0)
      dies[it.clast] = 1;
  for (int s = 0; s < steps; ++s)
    cliquesBefore[s + 1] = cliquesBefore[s] + dies[s];
  in.numSections = std::max(cliquesBefore[steps], 1);
  in.sectionBytes.assign(in.numSections, 0);
  in.sectionItems.assign(in.numSections, {});
  for (size_t i = 0; i < items.items.size(); ++i) {
    const Item &it = items.items[i];
    if (it.size == 0)
      continue;
    int lo = cliquesBefore[it.cfirst], hi = cliquesBefore[it.clast + 1] - 1;
    in.itemOf.push_back(int(i));
    in.size.push_back(it.size);
    in.alignment.push_back(it.alignment);
    in.lo.push_back(lo);
    in.hi.push_back(hi);
    in.length.push_back(it.length());
    for (int s = lo; s <= hi; ++s) {
      in.sectionBytes[s] += it.size;
      in.sectionItems[s].push_back(int(in.size.size()) - 1);
    }
  }
  // Pairwise time overlaps by a sweep over first sections.
  int n = int(in.size.size());
  std::vector<int> byLo(n);
  std::iota(byLo.begin(), byLo.end(), 0);
  std::sort(byLo.begin(), byLo.end(),
            [&](int a, int b) { return in.lo[a] != in.lo[b] ? in.lo[a] < in.lo[b] : a < b; });
  in.overlaps.assign(n, {});
  for (int x = 0; x < n; ++x) {
    int y = x + 1;
    for (; y < n && in.lo[byLo[y]] <= in.hi[byLo[x]]; ++y) {
      in.overlaps[byLo[x]].push_back(byLo[y]);
      in.overlaps[byLo[y]].push_back(byLo[x]);
    }
    if (!budget.spend(uint64_t(y - x)))
      return false;
  }
  return true;
}

// Preorders, one letter per key compared in turn (MiniMalloc's notation):
// T the fullest section the item lives in (of `bytes`, per section), W its
// lifetime in original steps, A size x lifetime, all descending; ties by
// index. Writes the rank (0 = first) of each of `items` into rank[item];
// `total` (one per item) is scratch.
void rankBy(const Instance &in, const std::string &keys, const std::vector<uint64_t> &bytes,
            const std::vector<int> &items, std::vector<int> &rank, std::vector<uint64_t> &total) {
  for (int i : items) {
    total[i] = 0;
    for (int s = in.lo[i]; s <= in.hi[i]; ++s)
      total[i] = std::max(total[i], bytes[s]);
  }
  std::vector<int> sorted = items;
  std::sort(sorted.begin(), sorted.end(), [&](int a, int b) {
    for (char k : keys) {
      unsigned __int128 x = k == 'T'   ? total[a]
                            : k == 'W' ? in.length[a]
                                       : (unsigned __int128)in.size[a] * in.length[a];
      unsigned __int128 y = k == 'T'   ? total[b]
                            : k == 'W' ? in.length[b]
                                       : (unsigned __int128)in.size[b] * in.length[b];
      if (x != y)
        return x > y;
    }
    return a < b;
  });
  for (size_t r = 0; r < sorted.size(); ++r)
    rank[sorted[r]] = int(r);
}

class Search {
public:
  Search(const Instance &in, uint64_t capacity, std::vector<int> rank, std::string keys,
         bool rerank, Budget &budget, uint64_t nodeLimit)
      : in(in), capacity(capacity), rank(std::move(rank)), keys(std::move(keys)), rerank(rerank),
        budget(budget), nodeLimit(nodeLimit) {
    int n = int(in.size.size());
    totalScratch.assign(n, 0);
    offset.assign(n, kUnplaced);
    solution.assign(n, 0);
    minOffset.assign(n, 0);
    floor.assign(in.numSections, 0);
    remaining = in.sectionBytes;
    cuts.assign(in.numSections, 0);
    touchedStamp.assign(in.numSections, 0);
    floorWitness.assign(in.numSections, -1);
    unplacedIn = in.sectionItems;
    slot.resize(n);
    for (int s = 0; s < in.numSections; ++s)
      for (size_t p = 0; p < unplacedIn[s].size(); ++p) {
        int k = unplacedIn[s][p];
        slot[k].resize(in.hi[k] - in.lo[k] + 1);
        slot[k][s - in.lo[k]] = int(p);
      }
    for (int i = 0; i < n; ++i)
      for (int s = in.lo[i]; s < in.hi[i]; ++s)
        ++cuts[s];
  }

  Outcome run() {
    Part all;
    all.items.resize(in.size.size());
    std::iota(all.items.begin(), all.items.end(), 0);
    all.live = all.items.size();
    // The problem may already fall apart where no item crosses a boundary.
    std::vector<int> cutAfter;
    for (int s = 0; s + 1 < in.numSections; ++s)
      if (cuts[s] == 0)
        cutAfter.push_back(s);
    return solvePieces(all, 0, in.numSections - 1, cutAfter);
  }

  const std::vector<uint64_t> &offsets() const { return solution; }
  uint64_t nodes() const { return nodesUsed; }

private:
  // The items of one independent part. The first `live` are unplaced: a
  // placement swaps its item behind them and its undo swaps it back, so a
  // node only looks at the items still to place.
  struct Part {
    std::vector<int> items;
    size_t live = 0;
  };
  struct Candidate {
    uint64_t offset;
    int rank;
    int item;
    size_t pos; // In Part::items.
    bool operator<(const Candidate &o) const {
      return offset != o.offset ? offset < o.offset : rank < o.rank;
    }
  };
  struct Change {
    std::vector<uint64_t> *array;
    int index;
    uint64_t old;
  };

  // A node looks at every unplaced item of its part, twice, in tight
  // loops: half a unit each (about 1 ns, Budget.h).
  bool spendNode(const Part &part) {
    if (nodesUsed == nodeLimit)
      return false;
    ++nodesUsed;
    return budget.spend(1 + part.live / 2);
  }

  // A fresh canonical search over the unplaced items of sections [sLo, sHi].
  // Like MiniMalloc, the part gets its own preorder, with T measured on the
  // bytes still unplaced; the outer ranks come back afterwards.
  Outcome solvePart(Part &part, int sLo, int sHi) {
    if (!rerank)
      return searchFrom(part, sLo, sHi, 0, -1);
    std::vector<int> order(part.items.begin(), part.items.begin() + part.live);
    std::vector<int> saved;
    saved.reserve(order.size());
    for (int i : order)
      saved.push_back(rank[i]);
    // Sorting the part costs about what as many nodes would, and its keys
    // read every section of every item.
    uint64_t spans = 0;
    for (int i : order)
      spans += uint64_t(in.hi[i] - in.lo[i]) + 1;
    if (!budget.spend(sortUnits(order.size()) + spans))
      return Outcome::OutOfBudget;
    rankBy(in, keys, remaining, order, rank, totalScratch);
    Outcome result = searchFrom(part, sLo, sHi, 0, -1);
    for (size_t k = 0; k < order.size(); ++k)
      rank[order[k]] = saved[k];
    return result;
  }

  Outcome searchFrom(Part &part, int sLo, int sHi, uint64_t lastOffset, int lastRank) {
    if (!spendNode(part))
      return Outcome::OutOfBudget;
    // One candidate buffer per search depth, reused: no allocation per node.
    if (depth == candidatePool.size())
      candidatePool.emplace_back();
    std::vector<Candidate> &candidates = candidatePool[depth];
    candidates.clear();
    if (part.live == 0)
      return Outcome::Found;
    uint64_t minHeight = kUnplaced;
    for (size_t p = 0; p < part.live; ++p) {
      int i = part.items[p];
      minHeight = std::min(minHeight, minOffset[i] + in.size[i]);
    }
    // Only candidates that pass every filter are sorted: under the lowest
    // min offset + size of any unplaced item (dominance: that item would
    // fit underneath), not before the last placement in (offset, rank)
    // order (canonical: reached by another branch), and fitting.
    for (size_t p = 0; p < part.live; ++p) {
      int i = part.items[p];
      Candidate c{minOffset[i], rank[i], i, p};
      if (c.offset >= minHeight || c.offset < lastOffset ||
          (c.offset == lastOffset && rank[i] < lastRank) || c.offset + in.size[i] > capacity)
        continue;
      candidates.push_back(c);
    }
    std::sort(candidates.begin(), candidates.end());
    looked += sortUnits(candidates.size());
    for (const Candidate &c : candidates) {
      ++depth;
      Outcome result = tryPlace(part, sLo, sHi, c);
      --depth;
      if (result != Outcome::Infeasible)
        return result;
      // Nothing unplaced meets c.item in time ("hatless"): it sits at its
      // final min offset whatever else happens, below every later
      // candidate, so no sibling branch can still place it canonically.
      if (lastHatless)
        break;
    }
    return Outcome::Infeasible;
  }

  Outcome tryPlace(Part &part, int sLo, int sHi, const Candidate &c) {
    // Placing and undoing it visit the item's overlaps and sections, and
    // every section of the part is checked after it.
    // The steps the placements so far walked beyond that (other items'
    // sections, floor scans, splits) are counted as they are taken: on
    // long-lived items they are most of the work.
    uint64_t walked = std::exchange(looked, 0);
    if (!budget.spend(in.overlaps[c.item].size() + size_t(in.hi[c.item] - in.lo[c.item]) + 1 +
                      (size_t(sHi - sLo) + 1 + walked) / 2))
      return Outcome::OutOfBudget;
    size_t mark = log.size();
    std::swap(part.items[c.pos], part.items[part.live - 1]);
    --part.live;
    place(c.item, c.offset);
    bool hatless = placedHatless;
    Outcome result = Outcome::Infeasible;
    if (!overflow && sectionsFit(sLo, sHi, c.offset))
      result = continueAfter(part, sLo, sHi, c);
    // Each change the placement logged is written, read back and undone,
    // often a cache miss on long-lived items (many overlaps, many
    // sections): a unit each on top of the visits counted above.
    looked += 2 * (log.size() - mark);
    unplace(c.item, mark);
    ++part.live;
    std::swap(part.items[c.pos], part.items[part.live - 1]);
    lastHatless = hatless;
    return result;
  }

  void record(std::vector<uint64_t> &array, int index) {
    log.push_back({&array, index, array[index]});
  }

  void place(int i, uint64_t at) {
    overflow = false;
    offset[i] = at;
    solution[i] = at;
    uint64_t end = at + in.size[i];
    ++stamp;
    touched.clear();
    for (int s = in.lo[i]; s <= in.hi[i]; ++s) {
      record(floor, s);
      floor[s] = end;
      remaining[s] -= in.size[i];
      removeFromSection(i, s);
      touch(s);
    }
    for (int s = in.lo[i]; s < in.hi[i]; ++s)
      --cuts[s];
    placedHatless = true;
    for (int j : in.overlaps[i]) {
      if (offset[j] != kUnplaced)
        continue;
      placedHatless = false;
      uint64_t lowest = alignUp(end, in.alignment[j]);
      if (lowest <= minOffset[j])
        continue;
      record(minOffset, j);
      minOffset[j] = lowest;
      if (lowest + in.size[j] > capacity)
        overflow = true; // j can no longer fit anywhere.
      // Only a section whose floor is below j's new min offset can rise;
      // the sections i spans now have their floor at i's end already.
      looked += size_t(std::max(0, in.lo[i] - in.lo[j]) + std::max(0, in.hi[j] - in.hi[i]));
      for (int s = in.lo[j]; s < in.lo[i]; ++s)
        if (floor[s] < lowest)
          touch(s);
      for (int s = in.hi[i] + 1; s <= in.hi[j]; ++s)
        if (floor[s] < lowest)
          touch(s);
      if (lowest > end) // Alignment padding: i's sections may rise too.
        for (int s = std::max(in.lo[i], in.lo[j]); s <= std::min(in.hi[i], in.hi[j]); ++s)
          touch(s);
    }
    for (int s : touched)
      raiseFloor(s);
  }

  // Swap-remove i from the section's unplaced list; undone in reverse.
  void removeFromSection(int i, int s) {
    std::vector<int> &list = unplacedIn[s];
    int p = slot[i][s - in.lo[i]];
    int moved = list.back();
    list[p] = moved;
    slot[moved][s - in.lo[moved]] = p;
    list.pop_back();
  }

  void restoreToSection(int i, int s) {
    std::vector<int> &list = unplacedIn[s];
    int p = slot[i][s - in.lo[i]];
    int moved = list[p];
    list.push_back(moved);
    slot[moved][s - in.lo[moved]] = int(list.size()) - 1;
    list[p] = i;
  }

  void touch(int s) {
    if (touchedStamp[s] == stamp)
      return;
    touchedStamp[s] = stamp;
    touched.push_back(s);
  }

  // No unplaced item of a section can go below the lowest of their min
  // offsets, so that is a floor too (MiniMalloc's "unallocated floor").
  // Stops at the first item that proves the floor cannot rise.
  void raiseFloor(int s) {
    // The item that kept the floor down last time usually still does: a
    // hint, checked, so the result is the scan's (without it the scan
    // took 40% of a search over 10^5 network-like buffers).
    int hint = floorWitness[s];
    if (hint >= 0 && offset[hint] == kUnplaced && minOffset[hint] <= floor[s])
      return;
    uint64_t lowest = kUnplaced;
    for (int k : unplacedIn[s]) {
      ++looked;
      if (minOffset[k] <= floor[s]) {
        floorWitness[s] = k;
        return;
      }
      lowest = std::min(lowest, minOffset[k]);
    }
    if (lowest == kUnplaced)
      return;
    record(floor, s);
    floor[s] = lowest;
  }

  void unplace(int i, size_t mark) {
    while (log.size() > mark) {
      const Change &ch = log.back();
      (*ch.array)[ch.index] = ch.old;
      log.pop_back();
    }
    for (int s = in.hi[i]; s >= in.lo[i]; --s) {
      remaining[s] += in.size[i];
      restoreToSection(i, s);
    }
    for (int s = in.lo[i]; s < in.hi[i]; ++s)
      ++cuts[s];
    offset[i] = kUnplaced;
  }

  // Every unplaced item is placed at or above the current offset and above
  // its section's floor, so the unplaced bytes must fit over both.
  bool sectionsFit(int sLo, int sHi, uint64_t at) const {
    for (int s = sLo; s <= sHi; ++s) {
      if (remaining[s] == 0)
        continue;
      if (std::max(floor[s], at) + remaining[s] > capacity)
        return false;
    }
    return true;
  }

  // After placing c.item: split into independent parts if the placement
  // removed the last unplaced item crossing some section boundary.
  Outcome continueAfter(Part &part, int sLo, int sHi, const Candidate &c) {
    int i = c.item;
    std::vector<int> cutAfter;
    for (int s = std::max(sLo, in.lo[i]); s < std::min(sHi, in.hi[i]); ++s)
      if (cuts[s] == 0)
        cutAfter.push_back(s);
    if (cutAfter.empty())
      return searchFrom(part, sLo, sHi, c.offset, c.rank);
    return solvePieces(part, sLo, sHi, cutAfter);
  }

  // Solves the unplaced items of each stretch between cuts on its own; no
  // item crosses a cut, so the stretches cannot interfere.
  Outcome solvePieces(const Part &part, int sLo, int sHi, std::vector<int> cutAfter) {
    cutAfter.push_back(sHi);
    int pieceLo = sLo;
    for (int pieceHi : cutAfter) {
      looked += part.live;
      Part piece;
      for (size_t p = 0; p < part.live; ++p) {
        int j = part.items[p];
        if (in.lo[j] >= pieceLo && in.hi[j] <= pieceHi)
          piece.items.push_back(j);
      }
      piece.live = piece.items.size();
      if (piece.live != 0) {
        Outcome result = solvePart(piece, pieceLo, pieceHi);
        if (result != Outcome::Found)
          return result;
      }
      pieceLo = pieceHi + 1;
    }
    return Outcome::Found;
  }

  const Instance &in;
  uint64_t capacity;
  std::vector<int> rank;
  std::string keys;
  bool rerank;                        // Re-derive the preorder per part.
  std::vector<uint64_t> totalScratch; // T per item, for rerankings.
  Budget &budget;
  uint64_t nodeLimit;
  uint64_t nodesUsed = 0;
  bool overflow = false;      // The last placement pushed an item past capacity.
  bool placedHatless = false; // The last placement met no unplaced item.
  bool lastHatless = false;   // Same, for the candidate tryPlace just undid.
  size_t depth = 0;
  uint64_t looked = 0;                              // Steps walked since the last spend.
  std::deque<std::vector<Candidate>> candidatePool; // Stable references.

  std::vector<uint64_t> offset, solution, minOffset, floor, remaining;
  std::vector<int> cuts;
  std::vector<Change> log;
  std::vector<std::vector<int>> unplacedIn; // Per section, any order.
  std::vector<std::vector<int>> slot;       // Per item, its index in each section's list.
  std::vector<uint64_t> touchedStamp;       // Dedupes `touched` per placement.
  std::vector<int> floorWitness;            // Per section, raiseFloor's hint.
  uint64_t stamp = 0;
  std::vector<int> touched;
};
} // namespace

Outcome searchCapacity(const Items &items, uint64_t capacity, Budget &budget, uint64_t &nodes,
                       std::vector<uint64_t> &itemOffsets) {
  uint64_t nodeLimit = nodes;
  nodes = 0;
  Instance in;
  if (!buildInstance(items, budget, in))
    return Outcome::OutOfBudget;
  // Orders after MiniMalloc's (T: fullest section, W: lifetime, A: area),
  // most re-derived for every independent part so that T counts only the
  // bytes still unplaced there. TWA both ways, then TAW: on MiniMalloc's
  // challenging instances this set needs the fewest nodes overall (E fits
  // in about 100k; adding WAT costs about a fifth more nodes in total).
  struct Heuristic {
    const char *keys;
    bool rerank;
  };
  static const Heuristic heuristics[] = {{"TWA", true}, {"TWA", false}, {"TAW", true}};
  std::vector<int> all(in.size.size());
  std::iota(all.begin(), all.end(), 0);
  std::vector<std::vector<int>> ranks(std::size(heuristics), std::vector<int>(all.size()));
  std::vector<uint64_t> total(all.size());
  for (size_t h = 0; h < ranks.size(); ++h)
    rankBy(in, heuristics[h].keys, in.sectionBytes, all, ranks[h], total);
  // Round robin under a doubling node limit, so one unlucky order cannot
  // take every node.
  uint64_t limit = std::max<uint64_t>(in.size.size(), 64);
  while (true) {
    limit *= 2;
    for (size_t h = 0; h < ranks.size(); ++h) {
      uint64_t cap = std::min(limit, nodeLimit - nodes);
      Search search(in, capacity, ranks[h], heuristics[h].keys, heuristics[h].rerank, budget, cap);
      Outcome result = search.run();
      nodes += search.nodes();
      if (result == Outcome::Found) {
        itemOffsets.assign(items.items.size(), 0);
        for (size_t k = 0; k < in.itemOf.size(); ++k)
          itemOffsets[in.itemOf[k]] = search.offsets()[k];
        return Outcome::Found;
      }
      if (result == Outcome::Infeasible)
        return Outcome::Infeasible; // A complete search: a proof.
      if (budget.exhausted())
        return Outcome::OutOfBudget;
      if (nodes >= nodeLimit)
        return Outcome::Unsolved;
    }
  }
}

} // namespace bundlefit::planner::detail
