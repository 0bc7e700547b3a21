"""The README's figures blocks, their figures' fields, and the rules that tie the two.

Shared by check-readme-figures.py (is every figure its field?), refresh-readme-figures.py (what
is that field now?) and pin-readme-figures.py (which field is a new figure?), so all three read a
figure the same way. check-readme-figures.py's docstring states the rules.
"""
import collections
import glob
import json
import os
import re

BLOCK_RE = re.compile(r"<!--\s*figures:(.*?)-->(.*?)<!--\s*/figures\s*-->", re.S)
# A number not glued to a word: 1,505,280  0.332  91.3%  7, or with the suffix M (millions) or x
# (a ratio): 6.25M  1.12x
NUMBER_RE = re.compile(
    r"(?<![\w.\-/])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)([Mx])?(?![\w\-]|\.\d|,\d{3})")
SUFFIX_SCALE = {"M": 1e6, "x": 1.0, None: 1.0}

# One figure: its text, its value as written (6.25 for 6.25M), its decimals, the scale of its
# suffix (1e6 for M) and where it is in the text it was found in.
Figure = collections.namedtuple("Figure", "token value decimals scale start end")

# The path element that stands for a list's length (71 traces is len(traces)).
LENGTH = "#length"

# A figure's field, written right after it (after its % sign when it has one):
# 1,505,280<!--@memory.json#/models/3/peak_bytes--> names the block's results file memory.json
# and a JSON pointer (RFC 6901) into it; a pointer to a list stands for the list's length.
# An extreme over rows names them all, so that it stays the extreme when another row takes it:
# 1.72<!--@codegen.json#max(/compile/[model!=mobilenet_v2]/wall_s)--> is the largest wall_s of
# the rows whose model is not mobilenet_v2; a key may be "*" (every element of a list, every
# value of an object), "{1,5}" (those keys) or one or more [key=value] / [key!=value] (the
# elements of a list whose field is, or is not, that value, compared as text). Such keys need
# max(...) or min(...): an empty selection, or a row without the field, holds no number.
PIN_RE = re.compile(r"<!--@([^#\s]+)#((?:max|min)\(/[^)]*\)|/.*?)-->")
AGGREGATE_RE = re.compile(r"^(max|min)\((/.*)\)$")
FILTER_RE = re.compile(r"\[([^\]!=]+)(!?=)([^\]]*)\]")
Pin = collections.namedtuple("Pin", "file pointer start end")


def _blank(match):
    """Text that is not figures, replaced by as many spaces: offsets stay those of the README."""
    return re.sub(r"[^\n]", " ", match.group(0))


def figures_in(text):
    """Every figure-like number in `text`, skipping comments, `code spans` and link targets."""
    text = re.sub(r"<!--.*?-->", _blank, text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", _blank, text)           # code spans: commands and options
    text = re.sub(r"(?<=\])\([^)]*\)", _blank, text)    # link targets
    # A table's header row names columns (opt 2, level 0): its numbers are not figures.
    text = re.sub(r"^[ \t]*\|.*\|[ \t]*\n(?=[ \t]*\|[-:| ]+\|[ \t]*$)", _blank, text, flags=re.M)
    for m in NUMBER_RE.finditer(text):
        token = m.group(1) + (m.group(2) or "")
        plain = m.group(1).replace(",", "")
        decimals = len(plain.split(".")[1]) if "." in plain else 0
        yield Figure(token, float(plain), decimals, SUFFIX_SCALE[m.group(2)], m.start(), m.end())


def pins_in(text):
    """{offset: Pin} for every field pin in `text`."""
    return {m.start(): Pin(m.group(1), m.group(2), m.start(), m.end()) for m in PIN_RE.finditer(text)}


def pin_after(text, fig, pins):
    """The pin that names `fig`'s field: right after it, or after its % sign."""
    at = fig.end + (1 if text[fig.end:fig.end + 1] == "%" else 0)
    return pins.get(at)


def pointer_of(path):
    """A leaf_paths path as a JSON pointer: ('host', 3, 'ratio') -> /host/3/ratio; a list's
    length -> the list's pointer."""
    keys = [k for k in path if k != LENGTH]
    return "".join("/" + str(k).replace("~", "~0").replace("/", "~1") for k in keys)


def _child(node, key):
    if isinstance(node, list) and key.isdigit() and int(key) < len(node):
        return node[int(key)]
    if isinstance(node, dict) and key in node:
        return node[key]
    return None


def _number(node):
    if isinstance(node, list):
        return float(len(node))
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        return None
    return float(node)


def _branches(key):
    """Does this pointer key stand for many (*, {a,b}, [k=v]...)?"""
    return key == "*" or (key.startswith("{") and key.endswith("}")) or \
        (key.startswith("[") and FILTER_RE.sub("", key) == "")


def _text(value):
    """A field as a filter compares it: 10000 for 10000 and 10000.0, true/false, the string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _values(node, keys):
    """Every number the pointer's keys reach from node ("*", "{a,b}" and "[k=v]" branch); None
    where a path holds no number, so that a row missing its field is not silently left out."""
    if not keys:
        yield _number(node)
        return
    raw, rest = keys[0], keys[1:]
    if _branches(raw):
        if raw == "*":
            children = node if isinstance(node, list) else \
                list(node.values()) if isinstance(node, dict) else [None]
        elif raw.startswith("{"):
            children = [_child(node, k.strip()) for k in raw[1:-1].split(",")]
        else:
            clauses = FILTER_RE.findall(raw)
            children = [row for row in node if isinstance(row, dict) and all(
                (_text(row.get(k)) == v) == (op == "=") for k, op, v in clauses)] \
                if isinstance(node, list) else []
        for child in children or [None]:
            yield from _values(child, rest)
        return
    child = _child(node, raw.replace("~1", "/").replace("~0", "~"))
    yield from _values(child, rest) if child is not None else iter([None])


def value_at_pointer(doc, pointer):
    """The number a JSON pointer names (a list: its length), or the largest or smallest of the
    numbers an aggregate pin (max(...), min(...)) names; None when there is none."""
    aggregate = AGGREGATE_RE.match(pointer)
    inner = aggregate.group(2) if aggregate else pointer
    keys = inner.split("/")[1:]
    if not aggregate and any(_branches(k) for k in keys):
        return None  # Many rows, one figure: only an extreme can quote them.
    values = list(_values(doc, keys))
    if not values or None in values:
        return None
    if not aggregate:
        return values[0]
    return (max if aggregate.group(1) == "max" else min)(values)


def block_files(root, patterns):
    """The results files a block names, relative to root; shell patterns allowed
    (codegen_memory_opt?.json). A pattern nothing matches stays, so that opening it says so."""
    names = []
    for pattern in patterns:
        found = sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, pattern)))
        names += found or [pattern]
    return names


def block_file(names, pin_file):
    """The block's results file a pin names (by its file name), or None."""
    found = [n for n in names if n == pin_file or os.path.basename(n) == pin_file]
    return found[0] if len(found) == 1 else None


def leaf_paths(node, path=()):
    """(path, number) for every number in a JSON document and the length of every list; a path
    is a tuple of keys and indices, ending in LENGTH for a list's length."""
    if isinstance(node, bool) or node is None:
        return
    if isinstance(node, (int, float)):
        yield path, float(node)
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from leaf_paths(value, path + (key,))
    elif isinstance(node, list):
        yield path + (LENGTH,), float(len(node))
        for i, value in enumerate(node):
            yield from leaf_paths(value, path + (i,))


def factors(scale):
    """The factors a leaf may be quoted at: itself, x100 (a percentage), x1000 (s as ms);
    a suffix's scale divides (6,249,449 quoted as 6.25M)."""
    return (1.0 / scale,) if scale != 1.0 else (1.0, 100.0, 1000.0)


def quotes(value, decimals, leaf, factor):
    """Does a figure of `value` with `decimals` quote leaf x factor at that precision?"""
    scaled = leaf * factor
    if decimals == 0:
        return scaled == value or (scaled != int(scaled) and round(scaled) == value)
    return round(scaled, decimals) == value


def has_source(value, decimals, candidates, scale=1.0):
    return any(quotes(value, decimals, leaf, f) for leaf in candidates for f in factors(scale))


def parse_header(header):
    """'bench/results/a.json b.json; not figures: 0.25, 224' -> files, skips."""
    parts = header.split(";")
    files = parts[0].split()
    skips = set()
    for part in parts[1:]:
        key, _, rest = part.partition(":")
        if key.strip() != "not figures":
            raise ValueError(f"unknown clause '{part.strip()}'")
        skips.update(s.strip() for s in rest.split(",") if s.strip())
    return files, skips


def skipped(token, skips):
    """A number the block's "not figures:" lists (with or without its M or x): skipped where it
    has no pin (60 MobileNetV1s is a setting; 60 of which do not fit, pinned, is a figure)."""
    return token in skips or token.rstrip("Mx") in skips


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def check_figures(readme_text, root, owned=()):
    """Returns (problems, files used, figures checked). Figures in the spans `owned` are written
    by regen-speed-tables.py from fields its rules name: the caller checks those with it."""
    problems, used, checked = [], set(), 0
    cache = {}
    for block in BLOCK_RE.finditer(readme_text):
        line = line_of(readme_text, block.start())
        try:
            files, skips = parse_header(block.group(1))
        except ValueError as e:
            problems.append(f"README.md:{line}: {e}")
            continue
        if not files:
            problems.append(f"README.md:{line}: a figures block names no results file")
            continue
        names = block_files(root, files)
        for name in names:
            if name not in cache:
                try:
                    with open(os.path.join(root, name)) as f:
                        cache[name] = json.load(f)
                except (OSError, ValueError) as e:
                    problems.append(f"README.md:{line}: {name}: {e}")
                    cache[name] = None
            used.add(name)
        body = block.group(2)
        pins = pins_in(body)
        for fig in figures_in(body):
            pin = pin_after(body, fig, pins)
            if pin is None and skipped(fig.token, skips):
                continue  # A setting; the same number with a pin is a figure.
            start = block.start(2) + fig.start
            if any(a <= start < b for a, b in owned):
                continue
            checked += 1
            where = f"README.md:{line_of(readme_text, start)}: {fig.token}"
            if pin is None:
                problems.append(f"{where} names no field: write <!--@FILE#/json/pointer--> right "
                                "after it (scripts/pin-readme-figures.py finds it)")
                continue
            name = block_file(names, pin.file)
            if name is None:
                problems.append(f"{where}: its pin names {pin.file}, which the block does not")
                continue
            if cache[name] is None:
                continue  # The file's own problem is reported above.
            value = value_at_pointer(cache[name], pin.pointer)
            if value is None:
                problems.append(f"{where}: {pin.file}#{pin.pointer} holds no number")
            elif not has_source(fig.value, fig.decimals, [value], fig.scale):
                shown = f"{int(value):,}" if value == int(value) else f"{value:g}"
                problems.append(f"{where} is not {pin.file}#{pin.pointer} ({shown})")
    # The Figures section quotes measurements only: each needs a block.
    section = re.search(r"^## Figures\n(.*?)(?=^## |\Z)", readme_text, re.S | re.M)
    if section:
        outside = BLOCK_RE.sub(" ", section.group(1))
        start = line_of(readme_text, section.start())
        for fig in figures_in(outside):
            problems.append(f"README.md (## Figures, from line {start}): {fig.token} is outside "
                            "any figures block, so it names no results file")
    return problems, used, checked
