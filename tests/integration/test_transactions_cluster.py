"""Transactions through a 3-node cluster: a MULTI ... EXEC whose keys all live on a peer runs
there as one block and answers EXEC's array; one whose commands touch several nodes runs as a
cross-node transaction (test_cross_transactions.py has more), while a single command whose own
keys span nodes is refused with CROSSSLOT and EXEC answers EXECABORT; keyless commands (PING,
ECHO) mix with either;
hash-tagged keys share one transaction; a WATCH of a peer's key is invalidated by a write (or a
FLUSHALL) arriving at a third node (RESP2 and RESP3 null replies) and survives a no-op write.

    /usr/bin/python3 test_transactions_cluster.py --server build/ringkv-server
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import RespClient  # noqa: E402


def bulk(s):
    return b"$%d\r\n%s\r\n" % (len(s), s.encode())


def key_owned_by(client, address, prefix):
    """A key whose owner (CLUSTER OWNER asked through `client`) is `address`."""
    for i in range(10000):
        key = "%s:%d" % (prefix, i)
        if client.call("CLUSTER", "OWNER", key) == bulk(address):
            return key
    raise RuntimeError("no key owned by " + address)


def watched_exec(a, b, key, write, proto=2):
    """`a` WATCHes `key`, `b` runs `write`, then `a` runs MULTI; GET key; EXEC: EXEC's reply."""
    a.call("HELLO", str(proto))
    a.call("WATCH", key)
    b.call(*write)
    a.call("MULTI")
    a.call("TYPE", key)
    result = a.call("EXEC")
    a.call("HELLO", "2")
    return result


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_transactions_cluster")
    with harness.Cluster(args.server, 3, name="transactions") as cluster:
        p1, p2, p3 = cluster.ports
        _, a2, a3 = cluster.addresses
        with RespClient(p1) as probe:
            on2 = key_owned_by(probe, a2, "tx")
            on2b = key_owned_by(probe, a2, "tx2")
            on3 = key_owned_by(probe, a3, "tx")
            # A hash tag owned by the peer: "{tN}" with the first N whose tag node 2 owns.
            tag = "{%s}" % key_owned_by(probe, a2, "t")
        a, b = RespClient(p1), RespClient(p3)

        # 1. All keys on a peer: the block runs there and EXEC answers every reply.
        report.equal(a.call("MULTI"), b"+OK\r\n", "MULTI")
        report.equal(a.call("SET", on2, "1"), b"+QUEUED\r\n", "SET for a peer's key is queued")
        a.call("INCR", on2)
        a.call("RPUSH", on2b, "x", "y")
        a.call("GET", on2)
        report.equal(a.call("EXEC"), b"*4\r\n+OK\r\n:2\r\n:2\r\n" + bulk("2"),
                     "EXEC of a peer's transaction")
        with RespClient(p2) as owner:
            report.equal(owner.call("GET", on2), bulk("2"), "the writes landed on the owner")
            report.equal(owner.call("LLEN", on2b), b":2\r\n", "the second key too")

        # 2. Commands for keys on two nodes: one transaction over both.
        a.call("MULTI")
        a.call("SET", on2, "10")
        report.equal(a.call("SET", on3, "x"), b"+QUEUED\r\n", "a key on another node is queued")
        report.equal(a.call("EXEC"), b"*2\r\n+OK\r\n+OK\r\n", "EXEC over two nodes")
        report.equal(a.call("MGET", on2, on3), b"*2\r\n" + bulk("10") + bulk("x"),
                     "both parts applied")
        a.call("SET", on2, "2")
        a.call("DEL", on3)
        # A single command whose keys span nodes: CROSSSLOT, and EXEC aborts.
        a.call("MULTI")
        a.call("SET", on2, "10")
        crossed = a.call("RENAME", on2, on3)
        report.check(crossed.startswith(b"-CROSSSLOT"), "CROSSSLOT inside MULTI", repr(crossed))
        report.equal(a.call("EXEC"),
                     b"-EXECABORT Transaction discarded because of previous errors.\r\n",
                     "EXEC after CROSSSLOT aborts")
        report.equal(a.call("GET", on2), bulk("2"), "the aborted transaction wrote nothing")
        report.equal(a.call("EXISTS", on3), b":0\r\n", "nor on the other node")

        # 3. Keyless commands mix with a peer's keys, and run alone.
        a.call("MULTI")
        a.call("PING")
        a.call("SET", on2, "3")
        a.call("ECHO", "hi")
        report.equal(a.call("EXEC"), b"*3\r\n+PONG\r\n+OK\r\n" + bulk("hi"),
                     "PING and ECHO beside a peer's key")
        a.call("MULTI")
        a.call("PING", "p")
        a.call("ECHO", "e")
        report.equal(a.call("EXEC"), b"*2\r\n" + bulk("p") + bulk("e"), "keyless transaction")

        # 4. Hash-tagged keys in one transaction (their owner is the tag's).
        a.call("MULTI")
        a.call("SET", tag + "a", "1")
        a.call("SET", tag + "b", "2")
        a.call("MGET", tag + "a", tag + "b")
        report.equal(a.call("EXEC"), b"*3\r\n+OK\r\n+OK\r\n*2\r\n" + bulk("1") + bulk("2"),
                     "hash-tagged keys in one transaction")
        with RespClient(p2) as owner:
            report.equal(owner.call("GET", tag + "b"), bulk("2"), "tagged keys live on the owner")

        # 5. WATCH of a peer's key, written through a third node: EXEC null (RESP2 and RESP3).
        report.equal(watched_exec(a, b, on2, ["SET", on2, "w"]), b"*-1\r\n",
                     "write via another node fails the WATCH (RESP2)")
        report.equal(watched_exec(a, b, on2, ["SET", on2b + ":o", "v"], proto=3),
                     b"*1\r\n+string\r\n", "a write to another key keeps the WATCH")
        report.equal(watched_exec(a, b, on2, ["APPEND", on2, "x"], proto=3), b"_\r\n",
                     "write via another node fails the WATCH (RESP3)")
        b.call("SADD", on2b + ":s", "m")
        report.equal(watched_exec(a, b, on2b + ":s", ["SADD", on2b + ":s", "m"]),
                     b"*1\r\n+set\r\n", "a no-op write keeps the WATCH")
        report.equal(watched_exec(a, b, on2, ["FLUSHALL"]), b"*-1\r\n",
                     "FLUSHALL via another node fails the WATCH of an existing key")
        report.equal(watched_exec(a, b, on2, ["FLUSHALL"]), b"*1\r\n+none\r\n",
                     "FLUSHALL keeps the WATCH of a missing key")
        report.equal(a.call("UNWATCH"), b"+OK\r\n", "UNWATCH")

        a.close()
        b.close()
        for node in cluster.nodes:
            report.check(node.alive(), "%s still running" % node.name, node.log())
    report.finish()


if __name__ == "__main__":
    main()
