#!/usr/bin/env python3
"""A shutdown waits for the replicas of the node's keys (shutdown-timeout, as Redis 7's SHUTDOWN
waits for its lagging replicas).

1. The wait, step by step (3 members, replication-factor 2, health checks too slow to fail a
   stopped member over): with a key's replica stopped (SIGSTOP) and a write to it not
   acknowledged, SHUTDOWN on its primary waits: the node stays up, its clients' writes wait (as
   under CLIENT PAUSE WRITE), reads are served, a write a peer relays to it gets -TRYAGAIN;
   SHUTDOWN ABORT ends the wait (+OK), the waiting SHUTDOWN gets Redis's error, the held write
   runs and the node stays up. SHUTDOWN again waits shutdown-timeout (4 s) and then exits;
   SHUTDOWN NOW exits at once; without replicas behind, SHUTDOWN exits at once, as before;
   SIGTERM waits as SHUTDOWN does, then exits with status 0.
2. Under load (3 members, replication-factor 2, replica-acks 0, health checks that fail a member
   over in under a second): writers on the two other members keep versions of their keys,
   remembering each acknowledged one, while one member is shut down (SHUTDOWN NOSAVE); once it
   is failed over every key holds its last acknowledged version or a later one it was written
   with, through both survivors. (The build before the wait passes this part too: its streams
   wrote their last frames as it stopped. It guards the property.)
"""

import os
import random
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import main_support  # noqa: E402
import replication_support as rs  # noqa: E402

_SHUTDOWN_ERROR = b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"
_SHUTTING_DOWN = (b"-TRYAGAIN this member is shutting down: its replicas are taking its last "
                  b"writes\r\n")


def no_reply_yet(c, seconds):
    """True when nothing arrives on `c` within `seconds`."""
    c.sock.settimeout(seconds)
    try:
        data = c.sock.recv(1, socket.MSG_PEEK)
        return not data
    except socket.timeout:
        return True
    finally:
        c.sock.settimeout(None)


def exited_within(node, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not node.alive():
            return True
        time.sleep(0.05)
    return False


def copied_keys(cluster, prefix, primary, replica):
    """Keys whose primary is member `primary` and whose replica is member `replica` (indexes)."""
    names = ["%s:%d" % (prefix, i) for i in range(300)]
    copies = rs.copies_of(cluster.ports[0], names)
    held = [cluster.addresses[primary], cluster.addresses[replica]]
    return [k for k, copy in zip(names, copies) if copy == held]


# Health checks too slow to fail a stopped member over during the test.
_SLOW_HEALTH = {"replication-factor": 2, "health-interval": 500, "failure-limit": 1000}


def check_wait(report, binary):
    with harness.Cluster(binary, 3, name="shutdown-wait", cluster_options=_SLOW_HEALTH) as cluster:
        ports = cluster.ports
        rs.settle(cluster.ports)
        behind = copied_keys(cluster, "sw", 1, 2)
        with harness.RespClient(ports[1]) as c:
            report.equal(c.call("CONFIG", "SET", "shutdown-timeout", "4"), b"+OK\r\n",
                         "shutdown-timeout set at run time")
            report.equal(c.call("CONFIG", "GET", "shutdown-timeout"),
                         b"*2\r\n$16\r\nshutdown-timeout\r\n$1\r\n4\r\n", "and read back")
            c.call("SET", behind[0], "before")
        cluster.kill(2, signal.SIGSTOP)
        try:
            with harness.RespClient(ports[1]) as c, harness.RespClient(ports[1]) as waiter, \
                    harness.RespClient(ports[1]) as writer, \
                    harness.RespClient(ports[1]) as other:
                report.equal(c.call("SET", behind[0], "unacknowledged"), b"+OK\r\n",
                             "a write its stopped replica does not acknowledge (replica-acks 0)")
                waiter.send(harness.encode_command("SHUTDOWN"))
                report.check(no_reply_yet(waiter, 0.5) and cluster.nodes[1].alive(),
                             "SHUTDOWN waits for the replica, the node up")
                writer.send(harness.encode_command("SET", behind[1], "held"))
                report.check(no_reply_yet(writer, 0.3), "a client's write waits meanwhile")
                report.equal(other.call("GET", behind[0]), b"$14\r\nunacknowledged\r\n",
                             "reads are served")
                with harness.RespClient(ports[0]) as relay:
                    report.equal(relay.call("SET", behind[2], "relayed"), _SHUTTING_DOWN,
                                 "a write relayed by a peer gets TRYAGAIN")
                report.equal(other.call("SHUTDOWN", "ABORT"), b"+OK\r\n", "SHUTDOWN ABORT")
                report.equal(waiter.read(), _SHUTDOWN_ERROR, "the waiting SHUTDOWN gets the error")
                report.equal(writer.read(), b"+OK\r\n", "the held write runs")
                report.equal(other.call("SHUTDOWN", "ABORT"),
                             b"-ERR No shutdown in progress.\r\n", "a second ABORT has none")
                report.equal(other.call("MGET", behind[1], behind[2]),
                             b"*2\r\n$4\r\nheld\r\n$-1\r\n", "what was written")
                report.check(cluster.nodes[1].alive(), "the node stays up")
                began = time.monotonic()
                waiter.send(harness.encode_command("SHUTDOWN", "NOSAVE"))
                report.check(exited_within(cluster.nodes[1], 15), "SHUTDOWN again exits",
                             cluster.logs())
                waited = time.monotonic() - began
                report.check(waited >= 3.8, "after waiting shutdown-timeout (%.2f s)" % waited)
        finally:
            cluster.kill(2, signal.SIGCONT)
        # The first member, whose replicas answer: nothing to wait for.
        began = time.monotonic()
        with harness.RespClient(ports[0]) as c:
            c.send(harness.encode_command("SHUTDOWN", "NOSAVE"))
        report.check(exited_within(cluster.nodes[0], 10), "a node whose replicas have every write "
                     "exits at once (%.2f s)" % (time.monotonic() - began))
    # NOW: no wait whatever the replicas.
    with harness.Cluster(binary, 3, name="shutdown-now", cluster_options=_SLOW_HEALTH) as cluster:
        ports = cluster.ports
        rs.settle(cluster.ports)
        behind = copied_keys(cluster, "sn", 1, 2)
        cluster.kill(2, signal.SIGSTOP)
        try:
            with harness.RespClient(ports[1]) as c:
                c.call("SET", behind[0], "unacknowledged")
                began = time.monotonic()
                c.send(harness.encode_command("SHUTDOWN", "NOW", "NOSAVE"))
            # (Without NOW it would wait the default shutdown-timeout, 10 s.)
            report.check(exited_within(cluster.nodes[1], 10) and time.monotonic() - began < 5,
                         "SHUTDOWN NOW exits without waiting")
            # SIGTERM waits as SHUTDOWN does, then exits cleanly.
            with harness.RespClient(ports[0]) as c:
                c.call("CONFIG", "SET", "shutdown-timeout", "2")
                c.call("SET", copied_keys(cluster, "st", 0, 2)[0], "unacknowledged")
            began = time.monotonic()
            cluster.nodes[0].proc.send_signal(signal.SIGTERM)
            report.check(not exited_within(cluster.nodes[0], 0.5), "SIGTERM waits for the replica")
            report.check(exited_within(cluster.nodes[0], 10) and time.monotonic() - began >= 1.8,
                         "then exits once shutdown-timeout is up (%.2f s)"
                         % (time.monotonic() - began))
            report.equal(cluster.nodes[0].proc.wait(5), 0, "with status 0")
        finally:
            cluster.kill(2, signal.SIGCONT)


class Writer(threading.Thread):
    """Writes increasing versions of its keys through one member, pipelined, remembering the
    last acknowledged and the last attempted version of each."""

    def __init__(self, port, keys, stop):
        super().__init__(daemon=True)
        self.port, self.keys, self.stop = port, keys, stop
        self.acked = {}
        self.tried = {}
        self.errors = 0

    def run(self):
        version = 0
        rng = random.Random(self.port)
        while not self.stop.is_set():
            try:
                with harness.RespClient(self.port) as c:
                    while not self.stop.is_set():
                        version += 1
                        batch = rng.sample(self.keys, 16)
                        for k in batch:
                            self.tried[k] = version
                        c.send(b"".join(harness.encode_command("SET", k, str(version))
                                        for k in batch))
                        for k in batch:
                            if c.read() == b"+OK\r\n":
                                self.acked[k] = version
                            else:
                                self.errors += 1
            except (OSError, RuntimeError):
                self.errors += 1
                time.sleep(0.05)


def check_under_load(report, binary):
    options = {"replication-factor": 2, "health-interval": 200, "failure-limit": 3}
    with harness.Cluster(binary, 3, name="shutdown-load", cluster_options=options) as cluster:
        ports, addresses = cluster.ports, cluster.addresses
        rs.settle(ports)
        names = ["sl:%d" % i for i in range(2000)]
        copies = rs.copies_of(ports[0], names)
        on_second = [k for k, held in zip(names, copies) if held[0] == addresses[1]]
        report.check(len(on_second) > 200, "the second member is the primary of %d keys"
                     % len(on_second))
        stop = threading.Event()
        writers = [Writer(ports[0], on_second[0::2], stop), Writer(ports[2], on_second[1::2], stop)]
        for w in writers:
            w.start()
        time.sleep(1.0)
        with harness.RespClient(ports[1]) as c:
            c.send(harness.encode_command("SHUTDOWN", "NOSAVE"))
        report.check(exited_within(cluster.nodes[1], 15), "the member shut down under load exits",
                     cluster.logs())
        # Failed over, its keys are served again through both survivors.
        deadline = time.time() + 15
        while time.time() < deadline:
            served = []
            for port in (ports[0], ports[2]):
                with harness.RespClient(port) as c:
                    served.append(not c.call("GET", on_second[0]).startswith(b"-"))
            if all(served):
                break
            time.sleep(0.1)
        time.sleep(0.5)
        stop.set()
        for w in writers:
            w.join(10)
        lost, checked = [], 0
        for port in (ports[0], ports[2]):
            with harness.RespClient(port) as c:
                for w in writers:
                    for k, version in w.acked.items():
                        got = c.call("GET", k)
                        checked += 1
                        value = int(got[got.index(b"\r\n") + 2:-2]) if got.startswith(b"$") \
                            and not got.startswith(b"$-1") else 0
                        if value < version or value > w.tried[k]:
                            lost.append((k, version, got))
        acked = sum(len(w.acked) for w in writers)
        report.check(acked > 0 and not lost, "every key holds its last acknowledged version or "
                     "a later one it was written with (%d keys, %d reads, %d lost)"
                     % (acked, checked, len(lost)), str(lost[:10]) + cluster.logs())


def main():
    main_support.run_checks("shutdown_replicas", __doc__, check_wait, check_under_load)


if __name__ == "__main__":
    main()
