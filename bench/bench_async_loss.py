#!/usr/bin/env python3
"""What a failover loses with replica-acks 0: acknowledged writes whose frames had not reached the
replica when their primary died, for one or more server binaries (and repl-batch-ms values)
taking turns in the same run.

Each round starts 3 nodes (replication-factor 2, replica-acks 0), and 4 writers pipeline 64 SETs
at a time through node 1 over 4 000 keys each (values count up per key), recording each
acknowledged value. After 1 s the writers stop and node 2 is killed with kill -9 while their last
pipelines are in flight; once the survivors failed it over, every key is read through node 1 and
counted as lost when its value is older than its last acknowledged one (or gone).

Nothing is asserted. Run from the repository root after a Release build:

    /usr/bin/python3 bench/bench_async_loss.py [--rounds R] [--batch-ms 1 --batch-ms 0] \
        --server build/ringkv-server [--server /tmp/old-ringkv-server]
"""

import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))

import harness  # noqa: E402
import redis  # noqa: E402
import replication_support as repl  # noqa: E402

WRITERS = 4
KEYS_PER_WRITER = 4000
BATCH = 64


def writer(port, w, stop, acked, lock):
    r = redis.Redis(port=port, socket_timeout=5)
    seq = 0
    while not stop.is_set():
        seq += 1
        keys = ["w%d:%d" % (w, (seq * BATCH + i) % KEYS_PER_WRITER) for i in range(BATCH)]
        pipe = r.pipeline(transaction=False)
        for k in keys:
            pipe.set(k, seq)
        try:
            replies = pipe.execute(raise_on_error=False)
        except redis.RedisError:
            time.sleep(0.01)
            continue
        with lock:
            for k, ok in zip(keys, replies):
                if ok is True:
                    acked[k] = seq


def one_round(binary, batch_ms):
    """Returns (acknowledged keys, keys whose last acknowledged value was lost)."""
    opts = dict(repl.HEALTH, **{"replication-factor": 2, "replica-acks": 0})
    if batch_ms is not None:
        opts["repl-batch-ms"] = batch_ms
    with harness.Cluster(binary, 3, name="bench-async-loss", cluster_options=opts) as c:
        ports = c.ports
        repl.settle(ports)
        acked, lock, stop = {}, threading.Lock(), threading.Event()
        threads = [threading.Thread(target=writer, args=(ports[0], w, stop, acked, lock))
                   for w in range(WRITERS)]
        for t in threads:
            t.start()
        time.sleep(1.0)
        stop.set()  # their last pipelines are in flight as node 2 dies
        c.kill(1)
        for t in threads:
            t.join()
        time.sleep(3.0)  # the failover (health-interval 200 ms, failure-limit 3)
        r = redis.Redis(port=ports[0], socket_timeout=10)
        keys = sorted(acked)
        lost = 0
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            for k, v in zip(chunk, r.mget(chunk)):
                if v is None or int(v) < acked[k]:
                    lost += 1
        return len(keys), lost


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", action="append", default=[])
    p.add_argument("--batch-ms", type=int, action="append", default=[],
                   help="repl-batch-ms values to try (default: the server's default)")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    servers = [os.path.abspath(s) for s in (args.server or ["build/ringkv-server"])]
    setups = [(s, b) for s in servers for b in (args.batch_ms or [None])]
    results = {setup: [] for setup in setups}
    for r in range(args.rounds):
        for binary, batch_ms in setups:
            keys, lost = one_round(binary, batch_ms)
            results[(binary, batch_ms)].append(lost)
            print("round %d: %s repl-batch-ms %s: %d of %d keys lost their last acknowledged "
                  "value" % (r + 1, binary, "default" if batch_ms is None else batch_ms, lost,
                             keys), file=sys.stderr, flush=True)
    for (binary, batch_ms), losses in results.items():
        print("%s, repl-batch-ms %s: keys lost per round %s" % (
            binary, "default" if batch_ms is None else batch_ms,
            ", ".join(str(n) for n in losses)))


if __name__ == "__main__":
    main()
