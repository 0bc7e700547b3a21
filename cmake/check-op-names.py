#!/usr/bin/env python3
"""Fails on an operator named by a string outside its definition.

Rewrites name operators as Op::Conv (src/ir/include/bundlefit/ir/Ops.def),
so a misspelt name is a compile error; a string comparison such as
`node.opType == "Conv"` compiles whatever it says and, misspelt, is a rewrite
that silently never fires. This check finds, in src outside src/ops (the
definitions themselves, which register by name):
  - a comparison or assignment of an op type with a string or a kXxxOp
    constant: `opType == "Conv"`, `op != "Relu"`, `opType = "Gemm"`;
  - a list of two or more operator names as strings (`{"MaxPool", "Reshape"}`),
    the set-of-names form of the same test;
  - a node created under a literal operator name (`addNode("QuantizeLinear", ...)`):
    the string addNode is for importers, which pass the name the model holds.
`--plant FILE=LINE` adds LINE to FILE's text (the test of this check).
"""
import argparse
import pathlib
import re
import sys

COMPARE = [
    re.compile(r'\b(opType|op)\)?\s*(==|!=)\s*("|k[A-Z]\w*Op\b)'),
    re.compile(r'("|\bk[A-Z]\w*Op)\s*(==|!=)\s*[\w.>()-]*\b(opType|op)\b(?!\()'),
    re.compile(r'\bopType\s*=\s*("|k[A-Z]\w*Op\b)'),
]
LITERAL = re.compile(r'"([A-Za-z][\w.]*)"')
CREATE = re.compile(r'\b(addNode|insertNodeBefore)\(\s*"([A-Za-z][\w.]*)"')


def op_names(root):
    text = (root / 'src/ir/include/bundlefit/ir/Ops.def').read_text()
    names = set(re.findall(r'^BUNDLEFIT_OP\((\w+)\)', text, re.M))
    names |= set(re.findall(r'^BUNDLEFIT_MODEL_OP\(\w+, "([^"]+)"\)', text, re.M))
    return names


def strip_comment(line):
    # Enough for this code base: // never appears inside a string literal
    # on a line that names operators.
    at = line.find('//')
    return line if at < 0 else line[:at]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--root', required=True)
    parser.add_argument('--plant', action='append', default=[])
    args = parser.parse_args()
    root = pathlib.Path(args.root)
    names = op_names(root)
    planted = {}
    for plant in args.plant:
        path, line = plant.split('=', 1)
        planted.setdefault(path, []).append(line)
    problems = []
    for path in sorted((root / 'src').rglob('*')):
        if path.suffix not in ('.cpp', '.h') or (root / 'src/ops') in path.parents:
            continue
        rel = str(path.relative_to(root))
        lines = [(f'{rel}:{n}', line) for n, line in enumerate(path.read_text().splitlines(), 1)]
        lines += [(f'{rel}:(planted)', line) for line in planted.pop(rel, [])]
        for where, line in lines:
            code = strip_comment(line)
            if any(p.search(code) for p in COMPARE):
                problems.append(f'{where}: compares an op type with a string: {line.strip()}')
            elif any(m.group(2) in names for m in CREATE.finditer(code)):
                problems.append(f'{where}: creates a node by its name as a string: {line.strip()}')
            elif sum(1 for n in LITERAL.findall(code) if n in names) >= 2:
                problems.append(f'{where}: lists operators by name: {line.strip()}')
    if planted:
        sys.exit(f'check-op-names: --plant names a file not scanned: {", ".join(planted)}')
    for problem in problems:
        print(problem)
    if problems:
        print(f'{len(problems)} operator name(s) as strings outside src/ops: name them as '
              'Op::Name (bundlefit/ir/Op.h) and test with node.is() / node.op()')
        return 1
    print('no operator named by a string outside src/ops')
    return 0


if __name__ == '__main__':
    sys.exit(main())
