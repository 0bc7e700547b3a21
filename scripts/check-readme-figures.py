#!/usr/bin/python3
"""Checks that every figure the README quotes comes from a results file.

The README marks where its measured figures come from with HTML comments:

    <!-- figures: bench/results/memory.json; not figures: 0.25, 224 -->
    ... prose and tables ...
    <!-- /figures -->

Inside such a block every number (1,505,280, 0.332, 91.3%, 3.4 s, 6.25M,
1.12x) names the field it quotes, in a comment right after it (after its %
sign when it has one):

    1,505,280<!--@memory.json#/models/3/peak_bytes--> bytes

the block's results file by name and a JSON pointer into it (a list stands for
its length: 71 traces). An extreme over rows ("at most", "slowest", a range)
names every row it is taken over, max(/compile/[model!=mobilenet_v2]/wall_s) or
min(/rows/*/seconds) (readme_figures.py says how), so that it is checked as the
extreme even after another row has taken it. The figure must equal that field
at the precision the README shows: the value itself, or the value x100 (a ratio quoted as a
percentage), or x1000 (seconds quoted as ms); "M" quotes millions (6.25M is
6,249,449 at two decimals) and "x" a ratio. Equal to some other number of the
file is not enough. scripts/pin-readme-figures.py writes the pins of new
figures. The host speed tables against onnxruntime are compared cell by cell
with the fields scripts/regen-speed-tables.py takes them from (its --check).
Numbers inside `code spans`, inside words (Cortex-M7, 96x96, V2) and those
listed after "not figures:" (model names and settings, not measurements) are
skipped unless they carry a pin (the same number can be a setting in one place
and a figure in another). Every number in the README's "## Figures" section must sit in such a
block: a figure there without a named source fails.

Staleness: each results file records the git commit whose build produced it
("commit"), and bench/results/sources.json lists, per results file, the source
paths it measures. A results file is stale when one of those paths changed
after its commit (or when it records no commit). Stale files are reported as
warnings; with --strict they fail the check.

Exit status: 0 every figure has a source (warnings allowed), 1 a figure
without a source, a malformed block or (with --strict) a stale results file,
77 (--strict only) when the git history to judge staleness is not here (not a
checkout, or a shallow clone): ctest reports a skip, not a pass.
"""
import argparse
import json
import os
import subprocess
import sys

from importlib import import_module

from readme_figures import check_figures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git(root, *args):
    return subprocess.run(["git", "-C", root] + list(args), capture_output=True, text=True)


class HistoryUnavailable(Exception):
    """The git history needed to tell a stale results file is not here."""


# ctest's SKIP_RETURN_CODE: --strict cannot judge staleness without the history.
EXIT_SKIP = 77


def stale_results(root, names):
    """Warnings, one per results file whose measured code changed after its commit."""
    manifest_path = os.path.join(root, "bench", "results", "sources.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        return [f"bench/results/sources.json: {e}"]
    if git(root, "rev-parse", "HEAD").returncode != 0:
        raise HistoryUnavailable("not a git checkout")
    if git(root, "rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        raise HistoryUnavailable("a shallow clone: the commits the results name may be missing")
    warnings = []
    for name in sorted(set(names) | {"bench/results/" + k for k in manifest if not k.startswith("_")}):
        key = os.path.basename(name)
        paths = manifest.get(key)
        if not paths:
            warnings.append(f"{name}: no source paths in bench/results/sources.json")
            continue
        try:
            with open(os.path.join(root, name)) as f:
                result = json.load(f)
        except (OSError, ValueError) as e:
            warnings.append(f"{name}: {e}")
            continue
        commit = result.get("commit")
        if not commit and "git_commit" in result:  # bench_mcu.py before bundlefit.bench_mcu/2
            warnings.append(f"{name}: records \"git_commit\", not \"commit\": written by an older "
                            "benchmark (rerun it)")
            continue
        if not commit or commit == "unknown":
            warnings.append(f"{name}: records no commit (rerun its benchmark)")
            continue
        base = commit.removesuffix("-dirty")
        if git(root, "cat-file", "-e", base + "^{commit}").returncode != 0:
            warnings.append(f"{name}: commit {base} is not in this repository")
            continue
        # Markdown beside the code (a library's README) is not what the benchmark ran.
        changed = git(root, "log", "--format=%h %s", f"{base}..HEAD", "--", *paths,
                      ":(exclude,glob)**/*.md").stdout.split("\n")
        changed = [c for c in changed if c]
        if changed:
            warnings.append(f"{name}: measured at {base[:12]}; {len(changed)} later commit(s) change "
                            f"{' '.join(paths)} (newest: {changed[0][:72]})")
        elif commit.endswith("-dirty"):
            warnings.append(f"{name}: measured on a tree with uncommitted changes ({commit})")
    return warnings


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT, help="repository root (default: this script's)")
    ap.add_argument("--strict", action="store_true", help="a stale results file fails the check")
    args = ap.parse_args()
    with open(os.path.join(args.root, "README.md")) as f:
        readme = f.read()
    # The speed tables' cells are checked against their fields by regen-speed-tables.py.
    speed_tables, owned, speed_problems = import_module("regen-speed-tables"), [], []
    try:
        owned = speed_tables.spans(readme, args.root)
        speed_problems = [f"{where}: a speed table or its geomean sentence is not what its "
                          "fields say (scripts/regen-speed-tables.py rewrites it)"
                          for where in speed_tables.regen(readme, args.root)[1]]
    except (OSError, ValueError, KeyError) as e:
        speed_problems = [f"speed tables: {e}"]
    problems, used, checked = check_figures(readme, args.root, owned)
    problems += speed_problems
    try:
        stale = stale_results(args.root, used)
    except HistoryUnavailable as e:
        for p in problems:
            print("error: " + p)
        print(f"{checked} README figures checked: {len(problems)} not their field; staleness not "
              f"checked ({e})")
        if problems:
            return 1
        return EXIT_SKIP if args.strict else 0
    for p in problems:
        print("error: " + p)
    for w in stale:
        print(("error: " if args.strict else "warning: ") + "stale: " + w)
    print(f"{checked} README figures checked against {len(used)} results files: "
          f"{len(problems)} not their field (or no field), {len(stale)} staleness "
          f"{'error' if args.strict else 'warning'}(s)")
    return 1 if problems or (args.strict and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
