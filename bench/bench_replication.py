#!/usr/bin/python3
"""Replication benchmark: SET and GET throughput of a 3-node ringkv cluster with
replication-factor 2 (replica-acks 0, then 1) as a ratio to the same cluster without replication
(replication-factor 1), in the same run. redis-benchmark runs -c 50 -r 100000 through node 1, one
invocation per test, unpipelined (-P 1) and pipelined (-P 16); the three clusters take turns round
after round, so machine drift hits them alike; the best round of each is kept. During the SET runs
of each replicated cluster, the largest backlog of unacknowledged frames any replica stream had (INFO
replication `behind=`, sampled every 50 ms) is reported as the replica lag under load (a replica
acknowledges when its primary asks, every 10 ms when no write waits for it: the figure counts
frames it ran but was not asked about yet).

Beside each figure, the CPU time the three nodes used together per request (user + system, from
/proc/PID/stat; the least of the rounds): what replication costs, less disturbed than throughput
by the client sharing the machine's cores.

The numbers are checked to be real: after the runs every key written through node 1 has two
copies (the nodes' INFO keyspace counts add up to twice DBSIZE) in the replicated clusters.

    /usr/bin/python3 bench/bench_replication.py [--server build/ringkv-server] [--rounds 3] \
        [--batch-ms N]

`--batch-ms N` sets `repl-batch-ms` in the replicated clusters (frames no write waits for are
written N ms after the first of them; the server's default otherwise).
"""

import argparse
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_cluster as bc  # noqa: E402
import harness  # noqa: E402  (on the path bench_cluster set)

SETUPS = [("rf1", 1, 0), ("rf2-acks0", 2, 0), ("rf2-acks1", 2, 1)]
GOALS = {"rf2-acks0": 0.8, "rf2-acks1": 0.5}


def start_cluster(binary, workdir, label, rf, acks, batch_ms):
    nodes = bc.ringkv_nodes(binary, os.path.join(workdir, label), "balanced")
    for n in nodes:
        # ringkv_nodes writes [server] [cluster] [log]; the replication keys go under [cluster].
        with open(n.argv[-1]) as f:
            text = f.read()
        extra = "repl-batch-ms = %d\n" % batch_ms if batch_ms is not None and rf > 1 else ""
        text = text.replace("[cluster]\n", "[cluster]\nreplication-factor = %d\nreplica-acks = %d\n%s"
                            % (rf, acks, extra), 1)
        with open(n.argv[-1], "w") as f:
            f.write(text)
    for n in nodes:
        n.start()
    for n in nodes:
        n.wait_ready()
    return nodes


def max_behind(ports, stop, out):
    """Samples INFO replication every 50 ms until `stop`; keeps the largest `behind=`."""
    while not stop.is_set():
        for port in ports:
            try:
                text = bc.call(port, "INFO", "replication")
            except (OSError, RuntimeError):
                continue
            for line in text.splitlines():
                if line.startswith("slave") and "behind=" in line:
                    out[0] = max(out[0], int(line.split("behind=")[1].split(",")[0]))
        time.sleep(0.05)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--server", default="build/ringkv-server")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--requests", type=int, default=100000)
    p.add_argument("--batch-ms", type=int, default=None)
    args = p.parse_args()
    binary = os.path.abspath(args.server)
    workdir = tempfile.mkdtemp(prefix="ringkv-bench-repl-")
    clusters = {}
    try:
        for label, rf, acks in SETUPS:
            os.makedirs(os.path.join(workdir, label))
            clusters[label] = start_cluster(binary, workdir, label, rf, acks, args.batch_ms)
        time.sleep(1.0)
        results = {}
        lag = {}
        cpu_use = {}  # (test, -P, setup) -> the least CPU µs per request of the 3 nodes together
        for pipeline in (1, 16):
            n = args.requests * (4 if pipeline > 1 else 1)
            for r in range(args.rounds):
                for label, rf, acks in SETUPS:
                    nodes = clusters[label]
                    print("round %d/%d -P %d: %s" % (r + 1, args.rounds, pipeline, label),
                          file=sys.stderr, flush=True)
                    pids = [x.proc.pid for x in nodes]
                    for test in ("SET", "GET"):
                        stop, worst = threading.Event(), [0]
                        sampler = threading.Thread(target=max_behind,
                                                   args=([x.port for x in nodes], stop, worst))
                        sampler.start()
                        cpu = harness.cpu_seconds(*pids)
                        try:
                            rows = bc.redis_benchmark(label, nodes[0].port, n, 50, pipeline,
                                                      ["-t", test.lower(), "-r", "100000"])
                        finally:
                            # Else a failed run leaves the sampler polling forever.
                            stop.set()
                            sampler.join()
                        cpu_us = (harness.cpu_seconds(*pids) - cpu) * 1e6 / n
                        if test == "SET":
                            lag[(label, pipeline)] = max(lag.get((label, pipeline), 0), worst[0])
                        slot = results.setdefault((test, pipeline), {})
                        bc.keep_best(slot, label, rows[test])
                        least = cpu_use.setdefault((test, pipeline, label), cpu_us)
                        cpu_use[(test, pipeline, label)] = min(least, cpu_us)
        print("| command | -P | rf 1 rps | rf 2, acks 0 rps | ratio | rf 2, acks 1 rps | ratio "
              "| nodes' CPU µs/req rf 1 / acks 0 / acks 1 |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for (test, pipeline), slot in sorted(results.items(), key=lambda x: (x[0][1], x[0][0])):
            base = slot["rf1"][0]
            cpu = " / ".join("%.2f" % cpu_use[(test, pipeline, label)] for label, _, _ in SETUPS)
            print("| %s | %d | %.0f | %.0f | %.2f | %.0f | %.2f | %s |" % (
                test, pipeline, base, slot["rf2-acks0"][0], slot["rf2-acks0"][0] / base,
                slot["rf2-acks1"][0], slot["rf2-acks1"][0] / base, cpu))
        print()
        for label in ("rf2-acks0", "rf2-acks1"):
            print("%s: most frames a replica stream had unacknowledged during the runs: -P 1 %d, "
                  "-P 16 %d" % (label, lag[(label, 1)], lag[(label, 16)]))
        # Proof: two copies of every key in the replicated clusters.
        for label, rf, acks in SETUPS:
            nodes = clusters[label]
            time.sleep(0.5)
            held = sum(bc.keyspace_keys(x.port) for x in nodes)
            dbsize = int(bc.call(nodes[0].port, "DBSIZE"))
            print("%s: DBSIZE %d, copies held %d (%.2f per key)" % (label, dbsize, held,
                                                                   held / max(1, dbsize)))
    finally:
        for nodes in clusters.values():
            for x in nodes:
                x.stop()


if __name__ == "__main__":
    main()
