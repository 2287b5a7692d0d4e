"""A failover whose coordinator fails mid-way does not stop the cluster (issue 14): 5 members,
replication-factor 3 (each key keeps a live copy when 2 members fail), replica-acks 1, writers
on every node. A member R is killed (kill -9); the
member that proposes failovers (the first by address) coordinates R's failover and, by the test
hook RINGKV_TEST_STOP_COORDINATOR, stops itself (SIGSTOP) right after every member prepared
it. Then the coordinator is killed (kill -9), left hung, or continued 1.5 s later (a hang that
ends mid-way). Within 3 s of the coordinator's fault, the keys of both failed members are
writable through every survivor; the members end on one ring; no acknowledged write is lost and
a continued coordinator never answers a value older than acknowledged.

Then a failover whose members recorded two coordinators: its coordinator A was killed once every
member prepared it, a member B took it over, and A restarted before B's prepare reached every
member. Each of A and B completes the change (it never aborts it), and each needs the votes of
the members that recorded the other one: the change still commits, and then the failed members
are restored, with no acknowledged write lost.

    /usr/bin/python3 test_failover_coordinator.py --server build/ringkv-server [--seed N]
"""

import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import test_replication as repl  # noqa: E402

HOOK = "RINGKV_TEST_STOP_COORDINATOR"


def process_stopped(pid):
    """Whether the process is stopped (state T in /proc/PID/stat)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except OSError:
        return False


def wait_stopped(node, seconds):
    """Waits up to `seconds` (scaled) for `node` to stop itself; returns whether it did."""
    deadline = time.monotonic() + seconds * harness.timeout_scale()
    while not process_stopped(node.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return process_stopped(node.pid)


def check_round(report, binary, rng, fault):
    label = "coordinator %s after the prepare round" % fault
    c = repl.durable_cluster(binary, 5, "failover-coord", 3, 1)
    # The member that proposes failovers is the first live one by address.
    coord = min(range(5), key=lambda i: c.addresses[i])
    victim = rng.choice([i for i in range(5) if i != coord])
    os.environ[HOOK] = c.addresses[coord] + " failover-prepared"
    try:
        c.start()
    finally:
        # Only the first start has the hook: a restarted node must not stop itself again.
        del os.environ[HOOK]
    try:
        run_round(report, c, rng, fault, label, coord, victim)
    finally:
        c.cleanup()


def run_round(report, c, rng, fault, label, coord, victim):
    ports = c.ports
    repl.settle(ports)
    survivors = [p for i, p in enumerate(ports) if i not in (victim, coord)]
    model = repl.Model()
    stop = threading.Event()
    writers = repl.start_writers(model, ports, rng, stop)
    try:
        time.sleep(1.0)
        with model.lock:
            all_keys = sorted(model.sent)
        owner = repl.owners(ports[coord], all_keys)
        # The keys of each failed member, the victim's and the coordinator's.
        failed_keys = [{k for k in all_keys if owner[k] == c.addresses[i]}
                       for i in (victim, coord)]
        c.kill(victim)
        stopped = wait_stopped(c.nodes[coord], 10)
        t_fault = time.monotonic()
        report.check(stopped, "%s: the coordinator stopped itself after preparing the "
                     "failover of node %d" % (label, victim + 1), c.logs())
        if not stopped:
            return
        if fault == "kill -9":
            c.kill(coord)
        elif fault == "continued":
            time.sleep(1.5)
            c.kill(coord, signal.SIGCONT)
        # The victim's keys must come back within the bound for one failure. The
        # coordinator's come after two failovers in a row (the taken-over one, then its own,
        # each waiting out a lease): measured at about 2.2 s, checked against twice the bound.
        limits = (repl.FAILOVER_LIMIT, 2 * repl.FAILOVER_LIMIT)
        time.sleep(limits[1] + 1.0 - (time.monotonic() - t_fault))
        for who, keys, limit in zip(("victim", "coordinator"), failed_keys, limits):
            firsts = repl.first_success_after(
                [w for i, w in enumerate(writers) if i not in (victim, coord)], t_fault, keys)
            print("    %s: writes to the %d keys of the %s resumed after %s s through the "
                  "survivors" % (label, len(keys), who, ", ".join(
                      "-" if f is None else "%.2f" % f for f in firsts)), flush=True)
            report.check(all(f is not None and f <= limit for f in firsts),
                         "%s: the %s's keys are writable through every survivor within %.0f s"
                         % (label, who, limit), repr(firsts) + "\n" + c.logs())
        if fault == "continued":
            stale = repl.stale_reads(ports[coord], dict(model.acked), rng, seconds=1.0)
            report.check(not stale, "%s: reads through the continued coordinator never "
                         "return a value older than an acknowledged write" % label,
                         repr(stale[:5]))
        else:
            infos = [repl.cluster_info(p) for p in survivors]
            report.check(all(i.get("cluster_failed") == "2" for i in infos),
                         "%s: every survivor has both members failed over" % label,
                         repr([i.get("cluster_failed") for i in infos]))
            c.restart(coord)
        c.restart(victim)
        time.sleep(0.5)
    finally:
        repl.stop_writers(stop, writers)
    repl.check_after_faults(report, ports, model, label, True, 3, keys_checked=300)


def check_two_coordinators(report, binary, rng):
    label = "a failover recorded with two coordinators"
    with repl.durable_cluster(binary, 5, "two-coordinators", 3, 1) as c:
        ports = c.ports
        repl.settle(ports)
        model = repl.Model()
        stop = threading.Event()
        writers = repl.start_writers(model, ports, rng, stop)
        time.sleep(1.0)
        repl.stop_writers(stop, writers)
        # A coordinates the failover of two members (replication-factor 3 keeps a copy of each
        # key); B took it over and holds A's record itself (its own prepare was refused once A
        # answered again), C holds B's. The two failed members stay down meanwhile.
        order = sorted(range(5), key=lambda i: c.addresses[i])
        a, b, m = order[0], order[1], rng.choice(order[2:])
        failed = [i for i in order[2:] if i != m]
        version = int(repl.cluster_info(ports[a])["cluster_ring_version"])
        for i in range(5):
            c.kill(i)
        members = ["member %s 1" % addr for addr in c.addresses]
        ring = ["ringkv-ring 1", "version %d" % version] + members
        pending = ["pending %d" % (version + 1)] + ["pending-" + line for line in members]
        pending += ["pending-failed " + a for a in sorted(c.addresses[i] for i in failed)]
        records = {a: ["coordinator " + c.addresses[a]], b: ["coordinator " + c.addresses[a]],
                   m: ["coordinator " + c.addresses[b], "completes"]}
        for i, record in records.items():
            with open(os.path.join(c.nodes[i].dir, "ring"), "w") as f:
                f.write("\n".join(ring + pending[:1] + record + pending[1:]) + "\n")
        t0 = time.monotonic()
        for i in records:
            c.restart(i)
        deadline = t0 + 20 * harness.timeout_scale()
        versions = []
        while time.monotonic() < deadline:
            versions = [repl.cluster_info(ports[i]).get("cluster_ring_version") for i in records]
            if all(v is not None and int(v) > version for v in versions):
                break
            time.sleep(0.1)
        committed = all(v is not None and int(v) > version for v in versions)
        print("    %s: the members left ring version %d after %.2f s (%s)" %
              (label, version, time.monotonic() - t0, versions), flush=True)
        report.check(committed, "%s: the members commit it (and leave ring version %d)" %
                     (label, version), repr(versions) + "\n" + c.logs())
        for i in failed:
            c.restart(i)
        repl.check_after_faults(report, ports, model, label, True, 3)


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_failover_coordinator")
    faults = ["kill -9", "stopped", "continued"]
    rng.shuffle(faults)
    # Every fault at full scale; fewer under the sanitizers' reduced scale.
    for fault in faults[:harness.scaled(len(faults), 1)]:
        check_round(report, args.server, rng, fault)
    check_two_coordinators(report, args.server, rng)
    report.finish()


if __name__ == "__main__":
    main()
