#!/usr/bin/env python3
"""Lazy freeing, differential against redis-server 7.0.15: UNLINK (and DEL under
lazyfree-lazy-user-del) frees a value in the background when freeing it takes more than 64
allocations — a hash table set or hash, a skip-list sorted set, a list of many nodes, a stream of
many nodes or with consumer groups — and at once otherwise; FLUSHALL/FLUSHDB ASYNC (and without
an option under lazyfree-lazy-user-flush) free every key in the background; values a write
replaces (lazyfree-lazy-server-del) and keys whose TTL passed (lazyfree-lazy-expire) too. Each
step is compared by its reply and by INFO's lazyfreed_objects once nothing is pending; the
lazyfree-* parameters by CONFIG GET and SET. A key maxmemory evicts under lazyfree-lazy-eviction
is checked on ringkv alone (the two servers account memory differently).
"""

import time

import harness
import main_support

PARAMS = ["lazyfree-lazy-user-del", "lazyfree-lazy-user-flush", "lazyfree-lazy-server-del",
          "lazyfree-lazy-expire", "lazyfree-lazy-eviction"]


def lazyfreed(port):
    """lazyfreed_objects once no lazy free is pending (or after 10 s)."""
    deadline = time.time() + 10 * harness.timeout_scale()
    while True:
        fields = harness.info_fields(port, "INFO", "memory")
        if fields.get("lazyfree_pending_objects") == "0" or time.time() > deadline:
            return fields.get("lazyfreed_objects")
        time.sleep(0.02)


def members(prefix, n):
    return ["%s%d" % (prefix, i) for i in range(n)]


def pairs(n):
    return [x for i in range(n) for x in (str(i), "m%d" % i)]


# (what, the commands that make the value, the command that deletes it)
VALUES = [
    ("an intset", [["SADD", "v", *range(100)]], ["UNLINK", "v"]),
    ("a hash table set of 1000", [["SADD", "v", *members("m", 1000)]], ["UNLINK", "v"]),
    ("a hash table set of 60", [["SADD", "v", *members("m", 60)]], ["UNLINK", "v"]),
    ("DEL of a hash table set", [["SADD", "v", *members("m", 1000)]], ["DEL", "v"]),
    ("a list of few nodes", [["RPUSH", "v", *range(20000)]], ["UNLINK", "v"]),
    ("a list of many nodes", [["RPUSH", "v", *members("element-", 2000)]] * 60,
     ["UNLINK", "v"]),
    ("a skip-list sorted set", [["ZADD", "v", *pairs(200)]], ["UNLINK", "v"]),
    ("a listpack sorted set", [["ZADD", "v", *pairs(100)]], ["UNLINK", "v"]),
    ("a listpack hash", [["HSET", "v", *pairs(200)]], ["UNLINK", "v"]),
    ("a hash table hash", [["HSET", "v", *pairs(1000)]], ["UNLINK", "v"]),
    ("a stream of few nodes", [["XADD", "v", "%d-1" % i, "f", "x"] for i in range(1, 500)],
     ["UNLINK", "v"]),
    ("a stream of many nodes", [["XADD", "v", "%d-1" % i, "f", "x"] for i in range(1, 8000)],
     ["UNLINK", "v"]),
    ("a stream with groups",
     [["XADD", "v", "%d-1" % i, "f", "x"] for i in range(1, 30)] +
     [["XGROUP", "CREATE", "v", "g%d" % g, "0"] for g in range(3)] +
     [["XREADGROUP", "GROUP", "g0", "c", "STREAMS", "v", ">"]], ["UNLINK", "v"]),
    ("a string", [["SET", "v", "x" * 10000]], ["UNLINK", "v"]),
]


def observe(port):
    seen = []
    with harness.RespClient(port) as c:
        c.call("FLUSHALL", "SYNC")
        for name in PARAMS:
            seen.append(("CONFIG GET " + name, c.call("CONFIG", "GET", name)))
        seen.append(("at start", lazyfreed(port)))
        for what, make, delete in VALUES:
            for command in make:
                c.call(*command)
            seen.append((what, (c.call(*delete), lazyfreed(port))))
        for n in (10, 100):
            for i in range(n):
                c.call("SET", "k%d" % i, "v")
            seen.append(("FLUSHALL ASYNC of %d keys" % n, (c.call("FLUSHALL", "ASYNC"),
                                                             lazyfreed(port))))
        c.call("SET", "k", "v")
        seen.append(("FLUSHDB ASYNC", (c.call("FLUSHDB", "ASYNC"), lazyfreed(port))))
        seen.append(("FLUSHALL bad", c.call("FLUSHALL", "LATER")))
        for name in PARAMS:
            seen.append(("CONFIG SET %s yes" % name, c.call("CONFIG", "SET", name, "yes")))
        seen.append(("CONFIG SET bad", c.call("CONFIG", "SET", PARAMS[0], "maybe")))
        c.call("SADD", "v", *members("m", 1000))
        seen.append(("DEL, lazy", (c.call("DEL", "v"), lazyfreed(port))))
        for i in range(5):
            c.call("SET", "k%d" % i, "v")
        seen.append(("FLUSHALL, lazy", (c.call("FLUSHALL"), lazyfreed(port))))
        c.call("SET", "k", "v")
        seen.append(("FLUSHALL SYNC", (c.call("FLUSHALL", "SYNC"), lazyfreed(port))))
        c.call("SADD", "v", *members("m", 1000))
        seen.append(("SET over a big set", (c.call("SET", "v", "x"), lazyfreed(port))))
        c.call("SADD", "v", *members("m", 1000))
        c.call("SADD", "w", *members("n", 1000))
        seen.append(("RENAME over a big set", (c.call("RENAME", "v", "w"), lazyfreed(port))))
        c.call("DEL", "w")
        c.call("SADD", "v", *members("m", 1000))
        c.call("PEXPIRE", "v", "1")
        time.sleep(0.3)
        seen.append(("a big set expired", (c.call("EXISTS", "v"), lazyfreed(port))))
        for name in PARAMS:
            seen.append(("CONFIG SET %s no" % name, c.call("CONFIG", "SET", name, "no")))
        seen.append(("CONFIG GET lazyfree-*", sorted(
            harness.parse_reply(c.call("CONFIG", "GET", "lazyfree-*")))))
    return seen


def check_eviction(report, binary):
    """ringkv alone: a big set maxmemory evicts under lazyfree-lazy-eviction is freed lazily."""
    with harness.ServerProcess(binary, name="ringkv") as server, \
            harness.RespClient(server.port) as c:
        c.call("SADD", "big", *members("m", 5000))
        before = int(lazyfreed(server.port))
        c.call("CONFIG", "SET", "lazyfree-lazy-eviction", "yes")
        c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
        c.call("CONFIG", "SET", "maxmemory", "1")
        c.call("SET", "small", "x")
        report.equal(c.call("EXISTS", "big"), b":0\r\n", "eviction: the big set is evicted")
        report.equal(int(lazyfreed(server.port)) - before, 1,
                     "eviction: and freed in the background")
        report.check(server.alive(), "ringkv still running", server.log())


def main():
    main_support.run_checks("lazyfree", __doc__, main_support.oracle_check(observe),
                            check_eviction)


if __name__ == "__main__":
    main()
