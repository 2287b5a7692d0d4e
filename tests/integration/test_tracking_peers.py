#!/usr/bin/python3
"""Client-side caching across nodes when a key's owner is lost or changes.

A tracking client of node 1 reads keys other members own; their owners report the keys' next
change to node 1 (RINGKV.INVALIDATE). When an owner can no longer be counted on to do so, node 1
invalidates those keys itself, as if written, so that no client keeps a cached value the cluster
changes without telling it:

- the owner is killed and restarted (replication-factor 1): the restarted process knows nothing
  of the readers;
- the owner hangs (SIGSTOP) until health checks see it down: invalidations it would send are
  dropped while the link is down;
- the owner is killed and failed over (4 members, replication-factor 2, keys whose replica is not
  node 1): the new owner knows nothing of the readers.

Reads inside a transaction or a script that run on a peer are tracked as relayed reads are.
The owner also holds what other nodes' clients read to its tracking-table-max-keys, as Redis
holds its table: past it, keys are invalidated for their readers as if written.

Each case then checks that tracking works again: the key read anew through node 1 is invalidated
at its next write.

    /usr/bin/python3 test_tracking_peers.py --server build/ringkv-server
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cluster_support as cs  # noqa: E402
import harness  # noqa: E402
import replication_support as repl  # noqa: E402

WAIT = 5.0  # seconds an invalidation may take (health checks: 3 × 200 ms)


def invalidation(key):
    return b">2\r\n$10\r\ninvalidate\r\n*1\r\n$%d\r\n%s\r\n" % (len(key), key.encode())


def invalidated(client, keys, seconds, expected=None):
    """The keys of `keys` the pushes reaching `client` invalidate: those that came within
    `seconds`, or until all of `expected` (all of `keys` by default) came and 0.3 s more."""
    expected = set(keys if expected is None else expected)
    seen = set()
    deadline = time.time() + seconds * harness.timeout_scale()
    data = b""
    while time.time() < deadline:
        chunk, _ = client.read_available(0.2)
        data += chunk
        seen = {k for k in keys if invalidation(k) in data}
        if expected <= seen:
            deadline = min(deadline, time.time() + 0.3)
    client.sock.settimeout(10.0)
    return seen


def tracking_client(port, writer_port, keys):
    """`keys` written through node `writer_port`, then read by a RESP3 client of node `port` with
    tracking on, which is returned."""
    with harness.RespClient(writer_port) as w:
        for k in keys:
            w.call("SET", k, "v1")
    t = harness.RespClient(port)
    t.__enter__()
    t.call("HELLO", "3")
    assert t.call("CLIENT", "TRACKING", "on") == b"+OK\r\n"
    for k in keys:
        t.call("GET", k)
    return t


def keys_of(port, owner, count, prefix, copies_avoid=None):
    """`count` keys `owner` is the primary of (and, with `copies_avoid`, of which that member
    holds no copy)."""
    found = []
    i = 0
    while len(found) < count:
        batch = ["%s:%d" % (prefix, n) for n in range(i, i + 200)]
        i += 200
        for k, held in zip(batch, repl.copies_of(port, batch)):
            if held[0] == owner and copies_avoid not in held:
                found.append(k)
    return found[:count]


def write_until_ok(port, key, value, seconds=10.0):
    deadline = time.time() + seconds * harness.timeout_scale()
    reply = b""
    while time.time() < deadline:
        with harness.RespClient(port) as w:
            reply = w.call("SET", key, value)
        if reply == b"+OK\r\n":
            break
        time.sleep(0.1)
    return reply


def check_tracking_again(report, t, port, keys, label):
    """`keys` (their owner lost) are writable again through node `port`, and a key read anew
    through `t`'s node is invalidated at its next write."""
    report.equal(write_until_ok(port, keys[0], "v2"), b"+OK\r\n", "%s: writable again" % label)
    t.call("GET", keys[1])
    with harness.RespClient(port) as w:
        w.call("SET", keys[1], "again")
    report.equal(invalidated(t, [keys[1]], WAIT), {keys[1]},
                 "%s: tracked again after a new read" % label)
    t.close()


def check_restart(report, binary):
    with harness.Cluster(binary, 3, name="trkrestart", cluster_options=repl.HEALTH) as cluster:
        p1, p2, _ = cluster.ports
        keys = keys_of(p1, cluster.addresses[2], 5, "restart")
        t = tracking_client(p1, p2, keys)
        cluster.nodes[2].proc.send_signal(signal.SIGKILL)
        cluster.nodes[2].proc.wait()
        cluster.nodes[2].start()
        seen = invalidated(t, keys, WAIT)
        report.equal(sorted(seen), sorted(keys),
                     "owner killed and restarted: each key it owns is invalidated")
        check_tracking_again(report, t, p2, keys, "restart")


def check_hung(report, binary):
    with harness.Cluster(binary, 3, name="trkhung", cluster_options=repl.HEALTH) as cluster:
        p1, p2, _ = cluster.ports
        keys = keys_of(p1, cluster.addresses[2], 5, "hung")
        mine = keys_of(p1, cluster.addresses[0], 2, "hungown")
        t = tracking_client(p1, p2, keys + mine)
        cluster.nodes[2].proc.send_signal(signal.SIGSTOP)
        try:
            seen = invalidated(t, keys + mine, WAIT, expected=keys)
        finally:
            cluster.nodes[2].proc.send_signal(signal.SIGCONT)
        report.equal(sorted(seen), sorted(keys),
                     "owner hung until seen down: its keys are invalidated, node 1's own are not")
        check_tracking_again(report, t, p2, keys, "hung")


def check_failover(report, binary):
    with repl.durable_cluster(binary, 4, "trkfailover", 2, 1) as cluster:
        p1, p2 = cluster.ports[:2]
        keys = keys_of(p1, cluster.addresses[3], 5, "failover",
                       copies_avoid=cluster.addresses[0])
        t = tracking_client(p1, p2, keys)
        # Nothing is invalidated before the fault.
        report.equal(invalidated(t, keys, 0.3), set(), "no invalidation before the fault")
        cluster.nodes[3].proc.send_signal(signal.SIGKILL)
        report.equal(write_until_ok(p2, keys[0], "v2"), b"+OK\r\n", "failed over")
        seen = invalidated(t, keys, WAIT)
        report.equal(sorted(seen), sorted(keys),
                     "owner failed over: each key it owned is invalidated")
        check_tracking_again(report, t, p2, keys, "failover")


def check_owner_limit(report, binary):
    """The owner holds the keys other nodes' clients read to tracking-table-max-keys, as its own
    clients' keys: past it, keys are invalidated for their readers as if written."""
    with harness.Cluster(binary, 3, name="trklimit") as cluster:
        p1, p2, p3 = cluster.ports
        with harness.RespClient(p2) as c:
            c.call("CONFIG", "SET", "tracking-table-max-keys", "10")
        keys = keys_of(p1, cluster.addresses[1], 50, "limit")
        t = tracking_client(p1, p3, [])
        # The reads in one write: invalidations come among their replies.
        t.sock.sendall(b"".join(harness.encode_command("GET", k) for k in keys))
        early = invalidated(t, keys, 1.0)
        report.equal(len(early), 40, "past the owner's limit of 10, 40 of the 50 keys read are "
                     "invalidated at once")
        with harness.RespClient(p3) as w:
            for k in keys:
                w.call("SET", k, "v2")
        rest = invalidated(t, keys, WAIT, expected=set(keys) - early)
        report.equal(sorted(rest), sorted(set(keys) - early),
                     "the 10 the owner kept are invalidated at their write, the others not again")
        t.close()


def check_blocks(report, binary):
    """Reads inside a transaction or a script that run on a peer are tracked as a relayed read
    is: a transaction relayed whole to the keys' owner, one over two nodes, EVAL and EVAL_RO."""
    with harness.Cluster(binary, 3, name="trkblocks") as cluster:
        p1, p2, _ = cluster.ports
        theirs = keys_of(p1, cluster.addresses[2], 5, "blocks")
        mine = keys_of(p1, cluster.addresses[0], 1, "blocksown")
        cases = [
            ("MULTI relayed whole", [("MULTI",), ("GET", theirs[0]), ("EXEC",)], [theirs[0]]),
            ("MULTI over two nodes", [("MULTI",), ("GET", theirs[1]), ("GET", mine[0]),
                                      ("EXEC",)], [theirs[1], mine[0]]),
            ("MULTI, CLIENT CACHING no", [("CLIENT", "CACHING", "no"), ("MULTI",),
                                          ("GET", theirs[2]), ("EXEC",)], []),
            ("EVAL", [("EVAL", "return redis.call('GET', KEYS[1])", "1", theirs[3])],
             [theirs[3]]),
            ("EVAL_RO", [("EVAL_RO", "return redis.call('GET', KEYS[1])", "1", theirs[4])],
             [theirs[4]]),
        ]
        for name, commands, expected in cases:
            mode = ("optout",) if commands[0][:2] == ("CLIENT", "CACHING") else ()
            t = tracking_client(p1, p2, [])
            if mode:
                t.call("CLIENT", "TRACKING", "on", *mode)
            for command in commands:
                t.call(*command)
            with harness.RespClient(p2) as w:
                for command in commands:
                    for k in command[1:]:
                        if k in theirs or k in mine:
                            w.call("SET", k, "changed")
            seen = invalidated(t, theirs + mine, 1.0 if not expected else WAIT, expected)
            report.equal(sorted(seen), sorted(expected), "%s: the keys read are invalidated at "
                         "their write through another node" % name)
            t.close()


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_tracking_peers")
    for name, check in [("owner restarted", check_restart), ("owner hung", check_hung),
                        ("owner failed over", check_failover),
                        ("the owner's tracking table limit", check_owner_limit),
                        ("transactions and scripts", check_blocks)]:
        with cs.Section(report, name):
            check(report, args.server)
    report.finish()


if __name__ == "__main__":
    main()
