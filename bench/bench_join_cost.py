#!/usr/bin/env python3
"""What a join costs: CPU time per moved key, keys/s, and the PING latency clients see meanwhile,
for one or more server binaries taking turns in the same run (the machine may be shared: CPU time
from /proc/PID/stat is far less sensitive to other load than wall time).

Each round starts a 3-node cluster, loads N keys (16-byte values) through node 1, starts a 4th
node and joins it. From CLUSTER JOIN's +OK until every node is at the new ring with nothing
migrating or being deleted it records:
- keys moved (the sources' cluster_keys_moved) and keys/s over that time;
- user + system CPU time of the three sources and of the joining node (from /proc/PID/stat), per
  moved key;
- PING round trips, one client process per node pinging every 2 ms (processes, not threads, so a
  Python lock never shows up as server latency): the longest and the 99th percentile, through the
  sources and through the target.

Nothing is asserted. Run from the repository root after a Release build:

    /usr/bin/python3 bench/bench_join_cost.py [--keys N] [--rounds R] \
        --server build/ringkv-server [--server /tmp/old-ringkv-server] [--perf DIR]
"""

import argparse
import multiprocessing
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))

import harness  # noqa: E402
from bench_migration import cluster_and_candidate, load, wait_settled  # noqa: E402


def pinger(port, stop, out):
    """PINGs `port` every 2 ms until `stop` is set; sends the round trips (seconds) to `out`."""
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times = []
    while not stop.is_set():
        t = time.perf_counter()
        s.sendall(b"*1\r\n$4\r\nPING\r\n")
        got = b""
        while not got.endswith(b"+PONG\r\n"):
            got += s.recv(64)
        times.append(time.perf_counter() - t)
        time.sleep(0.002)
    out.send(times)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else 0.0


def one_join(server, n, perf_dir=None):
    with cluster_and_candidate(server, "joincost") as (cluster, cand):
        load(cluster.ports[0], n, 16, "k")
        nodes = cluster.nodes + [cand]
        ctx = multiprocessing.get_context("fork")
        stop = ctx.Event()
        pings = []
        for node in nodes:
            mine, theirs = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=pinger, args=(node.port, stop, theirs), daemon=True)
            proc.start()
            pings.append((proc, mine))
        time.sleep(0.3)
        perf = []
        if perf_dir:
            # One profile per node (sources node1-3, target node4), call graphs included.
            for i, node in enumerate(nodes):
                perf.append(subprocess.Popen(
                    ["perf", "record", "-g", "-p", str(node.pid), "-o",
                     os.path.join(perf_dir, "node%d.data" % (i + 1))],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(1.0)
        cpu0 = [harness.cpu_seconds(node.pid) for node in nodes]
        start = time.perf_counter()
        with harness.RespClient(cluster.ports[0], timeout=120) as c:
            reply = harness.parse_reply(c.call("CLUSTER", "JOIN", cand.address))
        assert reply == b"OK", reply
        infos = wait_settled([node.port for node in nodes], 1, poll=0.005)
        elapsed = time.perf_counter() - start
        cpu = [harness.cpu_seconds(node.pid) - c0 for node, c0 in zip(nodes, cpu0)]
        for proc in perf:
            proc.send_signal(2)
            proc.wait()
        stop.set()
        times = [conn.recv() for _, conn in pings]
        for proc, _ in pings:
            proc.join()
        moved = sum(int(i["cluster_keys_moved"]) for i in infos)
        total = int(harness.parse_reply(harness.RespClient(cluster.ports[0]).call("DBSIZE")))
        assert total == n, (total, n)
        src = [t for ts in times[:3] for t in ts]
        return {"moved": moved, "seconds": elapsed, "src_cpu": sum(cpu[:3]), "dst_cpu": cpu[3],
                "src_max": max(src) * 1000, "src_p99": percentile(src, 0.99) * 1000,
                "dst_max": max(times[3]) * 1000,
                "dst_p99": percentile(times[3], 0.99) * 1000}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--server", action="append")
    p.add_argument("--keys", type=int, default=1000000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--perf", metavar="DIR", help="perf record -g each node during the join "
                   "into DIR/node<i>.data (1-3 the sources, 4 the target)")
    args = p.parse_args()
    servers = args.server or ["build/ringkv-server"]
    print("binary | keys moved | s | keys/s | CPU µs/key sources + target | "
          "PING max/p99 ms sources | PING max/p99 ms target | load avg", flush=True)
    for _ in range(args.rounds):
        for server in servers:
            r = one_join(server, args.keys, args.perf)
            us = 1e6 / max(1, r["moved"])
            print("%s | %d | %.2f | %.0f | %.2f + %.2f = %.2f | %.1f / %.1f | %.1f / %.1f | %.1f"
                  % (server, r["moved"], r["seconds"], r["moved"] / r["seconds"],
                     r["src_cpu"] * us, r["dst_cpu"] * us, (r["src_cpu"] + r["dst_cpu"]) * us,
                     r["src_max"], r["src_p99"], r["dst_max"], r["dst_p99"],
                     os.getloadavg()[0]), flush=True)


if __name__ == "__main__":
    main()
