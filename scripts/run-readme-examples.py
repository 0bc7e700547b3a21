#!/usr/bin/python3
"""Runs the README's worked examples and shows where their output is no longer the README's.

Usage: scripts/run-readme-examples.py [--root .] [--bin build/bin] [--timeout 300]

An example is a `$ ` line inside a fenced block (a trailing backslash continues it on the next
line), and the lines up to the next `$ ` line or the fence's end are its standard output (the
README leaves out what goes to stderr, such as "memory-opt 2 (...)"). A `...` line in that
output stands for any number of lines, and so does a line wholly in parentheses that the
output does not have: the README's own note, "(the layer table, as above)"; each such note is
printed. Each command runs under bash with --bin first on PATH, in a scratch directory that
links every top-level entry of --root: relative paths resolve as from the root, and what the
examples write (bundle/, out/, lenet.yaml) stays out of the checkout.

A command is skipped, with the reason, when a program it runs is not on PATH or a file it reads
is absent (an argument ending in / or in .onnx, .tflite, .npy, .yaml, .json, .h, that no output
option names); the rest of its fenced block is then skipped too, since it builds on it.
Nothing is edited. Exit status: 0 every example run matches, 1 some differ, 2 a usage error.
"""
import argparse
import difflib
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUT_EXTENSIONS = (".onnx", ".tflite", ".npy", ".yaml", ".json", ".h")
OUTPUT_OPTIONS = {"-o", "--output", "--output-dir", "--out"}
CONTROL = {"|", "||", "&&", ";"}
ELISION = "..."


def examples(readme):
    """(README line, command, expected output lines, fenced block number) for every example."""
    found, fence, block, current = [], False, 0, None
    lines = readme.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            fence, current = not fence, None
            block += fence
        elif fence and line.startswith("$ "):
            start, command = i + 1, line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1].rstrip() + " " + lines[i].strip()
            current = [start, command, [], block]
            found.append(current)
        elif fence and current:
            current[2].append(line.rstrip())
        i += 1
    return [tuple(e) for e in found]


def missing(command, cwd, path):
    """Why `command` cannot run here (a program or an input file absent), or None."""
    try:
        words = shlex.split(command)
    except ValueError as e:
        return f"cannot split the command ({e})"
    first = True
    for i, word in enumerate(words):
        if word in CONTROL:
            first = True
            continue
        if first:
            first = False
            if not shutil.which(word, path=path):
                return f"needs {word}, not on PATH"
            continue
        if word.startswith(("-", ">", "<", "2>")) or (i and words[i - 1] in OUTPUT_OPTIONS):
            continue
        if word.endswith("/") or word.endswith(INPUT_EXTENSIONS):
            if not glob.glob(os.path.join(cwd, word)):
                return f"needs {word}, absent"
    return None


def notes(expected, actual):
    """The README's notes among its output lines: wholly in parentheses, in no line of output."""
    return [l for l in expected if re.fullmatch(r"\(.*\)", l.strip()) and l not in actual]


def align(expected, actual):
    """`expected` with each `...` replaced by the actual lines it stands for, so that a diff
    shows only real differences. Each run of lines between elisions is placed where it matches
    in `actual`, else where its first line that is in `actual` is."""
    segments, current, elided = [], [], set(notes(expected, actual))
    for line in expected:
        if line == ELISION or line in elided:
            segments.append(current)
            current = []
        else:
            current.append(line)
    segments.append(current)
    out, pos = list(segments[0]), len(segments[0])
    for segment in segments[1:]:
        start = find(segment, actual, pos)
        out += actual[pos:start] + segment
        pos = start + len(segment)
    if expected and (expected[-1] == ELISION or expected[-1] in elided):
        out += actual[pos:]
    return out


def find(segment, actual, pos):
    """Where `segment` sits in actual[pos:]: exactly, else by its first line found, else pos."""
    for start in range(pos, len(actual) - len(segment) + 1):
        if actual[start:start + len(segment)] == segment:
            return start
    for j, line in enumerate(segment):
        if line in actual[pos:]:
            return max(pos, actual.index(line, pos) - j)
    return pos


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT, help="repository root (default: this script's)")
    ap.add_argument("--bin", default="build/bin", help="directory of the built bundlefit, put "
                    "first on PATH (relative to --root; default build/bin)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per command (default 300)")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    bindir = os.path.join(root, args.bin)
    if not os.access(os.path.join(bindir, "bundlefit"), os.X_OK):
        print(f"run-readme-examples: no bundlefit in {bindir}: build it first", file=sys.stderr)
        return 2
    with open(os.path.join(root, "README.md")) as f:
        readme = f.read()
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    scratch = tempfile.mkdtemp(prefix="readme-examples-")
    counts = {"match": 0, "differ": 0, "skipped": 0}
    try:
        for entry in os.listdir(root):
            os.symlink(os.path.join(root, entry), os.path.join(scratch, entry))
        skipped_block = None
        for line, command, expected, block in examples(readme):
            why = ("an earlier command of its block was skipped" if block == skipped_block
                   else missing(command, scratch, env["PATH"]))
            if why:
                print(f"README.md:{line}: skipped ({why}): $ {command}")
                counts["skipped"] += 1
                skipped_block = block
                continue
            try:
                run = subprocess.run(["bash", "-c", command], cwd=scratch, env=env, text=True,
                                     capture_output=True, timeout=args.timeout)
                output, status, errors = run.stdout, run.returncode, run.stderr
            except subprocess.TimeoutExpired:
                output, status, errors = "", "timeout", f"no end after {args.timeout:g} s\n"
            actual = [l.rstrip() for l in output.rstrip("\n").split("\n")] if output.strip() else []
            while expected and not expected[-1]:
                expected = expected[:-1]
            aligned = align(expected, actual)
            same = aligned == actual
            counts["match" if same else "differ"] += 1
            print(f"README.md:{line}: {'matches' if same else 'differs'} (exit status {status}): "
                  f"$ {command}")
            for note in notes(expected, actual):
                print(f"  README note taken as an elision: {note.strip()}")
            if status != 0:
                sys.stdout.writelines(f"  stderr: {l}\n" for l in errors.splitlines()[-3:])
            if not same:
                sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(
                    aligned, actual, f"README.md:{line}", "actual output", lineterm="", n=2))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{counts['match']} examples match, {counts['differ']} differ, "
          f"{counts['skipped']} skipped")
    return 1 if counts["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
