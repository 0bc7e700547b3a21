#!/usr/bin/env bash
# Runs the release bundlefit over the hostile-input corpus (make-corpus.py):
# every file must be refused with one "bundlefit: error:" line naming it and
# a documented exit code other than 0 and 1 (README "Exit codes"), except the
# valid models (a Slice with a far step, Range(0, -2^63, -2^63), Latin-1
# names), which must plan, and print valid JSON. Commands run with a memory
# budget of 1 GiB, so the memory bombs are refused the same way on every
# machine.
#   check-corpus.sh BUNDLEFIT_EXE WORK_DIR
set -uo pipefail
exe=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && python3 "$here/make-corpus.py" "$work/corpus" >/dev/null || exit 1
failures=0
check() { # expected-exit ("refused" = 2..7) file command...
  local expected=$1 file=$2
  shift 2
  "$@" >"$work/out.txt" 2>"$work/err.txt"
  local code=$? lines
  lines=$(wc -l <"$work/err.txt")
  if [ "$expected" = refused ]; then
    if [ $code -lt 2 ] || [ $code -gt 7 ] || [ "$lines" -ne 1 ] ||
       ! grep -q "^bundlefit: error: .*$(basename "$file")" "$work/err.txt"; then
      echo "FAIL $(basename "$file"): exit $code, stderr: $(head -c 300 "$work/err.txt")"
      failures=$((failures + 1))
    fi
  elif [ $code -ne "$expected" ]; then
    echo "FAIL $(basename "$file"): exit $code, expected $expected: $(head -c 300 "$work/err.txt")"
    failures=$((failures + 1))
  fi
}
for model in "$work"/corpus/onnx/*.onnx; do
  case $model in
    *slice-step* | *one-element* | *latin1-names*)
      check 0 "$model" "$exe" --max-memory 1G -q plan "$model" --json
      if ! python3 -c 'import json, sys; json.load(sys.stdin)' <"$work/out.txt" 2>/dev/null; then
        echo "FAIL $(basename "$model"): plan --json printed no valid JSON"
        failures=$((failures + 1))
      fi ;;
    *) check refused "$model" "$exe" --max-memory 1G -q plan "$model" ;;
  esac
done
for csv in "$work"/corpus/plan-buffers/*.csv; do
  check refused "$csv" "$exe" -q plan-buffers "$csv" --format csv
done
for device in "$work"/corpus/device/*.json; do
  check refused "$device" "$exe" -q devices --device-file "$device"
done
count=$(find "$work/corpus" -type f | wc -l)
echo "hostile corpus: $count files, $failures failures"
[ $failures -eq 0 ]
