#!/usr/bin/env bash
# Builds ringkv (Release, into build/) when needed and runs the whole test suite with ctest:
# unit tests, integration tests against a real redis-server, and fuzz smoke runs when enabled.
# Installs missing Debian packages first. The exit code is ctest's.
#
# Environment (used by .ci/run for its other builds):
#   RINGKV_BUILD_DIR   build directory, default build
#   RINGKV_CMAKE_ARGS  extra cmake configure arguments, default -DCMAKE_BUILD_TYPE=Release
#   RINGKV_CTEST_ARGS  extra ctest arguments, e.g. "-R fuzz"
#   RINGKV_TARGETS     build only these targets (space-separated), default all
#   RINGKV_JOBS        parallel build jobs, default 2
#   RINGKV_TEST_JOBS   tests run at once (timing-sensitive ones always run alone), default 2
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${RINGKV_BUILD_DIR:-build}"
[[ "$build_dir" = /* ]] || build_dir="$root/$build_dir"
cmake_args="${RINGKV_CMAKE_ARGS:--DCMAKE_BUILD_TYPE=Release}"
jobs="${RINGKV_JOBS:-2}"

# shellcheck source=scripts/packages.sh
source "$root/scripts/packages.sh"
ringkv_install_packages "${ringkv_build_packages[@]}" "${ringkv_test_packages[@]}"

# Configure only when the build directory has no cache yet; building is incremental anyway.
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  # shellcheck disable=SC2086  # cmake_args is a list of words on purpose
  cmake -S "$root" -B "$build_dir" $cmake_args
fi
target_args=()
for t in ${RINGKV_TARGETS:-}; do target_args+=(--target "$t"); done
cmake --build "$build_dir" -j "$jobs" "${target_args[@]}"

# shellcheck disable=SC2086
ctest --test-dir "$build_dir" --output-on-failure -j "${RINGKV_TEST_JOBS:-2}" ${RINGKV_CTEST_ARGS:-}
