"""Blocking sorted-set commands end to end: the same scenarios run against ringkv and a real
redis-server 7, with raw-socket clients, and every reply must be byte-identical (and match the
expected bytes where they are known). Covers BZPOPMIN/BZPOPMAX served by a later ZADD, ZINCRBY,
a Z*STORE destination or a RENAME, FIFO order of several blocked clients, the RESP3 reply shape,
timeout replies (RESP2 and RESP3) and their timing with fractional seconds, a client that
disconnects while blocked, pipelined requests that wait behind a blocked command, and the errors
answered at once (WRONGTYPE, bad timeouts); BZMPOP the same way (with COUNT, served in block
order, by GEOADD and by a ZRANGESTORE or GEOSEARCHSTORE destination, timeouts, RESP3, errors).

    /usr/bin/python3 test_blocking_zset.py --server build/ringkv-server
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from blocking import SETTLE, blocked_send, compare_with_redis, quiet  # noqa: E402


def scenarios(observed, report, label):
    """Plays every sorted-set scenario (BZMPOP's last) on the server `observed` records from."""
    note, client = observed.note, observed.client
    with observed.flushed_admin() as admin:
        # Served by a later ZADD, on the second of two keys.
        observed.served_later(admin, "bzpopmin", ("BZPOPMIN", "z1", "z2", "0"),
                              ("ZADD", "z2", "2", "b", "1.5", "a"))
        note("rest", admin.call("ZRANGE", "z2", "0", "-1", "WITHSCORES"))

        # FIFO: three clients on one key, served in the order they blocked.
        with client() as a, client() as b, client() as c:
            for x in (a, b, c):
                blocked_send(x, "BZPOPMAX", "q", "0")
            note("zadd 2", admin.call("ZADD", "q", "1", "x", "2", "y"))
            note("first", a.read())
            note("second", b.read())
            note("third waits", quiet(c))
            note("zincrby", admin.call("ZINCRBY", "q", "0.1", "w"))
            note("third", c.read())
            note("q gone", admin.call("EXISTS", "q"))

        # A store destination and a renamed sorted set serve waiters.
        with client() as a, client() as b:
            blocked_send(a, "BZPOPMIN", "dst", "0")
            blocked_send(b, "BZPOPMAX", "rk", "0")
            admin.call("ZADD", "src", "1", "m", "2", "n")
            note("zunionstore", admin.call("ZUNIONSTORE", "dst", "1", "src", "WEIGHTS", "3"))
            note("store served", a.read())
            note("rename", admin.call("RENAME", "src", "rk"))
            note("rename served", b.read())

        # RESP3: the score is a double.
        with client() as a:
            a.call("HELLO", "3")
            blocked_send(a, "BZPOPMAX", "r3", "0")
            admin.call("ZADD", "r3", "0.1", "v")
            note("resp3 served", a.read())

        # Timeouts: replies, RESP3 shape, and timing of a fractional timeout.
        with client() as a:
            note("timeout min", a.call("BZPOPMIN", "nx", "0.05"))
            note("timeout max", a.call("BZPOPMAX", "nx", "nx2", "0.05"))
            start = time.time()
            note("fractional timeout", a.call("BZPOPMIN", "nx", "0.35"))
            elapsed = time.time() - start
            report.check(0.3 <= elapsed < 1.0, "%s: 0.35 s timeout took %.2fs" % (label, elapsed))
            a.call("HELLO", "3")
            note("resp3 timeout", a.call("BZPOPMAX", "nx", "0.05"))

        # A client that leaves while blocked takes nothing.
        a = client()
        blocked_send(a, "BZPOPMIN", "gone", "0")
        a.close()
        time.sleep(SETTLE)
        note("zadd after disconnect", admin.call("ZADD", "gone", "1", "v"))
        note("still there", admin.call("ZRANGE", "gone", "0", "-1"))

        # Pipelined requests wait behind the blocked command, then run in order.
        observed.pipelined_behind(
            admin, [("BZPOPMIN", "p", "0"), ("PING",), ("ZCARD", "p"), ("ZADD", "p", "5", "own")],
            ("ZADD", "p", "1", "first"))

        # Errors are answered at once, not waited on.
        admin.call("SET", "str", "v")
        with client() as a:
            note("wrongtype", a.call("BZPOPMIN", "nx", "str", "0"))
            note("negative", a.call("BZPOPMIN", "nx", "-1"))
            note("not a float", a.call("BZPOPMAX", "nx", "abc"))
            note("overflow", a.call("BZPOPMAX", "nx", "1e20"))
        bzmpop_scenarios(admin, client, note, report, label)


def bzmpop_scenarios(admin, client, note, report, label):
    """BZMPOP: served by writes in block order, with COUNT, through the geo and store commands
    (geo sets are sorted sets), timing out, in RESP3, and its errors."""
    with client() as a, client() as b:
        blocked_send(a, "BZMPOP", "0", "2", "m1", "m2", "MIN", "COUNT", "2")
        blocked_send(b, "BZMPOP", "0", "1", "m2", "MAX")
        note("bzmpop waits", quiet(a))
        note("zadd m2", admin.call("ZADD", "m2", "1", "a", "2", "b", "3", "c"))
        note("bzmpop first", a.read())
        note("bzmpop second", b.read())
        note("m2 gone", admin.call("EXISTS", "m2"))
    with client() as a, client() as b, client() as c:
        blocked_send(a, "BZMPOP", "0", "1", "geo", "MAX")
        blocked_send(b, "BZMPOP", "0", "1", "gdst", "MIN", "COUNT", "5")
        blocked_send(c, "BZMPOP", "0", "1", "rdst", "MAX", "COUNT", "1")
        note("geoadd", admin.call("GEOADD", "geo", "13.361389", "38.115556", "Palermo",
                                  "15.087269", "37.502669", "Catania"))
        note("served by geoadd", a.read())
        admin.call("GEOADD", "geo", "13.361389", "38.115556", "Palermo")
        note("geosearchstore", admin.call("GEOSEARCHSTORE", "gdst", "geo", "FROMLONLAT", "15",
                                          "37", "BYRADIUS", "200", "km", "STOREDIST"))
        note("served by geosearchstore", b.read())
        admin.call("ZADD", "rsrc", "1", "x", "2", "y")
        note("zrangestore", admin.call("ZRANGESTORE", "rdst", "rsrc", "0", "-1"))
        note("served by zrangestore", c.read())
    with client() as a:
        a.call("HELLO", "3")
        blocked_send(a, "BZMPOP", "0", "1", "m3", "MIN")
        admin.call("ZADD", "m3", "0.5", "v")
        note("bzmpop resp3", a.read())
        note("bzmpop resp3 timeout", a.call("BZMPOP", "0.05", "1", "nx", "MIN"))
    with client() as a:
        start = time.time()
        note("bzmpop timeout", a.call("BZMPOP", "0.2", "2", "nx", "nx2", "MAX", "COUNT", "3"))
        elapsed = time.time() - start
        report.check(0.15 <= elapsed < 1.0, "%s: BZMPOP 0.2 s timeout took %.2fs" % (label, elapsed))
        note("bzmpop wrongtype", a.call("BZMPOP", "0", "2", "nx", "str", "MIN"))
        note("bzmpop negative", a.call("BZMPOP", "-1", "1", "nx", "MIN"))
        note("bzmpop numkeys", a.call("BZMPOP", "0", "0", "nx", "MIN"))
        note("bzmpop where", a.call("BZMPOP", "0", "1", "nx", "MIDDLE"))
        note("bzmpop count", a.call("BZMPOP", "0", "1", "nx", "MIN", "COUNT", "0"))


EXPECTED = {
    "bzpopmin served": b"*3\r\n$2\r\nz2\r\n$1\r\na\r\n$3\r\n1.5\r\n",
    "first": b"*3\r\n$1\r\nq\r\n$1\r\ny\r\n$1\r\n2\r\n",
    "second": b"*3\r\n$1\r\nq\r\n$1\r\nx\r\n$1\r\n1\r\n",
    "third": b"*3\r\n$1\r\nq\r\n$1\r\nw\r\n$19\r\n0.10000000000000001\r\n",
    "store served": b"*3\r\n$3\r\ndst\r\n$1\r\nm\r\n$1\r\n3\r\n",
    "resp3 served": b"*3\r\n$2\r\nr3\r\n$1\r\nv\r\n,0.10000000000000001\r\n",
    "timeout min": b"*-1\r\n",
    "resp3 timeout": b"_\r\n",
    "still there": b"*1\r\n$1\r\nv\r\n",
    "pipeline waits": True,
    "pipeline ping": b"+PONG\r\n",
    "pipeline zcard": b":0\r\n",
    "negative": b"-ERR timeout is negative\r\n",
    "bzmpop waits": True,
    "bzmpop first": b"*2\r\n$2\r\nm2\r\n*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n"
                    b"$1\r\n2\r\n",
    "bzmpop second": b"*2\r\n$2\r\nm2\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n",
    "bzmpop resp3": b"*2\r\n$2\r\nm3\r\n*1\r\n*2\r\n$1\r\nv\r\n,0.5\r\n",
    "bzmpop resp3 timeout": b"_\r\n",
    "bzmpop timeout": b"*-1\r\n",
}

if __name__ == "__main__":
    compare_with_redis("test_blocking_zset", __doc__, scenarios, EXPECTED)
