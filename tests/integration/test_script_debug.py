"""SCRIPT DEBUG, the Lua debugger redis-cli --ldb talks to, against a redis-server started by the
test:

  1. Debugging dialogues (step, continue, breakpoints, list, whole, print, eval, redis, trace,
     maxlen, abort, redis.debug, redis.breakpoint, RESP3 replies, errors of redis.call and
     redis.pcall, a script that fails, a malformed debugger command, numkeys and compile errors)
     in SYNC mode: every byte the debugger and EVAL send equals redis's (function addresses
     aside), and the changes the script made stay.
  2. The same dialogues in YES mode (a forked copy of the node): the same bytes, the changes thrown
     away, the session's connection closed and no copy left running.
  3. SCRIPT DEBUG's own errors (mode, arity, after a pipelined command, inside MULTI), EVALSHA and
     a script running normally again after SCRIPT DEBUG NO, as redis.
  4. A script running on without stopping (busy-reply-threshold 200 ms): stopped with "timeout
     reached, infinite loop?"; a client that leaves while its script waits: the script runs to its
     end in SYNC mode and the node answers others; in YES mode the copy stops the infinite loop
     and exits. With an idle client `timeout` (ringkv's own bound), an idle session ends the
     same way once it passes.
  5. redis-cli --ldb and --ldb-sync-mode, fed the same commands: the same output as redis's.
  6. Over TLS, redis-cli --tls --ldb-sync-mode: the same output as redis's; --ldb (a forked copy
     carries on the client's TLS session): the same output as over plain TCP (redis-server 7.0.15
     closes the connection of a TLS session it forks), the changes thrown away, no copy left.
  7. A 3-node cluster: a debugged script runs on the node the client uses when its keys are
     there, and is refused with an error that says why when they are on another node.
"""

import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import tls_certs  # noqa: E402

SCRIPT = (b"local a = 1\n"
          b"local t = {1,2,{x='y'}}\n"
          b"redis.call('set','x',a)\n"
          b"redis.debug('hi', t, 3.5)\n"
          b"local function f(n)\n"
          b"  return n * 2\n"
          b"end\n"
          b"local r = f(21)\n"
          b"redis.breakpoint()\n"
          b"return redis.call('get','x')\n")

# (name, script, keys, args, debugger commands). A command is a list of arguments, or raw bytes
# sent as they are.
DIALOGUES = [
    ("everything", SCRIPT, [b"k1"], [b"a1"],
     [[b"s"], [b"s"], [b"p"], [b"p", b"t"], [b"p", b"KEYS"], [b"p", b"ARGV"], [b"p", b"nope"],
      [b"r", b"get", b"x"], [b"r", b"hgetall", b"x"], [b"r", b"nosuch"], [b"l"],
      [b"l", b"1", b"1"], [b"list", b"0"], [b"w"], [b"e", b"1+1"], [b"e", b"local", b"z", b"=", b"3"],
      [b"e", b"syntax("], [b"e", b"error('boom')"], [b"e", b"redis.call('get','x')"], [b"t"],
      [b"b", b"6"], [b"b", b"6"], [b"b", b"99"], [b"b", b"x"], [b"b"], [b"b", b"-6"],
      [b"b", b"-6"], [b"m"], [b"m", b"10"], [b"m", b"0"], [b"m", b"1", b"2"], [b"H"],
      [b"nosuch"], [b"r"], [b"s"], [b"s"], [b"p", b"f"], [b"c"], [b"t"], [b"c"]]),
    ("into a function", SCRIPT, [], [],
     [[b"b", b"6"], [b"c"], [b"c"], [b"t"], [b"p"], [b"p", b"n"], [b"p", b"a"], [b"n"],
      [b"step"], [b"continue"], [b"continue"]]),
    ("abort", b"redis.call('set','ab','1')\nredis.call('set','ab','2')\nreturn 3\n", [], [],
     [[b"s"], [b"s"], [b"a"]]),
    ("script error", b"local x = 1\nlocal y = nil\nreturn x + y\n", [], [],
     [[b"c"]]),
    ("protocol error", b"local x = 1\nreturn x\n", [], [], [b"hello\r\n"]),
    ("long replies", b"redis.call('rpush','l',string.rep('a',300),string.rep('b',300))\n"
                     b"local v = redis.call('lrange','l',0,-1)\nreturn #v\n", [], [],
     [[b"s"], [b"s"], [b"p"], [b"r", b"lrange", b"l", b"0", b"-1"], [b"m", b"70"],
      [b"r", b"lrange", b"l", b"0", b"-1"], [b"c"]]),
    ("breakpoints removed", b"local a = 1\nlocal b = 2\nlocal c = 3\nlocal d = 4\nreturn a\n",
     [], [],
     [[b"b", b"2", b"3", b"4"], [b"b"], [b"b", b"-2"], [b"b"], [b"b", b"0"], [b"b"],
      [b"b", b"2", b"2", b"4294967299"], [b"b"], [b"c"], [b"c"], [b"c"]]),
    ("numkeys", b"return 1\n", None, [], []),
    ("compile error", b"return +\n", [], [], []),
    ("RESP3 and pcall", b"redis.setresp(3)\nredis.call('hset','h','f','v')\n"
                        b"local m = redis.call('hgetall','h')\nredis.call('sadd','s','m')\n"
                        b"local s = redis.call('smembers','s')\n"
                        b"local e = redis.pcall('incr','h')\n"
                        b"local n = redis.call('get','nokey')\n"
                        b"local d = redis.call('zscore','z','m')\n"
                        b"return redis.error_reply('MY own')\n", [], [],
     [[b"s"], [b"s"], [b"s"], [b"s"], [b"s"], [b"s"], [b"s"], [b"s"], [b"r", b"ping"],
      [b"r", b"zadd", b"z", b"1.5", b"m"], [b"r", b"zscore", b"z", b"m"], [b"s"], [b"c"]]),
    ("many arguments", b"return redis.call('del','a','b','c','d','e','f','g','h','i','j','k','l')\n",
     [], [], [[b"s"], [b"c"]]),
    ("nested table", b"local t = {}\nlocal c = t\nfor i = 1, 12 do c[1] = {} c = c[1] end\n"
                     b"return 1\n", [], [],
     [[b"b", b"4"], [b"c"], [b"p", b"t"], [b"c"]]),
]

FUNCTION_ADDRESS = re.compile(rb"(function|userdata|thread)@0x[0-9a-f]+")


def masked(data):
    return FUNCTION_ADDRESS.sub(rb"\1@ADDR", data)


def encode(command):
    return command if isinstance(command, bytes) else harness.encode_command(*command)


def dialogue(port, mode, script, keys, args, commands):
    """Runs one debugging session; returns every reply (the debugger's arrays, the EVAL's) and
    whether the server closed the connection at the end."""
    out = []
    with harness.RespClient(port) as c:
        out.append(c.call("SCRIPT", "DEBUG", mode))
        eval_args = [b"EVAL", script, b"x" if keys is None else str(len(keys)).encode()]
        eval_args += (keys or []) + args
        c.send(harness.encode_command(*eval_args))
        ended = False
        replies = 0
        for command in [None] + commands:
            if command is not None:
                c.send(encode(command))
            reply = c.read()
            out.append(reply)
            replies += 1
            if b"+<endsession>\r\n" in reply:
                out.append(c.read())  # the EVAL's own reply
                ended = True
                break
        if not ended:
            out.append(b"(session still open)")
        closed = c.closed_by_peer(timeout=3.0)
    return [masked(r) for r in out], closed


def child_pids(pid):
    """The processes whose parent is `pid` (its debugging copies), zombies included."""
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        # The fields after the command name, which is in parentheses: state, ppid, ...
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            children.append(int(entry))
    return children


def check_dialogues(report, ours, theirs):
    for mode in ("SYNC", "YES"):
        for name, script, keys, args, commands in DIALOGUES:
            for server in (ours, theirs):
                with harness.RespClient(server.port) as c:
                    c.call("FLUSHALL")
                    c.call("SET", "before", "1")
            mine, closed_mine = dialogue(ours.port, mode, script, keys, args, commands)
            redis_, closed_redis = dialogue(theirs.port, mode, script, keys, args, commands)
            report.equal(mine, redis_, "%s (%s): every reply as redis's" % (name, mode))
            report.check(closed_mine and closed_redis,
                         "%s (%s): the session's connection closed at its end" % (name, mode))
            with harness.RespClient(ours.port) as a, harness.RespClient(theirs.port) as b:
                keys_mine = sorted(harness.parse_reply(a.call("KEYS", "*")))
                report.equal(keys_mine, sorted(harness.parse_reply(b.call("KEYS", "*"))),
                             "%s (%s): the keys after the session as redis's" % (name, mode))
                if mode == "YES":
                    report.equal(keys_mine, [b"before"],
                                 "%s (YES): the copy's changes are thrown away" % name)
    deadline = time.time() + 5
    while child_pids(ours.proc.pid) and time.time() < deadline:
        time.sleep(0.1)
    report.equal(child_pids(ours.proc.pid), [], "no debugging copy left running")


def check_commands(report, ours, theirs):
    with harness.DiffPair(report, ours.port, theirs.port, "script debug") as pair:
        for args in (("SCRIPT", "DEBUG", "maybe"), ("SCRIPT", "DEBUG"),
                     ("SCRIPT", "DEBUG", "yes", "no"), ("SCRIPT", "DEBUG", "NO"),
                     ("EVAL", "return redis.breakpoint()", "0"),
                     ("EVAL", "redis.debug('x') return 1", "0"),
                     ("SCRIPT", "DEBUG", "sync"), ("EVALSHA", "abc", "0"),
                     ("EVALSHA", "a" * 40, "0"), ("EVALSHA_RO", "a" * 40, "0"),
                     ("FCALL", "nosuch", "0"), ("SCRIPT", "DEBUG", "no"),
                     ("EVAL", "return 1", "0"), ("MULTI",), ("SCRIPT", "DEBUG", "YES"),
                     ("EXEC",)):
            pair.call(*args)
    for server in (ours, theirs):
        with harness.RespClient(server.port) as c:
            c.send(harness.encode_command("PING") + harness.encode_command("SCRIPT", "DEBUG", "YES"))
            server.pipelined = (c.read(), c.read())
    report.equal(ours.pipelined, theirs.pipelined, "SCRIPT DEBUG after a pipelined command")


def check_timeout_and_leaving(report, ours, theirs):
    loop = b"local i = 0\nwhile true do\n  i = i + 1\nend\n"
    for server in (ours, theirs):
        with harness.RespClient(server.port) as c:
            c.call("CONFIG", "SET", "busy-reply-threshold", "200")
    for mode in ("SYNC", "YES"):
        results = []
        for server in (ours, theirs):
            with harness.RespClient(server.port) as c:
                c.call("SCRIPT", "DEBUG", mode)
                c.send(harness.encode_command("EVAL", loop, "0"))
                first = c.read()
                c.send(harness.encode_command("c"))
                stopped = c.read()
                c.send(harness.encode_command("a"))
                results.append((first, re.sub(rb"Stopped at \d+", b"Stopped at N",
                                              re.sub(rb"-> \d+ .*", b"", stopped)),
                                c.read(), c.read()))
        report.equal(results[0], results[1],
                     "an infinite loop is stopped after busy-reply-threshold (%s)" % mode)
    # SYNC: the client leaves at the first stop; the script runs to its end meanwhile.
    script = b"local n = 0\nfor i = 1, 100 do n = n + 1 end\nredis.call('set', 'left', n)\nreturn n\n"
    for server in (ours, theirs):
        with harness.RespClient(server.port) as c:
            c.call("SCRIPT", "DEBUG", "SYNC")
            c.send(harness.encode_command("EVAL", script, "0"))
            c.read()
        time.sleep(0.3)
    with harness.RespClient(ours.port) as a, harness.RespClient(theirs.port) as b:
        report.equal(a.call("GET", "left"), b.call("GET", "left"),
                     "a SYNC script whose client left runs to its end, as in redis")
        report.equal(a.call("PING"), b"+PONG\r\n", "the node answers others after it")
    # YES: the client leaves while an infinite loop runs without stopping; the copy stops it
    # once busy-reply-threshold passes and exits.
    with harness.RespClient(ours.port) as c:
        c.call("SCRIPT", "DEBUG", "YES")
        c.send(harness.encode_command("EVAL", loop, "0"))
        c.read()
        report.equal(len(child_pids(ours.proc.pid)), 1, "a YES session runs in a copy of the node")
        c.send(harness.encode_command("c"))
    deadline = time.time() + 10
    while child_pids(ours.proc.pid) and time.time() < deadline:
        time.sleep(0.1)
    report.equal(child_pids(ours.proc.pid), [],
                 "the copy of a client that left stops its infinite loop and exits")
    for server in (ours, theirs):
        with harness.RespClient(server.port) as c:
            c.call("CONFIG", "SET", "busy-reply-threshold", "5000")
    # ringkv's own bound (Redis waits for ever): with an idle client `timeout`, a debugger that
    # hears nothing for that long takes the client for gone; an idle SYNC session no longer
    # holds the node, nor an idle YES session its copy.
    # (Each check on a new connection: the idle timeout closes the ones left waiting.)
    with harness.RespClient(ours.port) as admin:
        admin.call("CONFIG", "SET", "timeout", "1")
    for mode in ("SYNC", "YES"):
        with harness.RespClient(ours.port) as c:
            c.call("SCRIPT", "DEBUG", mode)
            c.send(harness.encode_command("EVAL", "redis.call('set', 'idle', ARGV[1])\n"
                                          "return 1\n", "0", mode))
            c.read()
            started = time.time()
            with harness.RespClient(ours.port) as admin:
                pong = admin.call("PING")
                waited = time.time() - started
                report.equal(pong, b"+PONG\r\n", "an idle %s session lets the node answer" % mode)
                if mode == "SYNC":
                    report.check(0.5 < waited < 5, "... after the idle timeout (%.1f s)" % waited)
                    report.equal(admin.call("GET", "idle"), b"$4\r\nSYNC\r\n",
                                 "... and the script ran on to its end")
    deadline = time.time() + 5
    while child_pids(ours.proc.pid) and time.time() < deadline:
        time.sleep(0.1)
    report.equal(child_pids(ours.proc.pid), [], "an idle YES session's copy exits")
    with harness.RespClient(ours.port) as admin:
        admin.call("CONFIG", "SET", "timeout", "0")


CLI_SCRIPT = ("local a = redis.call('incr', KEYS[1])\nredis.debug(a, ARGV[1])\n"
              "local t = {a, ARGV[1]}\nreturn t\n")
CLI_SESSIONS = (("--ldb", "s\np\ns\nr get k1\nw\nc\n"),
                ("--ldb-sync-mode", "s\nb 3\nc\np t\nhelp\nc\n"))


def cli_session(port, flag, stdin, extra=()):
    """redis-cli `flag` --eval of CLI_SCRIPT on `port`, fed `stdin`: what it printed."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.lua")
        with open(path, "w") as f:
            f.write(CLI_SCRIPT)
        r = subprocess.run(["redis-cli", "-p", str(port), *extra, flag, "--eval", path, "k1", ",",
                            "hello"], input=stdin, capture_output=True, text=True, timeout=30)
    return r.stdout + r.stderr


def check_redis_cli(report, ours, theirs):
    for flag, stdin in CLI_SESSIONS:
        outputs = [cli_session(server.port, flag, stdin) for server in (ours, theirs)]
        report.equal(outputs[0], outputs[1], "redis-cli %s: the same output as redis's" % flag)
        report.check("(integer) 1" in outputs[0], "redis-cli %s: the script's reply" % flag,
                     outputs[0])


def check_tls(report, binary):
    """Over TLS the session continues the client's TLS session: in SYNC mode byte for byte as
    redis's; in YES mode as a plain-text session (redis 7.0.15 closes a TLS connection whose
    session it forked, so there is nothing of its to compare with)."""
    certs = tls_certs.Certs()
    ports = harness.free_ports(2)
    ours = harness.ServerProcess(binary, name="ringkv-tls",
                                 extra_args=["--tls-port", str(ports[0]), *certs.server_args()])
    theirs = harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="redis-tls",
                                   extra_args=["--tls-port", str(ports[1]), *certs.server_args()])
    with ours.start(), theirs.start():
        for flag, stdin in CLI_SESSIONS:
            for server in (ours, theirs):
                harness.RespClient(server.port).call("FLUSHALL")
            tls = cli_session(ports[0], flag, stdin, certs.cli_args())
            report.check("(integer) 1" in tls, "over TLS, redis-cli %s: the script's reply" % flag,
                         tls)
            if flag == "--ldb-sync-mode":
                report.equal(tls, cli_session(ports[1], flag, stdin, certs.cli_args()),
                             "over TLS, redis-cli %s: the same output as redis's" % flag)
            else:
                report.equal(tls, cli_session(ours.port, flag, stdin),
                             "over TLS, redis-cli %s: the same output as over plain TCP" % flag)
            r = subprocess.run(["redis-cli", "-p", str(ports[0]), *certs.cli_args(), "GET", "k1"],
                               capture_output=True, text=True, timeout=10)
            report.equal(r.stdout.strip(), "1" if flag == "--ldb-sync-mode" else "",
                         "over TLS, redis-cli %s: the node serves TLS clients after it, with the "
                         "script's changes %s" % (flag, "kept" if flag == "--ldb-sync-mode"
                                                  else "thrown away"))
        deadline = time.time() + 5
        while child_pids(ours.pid) and time.time() < deadline:
            time.sleep(0.05)
        report.equal(child_pids(ours.pid), [], "over TLS: no debugging copy left running")


def check_cluster(report, binary):
    with harness.Cluster(binary, 3, name="debug") as cluster:
        local, remote = None, None
        with harness.RespClient(cluster.ports[0]) as c:
            me = harness.parse_reply(c.call("CLUSTER", "MYID"))
            for i in range(200):
                key = "d%d" % i
                owner = harness.parse_reply(c.call("CLUSTER", "OWNER", key))
                if owner.endswith(b":%d" % cluster.ports[0]) or owner == me:
                    local = local or key
                else:
                    remote = remote or key
            report.check(local is not None and remote is not None, "keys on this node and others")
            c.call("SCRIPT", "DEBUG", "SYNC")
            report.equal(c.call("EVAL", "return redis.call('set', KEYS[1], 1)", "1", remote),
                         b"-ERR SCRIPT DEBUG: the script's keys are served by another node; "
                         b"connect to that node to debug it\r\n",
                         "a debugged script whose keys are elsewhere is refused")
            c.send(harness.encode_command("EVAL", "return redis.call('set', KEYS[1], 1)", "1",
                                          local))
            report.check(b"Stopped at 1" in c.read(), "a debugged script of local keys stops")
            c.send(harness.encode_command("c"))
            report.check(b"<endsession>" in c.read(), "... and ends")
            report.equal(c.read(), b"+OK\r\n", "... with its reply")


def main():
    parser = harness.arg_parser(__doc__.splitlines()[0])
    args = parser.parse_args()
    report = harness.Report("script_debug")
    with harness.ServerProcess(args.server, name="ringkv").start() as ours, \
            harness.start_oracle() as theirs:
        check_dialogues(report, ours, theirs)
        check_commands(report, ours, theirs)
        check_timeout_and_leaving(report, ours, theirs)
        check_redis_cli(report, ours, theirs)
    check_tls(report, args.server)
    check_cluster(report, args.server)
    report.finish()


if __name__ == "__main__":
    main()
