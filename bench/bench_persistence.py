#!/usr/bin/python3
"""Append-only file benchmark: SET throughput of ringkv-server and redis-server with the same
persistence settings, in the same run.

For each mode — appendonly no, appendonly yes with appendfsync everysec, and with appendfsync
always — one ringkv and one redis-server are started with their files in fresh temp dirs on
the same filesystem, then redis-benchmark runs `-t set -c 50 -n 200000 -r 100000` unpipelined
(-P 1) and pipelined (-P 16) against each, interleaved over rounds (ringkv, redis, ringkv, ...)
so drift of the machine affects both alike. The best round per server is reported.

    /usr/bin/python3 bench/bench_persistence.py [--server build/ringkv-server] [--rounds 2]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))

import harness  # noqa: E402
from bench_single import run_benchmark  # noqa: E402

MODES = [("off", ["--appendonly", "no"]),
         ("everysec", ["--appendonly", "yes", "--appendfsync", "everysec"]),
         ("always", ["--appendonly", "yes", "--appendfsync", "always"])]
SET = [("SET", "set")]


def start(binary, mode_args, name):
    server = harness.ServerProcess(binary, name=name)
    server.extra_args += mode_args + ["--dir", server.dir]
    return server.start()


def measure(binary, mode_args, rounds, requests, clients):
    """{pipeline: {"ringkv": best rps, "redis": best rps}} for one persistence mode."""
    ours = start(binary, mode_args, "bench-aof-ringkv")
    redis = start(harness.REDIS_SERVER, mode_args, "bench-aof-redis")
    try:
        best = {}
        for pipeline in (1, 16):
            for _ in range(rounds):
                for label, srv in (("ringkv", ours), ("redis", redis)):
                    rps = run_benchmark(srv.port, SET, requests, pipeline, clients)["SET"][0]
                    slot = best.setdefault(pipeline, {})
                    slot[label] = max(slot.get(label, 0.0), rps)
        return best
    finally:
        ours.cleanup()
        redis.cleanup()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--server", default="build/ringkv-server")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--requests", type=int, default=200000)
    p.add_argument("--clients", type=int, default=50)
    args = p.parse_args()
    print("| appendfsync | -P | ringkv SET/s | redis SET/s | ratio |")
    print("|---|---|---:|---:|---:|")
    for mode, mode_args in MODES:
        print("mode %s..." % mode, file=sys.stderr, flush=True)
        best = measure(args.server, mode_args, args.rounds, args.requests, args.clients)
        for pipeline, slot in best.items():
            print("| %s | %d | %.0f | %.0f | %.2f |" % (
                mode, pipeline, slot["ringkv"], slot["redis"], slot["ringkv"] / slot["redis"]),
                flush=True)


if __name__ == "__main__":
    main()
