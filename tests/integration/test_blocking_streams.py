"""Blocking stream reads end to end: the same scenarios run against ringkv and a real redis-server
7, with raw-socket clients, and every reply must be byte-identical. Covers XREAD BLOCK on '$'
served by XADD from another client, readers waiting at different IDs (each served on its own),
several streams (a reader woken by one is served from that one only), a transaction's appends
served at once, RENAME of a stream onto the key,
timeouts (RESP2 and RESP3), XREADGROUP BLOCK served by XADD (the entry joins the PEL, NOACK
leaves it out), two consumers of one group sharing appends in block order, a blocked
XREADGROUP told that its stream was deleted, replaced, flushed or expired (UNBLOCKED) or its
group destroyed (NOGROUP) while an XREAD on the same key waits on, a deleted and recreated
stream keeping XREAD's '$' position, pipelined requests waiting behind a blocked read, and a
client that disconnects while blocked.

    /usr/bin/python3 test_blocking_streams.py --server build/ringkv-server
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from blocking import blocked_send, compare_with_redis, quiet  # noqa: E402
from harness import encode_command  # noqa: E402


def scenarios(observed, report, label):
    """Plays every stream scenario on the server `observed` records from."""
    note, client = observed.note, observed.client
    with observed.flushed_admin() as admin:
        # '$' on a stream that has entries, served by the next XADD.
        admin.call("XADD", "s", "1-1", "f", "old")
        observed.served_later(admin, "xread", ("XREAD", "BLOCK", "0", "STREAMS", "s", "$"),
                              ("XADD", "s", "2-1", "f", "new"))

        # Readers at different IDs: each one is judged alone.
        with client() as a, client() as b:
            blocked_send(a, "XREAD", "BLOCK", "0", "STREAMS", "s", "100-0")
            blocked_send(b, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
            note("xadd 3", admin.call("XADD", "s", "3-1", "f", "v3"))
            note("b served", b.read())
            note("a still waits", quiet(a))
            note("xadd 200", admin.call("XADD", "s", "200-1", "f", "v200"))
            note("a served", a.read())

        # Several streams, the second written; a transaction's appends arrive together.
        with client() as a, client() as b:
            blocked_send(a, "XREAD", "BLOCK", "0", "STREAMS", "s", "m1", "$", "0")
            blocked_send(b, "XREAD", "BLOCK", "0", "STREAMS", "m2", "0-0")
            note("m1 xadd", admin.call("XADD", "m1", "5-1", "a", "1"))
            note("m1 served", a.read())
            admin.call("MULTI")
            for i in range(3):
                admin.call("XADD", "m2", "%d-1" % (i + 1), "k", str(i))
            note("exec", admin.call("EXEC"))
            note("m2 served", b.read())

        # Woken by one of its streams, a reader is served from that one only (the first written).
        with client() as a:
            blocked_send(a, "XREAD", "BLOCK", "0", "STREAMS", "w1", "w2", "$", "$")
            admin.call("MULTI")
            admin.call("XADD", "w2", "1-1", "f", "second")
            admin.call("XADD", "w1", "1-1", "f", "first")
            note("exec both", admin.call("EXEC"))
            note("served from the first written", a.read())

        # RENAME of a stream onto the waited key.
        with client() as a:
            blocked_send(a, "XREAD", "BLOCK", "0", "STREAMS", "dst", "0")
            admin.call("XADD", "src", "7-7", "r", "1")
            note("rename", admin.call("RENAME", "src", "dst"))
            note("rename served", a.read())

        # Timeouts, RESP2 then RESP3.
        with client() as a:
            start = time.time()
            note("timeout", a.call("XREAD", "BLOCK", "150", "STREAMS", "nokey", "$"))
            report.check(time.time() - start >= 0.14, "%s: BLOCK 150 waited" % label)
            a.call("HELLO", "3")
            note("timeout resp3", a.call("XREAD", "BLOCK", "50", "STREAMS", "nokey", "$"))
            admin.call("XGROUP", "CREATE", "s", "g", "$")
            note("group timeout resp3", a.call("XREADGROUP", "GROUP", "g", "c", "BLOCK", "50",
                                               "STREAMS", "s", ">"))

        # XREADGROUP served by XADD: the entry joins the consumer's pending entries.
        with client() as a, client() as b:
            blocked_send(a, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s",
                         ">")
            blocked_send(b, "XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "s", ">")
            note("group xadd", admin.call("XADD", "s", "300-1", "f", "g1"))
            note("alice served", a.read())
            note("bob waits", quiet(b))
            note("group xadd 2", admin.call("XADD", "s", "301-1", "f", "g2"))
            note("bob served", b.read())
            note("pending", admin.call("XPENDING", "s", "g"))
            note("consumers", [c.split(b"idle")[0] for c in
                               [admin.call("XINFO", "CONSUMERS", "s", "g")]])

        # NOACK: delivered, not pending.
        with client() as a:
            admin.call("XGROUP", "CREATE", "s", "n", "$")
            blocked_send(a, "XREADGROUP", "GROUP", "n", "x", "NOACK", "BLOCK", "0", "STREAMS",
                         "s", ">")
            admin.call("XADD", "s", "302-1", "f", "noack")
            note("noack served", a.read())
            note("noack pending", admin.call("XPENDING", "s", "n"))

        # The stream deleted, replaced by a string, or the group destroyed under a waiter.
        with client() as a, client() as b, client() as c:
            admin.call("XGROUP", "CREATE", "s", "d", "$")
            blocked_send(a, "XREADGROUP", "GROUP", "d", "x", "BLOCK", "0", "STREAMS", "s", ">")
            note("destroy", admin.call("XGROUP", "DESTROY", "s", "d"))
            note("group gone", a.read())
            admin.call("XGROUP", "CREATE", "s", "d", "$")
            blocked_send(b, "XREADGROUP", "GROUP", "d", "x", "BLOCK", "0", "STREAMS", "s", ">")
            note("del", admin.call("DEL", "s"))
            note("stream gone", b.read())
            admin.call("XGROUP", "CREATE", "s", "d", "$", "MKSTREAM")
            blocked_send(c, "XREADGROUP", "GROUP", "d", "x", "BLOCK", "0", "STREAMS", "s", ">")
            note("set", admin.call("SET", "s", "string"))
            note("stream replaced", c.read())
            admin.call("DEL", "s")
        with client() as a, client() as b:
            for name, trigger in (("flushall", ("FLUSHALL",)), ("expired", ("PEXPIRE", "s", "20"))):
                admin.call("XGROUP", "CREATE", "s", "d", "$", "MKSTREAM")
                blocked_send(a, "XREADGROUP", "GROUP", "d", "x", "BLOCK", "0", "STREAMS", "s", ">")
                blocked_send(b, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
                admin.call(*trigger)
                note(name + ": group reader told", a.read())
                note(name + ": reader waits on", quiet(b, 0.3))
                admin.call("XADD", "s", "1-1", "f", "after")
                note(name + ": reader served", b.read())
                admin.call("DEL", "s")

        # XREAD keeps the '$' of the stream it blocked on across a delete.
        with client() as a:
            admin.call("XADD", "k", "50-0", "f", "v")
            blocked_send(a, "XREAD", "BLOCK", "0", "STREAMS", "k", "$")
            note("del k", admin.call("DEL", "k"))
            note("k waits", quiet(a))
            note("xadd below", admin.call("XADD", "k", "10-0", "f", "low"))
            note("k still waits", quiet(a))
            note("xadd above", admin.call("XADD", "k", "60-0", "f", "high"))
            note("k served", a.read())

        # Pipelined requests wait behind the blocked read.
        with client() as a:
            a.send(encode_command("XREAD", "BLOCK", "0", "STREAMS", "p", "$") +
                   encode_command("PING"))
            time.sleep(0.05)
            note("pipeline waits", quiet(a))
            admin.call("XADD", "p", "1-1", "f", "v")
            note("pipeline served", a.read())
            note("pipeline ping", a.read())

        # A client that goes away while blocked.
        admin.call("XGROUP", "CREATE", "s2", "g", "$", "MKSTREAM")
        a = client()
        blocked_send(a, "XREADGROUP", "GROUP", "g", "gone", "BLOCK", "0", "STREAMS", "s2", ">")
        a.close()
        time.sleep(0.05)
        note("after disconnect", admin.call("XADD", "s2", "1-1", "f", "v"))
        note("not delivered", admin.call("XPENDING", "s2", "g"))
        note("ping", admin.call("PING"))


if __name__ == "__main__":
    compare_with_redis("test_blocking_streams", __doc__, scenarios, {
        "xread served": b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$3\r\nnew\r\n",
        "timeout": b"*-1\r\n",
        "timeout resp3": b"_\r\n",
        "group gone": b"-NOGROUP the consumer group this client was blocked on no longer exists\r\n",
        "stream gone": b"-UNBLOCKED the stream key no longer exists\r\n",
    })
