#!/usr/bin/env bash
# Layout checks, fast enough to run before every build: (1) no #include crosses from one module
# to a module it may not use (the table below is the one statement of the layering), (2) every
# C++ file is clang-formatted with the repository's .clang-format, (3) no source file outside
# tests/ and bench/ is longer than 800 lines, (4) pyflakes finds nothing in the Python files.
# Prints each violation as file:line and exits 1 when there is any. Checks the files git tracks
# plus new ones it does not ignore.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# module: the modules whose headers it may include (besides its own). Keep in step with the
# target_link_libraries of each module's CMakeLists.txt.
declare -A allowed=(
  [common]=""
  [conf]="common"
  [protocol]="common"
  [hashring]="common"
  [engine]="protocol conf common"
  [persistence]="engine protocol conf common"
  [cluster]="engine hashring protocol conf common"
  [server]="cluster persistence engine hashring protocol conf common"
)
readonly max_lines=800

failures=0
fail() {
  echo "$1" >&2
  failures=$((failures + 1))
}

mapfile -t sources < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.h' |
  grep -v '^tests/fuzz/corpus/' | sort -u | while read -r f; do [[ -f "$f" ]] && echo "$f"; done)

# 1. Includes between modules.
while IFS=: read -r file line target; do
  module="${file%%/*}"
  [[ -v "allowed[$module]" && -v "allowed[$target]" && "$target" != "$module" ]] || continue
  if [[ " ${allowed[$module]} " != *" $target "* ]]; then
    fail "$file:$line: $module/ may not include $target/ (allowed: ${allowed[$module]:-nothing})"
  fi
done < <(grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' "${sources[@]}" |
  sed -E 's/^([^:]+):([0-9]+):.*"([a-z_]+)\/.*/\1:\2:\3/')

# 2. Formatting: clang-format names each drifting file:line:column.
format_report="$(mktemp)"
trap 'rm -f "$format_report"' EXIT
if ! clang-format --dry-run -Werror "${sources[@]}" 2>"$format_report"; then
  while IFS= read -r drift; do
    fail "${drift%%: error:*}: not clang-formatted (clang-format -i ${drift%%:*})"
  done < <(grep -E '^[^ ].*: error:' "$format_report")
fi

# 3. File length: every source file, the tests', benchmarks' and scripts' too.
mapfile -t python_sources < <(git ls-files --cached --others --exclude-standard -- '*.py')
mapfile -t shell_sources < <(git ls-files --cached --others --exclude-standard -- '*.sh' .ci/run)
for file in "${sources[@]}" "${python_sources[@]}" "${shell_sources[@]}"; do
  lines=$(wc -l <"$file")
  if ((lines > max_lines)); then
    fail "$file:$lines: $lines lines, over the limit of $max_lines (split it)"
  fi
done

# 4. Python (tests, benchmarks, tools): pyflakes names unused imports and variables, undefined
# names and a method defined twice in a class (the second silently replaces the first).
if ((${#python_sources[@]} > 0)); then
  while IFS= read -r problem; do
    fail "$problem"
  done < <(/usr/bin/python3 -m pyflakes "${python_sources[@]}" 2>&1 || true)
fi

if ((failures > 0)); then
  echo "check_layout: $failures problem(s)" >&2
  exit 1
fi
echo "check_layout: ${#sources[@]} files, includes follow the layering, formatted, none over $max_lines lines;" \
  "${#python_sources[@]} Python files pyflakes-clean"
