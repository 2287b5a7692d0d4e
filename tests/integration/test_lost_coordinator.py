"""A membership change whose coordinator fails mid-way does not stop the cluster: 3 members,
replication-factor 2, replica-acks 1, writers through the two members that are not the
coordinator. A member coordinates CLUSTER JOIN of an empty node and, by the test hook
RINGKV_TEST_STOP_COORDINATOR, stops itself (SIGSTOP) at one moment of the change: every
participant paused (keyed requests held everywhere), every participant flushed (nothing
committed), or every participant but the coordinator committed. Then the coordinator is killed
(kill -9) or continued 1.5 s later (a hang that ends mid-way).

The other members resolve the change without it: they fence every participant (none takes the
coordinator's steps any more) and commit the change if one had committed it, else abort it. So
within a bounded time every writer's writes succeed again (the coordinator's keys after its
failover, except when the join committed: the joined node then keeps copies of some of the
coordinator's keys and has none yet, so that failover is refused until the coordinator is back);
the change ends the same way everywhere (aborted at the first two moments, committed at the
third, since the coordinator commits itself last); and once the coordinator is back no
acknowledged write is lost, every key has its 2 copies, and a node whose join was aborted holds
nothing.

    /usr/bin/python3 test_lost_coordinator.py --server build/ringkv-server [--seed N]
"""

import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import test_replication as repl  # noqa: E402
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


def check_round(report, binary, rng, moment, fault):
    label = "coordinator %s at '%s'" % (fault, moment)
    opts = dict(repl.HEALTH, **{"replication-factor": 2, "replica-acks": 1})
    c = harness.Cluster(binary, 3, name="lost-coord", cluster_options=opts, extra=PERSIST)
    coord = rng.randrange(3)
    os.environ[HOOK] = "%s %s" % (c.addresses[coord], moment)
    try:
        c.start()
    finally:
        # Only the first start has the hook: a restarted node must not stop itself again.
        del os.environ[HOOK]
    cand_port = harness.free_ports(1)[0]
    cand = harness.ClusterNode(
        binary, cand_port,
        harness.cluster_config(cand_port, [cand_port], cluster_options=opts, extra=PERSIST),
        "lost-coord-candidate")
    cand.start()
    try:
        run_round(report, c, cand, rng, moment, fault, label, coord)
    finally:
        cand.cleanup()
        c.cleanup()


def run_round(report, c, cand, rng, moment, fault, label, coord):
    ports = c.ports
    repl.settle(ports)
    survivors = [p for i, p in enumerate(ports) if i != coord]
    model = repl.Model()
    stop = threading.Event()
    writers = repl.start_writers(model, survivors, rng, stop)
    try:
        time.sleep(0.5)
        with model.lock:
            all_keys = sorted(model.sent)
        owner = repl.owners(survivors[0], all_keys)
        coord_keys = {k for k in all_keys if owner[k] == c.addresses[coord]}
        repl.client(ports[coord]).execute_command("CLUSTER", "JOIN", cand.address)
        stopped = wait_stopped(c.nodes[coord], 20)
        t_fault = time.monotonic()
        report.check(stopped, "%s: the coordinator stopped itself" % label, c.logs())
        if not stopped:
            return
        if fault == "kill -9":
            c.kill(coord)
        else:
            time.sleep(1.5)
            c.kill(coord, signal.SIGCONT)
        time.sleep(FAILOVER_AFTER_RESOLUTION_LIMIT + 1.0 - (time.monotonic() - t_fault))
        firsts = repl.first_success_after(writers, t_fault, set(all_keys))
        print("    %s: writes resumed after %s s through the other members" % (label, ", ".join(
            "-" if f is None else "%.2f" % f for f in firsts)), flush=True)
        report.check(all(f is not None and f <= RESUME_LIMIT for f in firsts),
                     "%s: writes resume through every other member within %.0f s" %
                     (label, RESUME_LIMIT), repr(firsts) + "\n" + c.logs() + cand.log(2000))
        if fault == "kill -9":
            firsts = repl.first_success_after(writers, t_fault, coord_keys)
            print("    %s: writes to the coordinator's %d keys resumed after %s s" % (
                label, len(coord_keys), ", ".join(
                    "-" if f is None else "%.2f" % f for f in firsts)), flush=True)
            if MOMENTS[moment] == "aborted":
                report.check(all(f is not None and f <= FAILOVER_AFTER_RESOLUTION_LIMIT
                                 for f in firsts),
                             "%s: the coordinator's keys are writable through every other "
                             "member within %.0f s" % (label, FAILOVER_AFTER_RESOLUTION_LIMIT),
                             repr(firsts) + "\n" + c.logs())
            else:
                # Committed: on the new ring the joined node keeps copies of some of the
                # coordinator's keys, and the coordinator died before it streamed them any.
                # Failing it over would lose those keys: refused, they wait for its return.
                report.check("NOCOPY" in c.logs(20000) + cand.log(20000),
                             "%s: the coordinator's failover is refused while the joined node "
                             "holds no copy of its keys" % label, c.logs())
            c.restart(coord)
    finally:
        repl.stop_writers(stop, writers)
    for line in c.logs(20000).splitlines():
        if "without its coordinator" in line or "its members" in line or "fenced" in line:
            print("      " + line.strip()[:200], flush=True)
    joined = cand.address in members_of(survivors[0])
    report.equal("committed" if joined else "aborted", MOMENTS[moment],
                 "%s: the change ends as its moment implies" % label)
    members = ports + ([cand.port] if joined else [])
    repl.check_after_faults(report, members, model, label, True, 2)
    for p in members:
        report.equal(members_of(p), {"127.0.0.1:%d" % q for q in members},
                     "%s: node %d is on the ring every member has" % (label, p))
    if not joined:
        report.equal(repl.client(cand.port).dbsize(), 0,
                     "%s: the node whose join was aborted holds nothing" % label)


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_lost_coordinator")
    moments = sorted(MOMENTS)
    rng.shuffle(moments)
    for moment in moments[:harness.scaled(len(moments), 1)]:
        check_round(report, args.server, rng, moment, rng.choice(["kill -9", "continued"]))
    report.finish()


if __name__ == "__main__":
    main()
