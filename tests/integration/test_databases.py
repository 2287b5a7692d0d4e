"""Numbered databases on one node, differential against a real redis-server 7 (16 databases on
both): the same scenarios run on both with raw-socket clients and every observation must be
byte-identical. Covers SELECT, MOVE, SWAPDB, COPY ... DB, FLUSHDB and FLUSHALL across databases,
INFO keyspace per database, CLIENT LIST's db=, RESET (back to database 0) and HELLO (keeps it),
WATCH per database (and SWAPDB and FLUSHDB invalidating watchers), blocked clients per database
(served by a push in their database only, and by SWAPDB), pub/sub across databases (channels are
global), a script's SELECT (lasting until the script ends) and MULTI with SELECT inside.

Then persistence, on ringkv alone: keys of several databases (with TTLs, moved and swapped)
survive a restart from the append-only file, from it again after BGREWRITEAOF (commands and RDB
preamble), and from an RDB file; redis-cli -n reaches a database.

    /usr/bin/python3 test_databases.py --server build/ringkv-server
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import main_support  # noqa: E402
from harness import RespClient  # noqa: E402


def client_db(line):
    """The db= field of a CLIENT INFO line."""
    for field in line.split():
        if field.startswith(b"db="):
            return field
    return b"db=?"


def scenarios(port):
    """Runs the scenarios; returns (name, reply bytes) observations."""
    out = []
    a, b = RespClient(port), RespClient(port)

    def obs(name, client, *args):
        out.append((name, client.call(*args)))

    a.call("FLUSHALL")
    obs("select 3", a, "SELECT", "3")
    obs("set in 3", a, "SET", "k", "three")
    obs("rpush in 3", a, "RPUSH", "l", "a", "b")
    obs("ttl key in 3", a, "SET", "t", "v", "EX", "1000")
    obs("get k from 0", b, "GET", "k")
    obs("dbsize 0", b, "DBSIZE")
    obs("dbsize 3", a, "DBSIZE")
    obs("keys 3", a, "KEYS", "k*")
    obs("client info db", a, "CLIENT", "INFO")
    out[-1] = (out[-1][0], client_db(out[-1][1]))
    obs("move k to 5", a, "MOVE", "k", "5")
    obs("move k again", a, "MOVE", "k", "5")
    obs("move missing", a, "MOVE", "nokey", "5")
    obs("move same db", a, "MOVE", "l", "3")
    obs("move bad index", a, "MOVE", "l", "16")
    obs("move not int", a, "MOVE", "l", "x")
    obs("move past int", a, "MOVE", "l", "99999999999")
    b.call("SELECT", "5")
    obs("moved k in 5", b, "GET", "k")
    obs("moved t keeps ttl", a, "MOVE", "t", "5")
    obs("ttl after move", b, "TTL", "t")
    b.call("SET", "l", "string in 5")
    obs("move onto existing", a, "MOVE", "l", "5")
    obs("copy to db 7", a, "COPY", "l", "l", "DB", "7")
    obs("copy again", a, "COPY", "l", "l", "DB", "7")
    obs("copy replace to 5", a, "COPY", "l", "l", "DB", "5", "REPLACE")
    obs("type in 5", b, "TYPE", "l")
    obs("info keyspace", a, "INFO", "keyspace")
    # avg_ttl depends on the moment: left out, with the reply's length that counts its digits.
    out[-1] = (out[-1][0], re.sub(rb"^\$\d+", b"$", b"\n".join(
        x.split(b",avg_ttl")[0] for x in out[-1][1].split(b"\n"))))
    obs("swapdb 3 5", a, "SWAPDB", "3", "5")
    obs("after swap, 3 holds 5's", a, "GET", "k")
    obs("after swap, 5 holds 3's", b, "LRANGE", "l", "0", "-1")
    obs("swapdb same", a, "SWAPDB", "4", "4")
    obs("swapdb bad", a, "SWAPDB", "0", "16")
    obs("swapdb not int", a, "SWAPDB", "x", "y")
    obs("swapdb second not int", a, "SWAPDB", "0", "y")
    obs("flushdb 3", a, "FLUSHDB")
    obs("5 kept", b, "DBSIZE")
    obs("select out of range", a, "SELECT", "16")
    obs("select negative", a, "SELECT", "-1")
    obs("select past int", a, "SELECT", "99999999999")
    obs("still in 3", a, "CLIENT", "INFO")
    out[-1] = (out[-1][0], client_db(out[-1][1]))
    obs("hello keeps db", a, "HELLO", "2")
    out[-1] = (out[-1][0], b"")
    obs("db after hello", a, "CLIENT", "INFO")
    out[-1] = (out[-1][0], client_db(out[-1][1]))
    obs("reset", a, "RESET")
    obs("db after reset", a, "CLIENT", "INFO")
    out[-1] = (out[-1][0], client_db(out[-1][1]))

    # WATCH is per database: a write of the same name elsewhere does not touch it.
    a.call("SELECT", "2")
    b.call("SELECT", "0")
    a.call("WATCH", "w")
    b.call("SET", "w", "db0")
    a.call("MULTI")
    a.call("SET", "w", "mine")
    obs("exec: write in another db", a, "EXEC")
    a.call("WATCH", "w")
    b.call("SELECT", "2")
    b.call("SET", "w", "db2")
    a.call("MULTI")
    a.call("GET", "w")
    obs("exec: write in the same db", a, "EXEC")
    for setup, change, name in (("SET w v", "SWAPDB 2 9", "swapdb"),
                                ("SET w v", "FLUSHDB", "flushdb"),
                                ("", "SWAPDB 2 9", "swapdb of missing keys"),
                                ("SET w v", "MOVE w 9", "move")):
        b.call("SELECT", "2")
        if setup:
            b.call(*setup.split())
        a.call("WATCH", "w")
        b.call(*change.split())
        a.call("MULTI")
        a.call("PING")
        obs("exec after %s" % name, a, "EXEC")
        b.call("FLUSHALL")

    # SELECT inside MULTI moves the commands after it.
    a.call("SELECT", "0")
    a.call("MULTI")
    a.call("SET", "m", "0")
    a.call("SELECT", "4")
    a.call("SET", "m", "4")
    obs("exec with select", a, "EXEC")
    obs("db after exec", a, "GET", "m")
    a.call("SELECT", "0")
    obs("db 0 part", a, "GET", "m")

    # A script's SELECT lasts until it ends.
    obs("script select", a, "EVAL",
        "redis.call('select', 6) redis.call('set', KEYS[1], 'lua') return redis.call('dbsize')",
        "1", "s")
    obs("caller still in 0", a, "EXISTS", "s")
    a.call("SELECT", "6")
    obs("script key in 6", a, "GET", "s")
    obs("script bad select", a, "EVAL", "return redis.pcall('select', 99)", "0")

    # Pub/sub: channels are global.
    sub = RespClient(port)
    sub.call("SELECT", "8")
    obs("subscribe in 8", sub, "SUBSCRIBE", "ch")
    obs("publish from 6", a, "PUBLISH", "ch", "hello")
    out.append(("message", sub.read()))
    sub.close()

    # Blocked clients wait on their database's key.
    a.call("FLUSHALL")
    a.call("SELECT", "1")
    a.send(harness.encode_command("BLPOP", "q", "5"))
    time.sleep(0.2)
    b.call("SELECT", "0")
    obs("push in another db", b, "RPUSH", "q", "db0")
    out.append(("still blocked", a.read_available(0.3)))
    b.call("SELECT", "1")
    obs("push in its db", b, "RPUSH", "q", "db1")
    out.append(("served", a.read()))
    a.send(harness.encode_command("BLPOP", "q2", "5"))
    time.sleep(0.2)
    b.call("SELECT", "2")
    b.call("RPUSH", "q2", "from2")
    obs("swapdb wakes", b, "SWAPDB", "1", "2")
    out.append(("served by swapdb", a.read()))
    obs("moved list wakes", b, "RPUSH", "q3", "x")
    a.send(harness.encode_command("BLPOP", "q3", "5"))
    time.sleep(0.2)
    obs("move to its db", b, "MOVE", "q3", "1")
    out.append(("served by move", a.read()))
    # MONITOR shows each command's database (the new one for SELECT), scripts' too.
    mon = RespClient(port)
    mon.call("MONITOR")
    a.call("SELECT", "4")
    a.call("SET", "mk", "v")
    a.call("EVAL", "redis.call('select', 5) return redis.call('get', 'mk')", "0")
    a.call("SELECT", "0")
    lines = b""
    for _ in range(50):
        lines += mon.read_available(0.1)[0]
        if lines.count(b"\r\n") >= 6:
            break
    shown = [line.split(b" ", 1)[1] for line in lines.split(b"\r\n") if line]
    out.append(("monitor", b"\n".join(x.split(b"]", 1)[0].split(b" ")[0] + x.split(b"]", 1)[1]
                                       for x in shown)))
    mon.close()
    obs("flushall", a, "FLUSHALL")
    obs("info keyspace empty", a, "INFO", "keyspace")
    a.close()
    b.close()
    return out


def dump_dbs(port):
    """Every database's keys with their type, value and TTL (seconds), for restart checks."""
    out = {}
    with RespClient(port) as c:
        for db in range(16):
            c.call("SELECT", str(db))
            for key in sorted(harness.parse_reply(c.call("KEYS", "*"))):
                ttl = int(harness.parse_reply(c.call("TTL", key)))
                # The TTLs set are 5000 s: whole minutes pass in no test.
                out[(db, key)] = (c.call("TYPE", key), c.call("DUMP", key),
                                  ttl if ttl < 0 else 4900 < ttl <= 5000)
    return out


def fill(port):
    with RespClient(port) as c:
        for db in (0, 1, 7, 15):
            c.call("SELECT", str(db))
            c.call("SET", "s", "db%d" % db)
            c.call("RPUSH", "l%d" % db, "a", "b")
            c.call("HSET", "h", "f", str(db))
            c.call("SET", "ttl", "x", "EX", "5000")
        c.call("SELECT", "1")
        c.call("MOVE", "s", "3")
        c.call("SWAPDB", "7", "9")
        c.call("COPY", "h", "h2", "DB", "4")
        c.call("EVAL", "redis.call('select', 12) return redis.call('set', 'lua', 'v')", "0")
        c.call("SET", "gone", "x", "PX", "50")
        c.call("MULTI")
        c.call("SELECT", "13")
        c.call("INCR", "n")
        c.call("EXEC")
    time.sleep(0.2)


def persistence_test(report, binary):
    aof = harness.ServerProcess(binary, name="db-aof", extra_args=["--appendonly", "yes"])
    with aof:
        fill(aof.port)
        want = dump_dbs(aof.port)
        report.check(len(want) >= 16 and (13, b"n") in want and (12, b"lua") in want,
                     "keys written in several databases", repr(sorted(want)[:20]))
        for how in ("restart", "rewrite (RDB preamble)", "rewrite (commands)"):
            if how.startswith("rewrite"):
                preamble = "yes" if "RDB" in how else "no"
                with RespClient(aof.port) as c:
                    c.call("CONFIG", "SET", "aof-use-rdb-preamble", preamble)
                    c.call("BGREWRITEAOF")
                    for _ in range(100):
                        info = c.call("INFO", "persistence")
                        if b"aof_rewrite_in_progress:0" in info and \
                                b"aof_rewrite_scheduled:0" in info:
                            break
                        time.sleep(0.1)
                    # Written after the rewrite began: in its tail, after a SELECT.
                    c.call("SELECT", "14")
                    c.call("SET", "late", "1")
                want[(14, b"late")] = (b"+string\r\n", None, -1)
            aof.stop()
            aof.start()
            got = dump_dbs(aof.port)
            if (14, b"late") in got:
                t, _, ttl = got[(14, b"late")]
                got[(14, b"late")] = (t, None, ttl)
            report.equal(got, want, "append-only file: every database after %s" % how)
    rdb = harness.ServerProcess(binary, name="db-rdb")
    with rdb:
        fill(rdb.port)
        want = dump_dbs(rdb.port)
        with RespClient(rdb.port) as c:
            report.equal(c.call("SAVE"), b"+OK\r\n", "SAVE")
        rdb.stop()
        rdb.start()
        report.equal(dump_dbs(rdb.port), want, "RDB file: every database after a restart")
        cli = subprocess.run([harness.REDIS_CLI, "-p", str(rdb.port), "-n", "13", "GET", "n"],
                             capture_output=True, timeout=10)
        report.equal(cli.stdout, b"1\n", "redis-cli -n 13 reaches database 13")
        harness.check_clean_exit(report, rdb)


def main():
    main_support.run_checks("test_databases", __doc__, main_support.oracle_check(scenarios),
                            persistence_test)


if __name__ == "__main__":
    main()
