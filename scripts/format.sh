#!/usr/bin/env bash
# clang-format (.clang-format: Google, 100 columns) over every .cc, .h and .c
# of the tree but the build directories (build/, build-*/).
#   scripts/format.sh          formats them in place
#   scripts/format.sh --check  changes nothing; lists the files that are not
#                              formatted and exits 1 if there are any
#                              (./test.sh runs this)
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
if [ -n "$mode" ] && [ "$mode" != "--check" ]; then
  echo "format.sh: unknown argument '$mode' (use --check, or nothing to format in place)" >&2
  exit 2
fi
mapfile -t files < <(find . \( -path ./.git -o -path ./build -o -path './build-*' \) -prune -o \
  -type f \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) -print | sort)
if [ "$mode" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: ${#bad[@]} file(s) not formatted (run scripts/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted" >&2
  exit 0
fi
clang-format -i "${files[@]}"
