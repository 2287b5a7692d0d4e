#!/usr/bin/env python3
"""Integration tests of the append-only file with real processes.

- Replay: a node with appendonly yes (appendfsync always) runs the differential generator's
  commands of every group; a full dump of the keyspace (type, value, absolute expiry) must be the
  same after a restart, after BGREWRITEAOF plus kill -9, and redis-check-aof must accept the file
  before and after the rewrite.
- Crashes: several clients write (INCR counters, unique SETs) while the node is killed with
  SIGKILL at random moments, some of them during a rewrite of a large dataset; after each
  restart every acknowledged write must be there.
- Damaged files: a truncated last record is cut off with a warning (or refused with
  aof-load-truncated no); corruption in the middle refuses to start, naming the offset.
- SHUTDOWN and SIGTERM keep everything, appendfsync no included; CONFIG SET appendonly yes at
  run time writes the current data first; CONFIG GET/SET and INFO persistence against Redis.
- A 3-node cluster with appendonly yes: each node logs its own keys in its own dir.
"""

import os
import random
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from command_gen import CommandGen  # noqa: E402

AOF = "appendonly.aof"


def ringkv(binary, fsync="always", extra=(), name="aof"):
    """A ringkv server (not started) whose append-only file lives in its temp dir."""
    server = harness.ServerProcess(binary, name=name)
    server.extra_args += ["--appendonly", "yes", "--appendfsync", fsync, "--dir", server.dir,
                          "--hz", "50"] + list(extra)
    return server


def aof_path(server):
    return os.path.join(server.dir, AOF)


def restart(server, how=signal.SIGTERM):
    """Stops the server (SIGTERM waits for its exit; SIGKILL is a crash) and starts it again."""
    if how == signal.SIGKILL:
        os.kill(server.pid, signal.SIGKILL)
        server.proc.wait()
    server.stop()
    server.start()


def call(port, *args):
    with harness.RespClient(port) as c:
        return harness.parse_reply(c.call(*args))


def info_fields(port, section="persistence"):
    text = call(port, "INFO", section).decode()
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


def wait_rewrite_done(report, port, what, timeout=30.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        fields = info_fields(port)
        if fields["aof_rewrite_in_progress"] == "0" and fields["aof_rewrite_scheduled"] == "0":
            return fields
        time.sleep(0.02)
    report.check(False, what + ": rewrite finished within %ds" % timeout)
    return info_fields(port)


def dump(port):
    """Every key with its type, value and absolute expiry (PEXPIRETIME), as a dict."""
    out = {}
    with harness.RespClient(port) as c:
        cursor = b"0"
        keys = []
        while True:
            cursor, batch = harness.parse_reply(c.call("SCAN", cursor, "COUNT", "500"))
            keys += batch
            if cursor == b"0":
                break
        for key in keys:
            kind = harness.parse_reply(c.call("TYPE", key))
            if kind == "string" or kind == b"string":
                value = harness.parse_reply(c.call("GET", key))
            elif kind in ("list", b"list"):
                value = harness.parse_reply(c.call("LRANGE", key, 0, -1))
            elif kind in ("set", b"set"):
                value = sorted(harness.parse_reply(c.call("SMEMBERS", key)))
            elif kind in ("zset", b"zset"):
                value = harness.parse_reply(c.call("ZRANGE", key, 0, -1, "WITHSCORES"))
            elif kind in ("hash", b"hash"):
                flat = harness.parse_reply(c.call("HGETALL", key))
                value = sorted(zip(flat[::2], flat[1::2]))
            elif kind in ("stream", b"stream"):
                value = stream_state(c, key)
            else:
                value = None
            out[key] = (kind, value, harness.parse_reply(c.call("PEXPIRETIME", key)))
    return out


def stream_state(c, key):
    """A stream's entries, counters and groups (their pending entries with owners and delivery
    counts), without what a rewrite may change: the node layout (XINFO's radix-tree figures) and
    consumers' seen times."""
    info = harness.parse_reply(c.call("XINFO", "STREAM", key))
    info = {k: v for k, v in zip(info[::2], info[1::2]) if not k.startswith(b"radix-tree")}
    groups = harness.parse_reply(c.call("XINFO", "GROUPS", key))
    pending = []
    for g in groups:
        name = g[g.index(b"name") + 1]
        rows = harness.parse_reply(c.call("XPENDING", key, name, "-", "+", "1000"))
        pending.append((name, [(r[0], r[1], r[3]) for r in rows]))
    return (harness.parse_reply(c.call("XRANGE", key, "-", "+")), sorted(info.items()), groups,
            pending)


def compare_dumps(report, before, after, what):
    missing = sorted(set(before) - set(after))[:5]
    extra = sorted(set(after) - set(before))[:5]
    differ = [k for k in before if k in after and before[k] != after[k]][:3]
    report.check(not missing and not extra and not differ, what + ": same keyspace (%d keys)"
                 % len(before), "missing %r extra %r differ %r" % (
                     missing, extra, [(k, before[k], after[k]) for k in differ]))


def check_aof(report, path, what):
    r = subprocess.run(["redis-check-aof", path], capture_output=True, text=True)
    # A file of an empty keyspace (the generated commands may end in FLUSHALL) is "empty", which
    # redis-check-aof accepts as well (exit 0).
    accepted = "is valid" in r.stdout or "is empty" in r.stdout
    report.check(r.returncode == 0 and accepted, what + ": redis-check-aof accepts "
                 "the file", r.stdout[-500:] + r.stderr[-500:])


def run_commands(port, gen, count):
    client = harness.RespClient(port)
    sent = 0
    while sent < count:
        for argv, _mode in gen.next():
            try:
                client.call(*argv)
            except OSError:
                client.close()
                client = harness.RespClient(port)
            sent += 1
    client.close()


def write_every_type(port):
    """Writes of every type for sure, whatever the seed, with TTLs and effective forms (bitmaps
    and HyperLogLogs too: their bytes, cached estimate included, must come back the same; geo
    sets and the stores and pops of ZRANGESTORE, GEOSEARCHSTORE, ZMPOP and BZMPOP)."""
    with harness.RespClient(port) as client:
        for args in (("RPUSH", "p:list", "a", "b", "c"), ("SADD", "p:set", "x", "y"),
                     ("ZADD", "p:zset", "1.5", "m", "2", "n"), ("HSET", "p:hash", "f", "v"),
                     ("SET", "p:str", "value", "EX", "1000"), ("EXPIRE", "p:list", "500"),
                     ("INCRBYFLOAT", "p:float", "0.1"), ("SADD", "p:spop", *range(20)),
                     ("SPOP", "p:spop"), ("SPOP", "p:spop", "3"), ("SET", "p:gone", "x", "PX", "1"),
                     ("GETEX", "p:hash2", "EX", "100"), ("HSET", "p:hash2", "a", "1"),
                     ("PEXPIRE", "p:hash2", "100000"), ("SETBIT", "p:bits", "100", "1"),
                     ("BITFIELD", "p:bits", "INCRBY", "u8", "#3", "7"),
                     ("BITOP", "OR", "p:bitop", "p:bits", "p:str"), ("PFADD", "p:hll", "a", "b"),
                     ("PFCOUNT", "p:hll"), ("PFADD", "p:dense", *range(2000)),
                     ("PFMERGE", "p:merged", "p:hll", "p:dense"), ("PFADD", "p:hll2", "x"),
                     ("PFDEBUG", "TODENSE", "p:hll2"), ("XADD", "p:stream", "*", "f", "1"),
                     ("XADD", "p:stream", "*", "f", "2", "g", "x"),
                     ("XADD", "p:stream", "MAXLEN", "~", "1", "*", "f", "3"),
                     ("XGROUP", "CREATE", "p:stream", "grp", "0"),
                     ("XREADGROUP", "GROUP", "grp", "alice", "COUNT", "2", "STREAMS", "p:stream",
                      ">"),
                     ("XGROUP", "CREATECONSUMER", "p:stream", "grp", "bob"),
                     ("XAUTOCLAIM", "p:stream", "grp", "bob", "0", "0", "COUNT", "1"),
                     ("XADD", "p:stream", "*", "f", "4"), ("XDEL", "p:stream", "0-1"),
                     ("XGROUP", "CREATE", "p:empty", "g", "$", "MKSTREAM"),
                     ("XADD", "p:gone", "1-1", "f", "v"), ("XDEL", "p:gone", "1-1"),
                     ("XREADGROUP", "GROUP", "grp", "carol", "NOACK", "STREAMS", "p:stream", ">"),
                     ("GEOADD", "p:geo", "13.361389", "38.115556", "Palermo", "15.087269",
                      "37.502669", "Catania", "2.35", "48.85", "Paris"),
                     ("GEOSEARCHSTORE", "p:geonear", "p:geo", "FROMLONLAT", "15", "37", "BYRADIUS",
                      "300", "km", "STOREDIST"),
                     ("GEORADIUS", "p:geo", "15", "37", "5000", "km", "COUNT", "2", "STORE",
                      "p:georad"),
                     ("ZRANGESTORE", "p:zrs", "p:geo", "0", "1"), ("ZMPOP", "1", "p:zrs", "MAX"),
                     ("BZMPOP", "0", "1", "p:georad", "MIN", "COUNT", "1")):
            client.call(*args)
    time.sleep(0.05)


def test_replay(report, binary, seed, segments=5):
    """After each segment of generated commands the node restarts (SIGTERM, or kill -9 after a
    BGREWRITEAOF) and must come back with the same keyspace."""
    gen = CommandGen(random.Random(seed))
    server = ringkv(binary, name="aof-replay")
    with server:
        write_every_type(server.port)
        total_keys = 0
        for segment in range(segments):
            run_commands(server.port, gen, 1000)
            if segment == segments - 1:
                write_every_type(server.port)
            before = dump(server.port)
            total_keys += len(before)
            what = "replay segment %d" % segment
            if segment % 2 == 0:
                check_aof(report, aof_path(server), what + ", as logged")
                restart(server, signal.SIGTERM)
                compare_dumps(report, before, dump(server.port), what + " after SIGTERM")
                continue
            report.equal(call(server.port, "BGREWRITEAOF"),
                         b"Background append only file rewriting started", what + ": BGREWRITEAOF")
            fields = wait_rewrite_done(report, server.port, what)
            report.equal(fields["aof_last_bgrewrite_status"], "ok", what + ": rewrite status ok")
            report.equal(fields["aof_current_size"], fields["aof_base_size"],
                         what + ": the rewritten file is the base")
            check_aof(report, aof_path(server), what + ", rewritten")
            restart(server, signal.SIGKILL)
            compare_dumps(report, before, dump(server.port), what + " after rewrite + kill -9")
        report.check(total_keys > 5 * segments, "replay: the generated runs left keys (%d)"
                     % total_keys)
        check_clean_start(report, server, "replay")


def check_clean_start(report, server, what):
    report.check("DB loaded from append-only file" in server.log(None),
                 what + ": the log reports the load", server.log(800))


class Writer(threading.Thread):
    """Writes INCR on its own counter and SETs unique keys until stopped or the connection dies;
    remembers what was acknowledged."""

    def __init__(self, port, n):
        super().__init__(daemon=True)
        self.port, self.n = port, n
        self.counter_acked = 0
        self.sets_acked = []
        self.stop = False

    def run(self):
        try:
            with harness.RespClient(self.port, timeout=5.0) as c:
                i = 0
                while not self.stop:
                    i += 1
                    reply = c.call("INCR", "ctr:%d" % self.n)
                    if not reply.startswith(b":"):
                        return
                    self.counter_acked = int(reply[1:-2])
                    key = "u:%d:%d" % (self.n, i)
                    if c.call("SET", key, "v%d" % i) != b"+OK\r\n":
                        return
                    self.sets_acked.append(key)
        except (OSError, ValueError):
            return


def preload(port, keys, value_size=100):
    with harness.RespClient(port, timeout=60.0) as c:
        batch = 1000
        value = "x" * value_size
        for start in range(0, keys, batch):
            args = []
            for i in range(start, min(keys, start + batch)):
                args += ["big:%d" % i, value]
            c.call("MSET", *args)


def test_crashes(report, binary, rng, rounds):
    server = ringkv(binary, name="aof-crash")
    with server:
        preload(server.port, 150000)
        counters = {}
        lost = []
        rewrites_during_kill = 0
        for rnd in range(rounds):
            writers = [Writer(server.port, n) for n in range(4)]
            for w in writers:
                w.start()
            time.sleep(rng.uniform(0.05, 0.4))
            during_rewrite = rnd % 3 == 1
            if during_rewrite:
                call(server.port, "BGREWRITEAOF")
                time.sleep(rng.uniform(0.0, 0.15))
                if info_fields(server.port)["aof_rewrite_in_progress"] == "1":
                    rewrites_during_kill += 1
            os.kill(server.pid, signal.SIGKILL)
            server.proc.wait()
            for w in writers:
                w.join(10)
            server.stop()
            server.start(timeout=60)
            with harness.RespClient(server.port) as c:
                for w in writers:
                    stored = harness.parse_reply(c.call("GET", "ctr:%d" % w.n))
                    stored = int(stored) if stored else 0
                    # A counter only grows: it holds the last acknowledged value or more.
                    want = counters.get(w.n, 0) + 0
                    counters[w.n] = stored
                    if stored < w.counter_acked or stored < want:
                        lost.append("round %d ctr:%d stored %d acked %d" % (
                            rnd, w.n, stored, w.counter_acked))
                    for chunk in range(0, len(w.sets_acked), 500):
                        keys = w.sets_acked[chunk:chunk + 500]
                        got = harness.parse_reply(c.call("EXISTS", *keys))
                        if got != len(keys):
                            lost.append("round %d: %d of %d acknowledged SETs missing" % (
                                rnd, len(keys) - got, len(keys)))
                report.equal(harness.parse_reply(c.call("EXISTS", "big:0", "big:149999")), 2,
                             "crash round %d: the preloaded data survived" % rnd)
            if during_rewrite:
                leftovers = [f for f in os.listdir(server.dir) if f.startswith("temp-rewrite-")]
                for f in leftovers:
                    os.unlink(os.path.join(server.dir, f))
        report.check(not lost, "crashes: every acknowledged write survived %d kill -9" % rounds,
                     "; ".join(lost[:5]))
        print("crash rounds: %d, killed during a running rewrite: %d" % (
            rounds, rewrites_during_kill), flush=True)
        report.check(sum(counters.values()) > 0, "crashes: the writers wrote")
        check_aof(report, aof_path(server), "after the crash rounds")


def test_auto_rewrite(report, binary):
    """The file grows past auto-aof-rewrite-min-size while automatic rewrites are off; turning
    them on (CONFIG SET) makes the next cron rewrite it down to one key (an RDB preamble by
    default: its header and aux fields take about 110 bytes, the key 25)."""
    server = ringkv(binary, extra=["--auto-aof-rewrite-min-size", "200kb",
                                   "--auto-aof-rewrite-percentage", "0"], name="aof-auto")
    with server:
        with harness.RespClient(server.port) as c:
            for i in range(20000):
                c.send(harness.encode_command("SET", "same", "v" * 20))
            for i in range(20000):
                c.read()
        grown = int(info_fields(server.port)["aof_current_size"])
        report.check(grown > 200 * 1024, "auto rewrite: the file grew", str(grown))
        call(server.port, "CONFIG", "SET", "auto-aof-rewrite-percentage", "100")
        deadline = time.time() + 20
        while time.time() < deadline and info_fields(server.port)["aof_rewrites"] == "0":
            time.sleep(0.05)
        fields = wait_rewrite_done(report, server.port, "auto rewrite")
        report.equal(fields["aof_rewrites"], "1", "auto rewrite: the grown file was rewritten")
        report.check(int(fields["aof_current_size"]) < 160, "auto rewrite: down to one key",
                     fields["aof_current_size"])
        restart(server, signal.SIGKILL)
        report.equal(call(server.port, "GET", "same"), b"v" * 20, "auto rewrite: data kept")


def kill_rewrite_child(server):
    """Kills the server's rewrite child while it still works (stopped first, so that it cannot
    finish in between); False when it had finished already (gone, or a zombie)."""
    children = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True,
                              text=True).stdout.split()
    killed = False
    for pid in map(int, children):
        try:
            os.kill(pid, signal.SIGSTOP)
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, FileNotFoundError):
            continue
        killed = killed or state != "Z"
    return killed


def test_failed_rewrite(report, binary):
    server = ringkv(binary, name="aof-failrw")
    with server:
        preload(server.port, 200000)
        report.equal(call(server.port, "BGREWRITEAOF"),
                     b"Background append only file rewriting started", "failed rewrite: started")
        report.equal(call(server.port, "BGREWRITEAOF"),
                     harness.Error("ERR Background append only file rewriting already in progress"),
                     "failed rewrite: a second one is refused")
        # A fast machine may finish the rewrite before it is killed: then again.
        killed = kill_rewrite_child(server)
        for _ in range(5):
            if killed:
                break
            wait_rewrite_done(report, server.port, "failed rewrite (finished first)")
            call(server.port, "BGREWRITEAOF")
            killed = kill_rewrite_child(server)
        report.check(killed, "failed rewrite: a rewrite child was killed while it worked")
        fields = wait_rewrite_done(report, server.port, "failed rewrite")
        if killed:
            report.equal(fields["aof_last_bgrewrite_status"], "err",
                         "failed rewrite: a killed child gives status err")
            temps = [f for f in os.listdir(server.dir) if f.startswith("temp-rewrite-")]
            report.equal(temps, [], "failed rewrite: the temp file is removed")
        call(server.port, "SET", "after", "1")
        restart(server, signal.SIGKILL)
        report.equal(call(server.port, "DBSIZE"), 200001,
                     "failed rewrite: the old file still holds everything")
        report.equal(call(server.port, "BGREWRITEAOF"),
                     b"Background append only file rewriting started", "rewrite after a failure")
        wait_rewrite_done(report, server.port, "rewrite after a failure")
        harness.check_clean_exit(report, server)


def write_file(server, data):
    os.makedirs(server.dir, exist_ok=True)
    with open(aof_path(server), "wb") as f:
        f.write(data)


RECORDS = [harness.encode_command("SET", "k%d" % i, "value%d" % i) for i in range(10)]


def test_damaged_files(report, binary):
    whole = b"".join(RECORDS)
    cut = len(whole) - 7  # inside the last record

    server = ringkv(binary, name="aof-trunc")
    write_file(server, whole[:cut])
    with server:
        report.equal(call(server.port, "DBSIZE"), 9, "truncated file: the whole records load")
        report.check("short read" in server.log(None), "truncated file: warns",
                     server.log(600))
        report.equal(os.path.getsize(aof_path(server)), len(whole) - len(RECORDS[-1]),
                     "truncated file: cut to the last whole record")
        call(server.port, "SET", "new", "1")
        restart(server, signal.SIGKILL)
        report.equal(call(server.port, "DBSIZE"), 10, "truncated file: appends after the cut")

    server = ringkv(binary, extra=["--aof-load-truncated", "no"], name="aof-trunc-no")
    write_file(server, whole[:cut])
    expect_refusal(report, server, "aof-load-truncated no", [b"redis-check-aof"])
    report.equal(os.path.getsize(aof_path(server)), cut,
                 "aof-load-truncated no: the file is left alone")
    server.cleanup()

    corrupt = RECORDS[0] + RECORDS[1] + b"*3\r\n$3\r\nSET\r\n$x\r\n" + b"".join(RECORDS[2:])
    server = ringkv(binary, name="aof-corrupt")
    write_file(server, corrupt)
    offset = str(len(RECORDS[0]) + len(RECORDS[1])).encode()
    expect_refusal(report, server, "corrupt file", [b"redis-check-aof --fix", offset])
    server.cleanup()


def expect_refusal(report, server, what, needles):
    server.start(wait=False)
    try:
        code = server.proc.wait(15)
    except subprocess.TimeoutExpired:
        code = None
    report.check(code not in (None, 0), what + ": refuses to start (exit %r)" % code)
    log = server.log(None).encode()
    for needle in needles:
        report.check(needle in log, what + ": the error names %r" % needle, log[-600:])


def test_shutdown(report, binary):
    for fsync in ("no", "everysec"):
        server = ringkv(binary, fsync=fsync, name="aof-shutdown-" + fsync)
        with server:
            preload(server.port, 5000)
            call(server.port, "RPUSH", "list", *range(100))
            before = dump(server.port)
            try:
                call(server.port, "SHUTDOWN")
            except (OSError, ValueError):
                pass
            server.proc.wait(10)
            report.equal(server.proc.returncode, 0, "appendfsync %s: SHUTDOWN exits 0" % fsync)
            server.stop()
            server.start()
            compare_dumps(report, before, dump(server.port), "appendfsync %s: after SHUTDOWN"
                          % fsync)
            call(server.port, "SET", "more", "1")
            before = dump(server.port)
            restart(server, signal.SIGTERM)
            compare_dumps(report, before, dump(server.port), "appendfsync %s: after SIGTERM"
                          % fsync)
            harness.check_clean_exit(report, server)


def test_config_runtime(report, binary):
    server = harness.ServerProcess(binary, name="aof-config")
    server.extra_args += ["--dir", server.dir]
    with server:
        preload(server.port, 20000)
        report.equal(info_fields(server.port)["aof_enabled"], "0", "config: off by default")
        report.check(not os.path.exists(aof_path(server)), "config: no file while off")
        report.equal(call(server.port, "CONFIG", "SET", "appendonly", "yes"), b"OK",
                     "config: CONFIG SET appendonly yes")
        report.equal(info_fields(server.port)["aof_enabled"], "1", "config: enabled at once")
        call(server.port, "SET", "during", "1")
        fields = wait_rewrite_done(report, server.port, "config")
        report.equal(fields["aof_last_bgrewrite_status"], "ok", "config: base file written")
        call(server.port, "SET", "after", "1")
        call(server.port, "CONFIG", "SET", "appendfsync", "always")
        call(server.port, "SET", "always", "1")
        before = dump(server.port)
        check_aof(report, aof_path(server), "config: base + appended")
        # Turning it on at run time is not persisted in any config file: restart with it on.
        server.extra_args += ["--appendonly", "yes"]
        restart(server, signal.SIGKILL)
        compare_dumps(report, before, dump(server.port), "config: the base file and the writes "
                      "made during and after it")
        report.equal(call(server.port, "CONFIG", "SET", "appendonly", "no"), b"OK",
                     "config: CONFIG SET appendonly no")
        size = os.path.getsize(aof_path(server))
        call(server.port, "SET", "unlogged", "1")
        report.equal(os.path.getsize(aof_path(server)), size, "config: nothing logged when off")
        report.equal(info_fields(server.port)["aof_enabled"], "0", "config: disabled")


COMPARED_PARAMS = ["appendonly", "appendfsync", "appendfilename", "auto-aof-rewrite-percentage",
                   "auto-aof-rewrite-min-size", "aof-load-truncated"]
CONFIG_SETS = [("appendfsync", "foo"), ("appendfsync", "ALWAYS"), ("appendonly", "maybe"),
               ("appendfilename", "x.aof"), ("auto-aof-rewrite-min-size", "-1"),
               ("auto-aof-rewrite-min-size", "32mb"), ("auto-aof-rewrite-percentage", "-1"),
               ("auto-aof-rewrite-percentage", "50"), ("aof-load-truncated", "no"),
               ("aof-load-truncated", "2")]


def test_against_redis(report, binary):
    with harness.start_oracle() as oracle, harness.ServerProcess(binary, name="aof-cfg") as ours:
        for name in COMPARED_PARAMS:
            with harness.RespClient(oracle.port) as o, harness.RespClient(ours.port) as c:
                report.equal(c.call("CONFIG", "GET", name), o.call("CONFIG", "GET", name),
                             "CONFIG GET %s" % name)
        for name, value in CONFIG_SETS:
            with harness.RespClient(oracle.port) as o, harness.RespClient(ours.port) as c:
                report.equal(c.call("CONFIG", "SET", name, value),
                             o.call("CONFIG", "SET", name, value),
                             "CONFIG SET %s %s" % (name, value))
        for name in ("save", "appendonly"):
            reply = call(ours.port, "CONFIG", "GET", name)
            report.check(isinstance(reply, list) and len(reply) == 2,
                         "CONFIG GET %s answers a pair (redis-benchmark reads it)" % name)
        theirs = info_fields(oracle.port)
        mine = info_fields(ours.port)
        for name in ("loading", "aof_enabled", "aof_rewrite_in_progress", "aof_rewrite_scheduled",
                     "aof_last_rewrite_time_sec", "aof_current_rewrite_time_sec",
                     "aof_last_bgrewrite_status", "aof_rewrites",
                     "aof_rewrites_consecutive_failures", "aof_last_write_status"):
            report.equal(mine.get(name), theirs.get(name), "INFO persistence %s" % name)
        report.check("latest_fork_usec" in info_fields(ours.port, "stats"),
                     "INFO stats has latest_fork_usec")
        with harness.RespClient(oracle.port) as o, harness.RespClient(ours.port) as c:
            for args in (["BGREWRITEAOF", "x"], ["MULTI"], ["BGREWRITEAOF"]):
                report.equal(c.call(*args), o.call(*args), "%s" % " ".join(args))
            report.equal(c.call("EXEC"), o.call("EXEC"), "BGREWRITEAOF inside MULTI: scheduled")
    # With the file on, as Redis: the same fields appear.
    server = ringkv(binary, name="aof-info")
    with server:
        fields = info_fields(server.port)
        for name in ("aof_current_size", "aof_base_size", "aof_pending_rewrite",
                     "aof_buffer_length", "aof_pending_bio_fsync", "aof_delayed_fsync"):
            report.check(name in fields, "INFO persistence with appendonly yes has %s" % name)


def test_cluster(report, binary):
    def configure(i, port, ports):
        return (harness.cluster_config(port, ports) +
                '\n[persistence]\nappendonly = true\nappendfsync = "always"\n')

    with harness.Cluster(binary, n=3, name="aof-cluster", configure=configure) as cluster:
        port = cluster.nodes[0].port
        with harness.RespClient(port) as c:
            for i in range(300):
                c.call("SET", "ck:%d" % i, "v%d" % i)
        sizes = [os.path.getsize(os.path.join(n.dir, AOF)) for n in cluster.nodes]
        report.check(all(s > 0 for s in sizes), "cluster: every node logs its own keys", repr(sizes))
        for i in range(3):
            cluster.kill(i)
            cluster.restart(i)
        with harness.RespClient(port) as c:
            got = [harness.parse_reply(c.call("GET", "ck:%d" % i)) for i in range(300)]
        report.equal(got, [b"v%d" % i for i in range(300)], "cluster: every key after kill -9 of "
                     "every node")


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int)
    p.add_argument("--rounds", type=int, default=harness.scaled(20, minimum=3),
                   help="kill -9 rounds of the crash test (default 20 x RINGKV_TEST_SCALE)")
    args = p.parse_args()
    rng, seed = harness.seeded_rng(args.seed)
    report = harness.Report("test_persistence")
    test_replay(report, args.server, seed)
    test_damaged_files(report, args.server)
    test_shutdown(report, args.server)
    test_config_runtime(report, args.server)
    test_against_redis(report, args.server)
    test_auto_rewrite(report, args.server)
    test_failed_rewrite(report, args.server)
    test_crashes(report, args.server, rng, args.rounds)
    test_cluster(report, args.server)
    report.finish()


if __name__ == "__main__":
    main()
