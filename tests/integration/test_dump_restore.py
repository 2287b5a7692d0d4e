#!/usr/bin/env python3
"""DUMP and RESTORE against redis-server 7.0.15, in both directions.

For many generated keys of every type and size (both encodings of each type, integers of every
width, empty and binary strings, LZF-compressible strings, TTLs):
1. DUMP from redis-server, RESTORE into ringkv: every value, OBJECT ENCODING and TTL must equal
   redis-server's.
2. DUMP from ringkv, RESTORE into a fresh redis-server: the same; payloads of values whose layout
   does not depend on hash-table order must be byte-identical to redis-server's own DUMP.
3. Error replies (bad payloads, checksum, version, malformed values with a valid checksum,
   BUSYKEY, TTLs, IDLETIME/FREQ, syntax, arity) byte for byte against redis-server, and the access
   bits IDLETIME and FREQ set.
4. ringkv with appendonly yes: RESTOREd keys (relative and absolute TTLs, REPLACE) survive a
   restart with the same values and expiry times.
   RESTORE wakes blocked clients and fails transactions that WATCH the key.
5. A 3-node cluster: RESTORE through one node of keys owned by each node, DUMP through another.
"""

import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import redis  # noqa: E402

# Redis's crc64 (Jones polynomial, reflected), to build payloads with a valid checksum.
_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x95AC9329AC4BC9B5 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc64(data):
    crc = 0
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def with_footer(value, version=10):
    body = value + struct.pack("<H", version)
    return body + struct.pack("<Q", crc64(body))


def generate(r, rng):
    """Creates keys of every type, size and encoding on `r`; returns their names."""
    keys = []

    def key(name):
        keys.append(name)
        return name

    ints = [0, 1, -1, 127, -128, 128, 255, -129, 32767, -32768, 40000, -40000, 2**31 - 1, -(2**31),
            2**31, 2**40, 2**63 - 1, -(2**63)]
    for i, v in enumerate(ints):
        r.set(key("str:int:%d" % i), str(v))
    for name, value in [("empty", b""), ("bin", bytes(range(256))), ("nonint", b"007"),
                        ("plus", b"+5"), ("float", b"3.14"), ("e44", b"e" * 44), ("r45", b"r" * 45),
                        ("lzf", b"abc" * 1000), ("big", os.urandom(3000)),
                        ("lzfbin", b"\x00\xff" * 500 + os.urandom(10))]:
        r.set(key("str:" + name), value)
    r.set(key("str:ttl"), "v", px=500000)
    r.set(key("str:ttlint"), "12", ex=1000)
    # Lists: one node, many nodes, large elements, integers of every listpack width.
    for n in (1, 10, 200, 5000):
        r.rpush(key("list:%d" % n), *[str(rng.randrange(-10**6, 10**6)) if i % 2 else "e%d" % i
                                      for i in range(n)])
    r.rpush(key("list:ints"), *[str(v) for v in ints])
    r.rpush(key("list:bigelems"), *[os.urandom(rng.randrange(3000, 9000)) for _ in range(6)])
    r.rpush(key("list:lzf"), *["x" * 100] * 50)
    r.rpush(key("list:mixed"), b"", b"a" * 63, b"b" * 64, b"c" * 4095, b"d" * 4096, "12",
            "-4096", "4095", "-4097", "8388607", "-8388609")
    r.pexpire("list:10", 900000)
    # Interior quicklist nodes kept LZF-compressed in memory are saved as LZF blobs.
    r.config_set("list-compress-depth", 1)
    r.rpush(key("list:compressed"),
            *["item %d of a compressible list" % (i % 50) for i in range(3000)])
    r.config_set("list-compress-depth", 0)
    # Sets: intsets of each width, an intset over the entry limit, strings.
    r.sadd(key("set:int16"), *range(-50, 50))
    r.sadd(key("set:int32"), 1, 70000, -70000)
    r.sadd(key("set:int64"), 1, 2**40, -(2**62))
    r.sadd(key("set:int600"), *range(600))
    r.sadd(key("set:str"), *["m%d" % i for i in range(20)])
    r.sadd(key("set:strbig"), *["member-%d" % i for i in range(2000)])
    r.sadd(key("set:mixed"), 1, 2, "x")
    # Sorted sets: listpack (integer, fractional, infinite scores) and skiplist.
    r.zadd(key("zset:small"), {"a": 1, "b": 2.5, "c": -3, "d": float("inf"), "e": float("-inf"),
                               "f": 0.1, "g": 1e20, "h": -0.0, "i": 2**53})
    r.zadd(key("zset:ints"), {str(i): i * 1000 for i in range(100)})
    r.zadd(key("zset:200"), {"m%d" % i: rng.uniform(-1e6, 1e6) for i in range(200)})
    r.zadd(key("zset:longmember"), {"x" * 100: 1, "y": 2})
    r.zadd(key("zset:big"), {"member:%d" % i: i % 17 for i in range(3000)})
    r.expire("zset:small", 1000)
    # Hashes: listpack, over the entry limit, over the value limit.
    r.hset(key("hash:small"), mapping={"f%d" % i: str(i * 1000) for i in range(10)})
    r.hset(key("hash:mixed"), mapping={"a": "", "1": "2", "neg": "-70000", "s": "x" * 64})
    r.hset(key("hash:600"), mapping={"f%d" % i: "v%d" % i for i in range(600)})
    r.hset(key("hash:longvalue"), mapping={"f": "v" * 65, "g": "1"})
    r.hset(key("hash:bin"), mapping={bytes([0, 1, 2]): bytes(range(200))})
    return keys


def snapshot(r, k):
    """(type, value, encoding) of key `k`, the value in a canonical form."""
    t = r.type(k).decode()
    if t == "string":
        value = r.get(k)
    elif t == "list":
        value = r.lrange(k, 0, -1)
    elif t == "set":
        value = sorted(r.smembers(k))
    elif t == "zset":
        value = r.zrange(k, 0, -1, withscores=True)
    elif t == "hash":
        value = sorted(r.hgetall(k).items())
    else:
        value = None
    return t, value, r.object("encoding", k)


def ttl_ok(got_ms, want_ms):
    if want_ms < 0 or got_ms < 0:
        return got_ms == want_ms
    return abs(got_ms - want_ms) < 2000


def restore(r, k, ttl, payload, *options):
    return r.execute_command("RESTORE", k, ttl, payload, *options)


# Types whose payload layout does not depend on hash-table iteration order.
def deterministic(snap):
    t, _, enc = snap
    return t in ("string", "list") or enc in (b"listpack", b"intset", b"skiplist")


def test_redis_to_ringkv(report, oracle, ring, keys):
    for k in keys:
        payload = oracle.dump(k)
        ttl = oracle.pttl(k)
        report.equal(restore(ring, k, max(ttl, 0), payload), b"OK", "RESTORE %s into ringkv" % k)
        report.equal(snapshot(ring, k), snapshot(oracle, k), "%s restored in ringkv" % k)
        report.check(ttl_ok(ring.pttl(k), ttl), "%s TTL kept (%d vs %d)" % (k, ring.pttl(k), ttl))


def test_ringkv_to_redis(report, oracle, ring, keys):
    fresh = harness.start_oracle("redis-fresh")
    try:
        r2 = redis.Redis(port=fresh.port)
        identical = 0
        for k in keys:
            payload = ring.dump(k)
            ttl = ring.pttl(k)
            report.equal(restore(r2, k, max(ttl, 0), payload), b"OK", "RESTORE %s into redis" % k)
            want = snapshot(oracle, k)
            report.equal(snapshot(r2, k), want, "%s from ringkv restored in redis" % k)
            report.check(ttl_ok(r2.pttl(k), ttl), "%s TTL kept in redis" % k)
            if deterministic(want):
                same = payload == oracle.dump(k)
                identical += same
                report.check(same, "%s: ringkv's DUMP payload is redis-server's byte for byte" % k,
                             "ringkv %r\n      redis  %r" % (payload[:80], oracle.dump(k)[:80]))
        print("byte-identical payloads: %d of %d keys" % (identical, len(keys)), flush=True)
    finally:
        fresh.stop()


def test_errors(report, oracle_port, ring_port):
    with harness.RespClient(oracle_port) as c:
        c.call("SET", "busy", "1")
        c.call("RPUSH", "lst", "a", "b")
        good = harness.parse_reply(c.call("DUMP", "busy"))
        good_list = harness.parse_reply(c.call("DUMP", "lst"))
    with harness.RespClient(ring_port) as c:
        c.call("SET", "busy", "1")
    flipped = bytearray(good)
    flipped[-1] ^= 1
    bad_values = [
        b"\x07\x00",  # unknown type
        b"\x02\x00",  # empty set
        b"\x02\x02\x01a\x01a",  # duplicate member
        b"\x04\x01\x01a",  # truncated hash
        b"\x00\x05ab",  # string longer than the payload
        b"\x00\xc3\x05\x40\x00abc",  # LZF with a bad length
        b"\x12\x01\x02\x05\x10\x00\x00\x00\x01\x00",  # quicklist node with a bad listpack
        b"\x12\x01\x03\x02\x01a",  # unknown container
        b"\x0b\x0c\x03\x00\x00\x00\x01\x00\x00\x00\x01\x02\x03",  # intset width 3
        b"\x10\x07\x07\x00\x00\x00\x01\x00\xff",  # listpack with a wrong count
    ]
    cases = [
        ("DUMP", "nokey"),
        ("DUMP",),
        ("DUMP", "a", "b"),
        ("RESTORE", "k", "0"),
        ("RESTORE", "busy", "0", good),
        ("RESTORE", "busy", "-1", good),
        ("RESTORE", "n", "-1", good),
        ("RESTORE", "n", "abc", good),
        ("RESTORE", "n", "0", b""),
        ("RESTORE", "n", "0", b"short"),
        ("RESTORE", "n", "0", bytes(flipped)),
        ("RESTORE", "n", "0", with_footer(b"\x00\xc0\x01", version=11)),
        ("RESTORE", "n", "0", good, "BOGUS"),
        ("RESTORE", "n", "0", good, "IDLETIME"),
        ("RESTORE", "n", "0", good, "IDLETIME", "-1"),
        ("RESTORE", "n", "0", good, "IDLETIME", "x"),
        ("RESTORE", "n", "0", good, "FREQ", "256"),
        ("RESTORE", "n", "0", good, "FREQ", "-1"),
        ("RESTORE", "n", "0", good, "FREQ", "5", "IDLETIME", "5"),
        ("RESTORE", "n", "0", good, "IDLETIME", "5", "FREQ", "5"),
        ("RESTORE", "n", "0", good, "REPLACE", "REPLACE", "ABSTTL", "IDLETIME", "10"),
        ("RESTORE", "n2", "1", good, "ABSTTL"),
        ("EXISTS", "n", "n2"),
        ("RESTORE", "busy", "0", good_list, "REPLACE"),
        ("TYPE", "busy"),
        ("RESTORE", "busy", "1", good, "REPLACE", "ABSTTL"),
        ("EXISTS", "busy"),
        ("RESTORE", "n3", "0", with_footer(b"\x00\xc0\x01", version=9)),
        ("GET", "n3"),
    ] + [("RESTORE", "bad%d" % i, "0", with_footer(v)) for i, v in enumerate(bad_values)]
    # Access bits: IDLETIME under an LRU policy, FREQ under an LFU one (the other is ignored). A
    # list, not a small integer: Redis shares those objects, and with them their access bits.
    cases += [
        ("RESTORE", "freq0", "0", good_list, "FREQ", "77"),
        ("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"),
        ("RESTORE", "freq", "0", good_list, "FREQ", "77"),
        ("OBJECT", "FREQ", "freq"),
        ("RESTORE", "freq2", "0", good_list, "IDLETIME", "500"),
        ("OBJECT", "FREQ", "freq2"),
        ("CONFIG", "SET", "maxmemory-policy", "noeviction"),
    ]
    with harness.RespClient(oracle_port) as o, harness.RespClient(ring_port) as g:
        for c in (o, g):
            c.call("RESTORE", "idle", "0", good_list, "IDLETIME", "1000")
        idle = [int(harness.parse_reply(c.call("OBJECT", "IDLETIME", "idle"))) for c in (o, g)]
        report.check(abs(idle[0] - idle[1]) <= 1 and 999 <= idle[1] <= 1001,
                     "OBJECT IDLETIME after RESTORE IDLETIME 1000: %r" % idle)
        for case in cases:
            want = o.call(*case)
            got = g.call(*case)
            report.equal(got, want, "reply to %r" % (case[:2] + tuple(
                a[:12] if isinstance(a, bytes) else a for a in case[2:]),))


def test_events(report, oracle, ring_port):
    """RESTORE wakes a client blocked on the key and fails a transaction watching it."""
    payload = oracle.dump("list:10")
    with harness.RespClient(ring_port) as blocked, harness.RespClient(ring_port) as writer:
        blocked.send(harness.encode_command("BLPOP", "bl", "5"))
        time.sleep(0.2)
        report.equal(writer.call("RESTORE", "bl", "0", payload), b"+OK\r\n", "RESTORE bl")
        got = harness.parse_reply(blocked.read())
        report.equal(got[0], b"bl", "a BLPOP blocked on the key is served by RESTORE")
        report.equal(blocked.call("WATCH", "w"), b"+OK\r\n", "WATCH w")
        writer.call("RESTORE", "w", "0", payload)
        blocked.call("MULTI")
        blocked.call("PING")
        report.equal(blocked.call("EXEC"), b"*-1\r\n", "EXEC fails after RESTORE of a watched key")


def test_persistence(report, binary, oracle, keys):
    server = harness.ServerProcess(binary, name="dump-aof")
    server.extra_args += ["--appendonly", "yes", "--appendfsync", "always", "--dir", server.dir]
    server.start()
    try:
        r = redis.Redis(port=server.port)
        before = {}
        for i, k in enumerate(keys):
            payload = oracle.dump(k)
            if i % 3 == 0:
                restore(r, k, 600000, payload)  # relative: logged with the absolute time
            elif i % 3 == 1:
                restore(r, k, int(time.time() * 1000) + 900000, payload, "ABSTTL")
            else:
                r.set(k, "old")
                restore(r, k, 0, payload, "REPLACE")
            before[k] = (snapshot(r, k), r.execute_command("PEXPIRETIME", k))
        time.sleep(1.1)  # a relative TTL replayed as relative would now end a second later
        server.stop()
        server.start()
        r = redis.Redis(port=server.port)
        for k in keys:
            report.equal((snapshot(r, k), r.execute_command("PEXPIRETIME", k)), before[k],
                         "%s survives a restart" % k)
        report.equal(r.dbsize(), len(keys), "no key lost or added by the restart")
    finally:
        server.stop()
        server.cleanup()


def test_cluster(report, binary, oracle, keys):
    with harness.Cluster(binary, 3, name="dump") as cluster:
        clients = [redis.Redis(port=p) for p in cluster.ports]
        owners = {}
        for k in keys:
            owners.setdefault(clients[0].execute_command("CLUSTER", "OWNER", k), []).append(k)
        report.equal(len(owners), 3, "the keys are spread over all 3 nodes")
        for i, k in enumerate(keys):
            payload = oracle.dump(k)
            via, back = clients[i % 3], clients[(i + 1) % 3]
            report.equal(restore(via, k, max(oracle.pttl(k), 0), payload), b"OK",
                         "RESTORE %s through node %d" % (k, i % 3 + 1))
            report.equal(snapshot(back, k), snapshot(oracle, k), "%s read through another node" % k)
            again = back.dump(k)
            report.equal(restore(via, k, 0, again, "REPLACE"), b"OK", "RESTORE REPLACE of %s" % k)
            report.equal(snapshot(back, k), snapshot(oracle, k), "%s after RESTORE REPLACE" % k)
            if deterministic(snapshot(oracle, k)):
                report.equal(back.dump(k), oracle.dump(k), "%s dumps as redis-server does" % k)
        # DBSIZE fans out and sums the nodes: each key counted once means no copies anywhere.
        report.equal(clients[1].dbsize(), len(keys), "each key lives on exactly one node")


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int)
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_dump_restore")
    oracle_proc = harness.start_oracle()
    ring_proc = harness.ServerProcess(args.server, name="dump").start()
    try:
        oracle = redis.Redis(port=oracle_proc.port)
        ring = redis.Redis(port=ring_proc.port)
        keys = generate(oracle, rng)
        test_redis_to_ringkv(report, oracle, ring, keys)
        test_ringkv_to_redis(report, oracle, ring, keys)
        ring.flushall()
        test_errors(report, oracle_proc.port, ring_proc.port)
        test_events(report, oracle, ring_proc.port)
        test_persistence(report, args.server, oracle, keys)
        test_cluster(report, args.server, oracle, keys)
    finally:
        ring_proc.stop()
        oracle_proc.stop()
    report.finish()


if __name__ == "__main__":
    main()
