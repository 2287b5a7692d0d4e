"""A member killed and restarted while its failover is prepared (issue 14): writers and INCRed
counters on every node (replication-factor 3 on 5 members, 2 on 3, replica-acks 1, the
append-only file fsynced always). The victim is killed (kill -9) and restarted the moment every
survivor has prepared its failover, so that it opens its replication streams (its ring file
says it is the keys' primary) while the change that fails it over waits out its lease. The
replicas keep their copies until the change ends — they are about to serve them — instead of
dropping them for a full copy from the victim, which the commit then cuts off: the cluster
settles, every key holds its last acknowledged write with its copies, every counter lies between
its acknowledged and its sent increments, and the keys loaded first are all there. (Before,
whole counters came back as 1, and thousands of the loaded keys were gone.)

    /usr/bin/python3 test_restart_in_failover.py --server build/ringkv-server [--seed N]
"""

import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import test_incomplete_copy as bulk  # noqa: E402
import test_nemesis as nemesis  # noqa: E402
import replication_support as repl  # noqa: E402

# Keys loaded before the writers start: enough that a full copy of a member's share takes longer
# than what is left of the failover's lease wait when the victim restarts (RESTART_AT). Fewer
# under the sanitizers (harness.scaled), whose copies are slower anyway.
N_BULK = 200000
# Seconds after every survivor prepared the failover (which then waits out the victim's lease,
# health-interval × (failure-limit + 1) = 0.8 s) that the victim restarts.
RESTART_AT = 0.6


def check_round(report, binary, rng, n, rf):
    label = "%d members, replication-factor %d" % (n, rf)
    n_bulk = harness.scaled(N_BULK, 20000)
    with repl.durable_cluster(binary, n, "restart-in-failover", rf, 1) as c:
        ports = c.ports
        repl.settle(ports)
        bulk.preload(ports[0], n_bulk)
        repl.settle(ports, timeout=60)
        model = repl.Model()
        stop = threading.Event()
        writers = repl.start_writers(model, ports, rng, stop)
        counters = [nemesis.Counters(p, "c%d" % i, random.Random(rng.random()), stop)
                    for i, p in enumerate(ports)]
        for w in counters:
            w.start()
        t0 = time.monotonic()
        victim = rng.randrange(n)
        survivors = [p for i, p in enumerate(ports) if i != victim]
        try:
            time.sleep(1.0)
            v = int(repl.cluster_info(survivors[0])["cluster_ring_version"])
            c.kill(victim)
            states, _ = repl.wait_ring(survivors, lambda _, p: p == str(v + 1), poll=0.01)
            if any(p != str(v + 1) for _, p in states):
                raise AssertionError("the failover was not prepared everywhere: %r" % states)
            time.sleep(RESTART_AT)
            c.restart(victim)
            print("    %s: node %d restarted %.2f s into the run, its failover prepared" %
                  (label, victim + 1, time.monotonic() - t0), flush=True)
            time.sleep(1.5)
        finally:
            repl.stop_writers(stop, writers + counters)
        repl.check_after_faults(report, ports, model, label, True, rf)
        nemesis.check_counters(report, ports, counters, rf, label, t0)
        bulk.check_bulk(report, ports[:1], n_bulk, label)


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_restart_in_failover")
    check_round(report, args.server, rng, 5, 3)
    check_round(report, args.server, rng, 3, 2)
    report.finish()


if __name__ == "__main__":
    main()
