"""Failover promotes the replica that has the acknowledged writes (issue 14): 5 members,
replication-factor 3. A primary P's keys have two replicas, R1 then R2 in preference order;
failing P over makes R1 their owner. Each round cuts P's stream to R1 (CLIENT KILL on R1) and
stops R1 (SIGSTOP) at once, so P's writes reach R2 only; writes v2 to the keys through P; then
kill -9 (or SIGSTOP) of P and SIGCONT of R1 together. Once the keys answer again through every
survivor, each must hold v2 if its write was acknowledged — by `replica-acks 1`, or by WAIT 1
answering 1 or more with `replica-acks 0` — and v1 or v2 otherwise; and the keys are writable.
Then a member restarted from an older RDB while the others cannot fail it over for more than
5 s serves nothing older than acknowledged, and ends with every acknowledged write.

    /usr/bin/python3 test_failover_acks.py --server build/ringkv-server [--seed N]
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import redis  # noqa: E402
import replication_support as repl  # noqa: E402

KEYS = 20


def pick_keys(port, primary):
    """(R1, keys): the first replica most of `primary`'s keys share, and up to KEYS of its keys
    with that first replica."""
    names = ["fa:%d" % i for i in range(3000)]
    by_first = {}
    for key, c in zip(names, repl.copies_of(port, names)):
        if c[0] == primary:
            by_first.setdefault(c[1], []).append(key)
    r1 = max(by_first, key=lambda a: len(by_first[a]))
    return r1, by_first[r1][:KEYS]


def stream_state(port, replica):
    """The state of the stream from the node at `port` to `replica` (INFO replication)."""
    host, rport = replica.rsplit(":", 1)
    for k, v in harness.info_fields(port, "INFO", "replication").items():
        if k.startswith("slave") and "ip=%s,port=%s," % (host, rport) in v:
            return v.split("state=")[1].split(",")[0]
    return None


def cut_and_stop(c, primary_port, r1_index, primary):
    """Closes R1's stream from the primary and stops R1 before the primary reconnects (it waits
    50 ms first); True when the primary's stream to R1 is then not online."""
    r1_port = c.ports[r1_index]
    for _ in range(5):
        repl.kill_stream(r1_port, primary)
        c.kill(r1_index, signal.SIGSTOP)
        time.sleep(0.05)
        if stream_state(primary_port, c.nodes[r1_index].address) != "online":
            return True
        # It reconnected before the stop took effect: let it settle and cut again.
        c.kill(r1_index, signal.SIGCONT)
        repl.settle(c.ports)
    return False


def write_v2(port, keys, mode):
    """Writes v2 to `keys` through `port`; returns the keys whose write was acknowledged. Waits
    at most 0.3 s for the answers (the second replica acknowledges in far less), so the first
    replica is continued before the others see it down and fail it over (a failover coordinated
    by the primary, which is killed next, would stay prepared)."""
    r = repl.client(port, timeout=0.3)
    pipe = r.pipeline(transaction=False)
    for k in keys:
        pipe.set(k, "v2")
    try:
        replies = pipe.execute(raise_on_error=False)
    except (redis.TimeoutError, redis.ConnectionError):
        return []  # unknown outcome
    ok = [k for k, rep in zip(keys, replies) if rep is True]
    if mode == "acks":
        return ok
    # replica-acks 0: WAIT 1 counts the replicas that have the connection's last write, and so
    # all of this connection's writes before it (one stream per replica, in order).
    n = r.execute_command("WAIT", 1, 100)
    print("      WAIT 1 100 answered %d" % n, flush=True)
    return ok if n >= 1 else []


def read_through(ports, keys, timeout=15.0):
    """The keys' values read through each of `ports` once they all answer: {port: [values]}."""
    out = {}
    deadline = time.monotonic() + timeout * harness.timeout_scale()
    for port in ports:
        while True:
            try:
                out[port] = [None if v is None else v.decode()
                             for v in repl.client(port, timeout=5).mget(keys)]
                break
            except (redis.RedisError, OSError):
                if time.monotonic() > deadline:
                    out[port] = None
                    break
                time.sleep(0.1)
    return out


def one_round(report, binary, rng, mode, fault):
    label = "%s, %s of the primary" % ("replica-acks 1" if mode == "acks" else "WAIT 1",
                                        "kill -9" if fault == "kill" else "SIGSTOP")
    opts = dict(repl.HEALTH, **{"replication-factor": 3,
                                "replica-acks": 1 if mode == "acks" else 0})
    with harness.Cluster(binary, 5, name="failover-acks", cluster_options=opts) as c:
        ports = c.ports
        repl.settle(ports)
        p_index = rng.randrange(5)
        primary = c.nodes[p_index].address
        r1, keys = pick_keys(ports[0], primary)
        r1_index = c.addresses.index(r1)
        r = repl.client(ports[p_index])
        for k in keys:
            r.set(k, "v1")
        report.check(r.execute_command("WAIT", 2, 5000) == 2,
                     "%s: v1 of the keys is on both replicas" % label)
        if not cut_and_stop(c, ports[p_index], r1_index, primary):
            report.check(False, "%s: the primary's stream to its first replica is cut" % label)
            return
        acked = write_v2(ports[p_index], keys, mode)
        c.kill(p_index, signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
        c.kill(r1_index, signal.SIGCONT)
        print("    %s: %d of %d writes of v2 acknowledged while the first replica %s was cut "
              "off" % (label, len(acked), len(keys), r1), flush=True)
        survivors = [p for i, p in enumerate(ports) if i != p_index]
        values = read_through(survivors, keys)
        if any(v is None for v in values.values()):
            print(c.logs(), flush=True)
        for port in survivors:
            got = values[port]
            if got is None:
                report.check(False, "%s: the keys answer through %d after the failover" %
                             (label, port))
                continue
            lost = [(k, v) for k, v in zip(keys, got) if k in acked and v != "v2"]
            wrong = [(k, v) for k, v in zip(keys, got) if v not in ("v1", "v2")]
            report.check(not lost and not wrong,
                         "%s: every key read through %d holds its acknowledged write" %
                         (label, port), "lost %r, wrong %r" % (lost[:5], wrong[:5]))
        # The new owner takes writes (and its replicas acknowledge them, once their streams
        # opened again under the new ring).
        w = repl.client(survivors[0])
        deadline = time.monotonic() + 10 * harness.timeout_scale()
        written = 0
        while written < 5 and time.monotonic() < deadline:
            try:
                written += bool(w.set(keys[written], "v3"))
            except redis.RedisError:
                time.sleep(0.1)
        report.check(written == 5, "%s: the keys are writable after the failover" % label)


def check_slow_return(report, binary):
    """A member restarted from an older snapshot (no append-only file) while the others cannot
    fail it over yet (one of the two others is hung, so neither side has a majority) waits until
    they can, however long that takes: it never serves its older keys, nor copies them over
    its replica's newer ones."""
    label = "restart from an older RDB while no failover is possible"
    opts = dict(repl.HEALTH, **{"replication-factor": 2, "replica-acks": 1})
    with harness.Cluster(binary, 3, name="failover-return", cluster_options=opts) as c:
        ports = c.ports
        repl.settle(ports)
        primary, replica = c.nodes[0].address, c.nodes[1].address
        keys = repl.keys_held_by(ports[0], ["fr:%d" % i for i in range(500)],
                                 [primary, replica])[:KEYS]
        r = repl.client(ports[0])
        for k in keys:
            r.set(k, "v1")
        r.execute_command("SAVE")
        for k in keys:
            r.set(k, "v2")
        c.kill(0)
        c.kill(2, signal.SIGSTOP)
        c.restart(0)
        # Past the 5 s a restarted member once waited before serving what it held.
        time.sleep(7.0)
        early = []
        try:
            early = [v for v in repl.client(ports[0], timeout=1).mget(keys) if v != b"v2"]
        except (redis.RedisError, OSError):
            pass  # not serving: what it should do
        report.check(not early, "%s: it serves no older value while it waits" % label,
                     repr(early[:5]))
        c.kill(2, signal.SIGCONT)
        repl.settle(ports, timeout=60)
        values = read_through(ports, keys)
        for port in ports:
            got = values[port]
            report.check(got is not None and all(v == "v2" for v in got),
                         "%s: every key read through %d holds its acknowledged write" %
                         (label, port), repr(None if got is None else got[:5]))


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_failover_acks")
    rounds = [("acks", "kill"), ("acks", "stop"), ("wait", "kill"), ("wait", "stop")]
    rng.shuffle(rounds)
    for mode, fault in rounds[:harness.scaled(len(rounds), 2)]:
        one_round(report, args.server, rng, mode, fault)
    check_slow_return(report, args.server)
    report.finish()


if __name__ == "__main__":
    main()
