"""Functions (FUNCTION LOAD/DELETE/LIST/DUMP/RESTORE/FLUSH/STATS/KILL/HELP, FCALL, FCALL_RO),
differential against a real redis-server 7: the same commands run on both with raw-socket clients
and every reply must be byte-identical (libraries' metadata, redis.register_function's arguments
and errors, the load-time globals, FCALL's errors and replies, COMMAND INFO/DOCS of the rows);
FUNCTION LIST is compared with libraries and functions sorted by name (Redis lists them in its
hash tables' order).

Then: FUNCTION DUMP payloads move both ways between redis-server and ringkv; a busy function
(FUNCTION STATS names it, other clients get the FUNCTION KILL -BUSY, SCRIPT KILL is refused,
FUNCTION KILL frees the node); libraries back after restarts (append-only file, its rewrite
with and without an RDB preamble, the RDB file, an RDB file written by redis-server); and in a
3-node cluster FUNCTION LOAD/DELETE/FLUSH/RESTORE reach every node, FCALL runs on its keys' node
and a node that joins later gets the libraries; the same with replication-factor 2, where no
replication stream may refuse them and copy everything again.

    /usr/bin/python3 test_functions.py --server build/ringkv-server
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import main_support  # noqa: E402
import replication_support as repl  # noqa: E402
from harness import RespClient  # noqa: E402

LIB = ("#!lua name=lib1\n"
       "redis.register_function('set1', function(keys, args) "
       "return redis.call('set', keys[1], args[1]) end)\n"
       "redis.register_function{function_name='get1', callback=function(keys) "
       "return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}\n"
       "redis.register_function('echo1', function(keys, args) "
       "return {keys[1], args[1], #keys, #args} end)\n"
       "redis.register_function('boom', function() error('boom') end)\n"
       "redis.register_function('nocmd', function() return redis.call('nosuch') end)\n"
       "redis.register_function('pnocmd', function() return redis.pcall('nosuch') end)\n"
       "redis.register_function('glob', function() return KEYS end)\n"
       "redis.register_function('setg', function() bar = 1 end)\n"
       "redis.register_function('reg', function() "
       "return redis.register_function('z', function() end) end)\n"
       "redis.register_function('badarg', function(k) return redis.call('get', k[1]) end)\n"
       "redis.register_function('str', function() return string.format('%d', 5) end)\n"
       "redis.register_function('resp3', function() redis.setresp(3) "
       "return redis.call('hgetall', 'h') end)\n"
       "redis.register_function{function_name='ro_write', callback=function() "
       "return redis.call('set', 'x', '1') end, flags={'no-writes'}}\n")

BAD_LOADS = [
    LIB, "return 1", "#!lua\nreturn 1", "#!lua name=x\nreturn 1", "#!foo name=x\nreturn 1",
    "#!lua name=x foo=bar\nreturn 1", "#!lua name=x name=y\nreturn 1", "#!lua name=x-y\nreturn 1",
    "#!lua name=\nreturn 1", "#!lua name=x",
    "#!lua name=x\nredis.register_function('f', function(k,a) return 1 end",
    "#!lua name=x\nredis.register_function('f')",
    "#!lua name=x\nredis.register_function('f-1', function() end)",
    "#!lua name=x\nredis.register_function('f', function() end, 1)",
    "#!lua name=x\nredis.register_function()",
    "#!lua name=x\nredis.register_function('a', 1)",
    "#!lua name=x\nredis.register_function(1)",
    "#!lua name=x\nredis.register_function({})",
    "#!lua name=x\nredis.register_function({function_name='a'})",
    "#!lua name=x\nredis.register_function({callback=function() end})",
    "#!lua name=x\nredis.register_function({function_name='a', callback=function() end, foo=1})",
    "#!lua name=x\nredis.register_function({function_name='a', callback=function() end, "
    "flags='x'})",
    "#!lua name=x\nredis.register_function({function_name='a', callback=function() end, "
    "flags={'no-writes', 'bogus'}})",
    "#!lua name=x\nredis.register_function({function_name='a', callback=1})",
    "#!lua name=x\nredis.register_function({function_name={}, callback=function() end})",
    "#!lua name=x\nredis.register_function({function_name='a', callback=function() end, "
    "description={}})",
    "#!lua name=x\nredis.register_function('f', function() end)\n"
    "redis.register_function('f', function() end)",
    "#!lua name=x\nredis.call('set','a','b')", "#!lua name=x\nlocal a = foo",
    "#!lua name=x\nfoo = 1", "#!lua name=x\nlocal s = string.format('%d', 1)",
    "#!lua name=x\nerror('at load')", "#!lua name=x\nerror({err='MY load'})",
    "#!lua name=x\nwhile true do end",
    "#!lua name=x\nredis.register_function('get1', function() end)",
    "#!lua name=x\nredis.register_function('GET1', function() end)",
]

GOOD_LOADS = [
    "#!lua name=lib2\nredis.register_function(1, function() return 'one' end)\n"
    "redis.log(redis.LOG_WARNING, 'loading lib2')\n"
    "redis.register_function{function_name='v', callback=function() "
    "return redis.REDIS_VERSION_NUM end, description=7, flags={'NO-WRITES', 'allow-oom', "
    "'no-cluster', 'allow-stale', 'allow-cross-slot-keys'}}",
    "#!LUA NAME=lib3\nredis.register_function('q', function() return 1 end)\n"
    "redis.register_function('q2', function() return 2 end)",
]

CALLS = [
    ["FCALL", "set1", "1", "k", "v"], ["FCALL", "SET1", "1", "k", "v2"],
    ["FCALL", "get1", "1", "k"], ["FCALL_RO", "get1", "1", "k"],
    ["FCALL_RO", "set1", "1", "k", "v"], ["FCALL", "ro_write", "0"],
    ["FCALL", "echo1", "1", "kk", "aa", "bb"], ["FCALL", "echo1", "0"],
    ["FCALL", "boom", "0"], ["FCALL", "nocmd", "0"], ["FCALL", "pnocmd", "0"],
    ["FCALL", "glob", "0"], ["FCALL", "setg", "0"], ["FCALL", "reg", "0"],
    ["FCALL", "badarg", "0"], ["FCALL", "str", "0"], ["HSET", "h", "a", "1"],
    ["FCALL", "resp3", "0"], ["FCALL", "nope", "0"], ["FCALL", "set1", "x"],
    ["FCALL", "set1", "5", "a"], ["FCALL", "set1", "-1"], ["FCALL"], ["FCALL", "set1"],
    ["FCALL", "1", "0"], ["FCALL", "v", "0"], ["FCALL_RO", "v", "0"], ["FCALL", "q", "0"],
    ["MULTI"], ["FCALL", "set1", "1", "m", "1"], ["FCALL", "get1", "1", "m"], ["EXEC"],
    ["FUNCTION", "LOAD", "REPLACE", LIB], ["FUNCTION", "LOAD", LIB],
    ["FUNCTION", "LOAD", "REPLACE", "REPLACE", LIB], ["FUNCTION", "LOAD", "FOO", LIB],
    ["FUNCTION", "LOAD"], ["FUNCTION", "LOAD", "REPLACE"],
    ["FUNCTION", "LOAD", "REPLACE", "#!lua name=lib1\nreturn 1"], ["FCALL", "get1", "1", "k"],
    ["FUNCTION", "LOAD", "REPLACE", "#!lua name=lib1\nredis.register_function('q', "
     "function() end)"], ["FCALL", "get1", "1", "k"],
    ["FUNCTION", "STATS"], ["FUNCTION", "KILL"], ["FUNCTION", "HELP"], ["FUNCTION", "FOO"],
    ["FUNCTION"], ["FUNCTION", "DUMP", "x"], ["FUNCTION", "DELETE"],
    ["FUNCTION", "DELETE", "nope"], ["FUNCTION", "LIST", "LIBRARYNAME"],
    ["FUNCTION", "LIST", "foo"], ["FUNCTION", "LIST", "WITHCODE", "WITHCODE"],
    ["FUNCTION", "FLUSH", "x"], ["FUNCTION", "FLUSH", "SYNC", "SYNC"],
    ["FUNCTION", "RESTORE", "abc"], ["FUNCTION", "RESTORE", "abc", "BAD"],
    ["FUNCTION", "RESTORE", "abc", "APPEND", "x"],
    ["COMMAND", "INFO", "fcall", "fcall_ro"],
    ["COMMAND", "INFO", "function|load", "function|delete", "function|list", "function|dump",
     "function|restore", "function|flush", "function|stats", "function|kill", "function|help"],
    ["COMMAND", "DOCS", "fcall", "fcall_ro"],
    ["COMMAND", "DOCS", "function|load", "function|delete", "function|list", "function|dump",
     "function|restore", "function|flush", "function|stats", "function|kill", "function|help"],
    ["COMMAND", "GETKEYS", "FCALL", "f", "2", "k1", "k2", "a"],
]


def normalized_list(reply):
    """FUNCTION LIST's parsed reply with libraries and functions in name order."""
    def as_dict(m):  # a RESP2 flat array or a RESP3 map
        return dict(m) if isinstance(m, dict) else dict(zip(m[::2], m[1::2]))

    libs = []
    for lib in harness.parse_reply(reply):
        fields = as_dict(lib)
        fields[b"functions"] = sorted([as_dict(f) for f in fields[b"functions"]],
                                      key=lambda f: f[b"name"])
        libs.append(fields)
    return sorted(libs, key=lambda lib: lib[b"library_name"])


def function_counts(c):
    """INFO memory's number_of_functions and number_of_libraries lines."""
    text = harness.parse_reply(c.call("INFO", "memory")).decode()
    return [line for line in text.split("\r\n") if line.startswith("number_of_")]


def observe(port):
    """Every observation of the differential part, as (note, reply)."""
    out = []
    c = RespClient(port)
    c.call("FLUSHALL")
    c.call("FUNCTION", "FLUSH")
    for code in BAD_LOADS + GOOD_LOADS:
        out.append(("FUNCTION LOAD %r" % code[:60], c.call("FUNCTION", "LOAD", code)))
    for cmd in CALLS:
        out.append((" ".join(cmd)[:80], c.call(*cmd)))
    # FUNCTION's own row: Redis lists its subcommands in its hash table's order, which changes
    # from run to run.
    info = harness.parse_reply(c.call("COMMAND", "INFO", "function"))[0]
    out.append(("COMMAND INFO function", info[:9] + [sorted(info[9])]))
    docs = harness.parse_reply(c.call("COMMAND", "DOCS", "function"))
    fields = dict(zip(docs[1][::2], docs[1][1::2]))
    fields[b"subcommands"] = sorted(zip(fields[b"subcommands"][::2],
                                        fields[b"subcommands"][1::2]))
    out.append(("COMMAND DOCS function", fields))
    for args in ([], ["WITHCODE"], ["LIBRARYNAME", "lib*"], ["libraryname", "LIB3", "withcode"],
                 ["LIBRARYNAME", "none*"]):
        out.append(("FUNCTION LIST %s" % args, normalized_list(c.call("FUNCTION", "LIST", *args))))
    out.append(("INFO functions and libraries", function_counts(c)))
    out.append(("FUNCTION DELETE lib3", c.call("FUNCTION", "DELETE", "lib3")))
    out.append(("INFO after DELETE", function_counts(c)))
    out.append(("FCALL q after DELETE", c.call("FCALL", "q", "0")))
    out.append(("FUNCTION STATS", c.call("FUNCTION", "STATS")))
    dump = harness.parse_reply(c.call("FUNCTION", "DUMP"))
    # One library of the payload already there (Redis's error names the first one of its hash
    # table's order).
    out.append(("FUNCTION DELETE lib2", c.call("FUNCTION", "DELETE", "lib2")))
    for cmd in (["FUNCTION", "RESTORE", dump], ["FUNCTION", "RESTORE", dump, "APPEND"],
                ["FUNCTION", "RESTORE", dump, "REPLACE"], ["FUNCTION", "FLUSH", "ASYNC"],
                ["FUNCTION", "STATS"], ["FCALL", "get1", "1", "k"],
                ["FUNCTION", "RESTORE", dump[:-1] + b"x"], ["FUNCTION", "RESTORE", dump],
                ["FCALL", "get1", "1", "k"], ["FUNCTION", "FLUSH"],
                ["FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('get1', "
                 "function() return 'other' end)"],
                ["FUNCTION", "RESTORE", dump, "REPLACE"], ["FUNCTION", "RESTORE", dump, "FLUSH"],
                ["FCALL", "get1", "1", "k"]):
        out.append(("%s %s" % (cmd[0], cmd[1]), c.call(*cmd)))
    c.call("HELLO", "3")
    for cmd in (["FUNCTION", "STATS"], ["FCALL", "resp3", "0"], ["FCALL", "echo1", "1", "a"]):
        out.append(("RESP3 %s" % " ".join(cmd), c.call(*cmd)))
    out.append(("RESP3 FUNCTION LIST", normalized_list(c.call("FUNCTION", "LIST"))))
    c.close()
    return out


def dump_exchange(report, port, oracle_port):
    """FUNCTION DUMP of one server RESTOREs into the other, both ways."""
    for src, dst, label in ((oracle_port, port, "redis -> ringkv"),
                            (port, oracle_port, "ringkv -> redis")):
        with RespClient(src) as a, RespClient(dst) as b:
            a.call("FUNCTION", "FLUSH")
            b.call("FUNCTION", "FLUSH")
            for code in [LIB] + GOOD_LOADS:
                a.call("FUNCTION", "LOAD", code)
            payload = harness.parse_reply(a.call("FUNCTION", "DUMP"))
            report.equal(b.call("FUNCTION", "RESTORE", payload), b"+OK\r\n",
                         "%s: RESTORE of the other's DUMP" % label)
            report.equal(normalized_list(b.call("FUNCTION", "LIST", "WITHCODE")),
                         normalized_list(a.call("FUNCTION", "LIST", "WITHCODE")),
                         "%s: same libraries" % label)
            report.equal(b.call("FCALL", "echo1", "1", "x", "y"),
                         a.call("FCALL", "echo1", "1", "x", "y"), "%s: FCALL" % label)


def busy_test(report, port, oracle_port):
    loop = "#!lua name=busy\nredis.register_function('spin', function() while true do end end)"
    for label, p in (("ringkv", port), ("redis", oracle_port)):
        with RespClient(p) as c:
            c.call("CONFIG", "SET", "busy-reply-threshold", "200")
            c.call("FUNCTION", "LOAD", "REPLACE", loop)
        script = RespClient(p, timeout=20)
        script.send(harness.encode_command("FCALL", "spin", "0"))
        time.sleep(0.6)
        with RespClient(p, timeout=5) as other:
            report.equal(other.call("GET", "x"),
                         b"-BUSY Redis is busy running a script. You can only call FUNCTION "
                         b"KILL or SHUTDOWN NOSAVE.\r\n", "%s: another client gets -BUSY" % label)
            stats = harness.parse_reply(other.call("FUNCTION", "STATS"))
            running = stats[1]
            report.check(running is not None and running[1] == b"spin" and
                         running[3] == [b"FCALL", b"spin", b"0"] and running[5] >= 200,
                         "%s: FUNCTION STATS names the running function" % label, repr(stats))
            report.equal(other.call("SCRIPT", "KILL"),
                         b"-BUSY Redis is busy running a script. You can only call FUNCTION "
                         b"KILL or SHUTDOWN NOSAVE.\r\n", "%s: SCRIPT KILL refused" % label)
            report.equal(other.call("FUNCTION", "KILL"), b"+OK\r\n", "%s: FUNCTION KILL" % label)
            killed = script.read()
            report.check(killed.startswith(b"-ERR Script killed by user with SCRIPT KILL..."),
                         "%s: the function's client gets the kill error" % label, repr(killed))
            report.equal(other.call("PING"), b"+PONG\r\n", "%s: node free again" % label)
            script.send(harness.encode_command("EVAL", "while true do end", "0"))
            time.sleep(0.6)
            report.equal(other.call("FUNCTION", "KILL"),
                         b"-BUSY Redis is busy running a script. You can only call SCRIPT "
                         b"KILL or SHUTDOWN NOSAVE.\r\n", "%s: FUNCTION KILL of an EVAL" % label)
            report.equal(other.call("SCRIPT", "KILL"), b"+OK\r\n", "%s: SCRIPT KILL" % label)
            script.read()
            other.call("FUNCTION", "DELETE", "busy")
        script.close()


def load_libraries(c):
    """Loads, replaces and deletes libraries through `c`; returns FUNCTION LIST WITHCODE."""
    c.call("FUNCTION", "LOAD", LIB)
    c.call("FUNCTION", "LOAD", GOOD_LOADS[0])
    c.call("FUNCTION", "LOAD", GOOD_LOADS[1])
    c.call("FUNCTION", "DELETE", "lib3")
    c.call("FCALL", "set1", "1", "k", "from-fcall")
    c.call("FUNCTION", "LOAD", "REPLACE", "#!lua name=lib2\n"
           "redis.register_function('w', function() return 'replaced' end)")
    return normalized_list(c.call("FUNCTION", "LIST", "WITHCODE"))


def persistence_test(report, binary):
    """Libraries survive restarts: replayed from the append-only file, kept by its rewrite (RDB
    preamble or commands), saved in and loaded from the RDB file, and read from an RDB file
    redis-server wrote."""
    for label, args in (("AOF", ["--appendonly", "yes"]),
                        ("AOF rewritten with a preamble", ["--appendonly", "yes"]),
                        ("AOF rewritten as commands",
                         ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]),
                        ("RDB", ["--appendonly", "no"])):
        server = harness.ServerProcess(binary, name="persist")
        server.extra_args += args + ["--appendfsync", "always", "--dir", server.dir]
        with server:
            with RespClient(server.port) as c:
                want = load_libraries(c)
                if "rewritten" in label:
                    c.call("BGREWRITEAOF")
                    for _ in range(100):
                        if b"aof_rewrite_in_progress:0" in c.call("INFO", "persistence") and \
                                b"aof_rewrite_scheduled:0" in c.call("INFO", "persistence"):
                            break
                        time.sleep(0.1)
                    with open(os.path.join(server.dir, "appendonly.aof"), "rb") as f:
                        text = f.read()
                    report.check(b"DELETE" not in text and
                                 text.startswith(b"REDIS") == ("--aof-use-rdb-preamble" not in args),
                                 "%s: the file was rewritten" % label, repr(text[:200]))
                if label == "RDB":
                    report.equal(c.call("SAVE"), b"+OK\r\n", "RDB: SAVE")
            server.stop()
            server.start()
            with RespClient(server.port) as c:
                report.equal(normalized_list(c.call("FUNCTION", "LIST", "WITHCODE")), want,
                             "%s: libraries back after a restart" % label)
                report.equal(c.call("GET", "k"), b"$10\r\nfrom-fcall\r\n",
                             "%s: FCALL's write back" % label)
                report.equal(c.call("FCALL", "w", "0"), b"$8\r\nreplaced\r\n",
                             "%s: the replaced library" % label)
    with harness.start_oracle() as oracle:
        with RespClient(oracle.port) as c:
            want = load_libraries(c)
            c.call("SAVE")
        server = harness.ServerProcess(binary, name="from-redis")
        server.extra_args += ["--dir", oracle.dir]
        with server:
            with RespClient(server.port) as c:
                report.equal(normalized_list(c.call("FUNCTION", "LIST", "WITHCODE")), want,
                             "redis-server's RDB file: libraries loaded")
                report.equal(c.call("FCALL", "echo1", "1", "a", "b"),
                             b"*4\r\n$1\r\na\r\n$1\r\nb\r\n:1\r\n:1\r\n",
                             "redis-server's RDB file: FCALL")


def full_syncs(ports):
    """Each replication stream's full resyncs, from INFO replication on its primary."""
    counts = {}
    for p in ports:
        for k, v in harness.info_fields(p, "INFO", "replication").items():
            if k.startswith("slave"):
                counts[(p, v.split(",port=")[1].split(",")[0])] = v.split("full_syncs=")[1].split(",")[0]
    return counts


def cluster_test(report, binary, rf=1):
    """FUNCTION LOAD, DELETE, RESTORE and FLUSH fan out to every node, and a joining node gets
    the libraries. With replication-factor 2 each node runs them once: they do not also travel on
    the replication streams (a replica ran a primary's LOAD twice: the second refused, the
    client got 'already exists' and every stream copied everything again)."""
    options = {"replication-factor": rf} if rf > 1 else None
    with harness.Cluster(binary, 3, cluster_options=options) as cluster:
        if rf > 1:
            repl.settle(cluster.ports)
        syncs = full_syncs(cluster.ports)
        keys = harness.keys_on_each_node(cluster)
        report.check(len(keys) == 3, "keys on three nodes", repr(keys))
        with RespClient(cluster.ports[0]) as c:
            report.equal(c.call("FUNCTION", "LOAD", LIB), b"$4\r\nlib1\r\n",
                         "FUNCTION LOAD through node 1")
            got = c.call("FCALL", "echo1", "2", keys[0], keys[1])
            report.check(got.startswith(b"-CROSSSLOT"), "FCALL with keys on two nodes", repr(got))
        for i, p in enumerate(cluster.ports):
            with RespClient(p) as c:
                for key in keys:
                    report.equal(c.call("FCALL", "set1", "1", key, "v%d" % i), b"+OK\r\n",
                                 "FCALL set1 %s through node %d" % (key, i + 1))
                    report.equal(c.call("FCALL_RO", "get1", "1", key),
                                 b"$2\r\nv%d\r\n" % i, "FCALL_RO get1 through node %d" % (i + 1))
                report.equal(c.call("FUNCTION", "STATS").count(b"functions_count"), 1,
                             "FUNCTION STATS on node %d" % (i + 1))
        with RespClient(cluster.ports[1]) as c:
            dump = harness.parse_reply(c.call("FUNCTION", "DUMP"))
            report.equal(c.call("FUNCTION", "DELETE", "lib1"), b"+OK\r\n", "DELETE fans out")
        for i, p in enumerate(cluster.ports):
            with RespClient(p) as c:
                report.equal(c.call("FCALL", "get1", "1", keys[0]),
                             b"-ERR Function not found\r\n", "deleted on node %d" % (i + 1))
        with RespClient(cluster.ports[2]) as c:
            report.equal(c.call("FUNCTION", "RESTORE", dump), b"+OK\r\n", "RESTORE fans out")
        for i, p in enumerate(cluster.ports):
            with RespClient(p) as c:
                report.equal(c.call("FCALL", "get1", "1", keys[i]), b"$2\r\nv2\r\n",
                             "restored on node %d" % (i + 1))
        # A node joining later is given the libraries.
        port = harness.free_ports(1)[0]
        joiner = harness.ClusterNode(
            binary, port, harness.cluster_config(port, [port], cluster_options=options), "joiner")
        ports = cluster.ports + [port]
        with joiner.start():
            with RespClient(cluster.ports[0], timeout=60) as c:
                report.equal(c.call("CLUSTER", "JOIN", joiner.address), b"+OK\r\n",
                             "CLUSTER JOIN of a fourth node")
            with RespClient(port) as c:
                report.equal(normalized_list(c.call("FUNCTION", "LIST", "WITHCODE")),
                             normalized_list(RespClient(cluster.ports[0]).call(
                                 "FUNCTION", "LIST", "WITHCODE")), "the joined node's libraries")
                for key in keys:
                    report.equal(c.call("FCALL", "echo1", "1", key, "a"),
                                 b"*4\r\n$%d\r\n%s\r\n$1\r\na\r\n:1\r\n:1\r\n"
                                 % (len(key), key.encode()), "FCALL %s through the joined node" % key)
            with RespClient(cluster.ports[0]) as c:
                report.equal(c.call("FUNCTION", "FLUSH"), b"+OK\r\n", "FLUSH fans out")
            for i, p in enumerate(ports):
                with RespClient(p) as c:
                    report.equal(c.call("FUNCTION", "LIST"), b"*0\r\n",
                                 "flushed on node %d" % (i + 1))
            report.check(joiner.alive(), "joined node alive", joiner.log())
            if rf > 1:
                repl.settle(ports)
                report.equal({k: v for k, v in full_syncs(cluster.ports).items() if k in syncs},
                             syncs, "no replication stream copied in full again (rf %d)" % rf)
        report.check(all(n.alive() for n in cluster.nodes), "cluster alive", cluster.logs())


def replicated_cluster_test(report, binary):
    cluster_test(report, binary, rf=2)


def against_redis(report, binary):
    with main_support.beside_oracle(report, binary, observe) as (ours, oracle):
        dump_exchange(report, ours.port, oracle.port)
        busy_test(report, ours.port, oracle.port)


def main():
    main_support.run_checks("test_functions", __doc__, against_redis, persistence_test,
                            cluster_test, replicated_cluster_test)


if __name__ == "__main__":
    main()
