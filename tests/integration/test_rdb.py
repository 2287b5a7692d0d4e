#!/usr/bin/env python3
"""RDB snapshots against redis-server 7.0.15.

1. ringkv -> redis: keys of every type and encoding (with TTLs, streams with consumer groups) are
   SAVEd by ringkv; redis-check-rdb accepts the file; a redis-server started on it holds the same
   keys: same values, encodings, TTLs (within a second) and DUMP payloads as the redis-server the
   data came from, key by key, and the same count.
2. redis -> ringkv: redis-server SAVEs the same data; ringkv started on that file answers DUMP
   byte for byte as redis-server does for every key (hash-order types by value).
3. A truncated or corrupt file: ringkv refuses to start, naming the file, the offset and the
   reason, and never answers a client.
4. Commands: BGSAVE, SAVE, LASTSAVE, the INFO persistence rdb_* fields, save rules (CONFIG SET
   save), SHUTDOWN SAVE / NOSAVE, SIGTERM with rules, errors byte for byte against redis-server.
   What the BGSAVE and BGREWRITEAOF children report while the server keeps writing (the keys
   written, the memory copied on write: INFO's current_cow_*, current_save_keys_*,
   current_fork_perc, rdb_last_cow_size, aof_last_cow_size), beside redis-server's.
5. The append-only file's RDB preamble: BGREWRITEAOF writes the keys as an RDB, the writes after
   it follow as commands; redis-check-aof accepts the file; a kill -9 and restart loads both;
   with aof-use-rdb-preamble no the rewrite is commands only.
6. Snapshots for tools: `redis-cli --rdb` (REPLCONF capa eof, rdb-only, SYNC) and a plain SYNC
   (length-prefixed); PSYNC's +FULLRESYNC; a redis-server REPLICAOF ringkv is refused; a cluster
   snapshot (scripts/cluster_snapshot.sh) holds every key once.
"""

import os
import random
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import redis  # noqa: E402
from test_dump_restore import deterministic, generate, snapshot, ttl_ok  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def add_streams(r):
    """Streams with deleted entries, consumer groups, pending entries and consumers."""
    keys = []
    for n in (1, 50, 700):
        k = "stream:%d" % n
        keys.append(k)
        for i in range(n):
            r.xadd(k, {"f": str(i), "g": "v" * (i % 7)}, id="%d-%d" % (1000 + i // 3, i % 3))
    r.xdel("stream:50", "1005-1", "1010-0")
    r.xgroup_create("stream:700", "g1", id="0")
    r.xgroup_create("stream:700", "g2", id="1100-0")
    r.xreadgroup("g1", "alice", {"stream:700": ">"}, count=20)
    r.xreadgroup("g1", "bob", {"stream:700": ">"}, count=5)
    r.xack("stream:700", "g1", "1000-1")
    r.xgroup_createconsumer("stream:700", "g2", "carol")
    return keys


def compare(report, got, want, keys, what, payloads=True):
    """Every key of `keys` in `got` equals `want`'s: value, encoding, TTL, DUMP payload."""
    for k in keys:
        w = snapshot(want, k)
        report.equal(snapshot(got, k), w, "%s: %s" % (what, k))
        report.check(ttl_ok(got.pttl(k), want.pttl(k)), "%s: TTL of %s" % (what, k))
        if payloads and (deterministic(w) or w[0] == "stream"):
            mine, theirs = got.dump(k), want.dump(k)
            report.check(mine == theirs, "%s: DUMP payload of %s" % (what, k),
                         "got %r... want %r..." % (mine[:60], theirs[:60]))
    report.equal(got.dbsize(), want.dbsize(), "%s: key count" % what)


def check_rdb(report, path, what):
    r = subprocess.run(["redis-check-rdb", path], capture_output=True, text=True)
    report.check(r.returncode == 0, "redis-check-rdb accepts %s" % what, r.stdout[-2000:])


def redis_on(path, name):
    """A redis-server started on the RDB file `path`."""
    proc = harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name=name)
    shutil.copy(path, os.path.join(proc.dir, "dump.rdb"))
    return proc.start()


def ringkv_on(binary, path, name, extra=()):
    proc = harness.ServerProcess(binary, name=name, extra_args=["--dir", "."] + list(extra))
    if path is not None:
        shutil.copy(path, os.path.join(proc.dir, "dump.rdb"))
    return proc


def test_both_ways(report, binary, rng):
    with harness.start_oracle() as oracle_proc, \
            harness.ServerProcess(binary, name="rdb-src", extra_args=["--dir", "."]) as ours:
        oracle = redis.Redis(port=oracle_proc.port)
        ring = redis.Redis(port=ours.port)
        keys = generate(oracle, rng) + add_streams(oracle)
        for k in keys:
            ring.restore(k, max(oracle.pttl(k), 0), oracle.dump(k))

        # 1. ringkv's file, loaded by redis-server.
        report.equal(ring.save(), True, "SAVE")
        ours_file = os.path.join(ours.dir, "dump.rdb")
        check_rdb(report, ours_file, "ringkv's file")
        with redis_on(ours_file, "redis-from-ringkv") as loaded:
            compare(report, redis.Redis(port=loaded.port), oracle, keys, "redis loads ringkv's file")

        # 2. redis-server's file, loaded by ringkv (and saved again by it: the round trip).
        oracle.save()
        theirs = os.path.join(oracle_proc.dir, "dump.rdb")
        with ringkv_on(binary, theirs, "ringkv-from-redis") as back:
            back_client = redis.Redis(port=back.port)
            compare(report, back_client, oracle, keys, "ringkv loads redis's file")
            report.equal(harness.info_fields(back.port, "INFO", "persistence").get(
                "rdb_last_load_keys_loaded"), str(len(keys)), "rdb_last_load_keys_loaded")
            back_client.save()
            with redis_on(os.path.join(back.dir, "dump.rdb"), "redis-round-trip") as again:
                compare(report, redis.Redis(port=again.port), oracle, keys,
                        "ringkv -> redis -> ringkv -> redis")
            harness.check_clean_exit(report, back)
        # SIGTERM after SAVEs: a clean exit (no leak reports under the sanitizers).
        harness.check_clean_exit(report, ours)
        return theirs_copy(theirs)


def theirs_copy(path):
    """A copy of a good RDB file that outlives the server that wrote it."""
    keep = os.path.join(harness.tempfile.mkdtemp(prefix="ringkv-it-rdbfile-"), "good.rdb")
    shutil.copy(path, keep)
    return keep


def test_refused(report, binary, good):
    data = open(good, "rb").read()
    cases = [("truncated", data[: len(data) // 2], "unexpected end"),
             ("checksum", data[:-1] + bytes([data[-1] ^ 0x10]), "wrong RDB checksum"),
             ("version", data[:5] + b"0011" + data[9:], "can't handle RDB format version 11")]
    for name, content, reason in cases:
        path = os.path.join(os.path.dirname(good), name + ".rdb")
        with open(path, "wb") as f:
            f.write(content)
        proc = ringkv_on(binary, path, "rdb-" + name)
        try:
            proc.start(wait=False)
            code = proc.proc.wait(30 * harness.timeout_scale())
            log = proc.log(tail=None)
            report.check(code != 0, "%s file: the server exits with an error (%r)" % (name, code))
            report.check(reason in log and "dump.rdb" in log and "at offset" in log,
                         "%s file: the log names the file, the offset and the reason" % name,
                         log[-1500:])
            report.check("listening" not in log, "%s file: never listened" % name)
        finally:
            proc.cleanup()


def test_commands(report, binary):
    with harness.start_oracle() as oracle_proc, \
            harness.ServerProcess(binary, name="rdb-cmd", extra_args=["--dir", "."]) as ours:
        for args in (["BGSAVE", "x"], ["BGSAVE", "SCHEDULE", "x"], ["SAVE", "x"],
                     ["CONFIG", "SET", "save", "1 2 3"], ["CONFIG", "SET", "save", "-1 2"],
                     ["CONFIG", "SET", "save", "100  10"], ["CONFIG", "SET", "dbfilename", "x"],
                     ["CONFIG", "SET", "rdbchecksum", "no"], ["CONFIG", "SET", "rdbcompression", "x"],
                     ["CONFIG", "GET", "dbfilename"], ["CONFIG", "SET", "save", "3600 1 300 100"],
                     ["CONFIG", "GET", "save"], ["CONFIG", "SET", "save", ""],
                     ["CONFIG", "GET", "rdbchecksum"], ["CONFIG", "GET", "rdbcompression"],
                     ["CONFIG", "SET", "rdbcompression", "no"], ["CONFIG", "GET", "rdbcompression"],
                     ["CONFIG", "SET", "rdbcompression", "yes"], ["LASTSAVE", "x"]):
            with harness.RespClient(oracle_proc.port) as o, harness.RespClient(ours.port) as c:
                report.equal(c.call(*args), o.call(*args), " ".join(args))
        for name in ("COMMAND", "INFO"), ("COMMAND", "DOCS"):
            for cmd in ("save", "bgsave", "sync", "psync", "replconf"):
                with harness.RespClient(oracle_proc.port) as o, \
                        harness.RespClient(ours.port) as c:
                    report.equal(c.call(*name, cmd), o.call(*name, cmd),
                                 "%s %s" % (" ".join(name), cmd))
        # rdbcompression applies to DUMP payloads as in Redis.
        o = redis.Redis(port=oracle_proc.port)
        r = redis.Redis(port=ours.port)
        for client in (o, r):
            client.set("lzf", "abc" * 100)
        for setting in ("no", "yes"):
            for client in (o, r):
                client.config_set("rdbcompression", setting)
            report.equal(r.dump("lzf"), o.dump("lzf"), "DUMP with rdbcompression %s" % setting)
        r.delete("lzf")
        r.set("a", "1")
        before = r.lastsave()
        info = harness.info_fields(ours.port, "INFO", "persistence")
        report.equal(info.get("rdb_changes_since_last_save"), "3", "changes since start")
        time.sleep(1.1)
        report.equal(r.bgsave(), True, "BGSAVE")
        deadline = time.time() + 20 * harness.timeout_scale()
        while time.time() < deadline and harness.info_fields(
                ours.port, "INFO", "persistence")["rdb_bgsave_in_progress"] == "1":
            time.sleep(0.05)
        info = harness.info_fields(ours.port, "INFO", "persistence")
        report.equal((info["rdb_last_bgsave_status"], info["rdb_changes_since_last_save"],
                      info["rdb_saves"]), ("ok", "0", "1"), "BGSAVE done")
        report.check(r.lastsave() > before, "LASTSAVE moved")
        report.check(os.path.exists(os.path.join(ours.dir, "dump.rdb")), "dump.rdb written")
        # A save rule: 1 change within 1 second saves by itself.
        os.unlink(os.path.join(ours.dir, "dump.rdb"))
        r.config_set("save", "1 1")
        r.set("b", "2")
        deadline = time.time() + 20 * harness.timeout_scale()
        while time.time() < deadline and not os.path.exists(os.path.join(ours.dir, "dump.rdb")):
            time.sleep(0.05)
        report.check(os.path.exists(os.path.join(ours.dir, "dump.rdb")), "the save rule saved")
        # SIGTERM with save rules saves the last writes.
        r.set("c", "3")
        time.sleep(0.05)
        ours.stop()
        again = ringkv_on(binary, os.path.join(ours.dir, "dump.rdb"), "rdb-cmd-again")
        with again:
            r2 = redis.Redis(port=again.port)
            report.equal(sorted(r2.keys()), [b"a", b"b", b"c"], "SIGTERM saved with rules set")
            r2.set("d", "4")
            shutdown(again, "NOSAVE")
            third = ringkv_on(binary, os.path.join(again.dir, "dump.rdb"), "rdb-cmd-third")
            with third:
                r3 = redis.Redis(port=third.port)
                report.equal(r3.dbsize(), 3, "SHUTDOWN NOSAVE did not save")
                r3.set("e", "5")
                shutdown(third, "SAVE")
                with ringkv_on(binary, os.path.join(third.dir, "dump.rdb"), "rdb-cmd-4") as fourth:
                    report.equal(redis.Redis(port=fourth.port).dbsize(), 4,
                                 "SHUTDOWN SAVE saved without rules")


def shutdown(server, *options):
    """SHUTDOWN (which answers nothing: the connection closes) and wait for the exit."""
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(harness.encode_command("SHUTDOWN", *options))
    s.settimeout(30)
    while s.recv(4096):
        pass
    s.close()
    server.proc.wait(30)


def read_sync(port, handshake, command):
    """Sends the REPLCONF handshake and SYNC/PSYNC on a raw socket; returns all it got."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(30)
    out = b""
    for args in handshake + [command]:
        s.sendall(harness.encode_command(*args))
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        out += chunk
    s.close()
    return out


def sync_counts(port):
    fields = harness.info_fields(port, "INFO", "stats")
    return {k: int(fields[k]) for k in ("sync_full", "sync_partial_ok", "sync_partial_err")}


def test_sync(report, binary, good):
    with ringkv_on(binary, good, "rdb-sync") as ours:
        keys = redis.Redis(port=ours.port).dbsize()
        out = os.path.join(ours.dir, "cli.rdb")
        r = subprocess.run(["redis-cli", "-p", str(ours.port), "--rdb", out], capture_output=True,
                           text=True, timeout=60)
        report.check(r.returncode == 0 and "Transfer finished with success" in r.stderr + r.stdout,
                     "redis-cli --rdb succeeds", r.stderr[-1000:])
        check_rdb(report, out, "the file redis-cli --rdb got")
        with redis_on(out, "redis-from-sync") as loaded:
            report.equal(redis.Redis(port=loaded.port).dbsize(), keys, "the snapshot's key count")
        raw = read_sync(ours.port, [], ["SYNC"])
        header, _, rest = raw.partition(b"\r\n")
        report.check(header.startswith(b"$") and int(header[1:]) == len(rest),
                     "plain SYNC: a length-prefixed snapshot", repr(raw[:60]))
        report.check(rest.startswith(b"REDIS0010"), "plain SYNC: an RDB")
        raw = read_sync(ours.port, [["REPLCONF", "capa", "eof"], ["REPLCONF", "rdb-only", "1"]],
                        ["PSYNC", "?", "-1"])
        lines = raw.split(b"\r\n", 4)
        report.check(lines[2].startswith(b"+FULLRESYNC ") and lines[3].startswith(b"$EOF:"),
                     "PSYNC: +FULLRESYNC then an EOF-marked snapshot", repr(raw[:120]))
        mark = lines[3][5:]
        report.check(len(mark) == 40 and raw.endswith(mark), "the snapshot ends with its mark")
        # INFO counts the snapshots as Redis counts full resyncs (and a PSYNC naming an ID as a
        # failed partial one): the same syncs against a redis-server give the same figures.
        with harness.start_oracle(name="sync-counts") as oracle:
            counts = []
            for port in (ours.port, oracle.port):
                before = sync_counts(port)
                for command in (["PSYNC", "?", "-1"], ["PSYNC", "a" * 40, "100"], ["SYNC"]):
                    with harness.RespClient(port) as c:
                        c.call("REPLCONF", "rdb-only", "1")
                        c.send(harness.encode_command(*command))
                        c.sock.recv(1)  # the snapshot began (redis-server keeps the link open)
                after = sync_counts(port)
                counts.append({k: after[k] - before[k] for k in after})
            report.equal(counts[0], counts[1], "INFO sync_full/sync_partial_ok/sync_partial_err")
        # A redis-server asking to replicate is refused, not left with a stale copy.
        replica = harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="replica",
                                        extra_args=["--replicaof", "127.0.0.1", str(ours.port)])
        with replica:
            time.sleep(1.5)
            status = harness.info_fields(replica.port, "INFO", "replication")
            report.equal(status.get("master_link_status"), "down", "REPLICAOF ringkv is refused")
            report.check("can't be replicated" in replica.log(), "the replica logs why",
                         replica.log()[-1500:])
        # After snapshots streamed by forked children: a clean exit.
        harness.check_clean_exit(report, ours)


def test_cluster_snapshot(report, binary):
    with harness.Cluster(binary, 3) as cluster:
        c = redis.Redis(port=cluster.nodes[0].port)
        for i in range(300):
            c.set("k%d" % i, "v%d" % i)
        out = harness.tempfile.mkdtemp(prefix="ringkv-it-snap-")
        try:
            r = subprocess.run([os.path.join(ROOT, "scripts", "cluster_snapshot.sh"),
                                "127.0.0.1:%d" % cluster.nodes[0].port, out],
                               capture_output=True, text=True, timeout=120)
            report.equal(r.returncode, 0, "cluster_snapshot.sh succeeds")
            files = sorted(os.listdir(out))
            report.equal(len(files), 3, "one file per member: %s" % files)
            total = 0
            for f in files:
                with redis_on(os.path.join(out, f), "redis-" + f) as loaded:
                    total += redis.Redis(port=loaded.port).dbsize()
            report.equal(total, 300, "the members' files hold every key once")
            # A member started on another member's file loads keys it does not own, and says so.
            other = [f for f in files if not f.endswith("-%d.rdb" % cluster.nodes[0].port)][0]
            shutil.copy(os.path.join(out, other), os.path.join(cluster.nodes[0].dir, "dump.rdb"))
            cluster.kill(0)
            cluster.restart(0)
            report.check("belong to other members of the ring" in cluster.nodes[0].log(),
                         "a node warns about keys it does not own", cluster.nodes[0].log()[-1000:])
        finally:
            shutil.rmtree(out, ignore_errors=True)


def wait_rewrite(port):
    deadline = time.time() + 30 * harness.timeout_scale()
    while time.time() < deadline:
        info = harness.info_fields(port, "INFO", "persistence")
        if info["aof_rewrite_in_progress"] == "0" and info["aof_rewrites"] != "0":
            return info
        time.sleep(0.05)
    return {}


def test_preamble(report, binary, good):
    for preamble in ("yes", "no"):
        proc = ringkv_on(binary, good, "rdb-aof-" + preamble,
                         ["--appendonly", "yes", "--aof-use-rdb-preamble", preamble])
        with proc:
            r = redis.Redis(port=proc.port)
            # Started with appendonly on: the RDB file is not loaded, the (new) AOF is.
            report.equal(r.dbsize(), 0, "appendonly on: dump.rdb is not loaded")
            with harness.start_oracle("redis-pre") as src_proc:
                src = redis.Redis(port=src_proc.port)
                keys = generate(src, random.Random(7)) + add_streams(src)
                for k in keys:
                    r.restore(k, max(src.pttl(k), 0), src.dump(k))
                report.equal(r.bgrewriteaof(), True, "BGREWRITEAOF")
                report.check(bool(wait_rewrite(proc.port)), "the rewrite finished")
                r.set("after:rewrite", "1")
                r.delete("str:empty")
                src.set("after:rewrite", "1")
                src.delete("str:empty")
                path = os.path.join(proc.dir, "appendonly.aof")
                head = open(path, "rb").read(9)
                if preamble == "yes":
                    report.equal(head, b"REDIS0010", "the rewrite starts with an RDB preamble")
                else:
                    report.check(head.startswith(b"*"), "without a preamble: commands", repr(head))
                check = subprocess.run(["redis-check-aof", path], capture_output=True, text=True)
                report.check(check.returncode == 0, "redis-check-aof accepts it (preamble %s)" %
                             preamble, check.stdout[-1500:])
                os.kill(proc.pid, 9)
                proc.proc.wait()
                proc.start()
                # Commands rebuild a stream's nodes (and its consumers' seen times) anew; an RDB
                # keeps them as they were, so only with the preamble are payloads compared.
                compare(report, redis.Redis(port=proc.port), src, keys + ["after:rewrite"],
                        "restart from the rewritten file (preamble %s)" % preamble,
                        payloads=preamble == "yes")
                log = proc.log(tail=None)
                report.check(("keys from its RDB preamble" in log) and
                             (" 0 keys from its RDB preamble" not in log) == (preamble == "yes"),
                             "the log counts the preamble's keys", log[-800:])


_CHILD_FIELDS = ("current_cow_peak", "current_cow_size", "current_cow_size_age", "current_fork_perc",
                 "current_save_keys_processed", "current_save_keys_total")


def child_fields(port):
    info = harness.info_fields(port, "INFO", "persistence")
    return {name: float(info[name]) for name in _CHILD_FIELDS + (
        "rdb_last_cow_size", "aof_last_cow_size", "rdb_bgsave_in_progress",
        "aof_rewrite_in_progress")}


def watch_child(c, port, busy, keys, rng):
    """Overwrites keys while the child that `busy` names runs; returns every INFO sample."""
    samples = []
    deadline = time.time() + 60
    while time.time() < deadline:
        sample = child_fields(port)
        samples.append(sample)
        if not sample[busy]:
            break
        batch = [("SET", "cow:%d" % rng.randrange(keys), "w" * 100) for _ in range(2000)]
        c.send(b"".join(harness.encode_command(*cmd) for cmd in batch))
        for _ in batch:
            c.read()
    return samples


def test_fork_progress(report, binary):
    """What a BGSAVE and a BGREWRITEAOF child report while they run, beside redis-server given
    the same steps: the keys they wrote of the keys there were at the fork (current_save_keys_*,
    current_fork_perc) and the memory copied on write while the server kept writing
    (current_cow_*), all back to 0 once the child is done; then rdb_last_cow_size and
    aof_last_cow_size. The sizes are each server's own; what is compared is their shape."""
    keys = 400000
    seen = {}
    with harness.start_oracle() as theirs, \
            harness.ServerProcess(binary, name="fork-progress", extra_args=["--dir", "."]) as ours:
        for name, port in (("ringkv", ours.port), ("redis", theirs.port)):
            rng = random.Random(3)
            with harness.RespClient(port) as c:
                for start in range(0, keys, 10000):
                    batch = [("SET", "cow:%d" % i, rng.randbytes(100))
                             for i in range(start, start + 10000)]
                    c.send(b"".join(harness.encode_command(*cmd) for cmd in batch))
                    for _ in batch:
                        c.read()
                before = child_fields(port)
                steps = {}
                for command, busy, last in (("BGSAVE", "rdb_bgsave_in_progress", "rdb_last_cow_size"),
                                            ("BGREWRITEAOF", "aof_rewrite_in_progress",
                                             "aof_last_cow_size")):
                    c.call(command)
                    samples = watch_child(c, port, busy, keys, rng)
                    running = [s for s in samples if s[busy]]
                    after = samples[-1]
                    steps[command] = {
                        "seen running": bool(running),
                        "keys at the fork": {s["current_save_keys_total"] for s in running
                                             if s["current_save_keys_total"]},
                        "progress within 0-100%": all(
                            0 <= s["current_fork_perc"] <= 100 and s["current_save_keys_processed"]
                            <= s["current_save_keys_total"] for s in running),
                        "peak at least the size": all(s["current_cow_peak"] >= s["current_cow_size"]
                                                      for s in running),
                        "back to 0 after": all(after[f] == 0 for f in _CHILD_FIELDS),
                        # Measured at the end, after the writes made while it ran.
                        "last size": after[last] > 0,
                    }
            seen[name] = (all(before[f] == 0 for f in _CHILD_FIELDS), before["rdb_last_cow_size"],
                          steps)
    report.equal(seen["ringkv"], seen["redis"], "fork progress: what the children report "
                 "(%s)" % (seen["ringkv"],))
    report.equal(seen["ringkv"][2]["BGSAVE"]["keys at the fork"], {float(keys)},
                 "fork progress: a BGSAVE child counts the keys there were at the fork")


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int)
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_rdb")
    good = test_both_ways(report, args.server, rng)
    try:
        test_refused(report, args.server, good)
        test_sync(report, args.server, good)
        test_preamble(report, args.server, good)
    finally:
        shutil.rmtree(os.path.dirname(good), ignore_errors=True)
    test_commands(report, args.server)
    test_fork_progress(report, args.server)
    test_cluster_snapshot(report, args.server)
    report.finish()


if __name__ == "__main__":
    main()
