"""Authentication in a cluster: 3 nodes with requirepass and a shared [cluster] secret serve an
authenticated client as one server (relayed reads and writes, split MSET/MGET, fan-out DBSIZE and
KEYS, a transaction and a blocking pop on a peer's keys, pub/sub across nodes) while clients that
did not AUTH get NOAUTH everywhere. A rogue client that sends the peer handshake without the
secret, or with a wrong one, is refused and disconnected before anything it pipelined behind the
handshake runs. The handshake is a challenge-response: a fake peer records what a node sends when
it links to it; replaying those bytes to a real node (with or without asking for a fresh
challenge) is refused and nothing behind them runs, and the node refuses to relay anything to the
impostor, which cannot prove the secret back. A node with a different secret, or with a different member list (ring), has its
links refused: keys that would travel between it and the others fail with a clear error instead
of landing on the wrong node, and CLUSTER INFO/NODES and the logs say why. Nodes with requirepass
but no secret refuse each other's links (nothing proves who they are).
"""

import os
import re
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import main_support  # noqa: E402

PASSWORD = "pw-123"
SECRET = "cluster secret 1"


def config(secret=lambda i: SECRET, password=PASSWORD):
    """A Cluster `configure` callback giving every node requirepass and node i the cluster
    secret secret(i) (none when empty)."""
    def configure(i, port, ports):
        return harness.cluster_config(
            port, ports, cluster_options={"secret": secret(i)} if secret(i) else None,
            extra='[security]\nrequirepass = "%s"\n' % password)
    return configure


def client(port):
    c = harness.RespClient(port)
    reply = c.call("AUTH", PASSWORD)
    assert reply == b"+OK\r\n", reply
    return c


def call(port, *argv):
    with client(port) as c:
        return c.call(*argv)


def owners(port, keys):
    with client(port) as c:
        return [harness.parse_reply(c.call("CLUSTER", "OWNER", k)).decode() for k in keys]


def info_fields(port, *argv):
    text = harness.parse_reply(call(port, *argv)).decode()
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def check_serving(report, cluster):
    ports = cluster.ports
    keys = ["ak:%d" % i for i in range(60)]
    where = owners(ports[0], keys)
    report.check(len(set(where)) == 3, "the sample keys spread over the 3 nodes", repr(set(where)))
    with client(ports[0]) as c:
        for k in keys:
            c.call("SET", k, "v-" + k)
    with client(ports[1]) as c:
        got = [c.call("GET", k) for k in keys]
    report.equal(got, [b"$%d\r\nv-%s\r\n" % (len(k) + 2, k.encode()) for k in keys],
                 "values written through node 1 read back through node 2 (relayed both ways)")
    with client(ports[2]) as c:
        report.equal(c.call("MSET", "m1", "a", "m2", "b", "m3", "c"), b"+OK\r\n", "split MSET")
        report.equal(harness.parse_reply(c.call("MGET", "m1", "m2", "m3", "ak:0")),
                     [b"a", b"b", b"c", b"v-ak:0"], "split MGET")
        report.equal(c.call("DBSIZE"), b":%d\r\n" % (len(keys) + 3), "fan-out DBSIZE")
        report.equal(len(harness.parse_reply(c.call("KEYS", "ak:*"))), len(keys), "fan-out KEYS")

    # A transaction on a peer's keys (hash tag keeps them together).
    tag = next(t for t in ("{t%d}" % i for i in range(100))
               if owners(ports[0], [t])[0] != cluster.addresses[0])
    with client(ports[0]) as c:
        c.call("SET", tag + "a", "1")
        report.equal(c.call("WATCH", tag + "a"), b"+OK\r\n", "WATCH of a peer's key")
        c.call("MULTI")
        c.call("INCR", tag + "a")
        c.call("SET", tag + "b", "x")
        report.equal(c.call("EXEC"), b"*2\r\n:2\r\n+OK\r\n", "EXEC of a transaction on a peer")

    # A blocking pop relayed to the owner, served by a push through another node.
    remote = next(k for k, o in zip(keys, where) if o != cluster.addresses[0])
    with client(ports[0]) as waiter, client(ports[1]) as pusher:
        waiter.call("DEL", "bl" + remote)
        waiter.send(harness.encode_command("BLPOP", "bl" + remote, "10"))
        time.sleep(0.2)
        pusher.call("RPUSH", "bl" + remote, "item")
        report.equal(harness.parse_reply(waiter.read()), [b"bl" + remote.encode(), b"item"],
                     "BLPOP relayed to the owner is served by a push through another node")

    # Pub/sub across nodes.
    with client(ports[1]) as sub, client(ports[2]) as pub:
        sub.call("SUBSCRIBE", "news")
        report.equal(pub.call("PUBLISH", "news", "hello"), b":1\r\n",
                     "PUBLISH through node 3 reaches the subscriber on node 2")
        report.equal(harness.parse_reply(sub.read()), [b"message", b"news", b"hello"],
                     "the subscriber gets the message")

    for port in ports:
        with harness.RespClient(port) as c:
            report.equal(c.call("GET", remote), b"-NOAUTH Authentication required.\r\n",
                         "an unauthenticated client gets NOAUTH on node %d" % port)
        fields = info_fields(port, "CLUSTER", "INFO")
        report.equal((fields.get("cluster_state"), fields.get("cluster_links_refused"),
                      fields.get("cluster_secret")), ("ok", "0", "yes"),
                     "CLUSTER INFO: ok, no refused links, secret set")


def check_rogue(report, cluster):
    port = cluster.ports[0]
    fp = info_fields(port, "CLUSTER", "INFO")["cluster_ring_fingerprint"]
    me = cluster.addresses[1]
    challenge = ("RINGKV.CHALLENGE", me, "ab" * 16)
    no_challenge = "proof without a challenge (a replayed handshake, or a node of an older version)"
    # (label, handshake frames, reason); after a challenge the node first answers its nonce.
    attempts = [
        ("no proof", [("RINGKV.PEER", me, fp)], "no proof of the cluster secret"),
        ("proof without challenge", [("RINGKV.PEER", me, fp, "00" * 32)], no_challenge),
        ("wrong proof", [challenge, ("RINGKV.PEER", me, fp, "00" * 32)], "wrong cluster secret"),
        ("wrong proof length", [challenge, ("RINGKV.PEER", me, fp, "x")], "wrong cluster secret"),
        ("malformed", [("RINGKV.PEER",)], "malformed handshake"),
        ("malformed challenge", [("RINGKV.CHALLENGE", me, "not-a-nonce")], "malformed handshake"),
    ]
    for label, handshake, reason in attempts:
        for authenticated in (False, True):
            c = client(port) if authenticated else harness.RespClient(port)
            with c:
                # Requests pipelined behind the handshake must never run (as a peer's or at all).
                c.send(b"".join(harness.encode_command(*f) for f in handshake) +
                       harness.encode_command("SET", "rogue", label) +
                       harness.encode_command("RINGKV.RESP3", "GET", "rogue"))
                data, closed = c.read_available(timeout=1.0)
                who = "%s (%s)" % (label, "after AUTH" if authenticated else "unauthenticated")
                refusal = b"-ERR peer link refused: %s\r\n" % reason.encode()
                if handshake[0][0] == "RINGKV.CHALLENGE" and len(handshake) > 1:
                    report.check(re.fullmatch(b"\\+[0-9a-f]{32}\r\n" + re.escape(refusal), data),
                                 "rogue handshake challenged, then refused: " + who, repr(data))
                else:
                    report.equal(data, refusal, "rogue handshake refused: " + who)
                report.check(closed, "the rogue connection is closed: " + who)
    report.equal(call(port, "EXISTS", "rogue"), b":0\r\n",
                 "nothing the rogue clients pipelined ran")
    with harness.RespClient(port) as c:
        report.equal(c.call("RINGKV.RESP3", "GET", "x")[:24], b"-ERR unknown command 'RI",
                     "the relay prefix is an unknown command outside a peer link")
    logs = cluster.nodes[0].log(tail=None)
    report.check("refused a peer link" in logs and "wrong cluster secret" in logs,
                 "the node logs the refused handshakes", logs[-1500:])
    report.check(logs.count("no proof of the cluster secret") <= 2,
                 "each refusal is logged once, not per attempt", logs[-1500:])


class FakePeer:
    """A listener on a cluster member's address that plays the peer handshake on every connection
    it gets: it records each frame nodes send it, answers a challenge with a nonce of its own and
    the proof with the fingerprint it was sent and a made-up proof (it does not know the
    secret)."""

    def __init__(self, port):
        self.connections = []  # per connection: [raw bytes, [frames]]
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(16)
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            record = [b"", []]
            self.connections.append(record)
            threading.Thread(target=self._serve, args=(conn, record), daemon=True).start()

    @staticmethod
    def _serve(conn, record):
        with conn:
            conn.settimeout(5.0)
            reader = harness.ReplyReader(conn)
            try:
                while True:
                    raw = reader.read()
                    frame = harness.parse_reply(raw)
                    record[0] += raw
                    record[1].append(frame)
                    if frame[0] == b"RINGKV.CHALLENGE":
                        conn.sendall(b"+" + b"cd" * 16 + b"\r\n")
                    elif frame[0] == b"RINGKV.PEER" and len(frame) > 2:
                        conn.sendall(b"+%s %s\r\n" % (frame[2], b"00" * 32))
            except (OSError, ConnectionError):
                pass

    def close(self):
        self.listener.close()
        self.thread.join(5)


def check_replay(report, binary):
    """Nodes 1 and 2 are real; node 3's address is a fake peer's that captures their handshakes."""
    ports = harness.free_ports(3)
    fake_addr = "127.0.0.1:%d" % ports[2]
    fake = FakePeer(ports[2])
    nodes = [harness.ClusterNode(binary, ports[i], config()(i, ports[i], ports), "replay%d" % i)
             for i in range(2)]
    try:
        for node in nodes:
            node.start()
        to_fake = keys_owned(ports[0], fake_addr, n=1)[0]
        reply = call(ports[0], "SET", to_fake, "client data")
        report.equal(reply, b"-ERR peer %s unavailable: link refused (the peer did not prove the "
                     b"cluster secret)\r\n" % fake_addr.encode(),
                     "a node refuses to use a link to an impostor that cannot prove the secret")
        time.sleep(0.3)
        seen = [[f[0] for f in frames] for _, frames in fake.connections]
        report.check(seen and all(s == [b"RINGKV.CHALLENGE", b"RINGKV.PEER"] for s in seen),
                     "the impostor saw handshakes and no relayed request (nor a ping)", repr(seen))
        report.check(all(b"client data" not in raw for raw, _ in fake.connections),
                     "no client data reached the impostor")
        captured = [(raw, frames) for raw, frames in fake.connections
                    if len(frames) == 2 and frames[0][1] == nodes[0].address.encode()]
        report.check(captured, "node 1's handshake was captured", repr(fake.connections))
        if not captured:
            return
        raw, frames = captured[0]
        report.check(len(frames[1]) == 4 and re.fullmatch(rb"[0-9a-f]{64}", frames[1][3]),
                     "the captured handshake carries a proof", repr(frames[1]))
        # Replay node 1's captured handshake to node 2, which shares the secret, with requests
        # pipelined behind it: once as captured (asking for a challenge, whose fresh nonce the
        # replayed proof does not answer), once as the proof alone.
        target = keys_owned(ports[0], nodes[1].address, n=1)[0]
        behind = (harness.encode_command("SET", target, "replayed") +
                  harness.encode_command("RINGKV.RESP3", "SET", target, "replayed"))
        for label, data, expected in [
                ("as captured", raw, rb"\+[0-9a-f]{32}\r\n-ERR peer link refused: wrong "
                 rb"cluster secret\r\n"),
                ("proof alone", harness.encode_command(*frames[1]),
                 rb"-ERR peer link refused: proof without a challenge \(a replayed handshake, or "
                 rb"a node of an older version\)\r\n")]:
            with harness.RespClient(ports[1]) as c:
                c.send(data + behind)
                got, closed = c.read_available(timeout=1.0)
            report.check(re.fullmatch(expected, got), "a replayed handshake is refused (%s)" % label,
                         repr(got))
            report.check(closed, "the replaying connection is closed (%s)" % label)
        report.equal(call(ports[1], "EXISTS", target), b":0\r\n",
                     "nothing pipelined behind the replayed handshakes ran")
        # The real nodes still link to each other (a fresh challenge each time).
        report.equal(call(ports[0], "SET", target, "v"), b"+OK\r\n",
                     "node 1 still relays to node 2")
        report.equal(call(ports[1], "GET", target), b"$1\r\nv\r\n", "and node 2 stored it")
    finally:
        for node in nodes:
            node.stop()
            node.cleanup()
        fake.close()


def keys_owned(port, address, n=5, prefix="x:"):
    keys = ["%s%d" % (prefix, i) for i in range(200)]
    return [k for k, o in zip(keys, owners(port, keys)) if o == address][:n]


def check_wrong_secret(report, binary):
    configure = config(secret=lambda i: SECRET if i < 2 else "another secret")
    with harness.Cluster(binary, 3, name="authsecret", configure=configure) as cluster:
        ports, addrs = cluster.ports, cluster.addresses
        odd = keys_owned(ports[0], addrs[2])
        good = keys_owned(ports[0], addrs[1])
        reply = call(ports[0], "SET", odd[0], "v")
        report.equal(reply, b"-ERR peer %s unavailable: link refused (wrong cluster secret)\r\n"
                     % addrs[2].encode(), "a key of the node with another secret fails clearly")
        report.equal(call(ports[0], "SET", good[0], "v"), b"+OK\r\n",
                     "keys of the agreeing peer still work")
        reply = call(ports[2], "GET", good[0])
        report.equal(reply, b"-ERR peer %s unavailable: link refused (wrong cluster secret)\r\n"
                     % addrs[1].encode(), "the odd node cannot reach the others' keys either")
        report.equal(call(ports[0], "EXISTS", odd[0]), b"-ERR peer %s unavailable: link refused "
                     b"(wrong cluster secret)\r\n" % addrs[2].encode(), "and keeps failing")
        fields = info_fields(ports[0], "CLUSTER", "INFO")
        report.equal(fields.get("cluster_state"), "misconfigured",
                     "CLUSTER INFO shows misconfigured")
        nodes = harness.parse_reply(call(ports[0], "CLUSTER", "NODES")).decode()
        line = [ln for ln in nodes.splitlines() if ln.startswith(addrs[2] + " ")]
        # (Its own handshakes do not prove who it is, so they mark nothing here.)
        report.check(line and "refused-by-peer:wrong_cluster_secret" in line[0],
                     "CLUSTER NODES marks the peer as refusing this node's links", nodes)
        logs = cluster.logs(tail=None)
        report.check("refuses this node's links: wrong cluster secret" in logs,
                     "the log says why the peer's keys fail", logs[-2000:])


def check_different_ring(report, binary):
    # Node 3 lists a fourth member the others do not know: its ring differs.
    ghost = "127.0.0.1:%d" % harness.free_port()
    base = config(secret=lambda i: SECRET)

    def configure(i, port, ports):
        if i < 2:
            return base(i, port, ports)
        return base(i, port, ports).replace("peers = [", 'peers = ["%s", ' % ghost)

    with harness.Cluster(binary, 3, name="authring", configure=configure) as cluster:
        ports, addrs = cluster.ports, cluster.addresses
        # Keys node 3 believes node 1 owns: relayed there, node 1 would store them where the
        # others never look. They must fail instead.
        keys = ["r:%d" % i for i in range(300)]
        theirs = owners(ports[2], keys)
        ours = owners(ports[0], keys)
        moved = [k for k, t, o in zip(keys, theirs, ours) if t == addrs[0]]
        report.check(len(moved) > 0, "node 3 routes some keys to node 1")
        with client(ports[2]) as c:
            replies = [c.call("SET", k, "v") for k in moved[:10]]
        bad = [r for r in replies if b"link refused (ring mismatch" not in r]
        report.equal(bad, [], "node 3's writes for node 1 fail with a ring mismatch")
        with client(ports[0]) as c:
            stored = [c.call("EXISTS", k) for k in moved[:10]
                      if ours[keys.index(k)] != addrs[2]]
        report.check(all(r == b":0\r\n" for r in stored),
                     "nothing node 3 sent landed on nodes 1 and 2", repr(stored))
        to_three = [k for k, o in zip(keys, ours) if o == addrs[2]][:3]
        with client(ports[0]) as c:
            replies = [c.call("GET", k) for k in to_three]
        report.check(all(b"link refused (ring mismatch" in r for r in replies),
                     "node 1's requests for node 3's keys fail with a ring mismatch",
                     repr(replies))
        states = [info_fields(p, "CLUSTER", "INFO").get("cluster_state") for p in ports]
        report.check(states[0] == "misconfigured" and states[2] == "misconfigured",
                     "CLUSTER INFO shows misconfigured on both sides", repr(states))
        nodes = harness.parse_reply(call(ports[0], "CLUSTER", "NODES")).decode()
        report.check("ring-mismatch" in nodes, "CLUSTER NODES flags the ring mismatch", nodes)
        report.check("ring mismatch" in cluster.logs(tail=None), "the logs say 'ring mismatch'")


def check_password_without_secret(report, binary):
    with harness.Cluster(binary, 2, name="authnosecret",
                         configure=config(secret=lambda i: "")) as cluster:
        ports, addrs = cluster.ports, cluster.addresses
        remote = keys_owned(ports[0], addrs[1], n=1)[0]
        reply = call(ports[0], "GET", remote)
        report.check(b"link refused (authentication required" in reply,
                     "with requirepass but no secret, peers refuse each other's links",
                     repr(reply))


def check_cluster(report, binary):
    """A cluster sharing the secret serves, and rogue handshakes leave it serving."""
    with harness.Cluster(binary, 3, name="auth", configure=config()) as cluster:
        check_serving(report, cluster)
        check_rogue(report, cluster)
        # The rogue attempts marked nothing: the cluster still serves.
        report.equal(info_fields(cluster.ports[0], "CLUSTER", "INFO").get("cluster_state"), "ok",
                     "rogue handshakes do not mark any member as refused")
        for node in cluster.nodes:
            harness.check_clean_exit(report, node)


def main():
    main_support.run_checks("test_auth_cluster", __doc__, check_cluster, check_replay,
                            check_wrong_secret, check_different_ring,
                            check_password_without_secret)


if __name__ == "__main__":
    main()
