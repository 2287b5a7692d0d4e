"""Two members with replication-factor 2: what losing one of them does.

- Without a tie-breaker neither member alone is a majority, so neither can fail the other over:
  CLUSTER INFO says so before anything fails (cluster_failover:none, 2 votes, 2 needed); once one
  is killed the other answers its own keys with -CLUSTERDOWN ... cannot reach a majority ...
  and the lost member's as unavailable, ROLE lists no replica, and when the killed member
  restarts (empty: no append-only file) it asks to be failed over and restored from the copies
  the other kept — its vote counts for that — so both serve every key with its value again.
- With `tie-breaker` = member 1 (its vote counts twice: 3 votes, 2 needed), member 1 fails
  member 2 over: SIGSTOP member 2 under a writer on member 1, its keys are writable through
  member 1 within 3 s; after SIGCONT no read through member 2 returns a value older than an
  acknowledged write (it lost its lease before member 1 took its keys), it is restored, and every
  key holds its last acknowledged write (replica-acks 0: the number lost, if any, is printed)
  with its 2 copies. Member 1 itself cannot be failed over (cluster_failover:not-the-tie-breaker):
  killed, member 2 refuses every key until it is back.

    /usr/bin/python3 test_two_members.py --server build/ringkv-server [--seed N]
"""

import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import main_support  # noqa: E402
import redis  # noqa: E402
import replication_support as repl  # noqa: E402

NO_MAJORITY = "CLUSTERDOWN this node cannot reach a majority of the cluster's members"


def refusals(port, keys, dead, seconds):
    """Once reads of `keys` through `port` stop being served (within `seconds`), the answers to
    GET and then SET of each: {key: (GET's error, SET's error)}, or "served" for an answer.
    `dead` is the address of the member that is gone."""
    r = repl.client(port, timeout=5)

    def attempt(op):
        try:
            op()
            return "served"
        except redis.RedisError as e:
            return str(e).replace(dead, "<dead>")

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(attempt(lambda: r.get(k)) != "served" for k in keys):
            break
        time.sleep(0.1)
    return {k: (attempt(lambda: r.get(k)), attempt(lambda: r.set(k, "x"))) for k in keys}


def check_refused(report, port, keys, dead, label):
    """Every key through `port` refused, a key of `dead` as unavailable, the others (its own) as
    without a majority."""
    owner = repl.owners(port, keys)
    got = refusals(port, keys, dead, 5.0)
    gone = "peer <dead> unavailable: down"
    want = {k: (gone, gone) if owner[k] == dead else (NO_MAJORITY, NO_MAJORITY) for k in keys}
    report.equal(got, want, "%s: the survivor refuses its own keys with CLUSTERDOWN (no "
                 "majority) and the lost member's as unavailable" % label)


def check_without_tie_breaker(report, binary):
    opts = dict(repl.HEALTH, **{"replication-factor": 2})
    with harness.Cluster(binary, 2, name="two-plain", cluster_options=opts) as c:
        ports = c.ports
        repl.settle(ports)
        info = repl.cluster_info(ports[0])
        report.equal((info.get("cluster_failover"), info.get("cluster_votes"),
                      info.get("cluster_votes_needed"), info.get("cluster_tie_breaker")),
                     ("none", "2", "2", "-"), "two members: CLUSTER INFO says neither can be "
                     "failed over")
        r = repl.client(ports[0])
        keys = ["k%d" % i for i in range(20)]
        r.mset({k: k for k in keys})
        # Replication is asynchronous (replica-acks 0): the copies must be there before the kill.
        report.equal(r.execute_command("WAIT", 1, 5000), 1, "two members: WAIT 1 after the MSET")
        c.kill(1)
        check_refused(report, ports[0], keys, c.nodes[1].address, "two members, one killed")
        report.equal(r.execute_command("ROLE")[2], [], "two members, one killed: ROLE lists no "
                     "replica")
        report.equal(repl.cluster_info(ports[0]).get("cluster_lease"), "lost",
                     "two members, one killed: CLUSTER INFO shows the lease lost")
        c.restart(1)
        repl.settle(ports)
        report.equal([repl.client(p).mget(keys) for p in ports], [[k.encode() for k in keys]] * 2,
                     "two members: once the killed one is back both serve every key")


def check_tie_breaker(report, binary, rng):
    opts = dict(repl.HEALTH, **{"replication-factor": 2})

    def configure(i, port, ports):
        # Every member names member 1 the tie-breaker.
        return harness.cluster_config(port, ports, cluster_options=dict(
            opts, **{"tie-breaker": "127.0.0.1:%d" % ports[0]}))

    with harness.Cluster(binary, 2, name="two-tie", configure=configure) as c:
        ports = c.ports
        repl.settle(ports)
        info = [repl.cluster_info(p) for p in ports]
        report.equal({(i.get("cluster_failover"), i.get("cluster_votes"),
                       i.get("cluster_votes_needed"), i.get("cluster_tie_breaker"))
                      for i in info},
                     {("not-the-tie-breaker", "3", "2", c.nodes[0].address)},
                     "tie-breaker: CLUSTER INFO on both members: 3 votes, 2 needed, member 1 "
                     "may fail member 2 over")
        model = repl.Model()
        stop = threading.Event()
        writer = repl.Writer(model, ports[0], "w", rng, 200, stop)
        writer.start()
        try:
            time.sleep(1.0)
            owner = repl.owners(ports[0], writer.keys)
            victim_keys = {k for k in writer.keys if owner[k] == c.nodes[1].address}
            t_fault = time.monotonic()
            c.kill(1, signal.SIGSTOP)
            time.sleep(repl.FAILOVER_LIMIT + 1.0)
            first = repl.first_success_after([writer], t_fault, victim_keys)[0]
            print("    tie-breaker: writes to member 2's %d keys resumed through member 1 after "
                  "%s s" % (len(victim_keys), "-" if first is None else "%.2f" % first),
                  flush=True)
            report.check(first is not None and first <= repl.FAILOVER_LIMIT,
                         "tie-breaker: member 2's keys are writable through member 1 within "
                         "%.0f s" % repl.FAILOVER_LIMIT, repr(first))
            report.equal(repl.cluster_info(ports[0]).get("cluster_failed_members"),
                         c.nodes[1].address, "tie-breaker: member 1 failed member 2 over")
            c.kill(1, signal.SIGCONT)
            # With replica-acks 0 a write member 2 acknowledged just before it hung may not have
            # reached member 1 (a loss counted below, not a stale read): the floor is member 1's
            # own keys and those written through it since the fault (the new primary's writes).
            since = {k for start, _, k in list(writer.successes) if start > t_fault}
            with model.lock:
                floor = {k: v for k, v in model.acked.items()
                         if k not in victim_keys or k in since}
            stale = repl.stale_reads(ports[1], floor, rng)
            report.check(not stale, "tie-breaker: reads through member 2 back from SIGSTOP "
                         "never return a value older than an acknowledged write", repr(stale[:5]))
        finally:
            stop.set()
            writer.join()
        repl.settle(ports, timeout=60)
        lost = repl.check_model(report, ports, model, "tie-breaker", strict=False)
        print("    tie-breaker: %d of %d keys lost their last acknowledged write "
              "(replica-acks 0)" % (len(lost), len(model.acked)), flush=True)
        repl.check_copies(report, ports, sorted(model.sent), 2, "tie-breaker")
        # The tie-breaker itself cannot be failed over: member 2 alone is 1 vote of 3.
        c.kill(0)
        check_refused(report, ports[1], sorted(model.sent)[:20], c.nodes[0].address,
                      "tie-breaker killed")
        c.restart(0)
        repl.settle(ports, timeout=60)
        repl.check_copies(report, ports, sorted(model.sent), 2, "tie-breaker back")


def main():
    args, rng, _, report = main_support.seeded_start("test_two_members", __doc__)
    print("two members, no tie-breaker", flush=True)
    check_without_tie_breaker(report, args.server)
    print("two members, member 1 the tie-breaker", flush=True)
    check_tie_breaker(report, args.server, rng)
    report.finish()


if __name__ == "__main__":
    main()
