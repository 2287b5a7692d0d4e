#!/usr/bin/env python3
"""CLUSTER IMPORT: a 3-node ringkv cluster replicates two running redis-servers 7.0.15.

1. Two sources (one sending its snapshot diskless, one from disk) hold keys of every type and
   encoding (with TTLs, streams with consumer groups)
   and some keys on both; CLUSTER IMPORT of both through one node while a writer keeps writing
   to the first (SET, INCR, HSET, RPUSH, SADD, ZADD, XADD, EXPIRE, DEL): once both sources are
   streaming and caught up (the imported offset equals the source's master_repl_offset),
   CLUSTER IMPORT STOP; then every key of the sources equals the cluster's (value, encoding,
   DUMP payload where the layout is not hash order, TTL within a second), the counts are equal,
   and the keys on both sources are counted as duplicates.
2. The first source restarts (SHUTDOWN SAVE, started again) during the import: the import
   reconnects, resyncs, and ends equal again.
3. A cluster node killed during the import (it restarts from its append-only file): the commands
   that failed meanwhile are counted
   in CLUSTER INFO; CLUSTER IMPORT STOP and CLUSTER IMPORT again take a new snapshot that
   restores them, and the end state is equal again.
4. Errors: bad arguments, an import already running, STOP with none running.
"""

import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import main_support  # noqa: E402
import redis  # noqa: E402
from test_dump_restore import deterministic, generate, snapshot, ttl_ok  # noqa: E402
from test_rdb import add_streams  # noqa: E402


def import_fields(port, prefix="cluster_import"):
    """The cluster_importN lines of CLUSTER INFO (or those of `prefix`: cluster_remote_import for
    the imports other members run), as dicts keyed by source address."""
    info = harness.info_fields(port, "CLUSTER", "INFO")
    out = {}
    for k, v in info.items():
        if k.startswith(prefix) and k != prefix + "s":
            fields = dict(f.split("=", 1) for f in v.split(","))
            out[fields["source"]] = fields
    return out


def wait_caught_up(report, port, sources, what, timeout=60):
    """Waits until every source streams and the import applied all its source has written, with
    no command left whose owner was unavailable (a new snapshot brings those)."""
    deadline = time.time() + timeout * harness.timeout_scale()
    fields = {}
    while time.time() < deadline:
        fields = import_fields(port)
        done = True
        for addr, r in sources.items():
            f = fields.get(addr, {})
            src_offset = int(r.info("replication")["master_repl_offset"])
            if f.get("state") != "streaming" or int(f.get("offset", -1)) < src_offset or \
                    f.get("in_flight") != "0" or f.get("unavailable") != "0":
                done = False
        if done:
            return fields
        time.sleep(0.05)
    report.check(False, "%s: the import caught up" % what, repr(fields))
    return fields


def compare_all(report, cluster_client, sources, what, batch=1000):
    """Every key of the sources (the shared keys hold the same value on both) equals the
    cluster's: DUMP payloads byte for byte, or the value and encoding where a payload follows
    hash-table order; TTLs within a second; the counts are equal. Pipelined, so a million keys
    take seconds."""
    owner = {}
    for r in sources:
        for k in r.scan_iter(count=1000):
            owner.setdefault(k, r)
    keys = sorted(owner)
    mismatches = []
    for start in range(0, len(keys), batch):
        chunk = keys[start:start + batch]
        mine = cluster_client.pipeline(transaction=False)
        for k in chunk:
            mine.dump(k)
            mine.pttl(k)
        got = mine.execute()
        per_source = {}
        for k in chunk:
            per_source.setdefault(id(owner[k]), (owner[k], []))[1].append(k)
        want = {}
        for r, ks in per_source.values():
            p = r.pipeline(transaction=False)
            for k in ks:
                p.dump(k)
                p.pttl(k)
            for k, (payload, ttl) in zip(ks, zip(*[iter(p.execute())] * 2)):
                want[k] = (payload, ttl)
        for i, k in enumerate(chunk):
            payload, ttl = got[2 * i], got[2 * i + 1]
            w_payload, w_ttl = want[k]
            if not ttl_ok(ttl, w_ttl):
                mismatches.append("%r TTL %r vs %r" % (k, ttl, w_ttl))
            elif payload != w_payload:
                # Hash-table sets and hashes iterate in another order: compare their values.
                w = snapshot(owner[k], k)
                if deterministic(w) or w[0] == "stream" or snapshot(cluster_client, k) != w:
                    mismatches.append("%r: DUMP payload differs" % k)
    report.check(not mismatches, "%s: every key equals its source's (%d keys)" % (what, len(keys)),
                 "; ".join(mismatches[:5]))
    report.equal(cluster_client.dbsize(), len(keys), "%s: key counts equal" % what)


class Writer(threading.Thread):
    """Keeps writing to a source until stopped (errors while it restarts are ignored); `ops`
    picks the kinds of writes (by default all; SAFE_OPS: only writes safe to apply twice)."""

    ALL_OPS = tuple(range(9))
    SAFE_OPS = (0, 2, 4, 7, 8)  # SET, HSET, SADD, EXPIRE (PEXPIREAT in the stream), DEL

    def __init__(self, port, seed, ops=ALL_OPS):
        super().__init__(daemon=True)
        self.port = port
        self.ops = ops
        self.rng = random.Random(seed)
        self.stop_flag = threading.Event()
        self.writes = 0

    def run(self):
        r = redis.Redis(port=self.port, socket_timeout=5)
        while not self.stop_flag.is_set():
            try:
                p = r.pipeline(transaction=False)
                for _ in range(50):
                    i = self.rng.randrange(2000)
                    op = self.rng.choice(self.ops)
                    if op == 0:
                        p.set("w:s:%d" % i, "v%d" % self.rng.randrange(10**6))
                    elif op == 1:
                        p.incr("w:n:%d" % (i % 100))
                    elif op == 2:
                        p.hset("w:h:%d" % (i % 50), "f%d" % (i % 20), i)
                    elif op == 3:
                        p.rpush("w:l:%d" % (i % 30), i)
                    elif op == 4:
                        p.sadd("w:set:%d" % (i % 30), i % 300)
                    elif op == 5:
                        p.zadd("w:z:%d" % (i % 30), {"m%d" % (i % 200): i / 7})
                    elif op == 6:
                        p.xadd("w:x:%d" % (i % 5), {"f": i})
                    elif op == 7:
                        p.expire("w:s:%d" % i, 1000)
                    else:
                        p.delete("w:s:%d" % self.rng.randrange(2000))
                p.execute()
                self.writes += 50
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
                time.sleep(0.05)
                r = redis.Redis(port=self.port, socket_timeout=5)
            time.sleep(0.002)


def restart_source(proc):
    c = redis.Redis(port=proc.port)
    try:
        c.execute_command("SHUTDOWN", "SAVE")
    except redis.ConnectionError:
        pass
    proc.proc.wait(30)
    proc.log_file.close()
    proc.start()
    redis.Redis(port=proc.port).config_set("repl-diskless-sync-delay", 0)


def test_errors(report, port):
    with harness.RespClient(port) as c:
        for args, want in ((["CLUSTER", "IMPORT", "nocolon"], b"-ERR invalid address"),
                           (["CLUSTER", "IMPORT", "127.0.0.1:0"], b"-ERR invalid address"),
                           (["CLUSTER", "IMPORT", "127.0.0.1:1", "AUTH"], b"-ERR syntax error"),
                           (["CLUSTER", "IMPORT", "STOP"], b"-ERR no import runs"),
                           (["CLUSTER", "IMPORT"], b"-ERR wrong number of arguments")):
            got = c.call(*args)
            report.check(got.startswith(want), " ".join(args), repr(got))


def main():
    args, rng, seed, report = main_support.seeded_start("test_import", __doc__,
                                                        keys=harness.scaled(20000))
    with harness.start_oracle("source-a") as a_proc, harness.start_oracle("source-b") as b_proc, \
            harness.Cluster(args.server, 3, extra="[persistence]\nappendonly = true\n") as cluster:
        a = redis.Redis(port=a_proc.port)
        b = redis.Redis(port=b_proc.port)
        for r in (a, b):  # a full resync starts at once, not after Redis's 5 s wait for others
            r.config_set("repl-diskless-sync-delay", 0)
        # The second source writes its snapshot to disk and sends it as $<len> (the first one
        # streams it between $EOF: markers).
        b.config_set("repl-diskless-sync", "no")
        node = cluster.nodes[0].port
        ring = redis.Redis(port=cluster.nodes[1].port)
        test_errors(report, node)
        generate(a, rng)
        add_streams(a)
        pa, pb = a.pipeline(transaction=False), b.pipeline(transaction=False)
        for i in range(args.keys):
            (pa if i % 2 else pb).set("bulk:%d" % i, "value-%d" % i, ex=3600 if i % 7 == 0 else None)
        for i in range(100):  # on both sources, with the same values
            pa.set("both:%d" % i, i)
            pb.set("both:%d" % i, i)
        pa.execute()
        pb.execute()
        writer = Writer(a_proc.port, seed)
        writer.start()
        sources = {"127.0.0.1:%d" % a_proc.port: a, "127.0.0.1:%d" % b_proc.port: b}
        started = time.time()
        for addr in sources:
            report.equal(harness.parse_reply(harness.RespClient(node).call(
                "CLUSTER", "IMPORT", addr)), b"OK", "CLUSTER IMPORT %s" % addr)
        with harness.RespClient(node) as c:
            got = c.call("CLUSTER", "IMPORT", "127.0.0.1:%d" % a_proc.port)
            report.check(got.startswith(b"-ERR already importing"), "a second import of a source",
                         repr(got))
        wait_caught_up(report, node, sources, "first import")
        print("imported and caught up in %.1fs (writer: %d writes)" % (
            time.time() - started, writer.writes), flush=True)
        # The source restarts mid-import; the writer keeps going once it is back.
        restart_source(a_proc)
        time.sleep(0.5)
        wait_caught_up(report, node, sources, "after the source restarted")
        # A node of the cluster is killed (it comes back with its append-only file): the commands
        # for its keys fail meanwhile and are counted; STOP and IMPORT again take a new snapshot.
        cluster.kill(2)
        time.sleep(1.0)
        cluster.restart(2)
        time.sleep(0.5)
        failed = sum(int(v.get("errors", 0)) for v in import_fields(node).values())
        report.check(failed > 0, "commands for the killed node's keys are counted (%d)" % failed)
        with harness.RespClient(node) as c:
            report.equal(c.call("CLUSTER", "IMPORT", "STOP"), b"+OK\r\n", "STOP after errors")
            for addr in sources:
                report.equal(c.call("CLUSTER", "IMPORT", addr), b"+OK\r\n", "IMPORT %s again" % addr)
        wait_caught_up(report, node, sources, "imported again")
        writer.stop_flag.set()
        writer.join()
        fields = wait_caught_up(report, node, sources, "after the writer stopped")
        f = fields.get("127.0.0.1:%d" % a_proc.port, {})
        report.check(int(f.get("disconnects", 0)) >= 1, "the restart was seen", repr(f))
        # After its restart the source may continue the stream (Redis 7.0 keeps its replication
        # ID in the RDB it saved at SHUTDOWN); after the errors the import takes a new snapshot.
        report.check(int(f.get("full_syncs", 0)) >= 2 and
                     int(f.get("full_syncs", 0)) + int(f.get("partial_syncs", 0)) >= 3,
                     "the import synced again after the restart and after the errors", repr(f))
        both = sum(int(v.get("duplicates", 0)) for v in fields.values())
        report.check(both >= 100, "keys on both sources counted as duplicates (%d)" % both)
        report.equal(sum(int(v.get("errors", 0)) for v in fields.values()), 0, "no errors")
        with harness.RespClient(node) as c:
            report.equal(c.call("CLUSTER", "IMPORT", "STOP"), b"+OK\r\n", "CLUSTER IMPORT STOP")
        states = {v["state"] for v in import_fields(node).values()}
        report.equal(states, {"stopped"}, "every import stopped")
        compare_all(report, ring, [a, b], "after CLUSTER IMPORT STOP")
        # Writes after STOP stay on the source only.
        a.set("after:stop", "1")
        time.sleep(0.3)
        report.equal(ring.exists("after:stop"), 0, "nothing is imported after STOP")
        harness.check_clean_exit(report, cluster.nodes[0])
    report.finish()


if __name__ == "__main__":
    main()
