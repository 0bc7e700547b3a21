#!/usr/bin/python3
"""Refreshes the README's figures after a benchmark rerun, each from the field its pin names.

Usage: scripts/refresh-readme-figures.py [--root .] [--dry-run] [-v] OLD_COMMIT

OLD_COMMIT is a commit whose results files the README's figures were taken from (the commit
before the rerun). Each figure of each `<!-- figures: ... -->` block names its field in a pin
right after it (check-readme-figures.py says how). The pinned field as it was at OLD_COMMIT says
how the figure quotes it (as is, x100 for a percentage, x1000 for ms, 1/1e6 for "M"); the figure
becomes the field's number now at that factor, written as the figure was (thousands separators,
decimals, suffix).

A figure is left alone, and printed with its README line for a person to fix, when it has no pin
(scripts/pin-readme-figures.py), when its field at OLD_COMMIT was not it (out of date already),
when the field is gone, or when words around it make it an extreme over rows ("slowest",
"at most", "0.53–1.17") and its pin names one row: another row may hold it now. An extreme
pinned to all its rows (max(...), min(...): readme_figures.py) is refreshed to what they hold.
A figure refreshed from its pin is also printed for a person to check when another field
equalled it at OLD_COMMIT and now differs from the pinned one: the pin was chosen among equal
fields, and this is when it matters. The host
speed tables against onnxruntime and their geomean sentence are left to
scripts/regen-speed-tables.py, to run next: it writes them whole from their fields.

Exit status: 0 every figure refreshed or unchanged with nothing to check, 1 some need a hand or
a check, 2 a usage error.
"""
import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
from importlib import import_module

from readme_figures import (AGGREGATE_RE, BLOCK_RE, block_file, check_figures, factors,
                            figures_in, leaf_paths, line_of, parse_header, pin_after, pins_in,
                            pointer_of, quotes, skipped, value_at_pointer)

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


# Words that make a figure an extreme over rows (slowest, at most, 1.08–1.24, 1.17 s or less):
# the row that holds it may be another one after a rerun.
EXTREME_BEFORE = re.compile(r"(?:at most|at least|up to|worst|best|slowest|fastest|largest|"
                            r"smallest|highest|lowest)(?:\W+[a-z]+)?\W{0,3}$|–$", re.I)
EXTREME_AFTER = re.compile(r"^(?: ?[a-zA-Z%]{1,2})?(?: or (?:less|more)|–)")


def refresh_figure(fig, pin, before, after, names, results):
    """(new token, check, None) or (None, None, why a person must look). `before` and `after`
    are the README text around the figure (words that make it an extreme)."""
    if pin is None:
        return None, None, "no pin names its field (scripts/pin-readme-figures.py)"
    name = block_file(names, pin.file)
    where = f"{pin.file}#{pin.pointer}"
    if name is None:
        return None, None, f"its pin names {pin.file}, which the block does not"
    old, new = results.load(name, old=True), results.load(name, old=False)
    for doc, when in ((old, results.old[:12]), (new, "now")):
        if isinstance(doc, Exception):
            return None, None, f"{name} at {when}: {doc}"
    was = value_at_pointer(old, pin.pointer)
    factor = next((f for f in factors(fig.scale)
                   if was is not None and quotes(fig.value, fig.decimals, was, f)), None)
    if factor is None:
        return None, None, f"{where} at {results.old[:12]} was not {fig.token}: out of date already?"
    extreme = EXTREME_BEFORE.search(before) or EXTREME_AFTER.match(after)
    aggregate = AGGREGATE_RE.match(pin.pointer)  # max(...) or min(...): the extreme itself.
    if extreme and not aggregate and any(k.isdigit() for k in pin.pointer.split("/")):
        return None, None, (f"an extreme over rows (\"{extreme.group(0).strip()}\"), from {where}: "
                            "another row may hold it now")
    leaf = value_at_pointer(new, pin.pointer)
    if leaf is None:
        return None, None, f"{where} is gone (or holds no number)"
    if leaf * factor < 0:
        return None, None, f"{where} is negative now ({leaf:g}), no figure can quote it"
    text = format_like(fig, leaf * factor)
    # Other fields that equalled the figure then: if one now says otherwise, the choice of pin
    # among them matters for the first time.
    others = []
    for path, value in [] if aggregate else leaf_paths(old):
        pointer = pointer_of(path)
        if pointer != pin.pointer and quotes(fig.value, fig.decimals, value, factor):
            now = value_at_pointer(new, pointer)
            if now is not None and now >= 0 and format_like(fig, now * factor) != text:
                others.append(f"{pin.file}#{pointer} ({format_like(fig, now * factor)})")
    check = None
    if others:
        check = (f"refreshed from its pin {where} ({text}); {others[0]}"
                 f"{f' and {len(others) - 1} more' if len(others) > 1 else ''} equalled it at "
                 f"{results.old[:12]} and now differs: is the pin the right field?")
    return text, check, None


def refresh(readme, results, owned=(), verbose=False):
    """The README with every pinned figure refreshed, except those in the spans `owned`
    (regen-speed-tables.py writes them). Returns (new text, counts, need a hand, checks)."""
    edits, counts, hand, checks = [], {"refreshed": 0, "unchanged": 0, "owned": 0}, [], []
    for block in BLOCK_RE.finditer(readme):
        try:
            patterns, skips = parse_header(block.group(1))
        except ValueError as e:
            hand.append(f"README.md:{line_of(readme, block.start())}: block header: {e}")
            continue
        names = results.expand(patterns)
        body = block.group(2)
        pins = pins_in(body)
        for fig in figures_in(body):
            if skipped(fig.token, skips) and pin_after(body, fig, pins) is None:
                continue
            start = block.start(2) + fig.start
            if any(a <= start < b for a, b in owned):
                counts["owned"] += 1
                continue
            line = line_of(readme, start)
            before = re.sub(r"<!--.*?-->", "", body[max(0, fig.start - 200):fig.start])[-24:]
            after = re.sub(r"<!--.*?-->", "", body[fig.end:fig.end + 200])[:12]
            new, check, why = refresh_figure(fig, pin_after(body, fig, pins), before, after,
                                             names, results)
            if why:
                hand.append(f"README.md:{line}: {fig.token}: {why}")
                continue
            if check:
                checks.append(f"README.md:{line}: {fig.token}: {check}")
            if new == fig.token:
                counts["unchanged"] += 1
            else:
                counts["refreshed"] += 1
                edits.append((start, block.start(2) + fig.end, new))
                if verbose:
                    print(f"README.md:{line}: {fig.token} -> {new}")
    for start, end, new in reversed(edits):
        readme = readme[:start] + new + readme[end:]
    return readme, counts, hand, checks


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
    new, counts, hand, checks = refresh(readme, Results(args.root, args.old_commit), owned,
                                        args.verbose)
    for h in hand:
        print("needs a hand: " + h)
    for c in checks:
        print("check: " + c)
    if not args.dry_run and new != readme:
        with open(path, "w") as f:
            f.write(new)
    # The checker's word on the result: a refreshed figure must quote its file now.
    for problem in check_figures(new, args.root, owned)[0]:
        print("after refresh: " + problem)
    print(f"{counts['refreshed']} refreshed, {counts['unchanged']} unchanged, {len(hand)} need a "
          f"hand, {len(checks)} to check; {counts['owned']} in the speed tables, for "
          "scripts/regen-speed-tables.py"
          + (" (dry run: README.md not written)" if args.dry_run else ""))
    return 1 if hand or checks else 0


if __name__ == "__main__":
    sys.exit(main())
