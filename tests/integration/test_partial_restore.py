"""A member back from a hang resumes from what it holds, Jepsen style: replication-factor 2 on 3
nodes (and 3 on 4), replica-acks 1, bulk keys written before and a writer on every node keeping
its model of acknowledged values.

- quiet hang: the writers pause, a primary is stopped (SIGSTOP) and failed over; meanwhile some
  of its bulk keys are overwritten and some deleted through the survivors, and the writers go on;
  it continues (SIGCONT) and is restored. Every member that served its keys must find its copy
  ended where the member's stream did and send only the keys that changed
  (cluster_restores_resumed on the member, cluster_keys_to_move on the survivors), every
  replication stream between it and the survivors must resume (a partial resync, both ways: its
  copies of their keys, theirs of its keys), and then every key — bulk, overwritten, deleted and
  modelled — must hold its last acknowledged value on every node, with its copies.
- busy hang: the same with the writers running through the stop: a write caught between the
  primary and a replica (queued when it stopped, arriving after the replica failed it over,
  which then neither runs nor counts it) makes that replica's copy miss it; the restore must
  still resume everywhere — the keys of such writes taken from the members that served them,
  every stream resumed, only the keys that changed copied — and every key ends as the model
  says.
- a primary killed (kill -9) and restarted from its append-only file knows no stream of its own
  any more: its restore copies everything (cluster_restores_full), and every key ends as the
  model says.

    /usr/bin/python3 test_partial_restore.py --server build/ringkv-server [--seed N]
"""

import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import replication_support as repl  # noqa: E402

BULK_KEYS = 30000


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout * harness.timeout_scale()
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:  # noqa: BLE001 - a node answering nothing yet
            pass
        time.sleep(0.05)
    print("    timed out waiting for %s" % what, flush=True)
    return False


def wait_failed(report, ports, count, label, what, timeout):
    """Waits until every node in `ports` has `count` members failed over."""
    ok = wait_for(lambda: all(repl.cluster_info(p).get("cluster_failed") == str(count)
                              for p in ports), timeout, what)
    report.check(ok, "%s: %s" % (label, what))


def check_bulk(report, ports, bulk, label):
    """Every bulk key read through every node equals its model (None: deleted)."""
    keys = sorted(bulk)
    for port in ports:
        values = repl.client(port, timeout=30).mget(keys)
        bad = [(k, v, bulk[k]) for k, v in zip(keys, values)
               if (v.decode() if v is not None else None) != bulk[k]]
        report.check(not bad, "%s: every bulk key read through %d is as last written" %
                     (label, port), repr(bad[:3]))


def hang(report, binary, rng, mode, n=3, rf=2):
    """mode: "quiet" (writers paused around the stop), "busy" (writers running) or "kill";
    `n` members, replication-factor `rf`."""
    label = ("%s hang" % mode if mode != "kill" else "kill -9 and restart") + \
        " (%d members, rf %d)" % (n, rf)
    with repl.durable_cluster(binary, n, "partial-restore", rf, 1) as c:
        ports = c.ports
        repl.settle(ports)
        bulk = {"bulk:%d" % i: "b0-%d" % i for i in range(BULK_KEYS)}
        keys = sorted(bulk)
        r = repl.client(ports[0], timeout=30)
        for start in range(0, len(keys), 2000):
            r.mset({k: bulk[k] for k in keys[start:start + 2000]})
        repl.settle(ports, timeout=60)
        victim = rng.randrange(n)
        survivors = [p for i, p in enumerate(ports) if i != victim]
        address = c.nodes[victim].address
        owner = repl.owners(ports[0], keys)
        share = [k for k in keys if owner[k] == address]
        syncs_before = {p: repl.stream_syncs(p) for p in ports}
        model = repl.Model()
        stop = threading.Event()
        writers = repl.start_writers(model, ports, rng, stop)
        changed = set()
        try:
            time.sleep(1.0)
            if mode == "quiet":
                repl.stop_writers(stop, writers)
            if mode == "kill":
                c.kill(victim)
            else:
                c.kill(victim, signal.SIGSTOP)
            wait_failed(report, survivors, 1, label, "the survivors fail the node over", 10)
            if mode == "quiet":
                stop = threading.Event()
                writers = repl.start_writers(model, survivors, rng, stop)
            # Some of its keys overwritten, some deleted, through the survivors.
            picked = rng.sample(share, min(600, len(share)))
            rs = repl.client(survivors[0], timeout=30)
            for k in picked[:400]:
                bulk[k] = "b1-" + k
            rs.mset({k: bulk[k] for k in picked[:400]})
            rs.delete(*picked[400:])
            for k in picked[400:]:
                bulk[k] = None
            changed = set(picked)
            time.sleep(0.5)
            if mode == "kill":
                c.restart(victim)
            else:
                c.kill(victim, signal.SIGCONT)
            wait_failed(report, ports, 0, label, "the node is restored", 30)
            time.sleep(0.5)
        finally:
            repl.stop_writers(stop, writers)
        repl.settle(ports, timeout=60)
        info = repl.cluster_info(ports[victim])
        resumed = int(info.get("cluster_restores_resumed", "-1"))
        full = int(info.get("cluster_restores_full", "-1"))
        sent = sum(int(repl.cluster_info(p)["cluster_keys_to_move"]) for p in survivors)
        with model.lock:
            modelled = sorted(model.sent)
        written = {k for k, o in repl.owners(ports[0], modelled).items() if o == address}
        print("    %s: %d members resumed its copy, %d copied in full; %d keys copied to it "
              "(its share %d, %d of them changed while it was away, %d modelled keys of its)" %
              (label, resumed, full, sent, len(share), len(changed), len(written)), flush=True)
        # Each stream between it and a survivor (both ways) after the restore: resumed or not.
        streams = {}
        for p in ports:
            after = repl.stream_syncs(p)
            for replica, (partial, full_syncs) in after.items():
                if p != ports[victim] and replica != address:
                    continue
                was = syncs_before[p].get(replica, (0, 0)) if p != ports[victim] or \
                    mode != "kill" else (0, 0)
                streams[("127.0.0.1:%d" % p, replica)] = (partial - was[0], full_syncs - was[1])
        print("    %s: streams (partial, full resyncs since the fault): %s" %
              (label, sorted(streams.items())), flush=True)
        if mode in ("quiet", "busy"):
            report.equal((resumed, full), (n - 1, 0), "%s: every member that served its keys "
                         "resumes from what it held" % label)
            report.check(len(streams) == 2 * (n - 1) and all(f == 0 and pa >= 1
                                                   for pa, f in streams.values()),
                         "%s: every stream between it and the survivors resumes" % label,
                         repr(streams))
            report.check(sent <= len(changed) + len(written),
                         "%s: only keys changed while it was away are copied to it" % label,
                         "%d > %d" % (sent, len(changed) + len(written)))
        elif mode == "kill":
            report.equal((resumed, full), (0, n - 1), "%s: restarted, its restore copies every "
                         "key from every member" % label)
            report.check(sent >= len(share) - len(changed),
                         "%s: every key of its share is copied to it" % label,
                         "%d < %d" % (sent, len(share) - len(changed)))
        check_bulk(report, ports, bulk, label)
        repl.check_after_faults(report, ports, model, label, True, rf)
        sample = sorted(rng.sample(keys, 1500) + sorted(changed))
        repl.check_copies(report, ports, sample, rf, label + " (bulk)")


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_partial_restore")
    for mode, n, rf in (("quiet", 3, 2), ("busy", 3, 2), ("kill", 3, 2), ("quiet", 4, 3),
                        ("busy", 4, 3)):
        print("%s, %d members, replication-factor %d" % (mode, n, rf), flush=True)
        hang(report, args.server, rng, mode, n, rf)
    report.finish()


if __name__ == "__main__":
    main()
