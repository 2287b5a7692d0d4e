"""Failover of every member in turn, Jepsen style: replication-factor 3 on 3 nodes, replica-acks
1, a writer on every node keeping its model of acknowledged values. Each node in turn (in a
seeded random order; fewer with RINGKV_TEST_SCALE < 1) is killed with kill -9 under the writes; its keys must be writable again
through every survivor within 3 s (health-interval 200 ms, failure-limit 3); it is restarted
from its append-only file and restored; then every key is read through every node and compared
with the model (no acknowledged write lost, nothing never sent), and every key must have its 3
copies, equal to the primary's.

    /usr/bin/python3 test_failover_each.py --server build/ringkv-server [--seed N]
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import replication_support as repl  # noqa: E402


def kill_each(report, binary, rng, n_nodes, rf, acks):
    """Kills each node in turn under writes on every node; returns the failover times measured
    (seconds from the kill to the first acknowledged write to the victim's keys, per survivor)."""
    times = []
    with repl.durable_cluster(binary, n_nodes, "failover-each", rf, acks) as c:
        ports = c.ports
        repl.settle(ports)
        model = repl.Model()
        order = list(range(n_nodes))
        rng.shuffle(order)
        # Every node at full scale; fewer under the sanitizers' reduced scale.
        order = order[:harness.scaled(n_nodes, 1)]
        for victim in order:
            label = "rf %d, kill -9 of node %d" % (rf, victim + 1)
            survivors = [p for i, p in enumerate(ports) if i != victim]
            # The same key names every round: the model carries over from one victim to the next.
            with repl.writing(model, ports, rng) as writers:
                time.sleep(1.0)
                with model.lock:
                    all_keys = sorted(model.sent)
                owner = repl.owners(survivors[0], all_keys)
                victim_keys = {k for k in all_keys if owner[k] == c.nodes[victim].address}
                t_fault = time.monotonic()
                c.kill(victim)
                time.sleep(repl.FAILOVER_LIMIT + 0.5)
                firsts = repl.check_writable_again(
                    report, label, "its %d keys" % len(victim_keys),
                    [w for i, w in enumerate(writers) if i != victim], t_fault, victim_keys)
                times += [f for f in firsts if f is not None]
                report.check(all(repl.cluster_info(p).get("cluster_failed") == "1"
                                 for p in survivors),
                             "%s: every survivor has it failed over" % label)
                c.restart(victim)
                time.sleep(0.5)
            repl.check_after_faults(report, ports, model, label, acks >= 1, rf)
    return times


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_failover_each")
    print("kill -9 of each node in turn (replication-factor 3, 3 nodes, replica-acks 1)",
          flush=True)
    times = kill_each(report, args.server, rng, 3, 3, 1)
    if times:
        print("    failover times: min %.2f s, max %.2f s over %d survivors' writers" %
              (min(times), max(times), len(times)), flush=True)
    report.finish()


if __name__ == "__main__":
    main()
