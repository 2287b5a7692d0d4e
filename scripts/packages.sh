#!/usr/bin/env bash
# The Debian packages ringkv needs, in one list, and the function that installs the missing ones.
# Sourced by scripts/cluster.sh (build packages), scripts/test.sh and .ci/run (all of them).
#
#   ringkv_build_packages   compiler, build tools and the libraries ringkv links
#   ringkv_test_packages    what the tests and benchmarks run: redis-server (the oracle), redis-cli,
#                           redis-py, node-redis (and node), twemproxy, iproute2 (network
#                           namespaces), valgrind (test_replication's memcheck run),
#                           prometheus-redis-exporter (test_exporter.py)
#   ringkv_ci_packages      what only .ci/run uses: clang-format and pyflakes
#                           (scripts/check_layout.sh), clang and its sanitizer runtimes (the
#                           libFuzzer build)
#
# Installs use --no-install-recommends, so every tool a step runs must be named here (make is only a
# recommendation of cmake, for instance).

ringkv_build_packages=(cmake make g++ pkg-config libuv1-dev libspdlog-dev libtomlplusplus-dev
                       libcli11-dev doctest-dev zlib1g-dev libssl-dev liblzf-dev redis-tools
                       liblua5.1-0-dev lua-cjson-dev lua-bitop-dev)
ringkv_test_packages=(redis-server python3 python3-redis nodejs node-redis nutcracker iproute2
                      procps valgrind prometheus-redis-exporter)
ringkv_ci_packages=(clang clang-format libclang-rt-14-dev python3-pyflakes)

# Installs those of the named packages that are not installed (apt-get update first); with
# --update, runs apt-get update even when nothing is missing (as CI does).
ringkv_install_packages() {
  local update=0 missing=() p sudo=""
  if [[ ${1:-} == --update ]]; then
    update=1
    shift
  fi
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]} == 0 && update == 0)) && return 0
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update
  ((${#missing[@]} == 0)) && return 0
  echo "installing missing packages: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
}
