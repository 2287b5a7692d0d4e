#!/usr/bin/env python3
"""Writes refused as redis-server 7.0.15 refuses them, step by step against it.

While the node cannot persist (stop-writes-on-bgsave-error): after a failed BGSAVE, with save
rules set, every write command and PING answer -MISCONF; reads, scripts that write nothing and
read-only transactions go on; a write queued in MULTI aborts the transaction; a successful SAVE
or BGSAVE, no save rules, or stop-writes-on-bgsave-error no lets writes in again. A BGSAVE is made
to fail the same way on both servers: a soft file-size limit (prlimit) under the snapshot's size
kills the child with SIGXFSZ. An append-only file on a full tmpfs gives the AOF's MISCONF.

While too few replicas would have the write (min-replicas-to-write, min-replicas-max-lag):
-NOREPLICAS, on a node without replicas for every write, as redis-server without replicas.

In a cluster the node that would persist the write decides: a write relayed to a member whose
last BGSAVE failed is refused there, the other members' keys are written, and that member's
replication stream from its primary is still applied. With replication-factor 2 and
min-replicas-to-write 1, a write is refused once its key's replica has been silent (SIGSTOP)
longer than min-replicas-max-lag, other keys' writes go on, and the replica's return lets them
in again. A transaction across members (and an atomic multi-key MSET) that writes a key of the
refusing member is refused as a whole at EXEC by that member, though the member the client uses
queued it, and nothing of it runs; one that only reads there runs. The refusing member's own
clients' writes of other members' keys are taken, in MULTI too."""

import hashlib
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time

import harness
import main_support
import replication_support as rs

# Bigger than the soft limit once in the snapshot, whatever compression does (random bytes).
_BIG = random.Random(7).randbytes(3 * 1024 * 1024)
_LIMIT = 1024 * 1024
_MISCONF = (b"-MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
            b"persist to disk. Commands that may modify the data set are disabled, because this "
            b"instance is configured to report errors during writes if RDB snapshotting fails "
            b"(stop-writes-on-bgsave-error option). Please check the Redis logs for details about "
            b"the RDB error.\r\n")


def set_file_limit(pid, soft):
    """The process's soft limit on file sizes (its hard limit stays unlimited)."""
    subprocess.run(["prlimit", "--pid", str(pid), "--fsize=%s:unlimited" % soft], check=True)


def bgsave_done(port):
    """Waits until no BGSAVE runs; returns rdb_last_bgsave_status."""
    deadline = time.time() + 20 * harness.timeout_scale()
    while time.time() < deadline:
        fields = harness.info_fields(port, "INFO", "persistence")
        if fields.get("rdb_bgsave_in_progress") == "0":
            return fields.get("rdb_last_bgsave_status")
        time.sleep(0.05)
    return "bgsave still running"


def fail_bgsave(pid, port):
    """Makes the next BGSAVE fail (its file outgrows the limit); returns what is observed."""
    set_file_limit(pid, _LIMIT)
    with harness.RespClient(port) as c:
        started = c.call("BGSAVE")
    status = bgsave_done(port)
    set_file_limit(pid, "unlimited")
    return [("a failing BGSAVE starts", started), ("and fails", status)]


_SCRIPTS = [
    ("a script that writes nothing", ("EVAL", "return redis.call('GET', 'r')", "0")),
    ("a script's write (redis.call)", ("EVAL", "return redis.call('SET', 'w', '1')", "0")),
    ("a script's write (redis.pcall)", ("EVAL", "return redis.pcall('SET', 'w', '1')", "0")),
    ("a script's write after a read",
     ("EVAL", "redis.call('GET', 'r'); return redis.call('INCR', 'w')", "0")),
    ("a shebang script that may write", ("EVAL", "#!lua\nreturn 1", "0")),
    ("a no-writes shebang script", ("EVAL", "#!lua flags=no-writes\nreturn 1", "0")),
    ("EVAL_RO", ("EVAL_RO", "return redis.call('GET', 'r')", "0")),
    ("a function that may write", ("FCALL", "maywrite", "0")),
    ("a no-writes function", ("FCALL", "readonly", "0")),
    ("FCALL_RO", ("FCALL_RO", "readonly", "0")),
    ("FUNCTION DELETE", ("FUNCTION", "DELETE", "nosuchlib")),
]

_LIBRARY = """#!lua name=disklib
redis.register_function('maywrite', function() return redis.call('SET', 'fw', '1') end)
redis.register_function{function_name='readonly', callback=function() return 1 end,
                        flags={'no-writes'}}
"""


def while_refused(c, queued, steps):
    """While writes are refused: what each of `steps`, each script of _SCRIPTS, the EXEC of
    `queued`'s transaction (a write queued before) and a transaction that queues a write answer."""
    seen = [(" ".join(step), c.call(*step)) for step in steps]
    seen += [(note, c.call(*step)) for note, step in _SCRIPTS]
    seen.append(("EXEC of a write queued before", queued.call("EXEC")))
    seen.append(("MULTI", c.call("MULTI")))
    seen.append(("a write queued now", c.call("SET", "a", "3")))
    seen.append(("a read queued", c.call("GET", "a")))
    seen.append(("EXEC aborts", c.call("EXEC")))
    return seen


def observe(server):
    """The whole scenario on one server (ringkv or redis-server): what each step answers."""
    port = server.port
    seen = []
    with harness.RespClient(port) as c, harness.RespClient(port) as queued:
        c.call("SET", "big", _BIG)
        c.call("SET", "r", "read me")
        c.call("FUNCTION", "LOAD", _LIBRARY)
        seen.append(("no save rules: a failed BGSAVE", None))
        seen += fail_bgsave(server.pid, port)
        seen.append(("writes go on without save rules", c.call("SET", "a", "1")))
        seen.append(("MULTI queues a write before", queued.call("MULTI")))
        seen.append(("queued", queued.call("SET", "q", "1")))
        seen.append(("save rules set", c.call("CONFIG", "SET", "save", "3600 1")))
        seen.append(("status still err", bgsave_done(port)))
        seen += while_refused(c, queued, [
            ("SET", "a", "2"), ("PING",), ("PING", "hi"), ("GET", "a"), ("DEL", "a"),
            ("EXPIRE", "a", "10"), ("PUBLISH", "ch", "m"), ("FLUSHALL",), ("ECHO", "x"),
            ("EXISTS", "a"), ("SAVE", "x")])
        seen.append(("MULTI again", c.call("MULTI")))
        seen.append(("PING queued", c.call("PING")))
        seen.append(("EXEC after PING", c.call("EXEC")))
        seen.append(("a read-only MULTI", c.call("MULTI")))
        seen.append(("GET queued", c.call("GET", "r")))
        seen.append(("EXEC runs", c.call("EXEC")))
        seen.append(("CONFIG GET", c.call("CONFIG", "GET", "stop-writes-on-bgsave-error")))
        seen.append(("CONFIG SET bad", c.call("CONFIG", "SET", "stop-writes-on-bgsave-error",
                                              "maybe")))
        seen.append(("off", c.call("CONFIG", "SET", "stop-writes-on-bgsave-error", "no")))
        seen.append(("writes go on", c.call("SET", "a", "4")))
        seen.append(("on", c.call("CONFIG", "SET", "stop-writes-on-bgsave-error", "yes")))
        seen.append(("refused again", c.call("SET", "a", "5")))
        seen.append(("save rules off", c.call("CONFIG", "SET", "save", "")))
        seen.append(("writes go on", c.call("SET", "a", "6")))
        seen.append(("save rules on", c.call("CONFIG", "SET", "save", "3600 1")))
        seen.append(("refused again", c.call("INCR", "n")))
        seen.append(("SAVE", c.call("SAVE")))
        seen.append(("a successful SAVE clears it", bgsave_done(port)))
        seen.append(("writes go on", c.call("SET", "a", "7")))
        seen += fail_bgsave(server.pid, port)
        seen.append(("refused", c.call("SET", "a", "8")))
        seen.append(("a BGSAVE", c.call("BGSAVE")))
        seen.append(("that succeeds", bgsave_done(port)))
        seen.append(("clears it", c.call("SET", "a", "9")))
        seen.append(("what was written", c.call("MGET", "a", "q", "w", "fw", "n")))
        seen.append(("CONFIG SET save off", c.call("CONFIG", "SET", "save", "")))
    return seen


def beside_oracle(observe):
    """A check: `observe(server)` on ringkv and on redis-server sees the same (it is given the
    ServerProcess: some steps act on the process)."""
    def check(report, binary):
        with harness.ServerProcess(binary, name="ringkv") as ours, \
                harness.start_oracle() as oracle:
            harness.compare_observations(report, observe(ours), observe(oracle))
            report.check(ours.alive(), "ringkv still running", ours.log())
    return check


def wait_for(what, want, seconds=15):
    """Polls `what()` until it returns `want`; returns the last value."""
    deadline = time.time() + seconds * harness.timeout_scale()
    got = what()
    while got != want and time.time() < deadline:
        time.sleep(0.05)
        got = what()
    return got


def aof_status(port, want):
    """Waits until INFO's aof_last_write_status is `want`; returns the last one seen."""
    return wait_for(lambda: harness.info_fields(port, "INFO", "persistence").get(
        "aof_last_write_status"), want)


def observe_full_disk(binary):
    """The append-only file on a 1 MB tmpfs that a big write fills, then grown back: what each
    step answers, on ringkv (`binary`) or redis-server."""
    mount_point = tempfile.mkdtemp(prefix="ringkv-it-full-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount_point], check=True)
    seen = []
    try:
        kind = "redis" if harness.is_redis_binary(binary) else "ringkv"
        extra = ["--appendonly", "yes", "--appendfsync", "everysec", "--dir", mount_point]
        with harness.ServerProcess(binary, kind=kind, name=kind, extra_args=extra) as server:
            with harness.RespClient(server.port) as c:
                seen.append(("a small write", c.call("SET", "small", "v")))
                seen.append(("a write the disk has no room for", c.call("SET", "big", _BIG[:2 << 20])))
                seen.append(("the file's writes fail", aof_status(server.port, "err")))
                for step in [("SET", "a", "1"), ("PING",), ("INCR", "n"), ("GET", "small"),
                             ("EXISTS", "big"), ("EVAL", "return redis.call('DEL', 'small')", "0")]:
                    seen.append((" ".join(step), c.call(*step)))
                subprocess.run(["mount", "-o", "remount,size=64m", mount_point], check=True)
                seen.append(("room again: the retry succeeds", aof_status(server.port, "ok")))
                seen.append(("writes go on", c.call("SET", "a", "2")))
                seen.append(("PING", c.call("PING")))
                seen.append(("what was written", c.call("MGET", "small", "a")))
                seen.append(("the big value", c.call("STRLEN", "big")))
    finally:
        subprocess.run(["umount", "-l", mount_point], check=False)
        shutil.rmtree(mount_point, ignore_errors=True)
    return seen


def can_mount_tmpfs():
    """Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    probe = tempfile.mkdtemp(prefix="ringkv-it-probe-")
    try:
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe],
                          stderr=subprocess.DEVNULL).returncode != 0:
            return False
        subprocess.run(["umount", probe], check=False)
        return True
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def check_full_disk(report, binary):
    if not can_mount_tmpfs():
        print("  skipped: a full disk needs a tmpfs mount (root with CAP_SYS_ADMIN)")
        return
    harness.compare_observations(report, observe_full_disk(binary),
                                 observe_full_disk(harness.REDIS_SERVER))


def check_transactions_across(report, port, refusing, others, abort, who):
    """Through the member at `port`, transactions over the key `refusing` (whose member refuses
    writes) and `others` (whose members take them): a write there aborts the whole transaction
    with that member's refusal (EXECABORT), and nothing of it runs; one that only reads there
    runs."""
    with harness.RespClient(port) as c:
        before = c.call("MGET", others[0], refusing)
        held = c.call("GET", refusing)
        queued = [c.call("MULTI"), c.call("SET", others[0], "t"), c.call("SET", refusing, "t")]
        report.equal(queued, [b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n"],
                     "a transaction across members queues a write to " + who)
        report.equal(c.call("EXEC"), abort, "its EXEC is refused as a whole, with the refusal of "
                     + who)
        report.equal(c.call("MGET", others[0], refusing), before, "and nothing of it ran")
        c.call("MULTI")
        c.call("GET", refusing)
        c.call("SET", others[1], "r")
        report.equal(c.call("EXEC"), b"*2\r\n" + held + b"+OK\r\n",
                     "a transaction that only reads the keys of " + who + " runs")


def check_cluster(report, binary):
    """Three members, replication-factor 2; the second's BGSAVE fails. Its peers' health checks
    (PING) are still answered: it is not failed over for refusing writes."""
    options = {"replication-factor": 2, "health-interval": 100, "failure-limit": 3,
               "atomic-multikey": True}
    with harness.Cluster(binary, 3, name="disk-errors", cluster_options=options) as cluster:
        ports, addresses = cluster.ports, cluster.addresses
        names = ["de:%d" % i for i in range(300)]
        copies = rs.copies_of(ports[0], names)
        primary_there = [k for k, held in zip(names, copies) if held[0] == addresses[1]]
        replica_there = [k for k, held in zip(names, copies)
                         if held[0] != addresses[1] and addresses[1] in held]
        elsewhere = [k for k, held in zip(names, copies) if addresses[1] not in held]
        with harness.RespClient(ports[1]) as c:
            c.call("SET", primary_there[0], _BIG)
            report.equal(c.call("CONFIG", "SET", "save", "3600 1"), b"+OK\r\n", "save rules set")
        report.equal(fail_bgsave(cluster.nodes[1].pid, ports[1])[1][1], "err",
                     "the second member's BGSAVE fails")
        misconf = _MISCONF
        with harness.RespClient(ports[0]) as c:
            report.equal(c.call("SET", primary_there[1], "x"), misconf,
                         "a write relayed to the member that cannot persist is refused there")
            report.equal(c.call("SET", elsewhere[0], "x"), b"+OK\r\n",
                         "the other members' keys are written")
            report.equal(c.call("SET", replica_there[0], "copied"), b"+OK\r\n",
                         "a key that member holds a copy of is written by its primary")
            report.equal(c.call("PING"), b"+PONG\r\n", "the first member answers PING")
        check_transactions_across(report, ports[0], primary_there[2], elsewhere[1:3],
                                  b"-EXECABORT Transaction discarded because of: " + misconf[1:],
                                  "the member that cannot persist")
        with harness.RespClient(ports[0]) as c:
            report.equal(c.call("MSET", elsewhere[3], "m", primary_there[3], "m"), misconf,
                         "an atomic MSET over that member's key and others is refused")
            report.equal(c.call("MGET", elsewhere[3], primary_there[3]),
                         b"*2\r\n$-1\r\n$-1\r\n", "as a whole")
            report.equal(c.call("MSET", elsewhere[3], "m", elsewhere[4], "m"), b"+OK\r\n",
                         "one over other members' keys is taken")
        with harness.RespClient(ports[1]) as c:
            report.equal(c.call("PING"), misconf, "the member that cannot persist refuses PING")
            report.equal(c.call("GET", primary_there[1]), b"$-1\r\n", "and serves reads")
            # Its clients' writes of other members' keys go on, in MULTI too: queued there, they
            # are refused only by a member that cannot take them.
            report.equal(c.call("SET", elsewhere[5], "via"), b"+OK\r\n",
                         "a write through it of another member's key is taken")
            queued = [c.call("MULTI"), c.call("SET", elsewhere[5], "q"),
                      c.call("SET", elsewhere[6], "q"), c.call("SET", primary_there[4], "q")]
            report.equal(queued, [b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n", misconf],
                         "in MULTI through it, other members' writes are queued, its own refused")
            # As redis-server's EXEC of a queue holding writes while it cannot persist.
            report.equal(c.call("EXEC"),
                         b"-EXECABORT Transaction discarded because of: " + misconf[1:],
                         "and EXEC aborts")
            c.call("MULTI")
            c.call("SET", elsewhere[5], "q")
            c.call("SET", elsewhere[6], "q")
            report.equal(c.call("EXEC"), b"*2\r\n+OK\r\n+OK\r\n",
                         "a transaction through it of other members' writes runs")
            report.equal(c.call("MGET", elsewhere[5], elsewhere[6]),
                         b"*2\r\n$1\r\nq\r\n$1\r\nq\r\n", "and wrote")
        time.sleep(1.0)  # ten health intervals: a member whose pings failed would be down
        report.equal(rs.cluster_info(ports[0]).get("cluster_state"), "ok",
                     "its peers still see every member up")
        with harness.RespClient(ports[0]) as c:
            report.equal(c.call("SET", primary_there[1], "x"), misconf,
                         "so its keys' writes are still refused by it, not failed over")
        session = rs.PeerSession(ports[1])
        deadline = time.time() + 10 * harness.timeout_scale()
        while session.call("GET", replica_there[0]) != b"copied" and time.time() < deadline:
            time.sleep(0.05)
        report.equal(session.call("GET", replica_there[0]), b"copied",
                     "its primary's stream is still applied there")
        session.close()
        with harness.RespClient(ports[1]) as c:
            report.equal(c.call("CONFIG", "SET", "save", ""), b"+OK\r\n", "save rules off")
        with harness.RespClient(ports[0]) as c:
            report.equal(c.call("SET", primary_there[1], "x"), b"+OK\r\n",
                         "then that member's keys are written again")
        report.check(all(n.alive() for n in cluster.nodes), "every member still runs",
                     cluster.logs())


_NOREPLICAS = b"-NOREPLICAS Not enough good replicas to write.\r\n"


def config_pairs(c, pattern):
    """CONFIG GET `pattern` as sorted (name, value) pairs (the servers order them differently)."""
    reply = harness.parse_reply(c.call("CONFIG", "GET", pattern))
    return sorted(zip(reply[::2], reply[1::2]))


def replication_line(port, name):
    """One line of INFO replication (None when absent)."""
    return harness.info_fields(port, "INFO", "replication").get(name)


def observe_replicas(server):
    """min-replicas-to-write on a server without replicas: what each step answers."""
    port = server.port
    seen = []
    with harness.RespClient(port) as c, harness.RespClient(port) as queued:
        c.call("SET", "r", "read me")
        c.call("FUNCTION", "LOAD", _LIBRARY)
        seen.append(("CONFIG GET min-replicas-*", config_pairs(c, "min-replicas-*")))
        seen.append(("CONFIG GET min-slaves-*", config_pairs(c, "min-slaves-*")))
        seen.append(("no good-replicas line while off",
                     replication_line(port, "min_slaves_good_slaves")))
        seen.append(("MULTI queues a write before", queued.call("MULTI")))
        seen.append(("queued", queued.call("SET", "q", "1")))
        seen.append(("on", c.call("CONFIG", "SET", "min-replicas-to-write", "1")))
        seen.append(("the good-replicas line", replication_line(port, "min_slaves_good_slaves")))
        seen += while_refused(c, queued, [
            ("SET", "a", "1"), ("PING",), ("GET", "r"), ("DEL", "r"), ("FLUSHALL",),
            ("PUBLISH", "ch", "m"), ("INCR", "n")])
        seen.append(("a read-only MULTI", c.call("MULTI")))
        seen.append(("PING queued", c.call("PING")))
        seen.append(("EXEC runs", c.call("EXEC")))
        seen.append(("CONFIG SET bad", c.call("CONFIG", "SET", "min-replicas-to-write", "-1")))
        seen.append(("CONFIG SET bad lag", c.call("CONFIG", "SET", "min-replicas-max-lag", "x")))
        seen.append(("lag 0: no check", c.call("CONFIG", "SET", "min-replicas-max-lag", "0")))
        seen.append(("no good-replicas line", replication_line(port, "min_slaves_good_slaves")))
        seen.append(("writes go on", c.call("SET", "a", "4")))
        seen.append(("lag back", c.call("CONFIG", "SET", "min-slaves-max-lag", "10")))
        seen.append(("refused again", c.call("SET", "a", "5")))
        seen.append(("off through the old name", c.call("CONFIG", "SET", "min-slaves-to-write", "0")))
        seen.append(("CONFIG GET", config_pairs(c, "min-*")))
        seen.append(("writes go on", c.call("SET", "a", "6")))
        seen.append(("what was written", c.call("MGET", "a", "q", "w", "fw", "n", "r")))
        # The backlog's size, another replication setting.
        seen.append(("CONFIG GET repl-backlog-size", config_pairs(c, "repl-backlog-size")))
        for value in ["1000", "0", "-5", "x", "2mb"]:
            seen.append(("CONFIG SET repl-backlog-size " + value,
                         c.call("CONFIG", "SET", "repl-backlog-size", value)))
            seen.append(("then CONFIG GET", config_pairs(c, "repl-backlog-size")))
            seen.append(("and INFO", replication_line(port, "repl_backlog_size")))
    return seen


def check_replicas_cluster(report, binary):
    """Three members, replication-factor 2, min-replicas-to-write 1 and a lag of 2 s; health
    checks slow enough that the stopped member is not failed over meanwhile."""
    options = {"replication-factor": 2, "health-interval": 500, "failure-limit": 1000}
    with harness.Cluster(binary, 3, name="min-replicas", cluster_options=options) as cluster:
        ports, addresses = cluster.ports, cluster.addresses
        names = ["mr:%d" % i for i in range(300)]
        rs.settle(ports)
        copies = rs.copies_of(ports[0], names)
        on_third = next(k for k, held in zip(names, copies) if held == addresses[:3:2])
        on_second = next(k for k, held in zip(names, copies) if held == addresses[:2])
        from_second = [k for k, held in zip(names, copies) if held == addresses[1::-1]][:2]
        for port in ports:
            with harness.RespClient(port) as c:
                c.call("CONFIG", "SET", "min-replicas-to-write", "1")
                c.call("CONFIG", "SET", "min-replicas-max-lag", "2")
        with harness.RespClient(ports[0]) as c:
            report.equal(c.call("SET", on_third, "v1"), b"+OK\r\n",
                         "with its replica online a write is taken")
            report.equal(c.call("SET", on_second, "v1"), b"+OK\r\n", "another key's too")
        report.equal(replication_line(ports[0], "min_slaves_good_slaves"), "1",
                     "INFO counts the good replicas (at most replication-factor - 1)")
        with harness.RespClient(ports[0]) as c:
            report.equal(c.call("CONFIG", "SET", "repl-backlog-size", "64kb"), b"+OK\r\n",
                         "the backlog's size set at run time")
        report.equal(replication_line(ports[0], "repl_backlog_size"), "65536",
                     "INFO shows the backlog's new size")
        with harness.RespClient(ports[0]) as c:
            c.call("CONFIG", "SET", "min-replicas-to-write", "2")
            report.equal(c.call("SET", on_third, "v0"), _NOREPLICAS,
                         "more replicas asked for than a key has: its writes are refused")
            c.call("CONFIG", "SET", "min-replicas-to-write", "1")
        cluster.kill(2, signal.SIGSTOP)
        try:
            def write_on_third():
                with harness.RespClient(ports[0]) as c:
                    return c.call("SET", on_third, "v2")
            report.equal(wait_for(write_on_third, _NOREPLICAS), _NOREPLICAS,
                         "once its replica is silent past the lag, a write is refused")
            with harness.RespClient(ports[0]) as c:
                report.equal(c.call("SET", on_second, "v2"), b"+OK\r\n",
                             "a key whose replica answers is written")
                report.equal(c.call("EVAL", "return redis.call('SET', KEYS[1], 'v3')", "1",
                                    on_third), _NOREPLICAS[:-2] + b" script: " +
                             b"%s, on @user_script:1.\r\n" % _sha1(
                                 b"return redis.call('SET', KEYS[1], 'v3')"),
                             "a script's write to it too")
            # Through the second member, which queues it: the first refuses at EXEC.
            check_transactions_across(report, ports[1], on_third, from_second,
                                      b"-EXECABORT Transaction discarded because of: "
                                      + _NOREPLICAS[1:], "the member without a good replica")
        finally:
            cluster.kill(2, signal.SIGCONT)
        def write_again():
            with harness.RespClient(ports[0]) as c:
                return c.call("SET", on_third, "v4")
        report.equal(wait_for(write_again, b"+OK\r\n"), b"+OK\r\n",
                     "the replica back, its keys are written again")
        with harness.RespClient(ports[0]) as c:
            report.equal(c.call("MGET", on_third, on_second),
                         b"*2\r\n$2\r\nv4\r\n$2\r\nv2\r\n",
                         "no refused write was applied")
        report.check(all(n.alive() for n in cluster.nodes), "every member still runs",
                     cluster.logs())


def _sha1(body):
    return hashlib.sha1(body).hexdigest().encode()


def main():
    main_support.run_checks("write_refusals", __doc__, beside_oracle(observe), check_full_disk,
                            check_cluster, beside_oracle(observe_replicas),
                            check_replicas_cluster)


if __name__ == "__main__":
    main()
