#!/usr/bin/env bash
# The README's quick start as a new user meets it: on a fresh minimal Debian 12 (debootstrap minbase
# with git and ca-certificates, nothing else), in a chroot, from a clone of this checkout's HEAD
# (only what is committed). .ci/run runs its Release stage this way, so a package the build, the
# cluster script or the tests need but scripts/packages.sh lacks fails CI.
#
#   scripts/fresh_debian.sh            the first quick-start command must bring up 3 nodes that
#                                      answer PING on 127.0.0.1:7001-7003, a key set on 7001
#                                      reading back on 7003
#   scripts/fresh_debian.sh --tests    then the nodes are stopped and the second command (the whole
#                                      test suite) must pass in the same chroot
#
# Run from anywhere as root, with the host's Debian mirror reachable and redis-cli on the host
# (redis-tools, in scripts/packages.sh). The two commands are the first code block under the
# README's "Quick start" heading. The minbase system is cached in $RINGKV_FRESH_BASE (default
# /tmp/ringkv-fresh-base, ~350 MB, 30-60 s to make); every run starts from a copy of it.
# Exit status: 0 passed, 1 the quick start failed, 2 the chroot could not be made (no root, no
# mirror): .ci/run tells the last apart.
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${RINGKV_FRESH_BASE:-/tmp/ringkv-fresh-base}"
ports=(7001 7002 7003)
say() { echo "fresh_debian: $*"; }

[[ $(id -u) -eq 0 ]] || { say "must run as root (chroot)"; exit 2; }
command -v redis-cli >/dev/null || { say "the host needs redis-cli (redis-tools)"; exit 2; }

# The mirror the host's apt uses for bookworm (deb822 or one-line sources), else Debian's own.
mirror() {
  local uri
  uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk '/^URIs:/{u=$2} /^Suites:.*bookworm( |$)/{if (u) {print u; exit}}')
  [[ -z $uri ]] && uri=$(grep -hsE '^deb +[^[]*bookworm +main' /etc/apt/sources.list \
    /etc/apt/sources.list.d/*.list | awk '{print $2; exit}')
  echo "${uri:-http://deb.debian.org/debian}"
}

if [[ ! -x $base/bin/bash ]]; then
  if ! command -v debootstrap >/dev/null; then
    apt-get install -y -qq debootstrap >/dev/null ||
      { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; } ||
      { say "cannot install debootstrap"; exit 2; }
  fi
  say "making a minimal Debian 12 in $base from $(mirror)"
  rm -rf "$base"
  debootstrap --variant=minbase --include=git,ca-certificates bookworm "$base" "$(mirror)" \
    >/tmp/ringkv-fresh-debootstrap.log 2>&1 ||
    { say "debootstrap failed (/tmp/ringkv-fresh-debootstrap.log)"; rm -rf "$base"; exit 2; }
fi

block=$(awk 'tolower($0) ~ /^#+ *quick ?start/{f=1} f&&/^```/{n++; if(n==1)next; if(n==2)exit} f&&n==1' \
  "$repo/README.md" | grep -vE '^\s*(#|$)' | sed 's/ \+#.*//')
start_cmd=$(sed -n 1p <<<"$block")
test_cmd=$(sed -n 2p <<<"$block")
[[ -n $start_cmd && -n $test_cmd ]] || { say "no two commands in README.md's Quick start block"; exit 1; }
for p in "${ports[@]}"; do
  redis-cli -p "$p" ping >/dev/null 2>&1 && { say "port $p is busy"; exit 2; }
done

root=$(mktemp -d /tmp/ringkv-fresh.XXXXXX)
stop_nodes() {
  local p pid
  for p in "${ports[@]}"; do
    pid=$(ss -ltnpH "sport = :$p" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2)
    [[ -n $pid ]] && kill "$pid" 2>/dev/null
  done
  sleep 1
}
cleanup() {
  stop_nodes
  # test_netns leaves a bind mount of the chroot's /run/netns behind.
  umount -l "$root/run/netns" 2>/dev/null
  for m in dev sys proc; do umount -l "$root/$m" 2>/dev/null; done
  mountpoint -q "$root" && umount -l "$root"
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
cp -a "$base/." "$root/"
cp /etc/resolv.conf "$root/etc/resolv.conf"
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
# The chroot's / is made a mount point of its own: `ip -n <namespace>` (test_netns, test_partition)
# runs `mount --make-rslave /` in a new mount namespace, which fails on a plain directory, and
# those tests would be skipped.
mount --bind "$root" "$root" && mount -t proc proc "$root/proc" && mount --rbind /sys "$root/sys" &&
  mount --rbind /dev "$root/dev" || { say "cannot mount /, /proc, /sys, /dev in the chroot"; exit 2; }
git clone -q "$repo" "$root/root/project" || { say "cannot clone $repo"; exit 2; }
in_chroot() { chroot "$root" /bin/bash -lc "cd /root/project && $1"; }

say "running '$start_cmd' (output: $root/start.log while it runs)"
t0=$(date +%s)
in_chroot "$start_cmd" >"$root/start.log" 2>&1 &
starter=$!
up=0
for ((i = 0; i < 3600; i++)); do
  up=0
  for p in "${ports[@]}"; do [[ $(redis-cli -p "$p" ping 2>/dev/null) == PONG ]] && ((up++)); done
  ((up == 3)) && break
  # The command may return before its nodes listen: a few more seconds once it has ended.
  if ! kill -0 "$starter" 2>/dev/null; then
    ((grace = ${grace:-20} - 1))
    ((grace > 0)) || break
  fi
  sleep 0.5
done
if ((up < 3)); then
  tail -n 20 "$root/start.log"
  say "FAILED: after '$start_cmd', $up of 3 nodes answer PING"
  exit 1
fi
redis-cli -p 7001 set fresh:k hello >/dev/null
if [[ $(redis-cli -p 7003 get fresh:k) != hello ]]; then
  say "FAILED: a key set on 7001 does not read back on 7003"
  exit 1
fi
say "'$start_cmd' brought up 3 nodes in $(($(date +%s) - t0)) s"
[[ ${1:-} == --tests ]] || exit 0

stop_nodes
say "running '$test_cmd'"
t0=$(date +%s)
in_chroot "$test_cmd" 2>&1
rc=$?
say "'$test_cmd' exited $rc after $(($(date +%s) - t0)) s"
((rc == 0)) || exit 1
