#!/usr/bin/python3
"""Memory per stream entry and per HyperLogLog key: ringkv-server against redis-server, each in a
fresh process, same data.

Streams: one stream gets `--entries` entries of 3 small fields (XADD s * a <i> b 2 c 3, ids
chosen by the server). HyperLogLogs: `--sparse-keys` keys of 5 elements each (sparse sketches)
and `--dense-keys` keys of 3000 elements each (dense sketches of 12 KiB). The data is piped in
with redis-cli --pipe and the growth of each process's RSS is divided by the entries or keys.

    /usr/bin/python3 bench/bench_memory_types.py [--server build/ringkv-server] [--quick]
"""

import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))

import harness  # noqa: E402


def command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def stream_payload(entries):
    return b"".join(command("XADD", "s", "*", "a", i, "b", "2", "c", "3") for i in range(entries))


def hll_payload(keys, elements, prefix):
    parts = []
    for k in range(keys):
        key = "%s:%d" % (prefix, k)
        for start in range(0, elements, 500):
            batch = ["e%d" % e for e in range(start, min(start + 500, elements))]
            parts.append(command("PFADD", key, *batch))
    return b"".join(parts)


def measure(binary, payload, check):
    """Growth of RSS (kB) of a fresh ringkv and a fresh redis after piping `payload`, and what
    `check(client)` says each holds."""
    out = {}
    for label, path, kind in (("ringkv", binary, None), ("redis", harness.REDIS_SERVER, "redis")):
        with harness.ServerProcess(path, kind=kind, name=label + "-memtypes") as srv:
            time.sleep(0.2)
            before = srv.rss_kb()
            res = subprocess.run([harness.REDIS_CLI, "-p", str(srv.port), "--pipe"],
                                 input=payload, capture_output=True, timeout=900)
            if res.returncode != 0:
                print("%s: redis-cli --pipe failed: %r" % (label, res.stdout[-300:]),
                      file=sys.stderr)
            time.sleep(0.5)
            with harness.RespClient(srv.port) as c:
                held = check(c)
            out[label] = (srv.rss_kb() - before, held)
    return out


def report(title, unit, count, result):
    print("\n%s (%d %s)\n" % (title, count, "entries" if unit == "entry" else unit + "s"))
    print("| server | RSS growth MB | bytes per %s | held |" % unit)
    print("|---|---:|---:|---|")
    for label, (growth_kb, held) in result.items():
        print("| %s | %.1f | %.1f | %s |" % (label, growth_kb / 1024, growth_kb * 1024 / count,
                                             held))
    if result["redis"][0] > 0:
        print("\nratio ringkv/redis: %.2f" % (result["ringkv"][0] / result["redis"][0]))


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=os.path.join(root, "build", "ringkv-server"))
    p.add_argument("--entries", type=int, default=1000000)
    p.add_argument("--sparse-keys", type=int, default=100000)
    p.add_argument("--dense-keys", type=int, default=1000)
    p.add_argument("--quick", action="store_true", help="100k entries, 10k + 100 keys")
    args = p.parse_args()
    if args.quick:
        args.entries, args.sparse_keys, args.dense_keys = 100000, 10000, 100

    streams = measure(args.server, stream_payload(args.entries),
                      lambda c: "XLEN %s" % c.call("XLEN", "s")[1:-2].decode())
    report("Stream entries of 3 small fields", "entry", args.entries, streams)
    sparse = measure(args.server, hll_payload(args.sparse_keys, 5, "sparse"),
                     lambda c: "DBSIZE %s, %s" % (c.call("DBSIZE")[1:-2].decode(),
                                                   c.call("PFDEBUG", "ENCODING", "sparse:0")[1:-2]
                                                   .decode()))
    report("Sparse HyperLogLogs of 5 elements", "key", args.sparse_keys, sparse)
    dense = measure(args.server, hll_payload(args.dense_keys, 3000, "dense"),
                    lambda c: "DBSIZE %s, %s" % (c.call("DBSIZE")[1:-2].decode(),
                                                  c.call("PFDEBUG", "ENCODING", "dense:0")[1:-2]
                                                  .decode()))
    report("Dense HyperLogLogs of 3000 elements", "key", args.dense_keys, dense)


if __name__ == "__main__":
    main()
