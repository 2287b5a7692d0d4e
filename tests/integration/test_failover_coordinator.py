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
are restored, with no acknowledged write lost. And a failover of three members of five, prepared
by two and taken up again by its restarted coordinator: its participants' votes can never make a
majority, so nobody committed it, and the coordinator aborts it instead of resuming it forever.
And a coordinator's late abort of a failover that another member took over from it: a member
that recorded the other coordinator keeps the change, which commits.

    /usr/bin/python3 test_failover_coordinator.py --server build/ringkv-server [--seed N]
"""

import contextlib
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import replication_support as repl  # noqa: E402

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
    with repl.writing(model, ports, rng) as writers:
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
            repl.check_writable_again(
                report, label, "the %d keys of the %s" % (len(keys), who),
                [w for i, w in enumerate(writers) if i not in (victim, coord)], t_fault, keys,
                limit, "\n" + c.logs())
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
    repl.check_after_faults(report, ports, model, label, True, 3, keys_checked=300)


@contextlib.contextmanager
def written_cluster(binary, rng, name):
    """A 5-member cluster (replication-factor 3, replica-acks 1) after a second of writes, for the
    `with` block: it gets the started cluster, its writers' model and its ring version, and the
    cluster is cleaned up after it."""
    c = repl.durable_cluster(binary, 5, name, 3, 1).start()
    try:
        repl.settle(c.ports)
        model = repl.Model()
        with repl.writing(model, c.ports, rng):
            time.sleep(1.0)
        yield c, model, int(repl.cluster_info(c.ports[0])["cluster_ring_version"])
    finally:
        c.cleanup()


def restart_with_pending(c, version, failed, records, restart):
    """Kills every member, gives each of `records` (index: its record of the coordinator) a ring
    file at `version` with the failover of `failed` to version + 1 prepared, and starts
    `restart` again."""
    for i in range(5):
        c.kill(i)
    members = ["member %s 1" % addr for addr in c.addresses]
    ring = ["ringkv-ring 1", "version %d" % version] + members
    pending = ["pending %d" % (version + 1)] + ["pending-" + line for line in members]
    pending += ["pending-failed " + a for a in sorted(c.addresses[i] for i in failed)]
    for i, record in records.items():
        with open(os.path.join(c.nodes[i].dir, "ring"), "w") as f:
            f.write("\n".join(ring + pending[:1] + record + pending[1:]) + "\n")
    for i in restart:
        c.restart(i)


def check_two_coordinators(report, binary, rng):
    label = "a failover recorded with two coordinators"
    with written_cluster(binary, rng, "two-coordinators") as (c, model, version):
        # A coordinates the failover of two members (replication-factor 3 keeps a copy of each
        # key); B took it over and holds A's record itself (its own prepare was refused once A
        # answered again), C holds B's. The two failed members stay down meanwhile.
        order = sorted(range(5), key=lambda i: c.addresses[i])
        a, b, m = order[0], order[1], rng.choice(order[2:])
        failed = [i for i in order[2:] if i != m]
        records = {a: ["coordinator " + c.addresses[a]], b: ["coordinator " + c.addresses[a]],
                   m: ["coordinator " + c.addresses[b], "completes"]}
        restart_with_pending(c, version, failed, records, records)
        states, waited = repl.wait_ring([c.ports[i] for i in records], lambda v, p: v > version)
        print("    %s: the members left ring version %d after %.2f s (%s)" %
              (label, version, waited, states), flush=True)
        report.check(all(v > version for v, _ in states), "%s: the members commit it (and leave "
                     "ring version %d)" % (label, version), repr(states) + "\n" + c.logs())
        for i in failed:
            c.restart(i)
        repl.check_after_faults(report, c.ports, model, label, True, 3)


def check_minority_failover(report, binary, rng):
    label = "a failover of three members of five, taken up again"
    with written_cluster(binary, rng, "minority-failover") as (c, model, version):
        # Its coordinator A (restarted) and one more member B prepared it; the three members it
        # fails over answer, and their votes are not its to count: two votes of five can never
        # prepare it, so nobody committed it, and A aborts it rather than resume it forever.
        order = sorted(range(5), key=lambda i: c.addresses[i])
        a, b = order[0], rng.choice(order[1:])
        records = {i: ["coordinator " + c.addresses[a]] for i in (a, b)}
        restart_with_pending(c, version, [i for i in range(5) if i not in records], records,
                             range(5))
        states, waited = repl.wait_ring(c.ports, lambda v, p: p is None)
        print("    %s: no member holds it after %.2f s (%s)" % (label, waited, states),
              flush=True)
        report.check(all(p is None for _, p in states), "%s: its coordinator aborts it" % label,
                     repr(states) + "\n" + c.logs())
        repl.check_after_faults(report, c.ports, model, label, True, 3)


def check_other_change(report, port, sender, version):
    """Steps of another change of the version prepared at `port` (FOR names the ring a change
    moves to: one aborted while a member was away leaves its version to the next) leave the
    prepared change alone: a member restarted with a stale change of that version, resolving it
    without its coordinator, once fenced and aborted the change a majority had prepared since
    (test_nemesis --overlap, seed 519: its members then took copies it was failing over)."""
    label = "steps of another change of the same version"
    other = "0123456789abcdef"
    with harness.RespClient(port) as link:
        link.call("RINGKV.PEER", sender, "control")
        replies = [link.call("RINGKV.RING", step, version, *extra, "FOR", other)
                   for step, extra in (("FENCE", ()), ("PAUSE", ()), ("COMMIT", ("RESOLVED",)),
                                       ("ABORT", ()))]
    states, _ = repl.wait_ring([port], lambda v, p: True)
    want = [b"+ABORTED\r\n",
            b"-NOCHANGE no ring change to version %d here\r\n" % version,
            b"-NOCHANGE no ring change to version %d here\r\n" % version,
            b"+OK\r\n"]
    print("    %s: %r, then %s" % (label, replies, states), flush=True)
    report.equal(replies, want, "%s: answered as steps of a change not held" % label)
    report.equal(states, [(version - 1, str(version))], "%s: the member keeps its change" % label)


def check_hopeless_resume(report, binary, rng):
    """A coordinator restarted with a failover in its ring file, whose failed members answer
    again: every participant says nobody committed it, its prepare is refused ('member ...
    answers here'), and it is aborted. Before, a failover taken up again was never aborted (another
    coordinator of it might have committed it), and it was taken up again every second, for
    good, with the failed members' restores kept waiting behind it (test_nemesis --overlap,
    seed 4059)."""
    label = "a resumed failover whose failed members answer"
    with written_cluster(binary, rng, "hopeless-resume") as (c, model, version):
        order = sorted(range(5), key=lambda i: c.addresses[i])
        a, m, x, y = rng.sample(order, 4)
        records = {a: ["coordinator " + c.addresses[a]], m: ["coordinator " + c.addresses[a]]}
        restart_with_pending(c, version, [x, y], records, range(5))
        states, waited = repl.wait_ring(c.ports, lambda v, p: p is None)
        print("    %s: no change held after %.2f s (%s)" % (label, waited, states), flush=True)
        report.check(all(p is None for _, p in states), "%s: it is aborted" % label,
                     repr(states) + "\n" + c.logs(tail=40))
        repl.check_after_faults(report, c.ports, model, label, True, 3)


def check_stale_abort(report, binary, rng):
    label = "a late abort from a coordinator the members no longer follow"
    with written_cluster(binary, rng, "stale-abort") as (c, model, version):
        # B took the failover of X over from A, which was down; every member recorded B. A comes
        # back and aborts the change after its own rounds failed: a member must keep the change
        # (B may commit it; dropping it would give X its lease again). M starts alone first, so
        # nothing moves the change on before A's abort reaches it.
        order = sorted(range(5), key=lambda i: c.addresses[i])
        x, a, b, m = rng.sample(order, 4)
        records = {i: ["coordinator " + c.addresses[b], "completes"] for i in order if i != x}
        restart_with_pending(c, version, [x], records, [m])
        with harness.RespClient(c.ports[m]) as link:
            link.call("RINGKV.PEER", c.addresses[a], "control")
            reply = link.call("RINGKV.RING", "ABORT", version + 1, "BY", c.addresses[a])
        states, _ = repl.wait_ring([c.ports[m]], lambda v, p: True)
        print("    %s: %r, then %s" % (label, reply, states), flush=True)
        report.check(reply.startswith(b"-") and states == [(version, str(version + 1))],
                     "%s: the member keeps the change" % label, repr((reply, states)))
        check_other_change(report, c.ports[m], c.addresses[a], version + 1)
        for i in order:
            if i not in (x, m):
                c.restart(i)
        states, waited = repl.wait_ring([c.ports[i] for i in records], lambda v, p: v > version)
        print("    %s: the members left ring version %d after %.2f s (%s)" %
              (label, version, waited, states), flush=True)
        report.check(all(v > version for v, _ in states), "%s: B commits it" % label,
                     repr(states) + "\n" + c.logs())
        c.restart(x)
        repl.check_after_faults(report, c.ports, model, label, True, 3)
        check_fence_answers(report, c.ports[m], c.addresses[a])


def check_fence_answers(report, port, sender):
    """A member asked whether it committed a change (FENCE, from a member resolving it without
    its coordinator) answers yes only for the ring it is on; on a later ring it says so, and the
    asking member takes that ring up instead of committing its own copy of the change."""
    label = "FENCE answers"
    info = repl.cluster_info(port)
    version, mine = int(info["cluster_ring_version"]), info["cluster_ring_fingerprint"]
    other = "0123456789abcdef"
    asked = [(version, "FOR", mine), (version, "FOR", other), (version - 1, "FOR", other),
             (version - 1,)]
    with harness.RespClient(port) as link:
        link.call("RINGKV.PEER", sender, "control")
        replies = [link.call("RINGKV.RING", "FENCE", *words) for words in asked]
    print("    %s on ring version %d: %r" % (label, version, replies), flush=True)
    report.equal(replies[:2], [b"+COMMITTED\r\n", b"+ABORTED\r\n"],
                 "%s: committed for its own ring only" % label)
    if version >= 2:
        report.equal(replies[2:], [b"+NEWER\r\n", b"+COMMITTED\r\n"],
                     "%s: an earlier version is answered as a later ring (as committed to a "
                     "FENCE that does not name its change)" % label)


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
    check_minority_failover(report, args.server, rng)
    check_stale_abort(report, args.server, rng)
    check_hopeless_resume(report, args.server, rng)
    report.finish()


if __name__ == "__main__":
    main()
