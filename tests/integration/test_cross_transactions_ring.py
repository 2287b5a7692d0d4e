"""Transactions across nodes while the ring changes: a 4th node joins a 3-node cluster while
writers run cross-node transactions through every node (each incrementing every key of a group
spread over the owners), then leaves again. Each transaction commits or is refused cleanly —
discarded because the ring changed, or aborted with nothing applied — and never half applied:
afterwards every key of a group holds exactly the group's committed transactions, whichever
node the keys moved to.

    /usr/bin/python3 test_cross_transactions_ring.py --server build/ringkv-server
"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import RespClient  # noqa: E402

GROUPS = 6
KEYS_PER_GROUP = 4
OPTIONS = {"health-interval": 200}


def wait_settled(ports, version, timeout=60):
    """Waits until every node in `ports` is at ring `version` with nothing migrating."""
    deadline = time.time() + timeout * harness.timeout_scale()
    last = None
    while time.time() < deadline:
        infos = [harness.info_fields(p, "CLUSTER", "INFO") for p in ports]
        last = [(i.get("cluster_ring_version"), i.get("cluster_migration_state")) for i in infos]
        if all(t == (str(version), "idle") for t in last):
            return
        time.sleep(0.05)
    raise AssertionError("ring did not settle at version %d: %s" % (version, last))


def group_keys(port):
    """GROUPS groups of KEYS_PER_GROUP keys, each group on at least two of the three owners."""
    groups = []
    with RespClient(port) as c:
        i = 0
        while len(groups) < GROUPS:
            keys = ["ring%d:%d:%d" % (len(groups), i, j) for j in range(KEYS_PER_GROUP)]
            i += 1
            owners = {c.call("CLUSTER", "OWNER", k) for k in keys}
            if len(owners) >= 2:
                groups.append(keys)
    return groups


def clean_refusal(reply):
    """A refusal with nothing applied: discarded for the ring change, or aborted."""
    return (reply.startswith(b"-EXECABORT Transaction discarded because the cluster ring changed")
            or reply.startswith(b"-EXECABORT Transaction discarded because of: "))


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_cross_transactions_ring")
    cluster = harness.Cluster(args.server, 3, name="txring", cluster_options=OPTIONS).start()
    port4 = harness.free_ports(1)[0]
    text = harness.cluster_config(port4, [port4], cluster_options=OPTIONS)
    node4 = harness.ClusterNode(args.server, port4, text, "txring4").start()
    try:
        groups = group_keys(cluster.ports[0])
        stop = [False]
        lock = threading.Lock()
        committed = [0] * GROUPS
        refusals, bad = [], []

        def writer(port, first):
            c = RespClient(port, timeout=30)
            g = first
            while not stop[0]:
                keys = groups[g]
                batch = [["MULTI"]] + [["INCR", k] for k in keys] + [["EXEC"]]
                c.send(b"".join(harness.encode_command(*cmd) for cmd in batch))
                replies = [c.read() for _ in batch]
                reply = replies[-1]
                with lock:
                    if reply.startswith(b"*%d\r\n" % len(keys)):
                        committed[g] += 1
                    elif clean_refusal(reply):
                        refusals.append(reply)
                    else:
                        bad.append((replies, keys))
                g = (g + 1) % GROUPS
            c.close()

        threads = [threading.Thread(target=writer, args=(cluster.ports[i % 3], i % GROUPS))
                   for i in range(6)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        with RespClient(cluster.ports[1]) as c:
            report.equal(c.call("CLUSTER", "JOIN", node4.address), b"+OK\r\n", "CLUSTER JOIN")
        wait_settled(cluster.ports + [port4], 1)
        time.sleep(0.3)
        with RespClient(cluster.ports[2]) as c:
            report.equal(c.call("CLUSTER", "LEAVE", node4.address), b"+OK\r\n", "CLUSTER LEAVE")
        wait_settled(cluster.ports, 2)
        time.sleep(0.3)
        stop[0] = True
        for t in threads:
            t.join()
        print("%d committed, %d refused cleanly, e.g. %r" % (
            sum(committed), len(refusals), sorted(set(refusals))[:3]), flush=True)
        report.equal(bad[:3], [], "every transaction committed or was refused cleanly")
        report.check(sum(committed) > 0, "transactions committed", str(committed))
        with RespClient(cluster.ports[0]) as c:
            for g, keys in enumerate(groups):
                values = [int(harness.parse_reply(c.call("GET", k)) or 0) for k in keys]
                report.equal(values, [committed[g]] * len(keys),
                             "group %d holds its %d committed transactions on every key"
                             % (g, committed[g]))
        for node in cluster.nodes:
            report.check(node.alive(), "%s still running" % node.name, node.log())
    finally:
        node4.cleanup()
        cluster.cleanup()
    report.finish()


if __name__ == "__main__":
    main()
