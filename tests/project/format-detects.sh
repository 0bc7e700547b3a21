#!/usr/bin/env bash
# clang_format_detects_misformatting: check-format.sh on a repository holding one badly formatted
# file must fail (exit 1); its skip (77) passes through.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
cp "${1:?usage: format-detects.sh CLANG_FORMAT_FILE}" "$repo/.clang-format"
printf 'int  f( int x ){return x+1;}\n' >"$repo/bad.c"
git -C "$repo" init -q && git -C "$repo" add -A
bash "$here/check-format.sh" "$repo"
status=$?
[ "$status" = 77 ] && exit 77
[ "$status" != 0 ] && { echo "misformatted bad.c refused, as it should be"; exit 0; }
echo "FAIL: check-format.sh passed a misformatted file" >&2
exit 1
