"""What the cluster tests share: RESP reply builders, a raw pipeline to one node, where keys
live (CLUSTER OWNER, each node's own keys), waiting for a peer to be reachable again, and a
section that names each check's scenario."""

import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

OK = b"+OK\r\n"
NIL = b"$-1\r\n"
CROSSSLOT = b"-CROSSSLOT Keys in request don't hash to the same node\r\n"
info_fields = harness.info_fields


def bulk(v):
    v = v.encode() if isinstance(v, str) else v
    return b"$%d\r\n%s\r\n" % (len(v), v)

def integer(n):
    return b":%d\r\n" % n

def array(items):
    return b"*%d\r\n" % len(items) + b"".join(items)

def pipeline(port, requests, timeout=30.0):
    """Sends every request (a list of argv) in one write, from a thread so that reading replies
    meanwhile keeps both socket buffers moving, and returns the replies' raw bytes in order."""
    data = b"".join(harness.encode_command(*argv) for argv in requests)
    with harness.RespClient(port, timeout=timeout) as c:
        sender = threading.Thread(target=c.sock.sendall, args=(data,))
        sender.start()
        try:
            return [c.read() for _ in requests]
        finally:
            sender.join()

def owners_of(port, keys):
    """CLUSTER OWNER of every key as node `port` sees it (pipelined)."""
    return [harness.parse_reply(r).decode() for r in
            pipeline(port, [("CLUSTER", "OWNER", k) for k in keys])]

def keyspace_count(port):
    """db0's key count from the node's INFO keyspace (0 when the section is empty)."""
    with harness.RespClient(port) as c:
        text = harness.parse_reply(c.call("INFO", "keyspace")).decode()
    m = re.search(r"^db0:keys=(\d+),", text, re.M)
    return int(m.group(1)) if m else 0

def local_keys(port):
    """The keys stored on the node itself: KEYS * on a connection introduced as a relay link
    (RINGKV.PEER with the node's own ring fingerprint), which runs commands locally."""
    fingerprint = info_fields(port, "CLUSTER", "INFO")["cluster_ring_fingerprint"]
    with harness.RespClient(port) as c:
        hello = c.call("RINGKV.PEER", "127.0.0.1:1", fingerprint)
        assert hello == b"+%s\r\n" % fingerprint.encode(), hello
        return [k.decode() for k in harness.parse_reply(c.call("KEYS", "*"))]

def node_line(port, addr):
    """The words of node `port`'s CLUSTER NODES line for member `addr` (empty if missing)."""
    with harness.RespClient(port) as c:
        text = harness.parse_reply(c.call("CLUSTER", "NODES")).decode()
    lines = [line.split() for line in text.splitlines() if line.split()[:1] == [addr]]
    return lines[0] if lines else []

def wait_until_reachable(ports, key, want, limit):
    """Polls GET key through each of `ports` until every one answers `want`; returns the seconds
    that took, or None if some port still did not after `limit` seconds."""
    start = time.time()
    pending = list(ports)
    while pending and time.time() - start < limit:
        pending = [p for p in pending if timed_call(p, "GET", key)[0] != want]
        if pending:
            time.sleep(0.05)
    return None if pending else time.time() - start

def timed_call(port, *argv, timeout=30.0):
    """One request on a fresh connection: (reply bytes, seconds until the reply)."""
    with harness.RespClient(port, timeout=timeout) as c:
        start = time.time()
        reply = c.call(*argv)
        return reply, time.time() - start

def keys_by_owner(cluster, prefix, per_node=3):
    """`per_node` keys owned by each node, in node order: [[keys of node 1], ...]."""
    candidates = ["%s%d" % (prefix, i) for i in range(60 * per_node)]
    owners = owners_of(cluster.ports[0], candidates)
    out = []
    for addr in cluster.addresses:
        mine = [k for k, o in zip(candidates, owners) if o == addr][:per_node]
        assert len(mine) == per_node, "too few candidate keys for %s" % addr
        out.append(mine)
    return out

class Section:
    """Times one group of checks and prints how many it ran."""

    def __init__(self, report, name):
        self.report, self.name = report, name

    def __enter__(self):
        self.start, self.checks = time.time(), self.report.checks
        self.failures = len(self.report.failures)
        return self

    def __exit__(self, *exc):
        print("  %-34s %5d checks, %d failed, %.2fs" % (
            self.name, self.report.checks - self.checks,
            len(self.report.failures) - self.failures, time.time() - self.start), flush=True)

def unavailable(addr):
    return b"-ERR peer %s unavailable: " % addr.encode()

def check_clean_exits(report, cluster):
    for node in cluster.nodes:
        report.check(node.alive(), "%s still running" % node.name, node.log())
        harness.check_clean_exit(report, node)
