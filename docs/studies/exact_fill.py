#!/usr/bin/python3
"""Exact filling of perfect packings with a PQ-tree: a study (issue 37), not part of the product.

A perfect packing (planner/formats/src/PerfectPacking.cpp) has the whole strip live on every
step, so at each step boundary the items that die leave runs between the survivors, and the
items born fill those runs exactly. Two questions decide whether a packing can be rebuilt:

  pairing  which dying items share a run, and which newborns fill it (equal byte sums);
  order    the order of the items in every column, which later runs constrain.

Given the pairing, the order is a consecutive-ones problem: each dying group must be
consecutive in the column (no survivor between its members). A PQ-tree (Booth and Lueker,
1976) keeps every column order that satisfies all the constraints so far; the dying block is
then replaced by a P-node of its newborns (any order). Offsets come from a backward pass:
the final column's order gives the last offsets, and each group's dead items take the
region its newborns were given, in the order the tree had for them when they died.

Modes (each plan is checked: no overlap at any step, and its top):
  oracle   the packing's own pairing (read from the generator's offsets), the tree does the rest;
  search   the pairing searched: per step the greedy finest pairing first, then the other
           equal-sum pairings, each tried on the tree at once; a step with none left jumps back
           to the latest birth step of its dying items that has one left. Steps with more than
           16 dying or newborn items cannot be enumerated: they take the packing's own pairing,
           and the table counts them. A further argument `one-run-first` has such a step try one
           run of all its items first; `twins` tries one of the pairings that differ only in
           which of a step's twin newborns (one size and lifetime) goes where.

  csv      the problem as a MiniMalloc CSV on standard output (for `bundlefit plan-buffers`).
  atoms    the steps enumeration cannot pair, as the tree sees them under the packing's own
           pairing: dying items in atoms (maximal subtrees that all die) and runs (atoms that a
           Q-node keeps side by side), newborns; "pairable": both sides at most 16 that way.
  classes  the same steps with the newborns in classes (born together and dying together), and
           how many classes the packing's own pairing splits between runs; "pairable": runs and
           classes at most 16 and no class split.
  twins    the same steps with the newborns in kinds (one size, dying together: interchangeable);
           "pairable": runs and kinds at most 16.

  /usr/bin/python3 docs/studies/exact_fill.py oracle 10000 uniform,heavy,pow2,long 1001,1002,1003
  /usr/bin/python3 docs/studies/exact_fill.py search 2000 uniform,heavy,pow2,long 1001,1002
  /usr/bin/python3 docs/studies/exact_fill.py csv 10000 uniform 1001 > u.csv
  /usr/bin/python3 docs/studies/exact_fill.py atoms 10000 uniform,heavy,pow2,long 1001,1002,1003
  /usr/bin/python3 docs/studies/exact_fill.py classes 10000 uniform,heavy,pow2,long 1001,1002,1003
  /usr/bin/python3 docs/studies/exact_fill.py twins 10000 uniform,heavy,pow2,long 1001,1002,1003
"""
import copy
import itertools
import math
import sys
import time

HEIGHT = 1 << 24
MASK = (1 << 64) - 1


# --- The generator: PerfectPacking.cpp's, draw for draw (same seeds, same problems). ---

class Random:  # splitmix64
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9e3779b97f4a7c15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK
        return z ^ (z >> 31)

    def unit(self):
        return (self.next() >> 11) * 2.0 ** -53

    def between(self, lo, hi):
        return lo + self.next() % (hi - lo + 1)

    def log_uniform(self, lo, hi):
        return lo * math.pow(hi / lo, self.unit())


def draw_length(family, r):
    if family == 'uniform': return r.between(1, 16)
    if family == 'heavy': return int(r.log_uniform(1, 257))
    if family == 'pow2': return r.between(1, 32)
    return r.between(64, 2048) if r.unit() < 0.05 else r.between(1, 8)


def draw_size(family, r):
    if family == 'uniform': return r.between(HEIGHT // 256, HEIGHT // 8)
    if family == 'heavy': return int(min(HEIGHT / 2, (HEIGHT / 256) / math.pow(1 - r.unit(), 1 / 1.1)))
    if family == 'pow2': return 1 << r.between(14, 22)
    return int(r.log_uniform(HEIGHT / 1024, HEIGHT / 8))


def fit(family, size, room):
    size = min(size, room)
    if family == 'pow2':
        while size & (size - 1): size &= size - 1
        return size
    return room if room - size < 64 else size


def print_csv(buffers):
    """(size, first, last) buffers as a MiniMalloc CSV on standard output (upper = last + 1)."""
    print('id,lower,upper,size')
    for i, (size, first, last) in enumerate(buffers):
        print('%d,%d,%d,%d' % (i, first, last + 1, size))


def perfect_packing(n, family, seed):
    """Buffers as [offset, size, first, last], in the generator's shuffled order."""
    r = Random(seed)
    bufs, holes, dying, live_at = [], {0: HEIGHT}, set(), {}

    def free(b):
        off, end = bufs[b][0], bufs[b][0] + bufs[b][1]
        dying.discard((bufs[b][3], b)); del live_at[off]
        if end in holes: end = holes.pop(end)
        before = [k for k, v in holes.items() if v == off]
        holes[before[0] if before else off] = end

    step = 0
    while len(bufs) < n:
        while dying and min(dying)[0] < step: free(min(dying)[1])
        while holes:
            off = min(holes); end = holes.pop(off)
            together = r.unit() < 0.5; group_length = draw_length(family, r)
            at = off
            while at < end:
                size = draw_size(family, r); grow = r.unit() < 0.05
                while grow and at + size > end and end in live_at and bufs[live_at[end]][2] < step:
                    above = live_at[end]; free(above); bufs[above][3] = step - 1
                    end = holes.pop(end)
                size = fit(family, size, end - at)
                length = group_length if together else draw_length(family, r)
                b = len(bufs); bufs.append([at, size, step, step + length - 1])
                dying.add((step + length - 1, b)); live_at[at] = b
                at += size
        step += 1
    for b in bufs: b[3] = min(b[3], step - 1)
    order = list(range(len(bufs)))
    for i in range(len(order), 1, -1):
        j = r.next() % i; order[i - 1], order[j] = order[j], order[i - 1]
    return [bufs[k] for k in order]


# --- The PQ-tree. ---

class Fail(Exception):
    pass


class Node:
    __slots__ = ('kind', 'children', 'parent', 'item')

    def __init__(self, kind, children=(), item=None):
        self.kind, self.children, self.parent, self.item = kind, list(children), None, item
        for c in self.children: c.parent = self


class PQTree:
    def __init__(self, n):
        self.leaf = [Node('L', item=i) for i in range(n)]
        self.root = None

    def new_group(self, items):
        return self._group([self.leaf[i] for i in items])

    def frontier(self, node, out):
        stack = [node]
        while stack:
            x = stack.pop()
            if x.kind == 'L': out.append(x.item)
            else: stack.extend(reversed(x.children))
        return out

    def replace(self, old, new):
        if old.parent is None:
            self.root, new.parent = new, None
        else:
            p = old.parent; p.children[p.children.index(old)] = new; new.parent = p

    def reduce(self, items):
        """Make `items` consecutive; returns their block: ('node', n) or ('range', q, i, j)."""
        self.count = {}
        for it in items:
            x = self.leaf[it]
            while x is not None:
                self.count[x] = self.count.get(x, 0) + 1; x = x.parent
        x = self.leaf[items[0]]
        while self.count[x] < len(items): x = x.parent
        return self._reduce(x, True)

    def _group(self, nodes):
        return nodes[0] if len(nodes) == 1 else Node('P', nodes)

    def _reduce(self, node, root):
        # Below the root a node returns 'F' (every leaf below it is in the set) or ('partial', k):
        # it is now a Q-node whose last k children are full. The templates are Booth and Lueker's.
        if node.kind == 'L':
            return ('node', node) if root else 'F'
        state = {c: self._reduce(c, False) for c in node.children if c in self.count}
        full = [c for c in node.children if state.get(c) == 'F']
        partial = [c for c in node.children if isinstance(state.get(c), tuple)]
        if len(full) == len(node.children):
            return ('node', node) if root else 'F'
        if node.kind == 'P':
            empty = [c for c in node.children if c not in state]
            if not root:  # P3, P5
                if len(partial) > 1: raise Fail('two partial children below the root')
                kids, k = ([self._group(empty)] if empty else []), 0
                if partial: kids += partial[0].children; k = state[partial[0]][1]
                if full: kids.append(self._group(full)); k += 1
                node.kind, node.children = 'Q', kids
                for c in kids: c.parent = node
                return ('partial', k)
            if not partial:  # P2
                block = self._group(full)
                node.children = empty + [block]; block.parent = node
                return ('node', block)
            if len(partial) == 1:  # P4
                q = partial[0]; i = len(q.children) - state[q][1]
                if full:
                    f = self._group(full); q.children.append(f); f.parent = q
                j = len(q.children) - 1
            elif len(partial) == 2:  # P6
                q1, q2 = partial
                kids = list(q1.children); i = len(kids) - state[q1][1]
                if full: kids.append(self._group(full))
                j = len(kids) + state[q2][1] - 1
                kids += reversed(q2.children)
                q = Node('Q', kids)
            else:
                raise Fail('three partial children')
            if empty:
                node.children = empty + [q]; q.parent = node
            else:
                self.replace(node, q)
            return ('range', q, i, j)
        tags = ['F' if state.get(c) == 'F' else 'P' if c in state else 'E' for c in node.children]
        if not root:  # Q2: empties, at most one partial, fulls at one end
            for flip in (False, True):
                t = tags[::-1] if flip else tags
                kids = node.children[::-1] if flip else node.children
                k = len(t)
                while k and t[k - 1] == 'F': k -= 1
                nfull = len(t) - k
                if k and t[k - 1] == 'P': k -= 1; nfull += state[kids[k]][1]
                if all(x == 'E' for x in t[:k]): break
            else:
                raise Fail('a Q-node with its set away from its ends')
            merged = []
            for c, x in zip(kids, t):
                merged += c.children if x == 'P' else [c]
            node.children = merged
            for c in merged: c.parent = node
            return ('partial', nfull)
        # Q3 at the root: the set is a run of children with a partial child at either end
        at = [k for k, x in enumerate(tags) if x != 'E']
        a, b = at[0], at[-1]
        if a == b or 'E' in tags[a:b + 1] or 'P' in tags[a + 1:b]:
            raise Fail('a Q-node whose set is not one run')
        merged, i, j = [], None, None
        for k, (c, x) in enumerate(zip(node.children, tags)):
            if x == 'P':
                seq = c.children if k == a else c.children[::-1]
                if k == a: i = len(merged) + len(seq) - state[c][1]
                else: j = len(merged) + state[c][1] - 1
                merged += seq
            else:
                if k == a: i = len(merged)
                if k == b: j = len(merged)
                merged.append(c)
        node.children = merged
        for c in merged: c.parent = node
        return ('range', node, i, j)

    def replace_block(self, block, items):
        """Put a P-node of `items` where `block` is; returns the dead block's order and an
        orientation witness (a leaf beside a Q-node range, and its side)."""
        new = self.new_group(items)
        if block[0] == 'node':
            order = self.frontier(block[1], []); self.replace(block[1], new)
            return order, None
        _, q, i, j = block
        order = []
        for c in q.children[i:j + 1]: self.frontier(c, order)
        witness = (self.frontier(q.children[i - 1], [])[0], 'below') if i > 0 else \
            (self.frontier(q.children[j + 1], [])[0], 'above')
        q.children[i:j + 1] = [new]; new.parent = q
        return order, witness


# --- Pairings. ---

def atoms(tree, dying):
    """The dying side of a step as the tree sees it: (atoms, runs). An atom is a maximal node whose
    leaves all die (never split between runs); a run here is atoms next to each other in a Q-node
    (always together); atoms under a P-node may be apart or together."""
    count, leaves, top = {}, {}, []
    for it in dying:
        x = tree.leaf[it]
        while x is not None: count[x] = count.get(x, 0) + 1; x = x.parent

    def size(x):
        if x not in leaves: leaves[x] = 1 if x.kind == 'L' else sum(size(c) for c in x.children)
        return leaves[x]
    for it in dying:
        x = tree.leaf[it]
        while x.parent is not None and count[x.parent] == size(x.parent): x = x.parent
        if x not in top: top.append(x)
    tops, runs = set(top), 0
    for x in top:
        p = x.parent
        # Counted once per run: at its first atom (no atom just before it in a Q-node).
        runs += not (p is not None and p.kind == 'Q' and p.children.index(x) > 0 and
                     p.children[p.children.index(x) - 1] in tops)
    return len(top), runs


def packing_pairing(bufs, dying, born):
    """The packing's own runs: dying and newborn items by offset, cut where their bytes balance."""
    events = sorted([(bufs[i][0], 0, i) for i in dying] + [(bufs[i][0], 1, i) for i in born])
    pairs, d, nb, dm, bm = [], [], [], 0, 0
    for _, kind, i in events:
        if kind == 0: d.append(i); dm += bufs[i][1]
        else: nb.append(i); bm += bufs[i][1]
        if dm == bm and dm:
            pairs.append((d, nb)); d, nb, dm, bm = [], [], 0, 0
    return pairs


def subset_sums(items, size):
    sums = {0: ()}
    for it in sorted(items, key=lambda i: -size[i]):
        for s, c in list(sums.items()):
            if s + size[it] not in sums or len(sums[s + size[it]]) > len(c) + 1:
                sums[s + size[it]] = c + (it,)
    return sums


def greedy_finest(dying, born, size):
    """Repeatedly the smallest set of dying items that some newborns match byte for byte."""
    dying, born, pairs = list(dying), list(born), []
    while dying:
        sums, found = subset_sums(born, size), None
        for r in range(1, len(dying) + 1):
            for c in itertools.combinations(dying, r):
                s = sum(size[i] for i in c)
                if s in sums: found = (list(c), list(sums[s])); break
            if found: break
        if not found: return None
        pairs.append(found)
        dying = [i for i in dying if i not in found[0]]; born = [i for i in born if i not in found[1]]
    return pairs if not born else None


def equal_sum_pairings(dying, born, size, limit=12, kind=None):
    """Up to `limit` pairings of all dying with all newborn items by equal sums, finest first.
    With `kind` (per item), newborns of one kind are twins: of the matches a group could take,
    only the first of each multiset of kinds is tried (the others give the same plans)."""
    by_sum = {}
    for r in range(1, len(born) + 1):
        for c in itertools.combinations(born, r):
            by_sum.setdefault(sum(size[i] for i in c), []).append(c)
    out = []

    def extend(dying, born, acc):
        if len(out) >= limit: return
        if not dying:
            if not born: out.append(list(acc))
            return
        first, rest, free = dying[0], dying[1:], set(born)
        for r in range(len(rest) + 1):
            for c in itertools.combinations(rest, r):
                group, tried = (first,) + c, set()
                for match in by_sum.get(sum(size[i] for i in group), ()):
                    kinds = tuple(sorted(kind[i] for i in match)) if kind else match
                    if free.issuperset(match) and kinds not in tried:
                        tried.add(kinds)
                        acc.append((list(group), list(match)))
                        extend([i for i in rest if i not in c], [i for i in born if i not in match], acc)
                        acc.pop()

    extend(list(dying), list(born), [])
    return sorted(out, key=lambda p: -len(p))


# --- The fill: forward over the steps, then offsets backward. ---

def births_and_deaths(bufs):
    """Per step, the items born on it and the items whose last step it is."""
    steps = max(b[3] for b in bufs) + 1
    born, dies = [[] for _ in range(steps)], [[] for _ in range(steps)]
    for i, (_, _, first, last) in enumerate(bufs): born[first].append(i); dies[last].append(i)
    return born, dies


def rebuild(bufs, mode, enumerable=16, budget=4000, one_run_first=False, twins=False):
    n = len(bufs); size = [b[1] for b in bufs]; first = [b[2] for b in bufs]; last = [b[3] for b in bufs]
    # Newborns of one size and lifetime are twins: at their birth step nothing tells them apart.
    kind = [(size[i], last[i]) for i in range(n)] if twins else None
    born, dies = births_and_deaths(bufs)
    steps_total = len(born)
    steps = [t for t in range(1, steps_total) if dies[t - 1] or born[t]]
    stats = {'steps': len(steps), 'given': 0, 'tries': 0, 'jumps': 0,
             'big': sum(1 for t in steps if len(dies[t - 1]) > enumerable or len(born[t]) > enumerable)}
    candidates = {}

    def options(t):
        if t not in candidates:
            d, b = dies[t - 1], born[t]
            if mode == 'oracle' or len(d) > enumerable or len(b) > enumerable:
                # With one_run_first, a big step first tries one run of all its items (the
                # strip opening whole: every step is full, so the sums always match).
                candidates[t] = ([[(list(d), list(b))]] if mode == 'search' and one_run_first else []) + \
                    [packing_pairing(bufs, d, b)]
            else:
                greedy = greedy_finest(d, b, size)
                seen, out = set(), []
                for p in ([greedy] if greedy else []) + equal_sum_pairings(d, b, size, kind=kind):
                    key = tuple(sorted((tuple(sorted(x)), tuple(sorted(kind[i] if kind else i for i in y)))
                                       for x, y in p))
                    if key not in seen: seen.add(key); out.append(p)
                candidates[t] = out
        return candidates[t]

    def given():
        # The steps whose pairing in force is the packing's own.
        return sum(1 for t, c in choice.items() if c < len(options(t)) and
                   (mode == 'oracle' or len(dies[t - 1]) > enumerable or len(born[t]) > enumerable)
                   and c == len(options(t)) - 1)

    def apply(tree, pairs):
        entries = []
        for dead, new in pairs:
            order, witness = tree.replace_block(tree.reduce(dead), new)
            entries.append((dead, new, order, witness))
        return entries

    def restore(kb):
        """The tree as it was before step kb: the latest snapshot, then the choices since."""
        for j in [j for j in snapshots if j > kb]: del snapshots[j]
        base = max(j for j in snapshots if j <= kb)
        tree = copy.deepcopy(snapshots[base])
        for j in range(base, kb): log[steps[j]] = apply(tree, options(steps[j])[choice[steps[j]]])
        return tree

    # A failed reduction leaves the tree half changed: the search goes back to a snapshot
    # (one every 32 steps) and replays the choices made since.
    tree, k, choice, log, snapshots = PQTree(n), 0, {}, {}, {}
    tree.root = tree.new_group(born[0])
    while k < len(steps):
        t = steps[k]
        if k % 32 == 0 and mode == 'search': snapshots.setdefault(k, copy.deepcopy(tree))
        opts = options(t)
        choice.setdefault(t, 0)
        if choice[t] < len(opts):
            stats['tries'] += 1
            if mode == 'search' and stats['tries'] > budget:
                stats['given'] = given()
                return None, 'no plan within %d tries (step %d of %d)' % (budget, t, steps_total), stats
            try:
                log[t] = apply(tree, opts[choice[t]]); k += 1
                continue
            except Fail:
                if mode == 'oracle':
                    stats['given'] = given()
                    return None, 'the packing\'s pairing failed at step %d' % t, stats
                choice[t] += 1
                if choice[t] < len(opts):
                    tree = restore(k)
                    continue
        # No pairing left here: back to the latest birth step of this step's dying items with
        # one left (else the latest step with one left).
        back = None
        for b in sorted({first[i] for i in dies[t - 1]}, reverse=True):
            if b in choice and b != t and choice[b] + 1 < len(options(b)): back = b; break
        if back is None:
            back = next((steps[j] for j in range(k - 1, -1, -1)
                         if choice.get(steps[j], 0) + 1 < len(options(steps[j]))), None)
        if back is None:
            stats['given'] = given()
            return None, 'no pairing left at step %d' % t, stats
        stats['jumps'] += 1
        kb = steps.index(back)
        for j in range(kb + 1, len(steps)): choice.pop(steps[j], None)
        choice[back] += 1
        tree, k = restore(kb), kb

    stats['given'] = given()
    offset, at = [None] * n, 0
    for i in tree.frontier(tree.root, []): offset[i] = at; at += size[i]
    for t in sorted(log, reverse=True):
        region = {}
        for dead, new, _, _ in log[t]:
            base = min(offset[i] for i in new)
            for i in dead: region[i] = base
        for dead, new, order, witness in log[t]:
            base, span = region[dead[0]], sum(size[i] for i in dead)
            upward = True
            if witness is not None:
                w, side = witness
                where = offset[w] if last[w] > t - 1 else region[w]
                upward = (where < base) == (side == 'below')
            at = 0
            for i in order:
                offset[i] = base + at if upward else base + span - at - size[i]
                at += size[i]
    return offset, 'ok', stats


def big_steps(bufs, enumerable=16):
    """The packing's own pairing replayed on the tree; yields each step with more than
    `enumerable` dying or newborn items as (tree, dying, newborns, the packing's pairs), with the
    tree as it is before the step."""
    born, dies = births_and_deaths(bufs)
    tree = PQTree(len(bufs))
    tree.root = tree.new_group(born[0])
    for t in range(1, len(born)):
        d, b = dies[t - 1], born[t]
        pairs = packing_pairing(bufs, d, b)
        if len(d) > enumerable or len(b) > enumerable:
            yield tree, d, b, pairs
        for dead, new in pairs:
            tree.replace_block(tree.reduce(dead), new)


def big_step_atoms(bufs):
    """Per big step: its dying side in atoms and runs (atoms()), and its dying and newborn counts."""
    return [atoms(tree, d) + (len(d), len(b)) for tree, d, b, _ in big_steps(bufs)]


def big_step_classes(bufs):
    """Per big step: its dying side in runs, its newborns in classes (same last step: items born
    together that also die together) and how many classes the packing's own pairing splits
    between runs, and its dying and newborn counts."""
    rows = []
    for tree, d, b, pairs in big_steps(bufs):
        classes = {}
        for k, (_, new) in enumerate(pairs):
            for i in new: classes.setdefault(bufs[i][3], set()).add(k)
        split = sum(1 for runs in classes.values() if len(runs) > 1)
        rows.append((atoms(tree, d)[1], len(classes), split, len(d), len(b)))
    return rows


def big_step_twins(bufs):
    """Per big step: its dying side in runs and its newborns in kinds: newborns of one size that
    also die together are twins, interchangeable in any plan (swapping two gives another plan),
    so a pairing needs only how many of each kind a run gets; and its dying and newborn counts."""
    return [(atoms(tree, d)[1], len({(bufs[i][1], bufs[i][3]) for i in b}), len(d), len(b))
            for tree, d, b, _ in big_steps(bufs)]


def check(bufs, offset):
    """No two items overlap at any step; returns the plan's top."""
    columns = {}
    for i, (_, size, first, last) in enumerate(bufs):
        for s in range(first, last + 1): columns.setdefault(s, []).append((offset[i], offset[i] + size))
    for col in columns.values():
        col.sort()
        if any(a[1] > b[0] for a, b in zip(col, col[1:])): return None
    return max(offset[i] + b[1] for i, b in enumerate(bufs))


def big_step_tables(measure, n, families, seeds):
    """Per family and seed, the rows `measure` gives for its big steps and a column sorter;
    a problem with no big step is printed as such here."""
    for family in families.split(','):
        for seed in (int(s) for s in seeds.split(',')):
            rows = measure(perfect_packing(n, family, seed))
            if not rows:
                print('%-8s %6d %5d' % (family, seed, 0))
                continue
            yield family, seed, rows, lambda k, rows=rows: sorted(r[k] for r in rows)


def main():
    flags = set(sys.argv[5:])
    one_run_first, twins = 'one-run-first' in flags, 'twins' in flags
    if len(sys.argv) < 5 or flags - {'one-run-first', 'twins'} or sys.argv[1] not in ('oracle', 'search', 'csv', 'atoms',
                                                           'classes', 'twins'):
        sys.exit(__doc__)
    mode, n = sys.argv[1], int(sys.argv[2])
    if mode == 'atoms':
        print('%-8s %6s %5s %9s %9s %12s %11s %s' % ('family', 'seed', 'big', 'dying', 'newborn',
                                                     'atoms med/max', 'runs med/max', 'pairable'))
        for family, seed, rows, col in big_step_tables(big_step_atoms, n, sys.argv[3], sys.argv[4]):
            print('%-8s %6d %5d %4d-%-4d %4d-%-4d %7d/%-5d %6d/%-4d %d' % (
                family, seed, len(rows), col(2)[0], col(2)[-1], col(3)[0], col(3)[-1],
                col(0)[len(rows) // 2], col(0)[-1], col(1)[len(rows) // 2], col(1)[-1],
                sum(1 for r in rows if r[1] <= 16 and r[3] <= 16)))
        return
    if mode == 'classes':
        print('%-8s %6s %5s %12s %14s %13s %s' % ('family', 'seed', 'big', 'runs med/max',
                                                  'classes med/max', 'split classes', 'pairable'))
        for family, seed, rows, col in big_step_tables(big_step_classes, n, sys.argv[3], sys.argv[4]):
            print('%-8s %6d %5d %7d/%-4d %9d/%-4d %13d %d' % (
                family, seed, len(rows), col(0)[len(rows) // 2], col(0)[-1],
                col(1)[len(rows) // 2], col(1)[-1], sum(r[2] for r in rows),
                sum(1 for r in rows if r[0] <= 16 and r[1] <= 16 and r[2] == 0)))
        return
    if mode == 'twins':
        print('%-8s %6s %5s %9s %12s %13s %s' % ('family', 'seed', 'big', 'newborn', 'runs med/max',
                                                'kinds med/max', 'pairable'))
        for family, seed, rows, col in big_step_tables(big_step_twins, n, sys.argv[3], sys.argv[4]):
            print('%-8s %6d %5d %4d-%-4d %7d/%-4d %8d/%-4d %d' % (
                family, seed, len(rows), col(3)[0], col(3)[-1], col(0)[len(rows) // 2], col(0)[-1],
                col(1)[len(rows) // 2], col(1)[-1], sum(1 for r in rows if r[0] <= 16 and r[1] <= 16)))
        return
    if mode == 'csv':
        print_csv((size, first, last) for _, size, first, last in
                  perfect_packing(n, sys.argv[3], int(sys.argv[4])))
        return
    print('%-8s %6s %7s  %-10s %s' % ('family', 'seed', 'buffers', 'result', 'details'))
    for family in sys.argv[3].split(','):
        for seed in (int(s) for s in sys.argv[4].split(',')):
            bufs = perfect_packing(n, family, seed)
            began = time.process_time()
            offset, why, stats = rebuild(bufs, mode, one_run_first=one_run_first, twins=twins)
            cpu = time.process_time() - began
            top = check(bufs, offset) if offset else None
            result = ('optimum' if top == HEIGHT else 'top %.4f' % (top / HEIGHT)) if top else \
                ('OVERLAP' if offset else 'no plan')
            print('%-8s %6d %7d  %-10s %.1f s CPU; %d steps (%d with more than 16 items), %d given '
                  'the packing\'s pairing; %d pairings tried, %d jumps back%s' % (
                      family, seed, len(bufs), result, cpu, stats['steps'], stats['big'],
                      stats['given'], stats['tries'], stats['jumps'], '' if offset else '; ' + why))


if __name__ == '__main__':
    main()
