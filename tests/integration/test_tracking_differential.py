#!/usr/bin/python3
"""Client-side caching through a cluster against redis-server: the same random reads and writes,
the same invalidations.

Three RESP3 clients with CLIENT TRACKING on read keys (GET, MGET, EXISTS, STRLEN, GETRANGE) and
four other clients write them (SET, MSET, DEL, UNLINK, RENAME, COPY, APPEND, SETRANGE, GETDEL,
EXPIRE, PERSIST, INCR). On the cluster (3 nodes, atomic-multikey on, so that RENAME and COPY run
across owners) each client is connected to another node; on redis-server all to the one server.
After each write, the keys each tracking client is told are invalidated must be the same on both.
An invalidation from a key's owner reaches a reader on another node on its own link, so each
write is given 0.1 s for them to arrive.

    /usr/bin/python3 test_tracking_differential.py --server build/ringkv-server [--seed N]
"""

import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

KEYS = ["k%d" % i for i in range(12)]
STEPS = 80
PUSH = re.compile(rb">2\r\n\$10\r\ninvalidate\r\n\*1\r\n\$\d+\r\n([^\r]*)\r\n")


def script(rng):
    steps = []
    for _ in range(STEPS):
        k, k2 = rng.choice(KEYS), rng.choice(KEYS)
        if rng.random() < 0.45:
            steps.append(("read", rng.randrange(3), rng.choice([
                ("GET", k), ("MGET", k, k2), ("STRLEN", k), ("EXISTS", k, k2),
                ("GETRANGE", k, "0", "1")])))
        else:
            steps.append(("write", rng.randrange(4), rng.choice([
                ("SET", k, "v"), ("DEL", k, k2), ("MSET", k, "a", k2, "b"), ("APPEND", k, "x"),
                ("RENAME", k, k2), ("COPY", k, k2, "REPLACE"), ("UNLINK", k),
                ("SETRANGE", k, "0", "z"), ("GETDEL", k), ("PERSIST", k), ("EXPIRE", k, "100"),
                ("INCR", k2 + "n")])))
    return steps


def run(ports, steps, wait):
    """Runs `steps`; returns, per step, (step, tracking client, the keys it was told of)."""
    trackers = []
    for i in range(3):
        t = harness.RespClient(ports[i % len(ports)])
        t.__enter__()
        t.call("HELLO", "3")
        t.call("CLIENT", "TRACKING", "on")
        trackers.append(t)
    writers = [harness.RespClient(ports[i % len(ports)]) for i in range(4)]
    for w in writers:
        w.__enter__()
    log = []
    try:
        for n, (kind, who, command) in enumerate(steps):
            if kind == "read":
                # The read's reply, and any invalidation before it, are dropped: what counts is
                # what each write's invalidations say.
                trackers[who].sock.sendall(harness.encode_command(*command))
                trackers[who].read_available(0.02)
                continue
            writers[who].call(*command)
            for i, t in enumerate(trackers):
                data, _ = t.read_available(wait)
                log.append((n, " ".join(command), i, sorted(set(PUSH.findall(data)))))
    finally:
        for c in trackers + writers:
            c.close()
    return log


def main():
    parser = harness.arg_parser(__doc__)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print("seed %d" % seed, flush=True)
    steps = script(random.Random(seed))
    report = harness.Report("test_tracking_differential")
    with harness.Cluster(args.server, 3, name="trackdiff",
                         cluster_options={"atomic-multikey": True}) as cluster:
        got = run(cluster.ports, steps, 0.1)
    with harness.start_oracle("trackdiff") as srv:
        want = run([srv.port], steps, 0.02)
    for g, w in zip(got, want):
        report.equal(g[3], w[3], "step %d (%s): tracking client %d's invalidations" % g[:3])
    report.equal(len(got), len(want), "as many writes")
    report.finish()


if __name__ == "__main__":
    main()
