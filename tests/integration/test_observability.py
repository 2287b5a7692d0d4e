"""Observability as Redis 7.0 has it, against a redis-server started by the test:

  1. COMMAND INFO / COMMAND DOCS of SLOWLOG, LATENCY, MEMORY, MONITOR, DEBUG, CONFIG REWRITE,
     CLUSTER SLOTS/SHARDS equal redis-server's.
  2. INFO: every section and field name ringkv reports exists in redis-server's INFO
     everything (ringkv's own cluster and version fields aside), and the fields redis has and
     ringkv lacks are exactly the ones listed below with the reason; every line parses as
     `name:value` (redis-py's info() reads each section). CONFIG GET * likewise.
  3. DEBUG DIGEST / DIGEST-VALUE of one random dataset (every type, TTLs) equal redis's;
     DEBUG RELOAD keeps the digest; DEBUG OBJECT's shape; DEBUG refused by default as in 7.0.
  4. SLOWLOG: entries, argument truncation (33 arguments, a 200-byte one), LEN/RESET and errors
     equal redis's but for ids, times and client ports; commandstats/errorstats/latencystats
     and CONFIG RESETSTAT.
  5. LATENCY: DOCTOR while disabled (same text), LATEST/HISTORY/GRAPH/RESET after DEBUG SLEEP
     over latency-monitor-threshold, HISTOGRAM's buckets.
  6. MONITOR with redis-cli, redis-cli --memkeys, --bigkeys, --stat and --latency-history, MEMORY
     USAGE/STATS/DOCTOR/MALLOC-STATS/PURGE.
  7. CONFIG REWRITE writes the effective configuration back to the file (header kept) and the
     node starts from it with the same CONFIG GET.
  8. LOLWUT: every form whose drawing is not random (VERSION 5 with at most two rows of squares,
     the plain version line, the argument errors, sizes clamped) byte for byte as redis's, in
     RESP2 and RESP3; the random ones (VERSION 5 and 6) with redis's lines, widths and signature.
  9. A 3-node cluster: MONITOR shows a relayed command on the node the client used and on its
     owner; peers' links have their own CLIENT LIST type, stay out of connected_clients and
     survive CLIENT KILL TYPE normal; SLOWLOG, LATENCY DOCTOR, --memkeys through a node;
     redis-cli --cluster check and redis-py's RedisCluster treat a node exactly as they treat a
     standalone redis-server.
"""

import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import redis  # noqa: E402

NEW_COMMANDS = ["slowlog", "latency", "memory", "monitor", "debug", "config|rewrite",
                "cluster|slots", "cluster|shards"]

# INFO fields redis-server 7.0.15 has that ringkv leaves out, and why (the README repeats it).
INFO_LEFT_OUT = {
    # Redis's reply buffer resizing, which ringkv's connections do not have.
    "reply_buffer_shrinks", "reply_buffer_expands",
}
# ringkv's own INFO fields (its version, its mode and the ring's state in the cluster section).
INFO_OWN = re.compile(r"^(ringkv_|cluster_|relayed_requests$|relay_errors$|split_requests$|"
                      r"fanout_requests$|peer\d+$)")


def cli(port, *args, timeout=60, stdin=None):
    return subprocess.run([harness.REDIS_CLI, "-p", str(port)] + list(args), capture_output=True,
                          timeout=timeout, input=stdin)


def info_sections(port, section="everything"):
    """{section title: {field: value}} of INFO `section`, checking every line's shape."""
    with harness.RespClient(port) as c:
        text = harness.parse_reply(c.call("INFO", section)).decode()
    sections, current, bad = {}, None, []
    for line in text.split("\r\n"):
        if line.startswith("# "):
            current = sections.setdefault(line[2:], {})
        elif line:
            name, sep, value = line.partition(":")
            if not sep:
                bad.append(line)
            current[name] = value
    return sections, bad


def canonical(reply, sub):
    """A COMMAND INFO/DOCS reply with a container's subcommands sorted (Redis lists them in its
    dict's order, which changes from one process to the next)."""
    parsed = harness.parse_reply(reply)
    if sub == "INFO":
        return [entry[:9] + [sorted(map(repr, entry[9]))] for entry in parsed]
    out = []
    for name, docs in zip(parsed[0::2], parsed[1::2]):
        fields = dict(zip(docs[0::2], docs[1::2]))
        if b"subcommands" in fields:
            subs = fields[b"subcommands"]
            fields[b"subcommands"] = sorted(zip(map(repr, subs[0::2]), map(repr, subs[1::2])))
        out.append((name, sorted(fields.items(), key=repr)))
    return out


def check_command_docs(report, ours, theirs):
    with harness.RespClient(ours.port) as a, harness.RespClient(theirs.port) as b:
        for name in NEW_COMMANDS:
            for sub in ("INFO", "DOCS"):
                report.equal(canonical(a.call("COMMAND", sub, name), sub),
                             canonical(b.call("COMMAND", sub, name), sub),
                             "COMMAND %s %s as redis" % (sub, name))


def check_info_fields(report, ours, theirs):
    for section in ("default", "all", "clients", "commandstats"):
        report.equal(list(info_sections(ours.port, section)[0]),
                     list(info_sections(theirs.port, section)[0]),
                     "INFO %s has redis's sections, in its order" % section)
    mine, bad = info_sections(ours.port)
    report.equal(bad, [], "every INFO line is name:value")
    ref, _ = info_sections(theirs.port)
    report.equal(list(mine), list(ref), "INFO everything has redis's sections, in its order")
    for title, fields in ref.items():
        have = mine.get(title, {})
        extra = [f for f in have if f not in fields and not INFO_OWN.match(f)]
        missing = sorted(f for f in fields if f not in have and f not in INFO_LEFT_OUT and
                         not f.startswith(("cmdstat_", "errorstat_", "latency_percentiles_",
                                           "db")))
        report.equal(extra, [], "INFO %s: no field redis lacks" % title)
        report.equal(missing, [], "INFO %s: every field of redis's but those left out" % title)
        if missing:
            print("INFO %s fields ringkv lacks: %s" % (title, " ".join(missing)))
    left_out_present = sorted(f for t in mine.values() for f in t if f in INFO_LEFT_OUT)
    if left_out_present:
        print("now reported though listed as left out: %s" % " ".join(left_out_present))
    r = redis.Redis(port=ours.port)
    for section in ("default", "all", "everything", "commandstats", "latencystats", "cluster"):
        try:
            parsed = r.info(section)
            report.check(isinstance(parsed, dict), "redis-py info(%r) parses" % section)
        except Exception as e:  # noqa: BLE001 - any parse error is the failure
            report.check(False, "redis-py info(%r) parses" % section, repr(e))


def check_config_names(report, ours, theirs):
    def names(port):
        with harness.RespClient(port) as c:
            return set(harness.parse_reply(c.call("CONFIG", "GET", "*"))[0::2])
    mine, ref = names(ours.port), names(theirs.port)
    report.equal(sorted(mine - ref), [], "CONFIG GET *: every parameter is one of redis's")
    print("CONFIG parameters: ringkv %d, redis %d; redis's that ringkv has not: %d" % (
        len(mine), len(ref), len(ref - mine)))
    for name in (b"slowlog-log-slower-than", b"slowlog-max-len", b"latency-monitor-threshold",
                 b"latency-tracking", b"latency-tracking-info-percentiles", b"tcp-keepalive",
                 b"tcp-backlog", b"pidfile", b"lua-time-limit", b"LUA-Time-Limit", b"lua*",
                 b"busy-reply-threshold"):
        with harness.RespClient(ours.port) as a, harness.RespClient(theirs.port) as b:
            report.equal(a.call("CONFIG", "GET", name), b.call("CONFIG", "GET", name),
                         "CONFIG GET %s as redis" % name.decode())
    with harness.RespClient(ours.port) as a, harness.RespClient(theirs.port) as b:
        for args in (("latency-tracking-info-percentiles", "50 99.99 100"),
                     ("latency-tracking-info-percentiles", "101"),
                     ("slowlog-max-len", "-1"), ("latency-tracking", "maybe"),
                     ("tcp-keepalive", "-1"), ("tcp-keepalive", "x"), ("tcp-keepalive", "60"),
                     ("tcp-backlog", "5"), ("pidfile", "/tmp/x.pid"),
                     # busy-reply-threshold and its alias: a long, two names Redis may set at once
                     ("busy-reply-threshold", "3000000000"), ("LUA-time-limit", "-1"),
                     ("lua-time-limit", "100", "busy-reply-threshold", "200"),
                     ("busy-reply-threshold", "1", "busy-reply-threshold", "2"),
                     ("busy-reply-threshold", "5000")):
            report.equal(a.call("CONFIG", "SET", *args), b.call("CONFIG", "SET", *args),
                         "CONFIG SET %s as redis" % " ".join(args))
            report.equal(a.call("CONFIG", "GET", args[0]), b.call("CONFIG", "GET", args[0]),
                         "CONFIG GET %s after SET as redis" % args[0])
        for c in (a, b):
            c.call("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")


def load_dataset(clients, rng):
    """The same random keys of every type (some with TTLs) on every client's server."""
    commands = []
    for i in range(harness.scaled(300, 50)):
        kind = rng.choice(["string", "int", "list", "set", "intset", "zset", "hash", "stream"])
        key = "obs:%s:%d" % (kind, i)
        n = rng.randint(1, 40 if rng.random() < 0.9 else 700)
        if kind == "string":
            commands.append(["SET", key, "v" * rng.randint(0, 100)])
        elif kind == "int":
            commands.append(["SET", key, str(rng.randint(-10 ** 12, 10 ** 12))])
        elif kind == "list":
            commands.append(["RPUSH", key] + ["e%d" % rng.randint(0, 50) for _ in range(n)])
        elif kind == "set":
            commands.append(["SADD", key] + ["m%d" % rng.randint(0, 900) for _ in range(n)])
        elif kind == "intset":
            commands.append(["SADD", key] + [str(rng.randint(-500, 500)) for _ in range(n)])
        elif kind == "zset":
            args = []
            for _ in range(n):
                args += [repr(rng.choice([rng.random() * 100, rng.randint(-5, 5), 0.1])),
                         "z%d" % rng.randint(0, 900)]
            commands.append(["ZADD", key] + args)
        elif kind == "hash":
            args = []
            for _ in range(n):
                args += ["f%d" % rng.randint(0, 900), "x" * rng.randint(0, 80)]
            commands.append(["HSET", key] + args)
        else:
            for j in range(min(n, 30)):
                commands.append(["XADD", key, "%d-%d" % (j + 1, rng.randint(0, 3)), "a",
                                 str(j), "b" * rng.randint(1, 3), "v"])
        if rng.random() < 0.2:
            commands.append(["EXPIRE", key, str(rng.randint(1000, 100000))])
    for c in clients:
        for argv in commands:
            c.send(harness.encode_command(*argv))
        for _ in commands:
            c.read()
    return commands


def check_debug(report, ours, theirs, rng):
    with harness.RespClient(ours.port) as a, harness.RespClient(theirs.port) as b:
        for args in (("DEBUG", "DIGEST"), ("DEBUG", "SLEEP", "0")):
            report.equal(a.call(*args), b.call(*args), "%s refused by default as redis" % " ".join(args))
    # Both servers again, with DEBUG allowed.
    with harness.ServerProcess(ours.binary, extra_args=["--enable-debug-command", "yes"],
                               name="debug") as node, \
            harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="redis-debug",
                                  extra_args=["--enable-debug-command", "yes"]) as ref, \
            harness.RespClient(node.port) as a, harness.RespClient(ref.port) as b:
        report.equal(a.call("DEBUG", "DIGEST"), b.call("DEBUG", "DIGEST"), "empty digest")
        commands = load_dataset([a, b], rng)
        keys = sorted({argv[1] for argv in commands})
        report.equal(a.call("DEBUG", "DIGEST"), b.call("DEBUG", "DIGEST"),
                     "DEBUG DIGEST of %d keys equals redis's" % len(keys))
        report.equal(a.call("DEBUG", "DIGEST-VALUE", *keys, "obs:none"),
                     b.call("DEBUG", "DIGEST-VALUE", *keys, "obs:none"),
                     "DEBUG DIGEST-VALUE of every key equals redis's")
        before = a.call("DEBUG", "DIGEST")
        report.equal(a.call("DEBUG", "RELOAD"), b"+OK\r\n", "DEBUG RELOAD")
        # Reloading re-encodes (a hash whose long value was overwritten comes back as a
        # listpack), so redis reloads too before the encodings are compared below.
        report.equal(b.call("DEBUG", "RELOAD"), b"+OK\r\n", "redis's DEBUG RELOAD")
        report.equal(a.call("DEBUG", "DIGEST"), before, "DEBUG RELOAD keeps the digest")
        report.equal(a.call("DBSIZE"), b.call("DBSIZE"), "DEBUG RELOAD keeps every key")
        for args in (("DEBUG", "RELOAD", "FOO"), ("DEBUG", "OBJECT", "obs:none"),
                     ("DEBUG", "NOSUCH"), ("DEBUG", "SET-ACTIVE-EXPIRE", "1"),
                     ("DEBUG", "SLEEP", "0"), ("DEBUG", "DIGEST", "x")):
            report.equal(a.call(*args), b.call(*args), "%s as redis" % " ".join(args))
        for key in keys[:40]:
            mine = harness.parse_reply(a.call("DEBUG", "OBJECT", key)).decode()
            theirs_ = harness.parse_reply(b.call("DEBUG", "OBJECT", key)).decode()
            shape = re.compile(r"^Value at:0x[0-9a-f]+ refcount:(\d+) encoding:(\S+) "
                               r"serializedlength:(\d+) lru:\d+ lru_seconds_idle:\d+")
            m, t = shape.match(mine), shape.match(theirs_)
            report.check(m is not None and t is not None and m.group(1, 2) == t.group(1, 2),
                         "DEBUG OBJECT %s: refcount and encoding as redis" % key,
                         "%s\n      %s" % (mine, theirs_))


def lolwut_shape(text):
    """The parts of a LOLWUT drawing that are not random: each line's width in characters (a
    terminal cell of VERSION 6 counted once) and the signature lines."""
    lines = text.decode().split("\n")
    signed = next(i for i, line in enumerate(lines) if line.startswith(("Georg", "Dedicated")))
    widths = [len(re.sub(r"\x1b\[[0-9;]+m \x1b\[0m", "#", line)) for line in lines[:signed]]
    return widths, lines[signed:]


def check_lolwut(report, ours, theirs, rng):
    forms = [(), ("foo",), ("VERSION",), ("version", "x"), ("VERSION", "5", "x"),
             ("VERSION", "6", "1", "y"), ("VERSION", "-1"), ("VERSION", "7", "1", "2"),
             ("VERSION", "4294967301", "10", "2", "2"), ("VERSION", "5", "0", "0", "0"),
             ("VERSION", "5", "-5", "-1", "2"), ("VERSION", "5", "99999999999", "300", "1"),
             ("VERSION", "5", "3", "1", "1"), ("VERSION", "5", "2", "1", "1"),
             ("VERSION", "5", "1", "1", "1", "extra"), ("VERSION", "5", "66", "8", "2")]
    forms += [("VERSION", "5", str(rng.randint(1, 300)), str(rng.randint(1, 60)),
               str(rng.randint(1, 2))) for _ in range(20)]
    with harness.RespClient(ours.port) as a, harness.RespClient(theirs.port) as b:
        for form in forms:
            report.equal(a.call("LOLWUT", *form), b.call("LOLWUT", *form),
                         "LOLWUT %s as redis" % " ".join(form))
        a.call("HELLO", "3")
        b.call("HELLO", "3")
        for form in ((), ("VERSION", "5", "20", "4", "2"), ("VERSION", "5", "x")):
            report.equal(a.call("LOLWUT", *form), b.call("LOLWUT", *form),
                         "LOLWUT %s in RESP3 (verbatim) as redis" % " ".join(form))
    random_forms = [("VERSION", "5"), ("VERSION", "6"), ("VERSION", "6", "1", "1"),
                    ("VERSION", "6", "1000", "3"), ("VERSION", "6", "0", "2000")]
    random_forms += [("VERSION", "5", str(rng.randint(1, 120)), str(rng.randint(1, 30)),
                      str(rng.randint(3, 30))) for _ in range(5)]
    random_forms += [("VERSION", "6", str(rng.randint(1, 200)), str(rng.randint(1, 60)))
                     for _ in range(5)]
    client_a, client_b = redis.Redis(port=ours.port), redis.Redis(port=theirs.port)
    for form in random_forms:
        mine, theirs_ = client_a.execute_command("LOLWUT", *form), \
            client_b.execute_command("LOLWUT", *form)
        report.equal(lolwut_shape(mine), lolwut_shape(theirs_),
                     "LOLWUT %s: redis's lines, widths and signature" % " ".join(form))
    colors = set(re.findall(rb"\x1b\[([0-9;]+)m ", client_a.execute_command("LOLWUT", "VERSION", "6")))
    report.check(colors <= {b"0;30;40", b"0;90;100", b"0;37;47", b"0;97;107"} and len(colors) >= 3,
                 "LOLWUT VERSION 6 paints in Redis's four greys", repr(colors))


def slowlog_shape(raw):
    """SLOWLOG GET without what differs between servers (ids, times, durations, client ports)."""
    entries = harness.parse_reply(raw)
    return [(e[3], e[4].rsplit(b":", 1)[0], e[5]) for e in entries]


def check_slowlog(report, ours, theirs):
    with harness.RespClient(ours.port) as a, harness.RespClient(theirs.port) as b:
        for c in (a, b):
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
            c.call("SLOWLOG", "RESET")
            c.call("CLIENT", "SETNAME", "slow-client")
            c.call("SET", "slow:key", "x" * 200)
            c.call("RPUSH", "slow:list", *["a%d" % i for i in range(40)])
            c.call("GET", "slow:key")
        report.equal(slowlog_shape(a.call("SLOWLOG", "GET", "5")),
                     slowlog_shape(b.call("SLOWLOG", "GET", "5")),
                     "SLOWLOG GET entries (arguments cut as redis cuts them, address, name)")
        report.equal(a.call("SLOWLOG", "LEN"), b.call("SLOWLOG", "LEN"), "SLOWLOG LEN")
        for args in (("SLOWLOG", "GET", "-2"), ("SLOWLOG", "GET", "x"), ("SLOWLOG", "GET", "1", "2"),
                     ("SLOWLOG", "RESET"), ("SLOWLOG", "LEN"), ("SLOWLOG", "NOPE"),
                     ("SLOWLOG", "HELP"), ("LATENCY", "HELP"), ("MEMORY", "HELP"),
                     ("MEMORY", "USAGE", "slow:none"), ("MEMORY", "USAGE", "slow:key", "SAMPLES"),
                     ("MEMORY", "USAGE", "slow:key", "SAMPLES", "-1"),
                     ("MEMORY", "USAGE", "slow:key", "FOO", "1"), ("LATENCY", "RESET"),
                     ("LATENCY", "LATEST"), ("LATENCY", "HISTORY", "command"),
                     ("LATENCY", "GRAPH", "command"), ("LATENCY", "DOCTOR"),
                     ("LATENCY", "HISTOGRAM", "nosuchcommand"), ("MEMORY", "PURGE"),
                     ("MEMORY", "DOCTOR"), ("REPLICAOF", "NO", "ONE"), ("SLAVEOF", "no", "one"),
                     ("REPLICAOF", "127.0.0.1", "x"), ("REPLICAOF", "NO", "TWO"),
                     ("SLAVEOF", "127.0.0.1", "70000"), ("REPLICAOF", "127.0.0.1", "-1"),
                     ("FAILOVER",), ("FAILOVER", "ABORT"), ("FAILOVER", "abort", "x"),
                     ("FAILOVER", "TIMEOUT", "0"), ("FAILOVER", "TIMEOUT", "x"),
                     ("FAILOVER", "TIMEOUT", "10", "TIMEOUT", "5"), ("FAILOVER", "TO", "h", "x"),
                     ("FAILOVER", "TO", "h", "1", "TO", "h", "2"), ("FAILOVER", "FORCE", "FORCE"),
                     ("FAILOVER", "TO", "h"), ("FAILOVER", "BOGUS"),
                     ("FAILOVER", "TO", "h", "1", "FORCE", "TIMEOUT", "5"),
                     ("FAILOVER", "TIMEOUT", "-1"), ("CLUSTER", "KEYSLOT", "k"),
                     ("CLUSTER", "MYID"), ("CLUSTER", "SETSLOT", "1", "STABLE"),
                     ("CLUSTER", "COUNTKEYSINSLOT"), ("CLUSTER", "ADDSLOTS"),
                     ("CLUSTER", "RESET", "HARD"), ("CLUSTER", "LINKS")):
            report.equal(a.call(*args), b.call(*args), "%s as redis" % " ".join(args))
        # Another master is refused (a node is always a master), with why.
        got = a.call("REPLICAOF", "127.0.0.1", str(theirs.port))
        report.check(got.startswith(b"-ERR ringkv can't replicate another server"),
                     "REPLICAOF host port refused", got)
        for c in (a, b):
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "-1")
            c.call("SLOWLOG", "RESET")
            c.call("GET", "slow:key")
        report.equal(a.call("SLOWLOG", "LEN"), b":0\r\n", "slowlog-log-slower-than -1 logs nothing")
        for c in (a, b):
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")
            c.call("CONFIG", "RESETSTAT")
            c.call("SET", "stat:a", "1")
            c.call("GET", "stat:a")
            c.call("HSET", "stat:a", "f", "v")
            c.call("INCR", "nosuch", "x")
            c.call("INCRBY", "stat:a", "x")
        for section in ("commandstats", "errorstats"):
            mine = {k: re.sub(r"usec=\d+,usec_per_call=[\d.]+", "", v)
                    for k, v in harness.info_fields(ours.port, "INFO", section).items()}
            ref = {k: re.sub(r"usec=\d+,usec_per_call=[\d.]+", "", v)
                   for k, v in harness.info_fields(theirs.port, "INFO", section).items()}
            mine.pop("cmdstat_info", None), ref.pop("cmdstat_info", None)
            report.equal(mine, ref, "INFO %s after CONFIG RESETSTAT as redis (but times)" % section)
        mine = harness.info_fields(ours.port, "INFO", "latencystats")
        ref = harness.info_fields(theirs.port, "INFO", "latencystats")
        report.equal(sorted(mine), sorted(ref), "INFO latencystats has redis's commands")
        report.check(all(re.match(r"^p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$", v)
                         for v in mine.values()), "latencystats lines in redis's shape", repr(mine))
        hist = harness.parse_reply(a.call("LATENCY", "HISTOGRAM", "set", "get"))
        report.equal(sorted(hist[0::2]), [b"get", b"set"], "LATENCY HISTOGRAM set get")
        report.check(all(h[0] == b"calls" and h[1] == 1 and h[2] == b"histogram_usec" and
                         h[3][1::2] == [1] for h in hist[1::2]),
                     "LATENCY HISTOGRAM: one call each, one bucket", repr(hist))


def check_latency(report, ours):
    with harness.ServerProcess(ours.binary, extra_args=["--enable-debug-command", "yes"],
                               name="latency") as node, harness.RespClient(node.port) as c:
        c.call("CONFIG", "SET", "latency-monitor-threshold", "10")
        c.call("DEBUG", "SLEEP", "0.05")
        latest = harness.parse_reply(c.call("LATENCY", "LATEST"))
        report.check(len(latest) == 1 and latest[0][0] == b"command" and latest[0][2] >= 50,
                     "LATENCY LATEST has the 50 ms command", repr(latest))
        history = harness.parse_reply(c.call("LATENCY", "HISTORY", "command"))
        report.check(len(history) == 1 and history[0][1] >= 50, "LATENCY HISTORY", repr(history))
        graph = harness.parse_reply(c.call("LATENCY", "GRAPH", "command")).decode()
        report.check(graph.startswith("command - high ") and "-" * 80 in graph,
                     "LATENCY GRAPH draws the event", graph)
        doctor = harness.parse_reply(c.call("LATENCY", "DOCTOR")).decode()
        report.check("1. command: 1 latency spikes" in doctor and "Slow Log" in doctor,
                     "LATENCY DOCTOR reports the spike and advises", doctor)
        report.equal(c.call("LATENCY", "RESET", "command", "other"), b":1\r\n", "LATENCY RESET")
        report.equal(c.call("LATENCY", "LATEST"), b"*0\r\n", "nothing left after RESET")
        out = cli(node.port, "LATENCY", "DOCTOR")
        report.check(out.returncode == 0 and b"Dave" in out.stdout, "redis-cli LATENCY DOCTOR",
                     repr(out))


def monitor_lines(port, action, expect):
    """Runs `redis-cli monitor` on `port` while `action()` runs; returns the lines it printed
    once `expect` lines came (or after 10 s)."""
    proc = subprocess.Popen([harness.REDIS_CLI, "-p", str(port), "monitor"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout.readline().strip() == b"OK"
        action()
        lines = []
        deadline = time.time() + 10
        while len(lines) < expect and time.time() < deadline:
            lines.append(proc.stdout.readline().decode().rstrip("\n"))
        return lines
    finally:
        proc.kill()
        proc.wait()


def check_rates_after_resetstat(report, ours, theirs):
    """INFO's instantaneous rates after CONFIG RESETSTAT: the counters start again from 0, and the
    rate sampled across the reset is no wrapped-around difference (as redis: 0 or a small rate)."""
    for server in (ours, theirs):
        with harness.RespClient(server.port) as c:
            c.send(harness.encode_command("PING") * 2000)
            for _ in range(2000):
                c.read()
            time.sleep(1.2)  # a sample after the PINGs: the next rate is taken from it
            c.call("CONFIG", "RESETSTAT")
            time.sleep(1.2)  # a sample after the reset
        fields = harness.info_fields(server.port, "INFO", "stats")
        for name in ("instantaneous_ops_per_sec", "instantaneous_input_kbps",
                     "instantaneous_output_kbps"):
            value = float(fields.get(name, "-1"))
            report.check(0 <= value < 100000, "%s after CONFIG RESETSTAT is a small rate (%s)" % (
                name, server.kind), fields.get(name))


def check_live_tools(report, port, where):
    """redis-cli --stat, --latency-history and LATENCY DOCTOR against `port`."""
    # stdbuf: redis-cli writes through stdio, which holds its lines back when not on a terminal.
    proc = subprocess.Popen(["stdbuf", "-o0", harness.REDIS_CLI, "-p", str(port), "--stat",
                             "-i", "0.2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.0)
    proc.kill()
    text = proc.communicate()[0].decode()
    report.check("keys" in text and re.search(r"^\d+\s+[\d.]+[BKMG]\s+\d+", text, re.M),
                 "redis-cli --stat prints rows (%s)" % where, text[-600:])
    proc = subprocess.Popen(["stdbuf", "-o0", harness.REDIS_CLI, "-p", str(port),
                             "--latency-history", "-i", "1"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    time.sleep(2.3)
    proc.kill()
    text = proc.communicate()[0].decode()
    # Off a terminal redis-cli prints each sample as "min max avg count".
    report.check(re.search(r"^\d+ \d+ [\d.]+ \d+$", text, re.M),
                 "redis-cli --latency-history samples (%s)" % where, text[-400:])
    out = cli(port, "LATENCY", "DOCTOR")
    report.check(out.returncode == 0 and b"Dave" in out.stdout,
                 "redis-cli LATENCY DOCTOR (%s)" % where, repr(out))


MONITORED = [
    ("SET", "mon:k", 'a "quoted"\nvalue\x01'), ("CONFIG", "GET", "maxmemory"), ("AUTH", "secret"),
    ("HELLO", "3", "AUTH", "default", "pw"), ("EVAL", "redis.call('set', 'mon:x', '1')", "0"),
    ("MULTI",), ("SET", "mon:k", "1"), ("INCR", "mon:k"), ("EXEC",), ("BLPOP", "mon:none", "0.01"),
    ("MGET", "mon:k", "mon:x"), ("PING",),
]


def monitored(port):
    """What `redis-cli monitor` on `port` prints while MONITORED runs, without the times and
    client ports that differ between servers."""
    with harness.RespClient(port) as c:
        def action():
            for argv in MONITORED:
                c.call(*argv)
        lines = monitor_lines(port, action, 12)
    return [re.sub(r"^\d+\.\d{6} \[0 (127\.0\.0\.1:\d+|lua)\]",
                   lambda m: "[0 lua]" if m.group(1) == "lua" else "[0 client]", line)
            for line in lines]


def monitor_reset(port):
    """A monitor sends RESET: its +RESET comes, then nothing more is shown to it (its own RESET
    neither), and CLIENT INFO no longer flags it O."""
    with harness.RespClient(port) as m, harness.RespClient(port) as other:
        seen = [m.call("MONITOR")]
        other.call("SET", "mon:r", "1")
        seen.append(re.sub(rb"^\+\d+\.\d{6} \[0 [^]]+\]", b"+T [0 client]", m.read()))
        seen.append(m.call("RESET"))
        other.call("SET", "mon:r", "2")
        seen.append(m.call("PING"))
        info = harness.parse_reply(m.call("CLIENT", "INFO")).decode()
        seen.append(info.split(" flags=")[1].split(" ")[0] if " flags=" in info else info)
    return seen


def check_tools(report, ours, theirs):
    report.equal(monitored(ours.port), monitored(theirs.port),
                 "MONITOR prints what redis prints (passwords redacted, admin commands hidden, "
                 "scripts before their commands, EXEC after its body)")
    report.equal(monitor_reset(ours.port), monitor_reset(theirs.port),
                 "RESET ends MONITOR as in redis")
    for server in (ours, theirs):
        with harness.RespClient(server.port) as c:
            c.call("FLUSHALL")
            c.call("SET", "big:string", "x" * 5000)
            c.call("RPUSH", "big:list", *["e%d" % i for i in range(300)])
            c.call("HSET", "big:hash", *["f%d" % (i // 2) for i in range(100)])
            c.call("SET", "small", "1")
    for flag, want in (("--memkeys", rb"Biggest string found '\"?big:string\"?' has \d+ bytes"),
                       ("--bigkeys", rb"Biggest   list found '\"?big:list\"?' has 300 items")):
        out = cli(ours.port, flag)
        ref = cli(theirs.port, flag)
        report.check(out.returncode == 0 and re.search(want, out.stdout) is not None,
                     "redis-cli %s finds the biggest key" % flag, out.stdout.decode()[-800:])
        if flag == "--memkeys":
            sizes = re.findall(rb"has (\d+) bytes", out.stdout)
            report.check(sizes and all(int(s) > 0 for s in sizes), "--memkeys sizes are not 0",
                         repr(sizes))
        summary = lambda text: re.findall(rb"(\d+) (\w+)s with", text)  # noqa: E731
        report.equal(sorted(summary(out.stdout)), sorted(summary(ref.stdout)),
                     "redis-cli %s: the same counts per type as redis" % flag)
    check_live_tools(report, ours.port, "a node")
    with harness.RespClient(ours.port) as c:
        stats = harness.parse_reply(c.call("MEMORY", "STATS"))
        with harness.RespClient(theirs.port) as r:
            ref = harness.parse_reply(r.call("MEMORY", "STATS"))
        report.equal(stats[0::2], [k for k in ref[0::2] if not k.startswith(b"db.")],
                     "MEMORY STATS has redis's fields (no per-db map)")
        report.check(harness.parse_reply(c.call("MEMORY", "USAGE", "big:string")) > 5000,
                     "MEMORY USAGE of a 5000-byte string")
        report.check(b"<malloc version" in c.call("MEMORY", "MALLOC-STATS"),
                     "MEMORY MALLOC-STATS is glibc's report")
        report.check(b"Sam" in c.call("MEMORY", "DOCTOR"), "MEMORY DOCTOR answers")


def expiry_estimates(port):
    info = harness.info_fields(port, "INFO", "stats")
    return (float(info["expired_stale_perc"]), int(info["expired_time_cap_reached_count"]),
            int(info["expired_keys"]))


# The database the expiring keys go to (the other checks' keys are in database 0).
_EXPIRY_DB = 9


def keys_held(port):
    db = harness.info_fields(port, "INFO", "keyspace").get("db%d" % _EXPIRY_DB, "keys=0")
    return int(db.split(",")[0].split("=")[1])


def load_expiring(port, count, ttl_ms):
    with harness.RespClient(port) as c:
        c.call("SELECT", str(_EXPIRY_DB))
        for start in range(0, count, 5000):
            batch = [("SET", "ex:%d" % i, "v", "PX", str(ttl_ms))
                     for i in range(start, min(count, start + 5000))]
            c.send(b"".join(harness.encode_command(*cmd) for cmd in batch))
            for _ in batch:
                c.read()


def check_expiry_estimates(report, ours, theirs):
    """INFO's estimates of Redis's active expiry loop, beside redis-server's given the same keys:
    expired_stale_perc (the share of sampled keys found expired, a running average) rises while
    cycles find expired keys and falls once none are left; expired_time_cap_reached_count counts
    the cycles whose time budget (25% of a cron period: 0.5 ms at hz 500) ran out before the
    expired keys were deleted. CONFIG SET hz takes effect at once (the cycles run 500 times a
    second), as the time both servers take to delete the same expired keys shows."""
    seen, cleared = {}, {}
    for name, port in (("ringkv", ours.port), ("redis", theirs.port)):
        with harness.RespClient(port) as c:
            c.call("CONFIG", "RESETSTAT")
            fresh = expiry_estimates(port)
            load_expiring(port, 5000, 100)
            time.sleep(0.6)
            rising = expiry_estimates(port)
            time.sleep(3.0)  # 30 cycles at hz 10 finding nothing: 0.95^30 of the peak is left
            falling = expiry_estimates(port)
            c.call("CONFIG", "SET", "hz", "500")
            load_expiring(port, 50000, 50)
            loaded = time.monotonic()
            deadline = loaded + 20
            while keys_held(port) > 0 and time.monotonic() < deadline:
                time.sleep(0.02)
            cleared[name] = time.monotonic() - loaded
            capped = expiry_estimates(port)
            c.call("CONFIG", "SET", "hz", "10")
        report.equal(fresh, (0.0, 0, 0), "%s: no estimates after CONFIG RESETSTAT" % name)
        report.check(rising[0] > 1 and rising[2] == 5000,
                     "%s: the stale share rises while cycles delete expired keys (%s)"
                     % (name, rising,))
        report.check(falling[0] < rising[0] / 2,
                     "%s: and falls once none are left (%s)" % (name, falling,))
        report.check(capped[1] > 0 and capped[2] == 55000,
                     "%s: cycles stopped by their budget are counted (%s)" % (name, capped,))
        seen[name] = (fresh, rising[2], capped[2])
    report.equal(seen["ringkv"], seen["redis"], "expiry estimates: the same steps as redis")
    # CONFIG SET hz changes how often the cycle runs, not only its budget: at hz 10 the 0.5 ms
    # budgets would take a second for these keys.
    report.check(cleared["ringkv"] <= 3 * cleared["redis"] + 0.3,
                 "at hz 500 the expired keys are deleted about as soon as redis deletes them "
                 "(%.2f s, redis %.2f s)" % (cleared["ringkv"], cleared["redis"]))


def check_config_rewrite(report, binary):
    directory = tempfile.mkdtemp(prefix="ringkv-it-rewrite-")
    path = os.path.join(directory, "node.toml")
    port = harness.free_port()
    with open(path, "w") as f:
        f.write("# my node\n# keep this\n[server]\nport = %d\n[log]\nlevel = \"info\"\n" % port)
    node = harness.ServerProcess(binary, port=port, extra_args=["--config", path], name="rewrite")
    node.start()
    try:
        with harness.RespClient(port) as c:
            report.equal(c.call("CONFIG", "SET", "maxmemory", "10mb", "slowlog-max-len", "7"),
                         b"+OK\r\n", "CONFIG SET before the rewrite")
            report.equal(c.call("CONFIG", "REWRITE"), b"+OK\r\n", "CONFIG REWRITE")
            before = harness.parse_reply(c.call("CONFIG", "GET", "*"))
        text = open(path).read()
        report.check(text.startswith("# my node\n# keep this\n# ringkv-server"),
                     "the rewritten file keeps the comment header", text[:200])
        report.check("maxmemory = 10485760" in text and "slowlog-max-len = 7" in text,
                     "the rewritten file has the values set", text)
        report.check('self = ""' in text, "a derived self address is not written")
        node.stop()
        node.start()
        with harness.RespClient(port) as c:
            report.equal(harness.parse_reply(c.call("CONFIG", "GET", "*")), before,
                         "the node restarted from the rewritten file has the same configuration")
            c.call("CONFIG", "REWRITE")
        report.equal(open(path).read(), text, "rewriting again gives the same file")
    finally:
        node.cleanup()
    with harness.ServerProcess(binary, name="nofile") as plain, harness.RespClient(plain.port) as c:
        report.equal(c.call("CONFIG", "REWRITE"),
                     b"-ERR The server is running without a config file\r\n",
                     "CONFIG REWRITE without a file")


def check_cluster(report, binary, theirs, rng):
    with harness.Cluster(binary, 3, name="obs") as cluster:
        ports = cluster.ports
        with harness.RespClient(ports[0]) as c:
            # Redis Cluster's slot subcommands: ringkv's ring has no slots.
            report.equal(c.call("CLUSTER", "KEYSLOT", "k"),
                         b"-ERR This instance has cluster support disabled\r\n",
                         "CLUSTER KEYSLOT on a cluster node")
            for args in (("REPLICAOF", "NO", "ONE"), ("SLAVEOF", "127.0.0.1", "6379"),
                         ("FAILOVER",)):
                want = "-ERR %s not allowed in cluster mode.\r\n" % (
                    "FAILOVER" if args[0] == "FAILOVER" else "REPLICAOF")
                report.equal(c.call(*args), want.encode(),
                             "%s on a cluster node, as Redis Cluster" % " ".join(args))
        # A key node 2 owns, sent to node 1.
        key = next("obs:%d" % i for i in range(10000)
                   if harness.parse_reply(harness.RespClient(ports[0]).call(
                       "CLUSTER", "OWNER", "obs:%d" % i)).decode() == cluster.addresses[1])
        procs = []
        for port in ports[:2]:
            p = subprocess.Popen([harness.REDIS_CLI, "-p", str(port), "monitor"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            assert p.stdout.readline().strip() == b"OK"
            procs.append(p)
        with harness.RespClient(ports[0]) as c:
            c.call("SET", key, "v")
        seen = [p.stdout.readline().decode() for p in procs]
        for p in procs:
            p.kill()
            p.wait()
        report.check(all('"SET" "%s" "v"' % key in line for line in seen),
                     "MONITOR shows the relayed SET on the node used and on the owner", repr(seen))
        with harness.RespClient(ports[1]) as c:
            peers = harness.parse_reply(c.call("CLIENT", "LIST", "TYPE", "peer")).decode()
            normal = harness.parse_reply(c.call("CLIENT", "LIST", "TYPE", "normal")).decode()
            report.check(peers.count("\n") >= 1 and " flags=L " in peers,
                         "peers' links are CLIENT LIST TYPE peer, flagged L", peers)
            report.check(" flags=L " not in normal, "no peer link among normal clients", normal)
            info = dict(line.split(":", 1) for line in harness.parse_reply(
                c.call("INFO", "clients")).decode().splitlines() if ":" in line)
            report.equal(info["connected_clients"], str(normal.count("\n")),
                         "connected_clients counts the clients only")
            report.equal(info["cluster_connections"], str(peers.count("\n")),
                         "cluster_connections counts the peers' links")
            report.check(harness.parse_reply(c.call("CLIENT", "KILL", "TYPE", "normal")) == 0,
                         "CLIENT KILL TYPE normal (SKIPME yes) kills no peer link")
        with harness.RespClient(ports[0]) as c:
            report.equal(c.call("GET", key), b"$1\r\nv\r\n", "relaying still works")
            text = harness.parse_reply(c.call("INFO", "cluster")).decode()
        line = re.search(r"^peer\d+:addr=%s,.*,replies=(\d+),usec_per_reply=(\d+\.\d\d)\r$"
                         % re.escape(cluster.addresses[1]), text, re.M)
        report.check(line is not None and int(line.group(1)) >= 2 and float(line.group(2)) > 0,
                     "INFO cluster: the peer line counts replies and their mean round trip", text)
        for port in ports:
            with harness.RespClient(port) as c:
                c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
        with harness.RespClient(ports[0]) as c:
            c.call("RPUSH", "big:list", *["e%d" % i for i in range(300)])
            c.call("SET", "big:string", "x" * 5000)
            owner = harness.parse_reply(c.call("CLUSTER", "OWNER", "big:list")).decode()
        out = cli(ports[0], "--memkeys")
        report.check(out.returncode == 0 and
                     re.search(rb"Biggest string found '\"?big:string\"?' has \d+ bytes", out.stdout),
                     "redis-cli --memkeys through a cluster node", out.stdout.decode()[-400:])
        out = cli(ports[0], "--bigkeys")
        report.check(out.returncode == 0 and
                     re.search(rb"Biggest   list found '\"?big:list\"?' has 300 items", out.stdout),
                     "redis-cli --bigkeys through a cluster node", out.stdout.decode()[-400:])
        out = cli(ports[cluster.addresses.index(owner)], "SLOWLOG", "GET", "-1")
        report.check(out.returncode == 0 and b"big:list" in out.stdout,
                     "SLOWLOG on the owner has the relayed RPUSH", out.stdout.decode()[-400:])
        check_live_tools(report, ports[0], "a cluster node")
        try:
            parsed = redis.Redis(port=ports[0]).info("everything")
            report.check("cluster_connections" in parsed and "peer0" in parsed,
                         "redis-py info('everything') through a cluster node")
        except Exception as e:  # noqa: BLE001 - any parse error is the failure
            report.check(False, "redis-py info('everything') through a cluster node", repr(e))
        # Cluster-aware tools: the node looks to them like a standalone redis-server.
        ours = subprocess.run([harness.REDIS_CLI, "--cluster", "check", "127.0.0.1:%d" % ports[0]],
                              capture_output=True, timeout=30)
        ref = subprocess.run([harness.REDIS_CLI, "--cluster", "check",
                              "127.0.0.1:%d" % theirs.port], capture_output=True, timeout=30)
        normalize = lambda r: (r.returncode, r.stdout.replace(str(ports[0]).encode(), b"P")  # noqa
                               .replace(str(theirs.port).encode(), b"P"))
        report.equal(normalize(ours), normalize(ref),
                     "redis-cli --cluster check answers as for a standalone redis-server")
        outcomes = []
        for port in (ports[0], theirs.port):
            try:
                redis.RedisCluster(host="127.0.0.1", port=port).ping()
                outcome = "connected"
            except Exception as e:  # noqa: BLE001 - the exception is what is compared
                outcome = "%s: %s" % (type(e).__name__, e)
            outcomes.append(outcome.replace(str(port), "P"))
        report.equal(outcomes[0], outcomes[1],
                     "redis-py RedisCluster treats the node as a standalone redis")
        report.equal(redis.Redis(port=ports[2]).get(key), b"v",
                     "redis-py's plain client works through any node")
        # The whole cluster's digest equals a redis-server's holding the same keys.
        with harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="redis-digest",
                                   extra_args=["--enable-debug-command", "yes"]) as ref, \
                harness.RespClient(ports[0]) as a, harness.RespClient(ref.port) as b:
            for c in (a, b):
                c.call("FLUSHALL")
            load_dataset([a, b], rng)
            want = b.call("DEBUG", "DIGEST")
            for port in ports:
                with harness.RespClient(port) as c:
                    report.equal(c.call("CLUSTER", "DIGEST"), want,
                                 "CLUSTER DIGEST through node %d equals redis's DEBUG DIGEST"
                                 % (ports.index(port) + 1))


def main():
    parser = harness.arg_parser(__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int)
    args = parser.parse_args()
    report = harness.Report("observability")
    rng, _ = harness.seeded_rng(args.seed)
    with harness.ServerProcess(args.server, name="ringkv") as ours, \
            harness.start_oracle() as theirs:
        check_command_docs(report, ours, theirs)
        check_info_fields(report, ours, theirs)
        check_config_names(report, ours, theirs)
        check_debug(report, ours, theirs, rng)
        check_slowlog(report, ours, theirs)
        check_latency(report, ours)
        check_rates_after_resetstat(report, ours, theirs)
        check_expiry_estimates(report, ours, theirs)
        check_tools(report, ours, theirs)
        check_config_rewrite(report, args.server)
        check_lolwut(report, ours, theirs, rng)
        check_cluster(report, args.server, theirs, rng)
    report.finish()


if __name__ == "__main__":
    main()
