#!/usr/bin/python3
"""Refreshes the README's figures after a benchmark rerun, from the results files at OLD_COMMIT.

Usage: scripts/refresh-readme-figures.py [--root .] [--dry-run] [-v] OLD_COMMIT

OLD_COMMIT is a commit whose results files the README's figures were taken from (the commit
before the rerun). For each figure of each `<!-- figures: ... -->` block, the numbers of the
block's files as they were at OLD_COMMIT that the figure quotes, under check-readme-figures.py's
rules (scripts/readme_figures.py), say where it came from: a JSON path, and a factor (x100 for a
percentage, x1000 for ms, 1/1e6 for "M"). The figure becomes the number at that path in the
current file, times the factor, written as the figure was (thousands separators, decimals,
suffix). When several paths match (a value repeated in the file), the figure is refreshed only
if every one of them gives the same new text: the path the figure came from is among them, so
the text is right whichever it was.

A figure is left alone, and printed with its README line for a person to fix, when no number
at OLD_COMMIT matches it, when the matching paths now give different texts, when a path is
gone, or when only numbers whose key names another unit matched it (1.12x, a ratio, matched
only by keys ending in _s or seconds, or 0.3 s only by a ratio: a coincidence, the README was
out of date there already). The host speed tables against onnxruntime and their geomean
sentence are left to scripts/regen-speed-tables.py, to run next: their rows follow the
ratios' order, and a two-decimal ratio matches many per-round numbers.

Exit status: 0 every figure refreshed or unchanged, 1 some need a hand, 2 a usage error.
"""
import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
from importlib import import_module

from readme_figures import (BLOCK_RE, LENGTH, check_figures, factors, figures_in, leaf_paths,
                            line_of, parse_header, path_text, quotes, skipped, value_at)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git(root, *args):
    return subprocess.run(["git", "-C", root] + list(args), capture_output=True, text=True)


class Results:
    """The results files at OLD_COMMIT and now, parsed once each."""

    def __init__(self, root, old_commit):
        self.root, self.old = root, old_commit
        listing = git(root, "ls-tree", "-r", "--name-only", old_commit, "--", ".")
        self.old_names = listing.stdout.split()
        self.cache = {}

    def expand(self, patterns):
        """The files a block names, at OLD_COMMIT (patterns allowed: codegen_memory_opt?.json)."""
        names = []
        for pattern in patterns:
            names += sorted(n for n in self.old_names if fnmatch.fnmatch(n, pattern)) or [pattern]
        return names

    def load(self, name, old):
        key = (name, old)
        if key not in self.cache:
            try:
                if old:
                    shown = git(self.root, "show", f"{self.old}:./{name}")
                    if shown.returncode != 0:
                        raise OSError(shown.stderr.strip().splitlines()[-1])
                    self.cache[key] = json.loads(shown.stdout)
                else:
                    with open(os.path.join(self.root, name)) as f:
                        self.cache[key] = json.load(f)
            except (OSError, ValueError) as e:
                self.cache[key] = e
        return self.cache[key]


def format_like(fig, number):
    """`number` (already scaled) written as `fig` is: separators, decimals, suffix M or x."""
    digits = fig.token.rstrip("Mx")
    # Below 1,000 a figure cannot show whether it would use separators: the README does.
    commas = "," in digits or fig.value < 1000
    text = f"{number:{',' if commas else ''}.{fig.decimals}f}"
    return text + fig.token[len(digits):]


def unit_of_figure(fig, after):
    """'ratio' for 1.12x, 'time' for 0.275 s or 34.86 ms, else None (unknown)."""
    if fig.token.endswith("x"):
        return "ratio"
    return "time" if re.match(r" ?m?s\b", after) else None


def unit_of_path(path):
    """What a key's name says its number is: warm_ratio, a_over_b: 'ratio'; wall_s, cpu_seconds,
    bundle_ms: 'time'; else None."""
    key = next((k for k in reversed(path) if isinstance(k, str) and k != LENGTH), "")
    if "ratio" in key or "_over_" in key:
        return "ratio"
    return "time" if key.endswith(("_s", "_ms", "seconds")) else None


# Words that make a figure an extreme over rows (slowest, at most, 1.08–1.24, 1.17 s or less):
# the row that holds it may be another one after a rerun.
EXTREME_BEFORE = re.compile(r"(?:at most|at least|up to|worst|best|slowest|fastest|largest|"
                            r"smallest|highest|lowest)(?:\W+[a-z]+)?\W{0,3}$|–$", re.I)
EXTREME_AFTER = re.compile(r"^(?: ?[a-zA-Z%]{1,2})?(?: or (?:less|more)|–)")


def refresh_figure(fig, before, after, names, results):
    """(new token, None) or (None, why a person must look). `before` and `after` are the README
    text around the figure (its unit, words that make it an extreme)."""
    matches = {}  # (file, path) -> factor: the first factor that matches, as the checker tries
    for name in names:
        doc = results.load(name, old=True)
        if isinstance(doc, Exception):
            return None, f"{name} at {results.old[:12]}: {doc}"
        for path, leaf in leaf_paths(doc):
            for factor in factors(fig.scale):
                if (name, path) not in matches and quotes(fig.value, fig.decimals, leaf, factor):
                    matches[(name, path)] = factor
    if not matches:
        return None, f"no number of {', '.join(names)} at {results.old[:12]} is {fig.token}"
    # A ratio that only a time matched (or a time only a ratio) was a coincidence: the README
    # was already out of date at OLD_COMMIT there.
    unit = unit_of_figure(fig, after)
    kept = {k: f for k, f in matches.items() if unit_of_path(k[1]) in (None, unit) or unit is None}
    if not kept:
        name, path = next(iter(matches))
        others = " and others" if len(matches) > 1 else ""
        return None, (f"{fig.token} is a {unit}, but at {results.old[:12]} only "
                      f"{os.path.basename(name)}:{path_text(path)}{others} "
                      f"(a {unit_of_path(path)}) matched it: out of date already then?")
    matches = kept
    extreme = EXTREME_BEFORE.search(before) or EXTREME_AFTER.match(after)
    rows = [k for k in matches if any(isinstance(key, int) for key in k[1])]
    if extreme and rows:
        name, path = rows[0]
        return None, (f"an extreme over rows (\"{extreme.group(0).strip()}\"), from "
                      f"{os.path.basename(name)}:{path_text(path)} at {results.old[:12]}: "
                      "another row may hold it now")
    texts = {}  # new text -> the paths that give it
    for (name, path), factor in matches.items():
        doc = results.load(name, old=False)
        leaf = None if isinstance(doc, Exception) else value_at(doc, path)
        where = f"{os.path.basename(name)}:{path_text(path)}"
        if leaf is None:
            return None, f"{where} is gone (or holds no number)"
        new = leaf * factor
        if new < 0:
            return None, f"{where} is negative now ({leaf:g}), no figure can quote it"
        texts.setdefault(format_like(fig, new), []).append(where)
    if len(texts) > 1:
        shown = "; ".join(f"{t} ({', '.join(w[:2])}{', ...' if len(w) > 2 else ''})"
                          for t, w in sorted(texts.items()))
        return None, f"{len(matches)} paths matched, now different: {shown}"
    return next(iter(texts)), None


def refresh(readme, results, owned=(), verbose=False):
    """The README with every figure it can be sure of refreshed, except those in the spans
    `owned` (regen-speed-tables.py writes them). Returns (new text, counts, need a hand)."""
    edits, counts, hand = [], {"refreshed": 0, "unchanged": 0, "owned": 0}, []
    for block in BLOCK_RE.finditer(readme):
        try:
            patterns, skips = parse_header(block.group(1))
        except ValueError as e:
            hand.append(f"README.md:{line_of(readme, block.start())}: block header: {e}")
            continue
        names = results.expand(patterns)
        for fig in figures_in(block.group(2)):
            if skipped(fig.token, skips):
                continue
            start = block.start(2) + fig.start
            if any(a <= start < b for a, b in owned):
                counts["owned"] += 1
                continue
            line = line_of(readme, start)
            body = block.group(2)
            new, why = refresh_figure(fig, body[max(0, fig.start - 24):fig.start],
                                      body[fig.end:fig.end + 12], names, results)
            if why:
                hand.append(f"README.md:{line}: {fig.token}: {why}")
            elif new == fig.token:
                counts["unchanged"] += 1
            else:
                counts["refreshed"] += 1
                edits.append((start, block.start(2) + fig.end, new))
                if verbose:
                    print(f"README.md:{line}: {fig.token} -> {new}")
    for start, end, new in reversed(edits):
        readme = readme[:start] + new + readme[end:]
    return readme, counts, hand


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old_commit", metavar="OLD_COMMIT",
                    help="a commit whose results files the README's figures quote")
    ap.add_argument("--root", default=ROOT, help="repository root (default: this script's)")
    ap.add_argument("--dry-run", action="store_true", help="report, but leave README.md as it is")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every figure refreshed")
    args = ap.parse_args()
    if git(args.root, "rev-parse", "--verify", "--quiet", args.old_commit + "^{commit}").returncode:
        print(f"refresh-readme-figures: {args.old_commit} is no commit of {args.root}",
              file=sys.stderr)
        return 2
    path = os.path.join(args.root, "README.md")
    with open(path) as f:
        readme = f.read()
    # The speed tables' rows follow the ratios' order: regen-speed-tables.py rewrites them whole.
    owned = import_module("regen-speed-tables").spans(readme, args.root)
    new, counts, hand = refresh(readme, Results(args.root, args.old_commit), owned, args.verbose)
    for h in hand:
        print("needs a hand: " + h)
    if not args.dry_run and new != readme:
        with open(path, "w") as f:
            f.write(new)
    # The checker's word on the result: a refreshed figure must quote its file now.
    for problem in check_figures(new, args.root)[0]:
        print("after refresh: " + problem)
    print(f"{counts['refreshed']} refreshed, {counts['unchanged']} unchanged, {len(hand)} need a "
          f"hand; {counts['owned']} in the speed tables, for scripts/regen-speed-tables.py"
          + (" (dry run: README.md not written)" if args.dry_run else ""))
    return 1 if hand else 0


if __name__ == "__main__":
    sys.exit(main())
