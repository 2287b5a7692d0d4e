"""Client controls through a 3-node cluster: CLIENT REPLY OFF/SKIP/ON drops the replies of
commands relayed to peers as it drops local ones (and ON's +OK comes back in order after them);
CLIENT PAUSE WRITE pauses the node it is sent to only (a client of another node writes the same
keys meanwhile), and the paused node's relayed writes run after CLIENT UNPAUSE; CLIENT UNBLOCK
answers a client blocked on a key of its node; CLIENT TRACKING is invalidated whichever node's
client writes a key, whether the client's node owns it or a peer does (which then reports the
change), for GET and a split MGET, for a RESP3 client (raw socket) and a RESP2 redis-py client
redirecting to a subscriber of __redis__:invalidate.

    /usr/bin/python3 test_client_controls_cluster.py --server build/ringkv-server
"""

import os
import sys
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from blocking import SETTLE, quiet  # noqa: E402
from harness import RespClient, encode_command  # noqa: E402


def owned_keys(cluster, port, n, prefix="t"):
    """`n` keys that the node at `port` owns, and one each that its peers own."""
    mine, theirs = [], []
    self_addr = "127.0.0.1:%d" % port
    with RespClient(port) as c:
        for i in range(500):
            key = "%s%d" % (prefix, i)
            owner = harness.parse_reply(c.call("CLUSTER", "OWNER", key)).decode()
            if owner == self_addr:
                if len(mine) < n:
                    mine.append(key)
            elif len(theirs) < n:
                theirs.append(key)
            if len(mine) == n and len(theirs) == n:
                break
    return mine, theirs


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_client_controls_cluster")
    with harness.Cluster(args.server, 3, name="clientctl", request_timeout=2000,
                         connect_timeout=500) as cluster:
        p1, p2, p3 = cluster.ports
        mine, theirs = owned_keys(cluster, p1, 3)
        report.check(len(mine) == 3 and len(theirs) == 3, "keys on node 1 and on its peers")

        # CLIENT REPLY through relays: nothing comes back for OFF/SKIP, relayed or not.
        with RespClient(p1) as c:
            c.send(b"".join(encode_command(*a) for a in [
                ("CLIENT", "REPLY", "OFF"), ("SET", theirs[0], "1"), ("SET", mine[0], "1"),
                ("INCR", theirs[0]), ("CLIENT", "REPLY", "ON"), ("GET", theirs[0]),
                ("CLIENT", "REPLY", "SKIP"), ("GET", theirs[1]), ("MGET", theirs[0], mine[0]),
            ]))
            data, _ = c.read_available(1.0)
            report.equal(data, b"+OK\r\n$1\r\n2\r\n*2\r\n$1\r\n2\r\n$1\r\n1\r\n",
                         "CLIENT REPLY drops relayed replies in order")

        # CLIENT PAUSE WRITE on node 1 pauses node 1's clients only.
        with RespClient(p1) as admin, RespClient(p1) as w1, RespClient(p2) as w2:
            report.equal(admin.call("CLIENT", "PAUSE", "100000", "WRITE"), b"+OK\r\n", "pause")
            w1.send(encode_command("SET", theirs[2], "from-1"))
            report.check(quiet(w1), "a write on the paused node waits (its key is a peer's)")
            report.equal(w1.reader.pending(), 0, "nothing arrived")
            report.equal(w2.call("SET", mine[2], "from-2"), b"+OK\r\n",
                         "another node's client writes node 1's key meanwhile")
            report.equal(admin.call("GET", mine[2]), b"$6\r\nfrom-2\r\n", "reads run on node 1")
            report.equal(admin.call("CLIENT", "UNPAUSE"), b"+OK\r\n", "unpause")
            report.equal(w1.read(), b"+OK\r\n", "the paused write ran after UNPAUSE")
            report.equal(w2.call("GET", theirs[2]), b"$6\r\nfrom-1\r\n", "and reached its owner")

        # CLIENT UNBLOCK of a client blocked on a key node 1 owns.
        with RespClient(p1) as admin, RespClient(p1) as b:
            bid = b.call("CLIENT", "ID").decode()[1:].strip()
            b.send(encode_command("BLPOP", mine[1], "0"))
            time.sleep(SETTLE)
            report.equal(admin.call("CLIENT", "UNBLOCK", bid, "ERROR"), b":1\r\n", "unblock")
            report.equal(b.read(), b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n",
                         "UNBLOCKED error")

        # Tracking: a RESP3 client of node 1 reads keys node 1 owns; clients of node 2 write.
        with RespClient(p1) as t, RespClient(p2) as other:
            t.call("HELLO", "3")
            report.equal(t.call("CLIENT", "TRACKING", "on"), b"+OK\r\n", "tracking on")
            t.call("MGET", mine[0], mine[1])
            report.equal(other.call("SET", mine[1], "x"), b"+OK\r\n", "write through node 2")
            report.equal(t.read(), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$%d\r\n%s\r\n"
                         % (len(mine[1]), mine[1].encode()), "RESP3 invalidation from a peer's "
                         "client's write")
            report.check(quiet(t), "one invalidation")
            t.call("GET", mine[0])
            other.call("FLUSHALL")
            data, _ = t.read_available(0.5)
            t.sock.settimeout(10.0)
            report.equal(data, b">2\r\n$10\r\ninvalidate\r\n_\r\n", "FLUSHALL through node 2")

        # Keys peers own: the owner reports their change to node 1, which tells its client; an
        # MGET split over node 1 and a peer is tracked on both.
        with RespClient(p1) as t, RespClient(p3) as other:
            t.call("HELLO", "3")
            t.call("CLIENT", "TRACKING", "on")
            t.call("GET", theirs[0])
            t.call("MGET", mine[0], theirs[1])
            report.equal(other.call("SET", theirs[0], "y"), b"+OK\r\n", "write a peer's key")
            report.equal(t.read(), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$%d\r\n%s\r\n"
                         % (len(theirs[0]), theirs[0].encode()), "invalidation from the owner")
            other.call("SET", theirs[1], "y")
            report.equal(t.read(), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$%d\r\n%s\r\n"
                         % (len(theirs[1]), theirs[1].encode()), "split MGET: the peer's key")
            other.call("SET", mine[0], "y")
            report.equal(t.read(), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$%d\r\n%s\r\n"
                         % (len(mine[0]), mine[0].encode()), "split MGET: node 1's key")
            other.call("SET", theirs[0], "z")
            report.check(quiet(t), "one invalidation per read")

        # redis-py, RESP2: tracking redirected to a subscriber of __redis__:invalidate.
        r = redis.Redis(port=p1, single_connection_client=True)
        sub = redis.Redis(port=p1, client_name="invalidations").pubsub()
        sub.subscribe("__redis__:invalidate")
        report.equal(sub.get_message(timeout=2)["type"], "subscribe", "subscribed")
        sub_id = next(c["id"] for c in r.client_list() if c["name"] == "invalidations")
        report.check(r.client_tracking_on(clientid=sub_id), "redirect on")
        for key in (mine[2], theirs[2]):
            r.get(key)
            redis.Redis(port=p2).set(key, "changed")
            msg = sub.get_message(timeout=2)
            report.equal((msg or {}).get("channel"), b"__redis__:invalidate",
                         "redirected message (%s)" % key)
            report.equal((msg or {}).get("data"), [key.encode()], "its key (%s)" % key)
        r.close()
        sub.close()
        report.check(all(n.alive() for n in cluster.nodes), "nodes alive", cluster.logs())
    report.finish()


if __name__ == "__main__":
    main()
