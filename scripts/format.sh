#!/usr/bin/env bash
# Formats the C++ of the tree with .clang-format (clang-format from Debian's clang-format package).
# `scripts/format.sh --check` only lists the files that would change (exit 1 if any).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h')
if [ "${1:-}" = "--check" ]; then
  status=0
  for f in "${files[@]}"; do
    if ! clang-format "$f" | cmp -s - "$f"; then echo "$f"; status=1; fi
  done
  exit $status
fi
clang-format -i "${files[@]}"
