"""Replication and failover, Jepsen style: clients keep a model of every acknowledged write,
faults are injected on purpose (kill -9, SIGSTOP), and every key is checked against the model.

- basics (replication-factor 2, 3 nodes): every key lives on exactly the members CLUSTER COPIES
  names, with the primary's value; DBSIZE counts each key once, INFO keyspace counts the copies;
  WAIT, ROLE and INFO replication; a replica restarted empty copies everything again.
- WAIT with a replica hung (SIGSTOP): a write that reached one of its keys, relayed, split or in
  a transaction over several nodes, gets 0 from WAIT 1.
- a node that starts while a peer hangs holds its keyed requests while it asks the peers about
  its keys, but answers each within request-timeout.
- kill -9 of a primary under writes on every node (replication-factor 2, replica-acks 1): its keys
  are readable and writable through every survivor within 3 s (health-interval 200 ms,
  failure-limit 3), no acknowledged write is lost, and once it restarts it is restored: every
  key has its copies again and every node answers the last acknowledged value.
- SIGSTOP of a primary (replication-factor 3, 4 nodes, replica-acks 1): failed over while hung;
  after SIGCONT no read through it ever returns a value older than an acknowledged write, and it
  is restored.
- replica-acks 0: the writes lost by a kill -9 are counted and reported, never more than were
  unacknowledged by a replica.
- eject mode without replicas (a cache): SET k v1, SIGSTOP its owner, SET k v2 through another
  node, SIGCONT: every read gives v2, never v1 (the stand-in hands its writes back).
- a ring change under replication (3 -> 4 -> 3 members, replication-factor 2): every key ends
  with its two copies on the right members, and the replicas that stay keep their copies (their
  streams continue; the keys they gained came with the change).
- a primary killed as soon as it switched to a new ring (4 -> 3 members with replication-factor
  3 and 2, 3 -> 4 with 2; 60 000 keys), then restarted empty: its keys are writable through
  every survivor within 3 s, no acknowledged write is lost and no key is gone (the change gave
  the members that became replicas their keys before the ring switched).

    /usr/bin/python3 test_replication.py --server build/ringkv-server [--seed N]
"""

import os
import shutil
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import main_support  # noqa: E402
import replication_support as repl  # noqa: E402
import redis  # noqa: E402


def check_one_member(report, binary):
    """A candidate (a ring of one) with replication-factor 2 holds its lease from its first health
    check, which releases held clients through the server: under memcheck, nothing it touches may
    be uninitialized (a timer was, and crashed one start in three)."""
    why = harness.rss_distortion(binary)
    if why or not shutil.which("valgrind"):
        print("    skipped: the server %s" % (why or "cannot run under valgrind (not installed)"))
        return
    port = harness.free_ports(1)[0]
    text = harness.cluster_config(port, [port], cluster_options=dict(repl.HEALTH, **{
        "replication-factor": 2}))
    saved = os.environ.get("RINGKV_SERVER_WRAPPER")
    os.environ["RINGKV_SERVER_WRAPPER"] = "valgrind -q --error-exitcode=99"
    try:
        node = harness.ClusterNode(binary, port, text, "repl-one-member")
        node.start()
        report.equal(repl.client(port).set("k", "v"), True, "one member: a write is served")
        rc = node.stop(timeout=60)
        report.check(rc == 0, "one member: memcheck found nothing (exit %s)" % rc, node.log())
    finally:
        if saved is None:
            del os.environ["RINGKV_SERVER_WRAPPER"]
        else:
            os.environ["RINGKV_SERVER_WRAPPER"] = saved


def check_basics(report, binary):
    opts = dict(repl.HEALTH, **{"replication-factor": 2})
    with harness.Cluster(binary, 3, name="repl-basics", cluster_options=opts) as c:
        ports = c.ports
        r = repl.client(ports[0])
        n = harness.scaled(3000, 300)
        pipe = r.pipeline(transaction=False)
        for i in range(n):
            kind = i % 5
            if kind == 0:
                pipe.set("s:%d" % i, "v%d" % i, ex=1000 + i)
            elif kind == 1:
                pipe.rpush("l:%d" % i, *range(i % 7 + 1))
            elif kind == 2:
                pipe.hset("h:%d" % i, mapping={"f%d" % j: j for j in range(i % 5 + 1)})
            elif kind == 3:
                pipe.zadd("z:%d" % i, {"m%d" % j: j for j in range(i % 4 + 1)})
            else:
                pipe.sadd("t:%d" % i, *range(i % 6 + 1))
        pipe.execute()
        keys = [k.decode() for k in r.keys("*")]
        report.equal(len(keys), n, "basics: KEYS * lists every key once")
        repl.settle(ports)
        report.equal(r.dbsize(), n, "basics: DBSIZE counts each key once")
        held = sum(repl.keyspace_keys(p) for p in ports)
        report.equal(held, 2 * n, "basics: INFO keyspace counts the copies (2 per key)")
        repl.check_copies(report, ports, keys, 2, "basics")

        # WAIT for a write of this connection, through a node that relays it and locally.
        conn = repl.client(ports[1])
        for k in ("wait:a", "wait:b", "wait:c"):
            conn.set(k, 1)
            report.equal(conn.execute_command("WAIT", 1, 0), 1, "basics: WAIT 1 0 after SET %s "
                         "returns 1 replica" % k)
        started = time.monotonic()
        report.equal(conn.execute_command("WAIT", 2, 150), 1, "basics: WAIT 2 150 returns the "
                     "one replica a key has")
        report.check(time.monotonic() - started >= 0.14, "basics: WAIT 2 150 waited its timeout")
        report.equal(repl.client(ports[2]).execute_command("WAIT", 0, 0), 1, "basics: WAIT on a "
                     "connection that wrote nothing: every replica has it")
        mset = repl.client(ports[2])
        mset.mset({"wm:%d" % i: i for i in range(20)})
        report.equal(mset.execute_command("WAIT", 1, 1000), 1, "basics: WAIT after an MSET split "
                     "over every node")

        # Replicas acknowledge when asked: at once for WAIT (above), and every few milliseconds
        # while frames flow; once the writes stop, every stream's last frames are acknowledged.
        for i in range(500):
            conn.set("quiet:%d" % i, i)
        deadline = time.monotonic() + 2 * harness.timeout_scale()
        behind = None
        while time.monotonic() < deadline:
            behind = [v for p in ports for k, v in harness.info_fields(p, "INFO", "replication")
                      .items() if k.startswith("slave") and "behind=0," not in v]
            if not behind:
                break
            time.sleep(0.05)
        report.check(not behind, "basics: once writes stop, every replica acknowledges its "
                     "stream's last frame within 2 s", repr(behind))

        # The backlogs hold the frames just sent: INFO memory counts them.
        backlog = [int(harness.info_fields(p, "INFO", "memory")["mem_replication_backlog"])
                   for p in ports]
        report.check(all(b > 0 for b in backlog), "basics: INFO memory's "
                     "mem_replication_backlog counts what every node's backlogs hold",
                     repr(backlog))

        role = r.execute_command("ROLE")
        report.equal(role[0], b"master", "basics: ROLE says master")
        report.equal(len(role[2]), 2, "basics: ROLE lists the two other members as replicas")
        info = harness.info_fields(ports[0], "INFO", "replication")
        report.equal((info.get("role"), info.get("connected_slaves"), info.get("replication_factor")),
                     ("master", "2", "2"), "basics: INFO replication role, replicas, factor")
        report.check("slave0" in info and "primary0" in info, "basics: INFO replication lists the "
                     "replicas of this node's keys and the primaries whose keys it holds",
                     repr(sorted(info)))

        # Transactions and scripts reach the replicas as blocks; FLUSHALL empties every copy.
        tx = repl.client(ports[2]).pipeline(transaction=True)
        tx.set("{tx}:a", 1).incr("{tx}:b").rpush("{tx}:c", "x", "y").hset("{tx}:d", "f", "v")
        tx.execute()
        repl.client(ports[1]).eval("redis.call('set', KEYS[1], 'lua'); redis.call('lpush', KEYS[2], 1);"
                              " return 1", 2, "{lua}:a", "{lua}:b")
        repl.settle(ports)
        repl.check_copies(report, ports, ["{tx}:a", "{tx}:b", "{tx}:c", "{tx}:d", "{lua}:a",
                                     "{lua}:b"], 2, "basics: a transaction and a script")

        # A stream whose connection drops continues from the backlog (a partial resync).
        before = repl.repl_sync_counts(ports[0])
        killed = repl.kill_stream(ports[1], c.nodes[0].address)
        report.equal(killed, 1, "basics: the replica names the stream it takes from node 1")
        for i in range(200):
            r.set("after-kill:%d" % i, i)
        repl.settle(ports)
        after = repl.repl_sync_counts(ports[0])
        report.equal(tuple(a - b for a, b in zip(after, before)), (1, 0),
                     "basics: the dropped stream resumed with a partial resync, no full copy")
        repl.check_copies(report, ports, ["after-kill:%d" % i for i in range(200)], 2,
                     "basics after the partial resync")

        # A replica restarted empty (no append-only file) copies everything again.
        c.kill(2)
        c.restart(2)
        repl.settle(ports)
        repl.check_copies(report, ports, keys[:500], 2, "basics after a restart")
        report.equal(repl.client(ports[2]).mget(keys[:50]), r.mget(keys[:50]),
                     "basics: the restarted node answers like the others")
        r.flushall()
        repl.settle(ports)
        report.equal((r.dbsize(), sum(repl.keyspace_keys(p) for p in ports)), (0, 0),
                     "basics: FLUSHALL empties every copy on every node")


def check_wait_hung_replica(report, binary, atomic):
    """WAIT counts every replica set the client's last write reached: with node 3 hung (SIGSTOP,
    too briefly to be failed over), a write that reached a key whose replica is node 3 gets 0
    from WAIT 1, whatever way it went (relayed whole, a multi-key command on one peer, a split, a
    transaction relayed whole or across nodes), even when its first key's replica answers."""
    opts = {"replication-factor": 2, "health-interval": 1000, "failure-limit": 10,
            "atomic-multikey": atomic}
    label = "WAIT, atomic-multikey %s" % ("on" if atomic else "off")
    with harness.Cluster(binary, 3, name="repl-wait", cluster_options=opts) as c:
        a, b, hung = c.addresses
        r = repl.client(c.ports[0])
        key = {}
        i = 0
        while len(key) < 6 and i < 10000:
            k = "wt:%d" % i
            i += 1
            copies = tuple(x.decode() for x in r.execute_command("CLUSTER", "COPIES", k))
            key.setdefault(copies, k)
        ab, ac, ba, bc = key[(a, b)], key[(a, hung)], key[(b, a)], key[(b, hung)]
        cases = [
            ("SET of a key whose replica hangs", [["SET", ac, "1"]], 0),
            ("MSET of two keys of node 1, the first one's replica up", [["MSET", ab, "1", ac, "1"]],
             0),
            ("MSET split over nodes 1 and 2", [["MSET", ba, "1", ab, "1", ac, "1"]], 0),
            ("MULTI relayed whole to node 1", [["MULTI"], ["SET", ab, "2"], ["SET", ac, "2"],
                                               ["EXEC"]], 0),
            ("MULTI over nodes 1 and 2", [["MULTI"], ["SET", ba, "3"], ["SET", ab, "3"],
                                          ["SET", ac, "3"], ["EXEC"]], 0),
            ("MULTI with an MSET split over nodes 1 and 2", [["MULTI"], ["MSET", ba, "4", ab, "4",
                                                                     ac, "4"], ["EXEC"]], 0),
            ("MULTI run where the client is, its key's replica hung",
             [["MULTI"], ["SET", bc, "5"], ["EXEC"]], 0),
            ("MSET of keys whose replicas are up", [["MSET", ab, "5", ba, "5"]], 1),
            ("MULTI over nodes 1 and 2, replicas up", [["MULTI"], ["SET", ab, "6"],
                                                       ["SET", ba, "6"], ["EXEC"]], 1),
            # Refused with CROSSSLOT unless atomic-multikey runs it (it then deletes ac).
            ("SET whose replica is up, then RENAME over nodes 1 and 2",
             [["SET", ab, "7"], ["RENAME", ac, ba]], 0 if atomic else 1),
        ]
        client = repl.client(c.ports[1])  # node 2: node 1's keys are relayed
        repl.settle(c.ports)  # every stream online, its replica's copy complete
        c.kill(2, signal.SIGSTOP)
        try:
            for what, commands, want in cases:
                for command in commands:
                    try:
                        client.execute_command(*command)
                    except redis.ResponseError:
                        pass  # CROSSSLOT: the case is what WAIT answers after it
                got = client.execute_command("WAIT", 1, 300)
                report.equal(got, want, "%s: WAIT 1 300 after %s" % (label, what))
        finally:
            c.kill(2, signal.SIGCONT)


def check_hold_bounded(report, binary):
    """No client request waits longer than request-timeout: a node that starts asks its peers
    whether they hold copies of its keys and holds keyed requests meanwhile; with a peer hung
    (SIGSTOP) from the start, its requests are answered with an error after request-timeout
    instead of when the check gives up (twice the lease, 66 s here)."""
    timeout_ms = 1000
    limit = timeout_ms / 1000 + 1.5 * harness.timeout_scale()
    opts = {"replication-factor": 2, "health-interval": 3000, "failure-limit": 10}
    with harness.Cluster(binary, 3, name="repl-hold", request_timeout=timeout_ms,
                         cluster_options=opts) as c:
        c.kill(2, signal.SIGSTOP)
        try:
            fields = harness.info_fields(c.ports[0], "CLUSTER", "INFO")
            report.equal(fields.get("cluster_lease"), "lost", "hold: the node that just started "
                         "waits for its peers' answers (its requests are held)")
            with harness.RespClient(c.ports[0], timeout=3 * limit) as client:

                def timed(*args):
                    started = time.monotonic()
                    try:
                        reply = client.call(*args)
                    except OSError as e:
                        reply = repr(e).encode()
                    return reply, time.monotonic() - started

                got, waited = timed("SET", "held:1", "v")
                print("    hold: SET answered %r after %.2f s" % (got, waited), flush=True)
                # (CLUSTERDOWN from the node, or the relay's timeout when a peer holds it.)
                report.check(got == b"+OK\r\n" or got.startswith((b"-CLUSTERDOWN", b"-ERR peer")),
                             "hold: a held SET is answered", repr(got))
                report.check(waited < limit, "hold: the SET is answered within request-timeout "
                             "(waited %.2f s)" % waited)
                client.call("MULTI")
                client.call("SET", "held:2", "v")
                got, waited = timed("EXEC")
                print("    hold: EXEC answered %r after %.2f s" % (got, waited), flush=True)
                report.check(got.startswith((b"-EXECABORT", b"-ERR peer", b"*1")),
                             "hold: a held EXEC is answered", repr(got))
                report.check(waited < limit, "hold: the EXEC is answered within request-timeout "
                             "(waited %.2f s)" % waited)
        finally:
            c.kill(2, signal.SIGCONT)


def check_backlog_overrun(report, binary):
    """A replica's stream connection drops and the replica hangs before the primary is back in
    (CLIENT KILL, then SIGSTOP at once: the primary reconnects after 50 ms at the earliest); the
    primary's writes meanwhile overrun the backlog, so the replica gets a full copy rather than a
    partial resync, and every copy is right afterwards. Failure detection is slowed so that no
    failover happens. A WAIT for a write made while the replica hung answers only once that full
    copy ended (the replica dropped its copies first: acknowledging the copy's first frames is
    not having the write)."""
    opts = {"health-interval": 200, "failure-limit": 25, "replication-factor": 2,
            "repl-backlog-size": "16kb"}
    with harness.Cluster(binary, 3, name="repl-backlog", cluster_options=opts) as c:
        ports = c.ports
        repl.settle(ports)
        primary, replica = c.nodes[0].address, c.nodes[1].address
        ours = repl.keys_held_by(ports[0], ["bl:%d" % i for i in range(30000)],
                                 [primary, replica])
        keys = ours[:100]
        report.check(len(keys) >= 21, "backlog: keys kept on node 1 with copies on node 2",
                     repr(len(keys)))
        r = repl.client(ports[0])
        # Enough for the full copy to take a while (megabytes).
        bulk = ours[100:3100]
        for start in range(0, len(bulk), 500):
            r.mset({k: "b" * 4096 for k in bulk[start:start + 500]})
        before = repl.repl_sync_counts(ports[0])
        written = 0
        repl.kill_stream(ports[1], primary)
        c.kill(1, signal.SIGSTOP)
        waited = {}

        def wait_write():
            w = repl.client(ports[0], timeout=60)
            w.set(keys[20], "waited")
            waited["reply"] = w.execute_command("WAIT", 1, 0)
            waited["state"] = repl.stream_state(ports[0], replica)

        waiter = threading.Thread(target=wait_write, daemon=True)
        waiter.start()
        try:
            deadline = time.time() + 1.5
            while time.time() < deadline:
                pipe = r.pipeline(transaction=False)
                for k in keys[:20]:
                    pipe.set(k, "%d:%s" % (written, "x" * 1000))
                pipe.execute()
                written += 1
                time.sleep(0.01)
        finally:
            c.kill(1, signal.SIGCONT)
        repl.settle(ports)
        partial, full = (a - b for a, b in zip(repl.repl_sync_counts(ports[0]), before))
        report.check(full >= 1 and partial == 0, "backlog: %d KB written while the replica hung "
                     "ended in a full copy, not a partial resync" % (written * 20),
                     "partial %d, full %d" % (partial, full))
        repl.check_copies(report, ports, keys, 2, "backlog: after the full copy")
        waiter.join(30)
        report.equal((waited.get("reply"), waited.get("state")), (1, "online"),
                     "backlog: WAIT 1 for a write made while the replica hung answers 1 once the "
                     "replica's full copy ended (its stream online, not still in sync)")


def check_fault(report, binary, rng, n_nodes, rf, acks, fault, label):
    """Writers on every node; `fault` ("kill" or "stop") hits a random node after 1 s; measures
    the failover, restores the node and checks the model (strictly when acks >= 1). Returns the
    number of acknowledged writes lost."""
    with repl.durable_cluster(binary, n_nodes, "repl-%s" % label, rf, acks) as c:
        ports = c.ports
        repl.settle(ports)
        victim = rng.randrange(n_nodes)
        survivors = [p for i, p in enumerate(ports) if i != victim]
        model = repl.Model()
        with repl.writing(model, ports, rng) as writers:
            time.sleep(1.0)
            all_keys = sorted(model.sent)
            owner = repl.owners(ports[0], all_keys)
            victim_keys = {k for k in all_keys if owner[k] == c.nodes[victim].address}
            t_fault = time.monotonic()
            if fault == "kill":
                c.kill(victim)
            else:
                c.kill(victim, signal.SIGSTOP)
            time.sleep(repl.FAILOVER_LIMIT + 1.0)
            repl.check_writable_again(report, label, "the failed node's keys",
                                      [w for i, w in enumerate(writers) if i != victim], t_fault,
                                      victim_keys)
            report.check(all(repl.cluster_info(p).get("cluster_failed") == "1" for p in survivors),
                         "%s: every survivor has the node failed over" % label)
            if fault == "stop":
                # Back from a hang: it must not answer anything older than acknowledged.
                c.kill(victim, signal.SIGCONT)
                stale = repl.stale_reads(ports[victim], dict(model.acked), rng)
                report.check(not stale, "%s: reads through the node back from SIGSTOP never "
                             "return a value older than an acknowledged write" % label,
                             repr(stale[:5]))
            else:
                c.restart(victim)
            time.sleep(0.5)
        lost = repl.check_after_faults(report, ports, model, label, acks >= 1, rf, keys_checked=300)
        return len(lost), len(model.acked)


def check_eject_cache(report, binary):
    opts = dict(repl.HEALTH, **{"on-peer-down": "eject"})
    with harness.Cluster(binary, 3, name="repl-eject", cluster_options=opts) as c:
        ports = c.ports
        repl.settle(ports)
        # Keys owned by node 3: one overwritten by a stand-in, one deleted there (DEL answers 0:
        # the stand-in holds nothing of it), one written there with a TTL that runs out.
        key, deleted, expiring = [k for k in ("k%d" % i for i in range(3000))
                                  if repl.owners(ports[0], [k])[k] == c.nodes[2].address][:3]
        for k in (key, deleted, expiring):
            repl.client(ports[0]).set(k, "v1")
        c.kill(2, signal.SIGSTOP)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                if repl.client(ports[1]).set(key, "v2"):
                    break
            except redis.RedisError:
                time.sleep(0.05)
        report.equal(repl.client(ports[1]).get(key), b"v2", "eject: SET k v2 taken by a stand-in")
        report.equal(repl.client(ports[1]).delete(deleted), 0, "eject: DEL of another key there")
        repl.client(ports[1]).set(expiring, "v2", px=200)
        time.sleep(0.4)
        c.kill(2, signal.SIGCONT)
        seen = set()
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            for p in ports:
                try:
                    seen.add(repl.client(p).get(key))
                except redis.RedisError as e:
                    seen.add(str(e).split()[0])
            time.sleep(0.02)
        report.check(b"v1" not in seen, "eject: after SIGCONT no read returns v1, the write the "
                     "stand-in overwrote", repr(seen))
        repl.settle(ports)
        report.equal([repl.client(p).get(key) for p in ports], [b"v2"] * 3,
                     "eject: once restored every node answers v2")
        report.equal([repl.client(p).get(k) for p in ports for k in (deleted, expiring)],
                     [None] * 6, "eject: once restored, the key deleted there and the one that "
                     "expired there are gone, not back at v1")
        c.kill(2, signal.SIGSTOP)
        time.sleep(2.0)
        report.equal(repl.client(ports[0]).get(key), None, "eject: stopped again, the stand-in has "
                     "nothing for it (a cache)")
        c.kill(2, signal.SIGCONT)


def check_expiry_while_failed(report, binary, label, options):
    """Keys expire (actively, and lazily when read) on the members left while one is failed
    over, with replication-factor 2 or in eject mode without replicas: they keep serving, the
    keys are gone everywhere, and the member returns. (Before, each survivor recursed into its
    own expiry until its stack overflowed: every member crashed with SIGSEGV.)"""
    opts = dict(repl.HEALTH, **options)
    with harness.Cluster(binary, 3, name="repl-expiry", cluster_options=opts) as c:
        ports = c.ports
        repl.settle(ports)
        keys = ["ttl:%d" % i for i in range(300)]
        pipe = repl.client(ports[0]).pipeline(transaction=False)
        for i, k in enumerate(keys):
            pipe.set(k, "v", px=1500 + 10 * (i % 50))
        pipe.execute()
        c.kill(2)
        version, _ = repl.wait_ring(ports[:2], lambda v, p: v >= 1 and p is None)
        report.check(all(v >= 1 for v, _ in version),
                     "%s: node 3 failed over (%r)" % (label, version))
        time.sleep(2.5)
        report.check(all(n.alive() for n in c.nodes[:2]),
                     "%s: both members left are alive" % label, c.logs(3000))
        if not all(n.alive() for n in c.nodes[:2]):
            return
        report.equal([repl.client(p).get(k) for p in ports[:2] for k in keys[:20]], [None] * 40,
                     "%s: expired keys read as gone through both members left" % label)
        report.equal([repl.client(p).dbsize() for p in ports[:2]], [0, 0],
                     "%s: DBSIZE 0 once every key expired" % label)
        c.restart(2)
        repl.settle(ports, timeout=60)
        report.equal([repl.client(p).dbsize() for p in ports], [0, 0, 0],
                     "%s: node 3 back, no key came back" % label)


def check_kept_copies(report, before, after, members, label):
    """Between the snapshots `before` and `after` ({port: stream_syncs}), the streams between
    `members` (ports) continued across the ring change: one partial resync more each, no full
    copy."""
    wrong = []
    for p in members:
        for replica, (partial, full) in after[p].items():
            if int(replica.rsplit(":", 1)[1]) not in members or replica not in before.get(p, {}):
                continue
            was = before[p][replica]
            if full != was[1] or partial <= was[0]:
                wrong.append((p, replica, was, (partial, full)))
    report.check(not wrong, "%s: every replica that stays kept its copy (the streams between "
                 "members continued)" % label, repr(wrong[:4]))


def check_ring_change(report, binary, rng):
    opts = dict(repl.HEALTH, **{"replication-factor": 2})
    with harness.Cluster(binary, 3, name="repl-ring", cluster_options=opts) as c:
        ports = list(c.ports)
        repl.settle(ports)
        cand_port = harness.free_ports(1)[0]
        text = harness.cluster_config(cand_port, [cand_port], cluster_options=opts)
        cand = harness.ClusterNode(binary, cand_port, text, "repl-ring-candidate")
        cand.start()
        try:
            model = repl.Model()
            # Writers on the members that stay (a member that left serves its own ring of one).
            with repl.writing(model, ports[:2], rng, nkeys=300):
                time.sleep(0.5)
                before = {p: repl.stream_syncs(p) for p in ports}
                repl.client(ports[0]).execute_command("CLUSTER", "JOIN", cand.address)
                repl.settle(ports + [cand_port], timeout=60)
                joined = {p: repl.stream_syncs(p) for p in ports + [cand_port]}
                repl.client(ports[1]).execute_command("CLUSTER", "LEAVE", c.nodes[2].address)
                members = ports[:2] + [cand_port]
                repl.settle(members, timeout=60)
                left = {p: repl.stream_syncs(p) for p in members}
            repl.settle(members)
            check_kept_copies(report, before, joined, ports, "3 -> 4")
            check_kept_copies(report, joined, left, members, "4 -> 3")
            repl.check_model(report, members, model, "3 -> 4 -> 3")
            repl.check_copies(report, members, sorted(model.sent), 2, "3 -> 4 -> 3")
            report.equal(repl.client(ports[2]).dbsize(), 0, "3 -> 4 -> 3: the member that left "
                         "holds nothing")
        finally:
            cand.cleanup()


def check_failover_after_change(report, binary, rng, rf, change, bulk=60000):
    """A primary killed right after a ring change (`change`: "leave", 4 -> 3 members, or "join",
    3 -> 4; replica-acks 1), with enough keys that copying them again takes a while, then
    restarted without a file to load. The change's copy gave every member that became a replica
    of a key that key before the ring switched, so every copy is complete at the switch: the
    killed primary's keys are writable again within 3 s through every survivor, no acknowledged
    write is lost and every key is there."""
    label = "after a %s (rf %d)" % (change, rf)
    opts = dict(repl.HEALTH, **{"replication-factor": rf, "replica-acks": 1})
    n = 4 if change == "leave" else 3
    with harness.Cluster(binary, n, name="repl-after-change", cluster_options=opts) as c:
        ports = list(c.ports)
        repl.settle(ports)
        cand = None
        if change == "join":
            cand_port = harness.free_ports(1)[0]
            text = harness.cluster_config(cand_port, [cand_port], cluster_options=opts)
            cand = harness.ClusterNode(binary, cand_port, text, "repl-after-change-candidate")
            cand.start()
        try:
            r = repl.client(ports[0], timeout=30)
            value = "v" * 400
            bulk_keys = ["bulk:%d" % i for i in range(bulk)]
            for start in range(0, bulk, 2000):
                pipe = r.pipeline(transaction=False)
                for k in bulk_keys[start:start + 2000]:
                    pipe.set(k, value)
                pipe.execute()
            repl.settle(ports, timeout=60)
            victim = 0
            survivors = [ports[1], ports[2]] + ([cand.port] if cand else [])
            model = repl.Model()
            with repl.writing(model, survivors[:2], rng) as writers:
                time.sleep(0.5)
                all_keys = sorted(model.sent)
                version = int(repl.cluster_info(ports[victim])["cluster_ring_version"])
                argv = (("CLUSTER", "LEAVE", c.nodes[3].address) if change == "leave" else
                        ("CLUSTER", "JOIN", cand.address))
                got = repl.client(ports[1], timeout=30).execute_command(*argv)
                report.check(got in (b"OK", "OK", True), "%s: %s answered" % (label, change),
                             repr(got))
                # The victim dies as soon as it switched to the new ring.
                deadline = time.monotonic() + 30
                while (int(repl.cluster_info(ports[victim])["cluster_ring_version"]) == version and
                       time.monotonic() < deadline):
                    time.sleep(0.005)
                owner = repl.owners(ports[1], all_keys)
                victim_keys = {k for k in all_keys if owner[k] == c.nodes[victim].address}
                t_fault = time.monotonic()
                c.kill(victim)
                time.sleep(repl.FAILOVER_LIMIT + 1.0)
                repl.check_writable_again(report, label, "the killed primary's keys", writers,
                                          t_fault, victim_keys)
                c.restart(victim)
                time.sleep(0.5)
            members = [ports[victim]] + survivors
            lost = repl.check_after_faults(report, members, model, label, True, rf)
            exists = repl.pipelined(members[1], [("EXISTS", k) for k in bulk_keys])
            missing = [k for k, e in zip(bulk_keys, exists) if not e]
            print("    %s: %d of %d keys gone; %d acknowledged writes lost" %
                  (label, len(missing), bulk, len(lost)), flush=True)
            report.equal(len(missing), 0, "%s: every key is still there" % label)
        finally:
            if cand:
                cand.cleanup()


def main():
    args, rng, _, report = main_support.seeded_start("test_replication", __doc__)
    print("a ring of one with replication-factor 2, under memcheck", flush=True)
    check_one_member(report, args.server)
    print("basics (replication-factor 2)", flush=True)
    check_basics(report, args.server)
    print("WAIT with a replica hung", flush=True)
    check_wait_hung_replica(report, args.server, False)
    check_wait_hung_replica(report, args.server, True)
    print("requests held while a node that started asks its peers", flush=True)
    check_hold_bounded(report, args.server)
    print("a replica hung past the backlog", flush=True)
    check_backlog_overrun(report, args.server)
    print("kill -9 of a primary (replication-factor 2, replica-acks 1)", flush=True)
    check_fault(report, args.server, rng, 3, 2, 1, "kill", "kill")
    print("SIGSTOP of a primary (replication-factor 3, 4 nodes, replica-acks 1)", flush=True)
    check_fault(report, args.server, rng, 4, 3, 1, "stop", "stop")
    print("kill -9 with replica-acks 0", flush=True)
    lost, acked = check_fault(report, args.server, rng, 3, 2, 0, "kill", "async")
    print("    async: %d of %d keys lost their last acknowledged write" % (lost, acked),
          flush=True)
    print("eject mode without replicas: the stand-in's writes are handed back", flush=True)
    check_eject_cache(report, args.server)
    print("keys expiring while a member is failed over", flush=True)
    check_expiry_while_failed(report, args.server, "replication-factor 2",
                              {"replication-factor": 2})
    check_expiry_while_failed(report, args.server, "eject mode", {"on-peer-down": "eject"})
    print("3 -> 4 -> 3 under replication", flush=True)
    check_ring_change(report, args.server, rng)
    print("a primary killed right after a ring change, restarted empty", flush=True)
    check_failover_after_change(report, args.server, rng, 3, "leave")
    check_failover_after_change(report, args.server, rng, 2, "leave")
    check_failover_after_change(report, args.server, rng, 2, "join")
    report.finish()


if __name__ == "__main__":
    main()
