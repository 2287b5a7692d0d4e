"""ringkv as a real cluster: 3 nodes (balanced ring), 3 nodes on a crc32 ring with a short
request timeout, and 2 nodes that disagree about the ring. Checks that every key lives on the node
CLUSTER OWNER names and that all nodes agree; that pipelines mixing owners answer in order; that
writes are read back through relays; split multi-key commands, CROSSSLOT refusals and hash tags;
keyspace-wide commands (SCAN, KEYS, DBSIZE, FLUSHALL, FLUSHDB, RANDOMKEY); RESP3 through the
relay; a killed peer (kill -9, then a restart) and a hung one (SIGSTOP, then SIGCONT) failing only
their own keys, promptly; a ring mismatch being reported; and the CLUSTER and INFO fields.

    /usr/bin/python3 test_cluster.py --server build/ringkv-server
"""

import os
import re
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import cluster_support as cs  # noqa: E402
import redis  # noqa: E402


# -- ownership --------------------------------------------------------------------------------


def check_ownership(report, cluster, label, min_share):
    """3000 keys written through node 1 land on their owners: each node's INFO keyspace count is
    the number of keys CLUSTER OWNER gives it, and every node names the same owner for each key."""
    ports = cluster.ports
    with harness.RespClient(ports[0]) as c:
        report.equal(c.call("FLUSHALL"), cs.OK, "%s: FLUSHALL" % label)
    keys = ["own:%d:%s" % (i, "x" * (i % 7)) for i in range(3000)]
    replies = cs.pipeline(ports[0], [("SET", k, "v") for k in keys])
    report.equal(replies.count(cs.OK), len(keys), "%s: 3000 SETs through node 1 answer OK" % label)
    views = [cs.owners_of(p, keys) for p in ports]
    for n in range(1, len(ports)):
        diff = [k for k, a, b in zip(keys, views[0], views[n]) if a != b]
        report.check(not diff, "%s: node %d names the same owner as node 1 for all 3000 keys"
                     % (label, n + 1), "%d differ, e.g. %r" % (len(diff), diff[:3]))
    report.check(set(views[0]) <= set(cluster.addresses),
                 "%s: every owner is a member" % label, repr(set(views[0])))
    for n, addr in enumerate(cluster.addresses):
        owned = views[0].count(addr)
        report.equal(cs.keyspace_count(ports[n]), owned,
                     "%s: node %d's INFO keyspace counts exactly the keys it owns" % (label, n + 1))
        report.check(owned >= min_share * len(keys), "%s: node %d owns a fair share" % (
            label, n + 1), "%d of %d keys" % (owned, len(keys)))
        stored = cs.local_keys(ports[n])
        want = [k for k, o in zip(keys, views[0]) if o == addr]
        report.check(sorted(stored) == sorted(want),
                     "%s: node %d stores exactly the keys it owns" % (label, n + 1),
                     "stored %d, owns %d; e.g. misplaced %r" % (
                         len(stored), len(want), sorted(set(stored) ^ set(want))[:3]))
    # A hash tag places a key by its tag alone.
    tagged = cs.owners_of(ports[1], ["{own:7}", "{own:7}a", "x{own:7}y", "{own:7}{z}"])
    tag_owner = cs.owners_of(ports[1], ["own:7"])[0]
    report.equal(tagged, [tag_owner] * 4, "%s: keys tagged {own:7} go where own:7 goes" % label)
    with harness.RespClient(ports[2]) as c:
        report.equal(c.call("DBSIZE"), cs.integer(len(keys)), "%s: DBSIZE through node 3" % label)
        report.equal(c.call("FLUSHALL"), cs.OK, "%s: FLUSHALL after the ownership check" % label)


# -- pipelines and read-your-writes -----------------------------------------------------------


def check_pipelines(report, cluster):
    """5000 pipelined commands over all owners, in one write, answered in order as a model of
    the keyspace predicts; then the same kind of mix through redis-py pipelines."""
    rng = harness.random.Random(42)
    names = ["pk:%d" % i for i in range(120)]
    counters = ["ctr:%d" % i for i in range(30)]
    owner = dict(zip(names + counters, cs.owners_of(cluster.ports[0], names + counters)))
    split_pairs = [(a, b) for a in names[:20] for b in names[20:40] if owner[a] != owner[b]]
    model = {}
    requests, expected = [], []
    for i in range(5000):
        r = rng.random()
        if r < 0.3:
            k, v = rng.choice(names), "v%d" % i
            requests.append(("SET", k, v))
            expected.append(cs.OK)
            model[k] = v
        elif r < 0.5:
            k = rng.choice(names)
            requests.append(("GET", k))
            expected.append(cs.bulk(model[k]) if k in model else cs.NIL)
        elif r < 0.65:
            k = rng.choice(counters)
            model[k] = str(int(model.get(k, "0")) + 1)
            requests.append(("INCR", k))
            expected.append(cs.integer(int(model[k])))
        elif r < 0.77:
            ks = [rng.choice(names) for _ in range(rng.randint(2, 6))]
            requests.append(("MGET", *ks))
            expected.append(cs.array([cs.bulk(model[k]) if k in model else cs.NIL for k in ks]))
        elif r < 0.82:
            ks = list({rng.choice(names) for _ in range(3)})
            requests.append(("DEL", *ks))
            expected.append(cs.integer(sum(model.pop(k, None) is not None for k in ks)))
        elif r < 0.87:
            requests.append(rng.choice([("GET",), ("MGET",), ("INCR", "a", "b"), ("SET", "x")]))
            expected.append(b"-ERR wrong number of arguments for '%s' command\r\n"
                            % requests[-1][0].lower().encode())
        elif r < 0.92:
            a, b = rng.choice(split_pairs)
            requests.append((rng.choice(["RENAME", "RENAMENX", "COPY"]), a, b))
            expected.append(cs.CROSSSLOT)
        elif r < 0.95:
            requests.append(("nosuch", "x"))
            expected.append(b"-ERR unknown command 'nosuch', with args beginning with: 'x' \r\n")
        else:
            ks = [rng.choice(names) for _ in range(rng.randint(1, 4))]
            requests.append(("EXISTS", *ks))
            expected.append(cs.integer(sum(k in model for k in ks)))
    for n, port in enumerate(cluster.ports):
        # Each node starts from an empty keyspace, so the same model predicts every run.
        with harness.RespClient(port) as c:
            c.call("FLUSHALL")
        replies = cs.pipeline(port, requests)
        bad = [i for i, (got, want) in enumerate(zip(replies, expected)) if got != want]
        report.check(not bad, "5000 pipelined commands through node %d answer in order" % (n + 1),
                     "%d wrong; first #%d %r: got %r want %r" % (
                         len(bad), bad[0], requests[bad[0]], replies[bad[0]], expected[bad[0]])
                     if bad else "")
        report.equal(len(replies), len(requests), "node %d answered all 5000" % (n + 1))
    check_redis_py_pipelines(report, cluster, names, split_pairs)
    check_redis_py_info(report, cluster)


def check_redis_py_info(report, cluster):
    """redis-py parses every INFO line of a cluster node (it splits "name:k=v,k=v" values into
    maps), and the per-peer lines read as maps of their fields."""
    r = redis.Redis(port=cluster.ports[0])
    try:
        info = r.info("all")
        report.check("redis_version" in info and "cluster_enabled" in info,
                     "redis-py info('all') on a cluster node parses", repr(sorted(info)[:20]))
        peers = sorted(v["addr"] for k, v in info.items()
                       if re.fullmatch(r"peer\d+", k) and isinstance(v, dict))
        report.equal(peers, sorted("127.0.0.1:%d" % p for p in cluster.ports[1:]),
                     "redis-py reads each INFO cluster peer line as a map with its address")
        report.check("redis_version" in r.info(), "redis-py info() on a cluster node parses")
    except (ValueError, redis.RedisError) as e:
        report.check(False, "redis-py info() on a cluster node raised %r" % e)
    finally:
        r.close()


def check_redis_py_pipelines(report, cluster, names, split_pairs):
    for n, port in enumerate(cluster.ports):
        r = redis.Redis(port=port)
        r.flushall()
        pipe = r.pipeline(transaction=False)
        want = []
        for i, k in enumerate(names):
            pipe.set(k, "py%d" % i)
            want.append(True)
            pipe.get(k)
            want.append(b"py%d" % i)
            pipe.incr("c:%s" % k)
            want.append(1)
        pipe.mget(names)
        want.append([b"py%d" % i for i in range(len(names))])
        pipe.rename(*split_pairs[0])
        pipe.delete(*names)
        want.append(len(names))
        got = pipe.execute(raise_on_error=False)
        crossslot = got.pop(-2)
        report.equal(got, want, "redis-py pipeline of %d commands through node %d" % (
            len(want) + 1, n + 1))
        report.check(isinstance(crossslot, redis.ResponseError) and "CROSSSLOT" in str(crossslot),
                     "redis-py pipeline: CROSSSLOT in its place (node %d)" % (n + 1),
                     repr(crossslot))
        r.close()


def check_read_your_writes(report, cluster):
    """SET then GET of the same remote key, pipelined, always reads the new value; INCR chains
    on a remote key count up by one; a split MGET sees a just-relayed SET."""
    by_node = cs.keys_by_owner(cluster, "ryw:", 2)
    remote = by_node[1][0]  # owned by node 2, written through node 1
    requests, expected = [], []
    for i in range(1000):
        v = "value-%d" % i
        requests += [("SET", remote, v), ("GET", remote)]
        expected += [cs.OK, cs.bulk(v)]
    replies = cs.pipeline(cluster.ports[0], requests)
    bad = sum(g != w for g, w in zip(replies, expected))
    report.equal(bad, 0, "1000 pipelined SET+GET pairs of a remote key read their own write")

    ctr = by_node[2][0]  # owned by node 3
    requests = [("INCR", ctr)] * 2000
    replies = cs.pipeline(cluster.ports[0], requests)
    report.equal(replies, [cs.integer(i) for i in range(1, 2001)],
                 "2000 pipelined INCRs of a remote key give 1..2000")

    local, other = by_node[0][0], by_node[2][1]
    requests, expected = [], []
    for i in range(300):
        requests += [("SET", local, "l%d" % i), ("SET", other, "o%d" % i),
                     ("MGET", other, local, remote)]
        expected += [cs.OK, cs.OK, cs.array([cs.bulk("o%d" % i), cs.bulk("l%d" % i), cs.bulk("value-999")])]
    replies = cs.pipeline(cluster.ports[1], requests)
    report.equal(sum(g != w for g, w in zip(replies, expected)), 0,
                 "300 rounds of SET, SET, split MGET through node 2 read their own writes")

    # Large values through the relay, pipelined.
    requests, expected = [], []
    for i in range(24):
        v = b"%d" % i + b"x" * (1 << 20 if i % 6 == 0 else 150000)
        requests += [("SET", by_node[1][1], v), ("GET", by_node[1][1])]
        expected += [cs.OK, cs.bulk(v)]
    replies = cs.pipeline(cluster.ports[2], requests)
    bad = [i for i, (g, w) in enumerate(zip(replies, expected)) if g != w]
    report.check(not bad, "24 pipelined SET+GET pairs of 150 kB-1 MB values through a relay",
                 "%d wrong, first #%d: %r" % (len(bad), bad[0], replies[bad[0]][:80])
                 if bad else "")

    # A protocol switch or QUIT right after relayed requests applies only to what follows it.
    missing = "ryw:missing:%s" % remote
    replies = cs.pipeline(cluster.ports[0], [("GET", missing), ("HELLO", "3"), ("GET", missing),
                                          ("MGET", remote, missing), ("HELLO", "2"),
                                          ("GET", missing)])
    report.equal([replies[0], replies[2], replies[3], replies[5]],
                 [cs.NIL, b"_\r\n", b"*2\r\n$9\r\nvalue-999\r\n_\r\n", cs.NIL],
                 "relayed replies follow the protocol of their own request around HELLO")
    with harness.RespClient(cluster.ports[0]) as c:
        c.send(b"".join(harness.encode_command(*a) for a in [
            ("GET", remote), ("INCR", ctr), ("MGET", remote, local), ("QUIT",)]))
        out, closed = c.read_available(2.0)
    report.equal((out, closed), (cs.bulk("value-999") + cs.integer(2001) + cs.array(
        [cs.bulk("value-999"), cs.bulk("l299")]) + cs.OK, True),
        "QUIT after relayed requests: their replies come first, then +OK and the close")

    # Several clients at once, each with its own remote counter, interleaved on shared links.
    results = {}

    def client(i):
        key = "{ryw-%d}c" % i
        results[i] = cs.pipeline(cluster.ports[i % 3], [("INCR", key)] * 500)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report.check(all(results[i] == [cs.integer(j) for j in range(1, 501)] for i in range(6)),
                 "6 concurrent clients' INCR chains each count 1..500")


# -- multi-key and CROSSSLOT ------------------------------------------------------------------


def check_multikey(report, cluster):
    ports = cluster.ports
    keys = ["mk:%d" % i for i in range(200)]
    owners = cs.owners_of(ports[0], keys)
    report.check(len(set(owners)) == 3, "200 keys span all 3 owners", repr(set(owners)))
    with harness.RespClient(ports[0]) as c:
        c.call("FLUSHALL")
        flat = [x for i, k in enumerate(keys) for x in (k, "val%d" % i)]
        report.equal(c.call("MSET", *flat), cs.OK, "MSET of 200 keys over all owners")
    for n, addr in enumerate(cluster.addresses):
        report.equal(cs.keyspace_count(ports[n]), owners.count(addr),
                     "after MSET node %d holds exactly its own keys" % (n + 1))
    want_all = cs.array([cs.bulk("val%d" % i) for i in range(200)])
    for n, port in enumerate(ports):
        with harness.RespClient(port) as c:
            report.equal(c.call("MGET", *keys), want_all,
                         "MGET of the 200 keys through node %d, in order" % (n + 1))
            mixed = [keys[5], "mk:missing", keys[150], keys[5], "other:1", keys[77]]
            report.equal(c.call("MGET", *mixed), cs.array(
                [cs.bulk("val5"), cs.NIL, cs.bulk("val150"), cs.bulk("val5"), cs.NIL, cs.bulk("val77")]),
                "MGET with missing and repeated keys through node %d" % (n + 1))
            report.equal(c.call("EXISTS", *keys, "nope1", keys[0], keys[0]), cs.integer(202),
                         "EXISTS over all owners sums (repeats count) via node %d" % (n + 1))
            report.equal(c.call("TOUCH", *keys[:50], "nope2"), cs.integer(50),
                         "TOUCH over owners sums via node %d" % (n + 1))
    with harness.RespClient(ports[1]) as c:
        report.equal(c.call("DEL", *keys[:60], "nope3", keys[0]), cs.integer(60),
                     "DEL of 60 keys over owners (plus a missing and a repeat) answers 60")
        report.equal(c.call("UNLINK", *keys[40:100]), cs.integer(40),
                     "UNLINK over owners counts only keys still there")
        report.equal(c.call("EXISTS", *keys), cs.integer(100), "100 keys remain")
        report.equal(c.call("DBSIZE"), cs.integer(100), "DBSIZE after DEL/UNLINK")
        report.equal(c.call("MGET", keys[0], keys[99], keys[100]),
                     cs.array([cs.NIL, cs.NIL, cs.bulk("val100")]), "deleted keys read as nil")
    remaining = owners[100:]
    for n, addr in enumerate(cluster.addresses):
        report.equal(cs.keyspace_count(ports[n]), remaining.count(addr),
                     "after DEL/UNLINK node %d holds exactly its remaining keys" % (n + 1))


def check_crossslot(report, cluster):
    ports = cluster.ports
    by_node = cs.keys_by_owner(cluster, "xs:", 2)
    a, b = by_node[0][0], by_node[1][0]
    with harness.RespClient(ports[2]) as c:
        c.call("MSET", a, "A", b, "B")
        for argv in (("MSETNX", a, "1", b, "2"), ("MSETNX", "xs:new1", "1", b, "2", a, "3"),
                     ("RENAME", a, b), ("RENAMENX", a, b), ("COPY", a, b),
                     ("COPY", a, b, "REPLACE"), ("rename", b, a)):
            report.equal(c.call(*argv), cs.CROSSSLOT, "%s across owners is CROSSSLOT" % (argv,))
        report.equal(c.call("MGET", a, b, "xs:new1"), cs.array([cs.bulk("A"), cs.bulk("B"), cs.NIL]),
                     "refused commands changed nothing")
        report.equal(c.call("MSETNX", a, "1"), cs.integer(0),
                     "MSETNX of one existing key is no CROSSSLOT")
        report.equal(c.call("RENAME", a, a), cs.OK, "RENAME of a key to itself is no CROSSSLOT")
    # With a shared hash tag the atomic commands run on the tag's owner, through every node.
    for n, port in enumerate(ports):
        t = "{t%d}" % n
        with harness.RespClient(port) as c:
            steps = [
                (("MSETNX", t + "a", "1", t + "b", "2"), cs.integer(1)),
                (("MSETNX", t + "a", "9", t + "c", "9"), cs.integer(0)),
                (("RENAME", t + "a", t + "c"), cs.OK),
                (("RENAMENX", t + "b", t + "c"), cs.integer(0)),
                (("RENAMENX", t + "b", t + "d"), cs.integer(1)),
                (("COPY", t + "c", t + "e"), cs.integer(1)),
                (("COPY", t + "c", t + "d"), cs.integer(0)),
                (("COPY", t + "c", t + "d", "REPLACE"), cs.integer(1)),
                (("MGET", t + "a", t + "b", t + "c", t + "d", t + "e"),
                 cs.array([cs.NIL, cs.NIL, cs.bulk("1"), cs.bulk("1"), cs.bulk("1")])),
            ]
            for argv, want in steps:
                report.equal(c.call(*argv), want, "tag %s via node %d: %s" % (t, n + 1, argv))
        tag_owner = cs.owners_of(port, [t])[0]
        report.equal(cs.keyspace_count(ports[cluster.addresses.index(tag_owner)]) >= 3, True,
                     "the {t%d} keys live on the tag's owner" % n)


# -- keyspace-wide commands -------------------------------------------------------------------


def check_keyspace_wide(report, cluster):
    ports = cluster.ports
    keys = ["sk:%d" % i for i in range(5000)]
    with harness.RespClient(ports[1]) as c:
        report.equal(c.call("FLUSHALL"), cs.OK, "FLUSHALL before the SCAN check")
        for i in range(0, 5000, 500):
            c.call("MSET", *[x for k in keys[i:i + 500] for x in (k, "1")])
        report.equal(c.call("DBSIZE"), cs.integer(5000), "DBSIZE is 5000 after loading")
    counts = [cs.keyspace_count(p) for p in ports]
    report.equal(sum(counts), 5000, "INFO keyspace counts of the nodes sum to DBSIZE")
    report.check(all(counts), "every node holds some of the 5000 keys", repr(counts))
    everything = set(k.encode() for k in keys)
    for n, port in enumerate(ports):
        r = redis.Redis(port=port)
        seen = list(r.scan_iter())
        report.equal(len(seen), 5000, "scan_iter via node %d yields 5000 keys" % (n + 1))
        report.check(set(seen) == everything and len(set(seen)) == len(seen),
                     "scan_iter via node %d returns each key exactly once" % (n + 1))
        seen = list(r.scan_iter(match="sk:1*", count=100))
        want = {k for k in everything if k.startswith(b"sk:1")}
        report.check(sorted(seen) == sorted(want), "scan_iter MATCH sk:1* COUNT 100 via node %d"
                     % (n + 1), "%d keys, want %d" % (len(seen), len(want)))
        seen = list(r.scan_iter(match="sk:4?9", count=7, _type="string"))
        want = {b"sk:4%d9" % d for d in range(10)}
        report.check(sorted(seen) == sorted(want), "scan_iter MATCH sk:4?9 COUNT 7 TYPE string "
                     "via node %d" % (n + 1), repr(seen))
        report.equal(list(r.scan_iter(_type="hash")), [], "scan_iter TYPE hash is empty")
        report.equal(r.dbsize(), 5000, "DBSIZE via node %d" % (n + 1))
        got = r.keys("*")
        report.check(len(got) == 5000 and set(got) == everything,
                     "KEYS * via node %d has each key once" % (n + 1), "%d keys" % len(got))
        report.equal(sorted(r.keys("sk:12?")), sorted(b"sk:12%d" % d for d in range(10)),
                     "KEYS sk:12? via node %d" % (n + 1))
        randoms = {r.randomkey() for _ in range(40)}
        report.check(randoms <= everything, "RANDOMKEY via node %d returns existing keys"
                     % (n + 1), repr(randoms))
        owners = set(cs.owners_of(port, [k.decode() for k in randoms]))
        report.check(len(owners) >= 2, "40 RANDOMKEYs via node %d come from several nodes"
                     % (n + 1), repr(owners))
        r.close()
    with harness.RespClient(ports[0]) as c:
        # The scan cursor is a position: an iteration can start over from 0 at any time.
        first = harness.parse_reply(c.call("SCAN", "0", "COUNT", "10"))
        report.check(first[0] != b"0" and 1 <= len(first[1]) <= 50,
                     "SCAN 0 COUNT 10 returns a batch and a nonzero cursor", repr(first)[:200])
        report.equal(c.call("FLUSHDB"), cs.OK, "FLUSHDB via node 1")
        for n, port in enumerate(ports):
            report.equal(cs.keyspace_count(port), 0, "FLUSHDB emptied node %d" % (n + 1))
        report.equal(c.call("RANDOMKEY"), cs.NIL, "RANDOMKEY of an empty cluster is nil")
        cursor, found, calls = b"0", [], 0
        while calls < 20:
            calls += 1
            cursor, batch = harness.parse_reply(c.call("SCAN", cursor))
            found += batch
            if cursor == b"0":
                break
        report.check(cursor == b"0" and not found and calls <= len(ports),
                     "a SCAN walk of an empty cluster ends after one call per node, empty",
                     "%d calls, %r" % (calls, found[:5]))
        c.call("MSET", *[x for k in keys[:300] for x in (k, "1")])
        c.call("SET", "only", "1")
    with harness.RespClient(ports[2]) as c:
        report.equal(c.call("FLUSHALL", "ASYNC"), cs.OK, "FLUSHALL ASYNC via node 3")
        report.equal(c.call("DBSIZE"), cs.integer(0), "DBSIZE 0 after FLUSHALL")
        report.equal(c.call("KEYS", "*"), cs.array([]), "KEYS * empty after FLUSHALL")
        for n, port in enumerate(ports):
            report.equal(cs.keyspace_count(port), 0, "FLUSHALL emptied node %d" % (n + 1))
        c.call("SET", "lonely", "1")
        for n, port in enumerate(ports):
            with harness.RespClient(port) as d:
                report.equal(d.call("RANDOMKEY"), cs.bulk("lonely"),
                             "RANDOMKEY with one key in the cluster, via node %d" % (n + 1))
        report.equal(c.call("FLUSHALL", "BAD"), b"-ERR syntax error\r\n",
                     "FLUSHALL BAD is a syntax error")
        report.equal(c.call("DBSIZE"), cs.integer(1), "a rejected FLUSHALL flushed nothing")
        c.call("FLUSHALL")


# -- RESP3 --------------------------------------------------------------------------------------


def check_resp3(report, cluster):
    by_node = cs.keys_by_owner(cluster, "r3:", 2)
    local, remote2, remote3 = by_node[0][0], by_node[1][0], by_node[2][0]
    with harness.RespClient(cluster.ports[0]) as c:
        hello = harness.parse_reply(c.call("HELLO", "3"))
        report.equal(hello.get(b"proto") if isinstance(hello, dict) else hello, 3,
                     "HELLO 3 switches node 1 to RESP3")
        report.equal(c.call("GET", remote2), b"_\r\n", "RESP3 remote GET of a missing key is _")
        report.equal(c.call("GET", local), b"_\r\n", "RESP3 local GET of a missing key is _")
        report.equal(c.call("SET", remote3, "three"), cs.OK, "RESP3 remote SET")
        report.equal(c.call("MGET", local, remote2, remote3, "r3:none"),
                     b"*4\r\n_\r\n_\r\n$5\r\nthree\r\n_\r\n",
                     "RESP3 MGET across owners has RESP3 nulls")
        report.equal(c.call("INCR", remote3),
                     b"-ERR value is not an integer or out of range\r\n",
                     "RESP3 remote error reply")
        report.equal(c.call("EXISTS", local, remote3, remote3), cs.integer(2), "RESP3 EXISTS sums")
        report.equal(c.call("RANDOMKEY"), cs.bulk(remote3), "RESP3 RANDOMKEY")
        report.equal(c.call("GETDEL", remote3), cs.bulk("three"), "RESP3 remote GETDEL")
        report.equal(c.call("RANDOMKEY"), b"_\r\n", "RESP3 RANDOMKEY of an empty cluster is _")
        report.equal(c.call("HELLO", "2")[:1], b"*", "HELLO 2 switches back")
        report.equal(c.call("GET", remote2), cs.NIL, "RESP2 again: remote missing key is $-1")


def check_peer_frames(report, cluster):
    """A relay link's frames with prefixes run as they say; malformed ones get an error and the
    link and the node go on."""
    port = cluster.ports[0]
    fingerprint = cs.info_fields(port, "CLUSTER", "INFO")["cluster_ring_fingerprint"]
    with harness.RespClient(port) as c:
        report.equal(c.call("RINGKV.PEER", "127.0.0.1:1", fingerprint),
                     b"+%s\r\n" % fingerprint.encode(), "introduced as a relay link")
        report.equal(c.call("RINGKV.DB", "2", "SET", "pf:k", "two"), cs.OK, "RINGKV.DB 2 SET")
        report.equal(c.call("RINGKV.DB", "2", "RINGKV.RESP3", "GET", "pf:k"), cs.bulk("two"),
                     "RINGKV.DB 2 RINGKV.RESP3 GET reads database 2")
        report.equal(c.call("GET", "pf:k"), cs.NIL, "a frame without RINGKV.DB runs in database 0")
        report.equal(c.call("RINGKV.RESP3", "GET", "pf:k"), b"_\r\n",
                     "RINGKV.RESP3 answers in RESP3")
        malformed = [
            (("RINGKV.DB", "99", "GET", "pf:k"), b"-ERR DB index is out of range\r\n"),
            (("RINGKV.DB", "x", "GET", "pf:k"), b"-ERR DB index is out of range\r\n"),
            (("RINGKV.DB", "1"), b"-ERR malformed RINGKV.DB prefix\r\n"),
            (("RINGKV.RESP3",), b"-ERR malformed RINGKV.RESP3 prefix\r\n"),
            (("RINGKV.SHARDMSG", "ch"), b"-ERR malformed RINGKV.SHARDMSG frame\r\n"),
            (("RINGKV.MIGRATE", "x", "DEL", "pf:k"), b"-ERR malformed RINGKV.MIGRATE frame\r\n"),
            (("RINGKV.AS", "nobody", "GET", "pf:k"),
             b"-NOPERM the script's user 'nobody' does not exist on this node\r\n"),
        ]
        for argv, want in malformed:
            report.equal(c.call(*argv), want, "%s is refused" % " ".join(argv))
        report.equal(c.call("RINGKV.DB", "2", "GET", "pf:k"), cs.bulk("two"),
                     "the link goes on after malformed frames")
        report.equal(c.call("RINGKV.DB", "2", "DEL", "pf:k"), cs.integer(1), "cleaned up")
    with harness.RespClient(port) as c:
        report.equal(c.call("PING"), b"+PONG\r\n", "the node still answers clients")
    check_link_view(report, cluster)


def check_link_view(report, cluster):
    """A relay link runs by the ring its sender routes by: the handshake's, then the one each
    RINGKV.VIEW names. On a link of this node's ring a request is taken as routed by it (run
    here whatever the key); on a link of another ring a key this node does not own is refused,
    so that a sender whose ring changed since its handshake (and whose ring this node's may
    become again) never has writes run by a member that holds only copies."""
    port = cluster.ports[0]
    me = "127.0.0.1:%d" % port
    fingerprint = cs.info_fields(port, "CLUSTER", "INFO")["cluster_ring_fingerprint"]
    keys = ["lv:%d" % i for i in range(40)]
    owners = cs.owners_of(port, keys)
    mine = next(k for k, o in zip(keys, owners) if o == me)
    other = next(k for k, o in zip(keys, owners) if o != me)
    not_owner = (b"-TRYAGAIN the ring changed: this member no longer serves the key (failed over, "
                 b"gone, or the key moved)\r\n")
    elsewhere = "0000000000000001" if fingerprint != "0000000000000001" else "0000000000000002"
    with harness.RespClient(port) as c:
        report.equal(c.call("RINGKV.PEER", "127.0.0.1:1", fingerprint),
                     b"+%s\r\n" % fingerprint.encode(), "link view: introduced as a relay link")
        report.equal(c.call("SET", other, "routed"), cs.OK,
                     "link view: on a link of this node's ring a request runs as routed")
        report.equal(c.call("DEL", other), cs.integer(1), "link view: cleaned up")
        report.equal(c.call("RINGKV.VIEW", elsewhere), cs.OK, "link view: RINGKV.VIEW of another ring")
        report.equal(c.call("SET", other, "stale"), not_owner,
                     "link view: then a key of another member is refused")
        report.equal(c.call("SET", mine, "owned"), cs.OK, "link view: and a key of its own runs")
        report.equal(c.call("RINGKV.VIEW", fingerprint), cs.OK, "link view: RINGKV.VIEW of its ring")
        report.equal(c.call("SET", other, "routed"), cs.OK,
                     "link view: then requests run as routed again")
        report.equal(c.call("DEL", other, mine), cs.integer(2), "link view: cleaned up again")
        report.equal(c.call("RINGKV.VIEW"), b"-ERR malformed RINGKV.VIEW frame\r\n",
                     "link view: RINGKV.VIEW without a fingerprint is refused")
        report.equal(c.call("EXISTS", other, mine), cs.integer(0),
                     "link view: nothing is left here of the keys")


# -- introspection ----------------------------------------------------------------------------


def check_info(report, cluster, hash_name):
    ports, addrs = cluster.ports, cluster.addresses
    fingerprints = set()
    for n, port in enumerate(ports):
        ci = cs.info_fields(port, "CLUSTER", "INFO")
        report.equal(ci.get("cluster_state"), "ok", "node %d cluster_state:ok" % (n + 1))
        report.equal(ci.get("cluster_members"), "3", "node %d cluster_members:3" % (n + 1))
        report.equal(ci.get("cluster_self"), addrs[n], "node %d cluster_self" % (n + 1))
        report.equal(ci.get("cluster_hash"), hash_name, "node %d cluster_hash" % (n + 1))
        fingerprints.add(ci.get("cluster_ring_fingerprint"))
        info = cs.info_fields(port, "INFO", "cluster")
        # Redis Cluster's protocol is off: cluster-aware tools see a standalone server.
        report.equal(info.get("cluster_enabled"), "0", "node %d INFO cluster_enabled:0" % (n + 1))
        report.equal(info.get("cluster_members"), "3", "node %d INFO cluster_members" % (n + 1))
        with harness.RespClient(port) as c:
            text = harness.parse_reply(c.call("CLUSTER", "NODES")).decode()
        lines = text.strip().splitlines()
        report.equal(sorted(line.split()[0] for line in lines), sorted(addrs),
                     "node %d CLUSTER NODES lists the 3 members" % (n + 1))
        report.equal([line.split()[0] for line in lines if " self " in line], [addrs[n]],
                     "node %d CLUSTER NODES marks itself" % (n + 1))
    report.equal(len(fingerprints), 1, "all nodes report the same ring fingerprint")
    remote = cs.keys_by_owner(cluster, "info:", 1)[1][0]
    before = int(cs.info_fields(ports[0], "INFO", "cluster").get("relayed_requests", -1))
    cs.pipeline(ports[0], [("GET", remote)] * 10)
    after = cs.info_fields(ports[0], "INFO", "cluster")
    report.check(int(after.get("relayed_requests", -1)) >= before + 10,
                 "relayed_requests grows by the 10 relayed GETs", "%d -> %s" % (
                     before, after.get("relayed_requests")))
    with harness.RespClient(ports[0]) as c:
        text = harness.parse_reply(c.call("INFO", "cluster")).decode()
    peer_lines = re.findall(r"^peer\d+:addr=([^,\r]+),(?:.*,)?requests=(\d+)[,\r]", text, re.M)
    report.equal(sorted(p[0] for p in peer_lines), sorted(addrs[1:]),
                 "INFO cluster has a peer line for each of node 1's peers")
    to_node2 = [int(p[1]) for p in peer_lines if p[0] == addrs[1]]
    report.check(to_node2 and to_node2[0] >= 10, "node 1's peer line for node 2 counts the "
                 "relayed requests", text)
    report.check("connected" in cs.node_line(ports[0], addrs[1]),
                 "node 1's link to node 2 is connected after relaying",
                 repr(cs.node_line(ports[0], addrs[1])))


# -- failures -----------------------------------------------------------------------------------


def written_keys(report, cluster, prefix, faulty, fault):
    """Two keys of each node's (named from `prefix`); the first of each written through node 1 as
    "one", "two", "three", and node `faulty`'s (0-based) checked readable before `fault`. Returns
    the written keys and the second key of each node."""
    by_node = cs.keys_by_owner(cluster, prefix, 2)
    keys, spare = [k for k, _ in by_node], [k for _, k in by_node]
    values = ["one", "two", "three"]
    with harness.RespClient(cluster.ports[0]) as c:
        c.call("MSET", *[x for pair in zip(keys, values) for x in pair])
        report.equal(c.call("GET", keys[faulty]), cs.bulk(values[faulty]),
                     "node %d's key readable before %s" % (faulty + 1, fault))
    return keys, spare


def check_peer_failure(report, cluster):
    """kill -9 node 3: its keys fail promptly through the others, the rest keeps working; a
    restart of node 3 alone brings its keys back."""
    ports, addrs = cluster.ports, cluster.addresses
    (k1, k2, k3), spare = written_keys(report, cluster, "pf:", 2, "the kill")
    cluster.kill(2)
    err = cs.unavailable(addrs[2])
    worst = 0.0
    for i in range(20):
        reply, took = cs.timed_call(ports[i % 2], "GET", k3)
        worst = max(worst, took)
        if not report.check(reply.startswith(err), "GET of node 3's key fails with the peer "
                            "error (try %d)" % i, repr(reply)):
            break
    print("    killed peer: slowest failed request %.3fs (request-timeout 5s)" % worst)
    report.check(worst < 1.0, "requests for a dead peer's keys fail well under the timeout",
                 "%.3fs" % worst)
    for n in (0, 1):
        with harness.RespClient(ports[n]) as c:
            report.equal(c.call("GET", k1), cs.bulk("one"), "node 1's key via node %d" % (n + 1))
            report.equal(c.call("GET", k2), cs.bulk("two"), "node 2's key via node %d" % (n + 1))
            report.equal(c.call("SET", spare[1], "x"), cs.OK,
                         "writes to live nodes work via node %d" % (n + 1))
            reply = c.call("MGET", k1, k3, k2)
            report.check(reply.startswith(err) and b"applied" not in reply,
                         "MGET including node 3's key fails whole via node %d" % (n + 1),
                         repr(reply))
            reply = c.call("EXISTS", k1, k3)
            report.check(reply.startswith(err), "EXISTS including node 3's key fails",
                         repr(reply))
    with harness.RespClient(ports[0]) as c:
        reply = c.call("DEL", k2, k3)
        report.check(reply.startswith(err) and
                     reply.endswith(b" (the other nodes' parts were applied)\r\n"),
                     "DEL across owners incl. node 3 says the other parts were applied",
                     repr(reply))
        report.equal(c.call("GET", k2), cs.NIL, "the live part of that DEL was applied")
        reply = c.call("MSET", k1, "uno", spare[2], "x")
        report.check(reply.startswith(err) and reply.endswith(b"applied)\r\n"),
                     "MSET across owners incl. node 3 says the other parts were applied",
                     repr(reply))
        report.equal(c.call("GET", k1), cs.bulk("uno"), "the live part of that MSET was applied")
        replies = cs.pipeline(ports[0], [("GET", k1), ("GET", k3), ("SET", k2, "2"), ("GET", k3),
                                      ("GET", k2), ("PING",)])
        ok = (replies[0] == cs.bulk("uno") and replies[1].startswith(err) and replies[2] == cs.OK
              and replies[3].startswith(err) and replies[4] == cs.bulk("2")
              and replies[5] == b"+PONG\r\n")
        report.check(ok, "a pipeline mixing dead and live owners stays in order", repr(replies))
    line = cs.node_line(ports[0], addrs[2])
    report.check(line and "connected" not in line and "refused" in " ".join(line),
                 "CLUSTER NODES shows node 3's link not connected, refused", repr(line))
    # Keyspace-wide commands need every node: they fail promptly, writes say what was applied.
    for argv in (("DBSIZE",), ("KEYS", "*"), ("RANDOMKEY",)):
        reply, took = cs.timed_call(ports[1], *argv)
        report.check(reply.startswith(err) and took < 1.0 and b"applied" not in reply,
                     "%s with node 3 down fails promptly" % (argv,), "%r %.3fs" % (reply, took))
    with harness.RespClient(ports[0]) as c:
        cursor, found, calls = b"0", [], 0
        reply = b""
        while calls < 1000:
            calls += 1
            reply = c.call("SCAN", cursor, "COUNT", "50")
            value = harness.parse_reply(reply)
            if not isinstance(value, list):
                break
            cursor = value[0]
            found += value[1]
            if cursor == b"0":
                break
        report.check(reply.startswith(err), "a SCAN walk reaching node 3 fails with the peer "
                     "error", repr(reply[:200]))
    errors = int(cs.info_fields(ports[0], "INFO", "cluster").get("relay_errors", 0))
    report.check(errors > 0, "INFO cluster counts relay errors", str(errors))

    cluster.restart(2)  # returns once node 3 answers PING
    recovered = cs.wait_until_reachable(ports[:2], k3, cs.NIL, 5)
    print("    restarted peer: node 3's keys reachable via nodes 1 and 2 after %s" % (
        "%.2fs" % recovered if recovered is not None else "never"))
    report.check(recovered is not None and recovered < 2.5,
                 "node 3's keys work again within a couple of seconds of its restart",
                 repr(recovered))
    for n in (0, 1, 2):
        with harness.RespClient(ports[n]) as c:
            report.equal(c.call("SET", k3, "back%d" % n), cs.OK, "SET node 3's key via node %d"
                         % (n + 1))
            report.equal(c.call("GET", k3), cs.bulk("back%d" % n), "GET it back via node %d"
                         % (n + 1))
    with harness.RespClient(ports[1]) as c:
        report.equal(c.call("MGET", k1, k2, k3), cs.array([cs.bulk("uno"), cs.bulk("2"), cs.bulk("back2")]),
                     "a split MGET over all three nodes works after the restart")


def check_hung_peer(report, cluster):
    """SIGSTOP node 2 (request-timeout 1s): its keys fail with a timeout within ~1-2s, others
    answer meanwhile, pipelines keep order; SIGCONT and it recovers."""
    ports, addrs = cluster.ports, cluster.addresses
    (k1, k2, k3), _ = written_keys(report, cluster, "hp:", 1, "SIGSTOP")
    cluster.kill(1, signal.SIGSTOP)
    err = cs.unavailable(addrs[1])
    try:
        slow = harness.RespClient(ports[0])
        start = time.time()
        slow.send(harness.encode_command("GET", k2))
        # While that request waits on the hung peer, other keys answer at once.
        others = []
        for k, v in ((k1, "one"), (k3, "three")):
            reply, took = cs.timed_call(ports[0], "GET", k)
            others.append(took)
            report.equal(reply, cs.bulk(v), "GET %s answers while node 2 hangs" % k)
        report.check(max(others) < 0.5, "other keys do not wait for the hung peer",
                     repr(others))
        reply = slow.read()
        took = time.time() - start
        slow.close()
        print("    hung peer: request failed after %.2fs (request-timeout 1s)" % took)
        report.check(reply.startswith(err) and b"timeout" in reply,
                     "GET of the hung node's key fails with a timeout", repr(reply))
        report.check(0.8 <= took <= 2.5, "the timeout fires after about request-timeout",
                     "%.2fs" % took)
        start = time.time()
        replies = cs.pipeline(ports[2], [("SET", k1, "uno"), ("GET", k2), ("GET", k3),
                                      ("MGET", k1, k3), ("GET", k1)])
        took = time.time() - start
        ok = (replies[0] == cs.OK and replies[1].startswith(err) and replies[2] == cs.bulk("three")
              and replies[3] == cs.array([cs.bulk("uno"), cs.bulk("three")])
              and replies[4] == cs.bulk("uno"))
        report.check(ok, "a pipeline through node 3 with a hung-peer key stays in order",
                     repr(replies))
        report.check(took <= 3.0, "that pipeline completes within ~request-timeout",
                     "%.2fs" % took)
        reply, took = cs.timed_call(ports[0], "GET", k2)
        report.check(reply.startswith(err) and took <= 2.5,
                     "a later request for the hung node's key also fails in time",
                     "%r after %.2fs" % (reply, took))
    finally:
        cluster.kill(1, signal.SIGCONT)
    recovered = cs.wait_until_reachable([ports[0], ports[2]], k2, cs.bulk("two"), 6)
    print("    continued peer: reachable via nodes 1 and 3 again after %s" % (
        "%.2fs" % recovered if recovered is not None else "never"))
    report.check(recovered is not None and recovered < 3.0,
                 "node 2's keys work again soon after SIGCONT", repr(recovered))
    with harness.RespClient(ports[2]) as c:
        report.equal(c.call("MGET", k1, k2, k3), cs.array([cs.bulk("uno"), cs.bulk("two"),
                                                         cs.bulk("three")]),
                     "split MGET over all nodes after the hung peer recovered")


def check_ring_mismatch(report, binary, first, second):
    """Two nodes configured apart (`first` and `second`: [cluster] keys of each) notice it when
    a link opens."""
    def configure(i, port, ports):
        return harness.cluster_config(port, ports, cluster_options=first if i == 0 else second)

    with harness.Cluster(binary, 2, name="mismatch", configure=configure) as cluster:
        keys = ["mm:%d" % i for i in range(50)]
        owners = cs.owners_of(cluster.ports[0], keys)
        remote = keys[owners.index(cluster.addresses[1])]
        cs.timed_call(cluster.ports[0], "GET", remote)
        states = []
        deadline = time.time() + 3
        while time.time() < deadline:
            states = [cs.info_fields(p, "CLUSTER", "INFO").get("cluster_state")
                      for p in cluster.ports]
            if "misconfigured" in states:
                break
            time.sleep(0.05)
        report.check("misconfigured" in states,
                     "CLUSTER INFO shows cluster_state:misconfigured on a node", repr(states))
        with harness.RespClient(cluster.ports[0]) as c:
            text = harness.parse_reply(c.call("CLUSTER", "NODES")).decode()
        report.check("ring-mismatch" in text, "CLUSTER NODES flags the mismatched peer", text)
        logs = cluster.logs(tail=None)
        report.check("ring mismatch" in logs, "a node's log says 'ring mismatch'", logs[-2000:])
        fps = {cs.info_fields(p, "CLUSTER", "INFO").get("cluster_ring_fingerprint")
               for p in cluster.ports}
        report.equal(len(fps), 2, "the two nodes report different ring fingerprints")


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_cluster")

    print("3-node cluster, balanced ring, request-timeout 5s", flush=True)
    with harness.Cluster(args.server, 3, name="balanced") as cluster:
        for name, check in [
                ("ownership", lambda r, c: check_ownership(r, c, "balanced", 0.25)),
                ("pipelines", check_pipelines),
                ("read-your-writes", check_read_your_writes),
                ("multi-key across owners", check_multikey),
                ("CROSSSLOT and hash tags", check_crossslot),
                ("SCAN/KEYS/DBSIZE/FLUSH/RANDOMKEY", check_keyspace_wide),
                ("RESP3 through the relay", check_resp3),
                ("peer frames and their prefixes", check_peer_frames),
                ("CLUSTER and INFO fields", lambda r, c: check_info(r, c, "balanced")),
                ("killed peer and restart", check_peer_failure)]:
            with cs.Section(report, name):
                check(report, cluster)
        cs.check_clean_exits(report, cluster)

    print("3-node cluster, crc32 ring, request-timeout 1s", flush=True)
    with harness.Cluster(args.server, 3, name="crc32", hash_name="crc32",
                         request_timeout=1000) as cluster:
        with cs.Section(report, "ownership (crc32)"):
            check_ownership(report, cluster, "crc32", 0.05)
        with cs.Section(report, "CLUSTER and INFO fields (crc32)"):
            check_info(report, cluster, "crc32")
        with cs.Section(report, "hung peer (SIGSTOP)"):
            check_hung_peer(report, cluster)
        cs.check_clean_exits(report, cluster)

    print("2-node cluster whose nodes build different rings", flush=True)
    with cs.Section(report, "ring mismatch"):
        check_ring_mismatch(report, args.server, {"replicas": 100}, {"replicas": 50})
    # Members that keep another number of copies: one would sweep as foreign the copies the
    # other hands it.
    print("2-node cluster whose nodes have different replication-factors", flush=True)
    with cs.Section(report, "replication-factor mismatch"):
        check_ring_mismatch(report, args.server, {"replication-factor": 2}, {})
    report.finish()


if __name__ == "__main__":
    main()
