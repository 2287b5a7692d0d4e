"""A membership change whose coordinator fails mid-way does not stop the cluster: 3 members,
replication-factor 2, replica-acks 1, writers through the two members that are not the
coordinator, 2 000 keys written once before. A member coordinates CLUSTER JOIN of an empty node
(or, in one round, CLUSTER LEAVE of another of 4 members; in another, 5 members with
replication-factor 3, the restore of a member that was killed, failed over and restarted; in
another, 4 members with replication-factor 1, the forced leave of a member that was killed) and,
by the test hook
RINGKV_TEST_STOP_COORDINATOR, stops itself (SIGSTOP) at one moment of the change: every
participant paused (keyed requests held everywhere), every participant flushed (nothing
committed), or every participant but the coordinator committed. Then the coordinator is killed
(kill -9) or continued 1.5 s later (a hang that ends mid-way).

The other members resolve the change without it: they fence every participant (none takes the
coordinator's steps any more) and commit the change if one had committed it, else abort it. So
within a bounded time every writer's writes succeed again (the coordinator's keys after its
failover: a committed join or leave gave the members that became replicas of its keys their
copies before the ring switched, so those copies are complete);
the change ends the same way everywhere (aborted at the first two moments, committed at the
third, since the coordinator commits itself last); and once the coordinator is back no
acknowledged write is lost, every key has its 2 copies, none of the 2 000 is missing, and a node
whose join was aborted (or that left) holds nothing. (Before changes gave new replicas their
copies, that failover was refused after a committed join or leave — the copies dated from the
ring before — and failing it over anyway lost 323 of the 2 000 keys.)

    /usr/bin/python3 test_lost_coordinator.py --server build/ringkv-server [--seed N]
"""

import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import replication_support as repl  # noqa: E402
from test_failover_coordinator import wait_stopped  # noqa: E402

HOOK = "RINGKV_TEST_STOP_COORDINATOR"
MOMENTS = {"paused": "aborted", "flushed": "aborted", "committing": "committed"}
PERSIST = '[persistence]\nappendonly = true\nappendfsync = "always"\n'
# From the coordinator's fault to the first successful write of each writer (its own keys held
# by the pause: the coordinator must be seen down, 3 pings of 200 ms, then one resolution round).
RESUME_LIMIT = repl.FAILOVER_LIMIT
# The coordinator's keys come after the resolution and then its failover (a lease to wait out).
FAILOVER_AFTER_RESOLUTION_LIMIT = 2 * repl.FAILOVER_LIMIT


def members_of(port):
    """The members in CLUSTER NODES of the node at `port` (not those a change is adding)."""
    text = repl.client(port).execute_command("CLUSTER", "NODES").decode()
    return {line.split()[0] for line in text.splitlines()
            if line.strip() and " joining " not in line}


def start_hooked(c, coord, moment):
    """Starts the cluster with the coordinator `coord` set to stop itself at `moment`. Only this
    first start has the hook: a restarted node must not stop itself again."""
    os.environ[HOOK] = "%s %s" % (c.addresses[coord], moment)
    try:
        c.start()
    finally:
        del os.environ[HOOK]


def check_round(report, binary, rng, kind, moment, fault):
    """`kind` "join": 3 members and an empty node the coordinator joins; "leave": 4 members, and
    the coordinator makes another one leave."""
    label = "%s, coordinator %s at '%s'" % (kind, fault, moment)
    opts = dict(repl.HEALTH, **{"replication-factor": 2, "replica-acks": 1})
    n = 3 if kind == "join" else 4
    c = harness.Cluster(binary, n, name="lost-coord", cluster_options=opts, extra=PERSIST)
    coord = rng.randrange(n)
    start_hooked(c, coord, moment)
    nodes = list(c.nodes)
    if kind == "join":
        cand_port = harness.free_ports(1)[0]
        mover = harness.ClusterNode(
            binary, cand_port,
            harness.cluster_config(cand_port, [cand_port], cluster_options=opts, extra=PERSIST),
            "lost-coord-candidate")
        mover.start()
        nodes.append(mover)
    else:
        mover = c.nodes[rng.choice([i for i in range(n) if i != coord])]
    try:
        run_round(report, c, nodes, mover, rng, kind, moment, fault, label, coord)
    finally:
        for node in nodes:
            node.cleanup()


def run_round(report, c, nodes, mover, rng, kind, moment, fault, label, coord):
    ports = c.ports
    # Writers through the members that stay up and stay members.
    writing = [p for i, p in enumerate(ports) if i != coord and p != mover.port]
    static, model, stop, writers = start_round(c, coord, writing, rng)
    try:
        time.sleep(0.5)
        with model.lock:
            all_keys = sorted(model.sent)
        owner = repl.owners(writing[0], all_keys)
        coord_keys = {k for k in all_keys if owner[k] == c.addresses[coord]}
        repl.client(ports[coord]).execute_command("CLUSTER", kind.upper(), mover.address)
        t_fault = fault_coordinator(report, c, coord, fault, label,
                                    FAILOVER_AFTER_RESOLUTION_LIMIT + 1.0)
        if t_fault is None:
            return
        check_resumed(report, writers, t_fault, set(all_keys), label, logs(nodes))
        if fault == "kill -9":
            firsts = repl.first_success_after(writers, t_fault, coord_keys)
            print("    %s: writes to the coordinator's %d keys resumed after %s s" % (
                label, len(coord_keys), ", ".join(
                    "-" if f is None else "%.2f" % f for f in firsts)), flush=True)
            # Aborted, the ring is the one before; committed, the change gave every member that
            # became a replica of the coordinator's keys their copies before the switch (and the
            # coordinator marked its streams drained at its flush): complete either way.
            report.check(all(f is not None and f <= FAILOVER_AFTER_RESOLUTION_LIMIT
                             for f in firsts),
                         "%s: the coordinator's keys are writable through every other "
                         "member within %.0f s" % (label, FAILOVER_AFTER_RESOLUTION_LIMIT),
                         repr(firsts) + "\n" + logs(nodes))
            c.restart(coord)
    finally:
        repl.stop_writers(stop, writers)
    for line in logs(nodes).splitlines():
        if "without its coordinator" in line or "its members" in line or "fenced" in line:
            print("      " + line.strip()[:200], flush=True)
    in_ring = mover.address in members_of(writing[0])
    committed = in_ring if kind == "join" else not in_ring
    report.equal("committed" if committed else "aborted", MOMENTS[moment],
                 "%s: the change ends as its moment implies" % label)
    members = [p for p in ports if p != mover.port] + ([mover.port] if in_ring else [])
    repl.check_after_faults(report, members, model, label, True, 2)
    check_static(report, members[0], static, label)
    for p in members:
        report.equal(members_of(p), {"127.0.0.1:%d" % q for q in members},
                     "%s: node %d is on the ring every member has" % (label, p))
    if not in_ring:
        # A node that left, or whose join was aborted, gives its keys away (in the background).
        deadline = time.monotonic() + 10 * harness.timeout_scale()
        while repl.client(mover.port).dbsize() and time.monotonic() < deadline:
            time.sleep(0.1)
        report.equal(repl.client(mover.port).dbsize(), 0,
                     "%s: the node outside the ring holds nothing" % label)


def fault_coordinator(report, c, coord, fault, label, seconds):
    """Waits for the coordinator to stop itself, then kills it or continues it 1.5 s later; returns
    `seconds` after the fault with the fault's time, or None if it never stopped."""
    stopped = wait_stopped(c.nodes[coord], 30)
    t_fault = time.monotonic()
    report.check(stopped, "%s: the coordinator stopped itself" % label, c.logs())
    if not stopped:
        return None
    if fault == "kill -9":
        c.kill(coord)
    else:
        time.sleep(1.5)
        c.kill(coord, signal.SIGCONT)
    time.sleep(max(0.0, seconds - (time.monotonic() - t_fault)))
    return t_fault


def check_resumed(report, writers, t_fault, keys, label, context):
    """Every writer had a write to `keys` acknowledged within RESUME_LIMIT of the fault."""
    firsts = repl.first_success_after(writers, t_fault, keys)
    print("    %s: writes resumed after %s s through the other members" % (label, ", ".join(
        "-" if f is None else "%.2f" % f for f in firsts)), flush=True)
    report.check(all(f is not None and f <= RESUME_LIMIT for f in firsts),
                 "%s: writes resume through every other member within %.0f s" %
                 (label, RESUME_LIMIT), repr(firsts) + "\n" + context)


def start_round(c, coord, writing, rng):
    """Once the cluster settled: the keys written once (write_static), and writers through the
    ports in `writing`. Returns (static keys, model, stop event, writers)."""
    repl.settle(c.ports)
    static = write_static(c.ports[(coord + 1) % len(c.ports)])
    model = repl.Model()
    stop = threading.Event()
    return static, model, stop, repl.start_writers(model, writing, rng, stop)


def fault_and_resume(report, c, coord, fault, label, writers, keys):
    """The coordinator's fault; then every writer's writes to `keys` resume in time, and a killed
    coordinator is restarted. False if it never stopped itself."""
    t_fault = fault_coordinator(report, c, coord, fault, label, RESUME_LIMIT + 1.0)
    if t_fault is None:
        return False
    check_resumed(report, writers, t_fault, keys, label, c.logs())
    if fault == "kill -9":
        c.restart(coord)
    return True


def write_static(port):
    """Keys written once, before the change: nothing writes them again, so a failover that loses
    one (its new owner never had it) shows at the end."""
    static = {"s:%d" % i: "v%d" % i for i in range(2000)}
    for start in range(0, len(static), 500):
        repl.client(port).mset({"s:%d" % i: "v%d" % i for i in range(start, start + 500)})
    return static


def check_static(report, port, static, label):
    got = repl.client(port).mget(sorted(static))
    missing = [k for k, v in zip(sorted(static), got) if v is None or v.decode() != static[k]]
    report.check(not missing, "%s: the %d keys written before the change are all there" %
                 (label, len(static)), "%d missing: %r" % (len(missing), missing[:5]))


def check_restore_round(report, binary, rng, fault):
    """5 members, replication-factor 3: a member killed and failed over comes back, and the
    coordinator of its restore (the member that proposes changes) stops when every participant
    paused. The others abort the restore; writes resume; later restores bring both back."""
    label = "restore, coordinator %s at 'paused'" % fault
    opts = dict(repl.HEALTH, **{"replication-factor": 3, "replica-acks": 1})
    c = harness.Cluster(binary, 5, name="lost-coord-restore", cluster_options=opts,
                        extra=PERSIST)
    coord = min(range(5), key=lambda i: c.addresses[i])
    victim = rng.choice([i for i in range(5) if i != coord])
    start_hooked(c, coord, "paused")
    try:
        ports = c.ports
        writing = [p for i, p in enumerate(ports) if i not in (coord, victim)]
        static, model, stop, writers = start_round(c, coord, writing, rng)
        try:
            time.sleep(0.5)
            with model.lock:
                all_keys = set(model.sent)
            c.kill(victim)
            deadline = time.monotonic() + 20 * harness.timeout_scale()
            while (time.monotonic() < deadline and
                   any(repl.cluster_info(p).get("cluster_failed") != "1" for p in writing)):
                time.sleep(0.1)
            c.restart(victim)
            if not fault_and_resume(report, c, coord, fault, label, writers, all_keys):
                return
        finally:
            repl.stop_writers(stop, writers)
        report.check("its members abort it" in c.logs(20000),
                     "%s: the members abort the restore without its coordinator" % label,
                     c.logs())
        repl.check_after_faults(report, ports, model, label, True, 3)
        check_static(report, ports[0], static, label)
    finally:
        c.cleanup()


def check_forced_leave_round(report, binary, rng, moment, fault):
    """4 members, replication-factor 1 (nothing to fail over): one is killed, and the coordinator
    of its forced leave (CLUSTER LEAVE x FORCE) stops when every participant paused, or when all
    but itself committed. The forced leaver takes no part in the change, so the members resolve
    it without either (they used to wait for the leaver's word) and abort it (a second forced
    leave, through another member, then removes it); committed by all but the coordinator, it
    holds nobody up and the coordinator commits it once back. Either way writes to the keys of
    the two members that are up resume, and every key the leaver did not own is intact."""
    label = "forced leave, coordinator %s at '%s'" % (fault, moment)
    c = harness.Cluster(binary, 4, name="lost-coord-force", cluster_options=dict(repl.HEALTH),
                        extra=PERSIST)
    coord = rng.randrange(4)
    leaver = rng.choice([i for i in range(4) if i != coord])
    start_hooked(c, coord, moment)
    try:
        ports = c.ports
        live = [i for i in range(4) if i not in (coord, leaver)]
        static, model, stop, writers = start_round(c, coord, [ports[i] for i in live], rng)
        try:
            writer_keys = ["w%d:%d" % (w, k) for w in range(len(live)) for k in range(200)]
            owner = repl.owners(ports[live[0]], sorted(static) + writer_keys)
            kept = {k for k, o in owner.items() if o != c.addresses[leaver]}
            writable = {k for k, o in owner.items() if o in (c.addresses[i] for i in live)}
            time.sleep(0.5)
            c.kill(leaver)
            repl.client(ports[coord]).execute_command("CLUSTER", "LEAVE",
                                                      c.addresses[leaver], "FORCE")
            if not fault_and_resume(report, c, coord, fault, label, writers, writable):
                return
        finally:
            repl.stop_writers(stop, writers)
        up = [ports[i] for i in range(4) if i != leaver]
        aborted = MOMENTS[moment] == "aborted"
        if aborted:
            report.check("its members abort it" in c.logs(20000),
                         "%s: the members abort the change without its coordinator" % label,
                         c.logs())
        # (Committed by every other member, the change is no longer pending there.)
        # Aborted, the leaver is still a member: forced out again through another member.
        deadline = time.monotonic() + 20 * harness.timeout_scale()
        reply = None if aborted else b"OK"
        last_error = None
        while reply is None and time.monotonic() < deadline:
            try:
                reply = repl.client(ports[live[0]], timeout=20).execute_command(
                    "CLUSTER", "LEAVE", c.addresses[leaver], "FORCE")
            except Exception as e:  # noqa: BLE001 - a change may still be under way
                last_error = e
                time.sleep(0.5)
        report.check(reply in (b"OK", "OK"), "%s: the leaver is forced out afterwards" % label,
                     repr(reply) + " " + repr(last_error) + "\n" + c.logs())
        repl.settle(up)
        for p in up:
            report.equal(members_of(p), {"127.0.0.1:%d" % q for q in up},
                         "%s: node %d is on the ring every member has" % (label, p))
        with model.lock:
            kept_model = repl.Model()
            kept_model.acked = {k: v for k, v in model.acked.items() if k in kept}
            kept_model.sent = {k: v for k, v in model.sent.items() if k in kept}
        repl.check_model(report, up, kept_model, label)
        check_static(report, up[0], {k: v for k, v in static.items() if k in kept}, label)
    finally:
        c.cleanup()


def logs(nodes):
    return "\n".join("--- %s ---\n%s" % (n.name, n.log(20000)) for n in nodes)


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--only", default=None,
                   help='one round, "KIND,MOMENT,FAULT" (e.g. "leave,committing,kill -9")')
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_lost_coordinator")
    # A join at every moment, and a leave committed without its coordinator, which is killed:
    # its failover must then see that the members' copies of its keys predate the new ring.
    rounds = [("join", m, rng.choice(["kill -9", "continued"])) for m in sorted(MOMENTS)]
    rounds.append(("leave", "committing", "kill -9"))
    rounds.append(("restore", "paused", rng.choice(["kill -9", "continued"])))
    rounds.append(("forced-leave", rng.choice(["paused", "committing"]),
                   rng.choice(["kill -9", "continued"])))
    rng.shuffle(rounds)
    if args.only:
        rounds = [tuple(args.only.split(","))]
    for kind, moment, fault in rounds[:harness.scaled(len(rounds), 1)]:
        if kind == "restore":
            check_restore_round(report, args.server, rng, fault)
        elif kind == "forced-leave":
            check_forced_leave_round(report, args.server, rng, moment, fault)
        else:
            check_round(report, args.server, rng, kind, moment, fault)
    report.finish()


if __name__ == "__main__":
    main()
