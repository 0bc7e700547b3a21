#!/usr/bin/env bash
# clang_format: every C and C++ file of the repository (but the firmware templates, whose @NAME@
# markers are not C) is formatted as .clang-format says. Formatting differs between clang-format
# releases, so the check runs with Debian 12's, version 14; elsewhere it is a skip (77), not a pass.
set -euo pipefail
root=${1:?usage: check-format.sh REPO_ROOT}
command -v clang-format >/dev/null || { echo "SKIP: no clang-format"; exit 77; }
version=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
[ "$version" = 14 ] || { echo "SKIP: clang-format $version, the style is checked with 14"; exit 77; }
git -C "$root" rev-parse --git-dir >/dev/null 2>&1 || { echo "SKIP: not a git checkout"; exit 77; }
cd "$root"
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' | grep -v '^src/bundle/templates/')
clang-format --dry-run --Werror "${files[@]}"
echo "${#files[@]} files formatted as .clang-format says"
