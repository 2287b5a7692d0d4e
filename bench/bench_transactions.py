#!/usr/bin/python3
"""Transactions across nodes: what a cross-node MULTI/EXEC costs against the same transaction on
one node, and what [cluster] atomic-multikey costs a split MSET.

Starts two 3-node ringkv clusters on this machine, one with atomic-multikey off and one with it
on, and drives node 1 of each with bench/txn_load (built here with g++: a closed-loop epoll
client that sends a whole batch pipelined and waits for all its replies; redis-benchmark cannot
send MULTI blocks), 50 connections, each batch timed from its first byte to its last reply:

  cross N    MULTI, N x SET, EXEC with the N keys on at least two nodes (N = 2: exactly two;
             each connection has its own keys, so transactions do not contend for locks)
  tagged N   the same MULTI with the N keys under one hash tag per connection (one node: run
             there, or relayed whole to the peer that owns the tag, as before cross-node
             transactions existed)
  mset off   MSET of 10 keys spread over the three nodes, split per owner (atomic-multikey off)
  mset on    the same MSET as one cross-node transaction (atomic-multikey on)
  multi mset MULTI, the same MSET, EXEC (atomic-multikey off: inside MULTI the MSET is split
             over the nodes' parts of one cross-node transaction)

Cases alternate round by round so machine drift hits them alike; the best round of each is kept.
Prints a markdown table: batches per second, p50 and p99 latency, and the ratios cross/tagged
and on/off. Checks the work was real: every node holds keys of each case afterwards and no
reply was an error.

    /usr/bin/python3 bench/bench_transactions.py [--server build/ringkv-server] [--seconds 5]
                                                 [--rounds 3] [--clients 50]
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))

import harness  # noqa: E402


def build_load(workdir):
    binary = os.path.join(workdir, "txn_load")
    subprocess.run([shutil.which("g++") or "g++", "-O2", "-std=c++20", "-o", binary,
                    os.path.join(HERE, "txn_load.cpp")], check=True)
    return binary


class Owners:
    """CLUSTER OWNER answers, cached."""

    def __init__(self, port):
        self.client = harness.RespClient(port)
        self.cache = {}

    def __call__(self, key):
        if key not in self.cache:
            self.cache[key] = harness.parse_reply(self.client.call("CLUSTER", "OWNER", key))
        return self.cache[key]


def cross_keys(owners, rng, client, n):
    """n keys of this client spread over at least two nodes (exactly two for n = 2)."""
    while True:
        keys = ["tx%d:%d:%d" % (n, client, rng.randrange(1 << 30)) for _ in range(n)]
        nodes = {owners(k) for k in keys}
        if len(nodes) >= 2 and (n != 2 or len(nodes) == 2):
            return keys


def script(clients, batch):
    """The script file's text: one batch per client, `batch(client)` its list of commands."""
    return "".join(" | ".join(" ".join(c) for c in batch(i)) + "\n" for i in range(clients))


def run_case(load, cluster, text, seconds, workdir, name):
    """Returns batches/s, p50 ms, p99 ms and the nodes' CPU ms per 1000 batches (warm-up
    included in both)."""
    path = os.path.join(workdir, name + ".txt")
    with open(path, "w") as f:
        f.write(text)
    pids = [node.pid for node in cluster.nodes]
    cpu = harness.cpu_seconds(*pids)
    out = subprocess.run([load, str(cluster.ports[0]), str(seconds), "1", path],
                         capture_output=True, text=True, timeout=seconds + 60)
    cpu = harness.cpu_seconds(*pids) - cpu
    if out.returncode != 0:
        raise RuntimeError("%s: %s %s" % (name, out.stdout, out.stderr))
    fields = dict(f.split("=") for f in out.stdout.split())
    if int(fields["errors"]) != 0:
        raise RuntimeError("%s: error replies: %s" % (name, out.stderr.strip()))
    batches = float(fields["rps"]) * (seconds + 1)
    return (float(fields["rps"]), float(fields["p50_ms"]), float(fields["p99_ms"]),
            cpu * 1000 / batches * 1000)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default=os.path.join(HERE, "..", "build", "ringkv-server"))
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=50)
    args = parser.parse_args()
    rng = random.Random(20)
    workdir = tempfile.mkdtemp(prefix="ringkv-bench-tx-")
    load = build_load(workdir)
    off = harness.Cluster(args.server, 3, name="bench-tx-off").start()
    on = harness.Cluster(args.server, 3, name="bench-tx-on",
                         cluster_options={"atomic-multikey": True}).start()
    try:
        owners = Owners(off.ports[0])
        cases = []
        for n in (2, 4, 10):
            keys = [cross_keys(owners, rng, c, n) for c in range(args.clients)]
            cases.append(("cross %d" % n, off, script(
                args.clients, lambda c, k=keys: [["MULTI"]] + [["SET", x, "xxx"] for x in k[c]] +
                [["EXEC"]])))
            cases.append(("tagged %d" % n, off, script(
                args.clients, lambda c, n=n: [["MULTI"]] +
                [["SET", "{tg%d:%d}:%d" % (n, c, i), "xxx"] for i in range(n)] + [["EXEC"]])))
        mset = [["ms:%d:%d" % (c, i) for i in range(10)] for c in range(args.clients)]
        spread = sum(len({owners(k) for k in ks}) for ks in mset) / len(mset)
        for label, cluster in (("mset off", off), ("mset on", on)):
            cases.append((label, cluster, script(
                args.clients, lambda c: [["MSET"] + [w for k in mset[c] for w in (k, "xxx")]])))
        cases.append(("multi mset", off, script(
            args.clients,
            lambda c: [["MULTI"], ["MSET"] + [w for k in mset[c] for w in (k, "xxx")], ["EXEC"]])))
        best = {}
        for r in range(args.rounds):
            for name, cluster, text in cases:
                result = run_case(load, cluster, text, args.seconds, workdir,
                                  name.replace(" ", "_"))
                print("round %d %-10s %8.0f batches/s  p50 %.2f ms  p99 %.2f ms  "
                      "cpu %.0f ms/1000" % (r + 1, name, *result), flush=True)
                if name not in best or result[0] > best[name][0]:
                    best[name] = result
        for cluster in (off, on):
            for port in cluster.ports:
                with harness.RespClient(port) as c:
                    keyspace = harness.parse_reply(c.call("INFO", "keyspace"))
                    assert b"keys=" in keyspace, "node on port %d holds no key" % port
        print()
        print("%d clients, %.0f s per round, best of %d rounds, through node 1 of 3; MSET keys "
              "span %.1f nodes on average" % (args.clients, args.seconds, args.rounds, spread))
        print()
        print("| case | batches/s | p50 ms | p99 ms | node CPU ms per 1000 | ratio |")
        print("|---|---|---|---|---|---|")
        for name, _, _ in cases:
            rps, p50, p99, cpu = best[name]
            if name.startswith("cross"):
                ratio = "%.2f of tagged" % (rps / best[name.replace("cross", "tagged")][0])
            elif name in ("mset on", "multi mset"):
                ratio = "%.2f of mset off" % (rps / best["mset off"][0])
            else:
                ratio = ""
            print("| %s | %.0f | %.2f | %.2f | %.0f | %s |" % (name, rps, p50, p99, cpu, ratio))
    finally:
        off.cleanup()
        on.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
