#!/usr/bin/python3
"""Rewrites the README's host speed tables against onnxruntime from bench/results.

Usage: scripts/regen-speed-tables.py [--root .] [--check]

refresh-readme-figures.py cannot refresh these: their rows are in the order of the ratios, which
a rerun changes, and a two-decimal ratio matches many numbers of the file (every per-round
ratio), so most cells are ambiguous. This rebuilds them from bench_codegen.py's results in the
README's format. A table is one whose header's first column is "model", inside a figures block
that names one results file of bench_codegen.py (codegen.json, codegen_vs_ort.json); columns
by their header:

    bundle / onnxruntime   host[].ratio (the median of the per-round ratios)
    rounds, min–max        host[].ratio_spread, "lo–hi"
    level N                host[].sides.LN.ratio (bench_codegen.py --levels)

Rows are sorted by the first ratio column, as bench prints them; each column keeps the
decimals its cells have. The geomean sentence of a --levels block ("Geomean 0.96x at level 0
(14 of 14 within 1.5x, worst 1.25x) and ...") takes its figures from summary.LN.

With --check nothing is written: exit 1 when a table or sentence differs from its file.
"""
import argparse
import json
import os
import re
import sys

from readme_figures import BLOCK_RE, line_of, parse_header

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROW_RE = re.compile(r"^([ \t]*)\|(.*)\|[ \t]*$")
# A table whose first column is "model": its header, the |---| line and its rows.
TABLE_RE = re.compile(r"^[ \t]*\|[ \t]*model[ \t]*\|.*\n"        # | model | level 0 | ...
                      r"[ \t]*\|[-:| ]+\|[ \t]*\n"                # |---|---:|
                      r"(?:[ \t]*\|.*\|[ \t]*(?:\n|$))*", re.M)  # | lenet | 0.73 | ... (rows)
# 0.96x at level 0 (14 of 14 within 1.5x, worst 1.25x); the line may break anywhere between.
GEOMEAN_RE = re.compile(r"(?P<geomean>\d+\.\d+)x\s+at\s+level\s+(?P<level>\d+)\s+\((?P<within>\d+)"
                        r"\s+of\s+(?P<models>\d+)\s+within\s+(?P<limit>\d+(?:\.\d+)?)x,\s+worst\s+"
                        r"(?P<worst>\d+\.\d+)x")


def cells(line):
    m = ROW_RE.match(line)
    return [c.strip() for c in m.group(2).split("|")] if m else None


def decimals(text):
    """Decimals of the first number in a cell: 2 for 0.30 or 0.28–0.31."""
    m = re.search(r"\d+(?:\.(\d+))?", text)
    return len(m.group(1) or "") if m else 2


def column_value(header, row, where):
    """The number(s) a column shows for one host row of bench_codegen.py's results."""
    if header == "bundle / onnxruntime":
        return row["ratio"]
    if header == "rounds, min–max":
        return tuple(row["ratio_spread"])
    m = re.fullmatch(r"level (\d+)", header)
    if m:
        side = row.get("sides", {}).get("L" + m.group(1))
        if side is None:
            raise ValueError(f"{where}: host row {row['model']} has no sides.L{m.group(1)} "
                             "(was bench_codegen.py run with --levels?)")
        return side["ratio"]
    raise ValueError(f"{where}: no rule for a column \"{header}\"")


def render(value, places):
    if isinstance(value, tuple):
        return "–".join(f"{v:.{places}f}" for v in value)
    return f"{value:.{places}f}"


def regen_table(table, results, where):
    """The table (header, |---| line, rows) with rows from `results`."""
    lines = table.rstrip("\n").split("\n")
    indent = ROW_RE.match(lines[0]).group(1)
    headers = cells(lines[0])
    old_rows = [cells(line) for line in lines[2:]]
    places = [decimals(c) for c in old_rows[0]] if old_rows else [2] * len(headers)
    rows = []
    for row in results.get("host", []):
        try:
            values = [column_value(h, row, where) for h in headers[1:]]
        except KeyError as e:
            raise ValueError(f"{where}: host row {row.get('model')} has no {e}") from None
        shown = [render(v, p) for v, p in zip(values, places[1:])]
        rows.append((values[0], [row["model"]] + shown))
    # By the first column's ratio (a range by its low end); stable: bench's order on ties.
    rows.sort(key=lambda r: r[0][0] if isinstance(r[0], tuple) else r[0])
    new = lines[:2] + [indent + "| " + " | ".join(r) + " |" for _, r in rows]
    return "\n".join(new) + table[len(table.rstrip("\n")):]


def regen_geomean(text, results, where):
    """The geomean sentence's figures from summary.LN."""
    def one(m):
        summary = results.get("summary", {}).get("L" + m.group("level"))
        if summary is None:
            raise ValueError(f"{where}: no summary.L{m.group('level')} for the geomean sentence")
        within = "within_" + m.group("limit").replace(".", "_") + "x"
        if within not in summary:
            raise ValueError(f"{where}: summary.L{m.group('level')} has no {within}")
        new = {"geomean": f"{summary['geomean_ratio']:.{len(m.group('geomean').split('.')[1])}f}",
               "within": str(summary[within]), "models": str(summary["models"]),
               "worst": f"{summary['worst_ratio']:.{len(m.group('worst').split('.')[1])}f}"}
        out, last = "", m.start()
        for name in ("geomean", "within", "models", "worst"):  # in the order they appear
            out += text[last:m.start(name)] + new[name]
            last = m.end(name)
        return out + text[last:m.end()]
    return GEOMEAN_RE.sub(one, text)


def regen_block(body, results, where):
    body = TABLE_RE.sub(lambda m: regen_table(m.group(0), results, where), body)
    return regen_geomean(body, results, where) if "summary" in results else body


def speed_blocks(readme, root):
    """(block, results, where) for each figures block quoting one bench_codegen.py results file."""
    for block in BLOCK_RE.finditer(readme):
        files, _ = parse_header(block.group(1))
        if len(files) != 1 or any(c in files[0] for c in "*?["):
            continue  # bench_codegen.py's speed tables each quote one file
        with open(os.path.join(root, files[0])) as f:
            results = json.load(f)
        if str(results.get("schema", "")).startswith("bundlefit.bench.codegen/"):
            yield block, results, f"README.md:{line_of(readme, block.start())} ({files[0]})"


def spans(readme, root):
    """Where in the README the text this script writes is (refresh-readme-figures.py leaves it)."""
    out = []
    for block, results, _ in speed_blocks(readme, root):
        patterns = (TABLE_RE, GEOMEAN_RE) if "summary" in results else (TABLE_RE,)
        out += [(block.start(2) + m.start(), block.start(2) + m.end())
                for pattern in patterns for m in pattern.finditer(block.group(2))]
    return out


def regen(readme, root):
    """The README with its speed tables regenerated; (text, [README lines of changed blocks])."""
    pieces, last, changed = [], 0, []
    for block, results, where in speed_blocks(readme, root):
        body = regen_block(block.group(2), results, where)
        if body != block.group(2):
            changed.append(where)
        pieces += [readme[last:block.start(2)], body]
        last = block.end(2)
    return "".join(pieces) + readme[last:], changed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT, help="repository root (default: this script's)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if out of date")
    args = ap.parse_args()
    path = os.path.join(args.root, "README.md")
    with open(path) as f:
        readme = f.read()
    try:
        new, changed = regen(readme, args.root)
    except (OSError, ValueError, KeyError) as e:
        print(f"regen-speed-tables: {e}", file=sys.stderr)
        return 2
    for where in changed:
        print(("differs: " if args.check else "rewritten: ") + where)
    if not changed:
        print("speed tables up to date")
    if changed and not args.check:
        with open(path, "w") as f:
            f.write(new)
    return 1 if changed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
