"""Faults again and again, Jepsen style: a writer on every node keeping its model of
acknowledged values, and a nemesis that hits random nodes (seeded): kill -9 and a restart from
the append-only file after 0.3-3 s, a hang (SIGSTOP) too short for the health checks to fail it
over, or one long enough that they do.
- 3 nodes, replication-factor 2, replica-acks 1: one node at a time; the next fault comes 0-3 s
  after the last one healed, so it often lands while that node's restore (or a failover) is
  still under way, and it may hit the node just restored, or another whose copies that restore
  had not made yet.
- With --five, then 5 nodes, replication-factor 3, one node at a time as well (replica-acks 1);
  with --overlap, two nodes at a time at most (replica-acks 2: a majority stays, and a write is
  acknowledged once 3 members have it, so one of them is up), each fault starting 0-3 s after
  the one before it started, so that a failover or a restore may have a second member fail
  under it. Not by default, to keep the suite's time. They found two bugs the default round
  had not: seed 45 with --five lost whole keys (a node restarted while its failover waited out
  its lease opened its replication streams, and the replicas dropped their copies for a full
  copy from it, which the commit cut off; see test_restart_in_failover), and seed 22 with
  --overlap never settled (the coordinator of a failover killed, a member taking the change
  over, the coordinator restarting and resuming it: each was refused by the members that had
  recorded the other; see test_failover_coordinator), and seed 415 with --overlap never
  settled either (a failover of three members of five, prepared by two, taken up again by its
  restarted coordinator: too few votes left to ever prepare it; see test_failover_coordinator).
Whatever the cluster refuses meanwhile, once the faults end it must settle (every member back,
every stream online) and every key, read through every node, must hold its last acknowledged
write, with exactly its copies, each equal to the primary's; a counter INCRed beside the writes
must end between its acknowledged and its sent increments (none lost, none run twice); and keys
written all along with TTLs of 0.1-0.6 s must all be gone from every member (keys expire on every
member all through the faults).

    /usr/bin/python3 test_nemesis.py --server build/ringkv-server [--seed N] [--faults N] \
        [--five | --overlap]
"""

import os
import random
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import replication_support as repl  # noqa: E402

# Below health-interval × (failure-limit + 1) (200 ms × 4): a hang no failover follows.
SHORT_HANG = (0.1, 0.4)
# Longer than that: the node is failed over while it hangs (or as it continues).
LONG_HANG = (1.5, 3.5)
DOWN = (0.3, 3.0)
GAP = (0.0, 3.0)


class Counters(threading.Thread):
    """INCRs its counters through one node: a counter must end between the increments
    acknowledged and those sent (none lost, none run twice)."""

    def __init__(self, port, name, rng, stop, nkeys=50):
        super().__init__(daemon=True)
        self.port, self.rng, self.stop = port, rng, stop
        self.keys = ["%s:%d" % (name, i) for i in range(nkeys)]
        self.acked = {k: 0 for k in self.keys}
        self.sent = {k: 0 for k in self.keys}
        self.history = {k: [] for k in self.keys}  # (monotonic end, increments sent, reply)

    def run(self):
        r = repl.client(self.port, timeout=3)
        while not self.stop.is_set():
            key = self.rng.choice(self.keys)
            self.sent[key] += 1
            try:
                got = r.incr(key)
            except Exception as e:  # noqa: BLE001 - unknown outcome
                self.history[key].append((time.monotonic(), self.sent[key], repr(e)[:60]))
                time.sleep(0.01)
                continue
            self.acked[key] += 1
            self.history[key].append((time.monotonic(), self.sent[key], got))


class Expiring(threading.Thread):
    """Writes new keys with a TTL of 0.1-0.6 s through one node, so that keys expire on every
    member all through the faults: while members are hung, failed over, restored. Once the
    cluster has settled and every TTL passed, no member holds any of them (a primary deletes its
    keys, its replicas drop their copies as its stream says)."""

    def __init__(self, port, name, rng, stop):
        super().__init__(daemon=True)
        self.port, self.name, self.rng, self.stop = port, name, rng, stop
        self.written = 0

    def run(self):
        r = repl.client(self.port, timeout=3)
        while not self.stop.is_set():
            try:
                r.set("%s:%d" % (self.name, self.written), "v", px=self.rng.randint(100, 600))
            except Exception:  # noqa: BLE001 - refused or unknown: it expires anyway
                time.sleep(0.01)
            self.written += 1


def check_expired(report, ports, model, counters, expiring, rf, what):
    """Every key written with a TTL is gone, copies included: the members hold, all together,
    exactly `rf` copies of each of the other keys that exist (INFO keyspace counts every copy),
    within 10 s (the primaries' active expiry deletes them, and streams the deletions)."""
    with model.lock:
        keys = sorted(model.sent)
    keys += [k for c in counters for k in c.keys]
    r = repl.client(ports[0], timeout=20)
    existing = sum(1 for v in r.mget(keys) if v is not None)
    deadline = time.monotonic() + 10 * harness.timeout_scale()
    while True:
        held = [repl.keyspace_keys(p) for p in ports]
        if sum(held) == rf * existing or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    report.equal(sum(held), rf * existing,
                 "%s: the %d keys written with a TTL are gone from every member (copies per "
                 "member: %r)" % (what, sum(e.written for e in expiring), held))


def jumps(history, t0):
    """The increments around each acknowledged reply that is not the previous one plus 1."""
    out, last = [], None
    for i, (t, n, got) in enumerate(history):
        if isinstance(got, int):
            if last is not None and got != last + 1:
                out += [("%.3f" % (t2 - t0), n2, g2) for t2, n2, g2 in history[max(0, i - 3):i + 1]]
            last = got
    return out


def check_counters(report, ports, counters, rf, what, t0):
    keys = [k for c in counters for k in c.keys]
    acked = {k: c.acked[k] for c in counters for k in c.keys}
    sent = {k: c.sent[k] for c in counters for k in c.keys}
    for port in ports:
        values = repl.client(port, timeout=20).mget(keys)
        bad = [(k, v, acked[k], sent[k]) for k, v in zip(keys, values)
               if not acked[k] <= int(v or 0) <= sent[k]]
        report.check(not bad, "%s: every counter read through %d is between its acknowledged and "
                     "its sent increments" % (what, port), repr(bad[:5]))
        for key, *_ in bad[:2]:
            for c in counters:
                if key in c.history:
                    print("      %s's increments where a reply did not follow the one before "
                          "(+s, sent, reply): %s" % (key, jumps(c.history[key], t0)), flush=True)
    repl.check_copies(report, ports, keys, rf, what + ", counters")


def schedule(rng, n_nodes, faults, at_once):
    """The seeded fault plan, in time order: (seconds from the start, 0 for a heal or 1 for a
    fault, victim, "heal" or "fault", kind). Each fault starts 0-3 s after the one before it healed or, with `at_once` > 1, after
    the one before it started, as long as fewer than `at_once` nodes are hit at that moment."""
    events = []
    active = []  # (heal time, victim)
    t = 1.0
    for _ in range(faults):
        active = [(h, v) for h, v in active if h > t]
        if len(active) >= at_once:
            t = min(h for h, _ in active)
            active = [(h, v) for h, v in active if h > t]
        kind = rng.choice(["kill", "short hang", "long hang"])
        span = {"kill": DOWN, "short hang": SHORT_HANG, "long hang": LONG_HANG}[kind]
        victim = rng.choice([i for i in range(n_nodes) if i not in {v for _, v in active}])
        heal = t + rng.uniform(*span)
        # At equal times a heal comes first: never more than `at_once` nodes hit.
        events += [(t, 1, victim, "fault", kind), (heal, 0, victim, "heal", kind)]
        active.append((heal, victim))
        t = (t if at_once > 1 else heal) + rng.uniform(*GAP)
    return sorted(events)


def run_nemesis(report, binary, rng, n_nodes, rf, faults, at_once):
    # A write acknowledged by `at_once` replicas survives `at_once` members failing together.
    acks = at_once
    label = "%d nodes, replication-factor %d, replica-acks %d, up to %d node(s) at once" % (
        n_nodes, rf, acks, at_once)
    print("%s: %d faults" % (label, faults), flush=True)
    plan = schedule(rng, n_nodes, faults, at_once)
    with repl.durable_cluster(binary, n_nodes, "nemesis", rf, acks) as c:
        ports = c.ports
        repl.settle(ports)
        model = repl.Model()
        stop = threading.Event()
        writers = repl.start_writers(model, ports, rng, stop)
        counters = [Counters(p, "c%d" % i, random.Random(rng.random()), stop)
                    for i, p in enumerate(ports)]
        expiring = [Expiring(p, "x%d" % i, random.Random(rng.random()), stop)
                    for i, p in enumerate(ports)]
        for w in counters + expiring:
            w.start()
        t0 = time.monotonic()
        try:
            for at, _, victim, what, kind in plan:
                time.sleep(max(0.0, t0 + at - time.monotonic()))
                print("    +%5.2f s: node %d: %s %s" % (time.monotonic() - t0, victim + 1, kind,
                                                      "starts" if what == "fault" else "ends"),
                      flush=True)
                if what == "fault":
                    c.kill(victim, signal.SIGKILL if kind == "kill" else signal.SIGSTOP)
                elif kind == "kill":
                    c.restart(victim)
                else:
                    c.kill(victim, signal.SIGCONT)
            # The writers go on for a while after the last fault: the restores run under writes.
            time.sleep(1.0)
        finally:
            repl.stop_writers(stop, writers + counters + expiring)
        what = "%s, after %d faults" % (label, faults)
        try:
            repl.check_after_faults(report, ports, model, what, True, rf)
            check_counters(report, ports, counters, rf, what, t0)
            check_expired(report, ports, model, counters, expiring, rf, what)
        except AssertionError as e:
            report.check(False, "%s: the cluster settles" % what, str(e))
            print(c.logs(tail=3000), flush=True)
            return
        infos = [repl.cluster_info(p) for p in ports]
        print("    restores: %d resumed, %d copied in full" %
              (sum(int(i.get("cluster_restores_resumed", 0)) for i in infos),
               sum(int(i.get("cluster_restores_full", 0)) for i in infos)), flush=True)
        report.check(model.writes > 0, "%s: writes were acknowledged during the faults" % what)


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--faults", type=int, default=10)
    p.add_argument("--five", action="store_true",
                   help="a second round on 5 nodes (see the note at the top)")
    p.add_argument("--overlap", action="store_true",
                   help="the second round, with two nodes at once at most")
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_nemesis")
    faults = harness.scaled(args.faults, 3)
    run_nemesis(report, args.server, rng, 3, 2, faults, 1)
    if args.five or args.overlap:
        run_nemesis(report, args.server, rng, 5, 3, faults, 2 if args.overlap else 1)
    report.finish()


if __name__ == "__main__":
    main()
