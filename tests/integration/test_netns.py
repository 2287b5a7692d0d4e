"""ringkv across hosts: 3 nodes in network namespaces of their own, joined by veth pairs to a
bridge in a 4th namespace where this test's client runs. Checks that relayed GET/SET work
between the hosts; that cutting one node's link (its interface down) gets it marked down by the
others, fails only its keys, and that it recovers when the link returns; and, where the kernel
has sch_netem, that 200 ms of added latency slows that node's keys but keeps it up (the delay is
below health-interval). Everything the test creates (namespaces, veths, bridge, qdiscs,
processes) is removed in a finally block, on failure too.

Needs root and `ip`; without them the test is skipped (exit 77, which ctest reports as skipped).

    sudo /usr/bin/python3 test_netns.py --server build/ringkv-server
"""

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cluster_support as cs  # noqa: E402
import harness  # noqa: E402
import test_peer_failures as pf  # noqa: E402

HEALTH_MS = 500  # above the 200 ms delay, so a slow peer is not taken for a dead one
FAILURE_LIMIT = 3
REQUEST_TIMEOUT_MS = 1000
# A cut link looks like a hung peer: pings time out, and the next ping goes out at the health
# tick after the timeout, so detection takes up to two intervals more than failure-limit.
DETECT_LIMIT = HEALTH_MS * (FAILURE_LIMIT + 2) / 1000 + 0.6
LATENCY_LIMIT = REQUEST_TIMEOUT_MS / 1000 + 0.5
DELAY_MS = 200
CLONE_NEWNET = 0x40000000

OK = b"+OK\r\n"


def run(*argv, check=True):
    """Runs a command; returns its CompletedProcess (raises on failure when `check`)."""
    return subprocess.run(argv, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=20)


class Network:
    """The test's namespaces: <prefix>-hub with bridge br0 (10.213.X.1/24) and the client, and
    <prefix>-n1..n3, each with eth0 (10.213.X.11-13/24), the far end of a veth whose near end
    (vn1..vn3) is a port of br0. X comes from the PID, names carry it too, so parallel runs do
    not collide; no address is added outside these namespaces."""

    def __init__(self, nodes=3):
        pid = os.getpid()
        self.prefix = "rkvft%d" % pid
        self.hub = self.prefix + "-hub"
        self.node_ns = ["%s-n%d" % (self.prefix, i + 1) for i in range(nodes)]
        self.subnet = "10.213.%d" % (pid % 250 + 1)
        self.hosts = ["%s.%d" % (self.subnet, 11 + i) for i in range(nodes)]
        self.created = []
        self.libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self.home_fd = None

    def create(self):
        """Creates everything; raises CalledProcessError when a step fails."""
        for ns in [self.hub] + self.node_ns:
            run("ip", "netns", "add", ns)
            self.created.append(ns)
            run("ip", "-n", ns, "link", "set", "lo", "up")
        run("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", self.hub, "addr", "add", self.subnet + ".1/24", "dev", "br0")
        run("ip", "-n", self.hub, "link", "set", "br0", "up")
        for i, ns in enumerate(self.node_ns):
            near = "vn%d" % (i + 1)
            run("ip", "-n", self.hub, "link", "add", near, "type", "veth", "peer", "name", "eth0",
                "netns", ns)
            run("ip", "-n", self.hub, "link", "set", near, "master", "br0", "up")
            run("ip", "-n", ns, "addr", "add", self.hosts[i] + "/24", "dev", "eth0")
            run("ip", "-n", ns, "link", "set", "eth0", "up")

    def enter_hub(self):
        """Moves this thread (and the threads and sockets it creates from now on) into the hub
        namespace; the processes it starts get their own namespace via `ip netns exec`."""
        self.home_fd = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        self._setns("/run/netns/" + self.hub)

    def leave_hub(self):
        if self.home_fd is not None:
            if self.libc.setns(self.home_fd, CLONE_NEWNET) != 0:
                print("warning: could not return to the original network namespace", flush=True)
            os.close(self.home_fd)
            self.home_fd = None

    def _setns(self, path):
        fd = os.open(path, os.O_RDONLY)
        try:
            if self.libc.setns(fd, CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise OSError(err, "setns(%s): %s" % (path, os.strerror(err)))
        finally:
            os.close(fd)

    def prefixes(self):
        return [["ip", "netns", "exec", ns] for ns in self.node_ns]

    def link(self, i, state):
        run("ip", "-n", self.node_ns[i], "link", "set", "eth0", state)

    def add_delay(self, i, ms):
        """Adds `ms` of latency to node i's outgoing packets; False when netem is missing."""
        r = run("tc", "-n", self.node_ns[i], "qdisc", "add", "dev", "eth0", "root", "netem",
                "delay", "%dms" % ms, check=False)
        if r.returncode != 0:
            print("    tc netem: %s" % r.stderr.strip(), flush=True)
        return r.returncode == 0

    def remove_delay(self, i):
        run("tc", "-n", self.node_ns[i], "qdisc", "del", "dev", "eth0", "root", check=False)

    def destroy(self):
        """Kills any process still in the namespaces (by PID), then deletes them; the veths,
        the bridge and any qdisc go with them. Returns the namespaces that could not be
        deleted."""
        self.leave_hub()
        left = []
        for ns in reversed(self.created):
            pids = run("ip", "netns", "pids", ns, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            if run("ip", "netns", "del", ns, check=False).returncode != 0:
                left.append(ns)
        self.created = []
        return left

    def remaining(self):
        """Our namespaces that still exist."""
        out = run("ip", "netns", "list", check=False).stdout
        return [line.split()[0] for line in out.splitlines()
                if line.split() and line.split()[0].startswith(self.prefix + "-")]


def call(host, port, *argv):
    with harness.RespClient(port, host=host, timeout=5.0) as c:
        return c.call(*argv)


def pipeline(host, port, requests):
    """Sends the requests in one write and reads the replies (small batches only)."""
    with harness.RespClient(port, host=host, timeout=10.0) as c:
        c.send(b"".join(harness.encode_command(*argv) for argv in requests))
        return [c.read() for _ in requests]


def owners(host, port, keys):
    return [harness.parse_reply(r).decode() for r in
            pipeline(host, port, [("CLUSTER", "OWNER", k) for k in keys])]


def check_across_hosts(report, cluster, keys, owner):
    """Relayed SETs and GETs between the namespaces, through every node."""
    hosts, ports, addrs = cluster.hosts, cluster.ports, cluster.addresses
    for n in range(3):
        view = owners(hosts[n], ports[n], keys[:300])
        report.equal(view, [owner[k] for k in keys[:300]], "node %d names the same owners as "
                     "node 1 (over its own network)" % (n + 1))
    report.check(set(owner.values()) == set(addrs), "every node owns keys",
                 repr(sorted(set(owner.values()))))
    sample = keys[:300]
    replies = pipeline(hosts[0], ports[0], [("SET", k, "v:" + k) for k in sample])
    report.equal(replies.count(OK), len(sample), "300 SETs through node 1 answer OK")
    for n in range(3):
        replies = pipeline(hosts[n], ports[n], [("GET", k) for k in sample])
        want = [b"$%d\r\nv:%s\r\n" % (len(k) + 2, k.encode()) for k in sample]
        pf.equal_lists(report, replies, want, "the 300 values read back through node %d" % (n + 1))
    for n in range(3):
        mine = sum(owner[k] == addrs[n] for k in sample)
        text = harness.parse_reply(call(hosts[n], ports[n], "INFO", "keyspace")).decode()
        report.check(("db0:keys=%d," % mine) in text, "node %d stores the %d keys it owns" % (
            n + 1, mine), text)
    text = harness.parse_reply(call(hosts[1], ports[1], "CLIENT", "LIST")).decode()
    report.check("addr=%s:" % hosts[0] in text, "node 2 has a connection from node 1's address "
                 "(the relay crossed namespaces)", text)
    health = pf.peer_health(ports[0], addrs[2], hosts[0])
    report.equal((health.get("state"), health.get("link")), ("up", "connected"),
                 "node 1 sees node 3 up and linked")


def check_cut_link(report, net, cluster, keys, owner):
    """Node 3's interface goes down under load through node 1, then comes back."""
    hosts, ports, addrs = cluster.hosts, cluster.ports, cluster.addresses
    cut = addrs[2]
    with pf.under_load(ports[0], keys, cut, hosts[0], threads=4,
                       hang_limit=LATENCY_LIMIT + 2.0) as (load, poller):
        time.sleep(1.0)
        t_cut = time.monotonic()
        net.link(2, "down")
        try:
            pf.wait_for(lambda: poller.first("down", t_cut), DETECT_LIMIT + 2.0)
            # Long enough for the requests in flight at detection to time out and for new ones
            # to meet the down state.
            time.sleep(LATENCY_LIMIT)
            health = pf.peer_health(ports[0], cut, hosts[0])
        finally:
            t_back = time.monotonic()
            net.link(2, "up")
        pf.wait_for(lambda: poller.first("up", t_back), 10.0)
        t_up = poller.first("up", t_back)
        first_ok, _ = pf.wait_for(lambda: [
            r for r in list(load.records) if r[0] > t_back and owner[r[2]] == cut
            and r[3] and r[3][:1] != b"-"], 10.0, step=0.1)
        time.sleep(1.5)
    records = load.records
    report.check(len(records) > 500, "cut: the load generators ran", str(len(records)))
    t_down = poller.first("down", t_cut)
    detect = None if t_down is None else t_down - t_cut
    print("    cut link: node 1 saw node 3 down after %s (limit %.2fs)" % (
        "never" if detect is None else "%.3fs" % detect, DETECT_LIMIT))
    report.check(detect is not None and detect <= DETECT_LIMIT, "cut: node 3 marked down within "
                 "about failure-limit health intervals", repr(detect))
    report.equal(health.get("state"), "down", "cut: CLUSTER NODES says state=down")
    errors = pf.check_error_owners(report, load.between(t_cut, t_back), owner, cut,
                                   "cut")
    print("    cut link: errors by reason %r" % pf.reasons(errors))
    after_down = [r for r in errors if t_down is not None and r[0] > t_down + 0.05]
    report.check(after_down and all(r[3] == pf.unavailable(cut, "down") + b"\r\n"
                                    for r in after_down),
                 "cut: once detected, node 3's keys fail at once with 'unavailable: down'",
                 repr(pf.reasons(after_down)))
    worst = pf.check_latencies(report, records, "cut")
    up = None if t_up is None else t_up - t_back
    ok_at = None
    if first_ok:
        ok_at = min(r[1] for r in first_ok) - t_back
    print("    link back: node 1 saw node 3 up after %s, its keys answered again after %s; "
          "slowest request %.3fs" % ("never" if up is None else "%.3fs" % up,
                                     "never" if ok_at is None else "%.3fs" % ok_at, worst))
    report.check(up is not None and up <= 3 * HEALTH_MS / 1000 + 0.8, "link back: node 3 is "
                 "marked up within a couple of health intervals", repr(up))
    report.check(ok_at is not None and ok_at <= 5.0, "link back: node 3's keys work again "
                 "(relay links reconnect within their backoff)", repr(ok_at))
    late = [r for r in records if ok_at is not None and r[0] > t_back + ok_at + 0.05
            and (r[3] is None or r[3][:1] == b"-")]
    report.equal(pf.reasons(late), {}, "link back: no errors once node 3's keys answer again")
    health = pf.peer_health(ports[0], cut, hosts[0])
    report.equal((health.get("state"), health.get("times-down")), ("up", "1"),
                 "link back: state=up, times-down=1")


def check_delay(report, net, cluster, keys, owner):
    """200 ms more latency on node 3's link: its keys answer, slower; it stays up."""
    hosts, ports, addrs = cluster.hosts, cluster.ports, cluster.addresses
    slow = addrs[2]
    slow_keys = [k for k in keys if owner[k] == slow][:20]
    fast_keys = [k for k in keys if owner[k] == addrs[1]][:20]
    if not net.add_delay(2, DELAY_MS):
        print("SKIP: tc qdisc netem is not available here (no sch_netem in this kernel): the "
              "added-latency part is skipped", flush=True)
        return
    poller = pf.Poller(ports[0], slow, hosts[0]).start()
    try:
        t_delay = time.monotonic()
        slow_times, fast_times, replies = [], [], []
        with harness.RespClient(ports[0], host=hosts[0], timeout=5.0) as c:
            for i in range(3 * (FAILURE_LIMIT + 1)):
                for k, times in ((slow_keys[i % 20], slow_times), (fast_keys[i % 20], fast_times)):
                    start = time.monotonic()
                    replies.append(c.call("SET", k, "slow%d" % i))
                    times.append(time.monotonic() - start)
        time.sleep(HEALTH_MS * (FAILURE_LIMIT + 1) / 1000)
        health = pf.peer_health(ports[0], slow, hosts[0])
    finally:
        poller.stop()
        net.remove_delay(2)
    print("    delay %d ms: node 3's keys median %.3fs, node 2's %.3fs" % (
        DELAY_MS, sorted(slow_times)[len(slow_times) // 2],
        sorted(fast_times)[len(fast_times) // 2]))
    report.equal(replies, [OK] * len(replies), "delay: every SET succeeds")
    report.check(min(slow_times) >= DELAY_MS / 1000 * 0.9, "delay: node 3's keys answer with "
                 "the added latency", repr(slow_times))
    report.check(max(slow_times) < REQUEST_TIMEOUT_MS / 1000, "delay: ... and within the request "
                 "timeout", repr(slow_times))
    report.check(max(fast_times) < DELAY_MS / 1000, "delay: node 2's keys are not slowed",
                 repr(fast_times))
    report.equal(poller.first("down", t_delay), None, "delay: node 3 never marked down")
    report.equal((health.get("state"), health.get("times-down")), ("up", "1"),
                 "delay: state=up, times-down unchanged")


@contextlib.contextmanager
def namespaces(report):
    """The test's network namespaces, created, with this process in the hub, for the `with` block
    (which gets the Network); the test is skipped where it cannot have them (not root, no `ip`,
    or creating them fails). After the block they are removed however it ends, and when it ended
    normally none may be left. A SIGTERM (e.g. a ctest timeout) unwinds through it like an
    exception."""
    if os.geteuid() != 0:
        report.skip("needs root to create network namespaces")
    if shutil.which("ip") is None:
        report.skip("needs the `ip` command (iproute2)")
    net = Network()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        try:
            net.create()
        except subprocess.CalledProcessError as e:
            left = net.destroy()
            if left:
                print("could not remove namespaces %r" % left)
            report.skip("cannot set up network namespaces: `%s` failed: %s" % (
                " ".join(e.cmd), (e.stderr or "").strip()))
        net.enter_hub()
        yield net
    finally:
        left = net.destroy()
    report.equal(left + net.remaining(), [], "every namespace the test created is gone")


def namespaced_cluster(binary, net, name, request_timeout, options):
    """A 3-node cluster (not started) with a node in each of `net`'s node namespaces. Their
    addresses are not loopback ones: without a password, protected mode would turn clients and
    peers away, so it is off."""
    return harness.Cluster(binary, 3, name=name, hosts=net.hosts, prefixes=net.prefixes(),
                           request_timeout=request_timeout, cluster_options=options,
                           extra="[security]\nprotected-mode = false\n")


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_netns")
    binary = os.path.abspath(args.server)
    opts = {"health-interval": HEALTH_MS, "failure-limit": FAILURE_LIMIT}
    with namespaces(report) as net, \
            namespaced_cluster(binary, net, "netns", REQUEST_TIMEOUT_MS, opts) as cluster:
        print("3 nodes at %s in namespaces %s-n1..n3, client in %s; health-interval %d ms, "
              "failure-limit %d, request-timeout %d ms" % (
                  ", ".join(net.hosts), net.prefix, net.hub, HEALTH_MS, FAILURE_LIMIT,
                  REQUEST_TIMEOUT_MS), flush=True)
        keys = ["ns:%d" % i for i in range(2000)]
        owner = dict(zip(keys, owners(net.hosts[0], cluster.ports[0], keys)))
        with cs.Section(report, "relayed GET/SET across hosts"):
            check_across_hosts(report, cluster, keys, owner)
        with cs.Section(report, "cut link, then back"):
            check_cut_link(report, net, cluster, keys, owner)
        with cs.Section(report, "added latency"):
            check_delay(report, net, cluster, keys, owner)
        for node in cluster.nodes:
            report.check(node.alive(), "%s still running" % node.name, node.log())
            harness.check_clean_exit(report, node)
    report.finish()


if __name__ == "__main__":
    main()
