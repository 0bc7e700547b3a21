#!/usr/bin/env python3
"""Fails on a source file over the length limit without a reason at its top.

A file past about 800 lines mixes purposes more often than not (issue 31:
LowerGraph.cpp at 1,845 lines held LLVM helpers, a lambda table and ~50
emitters). The rule: every C, C++ and Python file git tracks under the
product's folders (src, planner, device_db, python, reports, bench, fuzz,
examples, scripts, cmake) is at most --limit lines, or says why it is longer
in a line of its first 20 that contains "Longer than" followed by the
reason (`// Longer than 800 lines: one table of every operator's ...`).
Tests are left out: a doctest file is one test binary's cases, and its
length is what the binary checks.
`--plant NAME=LINES[:reason]` adds a file of that many lines, with the reason
line when `:reason` follows (the test of this check).
"""
import argparse
import pathlib
import subprocess
import sys

FOLDERS = ["src", "planner", "device_db", "python", "reports", "bench", "fuzz",
           "examples", "scripts", "cmake"]
SUFFIXES = {".c", ".h", ".cpp", ".hpp", ".py"}
REASON = "Longer than"
HEAD_LINES = 20


def tracked_files(root):
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--"] + FOLDERS,
                         capture_output=True, check=False)
    if out.returncode != 0:
        return None
    return [root / p for p in out.stdout.decode().split("\0")
            if p and pathlib.PurePath(p).suffix in SUFFIXES]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, type=pathlib.Path)
    ap.add_argument("--limit", type=int, default=800)
    ap.add_argument("--plant", action="append", default=[], metavar="NAME=LINES[:reason]")
    args = ap.parse_args()

    files = tracked_files(args.root)
    if files is None:
        # Not a checkout (a source tarball): the list of product files is
        # git's; ctest reports a skip, not a pass.
        print(f"{args.root}: not a git checkout, file lengths not checked")
        return 77
    texts = {}
    for f in files:
        try:
            texts[str(f.relative_to(args.root))] = f.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            continue  # deleted in the work tree, not yet in the index
    for plant in args.plant:
        name, lines = plant.split("=")
        lines, _, reason = lines.partition(":")
        head = ["// " + REASON + " the limit: planted with a reason."] if reason else []
        texts[name] = head + ["int x;"] * int(lines)

    problems = []
    for name, lines in sorted(texts.items()):
        if len(lines) <= args.limit:
            continue
        if any(REASON in line for line in lines[:HEAD_LINES]):
            continue
        problems.append(f"{name}: {len(lines)} lines, over {args.limit}, and its first "
                        f"{HEAD_LINES} lines give no reason (\"{REASON} ...\")")
    for p in problems:
        print(p)
    longest = max(texts.items(), key=lambda kv: len(kv[1]))
    print(f"{len(texts)} files checked, longest {longest[0]} ({len(longest[1])} lines); "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
