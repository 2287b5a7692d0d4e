#!/usr/bin/python3
"""Relaying in a numbered database: SET/GET -P 16 through node 1 of a 3-node cluster in database 0
and in database 1 (redis-benchmark --dbnum), alternating on the same cluster, so machine drift
hits both alike. A request of database n > 0 travels to its owner with a RINGKV.DB n prefix;
database 0's frames carry none, so database 0 is the floor any way of carrying the database
could reach.

Prints the median throughput of each, and the CPU time the three nodes used per request
(utime + stime from /proc, less sensitive to a busy machine than throughput).

    /usr/bin/python3 bench/bench_databases.py [--server build/ringkv-server] [--rounds 10]
"""

import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))

import harness  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--server", default="build/ringkv-server")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--requests", type=int, default=200000)
    args = p.parse_args()
    res = {db: {"SET": [], "GET": [], "cpu": []} for db in (0, 1)}
    with harness.Cluster(args.server, 3, name="bench-db") as c:
        pids = [n.proc.pid for n in c.nodes]
        for rnd in range(args.rounds):
            for db in ((0, 1) if rnd % 2 == 0 else (1, 0)):
                before = harness.cpu_seconds(*pids)
                out = subprocess.run(
                    ["redis-benchmark", "-p", str(c.ports[0]), "-t", "set,get", "-P", "16", "-n",
                     str(args.requests), "-c", "50", "-r", "100000", "--dbnum", str(db), "-q"],
                    capture_output=True, text=True, timeout=600).stdout
                spent = harness.cpu_seconds(*pids) - before
                res[db]["cpu"].append(spent * 1e6 / (2 * args.requests))
                for line in out.replace("\r", "\n").splitlines():
                    if "requests per second" in line:
                        name = line.split(":")[0].strip()
                        res[db][name].append(float(line.split(":")[1].split("requests")[0]))
    for db in (0, 1):
        r = res[db]
        print("db %d: SET %.0f/s  GET %.0f/s  (medians of %d)  CPU of the 3 nodes per request: "
              "%.2f us" % (db, statistics.median(r["SET"]), statistics.median(r["GET"]),
                           args.rounds, statistics.median(r["cpu"])))


if __name__ == "__main__":
    main()
