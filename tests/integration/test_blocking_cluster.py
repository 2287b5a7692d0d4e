"""Blocking commands through a 3-node cluster: a BLPOP relayed to the key's owner waits on a link
of its own, so other clients' requests to that owner (which share the pooled links) keep flowing;
it is served by a push arriving through a third node; it times out with the right reply; the
blocked client's later pipelined requests wait behind it; and a client that disconnects while
blocked remotely is unblocked on the owner too; XREAD and XREADGROUP with BLOCK wait on the owner
the same way and are served by XADD through another node, and so does BZMPOP (served by a
GEOADD through another node).

    /usr/bin/python3 test_blocking_cluster.py --server build/ringkv-server
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import RespClient, encode_command  # noqa: E402


def key_owned_by(client, address, prefix):
    """A key whose owner (CLUSTER OWNER asked through `client`) is `address`."""
    for i in range(10000):
        key = "%s:%d" % (prefix, i)
        if client.call("CLUSTER", "OWNER", key) == ("$%d\r\n%s\r\n" % (len(address), address)).encode():
            return key
    raise RuntimeError("no key owned by " + address)


def blocked_clients(port):
    """INFO's blocked_clients on the node at `port`."""
    with RespClient(port) as c:
        info = harness.parse_reply(c.call("INFO", "clients"))
    for line in info.decode().splitlines():
        if line.startswith("blocked_clients:"):
            return int(line.split(":")[1])
    return -1


def check_streams(report, cluster):
    """6. Stream reads relayed to the owner: XREAD BLOCK '$' and XREADGROUP BLOCK '>' wait there
    and are served by XADDs sent through a third node; a timeout answers nil."""
    p1, p2, p3 = cluster.ports
    with RespClient(p1) as c:
        key = key_owned_by(c, cluster.addresses[1], "st")
        report.equal(c.call("XADD", key, "1-1", "f", "a"), b"$3\r\n1-1\r\n", "XADD relayed")
        report.equal(c.call("XGROUP", "CREATE", key, "g", "$"), b"+OK\r\n", "XGROUP relayed")
    reader, grouped = RespClient(p1), RespClient(p3)
    reader.send(encode_command("XREAD", "BLOCK", "0", "STREAMS", key, "$"))
    grouped.send(encode_command("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", key,
                                ">"))
    time.sleep(0.2)
    report.equal(blocked_clients(p2), 2, "two stream readers blocked on the owner")
    with RespClient(p3) as writer:
        writer.call("XADD", key, "2-1", "f", "b")
    entry = "*1\r\n*2\r\n$%d\r\n%s\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nb\r\n" % (
        len(key), key)
    for name, client in (("XREAD", reader), ("XREADGROUP", grouped)):
        client.sock.settimeout(5.0)
        report.equal(client.read(), entry.encode(), "relayed %s BLOCK served by XADD" % name)
    with RespClient(p2) as owner:
        report.equal(owner.call("XPENDING", key, "g", "-", "+", "10")[:40].split(b"\r\n")[:3],
                     [b"*1", b"*4", b"$3"], "the delivered entry is pending on the owner")
    report.equal(reader.call("XREAD", "BLOCK", "200", "STREAMS", key, "$"), b"*-1\r\n",
                 "relayed XREAD BLOCK times out with nil")
    reader.close()
    grouped.close()


def check_bzmpop(report, cluster):
    """A BZMPOP relayed to the owner waits there and is served by a GEOADD through a third node;
    its timeout answers as Redis's."""
    p1, p2, p3 = cluster.ports
    with RespClient(p1) as probe:
        key = key_owned_by(probe, cluster.addresses[1], "zm")
    waiter = RespClient(p1)
    waiter.send(encode_command("BZMPOP", "0", "1", key, "MAX", "COUNT", "2"))
    time.sleep(0.2)
    data, closed = waiter.read_available(0.2)
    report.check(data == b"" and not closed, "relayed BZMPOP blocks", repr(data))
    report.equal(blocked_clients(p2), 1, "BZMPOP blocked on the owner")
    with RespClient(p3) as pusher:
        report.equal(pusher.call("GEOADD", key, "13.361389", "38.115556", "Palermo"), b":1\r\n",
                     "GEOADD through a third node")
    waiter.sock.settimeout(5.0)
    report.equal(waiter.read(), ("*2\r\n$%d\r\n%s\r\n*1\r\n*2\r\n$7\r\nPalermo\r\n"
                                 "$16\r\n3479099956230698\r\n" % (len(key), key)).encode(),
                 "the relayed BZMPOP is served by the GEOADD")
    report.equal(waiter.call("BZMPOP", "0.2", "1", key, "MIN"), b"*-1\r\n",
                 "relayed BZMPOP timeout (RESP2)")
    waiter.close()


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_blocking_cluster")
    # One pooled link per peer: a BLPOP sharing it would hold up every other client's requests.
    with harness.Cluster(args.server, 3, name="blocking",
                         cluster_options={"pool-size": 1}) as cluster:
        p1, p2, p3 = cluster.ports
        a2 = cluster.addresses[1]
        with RespClient(p1) as probe:
            key = key_owned_by(probe, a2, "bl")
            other = key_owned_by(probe, a2, "plain")
        probe2 = RespClient(p1)
        probe2.call("SET", other, "v")

        # 1. A relayed BLPOP waits on the owner; other clients' requests to it are not held up.
        waiter = RespClient(p1)
        waiter.send(encode_command("BLPOP", key, "0"))
        time.sleep(0.2)
        data, closed = waiter.read_available(0.2)
        report.check(data == b"" and not closed, "relayed BLPOP blocks", repr(data))
        report.equal(blocked_clients(p2), 1, "the owner has one blocked client")
        t0 = time.time()
        for _ in range(200):
            probe2.call("GET", other)
        report.check(time.time() - t0 < 2.0, "requests to the owner from other clients flow",
                     "%.2fs for 200 GETs" % (time.time() - t0))
        with RespClient(p3) as pusher:
            report.equal(pusher.call("RPUSH", key, "x"), b":1\r\n", "push through a third node")
        waiter.sock.settimeout(5.0)
        reply = waiter.read()
        report.equal(reply, ("*2\r\n$%d\r\n%s\r\n$1\r\nx\r\n" % (len(key), key)).encode(),
                     "the relayed BLPOP is served by the push")
        report.equal(blocked_clients(p2), 0, "nobody blocked on the owner afterwards")

        # 2. Pipelined requests after a blocking command wait for its answer, in order.
        waiter.send(encode_command("BLPOP", key, "0") + encode_command("GET", other))
        time.sleep(0.2)
        data, _ = waiter.read_available(0.2)
        report.equal(data, b"", "the GET behind a blocked BLPOP waits")
        with RespClient(p2) as pusher:
            pusher.call("LPUSH", key, "y")
        waiter.sock.settimeout(5.0)
        report.equal(waiter.read(), ("*2\r\n$%d\r\n%s\r\n$1\r\ny\r\n" % (len(key), key)).encode(),
                     "BLPOP answered first")
        report.equal(waiter.read(), b"$1\r\nv\r\n", "then the GET")

        # 3. Timeout, RESP2 and RESP3.
        t0 = time.time()
        report.equal(waiter.call("BLPOP", key, "0.3"), b"*-1\r\n", "timeout reply (RESP2)")
        elapsed = time.time() - t0
        report.check(0.25 <= elapsed < 2.0, "timeout after about 0.3 s", "%.2fs" % elapsed)
        waiter.call("HELLO", "3")
        report.equal(waiter.call("BLPOP", key, "0.2"), b"_\r\n", "timeout reply (RESP3)")
        waiter.close()

        # 4. A client that disconnects while blocked remotely is unblocked on the owner.
        gone = RespClient(p1)
        gone.send(encode_command("BLPOP", key, "0"))
        time.sleep(0.2)
        report.equal(blocked_clients(p2), 1, "blocked on the owner")
        gone.close()
        deadline = time.time() + 3
        while time.time() < deadline and blocked_clients(p2) != 0:
            time.sleep(0.05)
        report.equal(blocked_clients(p2), 0, "released on the owner after the client left")
        with RespClient(p1) as c:
            c.call("RPUSH", key, "kept")
            report.equal(c.call("LPOP", key), b"$4\r\nkept\r\n",
                         "a push after the client left is not consumed by it")

        # 5. Blocking across owners is refused like any atomic multi-key command.
        with RespClient(p1) as c:
            k1 = key_owned_by(c, cluster.addresses[0], "x")
            k3 = key_owned_by(c, cluster.addresses[2], "y")
            report.equal(c.call("BLPOP", k1, k3, "0.1"),
                         b"-CROSSSLOT Keys in request don't hash to the same node\r\n",
                         "BLPOP over two owners is CROSSSLOT")
            report.equal(c.call("XREAD", "STREAMS", k1, k3, "0", "0"),
                         b"-CROSSSLOT Keys in request don't hash to the same node\r\n",
                         "XREAD over two owners is CROSSSLOT")
            report.equal(c.call("BZMPOP", "0.1", "2", k1, k3, "MIN"),
                         b"-CROSSSLOT Keys in request don't hash to the same node\r\n",
                         "BZMPOP over two owners is CROSSSLOT")
        check_bzmpop(report, cluster)
        check_streams(report, cluster)
        probe2.close()
    report.finish()


if __name__ == "__main__":
    main()
