#!/usr/bin/python3
"""How hard a perfect packing is, and why: a study (issue 37), not part of the product.

The planner's perfect packings (planner/formats/src/PerfectPacking.cpp) have the whole strip
live on every step, with 16-60 buffers live at a time. This script makes three kinds of
variation on them, each with a known optimum (the strip's height, 2^24), and prints the problem
as a MiniMalloc CSV (id,lower,upper,size) for `bundlefit plan-buffers` and TFLM's `tflm_plan`:

  fine N FAMILY SEED SCALE       the same generator with every size divided by SCALE (at least
                                 64 B): SCALE times as many buffers live per step, every step full.
  thin N FAMILY SEED PERCENT     the same generator, then PERCENT of the buffers removed at random,
                                 except the ones live at the middle step: that step stays full, so
                                 the optimum is still the strip's height, but the others have room.
  guillotine N SEED STEPS        a rectangle of N/STEPS steps by 2^24 bytes cut in two again and
                                 again (the largest piece first, across its longer side relative
                                 to the rectangle's, at 20-80% of it) until there are N pieces:
                                 the classic way to make zero-waste strip packings.

  /usr/bin/python3 docs/studies/difficulty.py fine 10000 uniform 1001 64 > /tmp/f.csv
  /usr/bin/python3 docs/studies/difficulty.py thin 10000 heavy 1001 30 > /tmp/t.csv
  /usr/bin/python3 docs/studies/difficulty.py guillotine 10000 1001 8 > /tmp/g.csv

FAMILY is one of exact_fill.py's: uniform, heavy, pow2, long.
"""
import heapq
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exact_fill  # noqa: E402  (the generator, draw for draw as in C++)

HEIGHT = exact_fill.HEIGHT


def fine(n, family, seed, scale):
    draw = exact_fill.draw_size
    exact_fill.draw_size = lambda fam, r: max(64, draw(fam, r) // scale)
    try:
        return [(size, first, last) for _, size, first, last in exact_fill.perfect_packing(n, family, seed)]
    finally:
        exact_fill.draw_size = draw


def thin(n, family, seed, percent):
    p = percent / 100
    # Cut more, so that about n are left.
    bufs = exact_fill.perfect_packing(int(n / (1 - p)), family, seed)
    middle = (max(last for _, _, _, last in bufs) + 1) // 2
    r = random.Random(seed)
    return [(size, first, last) for _, size, first, last in bufs
            if first <= middle <= last or r.random() >= p]


def guillotine(n, seed, steps_per):
    r = random.Random(seed)
    length = max(16, n // steps_per)
    heap = [(-length * HEIGHT, 0, length, 0, HEIGHT)]  # (-area, first, end, low, high)
    while len(heap) < n:
        _, t0, t1, y0, y1 = heapq.heappop(heap)
        f = r.uniform(0.2, 0.8)
        if (t1 - t0) / length > (y1 - y0) / HEIGHT * r.uniform(0.5, 2) and t1 - t0 > 1:
            c = min(t1 - 1, max(t0 + 1, int(t0 + (t1 - t0) * f)))
            halves = ((t0, c, y0, y1), (c, t1, y0, y1))
        else:
            c = int(y0 + (y1 - y0) * f)
            halves = ((t0, t1, y0, c), (t0, t1, c, y1))
        for a0, a1, b0, b1 in halves:
            heapq.heappush(heap, (-(a1 - a0) * (b1 - b0), a0, a1, b0, b1))
    pieces = [(y1 - y0, t0, t1 - 1) for _, t0, t1, y0, y1 in heap]
    r.shuffle(pieces)  # Listed as cut, a first-fit pass would rebuild the rectangle.
    return pieces


def main():
    kind = sys.argv[1] if len(sys.argv) > 1 else ''
    if kind in ('fine', 'thin') and len(sys.argv) == 6:
        n, family, seed, k = int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        bufs = (fine if kind == 'fine' else thin)(n, family, seed, k)
    elif kind == 'guillotine' and len(sys.argv) == 5:
        bufs = guillotine(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__)
    exact_fill.print_csv(bufs)


if __name__ == '__main__':
    main()
