#!/usr/bin/env bash
# Takes an RDB snapshot of every member of a ringkv cluster: asks one node for the members
# (CLUSTER NODES) and fetches each member's keys with `redis-cli --rdb` (SYNC), into
# DIR/<host>-<port>.rdb. Each file holds the keys that member owns; together they are the cluster.
#
#   scripts/cluster_snapshot.sh HOST:PORT DIR [redis-cli options, e.g. -a PASSWORD]
#
# Each file is a point-in-time snapshot of its node (taken by a forked child while the node keeps
# serving); the nodes are snapshotted one after the other, not at one instant.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 HOST:PORT DIR [redis-cli options]" >&2
  exit 2
fi
seed="$1"
dir="$2"
shift 2
mkdir -p "$dir"
members=$(redis-cli -h "${seed%:*}" -p "${seed##*:}" "$@" CLUSTER NODES | awk 'NF { print $1 }')
if [[ -z "$members" ]]; then
  echo "$seed answered no members (is it a ringkv cluster node?)" >&2
  exit 1
fi
status=0
for member in $members; do
  file="$dir/${member%:*}-${member##*:}.rdb"
  if redis-cli -h "${member%:*}" -p "${member##*:}" "$@" --rdb "$file" > "$file.log" 2>&1; then
    echo "$member: $(stat -c %s "$file") bytes in $file"
    rm -f "$file.log"
  else
    echo "$member: snapshot failed (see $file.log)" >&2
    status=1
  fi
done
exit "$status"
