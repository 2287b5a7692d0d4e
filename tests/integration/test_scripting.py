"""Lua scripting (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT ...), differential against a real
redis-server 7: many scripts run on both with raw-socket clients and every reply must be
byte-identical (conversions both ways, RESP3 through redis.setresp and HELLO 3, errors raised by
redis.call vs returned by redis.pcall, wrong arguments, NOSCRIPT, SCRIPT EXISTS/FLUSH/LOAD,
shebang flags, the globals protection, cjson and bit, COMMAND INFO/DOCS of the rows).

Then: redis-py's Lock (acquire/extend/release) and register_script on one node and through every
node of a 3-node cluster (CROSSSLOT for keys on several nodes, SCRIPT LOAD reaching every node); a
busy script (`while true do end`: another client gets -BUSY, SCRIPT KILL frees the node, a script
that wrote is UNKILLABLE and SHUTDOWN NOSAVE ends it); and a script's effects replayed from the
append-only file after a restart.

    /usr/bin/python3 test_scripting.py --server build/ringkv-server
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redis  # noqa: E402

import harness  # noqa: E402
import main_support  # noqa: E402
from harness import RespClient  # noqa: E402

# (numkeys and args after the script), scripts; each runs as EVAL script numkeys args...
SCRIPTS = [
    "return 1", "return 'a'", "return 3.99", "return -3.99", "return true", "return false",
    "return nil", "return {}", "return {1,2.9,'a',true,false,{ok='fine'},{err='bad'}}",
    "return {1,nil,3}", "local t={} t[1]=1 t[3]=3 return t", "local t = {} t.x = 1 return t",
    "return {err='x'}", "return {err='-x'}", "return {ok='a\\r\\nb'}", "return {err='a\\nb'}",
    "return redis.status_reply('YES')", "return redis.error_reply('FOO bar')",
    "return redis.error_reply('nospace')", "return redis.error_reply('-FOO bar')",
    "return redis.status_reply()", "return redis.error_reply()",
    "return {double=1.5}", "return {map={a=1}}", "return {set={a=true}}",
    "return {big_number='123'}", "return {verbatim_string={format='txt', string='hi'}}",
    "return {{1,{2,{3}}},'x'}",
    # Numbers past the int64 range and NaN convert as Redis's cast does on x86-64 (INT64_MIN).
    "return 9.3e18", "return -9.3e18", "return 2^63", "return -2^63", "return 0/0", "return 1/0",
    "return {2^63, -1/0, 2.5}",
    "return redis.call('set','s','abc')", "return redis.call('incr','s')",
    "return redis.pcall('incr','s')", "return redis.pcall('incr','s')['err']",
    "return type(redis.pcall('incr','s'))", "return redis.call('nosuch')",
    "return redis.pcall('nosuch')", "return redis.call('get')", "return redis.pcall('get')",
    "return redis.call()", "return redis.pcall()", "return redis.call('set','a',{})",
    "return redis.pcall('set','a',{})", "return redis.call(1)",
    "return redis.call('config','nosuch')", "return redis.call('set','a')",
    "redis.call('set','f',0.1) return redis.call('get','f')",
    "redis.call('set','f',1e20) return redis.call('get','f')",
    "redis.call('set','f',1.5) return redis.call('get','f')",
    "redis.call('set','f',-0) return redis.call('get','f')",
    "return redis.call('blpop','l',0)", "return redis.call('subscribe','c')",
    "return redis.call('eval','return 1','0')", "redis.call('multi')",
    "return redis.call('ping')", "return redis.call('echo','hi')",
    "return {redis.call('get','nokey')}", "return redis.call('get','nokey')",
    "redis.call('rpush','li','a','b','c') return redis.call('lrange','li',0,-1)",
    "redis.call('hset','h','a','1.5') return redis.call('hgetall','h')",
    "redis.setresp(3) return redis.call('hgetall','h')",
    "redis.setresp(3) return {redis.call('hgetall','h'), redis.call('get','nokey'), 1}",
    "redis.setresp(3) return redis.call('smembers','nokey')",
    "redis.setresp(3) return true", "redis.setresp(3) return false",
    "redis.setresp(3) local r = redis.call('hgetall','h') return r['map']['a']",
    "redis.setresp(3) return redis.call('zadd','z','1.5','m')",
    "redis.setresp(3) return redis.call('zscore','z','m')",
    "redis.setresp(3) return type(redis.call('zscore','z','m'))",
    "redis.setresp(3) return redis.call('zscore','z','m')['double']",
    "return redis.setresp(4)", "return redis.setresp()",
    "x = 1", "return a.b", "return +", "error('boom')", "error({err='MY custom'})",
    "error()", "string.foo = 1", "rawset(_G,'x',1)", "return setmetatable(_G,nil)",
    "print('x')", "return loadfile", "return dofile", "return os", "return io", "return _G.foo",
    "return foo", "local a = 1 return a",
    "return cjson.encode({1,2,{a=1}})", "return cjson.decode('[1,2,{\"a\":3}]')[3].a",
    "return cjson.encode(cjson.decode('{\"k\":[true,false,null]}'))",
    "return cjson.decode('{')", "return bit.band(7,3)", "return bit.bor(1,2,4)",
    "return bit.tohex(255)", "return bit.lshift(1,10)", "return bit.bxor(5,3)",
    "return redis.sha1hex('')", "return redis.sha1hex('abc')", "return redis.sha1hex()",
    "return redis.log(redis.LOG_WARNING,'hi')", "return redis.log()",
    "return redis.log('x','y')", "return redis.LOG_DEBUG + redis.LOG_NOTICE",
    "return redis.replicate_commands()", "return redis.set_repl(redis.REPL_ALL)",
    "return redis.set_repl(99)", "return redis.REPL_ALL", "return redis.REPL_NONE",
    "return redis.breakpoint()", "return redis.debug('x')", "return redis.REDIS_VERSION",
    "return redis.REDIS_VERSION_NUM", "return _VERSION", "return unpack({1,2})",
    "return tostring(1e100)", "return string.format('%d', 7)", "return math.floor(2.5)",
    "return table.concat({'a','b'}, '-')", "return #KEYS", "return #ARGV",
    "return redis.call('incrbyfloat','fl','1.5')", "return pcall(function() error('x') end)",
    "local ok, e = pcall(function() redis.call('nosuch') end) return e['err']",
    "local ok, e = pcall(function() redis.call('nosuch') end) return {tostring(ok), e}",
    "local ok, e = pcall(function() error({err='x'}) end) return e",
    "local ok, e = pcall(function() error({1}) end) return e",
    "local ok, e = pcall(function() error('y') end) return e",
    "return redis.call('exists', 'li', 'h', 'nokey')", "return redis.call('type','h')",
    "return redis.call('del','s','h','li')", "return redis.call('dbsize')",
    "#!lua\nreturn 1", "#!lua flags=no-writes\nreturn redis.call('set','x','1')",
    "#!lua flags=no-writes\nreturn redis.call('get','x')", "#!lua flags=foo\nreturn 1",
    "#!lua2\nreturn 1", "#!lua x=1\nreturn 1", "#!lua name=x\nreturn 1",
    "#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1",
    "#!lua flags=no-writes", "#!lua\nerror('line two')",
]

KEYED = [
    ("return {KEYS[1], ARGV[1], #KEYS, #ARGV}", ["1", "k1", "a1", "a2"]),
    ("return KEYS", ["2", "k1", "k2"]), ("return ARGV", ["0", "x", "y", "z"]),
    ("return redis.call('set', KEYS[1], ARGV[1])", ["1", "key", "val"]),
    ("return redis.call('get', KEYS[1])", ["1", "key"]),
    ("return 1", ["2", "a"]), ("return 1", ["-1"]), ("return 1", ["x"]),
    ("return 1", ["1"]),
]


def observe(port):
    """Every observation of the differential part, as (note, raw reply bytes)."""
    out = []
    c = RespClient(port)
    c.call("FLUSHALL")
    c.call("SCRIPT", "FLUSH")
    for s in SCRIPTS:
        out.append(("EVAL %r" % s, c.call("EVAL", s, "0")))
    for s, args in KEYED:
        out.append(("EVAL %r %s" % (s, args), c.call("EVAL", s, *args)))
    for s in ("return 1", "return +", "#!lua flags=bad\nreturn 1"):
        out.append(("SCRIPT LOAD %r" % s, c.call("SCRIPT", "LOAD", s)))
    sha = harness.parse_reply(c.call("SCRIPT", "LOAD", "return ARGV[1]")).decode()
    for cmd in (["EVALSHA", sha, "0", "hi"], ["EVALSHA", sha.upper(), "0", "up"],
                ["EVALSHA_RO", sha, "0", "ro"], ["EVALSHA", "ffff", "0"],
                ["EVALSHA", "a" * 40, "0"], ["SCRIPT", "EXISTS", sha, sha.upper(), "a" * 40],
                # A SHA1 of another length is no script's, whatever numkeys says.
                ["EVALSHA", "ffff", "x"], ["EVALSHA", "ffff", "5"], ["EVALSHA", "ffff", "-1"],
                ["EVALSHA_RO", "ffff", "x"], ["EVALSHA", "a" * 40, "x"],
                ["EVALSHA", sha + "0", "x"], ["EVALSHA", sha, "x"], ["EVALSHA", sha, "5"],
                ["EVAL_RO", "return redis.call('set','a','b')", "0"],
                ["EVAL_RO", "return redis.call('get','a')", "0"],
                ["SCRIPT", "FLUSH", "foo"], ["SCRIPT", "FLUSH", "async", "async"],
                ["SCRIPT", "FLUSH", "SYNC"], ["SCRIPT", "EXISTS", sha],
                ["EVALSHA", sha, "0"], ["SCRIPT", "FLUSH"], ["SCRIPT", "FLUSH", "ASYNC"],
                ["SCRIPT", "KILL"], ["SCRIPT", "HELP"], ["SCRIPT", "foo"], ["SCRIPT"],
                ["SCRIPT", "LOAD"], ["SCRIPT", "EXISTS"], ["EVAL", "return 1"], ["EVALSHA"],
                ["COMMAND", "INFO", "eval", "evalsha", "eval_ro", "evalsha_ro"],
                ["COMMAND", "INFO", "script|load", "script|exists", "script|flush",
                 "script|kill", "script|help"],
                ["COMMAND", "DOCS", "eval", "evalsha_ro", "script|flush", "script|exists"],
                ["COMMAND", "GETKEYS", "EVAL", "return 1", "2", "k1", "k2", "a"],
                ["COMMAND", "GETKEYS", "EVAL", "return 1", "0"],
                ["COMMAND", "GETKEYS", "LMPOP", "0", "a", "LEFT"],
                ["COMMAND", "GETKEYS", "LMPOP", "2", "a", "b", "LEFT"],
                ["MULTI"], ["EVAL", "return redis.call('incr', KEYS[1])", "1", "ctr"],
                ["EVAL", "return redis.call('incr', KEYS[1])", "1", "ctr"], ["EXEC"]):
        out.append((" ".join(cmd), c.call(*cmd)))
    c.call("HELLO", "3")
    for s in ("return nil", "return false", "return true", "return {map={a=1}}",
              "return {set={a=true}}", "return {double=1.5}", "return {big_number='12'}",
              "return {verbatim_string={format='txt', string='hi'}}",
              "redis.setresp(3) return true", "redis.setresp(3) return false",
              "redis.setresp(3) return redis.call('hgetall','h')",
              "redis.call('hset','h','a','1') return redis.call('hgetall','h')",
              "redis.setresp(3) return redis.call('get','nokey')",
              "return redis.call('get','nokey')", "return {1,{err='e'}}",
              "return redis.call('nosuch')"):
        out.append(("RESP3 EVAL %r" % s, c.call("EVAL", s, "0")))
    c.close()
    return out


def check_redis_py(report, client, label, cluster_clients=()):
    """redis-py's Lock and register_script through `client`."""
    client.delete("lock:a", "rl:a")
    lock = client.lock("lock:a", timeout=10, blocking_timeout=1)
    report.check(lock.acquire(), "%s: Lock.acquire" % label)
    other = client.lock("lock:a", timeout=10, blocking_timeout=0.2)
    report.check(not other.acquire(), "%s: a second Lock waits and fails" % label)
    report.check(lock.extend(20), "%s: Lock.extend" % label)
    ttl = client.pttl("lock:a")
    report.check(10000 < ttl <= 30000, "%s: extended TTL %d" % (label, ttl))
    report.check(lock.owned(), "%s: Lock.owned" % label)
    lock.release()
    report.equal(client.exists("lock:a"), 0, "%s: Lock.release deletes the key" % label)
    limiter = client.register_script(
        "local n = redis.call('incr', KEYS[1]) "
        "if n == 1 then redis.call('pexpire', KEYS[1], ARGV[1]) end "
        "return n <= tonumber(ARGV[2]) and 1 or 0")
    got = [limiter(keys=["rl:a"], args=[60000, 3]) for _ in range(5)]
    report.equal(got, [1, 1, 1, 0, 0], "%s: register_script rate limiter" % label)
    for i, other_client in enumerate(cluster_clients):
        report.equal(other_client.evalsha(limiter.sha, 1, "rl:a", 60000, 10), 1,
                     "%s: EVALSHA of the loaded script through node %d" % (label, i + 1))


def busy_test(report, port, oracle_port):
    for p in (port, oracle_port):
        with RespClient(p) as c:
            c.call("CONFIG", "SET", "busy-reply-threshold", "200")
    for label, p in (("ringkv", port), ("redis", oracle_port)):
        script = RespClient(p, timeout=20)
        script.send(harness.encode_command("EVAL", "while true do end", "0"))
        time.sleep(0.6)
        with RespClient(p, timeout=5) as other:
            busy = other.call("GET", "x")
            report.equal(busy, b"-BUSY Redis is busy running a script. You can only call SCRIPT "
                         b"KILL or SHUTDOWN NOSAVE.\r\n", "%s: another client gets -BUSY" % label)
            report.equal(other.call("SCRIPT", "KILL"), b"+OK\r\n", "%s: SCRIPT KILL" % label)
            killed = script.read()
            report.check(killed.startswith(b"-ERR Script killed by user with SCRIPT KILL..."),
                         "%s: the script's client gets the kill error" % label, repr(killed))
            report.equal(other.call("PING"), b"+PONG\r\n", "%s: node free again" % label)
            report.equal(other.call("SCRIPT", "KILL"),
                         b"-NOTBUSY No scripts in execution right now.\r\n",
                         "%s: NOTBUSY" % label)
            script.send(harness.encode_command("EVAL", "redis.call('set','w','1') "
                                               "local i = 0 while i < 3e8 do i = i + 1 end "
                                               "return i", "0"))
            time.sleep(0.5)
            report.check(other.call("SCRIPT", "KILL").startswith(b"-UNKILLABLE Sorry the script "
                                                                 b"already executed write"),
                         "%s: a script that wrote is UNKILLABLE" % label)
            report.equal(other.call("MULTI"), b"+OK\r\n", "%s: MULTI allowed while busy" % label)
            report.check(other.call("INCR", "y").startswith(b"-BUSY"), "%s: BUSY in MULTI" % label)
            report.check(other.call("EXEC").startswith(b"-"), "%s: EXEC refused" % label)
            report.equal(script.read(), b":300000000\r\n", "%s: the long script ends" % label)
            report.equal(other.call("GET", "w"), b"$1\r\n1\r\n", "%s: its write is there" % label)
        script.close()


def aof_test(report, binary):
    server = harness.ServerProcess(binary, name="aof")
    server.extra_args += ["--appendonly", "yes", "--appendfsync", "always", "--dir", server.dir]
    with server:
        with RespClient(server.port) as c:
            c.call("EVAL", "for i = 1, 5 do redis.call('rpush', KEYS[1], i) end "
                   "redis.call('set', KEYS[2], 'v') redis.call('expire', KEYS[2], 1000) "
                   "return redis.call('llen', KEYS[1])", "2", "list", "str")
            c.call("EVAL", "return redis.call('incr', KEYS[1])", "1", "n")
            c.call("EVAL", "return redis.call('get', KEYS[1])", "1", "n")
            c.call("EVAL", "redis.call('set', 'x', '1') redis.call('nosuch')", "0")
        with open(os.path.join(server.dir, "appendonly.aof"), "rb") as f:
            text = f.read()
        report.check(b"MULTI" in text and b"EXEC" in text and b"EVAL" not in text,
                     "AOF holds the scripts' effects in MULTI/EXEC, not EVAL", repr(text[:600]))
        server.stop()
        server.start()
        with RespClient(server.port) as c:
            report.equal(c.call("LRANGE", "list", "0", "-1"),
                         b"*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n",
                         "list replayed from the AOF")
            report.equal(c.call("GET", "str"), b"$1\r\nv\r\n", "string replayed")
            ttl = int(harness.parse_reply(c.call("TTL", "str")))
            report.check(900 < ttl <= 1000, "TTL replayed (%d)" % ttl)
            report.equal(c.call("GET", "n"), b"$1\r\n1\r\n", "counter replayed")
            report.equal(c.call("GET", "x"), b"$1\r\n1\r\n", "write before a script error kept")


def cluster_test(report, binary):
    with harness.Cluster(binary, 3) as cluster:
        clients = [redis.Redis(host="127.0.0.1", port=p, socket_timeout=10)
                   for p in cluster.ports]
        for i, client in enumerate(clients):
            check_redis_py(report, client, "cluster node %d" % (i + 1), clients)
        # Two keys on different nodes: CROSSSLOT.
        owners = {}
        for i in range(100):
            key = "k%d" % i
            owners.setdefault(harness.parse_reply(RespClient(cluster.ports[0]).call(
                "CLUSTER", "OWNER", key)), key)
        keys = list(owners.values())[:2]
        report.check(len(keys) == 2, "keys on two nodes", repr(owners))
        with RespClient(cluster.ports[0]) as c:
            got = c.call("EVAL", "return 1", "2", keys[0], keys[1])
            report.check(got.startswith(b"-CROSSSLOT"), "keys on two nodes: CROSSSLOT", repr(got))
            got = c.call("EVAL", "return redis.call('set', KEYS[1], 'v')", "1", keys[1])
            report.equal(got, b"+OK\r\n", "a script runs on its key's node")
            got = c.call("EVAL", "return redis.call('get', ARGV[1])", "0", keys[1])
            remote = got.startswith(b"$1\r\nv") or got.startswith(
                b"-ERR Script attempted to access a non local key in a cluster node")
            report.check(remote, "an undeclared key: local value or the non-local error",
                         repr(got))
            sha = harness.parse_reply(c.call("SCRIPT", "LOAD", "return 'loaded'")).decode()
        for i, p in enumerate(cluster.ports):
            with RespClient(p) as c:
                report.equal(c.call("EVALSHA", sha, "0"), b"$6\r\nloaded\r\n",
                             "EVALSHA after SCRIPT LOAD through node %d" % (i + 1))
                report.equal(c.call("SCRIPT", "EXISTS", sha), b"*1\r\n:1\r\n",
                             "SCRIPT EXISTS on node %d" % (i + 1))
        with RespClient(cluster.ports[1]) as c:
            report.equal(c.call("SCRIPT", "FLUSH"), b"+OK\r\n", "SCRIPT FLUSH fans out")
        for i, p in enumerate(cluster.ports):
            with RespClient(p) as c:
                report.check(c.call("EVALSHA", sha, "0").startswith(b"-NOSCRIPT"),
                             "NOSCRIPT after SCRIPT FLUSH on node %d" % (i + 1))
        report.check(all(n.alive() for n in cluster.nodes), "cluster alive", cluster.logs())


def against_redis(report, binary):
    with main_support.beside_oracle(report, binary, observe) as (ours, oracle):
        check_redis_py(report, redis.Redis(host="127.0.0.1", port=ours.port, socket_timeout=10),
                       "single node")
        busy_test(report, ours.port, oracle.port)


def main():
    main_support.run_checks("test_scripting", __doc__, against_redis, aof_test, cluster_test)


if __name__ == "__main__":
    main()
