"""redis-py (Debian's python3-redis, RESP2) against ringkv: string commands, bitmaps and
HyperLogLogs through redis-py's own helpers (bitfield builder included), expiry, pipelines
(transactional and not), and SCAN iteration returning every one of 5 000 keys exactly once.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import redis  # noqa: E402


def check_strings(report, r):
    report.equal(r.ping(), True, "ping")
    report.equal(r.set("s:a", "hello"), True, "set")
    report.equal(r.get("s:a"), b"hello", "get")
    report.equal(r.set("s:a", "x", nx=True), None, "set nx on existing key")
    report.equal(r.set("s:a", "world", xx=True, get=True), b"hello", "set xx get")
    report.equal(r.getset("s:a", "v2"), b"world", "getset")
    report.equal(r.append("s:a", "++"), 4, "append")
    report.equal(r.strlen("s:a"), 4, "strlen")
    report.equal(r.getrange("s:a", 1, -1), b"2++", "getrange")
    report.equal(r.setrange("s:a", 6, "z"), 7, "setrange pads with zero bytes")
    report.equal(r.get("s:a"), b"v2++\x00\x00z", "setrange result")
    report.equal(r.incr("s:n"), 1, "incr new key")
    report.equal(r.incrby("s:n", 41), 42, "incrby")
    report.equal(r.decrby("s:n", 2), 40, "decrby")
    report.equal(r.incrbyfloat("s:n", 0.5), 40.5, "incrbyfloat")
    report.equal(r.mset({"s:m1": "1", "s:m2": b"\x00\xff"}), True, "mset")
    report.equal(r.mget("s:m1", "s:nope", "s:m2"), [b"1", None, b"\x00\xff"], "mget")
    report.equal(r.msetnx({"s:m1": "x", "s:m3": "y"}), False, "msetnx with an existing key")
    report.equal(r.exists("s:m1", "s:m3", "s:m2"), 2, "exists counts")
    report.equal(r.getdel("s:m1"), b"1", "getdel")
    report.equal(r.delete("s:m1", "s:m2", "s:m3"), 1, "delete counts removed keys")
    report.equal(r.type("s:a"), b"string", "type")
    report.equal(r.rename("s:a", "s:b"), True, "rename")
    report.equal(r.get("s:b"), b"v2++\x00\x00z", "renamed value")
    report.equal(r.copy("s:b", "s:c"), True, "copy")
    uni = "ключ 🔑"
    r.set(uni, uni)
    report.equal(r.get(uni), uni.encode(), "unicode key and value")
    big = os.urandom(1 << 20)
    r.set("s:big", big)
    report.equal(r.get("s:big"), big, "1 MiB binary value round-trips")
    try:
        r.incr("s:b")
        report.check(False, "incr on a non-integer raises")
    except redis.ResponseError as e:
        report.equal(str(e), "value is not an integer or out of range", "incr error text")


def check_bits_and_hll(report, r):
    report.equal(r.setbit("b:k", 7, 1), 0, "setbit")
    report.equal(r.setbit("b:k", 7, 1), 1, "setbit returns the previous bit")
    report.equal(r.getbit("b:k", 7), 1, "getbit")
    report.equal(r.get("b:k"), b"\x01", "bits live in the string")
    report.equal(r.append("b:k", b"\xff"), 2, "append to a bitmap")
    report.equal(r.bitcount("b:k"), 9, "bitcount")
    report.equal(r.bitcount("b:k", 1, 1), 8, "bitcount byte range")
    report.equal(r.bitpos("b:k", 1), 7, "bitpos")
    report.equal(r.bitop("NOT", "b:not", "b:k"), 2, "bitop not")
    report.equal(r.get("b:not"), b"\xfe\x00", "bitop result")
    field = r.bitfield("b:f").set("u8", 0, 200).overflow("SAT").incrby("u8", 0, 100).get("i8", 0)
    report.equal(field.execute(), [0, 255, -1], "bitfield builder: set, saturated incrby, get")
    report.equal(r.execute_command("BITFIELD_RO", "b:f", "GET", "u4", 0, "GET", "u4", 4), [15, 15],
                 "bitfield_ro")
    report.equal(r.pfadd("h:a", "x", "y", "z"), 1, "pfadd")
    report.equal(r.pfadd("h:a", "x"), 0, "pfadd of a known element")
    report.equal(r.pfcount("h:a"), 3, "pfcount")
    report.equal(r.pfadd("h:b", *range(1000)), 1, "pfadd many")
    report.check(abs(r.pfcount("h:a", "h:b") - 1003) <= 20, "pfcount of a union")
    report.equal(r.pfmerge("h:m", "h:a", "h:b"), True, "pfmerge")
    report.equal(r.pfcount("h:m"), r.pfcount("h:a", "h:b"), "merged estimate equals the union's")
    report.check(r.get("h:m").startswith(b"HYLL"), "a sketch is a string")
    try:
        r.pfadd("b:k", "x")
        report.check(False, "pfadd on a non-sketch string raises")
    except redis.ResponseError as e:
        report.equal(str(e), "WRONGTYPE Key is not a valid HyperLogLog string value.",
                     "pfadd on a non-sketch string: Redis's message")


def check_expiry(report, r):
    r.set("e:a", "v", ex=1000)
    ttl = r.ttl("e:a")
    report.check(998 <= ttl <= 1000, "ttl after set ex", "ttl %r" % ttl)
    pttl = r.pttl("e:a")
    report.check(998000 <= pttl <= 1000000, "pttl after set ex", "pttl %r" % pttl)
    report.equal(r.persist("e:a"), True, "persist")
    report.equal(r.ttl("e:a"), -1, "ttl after persist")
    report.equal(r.ttl("e:missing"), -2, "ttl of a missing key")
    report.equal(r.expireat("e:a", 4102444800), True, "expireat")
    report.equal(r.execute_command("EXPIRETIME", "e:a"), 4102444800, "expiretime")
    report.equal(r.execute_command("EXPIRE", "e:a", 10, "GT"), 0, "expire gt refuses earlier")
    report.equal(r.execute_command("EXPIRE", "e:a", 10, "LT"), 1, "expire lt accepts earlier")
    r.set("e:b", "v", px=1)
    r.set("e:c", "v", px=1)
    time.sleep(0.05)
    report.equal(r.get("e:b"), None, "key gone after its px expiry")
    report.equal(r.exists("e:c"), 0, "exists false after expiry")
    report.equal(r.getex("e:a", persist=True), b"v", "getex persist")
    report.equal(r.ttl("e:a"), -1, "ttl after getex persist")
    r.set("e:k", "v", ex=500)
    r.set("e:k", "w", keepttl=True)
    report.check(490 <= r.ttl("e:k") <= 500, "keepttl keeps the ttl")
    r.set("e:k", "w")
    report.equal(r.ttl("e:k"), -1, "plain set clears the ttl")


def check_pipelines(report, r):
    p = r.pipeline(transaction=False)
    for i in range(500):
        p.set("p:%d" % i, i)
        p.incr("p:%d" % i)
    res = p.execute()
    report.equal(res, [x for i in range(500) for x in (True, i + 1)],
                 "non-transactional pipeline replies in order")
    p = r.pipeline(transaction=False)
    p.get("p:0")
    p.incr("s:b")  # an error in the middle does not stop the rest
    p.get("p:499")
    res = p.execute(raise_on_error=False)
    report.equal(res[0], b"1", "pipeline first reply")
    report.check(isinstance(res[1], redis.ResponseError), "pipeline error reply is an error")
    report.equal(res[2], b"500", "pipeline reply after an error")


def check_scan(report, r):
    r.flushdb()
    n = 5000
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.set("scan:%05d" % i, "v")
    p.execute()
    r.set("other", "x")
    seen = list(r.scan_iter(match="scan:*", count=100))
    report.equal(len(seen), n, "scan_iter match: number of keys returned")
    report.equal(len(set(seen)), n, "scan_iter match: no key returned twice")
    report.equal(set(seen), {b"scan:%05d" % i for i in range(n)}, "scan_iter match: exact set")
    all_keys = set(r.scan_iter(count=37))
    report.equal(len(all_keys), n + 1, "scan_iter without match returns every key")
    report.equal(r.dbsize(), n + 1, "dbsize")
    report.equal(r.flushdb(), True, "flushdb")
    report.equal(r.dbsize(), 0, "dbsize after flushdb")


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_redis_py")
    with harness.ServerProcess(args.server, name="ringkv") as ours:
        r = redis.Redis(host="127.0.0.1", port=ours.port, socket_timeout=30)
        for check in (check_strings, check_bits_and_hll, check_expiry, check_pipelines, check_scan):
            try:
                check(report, r)
            except redis.RedisError as e:
                report.check(False, "%s raised %r" % (check.__name__, e))
        r.close()
        report.check(ours.alive(), "server still running", ours.log())
        harness.check_clean_exit(report, ours)
    report.finish()


if __name__ == "__main__":
    main()
