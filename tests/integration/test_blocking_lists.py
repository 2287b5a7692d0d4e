"""Blocking list commands end to end: the same scenarios run against ringkv and a real
redis-server 7, with raw-socket clients, and every reply must be byte-identical (and match the
expected bytes where they are known). Covers BLPOP/BRPOP/BLMOVE/BRPOPLPUSH/BLMPOP served by a
later push, FIFO order of several blocked clients, one push serving several clients, a BLMOVE
whose push serves a client blocked on its destination, a RENAME serving a waiter, timeout replies
(RESP2 and RESP3) and their timing with fractional seconds, a client that disconnects while
blocked, and pipelined requests that wait behind a blocked command.

    /usr/bin/python3 test_blocking_lists.py --server build/ringkv-server
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from blocking import SETTLE, blocked_send, compare_with_redis, quiet  # noqa: E402


def scenarios(observed, report, label):
    """Plays every list scenario on the server `observed` records from, noting each reply in
    `observed` in order; `label` names the server in the timing check."""
    note, client = observed.note, observed.client
    with observed.flushed_admin() as admin:
        # Served by a later push, on the second of two keys.
        observed.served_later(admin, "blpop", ("BLPOP", "k1", "k2", "0"),
                              ("RPUSH", "k2", "x", "y"))
        note("rest", admin.call("LRANGE", "k2", "0", "-1"))

        # FIFO: three clients on one key, served in the order they blocked.
        with client() as a, client() as b, client() as c:
            for x in (a, b, c):
                blocked_send(x, "BRPOP", "q", "0")
            note("push 2", admin.call("RPUSH", "q", "1", "2"))
            note("first", a.read())
            note("second", b.read())
            note("third waits", quiet(c))
            note("push 1", admin.call("LPUSH", "q", "3"))
            note("third", c.read())
            note("q gone", admin.call("EXISTS", "q"))

        # BLMOVE served, and its push into the destination serves a client waiting there.
        with client() as a, client() as c:
            blocked_send(c, "BLPOP", "dst", "0")
            blocked_send(a, "BLMOVE", "src", "dst", "RIGHT", "LEFT", "0")
            note("lpush src", admin.call("LPUSH", "src", "a", "b"))
            note("blmove served", a.read())
            note("chained blpop", c.read())
            note("src left", admin.call("LRANGE", "src", "0", "-1"))
            note("dst left", admin.call("EXISTS", "dst"))

        # A push inside MULTI serves blocked clients only after EXEC, with what the transaction
        # left: a pop later in the same transaction takes the element first.
        with client() as a, client() as t:
            blocked_send(a, "BLPOP", "txq", "0")
            note("tx multi", t.call("MULTI"))
            note("tx rpush", t.call("RPUSH", "txq", "m1"))
            note("tx lpop", t.call("LPOP", "txq"))
            note("tx exec", t.call("EXEC"))
            note("blpop still waits", quiet(a))
            note("tx multi 2", t.call("MULTI"))
            note("tx rpush 2", t.call("RPUSH", "txq", "m2", "m3"))
            note("tx lpop 2", t.call("LPOP", "txq"))
            note("tx exec 2", t.call("EXEC"))
            note("blpop gets what exec left", a.read())

        # BRPOPLPUSH and BLMPOP with COUNT.
        with client() as a, client() as b:
            blocked_send(a, "BRPOPLPUSH", "s2", "d2", "0")
            blocked_send(b, "BLMPOP", "0", "2", "m1", "s2", "LEFT", "COUNT", "5")
            note("rpush s2", admin.call("RPUSH", "s2", "1", "2", "3"))
            note("brpoplpush served", a.read())
            note("blmpop served", b.read())
            note("d2", admin.call("LRANGE", "d2", "0", "-1"))

        # A list renamed onto the awaited key serves the waiter.
        with client() as a:
            blocked_send(a, "BLPOP", "rk", "0")
            admin.call("RPUSH", "tmp", "moved")
            note("rename", admin.call("RENAME", "tmp", "rk"))
            note("rename served", a.read())

        # Timeouts: replies, RESP3 shape, and timing of a fractional timeout.
        with client() as a:
            for args in (["BLPOP", "nx", "0.05"], ["BRPOP", "nx", "nx2", "0.05"],
                         ["BLMOVE", "nx", "d", "LEFT", "LEFT", "0.05"],
                         ["BRPOPLPUSH", "nx", "d", "0.05"],
                         ["BLMPOP", "0.05", "1", "nx", "RIGHT"]):
                note("timeout " + args[0], a.call(*args))
            start = time.time()
            note("fractional timeout", a.call("BLPOP", "nx", "0.35"))
            elapsed = time.time() - start
            report.check(0.3 <= elapsed < 1.0, "%s: 0.35 s timeout took %.2fs" % (label, elapsed))
            a.call("HELLO", "3")
            note("resp3 timeout", a.call("BLMPOP", "0.05", "1", "nx", "LEFT"))
            note("resp3 blpop timeout", a.call("BLPOP", "nx", "0.05"))

        # A client that leaves while blocked takes nothing.
        a = client()
        blocked_send(a, "BLPOP", "gone", "0")
        a.close()
        time.sleep(SETTLE)
        note("push after disconnect", admin.call("RPUSH", "gone", "v"))
        note("still there", admin.call("LRANGE", "gone", "0", "-1"))

        # Pipelined requests wait behind the blocked command, then run in order.
        observed.pipelined_behind(
            admin, [("BLPOP", "p", "0"), ("PING",), ("LLEN", "p"), ("RPUSH", "p", "own")],
            ("RPUSH", "p", "first"))

        # Not a list: an error at once, not a wait.
        admin.call("SET", "str", "v")
        with client() as a:
            note("wrongtype", a.call("BLPOP", "nx", "str", "0"))
            note("negative", a.call("BLPOP", "nx", "-1"))


EXPECTED = {
    "blpop served": b"*2\r\n$2\r\nk2\r\n$1\r\nx\r\n",
    "first": b"*2\r\n$1\r\nq\r\n$1\r\n2\r\n",
    "second": b"*2\r\n$1\r\nq\r\n$1\r\n1\r\n",
    "third": b"*2\r\n$1\r\nq\r\n$1\r\n3\r\n",
    "blmove served": b"$1\r\na\r\n",
    "chained blpop": b"*2\r\n$3\r\ndst\r\n$1\r\na\r\n",
    "blmpop served": b"*2\r\n$2\r\ns2\r\n*2\r\n$1\r\n1\r\n$1\r\n2\r\n",
    "timeout BLPOP": b"*-1\r\n",
    "timeout BLMOVE": b"*-1\r\n",
    "resp3 timeout": b"_\r\n",
    "still there": b"*1\r\n$1\r\nv\r\n",
    "pipeline waits": True,
    "pipeline ping": b"+PONG\r\n",
    "pipeline llen": b":0\r\n",
}

if __name__ == "__main__":
    compare_with_redis("test_blocking_lists", __doc__, scenarios, EXPECTED)
