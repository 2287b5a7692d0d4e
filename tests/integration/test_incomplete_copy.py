"""A primary lost while its replicas copy its keys again, Jepsen style: replication-factor 2 on 3
nodes, replica-acks 1, a writer on every node keeping its model of acknowledged values, and
bulk keys written before. A survivor hangs past the backlog (its stream from the victim cut,
SIGSTOP for 0.3 s while 128 KB are written through the victim to keys it replicates there,
repl-backlog-size 16kb), so the victim copies it every key again; the victim is stopped (SIGSTOP) while that copy is still incomplete. Failing it over would promote that copy and lose the keys it lacks, so the
survivors must refuse (CLUSTER INFO's cluster_failed stays 0 and cluster_last_change says why);
the victim then continues (SIGCONT) or is killed and restarted from its append-only file, and
every key — bulk and modelled — must hold its last acknowledged value on every node, with its 2
copies. Last, a leave round with replication-factor 3 (see leave_round): a member leaves while
its streams to one replica are cut again and again, and the new primary of its keys is killed as
it switched; no acknowledged write is lost.

    /usr/bin/python3 test_incomplete_copy.py --server build/ringkv-server [--seed N] [--rounds N]
"""

import contextlib
import os
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import redis  # noqa: E402
import replication_support as repl  # noqa: E402

BULK_KEYS = 60000


def copy_states(port, primary):
    """The states (synced / sync) of this node's copies of `primary`'s keys."""
    host, _, pport = primary.rpartition(":")
    fields = harness.info_fields(port, "INFO", "replication")
    return [v for k, v in fields.items()
            if k.startswith("primary") and ("ip=%s,port=%s," % (host, pport)) in v]


def incomplete_at(ports, primary):
    return [p for p in ports if any("state=sync," in v for v in copy_states(p, primary))]


def preload(port, n):
    """Writes the n bulk keys in batches of 2000. A write refused for want of a replica's
    acknowledgement (-NOREPLICAS: a loaded machine can starve a replica past half the
    request-timeout, or past the health checks, just as the cluster settled) is applied on its
    primary and written again, a few times, with the reason printed; anything else fails."""
    r = repl.client(port, timeout=30)
    for start in range(0, n, 2000):
        items = [("bulk:%d" % i, "value-%d-%s" % (i, "x" * 100))
                 for i in range(start, min(n, start + 2000))]
        for attempt in range(5):
            pipe = r.pipeline(transaction=False)
            for key, value in items:
                pipe.set(key, value)
            replies = pipe.execute(raise_on_error=False)
            refused = [(item, e) for item, e in zip(items, replies) if isinstance(e, Exception)]
            if not refused:
                break
            first = refused[0][1]
            if attempt == 4 or any("NOREPLICAS" not in str(e) for _, e in refused):
                raise first
            print("    preload: %d writes refused (%s), written again" % (len(refused), first),
                  flush=True)
            items = [item for item, _ in refused]
            time.sleep(0.5)


@contextlib.contextmanager
def loaded_cluster(binary, n, name, options, n_bulk):
    """n members (replication_support's durable_cluster, replica-acks 1, `options` added) with
    `n_bulk` bulk keys loaded and every replica stream online."""
    options = dict(options)  # the caller's stays whole
    with repl.durable_cluster(binary, n, name, options.pop("replication-factor"), 1,
                              **options) as c:
        repl.settle(c.ports)
        preload(c.ports[0], n_bulk)
        repl.settle(c.ports, timeout=60)
        yield c


def check_bulk(report, ports, n, label):
    keys = ["bulk:%d" % i for i in range(n)]
    for port in ports:
        r = repl.client(port, timeout=30)
        bad = []
        for start in range(0, n, 5000):
            chunk = keys[start:start + 5000]
            for k, v in zip(chunk, r.mget(chunk)):
                i = int(k.split(":")[1])
                if v != ("value-%d-%s" % (i, "x" * 100)).encode():
                    bad.append((k, v))
        report.check(not bad, "%s: every bulk key read through %d holds its value (%d keys)" %
                     (label, port, n), "%d wrong, e.g. %r" % (len(bad), bad[:3]))


def stop_mid_copy(c, victim, hung, survivors):
    """Hangs survivor `hung` past the backlog — its stream from the victim cut, SIGSTOP for
    0.3 s while 128 KB are written to keys the victim replicates there (not waiting for the
    replies: with replica-acks they wait for the hung replica) — so that the victim copies it
    every key again; stops the victim as soon as a survivor's copy of its keys is incomplete.
    Returns the survivors whose copy was still incomplete then."""
    addr = c.nodes[victim].address
    ours = repl.keys_held_by(c.ports[victim], ["overrun:%d" % i for i in range(3000)],
                             [addr, c.nodes[hung].address])[:128]
    repl.kill_stream(c.ports[hung], addr)
    c.kill(hung, signal.SIGSTOP)
    writes = socket.create_connection(("127.0.0.1", c.ports[victim]))
    try:
        writes.sendall(b"".join(harness.encode_command("SET", k, "o" * 1024) for k in ours))
        time.sleep(0.3)
        c.kill(hung, signal.SIGCONT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if incomplete_at(survivors, addr):
                c.kill(victim, signal.SIGSTOP)
                return incomplete_at(survivors, addr)
            time.sleep(0.001)
        return []
    finally:
        writes.close()


def one_round(report, binary, rng, label):
    n_bulk = harness.scaled(BULK_KEYS, 5000)
    options = {"replication-factor": 2, "repl-backlog-size": "16kb"}
    with loaded_cluster(binary, 3, "incomplete-copy", options, n_bulk) as c:
        ports = c.ports
        victim = rng.randrange(3)
        survivors = [p for i, p in enumerate(ports) if i != victim]
        model = repl.Model()
        with repl.writing(model, ports, rng):
            time.sleep(0.5)
            cut = []
            for attempt in range(6):
                hung = rng.choice([i for i in range(3) if i != victim])
                cut = stop_mid_copy(c, victim, hung, survivors)
                if cut:
                    break
                # The copy was over before the victim stopped: continue it and try again.
                print("    %s: attempt %d missed the copy" % (label, attempt + 1), flush=True)
                c.kill(victim, signal.SIGCONT)
                repl.settle(ports, timeout=60)
            report.check(bool(cut), "%s: the victim stopped while a survivor's copy of its keys "
                         "was incomplete" % label)
            if not cut:
                return
            print("    %s: node %d stopped while the copies at %s were incomplete" %
                  (label, victim + 1, cut), flush=True)
            time.sleep(repl.FAILOVER_LIMIT + 1.0)
            infos = [repl.cluster_info(p) for p in survivors]
            report.check(all(i.get("cluster_failed") == "0" for i in infos),
                         "%s: the survivors did not fail the victim over" % label,
                         repr([i.get("cluster_failed") for i in infos]))
            report.check(any("NOCOPY" in i.get("cluster_last_change", "") for i in infos),
                         "%s: a survivor's cluster_last_change says the failover was refused "
                         "for an incomplete copy" % label,
                         repr([i.get("cluster_last_change") for i in infos]))
            if rng.random() < 0.5:
                print("    %s: node %d continued (SIGCONT)" % (label, victim + 1), flush=True)
                c.kill(victim, signal.SIGCONT)
            else:
                print("    %s: node %d killed and restarted" % (label, victim + 1), flush=True)
                c.kill(victim)
                c.restart(victim)
            time.sleep(1.0)
        repl.check_after_faults(report, ports, model, label, True, 2, keys_checked=300)
        check_bulk(report, ports, n_bulk, label)
        repl.check_copies(report, ports, ["bulk:%d" % i for i in range(0, n_bulk, 97)], 2,
                          label + " (bulk)")


def leave_round(report, binary, rng, label):
    """4 members, replication-factor 3, replica-acks 1: member 4 leaves while its streams to
    member 2 are cut again and again (each reconnection catches up from the backlog). Writers
    write keys whose copies were [4, 1, 2, ...] — on the new ring member 1 is their primary and
    member 2 their first replica — and member 1 is killed as soon as it switched, then restarted
    from its append-only file: whether member 2 is promoted meanwhile or not, every key must hold
    its last acknowledged value once member 1 is back."""
    n_bulk = harness.scaled(BULK_KEYS, 5000)
    options = {"replication-factor": 3}
    with loaded_cluster(binary, 4, "incomplete-leave", options, n_bulk) as c:
        ports = c.ports
        leaver, victim, cut_at = 3, 0, 1
        addresses = [n.address.encode() for n in c.nodes]
        want = [addresses[leaver], addresses[victim], addresses[cut_at]]
        candidates = ["shape:%d" % i for i in range(6000)]
        copies = repl.pipelined(ports[2], [("CLUSTER", "COPIES", k) for k in candidates])
        shaped = [k for k, names in zip(candidates, copies) if list(names[:3]) == want]
        model = repl.Model()
        stop = threading.Event()
        writers = repl.start_writers(model, [ports[2]], rng, stop)
        writers[0].keys = shaped
        done = threading.Event()

        def cut():
            while not done.is_set():
                try:
                    repl.kill_stream(ports[cut_at], c.nodes[leaver].address)
                except (OSError, redis.RedisError):
                    pass
                time.sleep(0.002)

        cutter = threading.Thread(target=cut)
        try:
            time.sleep(0.5)
            cutter.start()
            time.sleep(0.3)
            version = int(repl.cluster_info(ports[victim])["cluster_ring_version"])
            repl.client(ports[2], timeout=30).execute_command("CLUSTER", "LEAVE",
                                                              c.nodes[leaver].address)
            deadline = time.monotonic() + 30
            while (int(repl.cluster_info(ports[victim])["cluster_ring_version"]) == version and
                   time.monotonic() < deadline):
                time.sleep(0.005)
            c.kill(victim)
            done.set()
            print("    %s: %d keys of the shape; node %d killed as it switched" %
                  (label, len(shaped), victim + 1), flush=True)
            time.sleep(repl.FAILOVER_LIMIT + 1.0)
            failed = repl.cluster_info(ports[2]).get("cluster_failed")
            print("    %s: failed over while it was down: %s" % (label, failed), flush=True)
            c.restart(victim)
            time.sleep(1.0)
        finally:
            done.set()
            if cutter.is_alive():
                cutter.join()
            repl.stop_writers(stop, writers)
        members = [p for i, p in enumerate(ports) if i != leaver]
        repl.check_after_faults(report, members, model, label, True, 3)
        check_bulk(report, members, n_bulk, label)


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_incomplete_copy")
    for r in range(harness.scaled(args.rounds, 1)):
        one_round(report, args.server, rng, "round %d" % (r + 1))
    leave_round(report, args.server, rng, "leave")
    report.finish()


if __name__ == "__main__":
    main()
