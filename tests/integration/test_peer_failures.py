"""ringkv's peer health checks under load, with real processes (health-interval 200 ms,
failure-limit 3, request-timeout 1 s):

- fail mode, 3 nodes: kill -9 a peer while load generators send GET/SET on many keys through
  node 1. Only the dead node's keys fail, nothing hangs, the peer is marked down within about
  failure-limit intervals, then its keys fail with `unavailable: down`, and the throughput of the
  other keys holds; a restart of that peer alone brings its keys back (times-down=1, state up).
- fail mode: SIGSTOP a peer (hung): caught by the pings; the requests it holds fail when it is
  marked down, none waits longer than request-timeout; SIGCONT and it recovers.
- eject mode, 5 nodes: kill -9 a peer under load: after detection (by a majority) its keys are
  served by the survivors as cache misses, spread over all of them, no other key moves; when it
  returns it is put back on the ring, the values its stand-ins took handed back to it first, and
  its keys go to it again.
- each state change is logged once, not at every ping.

    /usr/bin/python3 test_peer_failures.py --server build/ringkv-server
"""

import contextlib
import os
import random
import re
import signal
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cluster_support as cs  # noqa: E402
import harness  # noqa: E402

HEALTH_MS = 200
FAILURE_LIMIT = 3
REQUEST_TIMEOUT_MS = 1000
# A down peer must be noticed within failure-limit intervals, plus one interval for the phase of
# the health timer at the moment of the failure, plus slack for a loaded 2-core machine.
DETECT_LIMIT = HEALTH_MS * (FAILURE_LIMIT + 1) / 1000 + 0.6
# The longest any request may wait: the request timeout, plus the 50 ms timeout sweep and slack.
LATENCY_LIMIT = REQUEST_TIMEOUT_MS / 1000 + 0.5
WINDOW = 0.1  # seconds per throughput window

DOWN_LINE = "peer %s is down after %d failed pings"
UP_LINE = "peer %s is up again"
EJECT_LINE = "peer %s failed over"
BACK_LINE = "peer %s is back on the ring"


def options(mode):
    return {"health-interval": HEALTH_MS, "failure-limit": FAILURE_LIMIT, "on-peer-down": mode}


def peer_health(port, addr, host="127.0.0.1"):
    """Node `port`'s view of peer `addr` from CLUSTER NODES: {"state", "link", and the
    key=value health fields}; empty when the line is missing."""
    with harness.RespClient(port, host=host) as c:
        text = harness.parse_reply(c.call("CLUSTER", "NODES")).decode()
    lines = [line.split() for line in text.splitlines() if line.split()[:1] == [addr]]
    words = lines[0] if lines else []
    if len(words) < 4:
        return {}
    out = {"state": words[2], "link": words[3]}
    for word in words[4:]:
        for item in word.split(","):
            if "=" in item:
                k, v = item.split("=", 1)
                out[k] = v
    return out


def wait_for(what, limit, step=0.02):
    """Polls what() until it returns a true value; returns (value, seconds) or (None, limit)."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        value = what()
        if value:
            return value, time.monotonic() - start
        time.sleep(step)
    return None, limit


class Load:
    """Load generator threads, each with its own connection to `port`, sending one GET or SET at a
    time on random keys and recording (sent, done, key, reply) per request. A request not
    answered within `hang_limit` seconds is recorded as hung (reply None) and its connection
    replaced."""

    def __init__(self, port, keys, threads=4, hang_limit=LATENCY_LIMIT + 2.0, host="127.0.0.1"):
        self.port, self.keys, self.hang_limit, self.host = port, keys, hang_limit, host
        self.records = []
        self.stop_flag = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True)
                        for i in range(threads)]

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def stop(self):
        self.stop_flag.set()
        for t in self.threads:
            t.join(self.hang_limit + 5)

    def _run(self, seed):
        rng = random.Random(seed)
        client = None
        n = 0
        while not self.stop_flag.is_set():
            key = rng.choice(self.keys)
            n += 1
            argv = ("SET", key, "v%d" % n) if rng.random() < 0.5 else ("GET", key)
            start = time.monotonic()
            try:
                if client is None:
                    client = harness.RespClient(self.port, host=self.host,
                                                timeout=self.hang_limit)
                client.send(harness.encode_command(*argv))
                reply = client.read()
            except (OSError, ConnectionError) as e:
                # A timeout is a hung request; any other socket error is recorded as such too,
                # since node 1 never goes away in these tests.
                reply = None if isinstance(e, (socket.timeout, TimeoutError)) else (
                    b"-CLIENT " + str(e).encode() + b"\r\n")
                if client is not None:
                    client.close()
                client = None
            # list.append is atomic, so the test can watch the records while the load runs.
            self.records.append((start, time.monotonic(), key, reply))
        if client is not None:
            client.close()

    def between(self, t0, t1):
        """The records of requests sent in [t0, t1)."""
        return [r for r in self.records if t0 <= r[0] < t1]


class Poller:
    """Polls node `port`'s CLUSTER NODES line for `addr` every 20 ms and keeps the time of each
    change of its state (up/down), so detection times do not depend on when the test looks."""

    def __init__(self, port, addr, host="127.0.0.1"):
        self.port, self.addr, self.host = port, addr, host
        self.changes = []  # (monotonic time, state)
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stop_flag.set()
        self.thread.join(5)

    def _run(self):
        last = None
        while not self.stop_flag.is_set():
            try:
                state = peer_health(self.port, self.addr, self.host).get("state")
            except (OSError, ConnectionError):
                state = None
            if state and state != last:
                self.changes.append((time.monotonic(), state))
                last = state
            time.sleep(0.02)

    def first(self, state, after):
        """The time `state` was first seen after `after`, or None."""
        times = [t for t, s in self.changes if s == state and t >= after]
        return times[0] if times else None


@contextlib.contextmanager
def under_load(port, keys, watched, host="127.0.0.1", **load_options):
    """A Load on `keys` and a Poller of peer `watched`'s state, both through node `port` (at
    `host`), running for the `with` block, which gets (load, poller); both stop after it."""
    load = Load(port, keys, host=host, **load_options).start()
    poller = Poller(port, watched, host).start()
    try:
        yield load, poller
    finally:
        load.stop()
        poller.stop()


def rates(records, t0, t1, keep, errors_too=False):
    """Successful requests (answered ones, errors too, with `errors_too`) per second of the keys
    `keep` accepts, per WINDOW over [t0, t1)."""
    n = max(0, int((t1 - t0) / WINDOW))
    counts = [0] * n
    for _, done, key, reply in records:
        counted = reply is not None if errors_too else reply and reply[:1] != b"-"
        if t0 <= done < t0 + n * WINDOW and counted and keep(key):
            counts[int((done - t0) / WINDOW)] += 1
    return [c / WINDOW for c in counts]


def recovery_time(records, t_event, baseline, keep, horizon=4.0):
    """Seconds from t_event until the throughput of `keep` keys is back to half its baseline
    for three windows in a row (0.0 when it never dropped), or None within `horizon`."""
    series = rates(records, t_event, t_event + horizon, keep)
    for i in range(len(series) - 2):
        if all(r >= 0.5 * baseline for r in series[i : i + 3]):
            return i * WINDOW
    return None


def show_series(records, t_event, keep, what):
    """Prints the per-window rates around t_event, for the `keep` keys and for every reply (errors
    too), so a failed recovery check shows whether the server slowed for the other keys or the
    whole load did (the machine)."""
    t0 = t_event - 1.0
    t1 = max((r[1] for r in records), default=t_event)
    kept = rates(records, t0, t1, keep)
    every = rates(records, t0, t1, lambda key: True, errors_too=True)
    print("    %s: per %d ms from 1 s before the event, other keys: %s" % (
        what, WINDOW * 1000, " ".join("%.0f" % r for r in kept)))
    print("    %s: every reply: %s" % (what, " ".join("%.0f" % r for r in every)))


def unavailable(addr, reason=""):
    return b"-ERR peer %s unavailable: %s" % (addr.encode(), reason.encode())


def equal_lists(report, got, want, what):
    """Checks two lists of replies are equal, showing only the first differences."""
    bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    return report.check(len(got) == len(want) and not bad, what, "%d of %d differ, e.g. %r" % (
        len(bad) + abs(len(got) - len(want)), len(want), bad[:3]))


def check_log_lines(report, cluster, watchers, addr, downs, ejects, label):
    """Each watcher's log has the down/up lines (and eject/back lines) for `addr` exactly
    `downs` (`ejects`) times: once per state change, not once per ping."""
    for i in watchers:
        node = cluster.nodes[i]
        log = node.log(tail=None)
        down = len(re.findall(r"peer %s is down after %d failed pings \(" % (
            re.escape(addr), FAILURE_LIMIT), log))
        report.equal(down, downs, "%s: node %d logs '%s' once per failure" % (
            label, i + 1, DOWN_LINE % (addr, FAILURE_LIMIT)))
        report.equal(log.count(UP_LINE % addr), downs, "%s: node %d logs '%s' once per return"
                     % (label, i + 1, UP_LINE % addr))
        report.equal(log.count(EJECT_LINE % addr), ejects, "%s: node %d logs the ejection once "
                     "per failure" % (label, i + 1))
        report.equal(log.count(BACK_LINE % addr), ejects, "%s: node %d logs the return to the "
                     "ring once per return" % (label, i + 1))


def check_latencies(report, records, label):
    hung = [r for r in records if r[3] is None]
    worst = max((r[1] - r[0] for r in records), default=0.0)
    report.equal(len(hung), 0, "%s: no request hangs (%d requests)" % (label, len(records)))
    report.check(worst <= LATENCY_LIMIT, "%s: every request answered within request-timeout + "
                 "margin (%.1fs)" % (label, LATENCY_LIMIT), "slowest %.3fs" % worst)
    return worst


def check_error_owners(report, records, owner, dead_addr, label):
    """Every error reply is for a key the dead node owns, and names that peer."""
    errors = [r for r in records if r[3] is None or r[3][:1] == b"-"]
    wrong_owner = [(r[2], owner[r[2]]) for r in errors if owner[r[2]] != dead_addr]
    report.check(not wrong_owner, "%s: errors only for keys of %s (%d errors)" % (
        label, dead_addr, len(errors)), "%d others, e.g. %r" % (len(wrong_owner), wrong_owner[:3]))
    wrong_text = [r[3] for r in errors if not (r[3] or b"").startswith(unavailable(dead_addr))]
    report.check(not wrong_text, "%s: every error is '-ERR peer %s unavailable: ...'" % (
        label, dead_addr), repr(wrong_text[:3]))
    return errors


def reasons(errors):
    out = {}
    for r in errors:
        text = (r[3] or b"").decode(errors="replace").strip()
        reason = text.split("unavailable: ", 1)[-1]
        out[reason] = out.get(reason, 0) + 1
    return out


def cluster_info(port):
    return cs.info_fields(port, "CLUSTER", "INFO")


# -- fail mode: kill -9 under load, restart ------------------------------------------------------


def check_kill_under_load(report, cluster, owner, keys):
    ports, dead = cluster.ports, cluster.addresses[2]
    with under_load(ports[0], keys, dead) as (load, poller):
        time.sleep(1.5)
        t_kill = time.monotonic()
        cluster.kill(2)
        wait_for(lambda: poller.first("down", t_kill), DETECT_LIMIT + 1.0)
        t_down = poller.first("down", t_kill)
        time.sleep(0.8)
        health = peer_health(ports[0], dead)
        info = cluster_info(ports[0])
        with harness.RespClient(ports[0]) as c:
            section = harness.parse_reply(c.call("INFO", "cluster")).decode()
        t_restart = time.monotonic()
        cluster.restart(2)  # returns once node 3 answers PING
        t_ready = time.monotonic()
        wait_for(lambda: poller.first("up", t_restart), 5.0)
        t_up = poller.first("up", t_restart)
        time.sleep(1.5)
    records = load.records
    report.check(len(records) > 1000, "kill: the load generators ran", str(len(records)))

    before = [r for r in records if r[1] < t_kill]
    report.equal([r[3] for r in before if r[3] is None or r[3][:1] == b"-"], [],
                 "kill: no errors before the kill")
    detect = None if t_down is None else t_down - t_kill
    print("    kill -9: node 1 saw node 3 down after %s (limit %.2fs)" % (
        "%.3fs" % detect if detect is not None else "never", DETECT_LIMIT))
    report.check(detect is not None and HEALTH_MS * (FAILURE_LIMIT - 1) / 1000 <= detect
                 <= DETECT_LIMIT, "kill: down state in node 1's CLUSTER NODES after about "
                 "failure-limit x health-interval", repr(detect))
    report.equal(health.get("state"), "down", "kill: CLUSTER NODES says state down")
    report.equal(health.get("times-down"), "1", "kill: CLUSTER NODES says times-down=1")
    report.check(int(health.get("failures", 0)) >= FAILURE_LIMIT, "kill: CLUSTER NODES counts "
                 "the consecutive failures", repr(health))
    report.check("ejected" not in health, "kill: no ejected field in fail mode", repr(health))
    report.equal((info.get("cluster_state"), info.get("cluster_peers_up"),
                  info.get("cluster_peers_down"), info.get("cluster_on_peer_down"),
                  info.get("cluster_routing_members")), ("degraded", "1", "1", "fail", "3"),
                 "kill: CLUSTER INFO state, peers up/down, on-peer-down, routing members")
    report.check(re.search(r"^peer\d+:addr=%s,state=down,.*times-down=1," % re.escape(dead), section,
                           re.M) is not None, "kill: INFO cluster shows the peer down", section)

    during = load.between(t_kill, t_restart)
    errors = check_error_owners(report, during, owner, dead, "kill")
    after_down = [r for r in errors if t_down is not None and r[0] > t_down + 0.05]
    report.check(after_down and all(r[3] == unavailable(dead, "down") + b"\r\n"
                                    for r in after_down),
                 "kill: once detected, node 3's keys fail with 'unavailable: down'",
                 repr(reasons(after_down)))
    dead_ok = [r for r in during if owner[r[2]] == dead and r[0] > t_kill + 0.05
               and r[3] and r[3][:1] != b"-"]
    report.equal(len(dead_ok), 0, "kill: no request for node 3's keys succeeds while it is dead")
    print("    kill -9: errors by reason %r" % reasons(errors))
    worst = check_latencies(report, records, "kill")

    keep = lambda k: owner[k] != dead  # noqa: E731
    base = statistics.median(rates(records, t_kill - 1.0, t_kill, keep))
    low = min(rates(records, t_kill, (t_down or t_kill) + 0.2, keep) or [0.0])
    after = statistics.median(rates(records, (t_down or t_kill), (t_down or t_kill) + 0.8, keep))
    recovered = recovery_time(records, t_kill, base, keep)
    print("    kill -9: other keys %.0f req/s before, lowest 100 ms window %.0f req/s until "
          "detection, %.0f req/s after; back to half the rate %s after the kill; slowest "
          "request %.3fs" % (base, low, after, "never" if recovered is None else
                             "%.1fs" % recovered, worst))
    if recovered is None or recovered > 1.0:
        show_series(records, t_kill, keep, "kill -9")
    report.check(recovered is not None and recovered <= 1.0, "kill: the other keys' throughput "
                 "is back within a second", repr(recovered))

    up = None if t_up is None else t_up - t_ready
    print("    restart: node 1 saw node 3 up %s after it answered PING" % (
        "never" if up is None else "%.3fs" % up))
    report.check(up is not None and up <= HEALTH_MS / 1000 + 0.5,
                 "restart: node 1 marks node 3 up within about one health interval", repr(up))
    late = load.between((t_up or t_ready) + 0.1, float("inf"))
    late_errors = [r for r in late if r[3] is None or r[3][:1] == b"-"]
    report.equal(reasons(late_errors), {}, "restart: no errors once node 3 is up again")
    report.check(any(owner[r[2]] == dead for r in late), "restart: the load reached node 3's "
                 "keys after it came back")
    first_ok = [r[1] for r in load.between(t_restart, float("inf"))
                if owner[r[2]] == dead and r[3] and r[3][:1] != b"-"]
    print("    restart: first success for node 3's keys %s after it answered PING" % (
        "never" if not first_ok else "%.3fs" % (min(first_ok) - t_ready)))
    with harness.RespClient(ports[1]) as c:
        c.call("GET", next(k for k in keys if owner[k] == dead))
    for i in (0, 1):
        health = peer_health(ports[i], dead)
        report.equal((health.get("state"), health.get("times-down"), health.get("failures")),
                     ("up", "1", "0"), "restart: node %d sees node 3 up, times-down=1, "
                     "failures=0" % (i + 1))
        report.equal(health.get("link"), "connected", "restart: node %d's relay link to node 3 "
                     "is connected after relaying to it" % (i + 1))
        report.equal(cluster_info(ports[i]).get("cluster_state"), "ok",
                     "restart: node %d's cluster_state is ok again" % (i + 1))
    check_log_lines(report, cluster, (0, 1), dead, 1, 0, "kill")


# -- fail mode: SIGSTOP / SIGCONT ----------------------------------------------------------------


def check_hung_under_load(report, cluster, owner, keys):
    ports, hung = cluster.ports, cluster.addresses[1]
    with under_load(ports[0], keys, hung) as (load, poller):
        time.sleep(1.0)
        t_stop = time.monotonic()
        cluster.kill(1, signal.SIGSTOP)
        try:
            wait_for(lambda: poller.first("down", t_stop), 2 * DETECT_LIMIT + 1.0)
            time.sleep(0.6)
            health = peer_health(ports[0], hung)
        finally:
            t_cont = time.monotonic()
            cluster.kill(1, signal.SIGCONT)
        wait_for(lambda: poller.first("up", t_cont), 5.0)
        t_up = poller.first("up", t_cont)
        time.sleep(1.0)
    records = load.records
    t_down = poller.first("down", t_stop)
    detect = None if t_down is None else t_down - t_stop
    print("    SIGSTOP: node 1 saw node 2 down after %s (limit %.2fs)" % (
        "%.3fs" % detect if detect is not None else "never", DETECT_LIMIT))
    report.check(detect is not None and detect <= DETECT_LIMIT, "SIGSTOP: the health check "
                 "marks the hung peer down within about failure-limit intervals", repr(detect))
    report.equal((health.get("state"), health.get("times-down")), ("down", "1"),
                 "SIGSTOP: CLUSTER NODES says state=down, times-down=1")
    during = load.between(t_stop, t_cont)
    errors = check_error_owners(report, during, owner, hung, "SIGSTOP")
    before_down = [r for r in errors if t_down is None or r[0] < t_down]
    report.check(before_down and all(r[1] <= (t_down or t_cont) + 0.1 for r in before_down),
                 "SIGSTOP: requests for node 2's keys sent before detection fail once it is "
                 "detected (or timed out earlier), none waits past it", repr(reasons(before_down)))
    after_down = [r for r in errors if t_down is not None and r[0] > t_down + 0.05]
    report.check(after_down and all(r[3] == unavailable(hung, "down") + b"\r\n"
                                    for r in after_down),
                 "SIGSTOP: once detected, node 2's keys fail at once with 'unavailable: down'",
                 repr(reasons(after_down)))
    print("    SIGSTOP: errors by reason %r" % reasons(errors))
    worst = check_latencies(report, records, "SIGSTOP")
    keep = lambda k: owner[k] != hung  # noqa: E731
    base = statistics.median(rates(records, t_stop - 0.8, t_stop, keep))
    recovered = recovery_time(records, t_down or t_stop, base, keep)
    print("    SIGSTOP: other keys %.0f req/s before; back to half the rate %s after detection; "
          "slowest request %.3fs" % (base, "never" if recovered is None else
                                     "%.1fs" % recovered, worst))
    if recovered is None or recovered > 1.0:
        show_series(records, t_down or t_stop, keep, "SIGSTOP")
    report.check(recovered is not None and recovered <= 1.0, "SIGSTOP: the other keys' "
                 "throughput is back within a second of detection", repr(recovered))
    up = None if t_up is None else t_up - t_cont
    print("    SIGCONT: node 1 saw node 2 up after %s" % ("never" if up is None else "%.3fs" % up))
    report.check(up is not None and up <= HEALTH_MS / 1000 + 0.5,
                 "SIGCONT: node 2 is marked up within about one health interval", repr(up))
    late = load.between((t_up or t_cont) + 0.1, float("inf"))
    report.equal(reasons([r for r in late if r[3] is None or r[3][:1] == b"-"]), {},
                 "SIGCONT: no errors once node 2 is up again")
    report.check(any(owner[r[2]] == hung for r in late), "SIGCONT: the load reached node 2's "
                 "keys after it recovered")
    health = peer_health(ports[0], hung)
    report.equal((health.get("state"), health.get("times-down")), ("up", "1"),
                 "SIGCONT: state up, times-down=1")
    check_log_lines(report, cluster, (0, 2), hung, 1, 0, "SIGSTOP")
    report.check(re.search(r"%s \(timeout\)" % re.escape(DOWN_LINE % (hung, FAILURE_LIMIT)),
                           cluster.nodes[0].log(tail=None)) is not None,
                 "SIGSTOP: the down line gives the reason (timeout)")


# -- fail mode: a peer that returns right after it was marked down ------------------------------


def check_quick_return(report, binary):
    """2 nodes, failure-limit 10: under load, kill -9 node 2 and restart it as soon as node 1 marks
    it down. The long detection lets node 1's relay link back off for a while (100 ms doubling
    per failed reconnect); once node 1 marks node 2 up again, requests for its keys must work,
    not fail with a stale 'connection refused' until that backoff runs out."""
    limit = 10
    opts = {"health-interval": HEALTH_MS, "failure-limit": limit, "on-peer-down": "fail"}
    with harness.Cluster(binary, 2, name="pf-quick", request_timeout=REQUEST_TIMEOUT_MS,
                         cluster_options=opts) as cluster:
        ports, dead = cluster.ports, cluster.addresses[1]
        keys = ["quick:%d" % i for i in range(1000)]
        owner = dict(zip(keys, cs.owners_of(ports[0], keys)))
        with under_load(ports[0], keys, dead, threads=2) as (load, poller):
            time.sleep(0.5)
            t_kill = time.monotonic()
            cluster.kill(1)
            wait_for(lambda: poller.first("down", t_kill), HEALTH_MS * (limit + 1) / 1000 + 1.0)
            t_down = poller.first("down", t_kill)
            t_restart = time.monotonic()
            cluster.restart(1)
            wait_for(lambda: poller.first("up", t_restart), 3.0)
            t_up = poller.first("up", t_restart)
            time.sleep(1.0)
        report.check(t_down is not None and t_up is not None, "quick return: node 1 saw node 2 "
                     "go down and come back", repr(poller.changes))
        check_error_owners(report, load.records, owner, dead, "quick return")
        stale = [r for r in load.records if t_up is not None and r[0] > t_up
                 and (r[3] is None or r[3][:1] == b"-")]
        window = max((r[1] for r in stale), default=t_up or 0) - (t_up or 0)
        print("    quick return: down after %.3fs, up %.3fs after the restart began; %d requests "
              "sent after node 1 showed it up failed anyway, the last %.3fs after that (%r)" % (
                  (t_down or t_kill) - t_kill, (t_up or t_restart) - t_restart, len(stale),
                  window, reasons(stale)))
        report.equal(reasons(stale), {}, "quick return: once node 1 shows node 2 up, requests for "
                     "its keys no longer fail (no stale backoff of the relay link)")


# -- eject mode: 5 nodes -------------------------------------------------------------------------


def check_eject(report, cluster):
    ports, addrs = cluster.ports, cluster.addresses
    dead_i = 2
    dead = addrs[dead_i]
    survivors = [i for i in range(len(ports)) if i != dead_i]
    sample = ["spread:%d" % i for i in range(20000)]
    owners_before = cs.owners_of(ports[0], sample)
    owner = dict(zip(sample, owners_before))
    # The load uses keys of its own, so the values checked below are only written by the checks.
    load_keys = ["eload:%d" % i for i in range(3000)]
    owner.update(zip(load_keys, cs.owners_of(ports[0], load_keys)))
    # Values written before the failure: some of the dead node's keys and some of the others'.
    dead_keys = [k for k in sample if owner[k] == dead][:300]
    other_keys = [k for k in sample if owner[k] != dead][:300]
    replies = cs.pipeline(ports[0], [("SET", k, "before") for k in dead_keys + other_keys])
    report.equal(replies.count(cs.OK), 600, "eject: 600 keys written before the failure")

    with under_load(ports[0], load_keys, dead) as (load, poller):
        time.sleep(1.0)
        t_kill = time.monotonic()
        cluster.kill(dead_i)
        wait_for(lambda: poller.first("down", t_kill), DETECT_LIMIT + 1.0)
        t_down = poller.first("down", t_kill)
        # The survivors eject the dead node together, once its lease has run out.
        t_wait = time.monotonic()
        ejected, took = wait_for(lambda: all(
            cluster_info(ports[i]).get("cluster_routing_members") == "4" for i in survivors), 5.0)
        time.sleep(0.5)
        t_checks = time.monotonic()
        health = peer_health(ports[0], dead)
        info = cluster_info(ports[0])
        owners_after = cs.owners_of(ports[0], sample)
        views = [cs.owners_of(ports[i], dead_keys) for i in survivors]
        gets = cs.pipeline(ports[1], [("GET", k) for k in dead_keys])
        sets = cs.pipeline(ports[0], [("SET", k, "during") for k in dead_keys])
        reads = [cs.pipeline(ports[i], [("GET", k) for k in dead_keys]) for i in survivors]
        others = cs.pipeline(ports[3], [("GET", k) for k in other_keys])
        t_restart = time.monotonic()
        cluster.restart(dead_i)
        back, back_took = wait_for(lambda: all(
            cluster_info(ports[i]).get("cluster_routing_members") == "5" for i in survivors), 5.0)
        time.sleep(0.5)
    t_up = poller.first("up", t_restart)

    detect = None if t_down is None else t_down - t_kill
    print("    eject: node 1 saw node 3 down after %s; all survivors ejected it %s" % (
        "never" if detect is None else "%.3fs" % detect,
        "never" if not ejected else "%.3fs after that" % took))
    report.check(detect is not None and detect <= DETECT_LIMIT, "eject: node 3 detected down "
                 "within about failure-limit intervals", repr(detect))
    report.check(ejected, "eject: every survivor's routing ring has 4 members")
    report.equal((health.get("state"), health.get("ejected"), health.get("times-down")),
                 ("down", "yes", "1"), "eject: CLUSTER NODES says state=down, ejected=yes")
    report.equal((info.get("cluster_state"), info.get("cluster_on_peer_down"),
                  info.get("cluster_peers_down"), info.get("cluster_routing_members")),
                 ("degraded", "eject", "1", "4"), "eject: CLUSTER INFO while node 3 is out")

    # The load: errors only for node 3's keys and only until it was ejected; nothing hangs.
    records = load.records
    report.check(len(records) > 1000, "eject: the load generators ran", str(len(records)))
    check_error_owners(report, load.between(t_kill, t_restart), owner, dead, "eject")
    late = [r for r in load.between(t_wait + took + 0.1, float("inf"))
            if r[3] is None or r[3][:1] == b"-"]
    if not report.equal(reasons(late), {}, "eject: no errors at all once node 3 is ejected (its "
                        "keys are served by the survivors, and again by node 3 after its return)"):
        # When they came and whose keys they were, against what node 1 saw of node 3.
        t_ejected = t_wait + took
        print("      node 1's view of node 3 after the kill: %s" % ", ".join(
            "%s at %+.3fs" % (state, t - t_kill) for t, state in poller.changes if t >= t_kill))
        print("      ejected at %+.3fs, restart at %+.3fs, back on every ring by %+.3fs (times "
              "from the kill)" % (t_ejected - t_kill, t_restart - t_kill,
                                  t_restart + back_took - t_kill))
        for sent, done, key, reply in late[:3] + late[-3:]:
            print("      %+.3fs %s (owner %s before the kill): %r" % (
                sent - t_kill, key, owner.get(key), reply))
    check_latencies(report, records, "eject")

    # Where node 3's keys went.
    moved = [(k, b, a) for k, b, a in zip(sample, owners_before, owners_after) if b != a]
    report.check(all(b == dead for _, b, _ in moved), "eject: only node 3's keys change owner",
                 repr([m for m in moved if m[1] != dead][:3]))
    report.equal(sum(a == dead for a in owners_after), 0, "eject: CLUSTER OWNER never names the "
                 "dead node")
    spread = {addrs[i]: sum(a == addrs[i] for _, _, a in moved) for i in survivors}
    print("    eject: %d of 20000 sample keys were node 3's; they moved to %s" % (
        len(moved), ", ".join("node %d: %d (%.0f%%)" % (i + 1, spread[addrs[i]],
                                                        100.0 * spread[addrs[i]] / len(moved))
                              for i in survivors)))
    report.equal(len(moved), owners_before.count(dead), "eject: every one of node 3's keys moved")
    report.check(all(n >= 0.10 * len(moved) for n in spread.values()),
                 "eject: every survivor takes at least 10% of node 3's keys", repr(spread))
    agree = all(v == [owners_after[sample.index(k)] for k in dead_keys] for v in views)
    report.check(agree, "eject: every survivor names the same new owner for node 3's keys")
    equal_lists(report, gets, [cs.NIL] * len(dead_keys), "eject: node 3's keys are cache misses "
                "(GET nil) through node 2")
    equal_lists(report, sets, [cs.OK] * len(dead_keys), "eject: SET of node 3's keys succeeds")
    for i, got in zip(survivors, reads):
        equal_lists(report, got, [cs.bulk("during")] * len(dead_keys), "eject: the new values "
                    "read back through node %d" % (i + 1))
    equal_lists(report, others, [cs.bulk("before")] * len(other_keys), "eject: the other nodes' "
                "keys kept their values")

    # The return.
    up = None if t_up is None else t_up - t_restart
    print("    eject: node 3 back on every survivor's ring %s; node 1 saw it up %s after the "
          "restart began" % ("yes" if back else "no", "never" if up is None else "%.3fs" % up))
    report.check(back, "eject: node 3 is back on every survivor's routing ring")
    owners_back = cs.owners_of(ports[0], sample)
    report.check(owners_back == owners_before, "eject: CLUSTER OWNER names the original owner of "
                 "all 20000 keys again", "%d differ" % sum(
                     a != b for a, b in zip(owners_back, owners_before)))
    health = peer_health(ports[0], dead)
    report.equal((health.get("state"), health.get("ejected"), health.get("times-down")),
                 ("up", "no", "1"), "eject: CLUSTER NODES says state=up, ejected=no, "
                 "times-down=1 after the return")
    equal_lists(report, cs.pipeline(ports[1], [("GET", k) for k in dead_keys]),
                [cs.bulk("during")] * len(dead_keys), "eject: node 3's keys are read from node 3 "
                "again, with the values its stand-ins took while it was out (handed back)")
    equal_lists(report, cs.pipeline(ports[4], [("SET", k, "after") for k in dead_keys[:50]]),
                [cs.OK] * 50, "eject: SET node 3's keys through node 5 after the return")
    stored = set(cs.local_keys(ports[dead_i]))
    report.check(set(dead_keys[:50]) <= stored, "eject: those keys are stored on node 3",
                 "%d of 50 missing" % len(set(dead_keys[:50]) - stored))
    report.check(all(owner.get(k) == dead for k in stored), "eject: node 3 stores only its own "
                 "keys", repr([k for k in stored if owner.get(k) != dead][:3]))
    print("    eject: checks after the failure took %.1fs" % (t_restart - t_checks))
    check_log_lines(report, cluster, survivors, dead, 1, 1, "eject")


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_peer_failures")

    print("3 nodes, on-peer-down fail, health-interval %d ms, failure-limit %d, "
          "request-timeout %d ms" % (HEALTH_MS, FAILURE_LIMIT, REQUEST_TIMEOUT_MS), flush=True)
    with harness.Cluster(args.server, 3, name="pf-fail", request_timeout=REQUEST_TIMEOUT_MS,
                         cluster_options=options("fail")) as cluster:
        keys = ["load:%d" % i for i in range(3000)]
        owner = dict(zip(keys, cs.owners_of(cluster.ports[0], keys)))
        with cs.Section(report, "kill -9 under load, restart"):
            check_kill_under_load(report, cluster, owner, keys)
        with cs.Section(report, "SIGSTOP/SIGCONT under load"):
            check_hung_under_load(report, cluster, owner, keys)
        cs.check_clean_exits(report, cluster)

    print("2 nodes, on-peer-down fail, failure-limit 10: restart right after detection",
          flush=True)
    with cs.Section(report, "quick return after detection"):
        check_quick_return(report, args.server)

    print("5 nodes, on-peer-down eject", flush=True)
    with harness.Cluster(args.server, 5, name="pf-eject", request_timeout=REQUEST_TIMEOUT_MS,
                         cluster_options=options("eject")) as cluster:
        with cs.Section(report, "eject: kill -9 under load, return"):
            check_eject(report, cluster)
        cs.check_clean_exits(report, cluster)
    report.finish()


if __name__ == "__main__":
    main()
