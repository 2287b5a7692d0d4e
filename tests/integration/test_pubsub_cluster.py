"""Pub/Sub through a 3-node cluster: a PUBLISH on any node reaches the matching subscribers on
every node exactly once and counts them all; pattern subscriptions work across nodes; pipelined
publishes arrive in order; PUBSUB CHANNELS/NUMSUB/NUMPAT answer for the whole cluster in RESP2
and RESP3; subscriptions stay local to their node; and with a peer killed, PUBLISH counts fewer
receivers but still answers promptly; a PUBLISH in a script or a transaction reaches every node
too, counting the receivers where it ran. Sharded pub/sub: a shard channel lives on the node that
owns its name, so SPUBLISH through any node is relayed to that one node only (not fanned out),
which delivers to subscribers on every node exactly once and counts them all; SSUBSCRIBE of
channels with different owners is CROSSSLOT; PUBSUB SHARDCHANNELS/SHARDNUMSUB answer for the whole
cluster; an unsubscribe or a disconnect is counted out.

    /usr/bin/python3 test_pubsub_cluster.py --server build/ringkv-server
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from blocking import SETTLE, call_n, quiet  # noqa: E402
from harness import RespClient, encode_command  # noqa: E402


def confirm(kind, name, count):
    """A RESP2 (un)subscribe confirmation."""
    kind, name = kind.encode(), name.encode()
    return b"*3\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n:%d\r\n" % (len(kind), kind, len(name), name, count)


def message(channel, payload):
    return encode_command("message", channel, payload)


def pmessage(pattern, channel, payload):
    return encode_command("pmessage", pattern, channel, payload)


def pairs(raw):
    """A NUMSUB reply as a list of (channel, count)."""
    v = harness.parse_reply(raw)
    return [(v[i], v[i + 1]) for i in range(0, len(v), 2)]


def smessage(channel, payload):
    return encode_command("smessage", channel, payload)


def owned_by(client, address, prefix):
    """A channel name whose owner (CLUSTER OWNER asked through `client`) is `address`."""
    for i in range(10000):
        name = "%s:%d" % (prefix, i)
        if client.call("CLUSTER", "OWNER", name) == ("$%d\r\n%s\r\n" % (
                len(address), address)).encode():
            return name
    raise RuntimeError("no channel owned by " + address)


def relayed(port):
    """INFO cluster's relayed_requests of the node at `port`."""
    with RespClient(port) as c:
        for line in harness.parse_reply(c.call("INFO", "cluster")).decode().splitlines():
            if line.startswith("relayed_requests:"):
                return int(line.split(":")[1])
    return -1


def check_sharded(report, cluster):
    """SSUBSCRIBE on every node, SPUBLISH through a node that neither owns the channel nor has a
    subscriber: one relay to the owner, every subscriber served once, all of them counted."""
    p1, p2, p3 = cluster.ports
    with RespClient(p1) as c:
        chan = owned_by(c, cluster.addresses[1], "shard")
        other = owned_by(c, cluster.addresses[2], "shard")
    sub1, sub2, sub3 = RespClient(p1), RespClient(p2), RespClient(p3)
    report.equal(call_n(sub1, 1, "SSUBSCRIBE", chan), confirm("ssubscribe", chan, 1),
                 "SSUBSCRIBE on a node that does not own the channel")
    report.equal(call_n(sub2, 1, "SSUBSCRIBE", chan), confirm("ssubscribe", chan, 1),
                 "SSUBSCRIBE on the owner")
    sub3.call("HELLO", "3")
    report.equal(call_n(sub3, 1, "SSUBSCRIBE", chan),
                 b">3\r\n$10\r\nssubscribe\r\n$%d\r\n%s\r\n:1\r\n" % (
                     len(chan), chan.encode()), "RESP3 SSUBSCRIBE on the third node")
    report.equal(sub1.call("SSUBSCRIBE", chan, other),
                 b"-CROSSSLOT Keys in request don't hash to the same node\r\n",
                 "SSUBSCRIBE of channels with different owners is CROSSSLOT")
    time.sleep(SETTLE)
    with RespClient(p1) as pub:
        before = [relayed(p) for p in (p1, p2, p3)]
        report.equal(pub.call("SPUBLISH", chan, "hi"), b":3\r\n",
                     "SPUBLISH counts the subscribers of every node")
        after = [relayed(p) for p in (p1, p2, p3)]
        report.equal([a - b for a, b in zip(after, before)], [1, 0, 0],
                     "SPUBLISH is relayed to the owner only, which relays nothing")
        report.equal(sub1.read(), smessage(chan, "hi"), "subscriber on node 1 gets the smessage")
        report.equal(sub2.read(), smessage(chan, "hi"), "subscriber on the owner gets it")
        report.equal(sub3.read(), b">3\r\n$8\r\nsmessage\r\n$%d\r\n%s\r\n$2\r\nhi\r\n" % (
            len(chan), chan.encode()), "RESP3 subscriber on node 3 gets a push")
        report.check(quiet(sub1) and quiet(sub2) and quiet(sub3), "each message once")
        report.equal(pub.call("PUBLISH", chan, "plain"), b":0\r\n",
                     "PUBLISH does not reach shard subscribers")
        report.equal(sorted(harness.parse_reply(pub.call("PUBSUB", "SHARDCHANNELS", "shard:*"))),
                     [chan.encode()], "PUBSUB SHARDCHANNELS is the union")
        report.equal(pairs(pub.call("PUBSUB", "SHARDNUMSUB", chan, other)),
                     [(chan.encode(), 3), (other.encode(), 0)], "PUBSUB SHARDNUMSUB sums nodes")
        # Pipelined, from the owner's side too: in order, once each.
        with RespClient(p3) as pub3:
            pub3.send(b"".join(encode_command("SPUBLISH", chan, "p%d" % i) for i in range(50)))
            counts = {pub3.read() for _ in range(50)}
        report.equal(counts, {b":3\r\n"}, "pipelined SPUBLISH counts")
        report.equal(b"".join(sub1.read() for _ in range(50)),
                     b"".join(smessage(chan, "p%d" % i) for i in range(50)),
                     "pipelined smessages in order on node 1")
        for s in (sub2, sub3):
            for _ in range(50):
                s.read()
        report.equal(call_n(sub1, 1, "SUNSUBSCRIBE", chan), confirm("sunsubscribe", chan, 0),
                     "SUNSUBSCRIBE on node 1")
        sub3.close()
        time.sleep(SETTLE)
        report.equal(pub.call("SPUBLISH", chan, "last"), b":1\r\n",
                     "an unsubscribe and a disconnect are counted out")
        report.equal(sub2.read(), smessage(chan, "last"), "the owner's subscriber still gets it")
        report.check(quiet(sub1), "the unsubscribed client gets nothing")
    sub1.close()
    sub2.close()


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_pubsub_cluster")
    with harness.Cluster(args.server, 3, name="pubsub", request_timeout=2000,
                         connect_timeout=500) as cluster:
        p1, p2, p3 = cluster.ports
        pub = RespClient(p1)
        s1, s2, s3 = RespClient(p1), RespClient(p2), RespClient(p3)
        ps3 = RespClient(p3)

        # Subscriptions are local to the node a client is connected to.
        report.equal(call_n(s2, 1, "SUBSCRIBE", "news"),
                     confirm("subscribe", "news", 1), "subscribe on node 2")
        report.equal(call_n(s3, 2, "SUBSCRIBE", "news", "sport"),
                     confirm("subscribe", "news", 1) +
                     confirm("subscribe", "sport", 2), "subscribe on node 3")
        report.equal(call_n(ps3, 1, "PSUBSCRIBE", "n*"), confirm("psubscribe", "n*", 1),
                     "psubscribe on node 3")

        # 1. A publish on node 1 reaches nodes 2 and 3, each subscriber exactly once.
        report.equal(pub.call("PUBLISH", "news", "hello"), b":3\r\n",
                     "PUBLISH counts receivers on every node")
        report.equal(s2.read(), message("news", "hello"), "node 2 subscriber gets the message")
        report.equal(s3.read(), message("news", "hello"), "node 3 subscriber gets the message")
        report.equal(ps3.read(), pmessage("n*", "news", "hello"),
                     "node 3 pattern subscriber gets the pmessage")
        report.check(quiet(s1) and quiet(s2) and quiet(s3) and quiet(ps3),
                     "no duplicates anywhere")

        # 2. Published on node 2 (a subscriber's own node) and on node 3.
        report.equal(RespClient(p2).call("PUBLISH", "sport", "goal"), b":1\r\n",
                     "PUBLISH from node 2 reaches node 3")
        report.equal(s3.read(), message("sport", "goal"), "node 3 gets node 2's message")
        report.equal(RespClient(p3).call("PUBLISH", "news", "n3"), b":3\r\n",
                     "PUBLISH from node 3 counts its own and node 2's subscribers")
        got = [s2.read(), s3.read(), ps3.read()]
        report.equal(got, [message("news", "n3"), message("news", "n3"),
                           pmessage("n*", "news", "n3")], "node 3's publish delivered once each")
        report.equal(pub.call("PUBLISH", "nobody", "x"), b":1\r\n",
                     "only the pattern subscriber matches 'nobody'")
        report.equal(ps3.read(), pmessage("n*", "nobody", "x"), "pattern match across nodes")
        report.equal(pub.call("PUBLISH", "zzz", "x"), b":0\r\n", "no receiver anywhere")
        report.check(quiet(s2) and quiet(s3) and quiet(ps3), "still no duplicates")

        # 3. A subscriber on the publisher's node, in RESP3, and a RESP3 publisher.
        s1.call("HELLO", "3")
        report.equal(call_n(s1, 1, "SUBSCRIBE", "news"),
                     b">3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n", "RESP3 subscribe")
        r3pub = RespClient(p2)
        r3pub.call("HELLO", "3")
        report.equal(r3pub.call("PUBLISH", "news", "all"), b":4\r\n", "RESP3 publisher's count")
        report.equal(s1.read(), b">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$3\r\nall\r\n",
                     "RESP3 subscriber gets a push")
        report.equal([s2.read(), s3.read(), ps3.read()],
                     [message("news", "all"), message("news", "all"),
                      pmessage("n*", "news", "all")], "RESP2 subscribers elsewhere")

        # 4. Pipelined publishes arrive in order, once.
        pub.send(b"".join(encode_command("PUBLISH", "sport", "p%d" % i) for i in range(100)))
        replies = [pub.read() for _ in range(100)]
        report.check(all(r == b":1\r\n" for r in replies), "pipelined publish counts",
                     repr(set(replies)))
        got = b"".join(s3.read() for _ in range(100))
        report.equal(got, b"".join(message("sport", "p%d" % i) for i in range(100)),
                     "pipelined messages in order on node 3")
        report.check(quiet(s3), "no extra messages")

        # 4b. A PUBLISH that a script or a transaction runs (not fanned out: it runs on one
        # node) reaches every node's subscribers once too; it counts those of the node that ran
        # it, as Redis Cluster's does.
        on2 = owned_by(pub, cluster.addresses[1], "tx")
        on3 = owned_by(pub, cluster.addresses[2], "tx")
        push = b">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n"
        for what, request, want in (
                ("EVAL", ("EVAL", "return redis.call('publish', 'news', 'eval')", "0"), b":1\r\n"),
                ("MULTI on node 1", (), b"*1\r\n:1\r\n"),
                ("MULTI relayed whole to node 3", (on3,), b"*2\r\n+OK\r\n:2\r\n"),
                ("MULTI over nodes 2 and 3", (on2, on3),
                 b"*3\r\n+OK\r\n+OK\r\n:1\r\n")):
            text = what.split()[0].lower()
            if request and request[0] == "EVAL":
                got = pub.call(*request)
            else:
                pub.call("MULTI")
                for key in request:
                    pub.call("SET", key, "1")
                report.equal(pub.call("PUBLISH", "news", text), b"+QUEUED\r\n",
                             "PUBLISH queued in %s" % what)
                got = pub.call("EXEC")
            report.equal(got, want, "PUBLISH in %s counts the receivers where it ran" % what)
            payload = b"$%d\r\n%s\r\n" % (len(text), text.encode())
            report.equal([s1.read(), s2.read(), s3.read(), ps3.read()],
                         [push + payload, message("news", text), message("news", text),
                          pmessage("n*", "news", text)],
                         "PUBLISH in %s reaches every node's subscribers" % what)
            report.check(quiet(s1) and quiet(s2) and quiet(s3) and quiet(ps3),
                         "PUBLISH in %s delivered once" % what)

        # 5. PUBSUB answers for the whole cluster.
        extra = RespClient(p2)
        call_n(extra, 2, "SUBSCRIBE", "weather", "news")
        call_n(extra, 1, "PSUBSCRIBE", "w*")
        report.equal(sorted(harness.parse_reply(pub.call("PUBSUB", "CHANNELS"))),
                     [b"news", b"sport", b"weather"], "PUBSUB CHANNELS is the union")
        report.equal(sorted(harness.parse_reply(pub.call("PUBSUB", "CHANNELS", "*s*"))),
                     [b"news", b"sport"], "PUBSUB CHANNELS pattern")
        report.equal(pub.call("PUBSUB", "CHANNELS", "q*"), b"*0\r\n", "no channel matches")
        report.equal(pairs(pub.call("PUBSUB", "NUMSUB", "news", "sport", "none")),
                     [(b"news", 4), (b"sport", 1), (b"none", 0)], "PUBSUB NUMSUB sums nodes")
        report.equal(pub.call("PUBSUB", "NUMSUB"), b"*0\r\n", "PUBSUB NUMSUB without channels")
        report.equal(pub.call("PUBSUB", "NUMPAT"), b":2\r\n", "PUBSUB NUMPAT sums nodes")
        p3r = RespClient(p3)
        p3r.call("HELLO", "3")
        report.equal(p3r.call("PUBSUB", "NUMSUB", "news"), b"*2\r\n$4\r\nnews\r\n:4\r\n",
                     "RESP3 PUBSUB NUMSUB from node 3")
        report.equal(RespClient(p2).call("PUBSUB", "NUMPAT"), b":2\r\n", "NUMPAT from node 2")
        report.equal(pub.call("PUBSUB", "HELP")[:4], b"*14\r", "PUBSUB HELP answers locally")
        extra.close()
        time.sleep(SETTLE)
        report.equal(pairs(pub.call("PUBSUB", "NUMSUB", "news", "weather")),
                     [(b"news", 3), (b"weather", 0)], "a disconnect on node 2 is seen")

        check_sharded(report, cluster)

        # 6. A killed peer: PUBLISH counts fewer receivers and still answers promptly.
        cluster.kill(2)
        time.sleep(SETTLE)
        t0 = time.time()
        report.equal(pub.call("PUBLISH", "news", "after"), b":2\r\n",
                     "PUBLISH with node 3 down counts nodes 1 and 2")
        elapsed = time.time() - t0
        report.check(elapsed < 2.5, "and answers promptly", "%.2fs" % elapsed)
        report.equal([s1.read(), s2.read()],
                     [b">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nafter\r\n",
                      message("news", "after")], "the live subscribers get it")
        t0 = time.time()
        report.equal(pairs(pub.call("PUBSUB", "NUMSUB", "news")), [(b"news", 2)],
                     "PUBSUB NUMSUB without the dead node")
        report.equal(pub.call("PUBSUB", "NUMPAT"), b":0\r\n", "its patterns are gone too")
        report.check(time.time() - t0 < 5.0, "PUBSUB answers promptly too")
        for i in range(5):
            report.equal(RespClient(p2).call("PUBLISH", "news", "x%d" % i), b":2\r\n",
                         "repeated PUBLISH from node 2 with node 3 down (%d)" % i)

        for n in (0, 1):
            report.check(cluster.nodes[n].alive(), "node %d still running" % (n + 1),
                         cluster.nodes[n].log())
        check_shard_owner_restart(report, cluster)
    report.finish()


def check_shard_owner_restart(report, cluster):
    """A shard channel's owner killed and restarted forgets who has subscribers; the subscriber's
    node tells it again within its refresh period, and messages reach the subscriber again."""
    p1 = cluster.ports[0]
    with RespClient(p1) as c:
        chan = owned_by(c, cluster.addresses[1], "again")
    sub = RespClient(p1)
    report.equal(call_n(sub, 1, "SSUBSCRIBE", chan), confirm("ssubscribe", chan, 1),
                 "SSUBSCRIBE on node 1 to a channel of node 2")
    time.sleep(SETTLE)
    with RespClient(p1) as pub:
        report.equal(pub.call("SPUBLISH", chan, "before"), b":1\r\n", "delivered before")
        report.equal(sub.read(), smessage(chan, "before"), "the subscriber gets it")
    cluster.kill(1)
    cluster.restart(1)
    deadline = time.time() + 6.0
    reply = None
    with RespClient(p1) as pub:
        while time.time() < deadline:
            reply = pub.call("SPUBLISH", chan, "after")
            if reply == b":1\r\n":
                break
            time.sleep(0.2)
    report.equal(reply, b":1\r\n", "after the owner's restart SPUBLISH reaches node 1 again")
    data = b""
    while True:
        got, _ = sub.read_available(0.5)
        if not got:
            break
        data += got
    report.check(data.endswith(smessage(chan, "after")) and
                 data.count(b"smessage") == 1,
                 "the subscriber gets the message delivered after the refresh, once", repr(data))
    sub.close()


if __name__ == "__main__":
    main()
