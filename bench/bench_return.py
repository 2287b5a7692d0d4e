#!/usr/bin/python3
"""How long a member takes to be back with every copy it keeps, after the ways it can go away:
3 nodes, replication-factor 2, health-interval 200 ms, failure-limit 3, the append-only file
fsynced at every write, `--keys` keys (default 100 000) of 100 bytes written through node 1.

- reconnect: node 3's replication streams are cut (CLIENT KILL) and it hangs 0.3 s (not long
  enough to be failed over) while node 1 writes 1 000 keys node 3 does not own; from SIGCONT
  until every stream is online again, by a partial resync from the backlog.
- SIGCONT after a failover: node 3 hangs 3 s (failed over), then is continued; from SIGCONT until
  it is restored and every copy is in place (resumed from what it kept: partial resyncs).
- the same with writes running through node 1 from before the hang until node 3 is back: writes
  node 3 made that its replicas missed make those copies differ (resumed too, the keys of those
  writes taken back).
- restart after kill -9: node 3 is killed, failed over and restarted from its append-only file;
  from the restart until it is restored (a full copy: a restart forgets the streams).

Each line gives the seconds, the partial and full resyncs the nodes counted meanwhile, and how
many members' copies of node 3's keys its restore resumed from and how many copied them in full
(CLUSTER INFO); every key is then checked to have its 2 copies.

    /usr/bin/python3 bench/bench_return.py [--server build/ringkv-server] [--keys 100000]
"""

import argparse
import os
import signal
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

import harness  # noqa: E402
import replication_support as repl  # noqa: E402


def sync_counts(ports):
    """(partial, full) resyncs summed over every node's streams, and node 3's restores that
    resumed and that copied everything."""
    counts = [repl.repl_sync_counts(p) for p in ports]
    info = repl.cluster_info(ports[2])
    return (sum(c[0] for c in counts), sum(c[1] for c in counts),
            int(info.get("cluster_restores_resumed", 0)), int(info.get("cluster_restores_full", 0)))


def measure(label, ports, started, before):
    repl.settle(ports, timeout=300)
    took = time.monotonic() - started
    after = sync_counts(ports)
    partial, full, resumed, copied = (a - b for a, b in zip(after, before))
    if partial < 0 or full < 0:
        # Streams closed and opened again (a ring change) count from 0: their counts now.
        counts = "streams reopened, now partial resyncs %d, full copies %d" % after[:2]
    else:
        counts = "partial resyncs %d, full copies %d" % (partial, full)
    # A restart starts node 3's counts from 0 again.
    restores = after[2:] if resumed < 0 or copied < 0 else (resumed, copied)
    print("%-28s %6.2f s   %s; restore: %d resumed, %d copied in full" % (
        (label, took, counts) + tuple(restores)), flush=True)


def write_until(port, value, stop):
    """SETs of busy:<n>, 100 per pipeline, until `stop` (errors while a node is away ignored)."""
    n = 0
    while not stop.is_set():
        try:
            repl.pipelined(port, [("SET", "busy:%d" % (n + i), value) for i in range(100)])
        except Exception:  # noqa: BLE001 - a failover in progress: try again
            time.sleep(0.05)
        n += 100


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

        # The same with writes running through node 1 (every node's keys) from before the hang
        # until the member is back: some of node 3's, on their way to its replicas when it was
        # stopped, reach them only after they failed it over.
        before = sync_counts(ports)
        stop = threading.Event()
        writer = threading.Thread(target=write_until, args=(ports[0], value, stop), daemon=True)
        writer.start()
        time.sleep(0.5)
        c.kill(2, signal.SIGSTOP)
        time.sleep(3.0)
        started = time.monotonic()
        c.kill(2, signal.SIGCONT)
        try:
            measure("SIGCONT, writes running:", ports, started, before)
        finally:
            stop.set()
            writer.join()

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
