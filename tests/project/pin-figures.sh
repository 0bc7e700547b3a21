#!/usr/bin/env bash
# readme_figures_pin: scripts/pin-readme-figures.py on a README without pins must pin a figure one
# field equals; among equal fields, a table cell to its row's field (by the row's label and the
# column's header) and a prose figure to the field whose key the words around it name; leave a
# figure no field equals without a pin, naming it; and leave alone what is pinned already.
set -euo pipefail
script=$(cd "$(dirname "${1:?usage: pin-figures.sh PIN_SCRIPT}")" && pwd)/$(basename "$1")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
mkdir -p bench/results
cat >bench/results/speed.json <<'JSON'
{"size": 7200, "cold": {"ratio": 0.5}, "warm": {"ratio": 0.5}, "kept": 12,
 "rows": [{"model": "resnet8", "own": 5128793}, {"model": "lenet", "own": 5128793}]}
JSON
cat >README.md <<'MD'
<!-- figures: bench/results/speed.json -->
| model | own |
|---|---:|
| LeNet | 5.13M |
Alone 7,200 bytes; the warm ratio 0.50; nowhere 9.99; pinned already 12<!--@speed.json#/kept-->.
<!-- /figures -->
MD
set +e
/usr/bin/python3 "$script" --root "$dir" >out.txt
rc=$?
set -e
cat out.txt
cat >want.md <<'MD'
<!-- figures: bench/results/speed.json -->
| model | own |
|---|---:|
| LeNet | 5.13M<!--@speed.json#/rows/1/own--> |
Alone 7,200<!--@speed.json#/size--> bytes; the warm ratio 0.50<!--@speed.json#/warm/ratio-->; nowhere 9.99; pinned already 12<!--@speed.json#/kept-->.
<!-- /figures -->
MD
fail=0
diff want.md README.md >&2 || { echo "FAIL: README.md is not pinned as it should be" >&2; fail=1; }
grep -q '^README.md:4: 5.13M: speed.json#/rows/1/own, chosen among 2 fields that equal it$' out.txt \
  || { echo "FAIL: the table cell chosen among two fields is not reported" >&2; fail=1; }
grep -q '^README.md:5: 0.50: speed.json#/warm/ratio, chosen among 2 fields that equal it$' out.txt \
  || { echo "FAIL: the prose figure chosen among two fields is not reported" >&2; fail=1; }
grep -q '^README.md:5: 9.99: no field of bench/results/speed.json is it$' out.txt \
  || { echo "FAIL: the figure no field equals is not reported" >&2; fail=1; }
[ "$rc" = 1 ] || { echo "FAIL: exit status $rc, not 1 (figures for a person to look at)" >&2; fail=1; }
exit $fail
