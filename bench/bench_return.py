#!/usr/bin/python3
"""How long a member takes to be back with every copy it keeps, after the ways it can go away:
3 nodes, replication-factor 2, health-interval 200 ms, failure-limit 3, the append-only file
fsynced at every write, `--keys` keys (default 100 000) of 100 bytes written through node 1.

- reconnect: node 3's replication streams are cut (CLIENT KILL) and it hangs 0.3 s (not long
  enough to be failed over) while node 1 writes 1 000 keys node 3 does not own; from SIGCONT
  until every stream is online again, by a partial resync from the backlog.
- SIGCONT after a failover: node 3 hangs 3 s (failed over), then is continued; from SIGCONT until
  it is restored and every copy is in place (a full copy of what it keeps).
- restart after kill -9: node 3 is killed, failed over and restarted from its append-only file;
  from the restart until it is restored (a full copy too).

Each line gives the seconds, and the partial and full resyncs the nodes counted meanwhile; every
key is then checked to have its 2 copies.

    /usr/bin/python3 bench/bench_return.py [--server build/ringkv-server] [--keys 100000]
"""

import argparse
import os
import signal
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

import harness  # noqa: E402
import test_replication as repl  # noqa: E402


def sync_counts(ports):
    """(partial, full) resyncs summed over every node's streams."""
    counts = [repl.repl_sync_counts(p) for p in ports]
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


def measure(label, ports, started, before):
    repl.settle(ports, timeout=300)
    took = time.monotonic() - started
    after = sync_counts(ports)
    partial, full = (a - b for a, b in zip(after, before))
    if partial < 0 or full < 0:
        # Streams closed and opened again (a ring change) count from 0: their counts now.
        counts = "streams reopened, now partial resyncs %d, full copies %d" % after
    else:
        counts = "partial resyncs %d, full copies %d" % (partial, full)
    print("%-28s %6.2f s   %s" % (label, took, counts), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=os.path.join(ROOT, "build", "ringkv-server"))
    p.add_argument("--keys", type=int, default=100000)
    args = p.parse_args()
    opts = dict(repl.HEALTH, **{"replication-factor": 2, "repl-backlog-size": "64mb"})
    persist = '[persistence]\nappendonly = true\nappendfsync = "always"\n'
    with harness.Cluster(args.server, 3, name="bench-return", cluster_options=opts,
                         extra=persist) as c:
        ports = c.ports
        repl.settle(ports)
        value = "x" * 100
        for start in range(0, args.keys, 10000):
            repl.pipelined(ports[0], [("SET", "key:%d" % i, value)
                                      for i in range(start, min(args.keys, start + 10000))])
        repl.settle(ports, timeout=300)
        print("%d keys, %d copies on node 3" % (args.keys, repl.keyspace_keys(ports[2])),
              flush=True)

        # Keys node 3 does not own (its own keys wait while it hangs).
        names = ["more:%d" % i for i in range(3000)]
        owner = repl.owners(ports[0], names)
        more = [k for k in names if owner[k] != c.nodes[2].address][:1000]
        before = sync_counts(ports)
        for peer in c.nodes[:2]:
            repl.kill_stream(ports[2], peer.address)
        c.kill(2, signal.SIGSTOP)
        repl.pipelined(ports[0], [("SET", k, value) for k in more])
        time.sleep(0.3)
        started = time.monotonic()
        c.kill(2, signal.SIGCONT)
        measure("reconnect (partial):", ports, started, before)

        before = sync_counts(ports)
        c.kill(2, signal.SIGSTOP)
        time.sleep(3.0)
        started = time.monotonic()
        c.kill(2, signal.SIGCONT)
        measure("SIGCONT after a failover:", ports, started, before)

        before = sync_counts(ports)
        c.kill(2)
        time.sleep(3.0)
        started = time.monotonic()
        c.restart(2, timeout=120)
        measure("restart after kill -9:", ports, started, before)

        report = harness.Report("bench_return")
        repl.check_copies(report, ports, ["key:%d" % i for i in range(0, args.keys, 50)], 2,
                          "after the returns")
        report.finish()


if __name__ == "__main__":
    main()
