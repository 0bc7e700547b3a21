#!/usr/bin/env bash
# readme_figures_detects_stale: a results file measured at commit A, then a later commit changes
# the code it measures (sources.json): check-readme-figures.py --strict must fail and name both.
# A later commit that changes only Markdown there leaves it fresh.
set -euo pipefail
script=$(cd "$(dirname "${1:?usage: stale-results.sh CHECK_SCRIPT}")" && pwd)/$(basename "$1")
. "$(dirname "$0")/temp-git-repo.sh"
mkdir -p bench/results src
printf '<!-- figures: bench/results/speed.json -->\nIt takes 1.5<!--@speed.json#/seconds--> s.\n<!-- /figures -->\n' >README.md
printf '{"speed.json": ["src"]}\n' >bench/results/sources.json
echo 'int speed() { return 1; }' >src/speed.c
git add -A && git commit -qm "code"
printf '{"commit": "%s", "seconds": 1.5}\n' "$(git rev-parse HEAD)" >bench/results/speed.json
git add -A && git commit -qm "measured"
/usr/bin/python3 "$script" --root "$repo" --strict   # fresh: must pass
echo 'How speed() works.' >src/README.md
git add -A && git commit -qm "documented"
/usr/bin/python3 "$script" --root "$repo" --strict   # Markdown is not measured code: still fresh
echo 'int speed() { return 2; }' >src/speed.c
git commit -qam "faster code"
if /usr/bin/python3 "$script" --root "$repo" --strict; then
  echo "FAIL: a results file older than its code passed --strict" >&2
  exit 1
fi
