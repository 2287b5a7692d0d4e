#!/usr/bin/env python3
"""CLUSTER IMPORT survives killed ringkv nodes: a redis-server 7.0.15 source with keys of every
type and a writer writing to it (SET, INCR, HSET, RPUSH, SADD, ZADD, XADD, EXPIRE, DEL) is imported
into 3-node clusters (append-only files on), and nodes are killed with SIGKILL mid-import.

1. The import's node (its runner) killed during the snapshot and again while streaming, and
   started again: it resumes the import by itself (from import.state in its dir); meanwhile the
   other members' CLUSTER INFO shows the import and where it stopped. Killed while only writes
   that are safe to apply twice are in flight (SET, HSET, DEL...), it continues the source's
   stream (a partial resync); else it takes a new snapshot. CLUSTER IMPORT STOP through another
   member stops it; then every key equals the source's (DUMP payloads, TTLs within a second) and
   the counts are equal.
2. Another member (owner of some imported keys, replication-factor 1) killed while streaming and
   started again: the commands for its keys that failed meanwhile are counted (`unavailable`) and
   the import takes a new snapshot by itself once the member answers; at the end no key differs.
3. replication-factor 2 (replica-acks 0): a member killed while streaming is failed over and the
   import goes on, taking a new snapshot (writes the member acknowledged may not have reached its
   replica); at the end no key differs.
(A source restarting mid-import is test_import.py's.)
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import main_support  # noqa: E402
import redis  # noqa: E402
from test_dump_restore import generate  # noqa: E402
from test_import import Writer, compare_all, import_fields, wait_caught_up  # noqa: E402
from test_rdb import add_streams  # noqa: E402

AOF = "[persistence]\nappendonly = true\n"
HEALTH = {"health-interval": 200, "failure-limit": 3}


def elsewhere_fields(port):
    return import_fields(port, "cluster_remote_import")


def wait_for(predicate, timeout=30):
    deadline = time.time() + timeout * harness.timeout_scale()
    while time.time() < deadline:
        try:
            if predicate():
                return True
        except (redis.ConnectionError, OSError, KeyError, ValueError):
            pass
        time.sleep(0.05)
    return False


def fill_source(r, rng, keys):
    generate(r, rng)
    add_streams(r)
    p = r.pipeline(transaction=False)
    for i in range(keys):
        p.set("bulk:%d" % i, "value-%d" % i, ex=3600 if i % 7 == 0 else None)
    p.execute()
    r.config_set("repl-diskless-sync-delay", 0)
    # Room for the writes made while a killed node is down and resuming (3 s after its start).
    r.config_set("repl-backlog-size", 64 * 1024 * 1024)


def finish(report, cluster, node, ring, src, writer, what, stop_port=None):
    """Stops the writer, waits until the import caught up, stops it (through `stop_port`) and
    compares every key."""
    addr = "127.0.0.1:%d" % src.connection_pool.connection_kwargs["port"]
    writer.stop_flag.set()
    writer.join()
    wait_caught_up(report, node, {addr: src}, "%s: caught up" % what)
    with harness.RespClient(stop_port or node) as c:
        report.equal(c.call("CLUSTER", "IMPORT", "STOP"), b"+OK\r\n",
                     "%s: CLUSTER IMPORT STOP" % what)
    report.check(wait_for(lambda: import_fields(node)[addr]["state"] == "stopped", 10),
                 "%s: the import stopped" % what, repr(import_fields(node)))
    compare_all(report, ring, [src], what)


def check_runner_killed(report, binary, rng, seed, keys):
    with harness.start_oracle("resume-src") as src_proc, \
            harness.Cluster(binary, 3, name="resume-runner", extra=AOF) as cluster:
        src = redis.Redis(port=src_proc.port)
        fill_source(src, rng, keys)
        addr = "127.0.0.1:%d" % src_proc.port
        node, other = cluster.nodes[0].port, cluster.nodes[1].port
        ring = redis.Redis(port=other)
        writer = Writer(src_proc.port, seed)
        writer.start()
        with harness.RespClient(node) as c:
            report.equal(c.call("CLUSTER", "IMPORT", addr), b"+OK\r\n", "runner: CLUSTER IMPORT")
        # Killed as soon as the snapshot's first keys arrived (and the other members know of it:
        # announced at once).
        wait_for(lambda: int(import_fields(node)[addr]["keys"]) > 0 and
                 addr in elsewhere_fields(other), 20)
        state = import_fields(node)[addr]["state"]
        cluster.kill(0)
        report.check(wait_for(lambda: addr in elsewhere_fields(other), 5),
                     "runner killed (%s): another member's CLUSTER INFO shows the import" % state,
                     repr(harness.info_fields(other, "CLUSTER", "INFO")))
        seen = elsewhere_fields(other).get(addr, {})
        report.equal(seen.get("node"), cluster.nodes[0].address,
                     "the import's node is named there")
        time.sleep(1.0)
        report.check(int(elsewhere_fields(other).get(addr, {}).get("heard_ms_ago", 0)) >= 900,
                     "the silence of the killed node shows", repr(elsewhere_fields(other)))
        with harness.RespClient(other) as c:
            got = c.call("CLUSTER", "IMPORT", addr)
            report.check(got.startswith(b"-ERR already importing"),
                         "another member refuses to import the same source", repr(got))
        cluster.restart(0)
        f = wait_caught_up(report, node, {addr: src}, "runner restarted after the snapshot kill")
        report.check(int(f.get(addr, {}).get("full_syncs", 0)) >= 1,
                     "a restart during the snapshot takes a new one", repr(f.get(addr)))
        # Killed while streaming a writer's commands (INCR, RPUSH, XADD: not safe to apply
        # twice): a new snapshot on restart.
        time.sleep(0.5)
        cluster.kill(0)
        time.sleep(0.5)
        cluster.restart(0)
        f = wait_caught_up(report, node, {addr: src}, "runner restarted while streaming")
        report.check(int(f.get(addr, {}).get("full_syncs", 0)) >= 1,
                     "unsafe commands in flight: a new snapshot", repr(f.get(addr)))
        # Killed while only writes safe to apply twice are in flight: the stream continues.
        writer.stop_flag.set()
        writer.join()
        wait_caught_up(report, node, {addr: src}, "the writer paused")
        time.sleep(1.2)  # the next record of import.state says no unsafe command is in flight
        safe = Writer(src_proc.port, seed + 1, Writer.SAFE_OPS)
        safe.start()
        time.sleep(0.5)
        cluster.kill(0)
        time.sleep(0.3)
        cluster.restart(0)
        f = wait_caught_up(report, node, {addr: src}, "runner restarted with safe writes")
        report.check(int(f.get(addr, {}).get("partial_syncs", 0)) == 1 and
                     int(f.get(addr, {}).get("full_syncs", 0)) == 0,
                     "only safe commands in flight: the stream continues (partial resync)",
                     repr(f.get(addr)))
        # STOP through another member.
        finish(report, cluster, node, ring, src, safe, "runner killed", stop_port=other)
        report.check(wait_for(lambda: elsewhere_fields(other)[addr]["state"] == "stopped", 5),
                     "the other member sees it stopped", repr(elsewhere_fields(other)))
        src.set("after:stop", "1")
        time.sleep(0.3)
        report.equal(ring.exists("after:stop"), 0, "nothing is imported after STOP")
        # Stopped, and recorded so: a restart does not resume it.
        cluster.kill(0)
        cluster.restart(0)
        time.sleep(1.5)
        report.equal(import_fields(node).get(addr, {}).get("state"), "stopped",
                     "a stopped import stays stopped after a restart")
        report.equal(ring.exists("after:stop"), 0, "still nothing imported after the restart")
        # Imported again, then stopped through another member while its node is down: the node
        # gets the STOP when it is back.
        with harness.RespClient(node) as c:
            report.equal(c.call("CLUSTER", "IMPORT", addr), b"+OK\r\n", "imported again")
        wait_caught_up(report, node, {addr: src}, "imported again")
        report.equal(ring.get("after:stop"), b"1", "the write made while stopped arrived")
        time.sleep(1.2)  # announced as running
        cluster.kill(0)
        with harness.RespClient(other) as c:
            report.equal(c.call("CLUSTER", "IMPORT", "STOP", addr), b"+OK\r\n",
                         "STOP through another member while the node is down")
        report.equal(elsewhere_fields(other).get(addr, {}).get("stop_requested"), "1",
                     "the STOP waits for the node")
        cluster.restart(0)
        report.check(wait_for(lambda: import_fields(node)[addr]["state"] == "stopped" and
                              elsewhere_fields(other)[addr]["stop_requested"] == "0", 10),
                     "the node got the STOP when it was back",
                     repr((import_fields(node), elsewhere_fields(other))))


def check_target_killed(report, binary, rng, seed, keys, rf):
    opts = dict(HEALTH, **{"replication-factor": rf}) if rf > 1 else None
    with harness.start_oracle("target-src") as src_proc, \
            harness.Cluster(binary, 3, name="resume-target%d" % rf, extra=AOF,
                            cluster_options=opts) as cluster:
        src = redis.Redis(port=src_proc.port)
        fill_source(src, rng, keys)
        addr = "127.0.0.1:%d" % src_proc.port
        node = cluster.nodes[0].port
        ring = redis.Redis(port=cluster.nodes[1].port)
        writer = Writer(src_proc.port, seed)
        writer.start()
        with harness.RespClient(node) as c:
            report.equal(c.call("CLUSTER", "IMPORT", addr), b"+OK\r\n",
                         "rf %d: CLUSTER IMPORT" % rf)
        wait_caught_up(report, node, {addr: src}, "rf %d: imported" % rf)
        cluster.kill(2)
        time.sleep(2.0)
        if rf == 1:
            # The count starts again with each new snapshot (taken 1 s, then 2 s... after the
            # first unavailable command): sampled once, it may be read just after such a start.
            report.check(wait_for(lambda: int(import_fields(node)[addr]["unavailable"]) > 0, 10),
                         "rf 1: commands for the killed member's keys are counted",
                         repr(import_fields(node)[addr]))
            cluster.restart(2)

            def healed():
                f = import_fields(node)[addr]
                return (int(f["owner_resyncs"]) >= 1 and f["state"] == "streaming" and
                        f["unavailable"] == "0" and f["in_flight"] == "0")
            report.check(wait_for(healed, 60), "rf 1: a new snapshot once the member is back",
                         repr(import_fields(node)))
        else:
            report.check(wait_for(lambda: int(import_fields(node)[addr]["failovers"]) >= 1, 15),
                         "rf %d: the failover makes a new snapshot" % rf,
                         repr(import_fields(node)))
        finish(report, cluster, node, ring, src, writer, "rf %d: member killed" % rf)


def main():
    args, rng, seed, report = main_support.seeded_start("test_import_resume", __doc__,
                                                        keys=harness.scaled(5000))
    check_runner_killed(report, args.server, rng, seed, args.keys)
    check_target_killed(report, args.server, rng, seed, args.keys, 1)
    check_target_killed(report, args.server, rng, seed, args.keys, 2)
    report.finish()


if __name__ == "__main__":
    main()
