#!/usr/bin/env bash
# readme_figures_refresh: a README quoting results file v1 (committed), then a rerun writes v2;
# scripts/refresh-readme-figures.py OLD must rewrite every figure from the field its pin names,
# with v2's number in the figure's own style, and leave (and name, by line) the others.
set -euo pipefail
script=$(cd "$(dirname "${1:?usage: refresh-figures.sh REFRESH_SCRIPT}")" && pwd)/$(basename "$1")
. "$(dirname "$0")/temp-git-repo.sh"
mkdir -p bench/results
cat >README.md <<'MD'
# Speed
<!-- figures: bench/results/speed.json; not figures: 7 -->
Arena 1,505,280<!--@speed.json#/arena--> bytes over 3<!--@speed.json#/traces--> traces; 91.3%<!--@speed.json#/top1--> top-1; 6.25M<!--@speed.json#/insns--> instructions,
1.12x<!--@speed.json#/ratio--> the other's; one run 44.86<!--@speed.json#/run_s--> ms (`--arena 7,200` is a code span, no figure).
Warm 0.50<!--@speed.json#/warm/ratio--> ratio; the old model took 1.25<!--@speed.json#/old_model_s--> s; 2<!--@speed.json#/rounds--> rounds of seed 7; out of date: 0.99x<!--@speed.json#/ratio-->
and, with no pin, 0.08x; slowest run 2.5<!--@speed.json#/runs/0/s--> s; at most 2.5<!--@speed.json#max(/runs/*/s)--> s.
<!-- /figures -->
Outside any block: 1,505,280 stays.
MD
cat >bench/results/speed.json <<'JSON'
{"arena": 1505280, "peak": 1505280, "traces": ["a", "b", "c"], "top1": 0.913, "insns": 6249449,
 "ratio": 1.117, "run_s": 0.04486, "cold": {"ratio": 0.5}, "warm": {"ratio": 0.5},
 "old_model_s": 1.25, "rounds": 2, "cold_s": 0.08, "runs": [{"s": 2.5}, {"s": 1.0}]}
JSON
git add -A && git commit -qm "results v1, README from them"
old=$(git rev-parse HEAD)
cat >bench/results/speed.json <<'JSON'
{"arena": 1498112, "peak": 1498112, "traces": ["a", "b", "c", "d"], "top1": 0.9207, "insns": 12040000,
 "ratio": 0.996, "run_s": 0.0449, "cold": {"ratio": 0.61}, "warm": {"ratio": 0.47},
 "rounds": 2, "cold_s": 0.09, "runs": [{"s": 2.0}, {"s": 3.0}]}
JSON
git commit -qam "results v2"
set +e
/usr/bin/python3 "$script" --root "$repo" "$old" >out.txt
rc=$?
set -e
cat out.txt
fail=0
# Exactly these numbers changed, nothing else (word diff of README.md against v1's commit; the
# pins are not words here, so a changed pin would show as a changed word):
changes=$(git diff -U0 --word-diff=plain --word-diff-regex='[^[:space:]<>]+' README.md \
  | grep -o '\[-[^]]*-\]{+[^}]*+}' | tr '\n' ' ')
want='[-1,505,280-]{+1,498,112+} [-3-]{+4+} [-91.3%-]{+92.1%+} [-6.25M-]{+12.04M+} [-1.12x-]{+1.00x+} [-44.86-]{+44.90+} [-0.50-]{+0.47+} [-2.5-]{+3.0+} '
if [ "$changes" != "$want" ]; then
  echo "FAIL: README.md changes are $changes; want $want" >&2
  git diff README.md >&2
  fail=1
fi
grep -q '^check: README.md:5: 0.50: refreshed from its pin speed.json#/warm/ratio (0.47); speed.json#/cold/ratio (0.61) equalled it at [0-9a-f]* and now differs: is the pin the right field?$' out.txt \
  || { echo "FAIL: the 0.50 whose twin field now differs (line 5) is not reported" >&2; fail=1; }
grep -q '^needs a hand: README.md:5: 1.25: speed.json#/old_model_s is gone (or holds no number)$' out.txt \
  || { echo "FAIL: the figure whose field is gone (1.25, line 5) is not reported" >&2; fail=1; }
grep -q '^needs a hand: README.md:5: 0.99x: speed.json#/ratio at [0-9a-f]* was not 0.99x: out of date already?$' out.txt \
  || { echo "FAIL: the figure that was not its field (0.99x, line 5) is not reported" >&2; fail=1; }
grep -q '^needs a hand: README.md:6: 0.08x: no pin names its field (scripts/pin-readme-figures.py)$' out.txt \
  || { echo "FAIL: the figure with no pin (0.08x, line 6) is not reported" >&2; fail=1; }
grep -q '^needs a hand: README.md:6: 2.5: an extreme over rows ("slowest run"), from speed.json#/runs/0/s' out.txt \
  || { echo "FAIL: the slowest run (2.5, line 6), now another row's, is not reported" >&2; fail=1; }
grep -q '^8 refreshed, 1 unchanged, 4 need a hand, 1 to check' out.txt || { echo "FAIL: wrong summary" >&2; fail=1; }
[ "$rc" = 1 ] || { echo "FAIL: exit status $rc, not 1 (figures need a hand)" >&2; fail=1; }
exit $fail
