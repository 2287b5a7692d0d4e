"""Client controls end to end, ringkv against a real redis-server 7.0.15 with the same raw-socket
scenarios, every reply and push compared byte for byte: CLIENT REPLY ON/OFF/SKIP (pipelined),
CLIENT NO-EVICT (CLIENT INFO's flags), CLIENT UNBLOCK TIMEOUT/ERROR of BLPOP, BLMOVE, BZPOPMIN and
XREAD, CLIENT PAUSE WRITE/ALL with concurrent clients (reads run, writes, scripts and PUBLISH
wait; UNPAUSE or the timeout releases them), CLIENT TRACKING in default mode (RESP3 pushes,
NOLOOP, OPTIN/OPTOUT with CLIENT CACHING, REDIRECT to a RESP2 subscriber of
__redis__:invalidate, a broken redirect), BCAST with prefixes, FLUSHALL's null invalidation,
CLIENT GETREDIR/TRACKINGINFO, tracking-table-max-keys (keys invalidated past it), the options'
error texts, and COMMAND INFO/DOCS of the rows.

    /usr/bin/python3 test_client_controls.py --server build/ringkv-server
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from blocking import SETTLE, blocked_send, compare_with_redis, quiet  # noqa: E402
from harness import encode_command  # noqa: E402

SUBCOMMANDS = ["reply", "pause", "unpause", "no-evict", "unblock", "tracking", "caching",
               "getredir", "trackinginfo"]


def client_id(c):
    return c.call("CLIENT", "ID").decode()[1:].strip()


def info_fields(reply):
    """CLIENT INFO's flags and redir fields (the rest varies between servers)."""
    text = reply.decode()
    return re.search(r" flags=(\S*)", text).group(1), re.search(r" redir=(\S*)", text).group(1)


def tracking_figures(reply):
    """INFO's tracking_clients and tracking_total_* lines."""
    return [line for line in reply.decode().split("\r\n") if line.startswith("tracking_")]


def masked_ids(reply, ids):
    """The reply with client ids (which differ between servers) replaced by names."""
    for name, value in ids.items():
        reply = reply.replace((":%s\r\n" % value).encode(), (":<%s>\r\n" % name).encode())
    return reply


def errors_and_docs(note, client):
    with client() as c:
        for args in [
            ("CLIENT", "REPLY", "foo"), ("CLIENT", "REPLY"), ("CLIENT", "PAUSE"),
            ("CLIENT", "PAUSE", "abc"), ("CLIENT", "PAUSE", "-1"), ("CLIENT", "PAUSE", "10", "x"),
            ("CLIENT", "PAUSE", "1", "write", "x"), ("CLIENT", "NO-EVICT", "maybe"),
            ("CLIENT", "UNBLOCK"), ("CLIENT", "UNBLOCK", "abc"), ("CLIENT", "UNBLOCK", "5", "x"),
            ("CLIENT", "UNBLOCK", "5", "error", "x"),
            ("CLIENT", "UNBLOCK", "999999"), ("CLIENT", "UNBLOCK", "-3", "ERROR"),
            ("CLIENT", "TRACKING"), ("CLIENT", "TRACKING", "maybe"),
            ("CLIENT", "TRACKING", "on", "redirect", "999999"),
            ("CLIENT", "TRACKING", "on", "redirect", "abc"),
            ("CLIENT", "TRACKING", "on", "redirect"), ("CLIENT", "TRACKING", "on", "prefix"),
            ("CLIENT", "TRACKING", "on", "bcast", "optin"),
            ("CLIENT", "TRACKING", "on", "optin", "optout"),
            ("CLIENT", "TRACKING", "on", "prefix", "a"), ("CLIENT", "TRACKING", "on", "what"),
            ("CLIENT", "TRACKING", "on", "bcast", "prefix", "ab", "prefix", "a"),
            ("CLIENT", "CACHING", "yes"), ("CLIENT", "CACHING", "maybe"),
            ("CLIENT", "GETREDIR"), ("CLIENT", "TRACKINGINFO"),
            ("CLIENT", "TRACKING", "on", "bcast", "prefix", "b", "prefix", "a", "noloop"),
            ("CLIENT", "TRACKINGINFO"), ("CLIENT", "GETREDIR"),
            ("CLIENT", "TRACKING", "on", "bcast", "prefix", "ab"),
            ("CLIENT", "TRACKING", "on", "bcast", "prefix", "c"),
            ("CLIENT", "TRACKING", "on"), ("CLIENT", "TRACKING", "on", "optin"),
            ("CLIENT", "TRACKINGINFO"), ("CLIENT", "TRACKING", "off"),
            ("CLIENT", "TRACKING", "on", "optin"), ("CLIENT", "TRACKING", "on", "optout"),
            ("CLIENT", "CACHING", "no"), ("CLIENT", "CACHING", "yes"), ("CLIENT", "TRACKINGINFO"),
            ("CLIENT", "TRACKING", "off"), ("CLIENT", "TRACKING", "on", "optout", "noloop"),
            ("CLIENT", "CACHING", "yes"), ("CLIENT", "CACHING", "no"), ("CLIENT", "TRACKINGINFO"),
            ("CLIENT", "TRACKING", "off"), ("CLIENT", "TRACKINGINFO"),
            ("CLIENT", "NO-EVICT", "on"), ("CLIENT", "HELP"),
        ]:
            note(" ".join(args), c.call(*args))
        note("no-evict flags", info_fields(c.call("CLIENT", "INFO")))
        c.call("CLIENT", "NO-EVICT", "off")
        note("no-evict off flags", info_fields(c.call("CLIENT", "INFO")))
        for name in SUBCOMMANDS:
            note("info " + name, c.call("COMMAND", "INFO", "client|" + name))
            note("docs " + name, c.call("COMMAND", "DOCS", "client|" + name))


def client_reply(note, client):
    with client() as c:
        # Pipelined: OFF silences everything until ON, whose +OK is sent; SKIP drops one reply.
        c.send(b"".join(encode_command(*a) for a in [
            ("CLIENT", "REPLY", "OFF"), ("SET", "r", "1"), ("GET", "r"), ("INCR", "nope-r"),
            ("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "ON"), ("GET", "r"),
            ("CLIENT", "REPLY", "SKIP"), ("GET", "r"), ("INCR", "r"),
            ("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "SKIP"), ("GET", "r"), ("GET", "r"),
            ("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "OFF"), ("GET", "r"),
            ("CLIENT", "REPLY", "ON"), ("PING",),
        ]))
        data, _ = c.read_available(0.5)
        note("reply pipeline", data)
        c.sock.settimeout(10.0)
        note("incr applied", c.call("GET", "nope-r"))
        # RESET turns replies on again (its own +RESET is sent).
        c.send(encode_command("CLIENT", "REPLY", "OFF") + encode_command("RESET"))
        note("reset", c.read())


def unblock(note, client):
    with client() as admin, client() as a:
        admin.call("DEL", "ul", "uz", "us", "dst")
        aid = client_id(a)
        for args in [("BLPOP", "ul", "0"), ("BLMOVE", "ul", "dst", "LEFT", "RIGHT", "0"),
                     ("BZPOPMIN", "uz", "0"), ("XREAD", "BLOCK", "0", "STREAMS", "us", "$")]:
            for how in ("TIMEOUT", "ERROR"):
                blocked_send(a, *args)
                note("%s blocked" % args[0], quiet(a))
                note("unblock %s %s" % (args[0], how), admin.call("CLIENT", "UNBLOCK", aid, how))
                note("%s %s reply" % (args[0], how), a.read())
                note("again %s" % how, admin.call("CLIENT", "UNBLOCK", aid, how))
        # The default reason is TIMEOUT; the client runs its next request afterwards.
        blocked_send(a, "BLPOP", "ul", "0")
        a.send(encode_command("PING"))
        note("unblock default", admin.call("CLIENT", "UNBLOCK", aid))
        note("after unblock", (a.read(), a.read()))
        note("not blocked", admin.call("CLIENT", "UNBLOCK", aid))


def pause(note, client):
    with client() as admin, client() as w, client() as r, client() as p:
        admin.call("SET", "pk", "1")
        note("pause write", admin.call("CLIENT", "PAUSE", "100000", "WRITE"))
        note("read runs", r.call("GET", "pk"))
        note("ping runs", r.call("PING"))
        w.send(encode_command("INCR", "pk"))
        p.send(encode_command("PUBLISH", "ch", "m"))
        r.send(encode_command("EVAL", "return 1", "0"))
        time.sleep(SETTLE * 2)
        note("write waits", quiet(w))
        note("publish waits", quiet(p))
        note("eval waits", quiet(r))
        note("read still runs", admin.call("GET", "pk"))
        note("unpause", admin.call("CLIENT", "UNPAUSE"))
        note("write ran", w.read())
        note("publish ran", p.read())
        note("eval ran", r.read())
        # ALL holds every command, CLIENT UNPAUSE included; the timeout ends it.
        note("pause all", admin.call("CLIENT", "PAUSE", "600", "ALL"))
        start = time.time()
        r.send(encode_command("GET", "pk"))
        w.send(encode_command("CLIENT", "UNPAUSE"))
        time.sleep(SETTLE * 2)
        note("read waits", quiet(r))
        note("read after timeout", r.read())
        note("unpause after timeout", w.read())
        note("waited for the timeout", time.time() - start >= 0.5)
        # A transaction of writes waits at EXEC; queueing a write waits too.
        w.call("MULTI")
        note("pause write again", admin.call("CLIENT", "PAUSE", "100000", "WRITE"))
        w.send(encode_command("SET", "pk", "2"))
        note("queued write waits", quiet(w))
        admin.call("CLIENT", "UNPAUSE")
        note("queued", w.read())
        admin.call("CLIENT", "PAUSE", "100000", "WRITE")
        w.send(encode_command("EXEC"))
        note("exec waits", quiet(w))
        admin.call("CLIENT", "UNPAUSE")
        note("exec", w.read())


def tracking(note, client):
    with client() as t, client() as other, client() as sub, client() as b:
        other.call("FLUSHALL")
        t.call("HELLO", "3")
        note("tracking on", t.call("CLIENT", "TRACKING", "on"))
        note("flags", info_fields(t.call("CLIENT", "INFO")))
        note("get", t.call("GET", "k"))
        note("mget", t.call("MGET", "k", "k2"))
        note("tracked keys", tracking_figures(other.call("INFO", "everything")))
        note("other set", other.call("SET", "k", "v"))
        note("push k", t.read())
        note("other set again (forgotten)", other.call("SET", "k", "w"))
        note("quiet", quiet(t))
        note("other del k2", other.call("DEL", "k2"))
        note("del k2 unexists: no push", quiet(t))
        t.call("GET", "k2")
        other.call("SET", "k2", "x")
        note("push k2", t.read())
        # Its own writes: the push follows the reply.
        t.call("GET", "k")
        note("self set", t.call("SET", "k", "z"))
        note("self push", t.read())
        t.call("GET", "k")
        note("flushall", other.call("FLUSHALL"))
        note("flush push", t.read())
        note("self flushdb", t.call("FLUSHDB"))
        note("self flush push", t.read())
        # NOLOOP: its own writes say nothing.
        t.call("CLIENT", "TRACKING", "on", "noloop")
        t.call("GET", "n")
        note("noloop set", t.call("SET", "n", "1"))
        note("noloop quiet", quiet(t))
        t.call("GET", "n")
        other.call("INCR", "n")
        note("noloop other", t.read())
        t.call("CLIENT", "TRACKING", "off")
        # OPTIN: only reads after CLIENT CACHING YES are remembered.
        t.call("CLIENT", "TRACKING", "on", "optin")
        t.call("GET", "o1")
        t.call("CLIENT", "CACHING", "yes")
        t.call("GET", "o2")
        other.call("MSET", "o1", "a", "o2", "b")
        note("optin push", t.read())
        note("optin quiet", quiet(t))
        t.call("CLIENT", "TRACKING", "off")
        # OPTOUT: reads after CLIENT CACHING NO are not.
        t.call("CLIENT", "TRACKING", "on", "optout")
        t.call("CLIENT", "CACHING", "no")
        t.call("GET", "o1")
        t.call("GET", "o2")
        other.call("MSET", "o1", "c", "o2", "d")
        note("optout push", t.read())
        note("optout quiet", quiet(t))
        t.call("CLIENT", "TRACKING", "off")
        # REDIRECT to a RESP2 subscriber of __redis__:invalidate.
        sid = client_id(sub)
        sub.call("SUBSCRIBE", "__redis__:invalidate")
        with client() as r2:
            note("redirect on", r2.call("CLIENT", "TRACKING", "on", "redirect", sid))
            note("getredir", masked_ids(r2.call("CLIENT", "GETREDIR"), {"sub": sid}))
            note("redir flags", info_fields(r2.call("CLIENT", "INFO"))[0])
            r2.call("GET", "rk")
            other.call("SET", "rk", "1")
            note("redirected message", sub.read())
            other.call("FLUSHDB")
            note("redirected flush", sub.read())
            note("redirecting client quiet", quiet(r2))
            # The subscriber goes: the redirect is broken.
            r2.call("GET", "rk")
            sub.close()
            time.sleep(SETTLE)
            other.call("SET", "rk", "2")
            time.sleep(SETTLE)
            note("broken", masked_ids(r2.call("CLIENT", "TRACKINGINFO"), {"sub": sid}))
            note("broken flags", info_fields(r2.call("CLIENT", "INFO"))[0])
        # BCAST with prefixes, batched per loop iteration, NOLOOP.
        b.call("HELLO", "3")
        note("bcast on", b.call("CLIENT", "TRACKING", "on", "bcast", "prefix", "p:", "prefix",
                                "q:", "noloop"))
        note("bcast flags", info_fields(b.call("CLIENT", "INFO")))
        note("tracking figures", tracking_figures(other.call("INFO", "everything")))
        other.call("MSET", "p:2", "x", "p:1", "y", "z", "1", "q:1", "2")
        got = sorted([b.read(), b.read()])
        note("bcast pushes", got)
        note("bcast self", b.call("SET", "p:3", "1"))
        note("bcast self quiet", quiet(b))
        other.call("FLUSHDB")
        note("bcast flush", b.read())
        b.call("CLIENT", "TRACKING", "off")
        note("tracking figures after", tracking_figures(other.call("INFO", "everything")))


def tracking_limit(note, client):
    """tracking-table-max-keys: reads past the limit invalidate remembered keys for their readers
    (which keys is each server's own choice: their names are masked)."""
    with client() as t, client() as admin:
        admin.call("FLUSHALL")
        t.call("HELLO", "3")
        t.call("CLIENT", "TRACKING", "on")
        note("limit get", admin.call("CONFIG", "GET", "tracking-table-max-keys"))
        note("limit set", admin.call("CONFIG", "SET", "tracking-table-max-keys", "2"))
        stream = b"".join(t.call("GET", "lim%d" % i) for i in range(1, 6))
        time.sleep(0.5)  # the cron trims what the last read added
        stream += t.read_available(0.3)[0]
        names = re.findall(rb"\$4\r\n(lim\d)\r\n", stream)
        note("limit pushes and replies", re.sub(rb"lim\d", b"limX", stream))
        note("limit: each key invalidated once", sorted(set(names)) == sorted(names))
        note("limit figures", tracking_figures(admin.call("INFO", "everything")))
        note("limit bad", admin.call("CONFIG", "SET", "tracking-table-max-keys", "-1"))
        note("no limit", admin.call("CONFIG", "SET", "tracking-table-max-keys", "0"))
        for i in range(6, 9):
            t.call("GET", "lim%d" % i)
        note("no limit figures", tracking_figures(admin.call("INFO", "everything")))
        admin.call("CONFIG", "SET", "tracking-table-max-keys", "1000000")


def scenarios(observed, report, label):
    for part in (errors_and_docs, client_reply, unblock, pause, tracking, tracking_limit):
        part(observed.note, observed.client)


EXPECTED = {
    "unblock BLPOP ERROR": b":1\r\n",
    "BLPOP ERROR reply": b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n",
    "BLPOP TIMEOUT reply": b"*-1\r\n",
    "push k": b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n",
    "flush push": b">2\r\n$10\r\ninvalidate\r\n_\r\n",
    "redirected message":
        b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$2\r\nrk\r\n",
    "write waits": True,
    "read waits": True,
}

if __name__ == "__main__":
    compare_with_redis("test_client_controls", __doc__, scenarios, EXPECTED)
