#!/usr/bin/env bash
# readme_figures_refresh: a README quoting results file v1 (committed), then a rerun writes v2;
# scripts/refresh-readme-figures.py OLD must rewrite every figure it can tie to one path of v1
# with v2's number in the figure's own style, and leave (and name, by line) the others.
set -euo pipefail
script=$(cd "$(dirname "${1:?usage: refresh-figures.sh REFRESH_SCRIPT}")" && pwd)/$(basename "$1")
. "$(dirname "$0")/temp-git-repo.sh"
mkdir -p bench/results
cat >README.md <<'MD'
# Speed
<!-- figures: bench/results/speed.json; not figures: 7 -->
Arena 1,505,280 bytes over 3 traces; 91.3% top-1; 6.25M instructions, 1.12x the
other's; one run 44.86 ms (`--arena 7,200` is a code span, no figure).
Both ways the same 0.50 ratio; the old model took 1.25 s; 2 rounds of seed 7; out of date: 0.99x
and 0.08x; slowest run 2.5 s.
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
# Exactly these words changed, nothing else (word diff of README.md against v1's commit):
changes=$(git diff -U0 --word-diff=plain README.md | grep -o '\[-[^]]*-\]{+[^}]*+}' | tr '\n' ' ')
want='[-1,505,280-]{+1,498,112+} [-3-]{+4+} [-91.3%-]{+92.1%+} [-6.25M-]{+12.04M+} [-1.12x-]{+1.00x+} [-44.86-]{+44.90+} '
if [ "$changes" != "$want" ]; then
  echo "FAIL: README.md changes are $changes; want $want" >&2
  git diff README.md >&2
  fail=1
fi
grep -q '^needs a hand: README.md:5: 0.50: 2 paths matched, now different: 0.47 (speed.json:warm.ratio); 0.61 (speed.json:cold.ratio)$' out.txt \
  || { echo "FAIL: the ambiguous 0.50 (line 5) is not reported" >&2; fail=1; }
grep -q '^needs a hand: README.md:5: 1.25: speed.json:old_model_s is gone (or holds no number)$' out.txt \
  || { echo "FAIL: the figure whose path is gone (1.25, line 5) is not reported" >&2; fail=1; }
grep -q '^needs a hand: README.md:5: 0.99x: no number of bench/results/speed.json at [0-9a-f]* is 0.99x$' out.txt \
  || { echo "FAIL: the figure no number matched (0.99x, line 5) is not reported" >&2; fail=1; }
grep -q '^needs a hand: README.md:6: 0.08x: 0.08x is a ratio, but at [0-9a-f]* only speed.json:cold_s (a time) matched it' out.txt \
  || { echo "FAIL: the ratio only a time matched (0.08x, line 6) is not reported" >&2; fail=1; }
grep -q '^needs a hand: README.md:6: 2.5: an extreme over rows ("slowest run"), from speed.json:runs\[0\].s' out.txt \
  || { echo "FAIL: the slowest run (2.5, line 6), now another row's, is not reported" >&2; fail=1; }
grep -q '^6 refreshed, 1 unchanged, 5 need a hand' out.txt || { echo "FAIL: wrong summary" >&2; fail=1; }
[ "$rc" = 1 ] || { echo "FAIL: exit status $rc, not 1 (figures need a hand)" >&2; fail=1; }
exit $fail
