#!/usr/bin/python3
"""Writes the field pin of every README figure that has none.

Usage: scripts/pin-readme-figures.py [--root .] [--dry-run]

check-readme-figures.py says what a pin is (1,505,280<!--@memory.json#/models/3/peak_bytes-->)
and checks each figure against its pin's field. For a figure of a `<!-- figures: ... -->` block
without one, the fields of the block's results files that the figure quotes under the checker's
rules are the candidates:
- one candidate: pinned;
- several (a value repeated in the file): a field whose key names the figure's unit, if the
  figure shows one (1.12x a ratio, 0.3 s a time); then the one whose pointer shares the most
  leading keys with the pin before it in the block (a table's next cell is in the same row or
  the next), else the first in the file. Each such choice is printed for a person to check;
- none: printed and left without a pin (the checker fails it).
The host speed tables are regen-speed-tables.py's: their cells get no pins.

Exit status: 0 nothing left to a person, 1 a figure left without a pin or pinned by a choice
among several (printed), 2 a usage error.
"""
import argparse
import json
import os
import re
import sys
from importlib import import_module

from readme_figures import (BLOCK_RE, LENGTH, block_files, factors, figures_in, leaf_paths, line_of,
                            parse_header, pin_after, pins_in, pointer_of, quotes, skipped)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def shared_keys(a, b):
    """How many leading keys two JSON pointers share."""
    n = 0
    for x, y in zip(a.split("/")[1:], b.split("/")[1:]):
        if x != y:
            break
        n += 1
    return n


def words(text):
    """Lower-case words of 3 letters or more (or a letter and digits: m7), plural s dropped."""
    return {w.rstrip("s") for w in re.findall(r"[a-z][a-z0-9]{2,}|[a-z][0-9]+", text.lower())}


def context(body, fig):
    """Words that say what a figure is, and the label of its table row: a table cell's column
    header and its row's first cell; in prose the six words before it and the two after."""
    line_start = body.rfind("\n", 0, fig.start) + 1
    line_end = body.find("\n", fig.end)
    line = body[line_start:line_end if line_end >= 0 else len(body)]
    if line.lstrip().startswith("|"):
        column = body[line_start:fig.start].count("|") - 1
        lines = body[:line_start].split("\n")
        for k in range(len(lines) - 1, 0, -1):  # the header is the line above the |---| line
            if re.fullmatch(r"[ \t]*\|[-:| ]+\|[ \t]*", lines[k]):
                header = [c.strip() for c in lines[k - 1].strip().strip("|").split("|")]
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                label = re.sub(r"<!--.*?-->|[`*]", "", cells[0]).strip()
                head = header[column] if column < len(header) else ""
                return words(head), label.lower(), head.lower()
        return set(), "", ""
    before = re.sub(r"<!--.*?-->", " ", body[max(0, fig.start - 200):fig.start])
    after = re.sub(r"<!--.*?-->", " ", body[fig.end:fig.end + 60])
    return words(" ".join(before.split()[-6:] + after.split()[:2])), "", ""


def strings_along(doc, pointer):
    """The string values of every object the pointer passes through (a row's name, model...)."""
    out, node = [], doc
    for key in pointer.split("/")[1:-1]:
        key = key.replace("~1", "/").replace("~0", "~")
        node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, dict):
            out += [v.lower() for v in node.values() if isinstance(v, str)]
    return out


def norm(text):
    """A name without case or punctuation: MobileNetV1-0.25 and mobilenet_v1_025 are one."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def row_score(doc, pointer, label, head):
    """How well the objects a field sits in name the table row's label and column header (a
    row per model and core: LeNet, Cortex-M4): 2 for each named whole, about 1 for a name
    that is a word of the label."""
    row = 0
    if label:
        names = strings_along(doc, pointer)
        for text in (label, head):
            if text and norm(text) in [norm(n) for n in names]:
                row += 2
            else:  # trained_lstm in "trained_lstm (mnist_lstm, float)": the longer the better
                row += max((1 + len(n) / 1000 for n in names if len(n) > 2 and re.search(
                    r"(?<![a-z0-9])" + re.escape(n) + r"(?![a-z0-9])", text)), default=0)
    return row


def score(candidate, doc, said, label, head):
    """How well a field matches what the README says of the figure: its row (row_score), then
    its keys against the words around it, and a number in the column's header (opt 2) against
    the pointer's keys after the row's index."""
    pointer = candidate[1]
    keys = words(pointer.replace("/", " ").replace("_", " "))
    row = row_score(doc, pointer, label, head)
    segments = [k for k in pointer.split("/")[1:] if k.isdigit()][1:]
    numbers = sum(1 for n in re.findall(r"\d+", head) if n in segments)
    return (row, len(said & keys) + numbers)


def candidates(fig, names, docs):
    """(file name, pointer, unit of its key) of every field the figure quotes, in file order."""
    out = []
    for name in names:
        for path, leaf in leaf_paths(docs[name]):
            if any(quotes(fig.value, fig.decimals, leaf, f) for f in factors(fig.scale)):
                entry = (os.path.basename(name), pointer_of(path), unit_of_path(path))
                if entry not in out:
                    out.append(entry)
    return out


def pin_block(body, names, docs, skips, owned, where):
    """(edits, notes): each edit an (offset in body, pin text); notes for a person."""
    edits, notes, previous = [], [], None
    file_of = {os.path.basename(n): n for n in names}
    pins = pins_in(body)
    for fig in figures_in(body):
        if skipped(fig.token, skips) or any(a <= fig.start < b for a, b in owned):
            continue
        pin = pin_after(body, fig, pins)
        if pin is not None:
            previous = pin.pointer
            continue
        line = where(fig.start)
        found = candidates(fig, names, docs)
        if not found:
            notes.append(f"README.md:{line}: {fig.token}: no field of {', '.join(names)} is it")
            continue
        chosen = found
        said, label, head = context(body, fig)
        if label:
            # A table cell: a field in the row its label and header name, when the file has one.
            doc = docs[file_of[found[0][0]]] if len(file_of) == 1 else None
            if doc is not None:
                best = max((row_score(doc, pointer_of(p), label, head) for p, _ in leaf_paths(doc)),
                           default=0)
                if best >= 2 and max(row_score(doc, c[1], label, head) for c in found) < best:
                    notes.append(f"README.md:{line}: {fig.token}: equals no field of its row "
                                 f"({label}, {head}): out of date?")
                    continue
        unit = unit_of_figure(fig, body[fig.end:fig.end + 12])
        if len(chosen) > 1 and unit:
            chosen = [c for c in chosen if c[2] == unit] or chosen
        if len(chosen) > 1:
            scores = {c: score(c, docs[file_of[c[0]]], said, label, head) for c in chosen}
            best = max(scores.values())
            chosen = [c for c in chosen if scores[c] == best]
        if len(chosen) > 1 and previous:
            best = max(shared_keys(c[1], previous) for c in chosen)
            chosen = [c for c in chosen if shared_keys(c[1], previous) == best]
        file, pointer, _ = chosen[0]
        if len(found) > 1:
            notes.append(f"README.md:{line}: {fig.token}: {file}#{pointer}, chosen among "
                         f"{len(found)} fields that equal it")
        at = fig.end + (1 if body[fig.end:fig.end + 1] == "%" else 0)
        edits.append((at, f"<!--@{file}#{pointer}-->"))
        previous = pointer
    return edits, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT, help="repository root (default: this script's)")
    ap.add_argument("--dry-run", action="store_true", help="report, but leave README.md as it is")
    args = ap.parse_args()
    path = os.path.join(args.root, "README.md")
    with open(path) as f:
        readme = f.read()
    owned = import_module("regen-speed-tables").spans(readme, args.root)
    edits, notes = [], []
    for block in BLOCK_RE.finditer(readme):
        files, skips = parse_header(block.group(1))
        names, docs = block_files(args.root, files), {}
        for name in names:
            with open(os.path.join(args.root, name)) as f:
                docs[name] = json.load(f)
        base = block.start(2)
        block_owned = [(a - base, b - base) for a, b in owned]
        found, said = pin_block(block.group(2), names, docs, skips, block_owned,
                                lambda offset: line_of(readme, base + offset))
        edits += [(base + at, text) for at, text in found]
        notes += said
    for note in notes:
        print(note)
    for at, text in sorted(edits, reverse=True):
        readme = readme[:at] + text + readme[at:]
    if edits and not args.dry_run:
        with open(path, "w") as f:
            f.write(readme)
    print(f"{len(edits)} figures pinned, {len(notes)} for a person to look at"
          + (" (dry run: README.md not written)" if args.dry_run else ""))
    return 1 if notes else 0


if __name__ == "__main__":
    sys.exit(main())
