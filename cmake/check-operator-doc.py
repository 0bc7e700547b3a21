#!/usr/bin/python3
"""docs/adding-an-operator.md's walk-throughs against the tree.

Each section headed "## ...: N files" lists exactly N numbered steps, each
naming the file it touches; every repository path the page quotes in
backticks (src/..., tests/..., device_db/...) exists. A counted section that
adds an operator (all but those headed "An int8 ...", the int8 builds of an
operator that exists) lists its Ops.def line among its steps.

Usage: check-operator-doc.py --root DIR [--doc FILE]
"""
import argparse
import os
import re
import sys

ROOTS = ("src/", "tests/", "device_db/", "docs/", "cmake/", "scripts/", "python/", "bench/")
OPS_DEF = "src/ir/include/bundlefit/ir/Ops.def"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--doc", help="the page (default: ROOT/docs/adding-an-operator.md)")
    args = parser.parse_args()
    doc = args.doc or os.path.join(args.root, "docs", "adding-an-operator.md")
    text = open(doc, encoding="utf-8").read()
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        for path in re.findall(r"`([^`\s]+)`", line):
            path = path.rstrip(".,:;")
            if path.startswith(ROOTS) and not re.search(r"[<>*]", path) and \
                    not os.path.exists(os.path.join(args.root, path)):
                problems.append(f"{doc}:{number}: `{path}` does not exist")
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    for section in sections:
        heading = section.splitlines()[0]
        counted = re.search(r": (\d+) files?$", heading)
        if not counted:
            continue
        steps = re.findall(r"^(\d+)\. ", section, flags=re.M)
        if len(steps) != int(counted.group(1)):
            problems.append(f"{doc}: \"{heading}\" lists {len(steps)} numbered files, not "
                            f"{counted.group(1)}")
        if not heading.startswith("An int8") and OPS_DEF not in section:
            problems.append(f"{doc}: \"{heading}\" adds an operator but not its {OPS_DEF} line")
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s) in {doc}" if problems else f"{doc}: counts and paths hold")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
