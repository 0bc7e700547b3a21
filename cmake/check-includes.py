#!/usr/bin/env python3
"""Checks every #include of the bundlefit libraries against their layer rules.

    check-includes.py --graph build/bundlefit-link-graph.cmake \
        --rules cmake/LayeringRules.cmake --compile-commands build/compile_commands.json

A file belongs to the library whose source directory holds it (the deepest
one: planner/formats is planner_formats, not planner). Starting from every
translation unit of compile_commands.json that belongs to a library, each
file's includes are resolved as the compiler would (the including file's
directory for "", then the unit's -I/-isystem directories), and every file of
the source tree they reach is read in turn. An include fails when

  * it is spelled with "../" (a path that climbs out of the include
    directories hides which layer it reaches), or
  * it resolves to a file of another library that the includer's layer does
    not list (cmake/LayeringRules.cmake: the same lists the link check reads),
    or that the includer does not link directly (it compiles only through
    another library's public link: say what you use).

A library that links a bundlefit library none of its files include fails too
(the link says it uses what it does not).

Files outside the libraries (system headers, third_party, generated files in
the build directory) are not checked. --plant LIBRARY=HEADER adds one include
of HEADER to the first unit of LIBRARY, to show the check fails
(tests/project: build_layering_includes_detects_forbidden_include).
Exit status 1 with one line per forbidden include, naming file, line, header
and the rule.
"""
import argparse
import json
import os
import re
import shlex
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SET = re.compile(r'^\s*set\(\s*(\w+)((?:\s+[^)#]*)?)\)', re.M)


def read_cmake_sets(path):
    """The variables of plain set(NAME values...) lines (what both files use)."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r'#[^\n"]*', '', text)
    values = {}
    for name, rest in SET.findall(text):
        items = []
        for token in shlex.split(rest):
            items.extend(t for t in token.split(";") if t)
        values[name] = items
    return values


def include_dirs(command, directory):
    args = shlex.split(command)
    dirs = []
    for i, arg in enumerate(args):
        for flag in ("-I", "-isystem", "-iquote"):
            if arg == flag and i + 1 < len(args):
                dirs.append(args[i + 1])
            elif arg.startswith(flag) and len(arg) > len(flag) and flag == "-I":
                dirs.append(arg[len(flag):])
    return [os.path.normpath(os.path.join(directory, d)) for d in dirs]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--graph", required=True)
    parser.add_argument("--rules", required=True)
    parser.add_argument("--compile-commands", required=True)
    parser.add_argument("--plant", action="append", default=[])
    options = parser.parse_args()

    graph = read_cmake_sets(options.graph)
    rules = read_cmake_sets(options.rules)
    libraries = graph.get("graph_libraries", [])
    dirs = {}
    for library in libraries:
        d = graph.get("dir_" + library)
        if d:
            dirs[library] = os.path.normpath(d[0])
    if not dirs:
        sys.exit(f"{options.graph}: no dir_<library> entries (cmake/Layering.cmake writes them)")
    build_dir = os.path.dirname(os.path.abspath(options.compile_commands))
    root = os.path.commonpath(list(dirs.values()))

    def owner(path):
        best = None
        for library, d in dirs.items():
            if path == d or path.startswith(d + os.sep):
                if best is None or len(d) > len(dirs[best]):
                    best = library
        return best

    links = {library: set(graph.get("links_" + library, [])) & set(libraries)
             for library in libraries}
    used = {}
    planted = {}
    for plant in options.plant:
        library, _, header = plant.partition("=")
        planted[library] = header

    units = json.load(open(options.compile_commands, encoding="utf-8"))
    errors = []
    checked = set()
    seen_units = 0
    for unit in units:
        path = os.path.normpath(os.path.join(unit["directory"], unit["file"]))
        library = owner(path)
        if library is None or path.startswith(build_dir + os.sep):
            continue
        seen_units += 1
        search = include_dirs(unit.get("command") or " ".join(unit["arguments"]), unit["directory"])
        extra = planted.pop(library, None)
        stack = [(path, extra)]
        while stack:
            current, extra = stack.pop()
            key = (current, tuple(search))
            if key in checked:
                continue
            checked.add(key)
            includer = owner(current)
            allowed = set(rules.get("layer_" + includer, [])) | {includer}
            try:
                lines = open(current, encoding="utf-8", errors="replace").read().splitlines()
            except OSError:
                continue
            if extra:
                lines.append(f'#include "{extra}"')
            for number, line in enumerate(lines, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                bracket, name = m.groups()
                shown = os.path.relpath(current, root)
                where = f"{shown}:(planted)" if extra and number == len(lines) else f"{shown}:{number}"
                if name.startswith("../") or "/../" in name:
                    errors.append(f'{where}: #include "{name}" climbs out with ../ '
                                  f"(include it by its library's include path)")
                candidates = ([os.path.dirname(current)] if bracket == '"' else []) + search
                resolved = None
                for d in candidates:
                    p = os.path.normpath(os.path.join(d, name))
                    if os.path.isfile(p):
                        resolved = p
                        break
                if resolved is None or resolved.startswith(build_dir + os.sep):
                    continue
                target = owner(resolved)
                if target is None:
                    continue
                if target not in allowed:
                    errors.append(f"{where}: includes {name} of bundlefit_{target}, which the "
                                  f"{includer} layer may not use (cmake/LayeringRules.cmake)")
                elif target != includer and target not in links.get(includer, set()):
                    errors.append(f"{where}: includes {name} of bundlefit_{target}, which "
                                  f"bundlefit_{includer} does not link directly")
                used.setdefault(includer, set()).add(target)
                stack.append((resolved, None))
    for library in planted:
        errors.append(f"--plant {library}=...: bundlefit_{library} has no translation unit")
    for library in sorted(dirs):
        for target in sorted(links[library] - used.get(library, set())):
            errors.append(f"bundlefit_{library} links bundlefit_{target} but none of its files "
                          f"includes a header of it")
    if errors:
        print("include layering: forbidden includes:")
        for e in sorted(set(errors)):
            print("  " + e)
        return 1
    print(f"include layering: {seen_units} translation units of {len(dirs)} libraries, "
          f"{len(checked)} files read, every include allowed by cmake/LayeringRules.cmake")
    return 0


if __name__ == "__main__":
    sys.exit(main())
