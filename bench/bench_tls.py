#!/usr/bin/python3
"""TLS benchmark: GET and SET over TLS against ringkv-server and redis-server 7.0.15 with the same
throwaway certificates (made with the openssl command, as the tests make them), same run.

redis-benchmark --tls (client certificate, -c 50 -r 100000) runs SET and GET against each
server's tls-port, unpipelined (-P 1) and pipelined (-P 16), interleaved ringkv, redis, ringkv,
redis... so load from elsewhere on the machine hits both alike; the best round per server is
kept. Prints one markdown row per command and depth: requests per second, p50/p99 ms, and the
ratio ringkv/redis (the issue's goal is at least 0.9).

    /usr/bin/python3 bench/bench_tls.py [--server build/ringkv-server] [--requests N] [--rounds N]
"""

import argparse
import csv
import io
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))

import harness  # noqa: E402
import tls_certs  # noqa: E402


def run(port, certs, requests, pipeline, clients):
    cmd = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), *certs.cli_args(), "-c",
           str(clients), "-r", "100000", "-n", str(requests), "-P", str(pipeline), "-t",
           "set,get", "--csv", "-q"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=True).stdout
    return {row["test"]: (float(row["rps"]), float(row["p50_latency_ms"]),
                          float(row["p99_latency_ms"])) for row in csv.DictReader(io.StringIO(out))}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--server", default="build/ringkv-server")
    p.add_argument("--requests", type=int, default=200000, help="per test at -P 1 (4x at -P 16)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--clients", type=int, default=50)
    args = p.parse_args()
    certs = tls_certs.Certs()
    tls_ports = harness.free_ports(2)
    ours = harness.ServerProcess(args.server, name="bench-tls-ringkv",
                                 extra_args=["--tls-port", str(tls_ports[0]),
                                             *certs.server_args()])
    redis = harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="bench-tls-redis",
                                  extra_args=["--tls-port", str(tls_ports[1]),
                                              *certs.server_args()])
    results = {}
    with ours, redis:
        for pipeline in (1, 16):
            n = args.requests * (4 if pipeline > 1 else 1)
            for r in range(args.rounds):
                for label, port in (("ringkv", tls_ports[0]), ("redis", tls_ports[1])):
                    print("round %d/%d -P %d: %s" % (r + 1, args.rounds, pipeline, label),
                          file=sys.stderr, flush=True)
                    for test, row in run(port, certs, n, pipeline, args.clients).items():
                        slot = results.setdefault((test, pipeline), {})
                        if label not in slot or row[0] > slot[label][0]:
                            slot[label] = row
    print("| command | -P | ringkv rps | redis rps | ratio | ringkv p50/p99 ms | "
          "redis p50/p99 ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (test, pipeline), slot in results.items():
        a, b = slot["ringkv"], slot["redis"]
        print("| %s | %d | %.0f | %.0f | %.2f | %.3f / %.3f | %.3f / %.3f |" % (
            test, pipeline, a[0], b[0], a[0] / b[0], a[1], a[2], b[1], b[2]))


if __name__ == "__main__":
    main()
