#!/usr/bin/env python3
"""A join under replication: how long until the new ring is committed everywhere, and until
every copy is complete — the window during which a primary lost would stop its keys — for one or
more server binaries taking turns in the same run.

Each round starts 3 nodes (replication-factor 2 by default), loads N keys of 100 bytes through
node 1 (redis-cli --pipe), waits until every replica stream is online, starts a 4th node and
joins it. From CLUSTER JOIN's +OK it times:
- commit: every node routes by the new ring (cluster_ring_version);
- complete: besides, nothing migrates or is deleted, every replica stream is online and every
  copy a node holds is synced (INFO replication), as test_replication's settle() waits for.

Nothing is asserted. Run from the repository root after a Release build:

    /usr/bin/python3 bench/bench_join_replicas.py [--keys N] [--rounds R] [--rf N] \
        --server build/ringkv-server [--server /tmp/old-ringkv-server]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))

import harness  # noqa: E402
import replication_support as repl  # noqa: E402
from bench_migration import load  # noqa: E402


def one_join(binary, keys, rf):
    opts = dict(repl.HEALTH, **{"replication-factor": rf})
    with harness.Cluster(binary, 3, name="bench-join-replicas", cluster_options=opts) as c:
        ports = list(c.ports)
        repl.settle(ports)
        load(ports[0], keys, 100, "k")
        repl.settle(ports, timeout=300)
        port = harness.free_ports(1)[0]
        text = harness.cluster_config(port, [port], cluster_options=opts)
        node = harness.ClusterNode(binary, port, text, "bench-join-replicas-new")
        node.start()
        try:
            every = ports + [port]
            before = int(repl.cluster_info(ports[0])["cluster_ring_version"])
            repl.client(ports[0], timeout=120).execute_command("CLUSTER", "JOIN", node.address)
            t0 = time.monotonic()
            while any(int(repl.cluster_info(p)["cluster_ring_version"]) == before
                      for p in every):
                time.sleep(0.005)
            commit = time.monotonic() - t0
            repl.settle(every, timeout=600)
            return commit, time.monotonic() - t0
        finally:
            node.cleanup()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", action="append", required=True)
    p.add_argument("--keys", type=int, default=1000000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--rf", type=int, default=2)
    args = p.parse_args()
    print("%-40s %6s %10s %12s" % ("server", "round", "commit s", "complete s"))
    for r in range(args.rounds):
        for binary in args.server:
            commit, complete = one_join(binary, args.keys, args.rf)
            print("%-40s %6d %10.2f %12.2f" % (binary, r + 1, commit, complete), flush=True)


if __name__ == "__main__":
    main()
