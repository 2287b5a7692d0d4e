#!/usr/bin/env python3
"""Live membership: how fast keys move when a node joins a running 3-node cluster, and what
clients see meanwhile.

1. Small keys: loads N keys (default 1 000 000, 16-byte values) into 3 nodes, joins a 4th, and
   times CLUSTER JOIN's +OK to the end of the change on every node (ring version and
   cluster_migration_state:idle everywhere); keys/s = keys moved (the sources' cluster_keys_moved)
   / that time.
2. Big values: the same with --mb megabytes of 100 KB values (default 256): MB/s.
3. Clients: redis-benchmark (SET, -c 20) against node 1 for a fixed time, once without a
   change and once across a join of the small-key data set; prints ops/s of both and the
   ratio (from the node's own command counter). A separate client sends PING every millisecond to every node during the join and prints
   the longest wait (an event-loop stall shows there).

Nothing is asserted. Run from the repository root after a Release build:

    /usr/bin/python3 bench/bench_migration.py [--keys N] [--mb M] [--server PATH]
"""

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))

import harness  # noqa: E402


def call(port, *args):
    with harness.RespClient(port, timeout=120) as c:
        return harness.parse_reply(c.call(*args))


def info(port):
    return harness.info_fields(port, "CLUSTER", "INFO")


def load(port, n, value_size, prefix):
    """Loads n keys through redis-cli --pipe (fast, one connection)."""
    value = "v" * value_size
    data = b"".join(harness.encode_command("SET", "%s:%d" % (prefix, i), value)
                    for i in range(n))
    subprocess.run([harness.REDIS_CLI, "-p", str(port), "--pipe"], input=data,
                   stdout=subprocess.DEVNULL, check=True)


@contextlib.contextmanager
def cluster_and_candidate(server, name):
    """A started 3-node cluster (health-interval 500 ms) and a started 4th node outside it, ready to
    join: yields (cluster, candidate node), stops both at the end."""
    with harness.Cluster(server, 3, name=name,
                         cluster_options={"health-interval": 500}) as cluster:
        port = harness.free_port()
        cand = harness.ClusterNode(server, port, harness.cluster_config(port, [port]),
                                   name + "-candidate").start()
        try:
            yield cluster, cand
        finally:
            cand.cleanup()


def wait_settled(ports, version, poll=0.01):
    """Waits until every node is at ring `version` with nothing migrating; their INFO cluster."""
    while True:
        infos = [info(p) for p in ports]
        if all(i["cluster_ring_version"] == str(version) and
               i["cluster_migration_state"] == "idle" for i in infos):
            return infos
        time.sleep(poll)


class Pinger(threading.Thread):
    """PING every node every millisecond; records the longest round trip."""

    def __init__(self, ports):
        super().__init__(daemon=True)
        self.ports, self.stop, self.worst = ports, threading.Event(), 0.0

    def run(self):
        socks = [socket.create_connection(("127.0.0.1", p)) for p in self.ports]
        while not self.stop.is_set():
            for s in socks:
                t = time.perf_counter()
                s.sendall(b"*1\r\n$4\r\nPING\r\n")
                s.recv(64)
                self.worst = max(self.worst, time.perf_counter() - t)
            time.sleep(0.001)


def join_and_time(server, n, value_size, label, pinger=False):
    with cluster_and_candidate(server, "bench-" + label) as (cluster, cand):
        # Through node 1, relayed to the owners; DBSIZE on one node counts every node's keys.
        load(cluster.ports[0], n, value_size, label)
        total = int(call(cluster.ports[0], "DBSIZE"))
        nodes = cluster.ports + [cand.port]
        p = Pinger(nodes) if pinger else None
        if p:
            p.start()
        start = time.perf_counter()
        call(cluster.ports[0], "CLUSTER", "JOIN", cand.address)
        infos = wait_settled(nodes, 1)
        elapsed = time.perf_counter() - start
        moved = sum(int(i["cluster_keys_moved"]) for i in infos)
        if p:
            p.stop.set()
            p.join()
        return {"keys": total, "moved": moved, "seconds": elapsed,
                "worst_ping_ms": p.worst * 1000 if p else None}


def throughput_run(server, n, seconds, with_join):
    """ops/s of a steady SET load on node 1 over `seconds`, with or without a join in the middle,
    from the node's own total_commands_processed (redis-benchmark killed early prints nothing)."""
    with cluster_and_candidate(server, "bench-load") as (cluster, cand):
        load(cluster.ports[0], n, 16, "load")
        proc = subprocess.Popen(
            ["redis-benchmark", "-p", str(cluster.ports[0]), "-c", "20", "-r", "1000000",
             "-n", "100000000", "-t", "set", "-q"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        before = int(harness.info_fields(cluster.ports[0], "INFO", "stats")
                     ["total_commands_processed"])
        t0 = time.perf_counter()
        if with_join:
            call(cluster.ports[0], "CLUSTER", "JOIN", cand.address)
            wait_settled(cluster.ports + [cand.port], 1)
        while time.perf_counter() - t0 < seconds:
            time.sleep(0.05)
        after = int(harness.info_fields(cluster.ports[0], "INFO", "stats")
                    ["total_commands_processed"])
        elapsed = time.perf_counter() - t0
        proc.terminate()
        proc.wait()
        return (after - before) / elapsed, elapsed


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--server", default="build/ringkv-server")
    p.add_argument("--keys", type=int, default=1000000)
    p.add_argument("--mb", type=int, default=256)
    args = p.parse_args()

    small = join_and_time(args.server, args.keys, 16, "small", pinger=True)
    print("small keys: %d keys, %d moved in %.2f s: %.0f keys/s; longest PING during the join "
          "%.1f ms" % (args.keys, small["moved"], small["seconds"],
                       small["moved"] / small["seconds"], small["worst_ping_ms"]), flush=True)
    big_n = args.mb * 1024 // 100
    big = join_and_time(args.server, big_n, 100 * 1024, "big", pinger=True)
    mb = big["moved"] * 100 / 1024
    print("100 KB values: %d keys (%d MB), %d moved (%.0f MB) in %.2f s: %.0f MB/s; longest PING "
          "%.1f ms" % (big_n, args.mb, big["moved"], mb, big["seconds"], mb / big["seconds"],
                       big["worst_ping_ms"]), flush=True)
    seconds = max(10.0, small["seconds"] * 1.5)
    base, _ = throughput_run(args.server, args.keys, seconds, False)
    during, _ = throughput_run(args.server, args.keys, seconds, True)
    print("SET throughput on node 1 over %.0f s: %.0f ops/s without a change, %.0f ops/s across "
          "a join: ratio %.2f" % (seconds, base, during, during / base), flush=True)


if __name__ == "__main__":
    main()
