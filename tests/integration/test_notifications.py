"""Keyspace notifications (notify-keyspace-events), differentially against redis-server 7.0.15:

1. CONFIG SET/GET of notify-keyspace-events: the canonical form and the error text.
2. Random command sequences over every type, run on both servers with a PSUBSCRIBE __key*__:*
   subscriber on each, under several flag sets: the received message streams must be equal,
   byte for byte.
3. expired (lazy and active expiry) and evicted (maxmemory) events.
4. A 3-node cluster: a subscriber on each node receives each event exactly once, from the node
   that owns the key, whichever node the client wrote through.

    /usr/bin/python3 test_notifications.py --server build/ringkv-server
"""

import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import RespClient, encode_command  # noqa: E402

END_CHANNEL = "__keyend__:done"
KEYS = ["k%d" % i for i in range(4)]
MEMBERS = ["a", "b", "c", "1", "2"]

FLAG_SETS = ["KEA", "AKEn", "Kl$", "Egxshm", "KEzt", "KEng", "Kd$", "KEAm"]


def rand_key(rng):
    return rng.choice(KEYS)


def rand_member(rng):
    return rng.choice(MEMBERS)


def random_command(rng):
    """One write (or read) whose notifications do not depend on chance or the clock."""
    k, k2, m, n = rand_key(rng), rand_key(rng), rand_member(rng), str(rng.randint(-2, 5))
    # Explicit stream IDs ('*' takes the clock's, which differ between the two servers).
    xid = "%d-1" % rng.randint(1, 1000)
    choices = [
        ["SET", k, m], ["SET", k, m, "NX"], ["SET", k, m, "XX", "GET"], ["SET", k, m, "EX", "100"],
        ["SET", k, m, "KEEPTTL"], ["SETNX", k, m], ["SETEX", k, "100", m], ["GETSET", k, m],
        ["GETDEL", k], ["GETEX", k, "EX", "200"], ["GETEX", k, "PERSIST"], ["MSET", k, m, k2, n],
        ["MSETNX", k, m, k2, n], ["APPEND", k, m], ["INCR", k], ["DECRBY", k, n],
        ["INCRBYFLOAT", k, "1.5"], ["SETRANGE", k, "1", m], ["SETRANGE", k, "0", ""], ["GET", k],
        ["DEL", k, k2], ["UNLINK", k], ["EXPIRE", k, "100"], ["EXPIRE", k, "-1"],
        ["PEXPIREAT", k, "1"], ["EXPIRE", k, "50", "NX"], ["PERSIST", k], ["RENAME", k, k2],
        ["RENAMENX", k, k2], ["COPY", k, k2], ["COPY", k, k2, "REPLACE"], ["MOVE", k, "1"],
        ["LPUSH", k, m, n], ["RPUSH", k, m], ["LPUSHX", k, m], ["RPUSHX", k, n], ["LPOP", k],
        ["RPOP", k, "2"], ["LPOP", k, "0"], ["LSET", k, "0", m], ["LINSERT", k, "BEFORE", m, n],
        ["LREM", k, "0", m], ["LTRIM", k, "0", "1"], ["LTRIM", k, "5", "1"],
        ["LMOVE", k, k2, "LEFT", "RIGHT"], ["RPOPLPUSH", k, k2], ["LMPOP", "2", k, k2, "LEFT"],
        ["SADD", k, m, n], ["SREM", k, m], ["SMOVE", k, k2, m], ["SINTERSTORE", k, k2, k],
        ["SUNIONSTORE", k2, k, k2], ["SDIFFSTORE", k, k2], ["SPOP", k, "10"],
        ["HSET", k, m, n], ["HMSET", k, m, n], ["HSETNX", k, m, n], ["HDEL", k, m, "b"],
        ["HINCRBY", k, m, "2"], ["HINCRBYFLOAT", k, m, "0.5"],
        ["ZADD", k, n, m], ["ZADD", k, "INCR", n, m], ["ZADD", k, "NX", n, m], ["ZINCRBY", k, n, m],
        ["ZREM", k, m, "b"], ["ZREMRANGEBYRANK", k, "0", "0"], ["ZREMRANGEBYSCORE", k, "0", "2"],
        ["ZREMRANGEBYLEX", k, "-", "[b"], ["ZPOPMIN", k], ["ZPOPMAX", k, "3"],
        ["ZMPOP", "2", k, k2, "MIN"], ["ZUNIONSTORE", k, "2", k, k2],
        ["ZINTERSTORE", k2, "2", k, k2], ["ZDIFFSTORE", k, "1", k2],
        ["ZRANGESTORE", k2, k, "0", "1"],
        ["XADD", k, xid, m, n], ["XADD", k, "MAXLEN", "2", xid, m, n], ["XDEL", k, "0-1"],
        ["XTRIM", k, "MAXLEN", "1"], ["XGROUP", "CREATE", k, "g", "$", "MKSTREAM"],
        ["XGROUP", "CREATE", k, "g2", "0"], ["XREADGROUP", "GROUP", "g", m, "STREAMS", k, ">"],
        ["XGROUP", "CREATECONSUMER", k, "g", m], ["XGROUP", "DELCONSUMER", k, "g", m],
        ["XGROUP", "SETID", k, "g", "0"], ["XGROUP", "DESTROY", k, "g"],
        ["XCLAIM", k, "g", m, "0", "0-1", "1-1"], ["XSETID", k, "99999999999999-0"],
        ["SETBIT", k, "3", "1"], ["SETBIT", k, "3", "0"], ["BITFIELD", k, "SET", "u8", "0", n],
        ["BITOP", "OR", k, k2, k], ["PFADD", k, m, n], ["PFMERGE", k, k2],
        ["GEOADD", k, "13.36", "38.11", m], ["GEOSEARCHSTORE", k2, k, "FROMLONLAT", "13.3", "38.1",
                                               "BYRADIUS", "50", "km", "ASC"],
        ["SORT", k, "ALPHA", "STORE", k2], ["BLPOP", k, k2, "0.01"], ["BZPOPMAX", k, "0.01"],
        ["BLMOVE", k, k2, "RIGHT", "LEFT", "0.01"],
        ["EVAL", "redis.call('RPUSH', KEYS[1], 'e'); return redis.call('LPOP', KEYS[1])", "1", k],
        ["FLUSHDB"],
        # Reads: nothing but keymiss (class m) when the key is absent, or no event at all where
        # Redis looks the key up without notifying (OBJECT).
        ["EXISTS", k, k2], ["TYPE", k], ["STRLEN", k], ["GETRANGE", k, "0", "2"], ["MGET", k, k2],
        ["LRANGE", k, "0", "-1"], ["LINDEX", k, "0"], ["LPOS", k, m], ["HGET", k, m],
        ["HGETALL", k], ["SCARD", k], ["SISMEMBER", k, m], ["SINTERCARD", "2", k, k2],
        ["ZSCORE", k, m], ["ZRANGE", k, "0", "-1"], ["ZINTERCARD", "2", k, k2],
        ["ZUNION", "2", k, k2], ["XRANGE", k, "-", "+"], ["XLEN", k], ["XPENDING", k, "g"],
        ["XAUTOCLAIM", k, "g", m, "0", "0-0"], ["XREAD", "STREAMS", k, "0"], ["PFCOUNT", k, k2],
        ["BITCOUNT", k], ["GEOPOS", k, m], ["OBJECT", "ENCODING", k], ["TOUCH", k],
        ["SORT_RO", k, "ALPHA"], ["LCS", k, k2],
    ]
    return rng.choice(choices)


def collect(client):
    """Every message up to the end marker, as raw bytes."""
    data = b""
    marker = encode_command("pmessage", "__key*__:*", END_CHANNEL, "x")
    deadline = time.time() + 10
    while marker not in data and time.time() < deadline:
        got, closed = client.read_available(0.2)
        data += got
        if closed:
            break
    client.sock.settimeout(10.0)
    return data.split(marker)[0]


def subscriber(port):
    sub = RespClient(port)
    sub.send(encode_command("PSUBSCRIBE", "__key*__:*"))
    sub.read()
    return sub


def split_messages(raw):
    """A stream of pmessage pushes as a list of (channel, payload)."""
    out = []
    pos = 0
    while pos < len(raw):
        value, pos = harness._parse(raw, pos)
        out.append((value[2], value[3]))
    return out


def same_members(a, b):
    """Whether two replies hold the same values, in any order at any depth."""
    def canon(v):
        if isinstance(v, list):
            return sorted((canon(x) for x in v), key=repr)
        return v
    return canon(harness.parse_reply(a)) == canon(harness.parse_reply(b))


def run_differential(report, servers, flags, seed, count):
    rng = random.Random(seed)
    clients = [RespClient(s.port) for s in servers]
    for c in clients:
        c.call("FLUSHALL")
        c.call("CONFIG", "SET", "notify-keyspace-events", flags)
    subs = [subscriber(s.port) for s in servers]
    mismatched = []
    for _ in range(count):
        if rng.random() < 0.05:
            # A transaction: the events of its commands, as they run inside EXEC.
            body = [random_command(rng) for _ in range(3)]
            cmds = [["MULTI"]] + body + [["EXEC"]]
        else:
            cmds = [random_command(rng)]
        # SPOP's reply lists a hash-table set in its table's order, which is ringkv's own.
        unordered = any(cmd[0] == "SPOP" for cmd in cmds)
        for cmd in cmds:
            replies = [c.call(*cmd) for c in clients]
            if replies[0] != replies[1] and not (unordered and same_members(*replies)):
                mismatched.append((cmd, replies))
    for c in clients:
        c.call("PUBLISH", END_CHANNEL, "x")
    streams = [collect(s) for s in subs]
    report.check(not mismatched, "flags %s seed %d: the same replies" % (flags, seed),
                 repr(mismatched[:3]))
    if streams[0] != streams[1]:
        got, want = split_messages(streams[0]), split_messages(streams[1])
        first = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                     min(len(got), len(want)))
        report.check(False, "flags %s seed %d: the same notifications" % (flags, seed),
                     "%d vs %d messages; first difference at %d:\n      ringkv %r\n      redis  %r"
                     % (len(got), len(want), first, got[first:first + 6], want[first:first + 6]))
    else:
        report.check(True, "flags %s seed %d: the same notifications" % (flags, seed))
    for c in clients + subs:
        c.close()


def check_config(report, servers):
    for value in ["KEA", "AKEn", "Kn", "gxE", "", "KEAm", "Eg$lshzxetdn", "xyz", "KE?"]:
        replies = []
        for s in servers:
            with RespClient(s.port) as c:
                replies.append(c.call("CONFIG", "SET", "notify-keyspace-events", value) +
                               c.call("CONFIG", "GET", "notify-keyspace-events"))
        report.equal(replies[0], replies[1], "CONFIG SET/GET notify-keyspace-events %r" % value)


def check_expiry(report, servers):
    """Lazy and active expiry publish expired, as Redis does."""
    streams = []
    for s in servers:
        with RespClient(s.port) as c:
            c.call("FLUSHALL")
            c.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
            sub = subscriber(s.port)
            c.call("SET", "lazy", "v", "PX", "30")
            c.call("SET", "active", "v", "PX", "30")
            time.sleep(0.05)
            c.call("GET", "lazy")  # expired by the lookup (or already by the cycle)
            time.sleep(0.6)  # the active cycle (hz 10) collects the other one
            c.call("PUBLISH", END_CHANNEL, "x")
            msgs = split_messages(collect(sub))
            sub.close()
        expired = sorted(m for m in msgs if b"expired" in m[0] or m[1] == b"expired")
        streams.append(expired)
    report.equal(streams[0], streams[1], "expired events of lazy and active expiry")
    report.check(len(streams[0]) == 4, "two keys, two expired messages each", repr(streams[0]))


def check_eviction(report, server):
    with RespClient(server.port) as c:
        c.call("FLUSHALL")
        c.call("CONFIG", "SET", "notify-keyspace-events", "Ee")
        sub = subscriber(server.port)
        used = int(harness.info_fields(server.port, "INFO", "memory")["used_memory"])
        c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
        c.call("CONFIG", "SET", "maxmemory", str(used + 200000))
        value = "x" * 1000
        for i in range(600):
            c.call("SET", "ev%d" % i, value)
        evicted = int(harness.info_fields(server.port, "INFO", "stats")["evicted_keys"])
        c.call("CONFIG", "SET", "maxmemory", "0")
        c.call("PUBLISH", END_CHANNEL, "x")
        msgs = split_messages(collect(sub))
        sub.close()
    report.check(evicted > 0, "maxmemory evicted keys", str(evicted))
    report.equal(len(msgs), evicted, "one evicted event per evicted key")
    report.check(all(ch == b"__keyevent@0__:evicted" for ch, _ in msgs),
                 "on __keyevent@0__:evicted", repr(msgs[:3]))


def check_cluster(report, binary, copies):
    """With `copies` copies of each key (replication-factor): replicas publish nothing."""
    with harness.Cluster(binary, 3, name="notify", request_timeout=2000, connect_timeout=500,
                         cluster_options={"replication-factor": copies}) as cluster:
        for port in cluster.ports:
            with RespClient(port) as c:
                c.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
        subs = [subscriber(port) for port in cluster.ports]
        keys = ["ck%d" % i for i in range(30)]
        time.sleep(0.1)
        for i, key in enumerate(keys):
            with RespClient(cluster.ports[i % 3]) as c:
                c.call("SET", key, "v")
                c.call("LPUSH", key + ":l", "a")
                c.call("DEL", key + ":l")
        # Expiring keys: the primary's expiry publishes, its replica's copy does not.
        short = ["cx%d" % i for i in range(6)]
        with RespClient(cluster.ports[0]) as c:
            for key in short:
                c.call("SET", key, "v", "PX", "100")
        time.sleep(0.8)
        for port in cluster.ports:
            with RespClient(port) as c:
                c.call("PUBLISH", END_CHANNEL, "x")
        want = []
        for key in short:
            for event in ("set", "expire", "expired"):
                want += [(b"__keyspace@0__:" + key.encode(), event.encode()),
                         (b"__keyevent@0__:" + event.encode(), key.encode())]
        for key in keys:
            want += [(b"__keyspace@0__:" + key.encode(), b"set"),
                     (b"__keyevent@0__:set", key.encode()),
                     (b"__keyspace@0__:" + key.encode() + b":l", b"lpush"),
                     (b"__keyevent@0__:lpush", key.encode() + b":l"),
                     (b"__keyspace@0__:" + key.encode() + b":l", b"del"),
                     (b"__keyevent@0__:del", key.encode() + b":l")]
        for i, sub in enumerate(subs):
            got = split_messages(collect(sub))
            missing = [m for m in want if m not in got]
            extra = [m for m in got if m not in want]
            report.check(sorted(got) == sorted(want),
                         "rf %d: node %d's subscriber gets every event once" % (copies, i + 1),
                         "%d messages, want %d; missing %r; unexpected %r"
                         % (len(got), len(want), missing[:4], extra[:4]))
            # Per key, the order is the owner's.
            for key in keys[:5]:
                mine = [m for m in got if m[0].endswith(b":" + key.encode() + b":l")]
                report.equal([m[1] for m in mine], [b"lpush", b"del"],
                             "rf %d: node %d: %s's events in order" % (copies, i + 1, key))
            sub.close()


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_notifications")
    with harness.ServerProcess(args.server, name="notify").start() as ringkv, \
            harness.start_oracle("notify-redis") as redis:
        servers = [ringkv, redis]
        check_config(report, servers)
        seed = int(os.environ.get("RINGKV_SEED", random.randrange(1 << 30)))
        print("seed %d" % seed)
        for i, flags in enumerate(FLAG_SETS):
            run_differential(report, servers, flags, seed + i, harness.scaled(300, 50))
        check_expiry(report, servers)
        check_eviction(report, ringkv)
    for copies in (1, 2):
        check_cluster(report, args.server, copies)
    report.finish()


if __name__ == "__main__":
    main()
