#!/usr/bin/env bash
# The study's Python port of the perfect-packing generator (docs/studies/exact_fill.py) must
# give the same problems as planner/formats/src/PerfectPacking.cpp: every family, a tuning
# and a reporting seed, compared byte for byte. Exit 77 (a ctest SKIP) without /usr/bin/python3.
# Usage: same_generator.sh PRINT_PERFECT_PACKING STUDY_SCRIPT
set -euo pipefail
print=$1 study=$2
[ -x /usr/bin/python3 ] || { echo "SKIP: no /usr/bin/python3"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for pair in uniform:uniform heavy-tailed:heavy power-of-two:pow2 long-lived:long; do
  for seed in 1 1001; do
    "$print" 2000 "${pair%%:*}" "$seed" >"$work/cpp.csv"
    /usr/bin/python3 "$study" csv 2000 "${pair#*:}" "$seed" >"$work/py.csv"
    if cmp -s "$work/cpp.csv" "$work/py.csv"; then
      echo "same: ${pair%%:*} seed $seed ($(($(wc -l <"$work/cpp.csv") - 1)) buffers)"
    else
      echo "DIFFERENT: ${pair%%:*} seed $seed; first differing lines:"
      diff "$work/cpp.csv" "$work/py.csv" | head -4
      status=1
    fi
  done
done
exit $status
