#!/usr/bin/env python3
"""maxmemory and eviction: which keys each maxmemory-policy evicts, the OOM refusals (byte for
byte against redis-server, MULTI/EXEC included), how long memory stayed over the limit (INFO's
eviction exceeded times, against redis-server's), evicted_keys, WATCH seeing an eviction, OBJECT
FREQ/IDLETIME under LFU, relayed writes evicting on the node that owns the key in a 3-node
cluster, eviction with replication-factor 2 keeping every key's copies whole, and used_memory against the process's RSS growth for datasets of every type."""

import sys
import time

import harness
import main_support
import replication_support as repl

VALUE = "v" * 1000


def info_int(port, name):
    return int(harness.info_fields(port, "INFO", "everything")[name])


def pipeline(c, commands, batch=1000):
    """Sends commands in batches and returns their raw replies."""
    replies = []
    for i in range(0, len(commands), batch):
        chunk = commands[i : i + batch]
        c.send(b"".join(harness.encode_command(*cmd) for cmd in chunk))
        replies += [c.read() for _ in chunk]
    return replies


def set_limit_at_current(c, port, policy, extra=0):
    """Sets maxmemory to the node's used_memory now (plus `extra` bytes) under `policy`."""
    c.call("CONFIG", "SET", "maxmemory-policy", policy)
    c.call("CONFIG", "SET", "maxmemory", str(info_int(port, "used_memory") + extra))


def present(c, keys):
    return [k for k, r in zip(keys, pipeline(c, [("EXISTS", k) for k in keys])) if r == b":1\r\n"]


def check_oom_texts(report, binary):
    """noeviction: OOM refusals and what still runs, compared with redis-server."""
    with harness.ServerProcess(binary, name="ringkv") as srv, harness.start_oracle() as oracle:
        replies = {}
        for name, port in (("ringkv", srv.port), ("redis", oracle.port)):
            with harness.RespClient(port) as a, harness.RespClient(port) as b:
                got = []
                got.append(a.call("SET", "k", "hello"))
                got.append(a.call("RPUSH", "list", "x"))
                # A transaction queued under the limit, refused at EXEC when over it.
                got.append(a.call("MULTI"))
                got.append(a.call("SET", "t", "1"))
                got.append(b.call("CONFIG", "SET", "maxmemory", "1"))
                got.append(a.call("EXEC"))
                # Over the limit: denyoom commands are refused, others still run.
                for cmd in (("SET", "k2", "x"), ("APPEND", "k", "x"), ("RPUSH", "list", "y"),
                            ("INCR", "n"), ("GET", "k"), ("LLEN", "list"), ("EXPIRE", "k", "100"),
                            ("DEL", "list"), ("EXISTS", "list"), ("PING",)):
                    got.append(a.call(*cmd))
                # In MULTI every queued command is refused (even GET); EXEC then aborts.
                got.append(a.call("MULTI"))
                got.append(a.call("GET", "k"))
                got.append(a.call("EXEC"))
                got.append(a.call("MULTI"))
                got.append(a.call("DISCARD"))
                got.append(b.call("CONFIG", "SET", "maxmemory", "0"))
                got.append(a.call("SET", "k3", "x"))
                replies[name] = got
        report.equal(replies["ringkv"], replies["redis"], "noeviction OOM replies match redis")
        report.check(b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"
                     in replies["ringkv"], "the OOM error text is Redis's")

        # OBJECT FREQ and IDLETIME across policy changes (a non-integer value: Redis shares
        # small integers, whose counters are meaningless).
        replies = {}
        for name, port in (("ringkv", srv.port), ("redis", oracle.port)):
            with harness.RespClient(port) as c:
                got = [c.call("OBJECT", "FREQ", "k")]
                got.append(c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"))
                got.append(c.call("SET", "f", "hello"))
                got.append(c.call("OBJECT", "FREQ", "f"))
                got.append(c.call("GET", "f"))
                got.append(c.call("OBJECT", "FREQ", "f"))  # 5 → 6 always (p = 1 at the start)
                got.append(c.call("OBJECT", "IDLETIME", "f"))
                got.append(c.call("OBJECT", "FREQ", "nokey"))
                got.append(c.call("CONFIG", "SET", "maxmemory-policy", "volatile-lru"))
                got.append(c.call("OBJECT", "FREQ", "f"))
                got.append(c.call("OBJECT", "IDLETIME", "f"))
                for param in ("maxmemory", "maxmemory-policy", "maxmemory-samples"):
                    got.append(c.call("CONFIG", "GET", param))
                got.append(c.call("CONFIG", "SET", "maxmemory-policy", "lru"))
                got.append(c.call("CONFIG", "SET", "maxmemory-samples", "0"))
                got.append(c.call("CONFIG", "SET", "maxmemory-samples", "10"))
                got.append(c.call("CONFIG", "SET", "maxmemory", "10mb"))
                got.append(c.call("CONFIG", "GET", "maxmemory"))
                got.append(c.call("CONFIG", "GET", "lfu-log-factor"))
                got.append(c.call("CONFIG", "GET", "lfu-decay-time"))
                got.append(c.call("CONFIG", "SET", "lfu-decay-time", "-1"))
                replies[name] = got
        # After the switch back to LRU, IDLETIME reads the LFU bits as an LRU clock: a value
        # that moves with the clock's second, so it may differ by a tick between the two.
        idle = {name: int(got.pop(10)[1:-2]) for name, got in replies.items()}
        report.check(abs(idle["ringkv"] - idle["redis"]) <= 2,
                     f"IDLETIME of LFU bits read as LRU within 2 s of redis's {idle}")
        report.equal(replies["ringkv"], replies["redis"], "OBJECT FREQ/IDLETIME and memory "
                     "parameters match redis")
        info = harness.info_fields(srv.port, "INFO", "memory")
        report.equal((info.get("maxmemory"), info.get("maxmemory_human"),
                      info.get("maxmemory_policy")), ("10485760", "10.00M", "volatile-lru"),
                     "INFO memory shows the limit and the policy")
        ratio = float(info.get("mem_fragmentation_ratio", "0"))
        report.check(abs(ratio - int(info["used_memory_rss"]) / int(info["used_memory"])) < 0.1,
                     "INFO mem_fragmentation_ratio is RSS over used_memory (%.2f)" % ratio)


def exceeded_times(port):
    """INFO's total_eviction_exceeded_time and current_eviction_exceeded_time (ms)."""
    info = harness.info_fields(port, "INFO", "stats")
    return (int(info["total_eviction_exceeded_time"]),
            int(info["current_eviction_exceeded_time"]))


def check_exceeded_time(report, binary):
    """How long used memory stayed over maxmemory, timed as redis-server times it: from the first
    command that found it over and could not evict enough (noeviction) to the first that finds it
    under, the INFO command included; CONFIG RESETSTAT clears it. Both servers take the same
    steps; the times are compared within the steps' own timing."""
    seen = {}
    with harness.ServerProcess(binary, name="ringkv") as srv, harness.start_oracle() as oracle:
        for name, port in (("ringkv", srv.port), ("redis", oracle.port)):
            steps = []
            with harness.RespClient(port) as c:
                steps.append(exceeded_times(port))
                c.call("SET", "k", "v")
                c.call("CONFIG", "SET", "maxmemory", "1")
                began = time.monotonic()
                steps.append(c.call("SET", "k2", "v")[:4])
                time.sleep(0.6)
                over = exceeded_times(port)
                c.call("CONFIG", "SET", "maxmemory", "10gb")
                spent = (time.monotonic() - began) * 1000
                after = exceeded_times(port)
                steps.append(c.call("SET", "k3", "v"))
                steps.append(exceeded_times(port) == after)
                c.call("CONFIG", "RESETSTAT")
                steps.append(exceeded_times(port))
                c.call("CONFIG", "SET", "maxmemory", "0")
            report.check(500 <= over[1] <= spent + 50 and over[0] == over[1],
                         "%s: over the limit, current_eviction_exceeded_time counts (%s, %.0f ms "
                         "spent)" % (name, over, spent))
            report.check(after[1] == 0 and 500 <= after[0] <= spent + 50,
                         "%s: back under it, the span is added to the total (%s)" % (name, after))
            seen[name] = steps
    report.equal(seen["ringkv"], seen["redis"], "the eviction-time steps match redis")


def check_policies(report, binary):
    """Each policy on its own server: what goes and what stays."""
    hot = ["key:%05d" % i for i in range(200)]
    cold = ["key:%05d" % i for i in range(200, 2000)]
    fresh = ["new:%05d" % i for i in range(1000)]

    # allkeys-lru keeps what is read; the LRU clock counts seconds, hence the pause.
    with harness.ServerProcess(binary, name="lru") as srv, harness.RespClient(srv.port) as c:
        pipeline(c, [("SET", k, VALUE) for k in hot + cold])
        time.sleep(2.2)
        pipeline(c, [("GET", k) for k in hot])
        set_limit_at_current(c, srv.port, "allkeys-lru")
        replies = pipeline(c, [("SET", k, VALUE) for k in fresh])
        report.check(all(r == b"+OK\r\n" for r in replies), "allkeys-lru: writes evict, not fail")
        kept_hot, kept_cold = len(present(c, hot)), len(present(c, cold))
        report.check(kept_hot >= 190, "allkeys-lru keeps the keys being read (%d/200)" % kept_hot)
        report.check(kept_cold <= 1000, "allkeys-lru evicts idle keys (%d/1800 left)" % kept_cold)
        evicted = info_int(srv.port, "evicted_keys")
        report.check(evicted >= 900, "evicted_keys counts the evictions (%d)" % evicted)
        report.check(info_int(srv.port, "used_memory") <= info_int(srv.port, "maxmemory"),
                     "allkeys-lru: used_memory stays under maxmemory")
        c.call("CONFIG", "RESETSTAT")
        report.equal(info_int(srv.port, "evicted_keys"), 0, "CONFIG RESETSTAT resets evicted_keys")

    # allkeys-lfu keeps the frequently read keys (log factor 0: every read counts).
    with harness.ServerProcess(binary, name="lfu") as srv, harness.RespClient(srv.port) as c:
        c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
        c.call("CONFIG", "SET", "lfu-log-factor", "0")
        pipeline(c, [("SET", k, VALUE) for k in hot + cold])
        for _ in range(10):
            pipeline(c, [("GET", k) for k in hot])
        report.equal(c.call("OBJECT", "FREQ", hot[0]), b":15\r\n", "OBJECT FREQ counts reads")
        set_limit_at_current(c, srv.port, "allkeys-lfu")
        pipeline(c, [("SET", k, VALUE) for k in fresh])
        kept_hot = len(present(c, hot))
        report.check(kept_hot >= 190, "allkeys-lfu keeps the hot keys (%d/200)" % kept_hot)
        report.check(info_int(srv.port, "evicted_keys") >= 900, "allkeys-lfu evicted keys")

    # allkeys-random: gets under the limit, whatever goes.
    with harness.ServerProcess(binary, name="random") as srv, harness.RespClient(srv.port) as c:
        pipeline(c, [("SET", k, VALUE) for k in hot + cold])
        set_limit_at_current(c, srv.port, "allkeys-random")
        pipeline(c, [("SET", k, VALUE) for k in fresh])
        report.check(info_int(srv.port, "evicted_keys") >= 900, "allkeys-random evicted keys")
        report.check(info_int(srv.port, "used_memory") <= info_int(srv.port, "maxmemory"),
                     "allkeys-random: used_memory stays under maxmemory")

    # volatile-*: never a key without a TTL; OOM once only such keys remain.
    volatile = ["ttl:%05d" % i for i in range(500)]
    for policy in ("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"):
        with harness.ServerProcess(binary, name=policy) as srv, \
                harness.RespClient(srv.port) as c:
            pipeline(c, [("SET", k, VALUE) for k in cold])
            # TTLs from 1000 s up, one second apart: volatile-ttl takes the first ones first.
            pipeline(c, [("SET", k, VALUE, "EX", str(1000 + i)) for i, k in enumerate(volatile)])
            set_limit_at_current(c, srv.port, policy)
            replies = pipeline(c, [("SET", k, VALUE) for k in fresh[:300]])
            report.check(all(r == b"+OK\r\n" for r in replies),
                         "%s: writes evict keys with a TTL" % policy)
            report.equal(len(present(c, cold + fresh[:300])), 1800 + 300,
                         "%s never evicts keys without a TTL" % policy)
            left = present(c, volatile)
            report.check(len(left) < 500, "%s evicted keys with a TTL" % policy)
            if policy == "volatile-ttl":
                # Exact eviction would take precisely the len(gone) shortest TTLs; at random,
                # only len(gone)/500 of them would be among those.
                gone = set(volatile) - set(left)
                early = len(gone & set(volatile[: len(gone)]))
                report.check(early >= 0.8 * len(gone),
                             "volatile-ttl evicts the shortest TTLs first (%d of the %d shortest)"
                             % (early, len(gone)))
            replies = pipeline(c, [("SET", k, VALUE) for k in fresh[300:]])
            report.check(replies[-1].startswith(b"-OOM "),
                         "%s: OOM once only keys without a TTL remain" % policy, replies[-1])
            report.equal(present(c, volatile), [], "%s evicted every key with a TTL" % policy)
            report.equal(c.call("GET", cold[0]), b"$1000\r\n" + VALUE.encode() + b"\r\n",
                         "%s: GET still works over the limit" % policy)
            report.equal(pipeline(c, [("DEL", k) for k in cold[:100]]), [b":1\r\n"] * 100,
                         "%s: DEL still works over the limit" % policy)
            report.equal(c.call("SET", "after-del", "x"), b"+OK\r\n",
                         "%s: writes work again once DEL freed memory" % policy)

    # WATCH sees an evicted key as changed.
    with harness.ServerProcess(binary, name="watch") as srv, \
            harness.RespClient(srv.port) as a, harness.RespClient(srv.port) as b:
        pipeline(a, [("SET", k, VALUE) for k in cold[:200]])
        a.call("SET", "watched", VALUE, "EX", "1000")
        a.call("WATCH", "watched")
        set_limit_at_current(b, srv.port, "volatile-ttl", extra=-500)
        b.call("SET", "trigger", "x")
        a.call("MULTI")
        a.call("SET", "other", "y")
        report.equal(a.call("EXEC"), b"*-1\r\n", "WATCH: an evicted key aborts EXEC")
        report.equal(a.call("EXISTS", "watched"), b":0\r\n", "the watched key was evicted")


def check_cluster(report, binary):
    """Relayed writes evict on the node that stores the key."""
    with harness.Cluster(binary, 3, name="mm") as cluster:
        ports = cluster.ports
        keys = ["ck:%05d" % i for i in range(3000)]
        limits = {}
        for port in ports[1:]:
            with harness.RespClient(port) as c:
                set_limit_at_current(c, port, "allkeys-random", extra=500 * 1000)
                limits[port] = info_int(port, "maxmemory")
        with harness.RespClient(ports[0]) as c:
            replies = pipeline(c, [("SET", k, VALUE) for k in keys])
        report.check(all(r == b"+OK\r\n" for r in replies), "cluster writes through node 1 succeed")
        for port in ports[1:]:
            report.check(info_int(port, "evicted_keys") > 0,
                         "node %d evicted keys written through node 1" % port)
            report.check(info_int(port, "used_memory") <= limits[port],
                         "node %d stays under its maxmemory" % port)
        report.equal(info_int(ports[0], "evicted_keys"), 0, "node 1 (no limit) evicted nothing")
        # A noeviction owner refuses a relayed write with Redis's OOM text.
        with harness.RespClient(ports[1]) as c:
            c.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
            c.call("CONFIG", "SET", "maxmemory", "1")
        with harness.RespClient(ports[0]) as c:
            key = next(k for k in ("k%d" % i for i in range(1000))
                       if harness.parse_reply(c.call("CLUSTER", "OWNER", k)).decode()
                       == cluster.addresses[1])
            report.equal(c.call("SET", key, "x"),
                         b"-OOM command not allowed when used memory > 'maxmemory'.\r\n",
                         "a relayed write to a full noeviction owner gets OOM")


def check_replicated(report, binary):
    """With replication-factor 2 a node evicts only keys it is the primary of, and its replicas
    drop their copies as its stream tells them: every key left has both its copies, and no copy
    outlives its key. (Before, replicas evicted copies by themselves: keys held by their primary
    alone, which a failover of it would lose.) For an LRU, an LFU and the random policy."""
    for policy in ("allkeys-lru", "allkeys-lfu", "allkeys-random"):
        with harness.Cluster(binary, 3, name="mm-repl",
                             cluster_options={"replication-factor": 2}) as cluster:
            ports = cluster.ports
            repl.settle(ports)
            for port in ports:
                with harness.RespClient(port) as c:
                    c.call("CONFIG", "SET", "maxmemory-policy", policy)
                    c.call("CONFIG", "SET", "maxmemory", "20mb")
            keys = ["rk:%05d" % i for i in range(8000)]
            with harness.RespClient(ports[0], timeout=60) as c:
                replies = pipeline(c, [("SET", k, "v" * 5000) for k in keys], batch=500)
            report.check(all(r == b"+OK\r\n" for r in replies),
                         "%s: writes through node 1 succeed" % policy,
                         repr([r for r in replies if r != b"+OK\r\n"][:3]))
            report.check(all(info_int(p, "evicted_keys") > 0 for p in ports),
                         "%s: every node evicted keys" % policy)
            repl.settle(ports)
            repl.check_copies(report, ports, keys, 2, policy)


SHAPES = {
    "string 16B": lambda n: [("SET", "key:%012d" % i, "v" * 16) for i in range(n * 20)],
    "string 100B": lambda n: [("SET", "key:%012d" % i, "v" * 100) for i in range(n * 10)],
    "string 1KB": lambda n: [("SET", "key:%012d" % i, "v" * 1000) for i in range(n * 2)],
    "string 100KB": lambda n: [("SET", "key:%012d" % i, "v" * 100000) for i in range(n // 50)],
    "integer": lambda n: [("SET", "key:%012d" % i, str(i * 7919)) for i in range(n * 20)],
    "hash small": lambda n: [("HSET", "h:%09d" % i) + sum((("f%d" % f, "value%06d" % f)
                                                          for f in range(5)), ())
                             for i in range(n * 4)],
    "hash big": lambda n: [("HSET", "H:%d" % (j // 100)) + sum((("field%08d" % f, "v%010d" % f)
                                                               for f in range(j, j + 100)), ())
                           for j in range(0, n * 10, 100)],
    "list small": lambda n: [("RPUSH", "l:%09d" % i) + tuple("elem%05d" % e for e in range(5))
                             for i in range(n * 4)],
    "list big": lambda n: [("RPUSH", "L:%d" % (j // 2000)) +
                           tuple("element%010d" % e for e in range(j, j + 100))
                           for j in range(0, n * 20, 100)],
    "set small": lambda n: [("SADD", "s:%09d" % i) + tuple("member%05d" % e for e in range(5))
                            for i in range(n * 4)],
    "set big": lambda n: [("SADD", "S:%d" % (j // 1000)) +
                          tuple("member%010d" % e for e in range(j, j + 100))
                          for j in range(0, n * 10, 100)],
    "zset small": lambda n: [("ZADD", "z:%09d" % i) + sum(((str(e), "member%05d" % e)
                                                          for e in range(5)), ())
                             for i in range(n * 4)],
    "zset big": lambda n: [("ZADD", "Z:%d" % (j // 1000)) + sum(((str(e * 1.5), "m%010d" % e)
                                                                for e in range(j, j + 100)), ())
                           for j in range(0, n * 10, 100)],
}


def check_used_memory(report, binary, n=10000):
    """used_memory growth within 10% of RSS growth, for each shape of dataset."""
    print("%-13s %12s %12s %6s" % ("dataset", "used_memory+", "rss+", "ratio"))
    distortion = harness.rss_distortion(binary)
    if distortion:
        print("ratios not checked: the server %s" % distortion)
    for name, make in SHAPES.items():
        with harness.ServerProcess(binary, name="mem") as srv, \
                harness.RespClient(srv.port, timeout=60) as c:
            used0 = info_int(srv.port, "used_memory")
            rss0 = srv.rss_kb() * 1024
            pipeline(c, make(n))
            used = info_int(srv.port, "used_memory") - used0
            rss = srv.rss_kb() * 1024 - rss0
        ratio = used / rss if rss > 0 else 0
        print("%-13s %12d %12d %6.3f" % (name, used, rss, ratio), flush=True)
        report.check(distortion or 0.9 <= ratio <= 1.1, "used_memory tracks RSS for %s (%.3f)" % (name, ratio))


def main():
    main_support.run_checks("test_maxmemory", __doc__, check_oom_texts, check_exceeded_time,
                            check_policies, check_cluster, check_replicated, check_used_memory)


if __name__ == "__main__":
    sys.exit(main())
