"""Pub/Sub on one node, differential against a real redis-server 7: the same scenarios run on
both with raw-socket clients and every observation must be byte-identical. Covers SUBSCRIBE/
PSUBSCRIBE/UNSUBSCRIBE/PUNSUBSCRIBE reply shapes and counts in RESP2 and RESP3, UNSUBSCRIBE
without subscriptions, the RESP2 subscribed-mode errors and PING reply, RESET and disconnects
dropping subscriptions, PUBSUB CHANNELS/NUMSUB/NUMPAT/HELP and their errors, CLIENT LIST's
flags/sub/psub, the bytes of delivered messages (binary payloads, patterns, pipelined
publishes in order), and a publisher that is its own RESP3 subscriber; sharded pub/sub the same
way (SSUBSCRIBE/SUNSUBSCRIBE shapes and counts apart from the other subscriptions, SPUBLISH,
subscribed mode, PUBSUB SHARDCHANNELS/SHARDNUMSUB, CLIENT LIST's ssub, INFO, MULTI, RESP3). Then, on ringkv alone, a
subscriber that never reads is disconnected by the pubsub output buffer limit while other
clients keep being served and the server's memory stays bounded.

    /usr/bin/python3 test_pubsub.py --server build/ringkv-server
"""

import os
import re
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import main_support  # noqa: E402
from blocking import SETTLE, call_n, quiet  # noqa: E402
from harness import RespClient, encode_command  # noqa: E402


def read_n(client, n):
    return b"".join(client.read() for _ in range(n))


def confirmations(raw):
    """Unsubscribe-all replies come in the server's hash order: the names as a sorted list and
    the counts in order (they must count down whatever the names' order)."""
    items = [harness.parse_reply(r) for r in split_replies(raw)]
    return sorted(i[1] for i in items), [i[2] for i in items], sorted(set(i[0] for i in items))


def split_replies(raw):
    """Splits concatenated top-level replies (arrays/pushes of bulk strings/integers/nulls)."""
    out, pos = [], 0
    while pos < len(raw):
        start = pos
        pos = skip(raw, pos)
        out.append(raw[start:pos])
    return out


def skip(raw, pos):
    end = raw.index(b"\r\n", pos)
    kind, rest = raw[pos:pos + 1], raw[pos + 1:end]
    pos = end + 2
    if kind in (b"*", b">", b"%", b"~"):
        n = int(rest) * (2 if kind == b"%" else 1)
        for _ in range(max(n, 0)):
            pos = skip(raw, pos)
    elif kind == b"$" and int(rest) >= 0:
        pos += int(rest) + 2
    return pos


def sorted_array(raw):
    """An array reply whose order is the server's hash order, as a sorted list."""
    return sorted(harness.parse_reply(raw))


def client_fields(probe, client_id):
    line = harness.parse_reply(probe.call("CLIENT", "LIST", "ID", str(client_id))).decode()
    return " ".join(re.findall(r"\b(?:flags|sub|psub|ssub|multi)=\S*", line))


def scenarios(port):
    """Runs every scenario on the server at `port`; returns [(name, observation)]."""
    out = []

    def obs(name, value):
        out.append((name, value))

    s, p, s2 = RespClient(port), RespClient(port), RespClient(port)
    s_id = harness.parse_reply(s.call("CLIENT", "ID"))

    # Unsubscribing with no subscriptions.
    obs("unsubscribe none", call_n(s, 1, "UNSUBSCRIBE"))
    obs("punsubscribe none", call_n(s, 1, "PUNSUBSCRIBE"))
    obs("unsubscribe unknown", call_n(s, 1, "UNSUBSCRIBE", "x"))
    obs("punsubscribe unknown", call_n(s, 2, "PUNSUBSCRIBE", "x", "y*"))
    obs("not subscribed: GET runs", s.call("GET", "k"))
    obs("flags when not subscribed", client_fields(p, s_id))

    # Subscribing, with a repeated channel counted once.
    obs("subscribe a b a", call_n(s, 3, "SUBSCRIBE", "a", "b", "a"))
    obs("psubscribe", call_n(s, 2, "PSUBSCRIBE", "h*", "x?"))
    obs("client list sub/psub", client_fields(p, s_id))

    # RESP2 subscribed mode.
    obs("subscribed: GET refused", s.call("GET", "k"))
    obs("subscribed: SET refused", s.call("SET", "k", "v"))
    obs("subscribed: CLIENT LIST refused", s.call("CLIENT", "LIST"))
    obs("subscribed: PUBLISH refused", s.call("PUBLISH", "a", "x"))
    obs("subscribed: PING", s.call("PING"))
    obs("subscribed: PING msg", s.call("PING", "hi"))
    obs("subscribed: PING arity", s.call("PING", "a", "b"))
    obs("subscribed: GET arity first", s.call("GET"))
    obs("subscribed: unknown command", s.call("NOSUCHCOMMAND", "x"))

    # Delivery.
    obs("publish channel", p.call("PUBLISH", "a", "m1"))
    obs("message bytes", s.read())
    obs("publish pattern", p.call("PUBLISH", "hello", "m2"))
    obs("pmessage bytes", s.read())
    obs("publish ?-pattern", p.call("PUBLISH", "xy", "m3"))
    obs("pmessage ? bytes", s.read())
    obs("publish nobody", p.call("PUBLISH", "zz", "m4"))
    binary = b"bin\r\n\x00\xff" + b"x" * 1000
    obs("publish binary", p.call("PUBLISH", "b", binary))
    obs("binary message bytes", s.read())
    obs("nothing else delivered", quiet(s))

    # Several receivers: a channel subscriber and pattern subscribers on another client.
    obs("s2 subscribe", call_n(s2, 1, "SUBSCRIBE", "a"))
    obs("s2 psubscribe", call_n(s2, 2, "PSUBSCRIBE", "a*", "*"))
    obs("publish to 4", p.call("PUBLISH", "a", "m5"))
    obs("s gets message", s.read())
    obs("s2 gets 3 (pattern order is the server's)",
        sorted(split_replies(read_n(s2, 3))))
    obs("no duplicates", quiet(s) and quiet(s2))

    # PUBSUB introspection.
    obs("pubsub channels", sorted_array(p.call("PUBSUB", "CHANNELS")))
    obs("pubsub channels a*", p.call("PUBSUB", "CHANNELS", "a*"))
    obs("pubsub channels [ab]", sorted_array(p.call("PUBSUB", "CHANNELS", "[ab]")))
    obs("pubsub channels none match", p.call("PUBSUB", "CHANNELS", "q*"))
    obs("pubsub numsub", p.call("PUBSUB", "NUMSUB", "a", "b", "zz", "a"))
    obs("pubsub numsub no args", p.call("PUBSUB", "NUMSUB"))
    obs("pubsub numpat", p.call("PUBSUB", "NUMPAT"))
    obs("pubsub help", p.call("PUBSUB", "HELP"))
    obs("pubsub unknown", p.call("PUBSUB", "FOO"))
    obs("pubsub numpat arity", p.call("PUBSUB", "NUMPAT", "x"))
    obs("pubsub arity", p.call("PUBSUB"))
    obs("pubsub channels too many", p.call("PUBSUB", "CHANNELS", "a", "b"))
    obs("subscribe arity", p.call("SUBSCRIBE"))
    obs("publish arity", p.call("PUBLISH", "x"))
    obs("info stats pubsub", re.findall(rb"pubsub_(?:channels|patterns):\d+",
                                        harness.parse_reply(p.call("INFO", "stats"))))

    # Pipelined publishes arrive in order.
    p.send(b"".join(encode_command("PUBLISH", "b", "n%d" % i) for i in range(50)))
    obs("pipelined publish replies", read_n(p, 50))
    obs("pipelined messages in order", read_n(s, 50))

    # Unsubscribing: patterns in subscription order, channels in the server's order.
    obs("punsubscribe all", call_n(s, 2, "PUNSUBSCRIBE"))
    obs("unsubscribe all", confirmations(call_n(s, 2, "UNSUBSCRIBE")))
    obs("unsubscribed: GET runs again", s.call("GET", "k"))
    obs("flags after unsubscribing", client_fields(p, s_id))
    obs("publish after unsubscribe", p.call("PUBLISH", "b", "gone"))

    # RESET drops subscriptions silently.
    obs("subscribe before reset", call_n(s, 1, "SUBSCRIBE", "c1"))
    obs("reset", s.call("RESET"))
    obs("after reset: GET runs", s.call("GET", "k"))
    obs("after reset: numsub", p.call("PUBSUB", "NUMSUB", "c1"))
    obs("after reset: nothing delivered", p.call("PUBLISH", "c1", "x"))

    # A disconnect drops subscriptions.
    s2.close()
    time.sleep(SETTLE)
    obs("after disconnect: numsub", p.call("PUBSUB", "NUMSUB", "a"))
    obs("after disconnect: numpat", p.call("PUBSUB", "NUMPAT"))

    # RESP3: pushes, and any command is allowed.
    r3 = RespClient(port)
    r3.call("HELLO", "3")
    obs("resp3 subscribe", call_n(r3, 1, "SUBSCRIBE", "a"))
    obs("resp3 GET allowed", r3.call("GET", "k"))
    obs("resp3 PING", r3.call("PING"))
    obs("resp3 psubscribe", call_n(r3, 1, "PSUBSCRIBE", "a*"))
    obs("resp3 publish", p.call("PUBLISH", "a", "m6"))
    obs("resp3 pushes", read_n(r3, 2))
    obs("resp3 self publish (push, then reply)", call_n(r3, 3, "PUBLISH", "a", "self"))
    obs("resp3 unsubscribe all", call_n(r3, 1, "UNSUBSCRIBE"))
    obs("resp3 punsubscribe unknown", call_n(r3, 1, "PUNSUBSCRIBE", "zz"))
    obs("resp3 punsubscribe all", call_n(r3, 1, "PUNSUBSCRIBE"))
    obs("resp3 unsubscribe none", call_n(r3, 1, "UNSUBSCRIBE"))
    p3 = RespClient(port)
    p3.call("HELLO", "3")
    obs("resp3 pubsub numsub", p3.call("PUBSUB", "NUMSUB", "a"))
    obs("resp3 pubsub channels", p3.call("PUBSUB", "CHANNELS"))
    # A RESP3 subscriber that switches to RESP2 is in subscribed mode.
    obs("resp3 subscribe again", call_n(r3, 1, "SUBSCRIBE", "d"))
    r3.call("HELLO", "2")
    obs("back to resp2: GET refused", r3.call("GET", "k"))
    obs("back to resp2: QUIT", r3.call("QUIT"))
    obs("quit closes", r3.closed_by_peer())
    for c in (s, p, r3, p3):
        c.close()
    sharded_scenarios(port, obs)
    return out


def sharded_scenarios(port, obs):
    """Shard channels: apart from channels and patterns, with their own counts and messages."""
    s, p = RespClient(port), RespClient(port)
    s_id = harness.parse_reply(s.call("CLIENT", "ID"))
    obs("sunsubscribe none", call_n(s, 1, "SUNSUBSCRIBE"))
    obs("ssubscribe c1 c2 c1", call_n(s, 3, "SSUBSCRIBE", "c1", "c2", "c1"))
    obs("subscribe counts apart", call_n(s, 1, "SUBSCRIBE", "c1"))
    obs("client list ssub", client_fields(p, s_id))
    obs("shard subscribed: GET refused", s.call("GET", "k"))
    obs("shard subscribed: PING", s.call("PING"))
    obs("spublish", p.call("SPUBLISH", "c1", "hello"))
    obs("smessage bytes", s.read())
    obs("publish reaches the channel only", p.call("PUBLISH", "c1", "plain"))
    obs("message bytes", s.read())
    obs("spublish nobody", p.call("SPUBLISH", "zz", "x"))
    obs("nothing else", quiet(s))
    obs("pubsub shardchannels", sorted_array(p.call("PUBSUB", "SHARDCHANNELS")))
    obs("pubsub shardchannels c1", p.call("PUBSUB", "SHARDCHANNELS", "c1"))
    obs("pubsub shardnumsub", p.call("PUBSUB", "SHARDNUMSUB", "c1", "zz", "c1"))
    obs("pubsub numsub leaves shard out", p.call("PUBSUB", "NUMSUB", "c2"))
    obs("info shard channels", re.findall(rb"pubsubshard_channels:\d+",
                                          harness.parse_reply(p.call("INFO", "stats"))))
    obs("sunsubscribe c2 unknown", call_n(s, 2, "SUNSUBSCRIBE", "c2", "nope"))
    obs("unsubscribe channels", call_n(s, 1, "UNSUBSCRIBE"))
    obs("still shard subscribed: GET refused", s.call("GET", "k"))
    obs("sunsubscribe all", call_n(s, 1, "SUNSUBSCRIBE"))
    obs("no subscription: GET runs", s.call("GET", "k"))
    obs("flags after sunsubscribe", client_fields(p, s_id))
    obs("spublish arity", p.call("SPUBLISH", "x"))
    obs("ssubscribe arity", p.call("SSUBSCRIBE"))
    obs("multi", p.call("MULTI"))
    obs("ssubscribe queued", p.call("SSUBSCRIBE", "q"))
    obs("spublish queued", p.call("SPUBLISH", "q", "m"))
    obs("exec refuses ssubscribe", p.call("EXEC"))
    r3 = RespClient(port)
    r3.call("HELLO", "3")
    obs("resp3 ssubscribe", call_n(r3, 1, "SSUBSCRIBE", "r1"))
    obs("resp3 spublish", p.call("SPUBLISH", "r1", "hi"))
    obs("resp3 smessage push", r3.read())
    obs("resp3 GET allowed", r3.call("GET", "k"))
    obs("resp3 self spublish (push, then reply)", call_n(r3, 2, "SPUBLISH", "r1", "self"))
    obs("resp3 sunsubscribe", call_n(r3, 1, "SUNSUBSCRIBE"))
    obs("reset drops shard", call_n(r3, 1, "SSUBSCRIBE", "r2") + r3.call("RESET"))
    obs("after reset: shardnumsub", p.call("PUBSUB", "SHARDNUMSUB", "r2"))
    for c in (s, p, r3):
        c.close()


def slow_subscriber(server, report):
    """A subscriber that never reads is disconnected by the output limit; others are served."""
    slow = socket.create_connection(("127.0.0.1", server.port))
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    slow.sendall(encode_command("SUBSCRIBE", "big"))
    time.sleep(SETTLE)
    pub, other = RespClient(server.port), RespClient(server.port)
    rss_before = server.rss_kb()
    message = b"m" * (1024 * 1024)
    counts = []
    for i in range(80):
        counts.append(harness.parse_reply(pub.call("PUBLISH", "big", message)))
        if i % 10 == 0:
            report.equal(other.call("SET", "k%d" % i, "v"), b"+OK\r\n",
                         "other clients are served while a subscriber lags (%d)" % i)
    report.check(counts[0] == 1, "the slow subscriber received the first messages", repr(counts))
    report.check(counts[-1] == 0, "the slow subscriber was disconnected", repr(counts[-10:]))
    # Disconnected once its unsent output reached 32 MB (plus what the sockets hold).
    delivered = counts.count(1)
    report.check(20 <= delivered < 60, "disconnected near the 32 MB hard limit",
                 "%d messages of 1 MB delivered" % delivered)
    report.equal(pub.call("PUBSUB", "NUMSUB", "big"), b"*2\r\n$3\r\nbig\r\n:0\r\n",
                 "the disconnected subscriber is gone")
    rss_after = server.rss_kb()
    report.check(rss_after - rss_before < 128 * 1024, "memory stays bounded",
                 "RSS %d kB -> %d kB" % (rss_before, rss_after))
    slow.settimeout(5.0)
    received, closed = 0, False
    try:
        while True:
            data = slow.recv(1 << 20)
            if not data:
                closed = True
                break
            received += len(data)
    except (socket.timeout, ConnectionResetError):
        closed = True
    report.check(closed, "the slow subscriber's connection is closed")
    report.check(received < 48 * 1024 * 1024, "it got less than everything published",
                 "%d bytes" % received)
    report.check("output buffer limits" in server.log(), "a warning is logged", server.log())
    report.equal(other.call("GET", "k0"), b"$1\r\nv\r\n", "the server still serves")
    for c in (pub, other):
        c.close()
    slow.close()


def against_redis(report, binary):
    with main_support.beside_oracle(report, binary, scenarios) as (ours, _):
        slow_subscriber(ours, report)


def main():
    main_support.run_checks("test_pubsub", __doc__, against_redis)


if __name__ == "__main__":
    main()
