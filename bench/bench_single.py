#!/usr/bin/python3
"""Single-node benchmark: ringkv-server against redis-server on the same machine, same run.

Throughput and latency: redis-benchmark runs SET, GET, INCR, MSET (10 keys), LPUSH, LPOP, SADD,
HSET, ZADD and LRANGE_100, and as custom commands SETBIT and BITCOUNT on small bitmaps, PFADD
and PFCOUNT on one HyperLogLog, XADD (3 small fields) and XRANGE (10 entries) on one stream, and
GEOADD (points spread over a 10x10 degree square) and GEOSEARCH (the 10 nearest within 20 km)
on one geo set, with -c 50
-r 100000 against each server, interleaved (ringkv, redis, ringkv, redis, ...) so drift of the
machine affects both alike, unpipelined (-P 1) and pipelined (-P 16). The best round per server
is reported (the least disturbed one), and beside it the least CPU time (user + system, from
/proc) the server used per request in any round: on a machine of 2 cores, redis-benchmark's
own thread takes one, so at -P 1 throughput measures the client as much as the server, while
the CPU per request is the server's alone. Memory: one million small keys (16-byte values, every
third with a TTL) are loaded with redis-cli --pipe and the growth of each process's RSS is
compared.

    /usr/bin/python3 bench/bench_single.py [--server build/ringkv-server] [--quick]
"""

import argparse
import csv
import io
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))

import harness  # noqa: E402

TESTS = [("SET", "set"), ("GET", "get"), ("INCR", "incr"), ("MSET (10 keys)", "mset"),
         ("LPUSH", "lpush"), ("LPOP", "lpop"), ("SADD", "sadd"), ("HSET", "hset"),
         ("ZADD", "zadd"), ("LRANGE_100 (first 100 elements)", "lrange_100")]
# Commands without a -t test, run as custom commands. __rand_int__ becomes a zero-padded number
# below -r, which is no valid bit offset, so it varies the bitmap key and the HLL element only.
CUSTOM = [("SETBIT", ["SETBIT", "bits:__rand_int__", "100", "1"]),
          ("BITCOUNT", ["BITCOUNT", "bits:__rand_int__"]),
          ("PFADD", ["PFADD", "hll", "e:__rand_int__"]), ("PFCOUNT", ["PFCOUNT", "hll"]),
          ("XADD", ["XADD", "stream", "*", "a", "__rand_int__", "b", "2", "c", "3"]),
          ("XRANGE", ["XRANGE", "stream", "-", "+", "COUNT", "10"]),
          # "000000012345e-4" is 1.2345: longitudes and latitudes in [0, 10).
          ("GEOADD", ["GEOADD", "geo", "__rand_int__e-4", "__rand_int__e-4", "m:__rand_int__"]),
          ("GEOSEARCH", ["GEOSEARCH", "geo", "FROMLONLAT", "5", "5", "BYRADIUS", "20", "km",
                         "ASC", "COUNT", "10"])]


def run_benchmark(srv, requests, pipeline, clients):
    """Runs redis-benchmark --csv once per -t test, in TESTS' order (each test finds what the
    ones before it left), then once per custom command; returns {test name: (rps, p50 ms,
    p99 ms, server CPU microseconds per request)}."""
    base = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(srv.port), "-c", str(clients),
            "-r", "100000", "-n", str(requests), "-P", str(pipeline), "--csv", "-q"]
    rows = {}
    runs = [(name, base + ["-t", test]) for name, test in TESTS]
    runs += [(name, base + argv) for name, argv in CUSTOM]
    for name, cmd in runs:
        cpu = harness.cpu_seconds(srv.pid)
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=True).stdout
        cpu_us = (harness.cpu_seconds(srv.pid) - cpu) * 1e6
        *before, row = csv.DictReader(io.StringIO(out))
        if before:
            # The test's row is the last: before LRANGE, redis-benchmark fills the list with an
            # LPUSH run of its own, whose CPU (at the LPUSH test's cost) is not LRANGE's.
            cpu_us -= len(before) * rows["LPUSH"][3] * requests
        rows[name] = (float(row["rps"]), float(row["p50_latency_ms"]),
                      float(row["p99_latency_ms"]), cpu_us / requests)
    return rows


def throughput(ours, redis, rounds, requests, clients):
    """Interleaved rounds; returns {(test, pipeline): {"ringkv": (best rps, p50, p99, least CPU
    per request), "redis": ...}}: the best round's throughput and latency, the least CPU any
    round used per request (both the least disturbed measurement)."""
    results = {}
    for pipeline in (1, 16):
        n = requests * (4 if pipeline > 1 else 1)
        for r in range(rounds):
            for label, srv in (("ringkv", ours), ("redis", redis)):
                print("round %d/%d -P %d: %s" % (r + 1, rounds, pipeline, label),
                      file=sys.stderr, flush=True)
                rows = run_benchmark(srv, n, pipeline, clients)
                for test, _ in TESTS + CUSTOM:
                    if test not in rows:
                        continue
                    slot = results.setdefault((test, pipeline), {})
                    row = rows[test]
                    if label in slot:
                        best = row if row[0] > slot[label][0] else slot[label]
                        row = best[:3] + (min(row[3], slot[label][3]),)
                    slot[label] = row
    return results


def print_throughput(results):
    print("| command | -P | ringkv rps | redis rps | ratio | ringkv p50/p99 ms | "
          "redis p50/p99 ms | CPU us/req ringkv / redis |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (test, pipeline), slot in results.items():
        a, b = slot.get("ringkv"), slot.get("redis")
        if not a or not b:
            print("| %s | %d | %s | %s | n/a | | | |" % (test, pipeline, a, b))
            continue
        print("| %s | %d | %.0f | %.0f | %.2f | %.3f / %.3f | %.3f / %.3f | %.2f / %.2f (%.2f) |"
              % (test, pipeline, a[0], b[0], a[0] / b[0], a[1], a[2], b[1], b[2], a[3], b[3],
                 a[3] / b[3] if b[3] > 0 else float("nan")))


def load_payload(keys):
    """RESP for `keys` SETs of 16-byte values, every third with EX 100000."""
    value = b"v" * 16
    parts = []
    for i in range(keys):
        key = b"key:%012d" % i
        if i % 3 == 0:
            parts.append(b"*5\r\n$3\r\nSET\r\n$16\r\n%s\r\n$16\r\n%s\r\n"
                         b"$2\r\nEX\r\n$6\r\n100000\r\n" % (key, value))
        else:
            parts.append(b"*3\r\n$3\r\nSET\r\n$16\r\n%s\r\n$16\r\n%s\r\n" % (key, value))
    return b"".join(parts)


def memory(binary, keys):
    """Loads `keys` keys into a fresh process of each server (so memory freed by the throughput
    run does not hide growth); returns {label: (rss before kB, after kB, dbsize)}."""
    payload = load_payload(keys)
    out = {}
    for label, path, kind in (("ringkv", binary, None), ("redis", harness.REDIS_SERVER, "redis")):
        with harness.ServerProcess(path, kind=kind, name=label + "-mem") as srv:
            out[label] = load_and_measure(srv, payload, label)
    return out


def load_and_measure(srv, payload, label):
    """Pipes `payload` into `srv`; returns (rss before kB, rss after kB, dbsize)."""
    time.sleep(0.2)
    before = srv.rss_kb()
    res = subprocess.run([harness.REDIS_CLI, "-p", str(srv.port), "--pipe"], input=payload,
                         capture_output=True, timeout=600)
    if res.returncode != 0:
        print("%s: redis-cli --pipe failed: %r" % (label, res.stdout[-300:] + res.stderr),
              file=sys.stderr)
    time.sleep(0.5)
    with harness.RespClient(srv.port) as c:
        dbsize = int(c.call("DBSIZE")[1:-2])
        # The comparison only means something if both really hold the values and the TTLs.
        ttl = c.call("TTL", "key:%012d" % 0)
        value = c.call("GET", "key:%012d" % 1)
    ttl_ok = ttl.startswith(b":") and int(ttl[1:-2]) > 0
    if not ttl_ok or value != b"$16\r\n" + b"v" * 16 + b"\r\n":
        print("%s: loaded keys look wrong: TTL %r, GET %r" % (label, ttl, value), file=sys.stderr)
    return before, srv.rss_kb(), dbsize


def print_memory(mem, keys):
    print()
    print("| server | keys loaded | RSS before MB | RSS after MB | growth MB | bytes/key |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, (before, after, dbsize) in mem.items():
        growth = after - before
        print("| %s | %d | %.1f | %.1f | %.1f | %.1f |" % (
            label, dbsize, before / 1024, after / 1024, growth / 1024,
            growth * 1024 / max(dbsize, 1)))
    g_ours = mem["ringkv"][1] - mem["ringkv"][0]
    g_redis = mem["redis"][1] - mem["redis"][0]
    if g_redis > 0:
        print("\nmemory growth ratio ringkv/redis for %d keys: %.2f" % (keys, g_ours / g_redis))


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=os.path.join(root, "build", "ringkv-server"))
    p.add_argument("--requests", type=int, default=100000, help="requests per test at -P 1")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--keys", type=int, default=1000000, help="keys for the memory comparison")
    p.add_argument("--quick", action="store_true", help="short run: 20k requests, 100k keys")
    args = p.parse_args()
    if args.quick:
        args.requests, args.keys, args.rounds = 20000, 100000, 2

    ours = harness.ServerProcess(args.server, name="ringkv")
    redis = harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="redis")
    try:
        ours.start()
        redis.start()
        print("ringkv: %s (pid %d, port %d); redis: %s (pid %d, port %d)" % (
            args.server, ours.pid, ours.port, harness.REDIS_SERVER, redis.pid, redis.port))
        print("redis-benchmark -c %d -r 100000 -n %d (x4 at -P 16), best of %d interleaved rounds\n"
              % (args.clients, args.requests, args.rounds))
        print_throughput(throughput(ours, redis, args.rounds, args.requests, args.clients))
    finally:
        ours.cleanup()
        redis.cleanup()
    print_memory(memory(args.server, args.keys), args.keys)


if __name__ == "__main__":
    main()
