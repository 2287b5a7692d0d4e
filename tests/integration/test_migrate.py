"""MIGRATE, differentially against redis-server 7: the same commands go to a ringkv node and to
a redis-server, each migrating to a target redis-server of its own (both targets with a
password), and every reply, the keys left on each source and the values, TTLs and databases on
each target must match:

  1. errors before anything is sent (options, integers, KEYS with a key), +NOKEY, the target's
     errors (NOAUTH, WRONGPASS, BUSYKEY) as "Target instance replied with error: ...", AUTH and
     AUTH2, COPY, REPLACE, KEYS with missing keys, a TTL carried over, another database (and
     SELECT sent again after the target's connection was killed: the cached connection fails,
     MIGRATE retries once on a new one and succeeds);
  2. targets that cannot be used: a refused port, a port no address has, and a target that
     accepts and never answers (IOERR after the timeout, the keys kept); every target is on
     127.0.0.1 (no name is looked up);
  3. SLOWLOG shows AUTH and AUTH2 values as (redacted), INFO's migrate_cached_sockets;
  4. with appendonly, a migrated key is logged as a DEL: after a restart it is still gone, and
     the file holds no MIGRATE;
  5. through a 3-node cluster, MIGRATE of keys of every node (each relayed to its owner), and
     KEYS of keys with different owners refused with CROSSSLOT.

    /usr/bin/python3 test_migrate.py --server build/ringkv-server
"""

import os
import socket
import threading
import time

import harness

PASSWORD = "pw"


def start_target(name):
    return harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name=name,
                                 extra_args=["--requirepass", PASSWORD]).start()


def authed(port):
    c = harness.RespClient(port)
    c.call("AUTH", PASSWORD)
    return c


class Sides:
    """A ringkv source and a redis source, each with its own target."""

    def __init__(self, report, ours, redis, ours_target, redis_target):
        self.report = report
        self.sources = [harness.RespClient(ours.port), harness.RespClient(redis.port)]
        self.targets = [authed(ours_target.port), authed(redis_target.port)]
        self.target_ports = [ours_target.port, redis_target.port]

    def both(self, *args):
        """The same command on both sources; the replies must match."""
        got, want = (c.call(*args) for c in self.sources)
        self.report.equal(got, want, " ".join(map(str, args)))
        return got

    def on_targets(self, *args):
        got, want = (c.call(*args) for c in self.targets)
        self.report.equal(got, want, "target: " + " ".join(map(str, args)))
        return got

    def migrate(self, *args, host="127.0.0.1", port=None):
        """MIGRATE host <each side's target port> args... on both sources."""
        replies = []
        for c, target in zip(self.sources, self.target_ports):
            replies.append(c.call("MIGRATE", host, str(port or target), *args))
        self.report.equal(replies[0], replies[1], "MIGRATE %s" % " ".join(map(str, args)))
        return replies[0]


def check_differential(report, s):
    for c in s.sources:
        c.call("SET", "k1", "v1")
        c.call("RPUSH", "l1", "a", "b", "c")
        c.call("SET", "k2", "v2", "PX", "100000")
        c.call("HSET", "h1", "f", "v")
        c.call("SET", "k3", "v3")
        c.call("ZADD", "z1", "1", "m")
    # Errors before anything is sent.
    for args in (("k1", "0", "1000", "KEYS", "a"), ("k1", "0", "1000", "FOO"),
                 ("k1", "0", "1000", "AUTH"), ("k1", "0", "1000", "AUTH2", "u"),
                 ("k1", "x", "1000"), ("k1", "0", "x"), ("k1", "0", "1000", "COPY", "REPLACE", "x"),
                 ("", "0", "1000", "KEYS"), ("missing", "0", "1000")):
        s.migrate(*args)
    # The target's own errors, one reply however many keys.
    s.migrate("k1", "0", "1000")
    s.migrate("k1", "0", "1000", "AUTH", "bad")
    s.migrate("", "0", "1000", "AUTH2", "nosuch", "bad", "KEYS", "k1", "k3")
    s.both("EXISTS", "k1", "k3")
    report.equal(s.migrate("k1", "0", "1000", "AUTH", PASSWORD), b"+OK\r\n", "MIGRATE moves k1")
    s.both("EXISTS", "k1")
    s.on_targets("GET", "k1")
    s.migrate("k1", "0", "1000", "AUTH", PASSWORD)  # +NOKEY
    s.migrate("k3", "0", "1000", "COPY", "AUTH", PASSWORD)
    s.both("GET", "k3")
    s.migrate("k3", "0", "1000", "COPY", "AUTH", PASSWORD)  # BUSYKEY
    s.both("SET", "k3", "v3b")
    s.migrate("k3", "0", "1000", "COPY", "REPLACE", "AUTH2", "default", PASSWORD)
    s.on_targets("GET", "k3")
    # Several keys, one missing, one with a TTL, into database 3.
    s.migrate("", "3", "1000", "AUTH", PASSWORD, "KEYS", "l1", "k2", "missing", "h1")
    s.both("EXISTS", "l1", "k2", "h1")
    s.on_targets("SELECT", "3")
    s.on_targets("LRANGE", "l1", "0", "-1")
    s.on_targets("HGETALL", "h1")
    for c in s.targets:
        ttl = int(c.call("PTTL", "k2")[1:-2])
        report.check(90000 < ttl <= 100000, "the TTL came along (%d ms)" % ttl)
    s.on_targets("SELECT", "0")
    # The cached connection is killed on the target: the next MIGRATE fails on it, retries once
    # on a new connection (which selects the database again) and moves the key.
    for c in s.targets:
        c.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    time.sleep(0.1)
    report.equal(s.migrate("z1", "3", "1000", "AUTH", PASSWORD), b"+OK\r\n",
                 "MIGRATE after the target closed the cached connection")
    s.on_targets("SELECT", "3")
    s.on_targets("ZRANGE", "z1", "0", "-1", "WITHSCORES")
    s.on_targets("SELECT", "0")
    s.both("DBSIZE")


def silent_target():
    """A listener that accepts and reads but never answers; returns (port, stop)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    conns = []
    stop = threading.Event()

    def run():
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                conns.append(conn)
            except OSError:
                pass
        for c in conns:
            c.close()
        srv.close()

    threading.Thread(target=run, daemon=True).start()
    return srv.getsockname()[1], stop


def check_unusable_targets(report, s):
    for c in s.sources:
        c.call("SET", "u1", "v")
    refused = harness.free_port()
    s.migrate("u1", "0", "200", port=refused)
    # A port no address has: the lookup fails, nothing is sent anywhere.
    s.migrate("u1", "0", "200", port="-5")
    port, stop = silent_target()
    try:
        start = time.time()
        s.migrate("u1", "0", "300", port=port)
        elapsed = time.time() - start
        report.check(0.5 < elapsed < 5, "both sources waited their timeout (%.2f s)" % elapsed)
    finally:
        stop.set()
    s.both("EXISTS", "u1")


def check_observability(report, s):
    for c in s.sources:
        c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
        c.call("SLOWLOG", "RESET")
        c.call("SET", "o1", "v")
        c.call("SET", "o2", "v")
    s.migrate("o1", "0", "1000", "COPY", "AUTH", PASSWORD)
    s.migrate("", "0", "1000", "COPY", "AUTH2", "default", PASSWORD, "KEYS", "o1", "o2")
    shown = []
    for c in s.sources:
        entries = harness.parse_reply(c.call("SLOWLOG", "GET", "10"))
        # The target's port (each side has its own) left out.
        shown.append([e[3][:2] + e[3][3:] for e in entries if e[3][0].upper() == b"MIGRATE"])
        c.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    report.equal(shown[0], shown[1], "SLOWLOG arguments of MIGRATE (passwords redacted)")
    report.check(any(b"(redacted)" in args for args in shown[0]), "passwords redacted", repr(shown))
    counts = []
    for c in s.sources:
        text = harness.parse_reply(c.call("INFO", "stats")).decode()
        counts.append([line for line in text.split("\r\n") if line.startswith("migrate_cached")])
    report.equal(counts[0], counts[1], "INFO migrate_cached_sockets")


def check_aof(report, binary, target):
    node = harness.ServerProcess(binary, name="migrate-aof",
                                 extra_args=["--appendonly", "yes", "--appendfsync", "always"])
    with node:
        with harness.RespClient(node.port) as c:
            c.call("SET", "a1", "x")
            c.call("SET", "a2", "y")
            report.equal(c.call("MIGRATE", "127.0.0.1", str(target.port), "a1", "0", "1000",
                                "AUTH", PASSWORD), b"+OK\r\n", "MIGRATE with appendonly")
            report.equal(c.call("MIGRATE", "127.0.0.1", str(target.port), "a2", "0", "1000",
                                "COPY", "REPLACE", "AUTH", PASSWORD), b"+OK\r\n",
                         "MIGRATE COPY with appendonly")
        node.stop()
        log = b""
        for root, _, files in os.walk(node.dir):
            for f in files:
                if "appendonly" in f or f.endswith(".aof"):
                    with open(os.path.join(root, f), "rb") as fh:
                        log += fh.read()
        report.check(b"MIGRATE" not in log.upper(), "the file holds no MIGRATE")
        report.check(b"DEL\r\n$2\r\na1" in log, "the file holds DEL a1", repr(log[-200:]))
        node.start()
        with harness.RespClient(node.port) as c:
            report.equal(c.call("EXISTS", "a1", "a2"), b":1\r\n", "after a restart a1 is gone")


def check_cluster(report, binary, target):
    with harness.Cluster(binary, 3, name="migrate") as cluster:
        names = {}
        for i in range(300):
            key = "m%d" % i
            owner = harness.parse_reply(
                harness.RespClient(cluster.ports[0]).call("CLUSTER", "OWNER", key))
            names.setdefault(owner, []).append(key)
            if len(names) == 3 and all(len(v) >= 2 for v in names.values()):
                break
        report.equal(len(names), 3, "keys of every node")
        keys = [k for v in names.values() for k in v[:2]]
        with harness.RespClient(cluster.ports[1]) as c:
            for k in keys:
                c.call("SET", k, "val-" + k)
            for k in keys:
                report.equal(c.call("MIGRATE", "127.0.0.1", str(target.port), k, "5", "1000",
                                    "AUTH", PASSWORD), b"+OK\r\n", "MIGRATE %s through node 2" % k)
            report.equal(c.call("EXISTS", *keys), b":0\r\n", "the keys left the cluster")
            owners = list(names.values())
            c.call("SET", owners[0][0], "x")
            c.call("SET", owners[1][0], "y")
            got = c.call("MIGRATE", "127.0.0.1", str(target.port), "", "5", "1000", "AUTH",
                         PASSWORD, "KEYS", owners[0][0], owners[1][0])
            report.check(got.startswith(b"-CROSSSLOT"), "KEYS of two owners: CROSSSLOT", got)
            same = owners[2]
            for k in same:
                c.call("SET", k, "again")
            report.equal(c.call("MIGRATE", "127.0.0.1", str(target.port), "", "5", "1000",
                                "REPLACE", "AUTH", PASSWORD, "KEYS", *same), b"+OK\r\n",
                         "KEYS of one owner, relayed there")
        with authed(target.port) as t:
            t.call("SELECT", "5")
            for k in keys:
                want = b"again" if k in same else ("val-" + k).encode()
                report.equal(harness.parse_reply(t.call("GET", k)), want, "target has %s" % k)


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_migrate")
    with harness.ServerProcess(args.server, name="migrate-src") as ours, \
            harness.start_oracle() as redis, \
            start_target("target-ours") as ours_target, \
            start_target("target-redis") as redis_target:
        s = Sides(report, ours, redis, ours_target, redis_target)
        check_differential(report, s)
        check_unusable_targets(report, s)
        check_observability(report, s)
        check_aof(report, args.server, ours_target)
        check_cluster(report, args.server, ours_target)
        report.check(ours.alive(), "ringkv still running", ours.log())
    report.finish()


if __name__ == "__main__":
    main()
