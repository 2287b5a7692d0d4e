"""Numbered databases through a 3-node cluster: a client's database travels with every command it
relays, splits or fans out, so any node answers as one redis-server with 16 databases.

- differential against a real redis-server 7: test_databases' scenarios through each node, and
  the database generator (command_gen_db: SELECT, MOVE, SWAPDB, COPY ... DB, FLUSHDB and the
  writes and reads between them) round-robin through the nodes, byte for byte;
- real clients: redis-py Redis(db=2) and from_url(".../2") through each node (keys written
  through one node are read through the others, split MGET/DEL/EXISTS, KEYS, SCAN, DBSIZE, INFO
  keyspace per node), redis-cli -n 1; a blocked BLPOP in db 1 on a peer's key is served by a push in db 1
  only; MULTI/EXEC and WATCH in db 3 on a peer's keys; a script in db 2;
- a ring change (JOIN, then LEAVE) moves the keys of databases 0..3; a node that left holds none;
- replication-factor 2: every key of databases 1..3 has its two copies (a MULTI block and a
  FLUSHDB included, and after a replica restarted empty), its keys survive a kill -9 of a
  primary, and SWAPDB is refused there; in eject mode (a cache) a key of database 1 deleted on
  a stand-in is deleted on its owner when it returns.

    /usr/bin/python3 test_databases_cluster.py --server build/ringkv-server [--seed N]
"""

import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import redis  # noqa: E402
import test_databases  # noqa: E402
import test_differential  # noqa: E402
from command_gen import CommandGen  # noqa: E402

HEALTH = {"health-interval": 200}


def client(port, db=0):
    return redis.Redis(host="127.0.0.1", port=port, db=db, socket_timeout=20)


def peer_keys(cluster, prefix):
    """A key owned by node 2 and one owned by node 3 (CLUSTER OWNER), for node 1's clients."""
    found = {}
    r = client(cluster.ports[0])
    for i in range(1000):
        owner = r.execute_command("CLUSTER", "OWNER", "%s%d" % (prefix, i)).decode()
        found.setdefault(owner, "%s%d" % (prefix, i))
        if all(n.address in found for n in cluster.nodes[1:]):
            break
    return [found[n.address] for n in cluster.nodes[1:]]


def keyspace(port):
    """INFO keyspace of one node as {db number: keys}."""
    out = {}
    for name, value in harness.info_fields(port, "INFO", "keyspace").items():
        out[int(name[2:])] = int(value.split(",")[0].split("=")[1])
    return out


def check_differential(report, cluster, oracle, rng):
    for i, port in enumerate(cluster.ports):
        got, want = test_databases.scenarios(port), test_databases.scenarios(oracle.port)
        report.equal(len(got), len(want), "scenarios through node %d: number of observations"
                     % (i + 1))
        # Not comparable through a cluster: INFO keyspace counts the node's own keys (summed over
        # the nodes in check_clients), MONITOR shows peers' health PINGs too.
        bad = [(note, g, w) for (note, g), (_, w) in zip(got, want)
               if g != w and note not in ("info keyspace", "monitor")]
        report.equal(bad, [], "scenarios through node %d: every observation as redis" % (i + 1))
    for c in [client(p) for p in cluster.ports] + [client(oracle.port)]:
        c.flushall()
    # SELECT inside MULTI moves the commands after it, here over keys of two peers (a
    # transaction across nodes) and of one peer.
    a, b = peer_keys(cluster, "sel")

    def select_in_multi(port):
        c = harness.RespClient(port)
        out = [c.call("SELECT", "3")]
        for block in ([("SET", a, "x"), ("SELECT", "4"), ("SET", b, "y"), ("SET", a, "z"),
                       ("SELECT", "99"), ("SELECT", "3"), ("GET", a), ("SELECT", "5"),
                       ("INCR", b)],
                      [("SELECT", "6"), ("SET", a, "six"), ("SELECT", "7")]):
            out.append(c.call("MULTI"))
            out += [c.call(*cmd) for cmd in block]
            out.append(c.call("EXEC"))
            out += [c.call("GET", a), c.call("CLIENT", "INFO").split(b" db=")[1].split(b" ")[0]]
        for db in (3, 4, 5, 6, 7):
            out += [c.call("SELECT", str(db)), c.call("GET", a), c.call("GET", b)]
        c.call("FLUSHALL")
        c.close()
        return out

    report.equal(select_in_multi(cluster.ports[0]), select_in_multi(oracle.port),
                 "SELECT inside MULTI over two peers' keys and over one peer's (ringkv vs redis)")
    gen = CommandGen(rng)
    rules = test_differential.ClusterRules(cluster.ports[0])
    pair = test_differential.Pair(report, cluster.ports, oracle.port, "databases", rules)
    count = harness.scaled(3000, 300)
    while pair.count + pair.crossslot < count:
        for n, (argv, mode) in enumerate(gen.gen_databases()):
            pair.run(harness.encode_command(*argv), mode, test_differential.show(argv), argv,
                     advance=n == 0)
    print("database generator: %d requests compared, %d differences" % (pair.count,
                                                                        pair.mismatches))
    report.equal(pair.mismatches, 0, "database generator through 3 nodes: no difference")
    pair.close()
    rules.close()


def check_clients(report, cluster):
    ports = cluster.ports
    for c in [client(p, db) for p in ports for db in range(4)]:
        c.flushdb()
    keys = []
    for i, port in enumerate(ports):
        r = client(port, 2)
        for j in range(40):
            key = "k%d:%d" % (i, j)
            r.set(key, "v%d" % j)
            keys.append(key)
        r.rpush("list%d" % i, "a", "b")
    want = [b"v%d" % int(k.split(":")[1]) for k in keys]
    for i, port in enumerate(ports):
        r = client(port, 2)
        report.equal(r.mget(keys), want, "Redis(db=2) via node %d: MGET of keys written through "
                     "every node" % (i + 1))
        report.equal(r.dbsize(), len(keys) + 3, "Redis(db=2) via node %d: DBSIZE" % (i + 1))
        report.equal(sorted(r.keys("k*")), sorted(k.encode() for k in keys),
                     "Redis(db=2) via node %d: KEYS" % (i + 1))
        report.equal(sorted(set(r.scan_iter(count=7))), sorted(
            [k.encode() for k in keys] + [b"list0", b"list1", b"list2"]),
            "Redis(db=2) via node %d: a SCAN walk" % (i + 1))
        report.equal(client(port, 0).exists(*keys), 0,
                     "Redis(db=0) via node %d: none of db 2's keys" % (i + 1))
        url = redis.Redis.from_url("redis://127.0.0.1:%d/2" % port)
        report.equal(url.lrange("list%d" % ((i + 1) % 3), 0, -1), [b"a", b"b"],
                     "from_url(.../2) via node %d reads a list of another node" % (i + 1))
    per_node = [keyspace(p).get(2, 0) for p in ports]
    report.check(sum(per_node) == len(keys) + 3 and min(per_node) > 0,
                 "INFO keyspace: db 2's keys are spread over the 3 nodes (each counts its own)",
                 repr(per_node))
    r = client(ports[1], 2)
    report.equal(r.delete(*keys[:30]), 30, "split DEL in db 2")
    report.equal(client(ports[2], 2).exists(*keys), len(keys) - 30, "split EXISTS in db 2")

    cli = subprocess.run([harness.REDIS_CLI, "-p", str(ports[0]), "-n", "1", "SET", "clikey",
                          "x"], capture_output=True, timeout=10)
    report.equal(cli.stdout, b"OK\n", "redis-cli -n 1 SET via node 1")
    cli = subprocess.run([harness.REDIS_CLI, "-p", str(ports[2]), "-n", "1", "GET", "clikey"],
                         capture_output=True, timeout=10)
    report.equal(cli.stdout, b"x\n", "redis-cli -n 1 GET via node 3")
    report.equal(client(ports[1]).get("clikey"), None, "db 0 has no clikey")

    # A blocked client on a peer's key: a push in another database leaves it waiting.
    remote = peer_keys(cluster, "blk")
    key = remote[0]
    waiter = client(ports[0], 1)
    result = {}

    def pop():
        result["got"] = waiter.blpop(key, timeout=10)

    t = threading.Thread(target=pop)
    t.start()
    time.sleep(0.3)
    client(ports[2], 0).rpush(key, "db0")
    time.sleep(0.3)
    report.check("got" not in result, "BLPOP in db 1 not served by a push in db 0")
    client(ports[2], 1).rpush(key, "db1")
    t.join(15)
    report.equal(result.get("got"), (key.encode(), b"db1"), "BLPOP in db 1 served by db 1's push")
    report.equal(client(ports[1], 0).lrange(key, 0, -1), [b"db0"], "db 0's push stays in db 0")

    # MULTI/EXEC and WATCH in db 3 on a peer's keys.
    a, b = peer_keys(cluster, "tx")
    r = client(ports[0], 3)
    pipe = r.pipeline(transaction=True)
    pipe.set(a, "ta").incr(a + ":n").get(a)
    report.equal(pipe.execute(), [True, 1, b"ta"], "MULTI/EXEC in db 3 on a peer's keys")
    pipe = r.pipeline(transaction=True)
    pipe.set(a, "tb").set(b, "tb")
    report.equal(pipe.execute(), [True, True], "MULTI/EXEC in db 3 across two peers")
    report.equal([client(ports[2], 3).get(a), client(ports[2], 0).get(a)], [b"tb", None],
                 "the transactions wrote db 3 only")
    with r.pipeline(transaction=True) as pipe:
        pipe.watch(a)
        client(ports[1], 0).set(a, "other db")
        pipe.multi()
        pipe.set(a, "after watch")
        report.equal(pipe.execute(), [True], "a write to db 0 leaves a WATCH in db 3 alone")
    with r.pipeline(transaction=True) as pipe:
        pipe.watch(a)
        client(ports[1], 3).set(a, "same db")
        pipe.multi()
        pipe.set(a, "after watch")
        try:
            pipe.execute()
            report.check(False, "a write to db 3 fails a WATCH in db 3")
        except redis.WatchError:
            report.check(True, "a write to db 3 fails a WATCH in db 3")
    got = client(ports[2], 2).eval("redis.call('set', KEYS[1], 'lua') return redis.call('get', "
                                   "KEYS[1])", 1, b)
    report.equal([got, client(ports[0], 2).get(b), client(ports[0], 3).get(b)],
                 [b"lua", b"lua", b"tb"], "a script in db 2 on a peer's key")
    report.equal(client(ports[1], 2).move(b, 5), True, "MOVE of a peer's key from db 2 to 5")
    report.equal([client(ports[0], 2).get(b), client(ports[2], 5).get(b)], [None, b"lua"],
                 "the key moved to db 5 on its node")
    report.equal(client(ports[2], 5).swapdb(5, 6), True, "SWAPDB 5 6 on every node")
    report.equal([client(ports[0], 6).get(b), client(ports[1], 5).dbsize()], [b"lua", 0],
                 "db 6 holds what db 5 held, on every node")


def load(port, per_db):
    """per_db keys of several types in databases 0..3; returns {(db, key): value}."""
    want = {}
    for db in range(4):
        pipe = client(port, db).pipeline(transaction=False)
        for i in range(per_db):
            key = "m%d:%d" % (db, i)
            if i % 3 == 0:
                pipe.rpush(key, "d%d" % db, i)
                want[(db, key)] = [b"d%d" % db, b"%d" % i]
            else:
                pipe.set(key, "d%d:%d" % (db, i), ex=5000)
                want[(db, key)] = b"d%d:%d" % (db, i)
        pipe.execute()
    return want


def read_all(port, want):
    got = {}
    for db in range(4):
        r = client(port, db)
        for (d, key), value in want.items():
            if d != db:
                continue
            got[(d, key)] = r.lrange(key, 0, -1) if isinstance(value, list) else r.get(key)
    return got


def check_ring_change(report, binary):
    import test_membership
    with harness.Cluster(binary, 3, name="dbring", cluster_options=HEALTH) as c:
        port = harness.free_ports(1)[0]
        text = harness.cluster_config(port, [port], cluster_options=HEALTH)
        cand = harness.ClusterNode(binary, port, text, "dbring-candidate")
        cand.start()
        try:
            want = load(c.ports[0], harness.scaled(300, 60))
            version = int(test_membership.cluster_info(c.ports[0])["cluster_ring_version"])
            report.equal(client(c.ports[0], 0).execute_command("CLUSTER", "JOIN", cand.address),
                         b"OK", "JOIN with keys in databases 0..3")
            members = c.ports + [port]
            test_membership.wait_settled(members, version + 1)
            held = keyspace(port)
            report.check(all(held.get(db, 0) > 0 for db in range(4)),
                         "the new member holds keys of databases 0..3", repr(held))
            for p in members:
                report.equal(read_all(p, want), want, "after JOIN: every key of every database "
                             "through node %d" % p)
            total = {db: sum(keyspace(p).get(db, 0) for p in members) for db in range(4)}
            report.equal(total, {db: len([k for k in want if k[0] == db]) for db in range(4)},
                         "after JOIN: each key held once (INFO keyspace summed)")
            leaving = c.nodes[2]
            report.equal(client(c.ports[0], 0).execute_command("CLUSTER", "LEAVE",
                                                               leaving.address),
                         b"OK", "LEAVE of a member with keys in databases 0..3")
            members = c.ports[:2] + [port]
            test_membership.wait_settled(members, version + 2)
            for p in members:
                report.equal(read_all(p, want), want, "after LEAVE: every key of every database "
                             "through node %d" % p)
            report.equal(keyspace(c.ports[2]), {}, "the member that left holds no key in any "
                         "database")
        finally:
            cand.cleanup()


def check_copies(report, ports, want, label):
    """INFO keyspace summed over the nodes counts 2 copies of every key of databases 1..3, and
    each node CLUSTER COPIES names holds the key in its database (asked as a peer, with
    RINGKV.DB n, so the node answers from its own store)."""
    import replication_support
    replication_support.settle(ports)
    total = {db: sum(keyspace(p).get(db, 0) for p in ports) for db in (1, 2, 3)}
    report.equal(total, {db: 2 * len([k for k in want if k[0] == db]) for db in (1, 2, 3)},
                 "%s: INFO keyspace counts 2 copies of every key of databases 1..3" % label)
    missing = []
    for port in ports:
        s = harness.RespClient(port)
        fingerprint = replication_support.cluster_info(port)["cluster_ring_fingerprint"]
        s.call("RINGKV.PEER", "127.0.0.1:1", fingerprint)
        for (db, key), value in want.items():
            copies = client(ports[0]).execute_command("CLUSTER", "COPIES", key)
            if ("127.0.0.1:%d" % port).encode() not in copies:
                continue
            got = s.call("RINGKV.DB", str(db), "EXISTS", key)
            if got != b":1\r\n":
                missing.append((port, db, key))
        s.close()
    report.equal(missing[:5], [], "%s: every copy named by CLUSTER COPIES holds the key in its "
                 "database" % label)


def check_replication(report, binary):
    import replication_support
    opts = dict(HEALTH, **{"replication-factor": 2})
    with harness.Cluster(binary, 3, name="dbrepl", cluster_options=opts) as c:
        ports = c.ports
        replication_support.settle(ports)
        want = load(ports[0], harness.scaled(200, 40))
        want = {k: v for k, v in want.items() if k[0] != 0}
        r = client(ports[1], 2)
        pipe = r.pipeline(transaction=True)
        for i in range(10):
            pipe.set("blk:%d" % i, "multi")
            want[(2, "blk:%d" % i)] = b"multi"
        pipe.execute()
        client(ports[2], 3).flushdb()
        want = {k: v for k, v in want.items() if k[0] != 3}
        for i in range(20):
            client(ports[2], 3).set("after:%d" % i, "x")
            want[(3, "after:%d" % i)] = b"x"
        check_copies(report, ports, want, "replication-factor 2")
        # A replica restarted empty gets a full copy of every database.
        c.kill(2)
        c.restart(2)
        check_copies(report, ports, want, "after a restart of node 3")
        # A primary killed: its keys of every database are served from the copies.
        c.kill(0)
        survivors = ports[1:]
        deadline = time.time() + 20 * harness.timeout_scale()
        got = None
        while time.time() < deadline:
            try:
                got = read_all(survivors[0], want)
                if got == want:
                    break
            except redis.RedisError:
                pass
            time.sleep(0.2)
        report.equal(got, want, "after kill -9 of a primary: every key of databases 1..3")
        try:
            client(survivors[0], 1).swapdb(1, 2)
            report.check(False, "SWAPDB refused with replication-factor 2")
        except redis.ResponseError as e:
            report.equal(str(e), "SWAPDB is not supported in a cluster with replication-factor > 1",
                         "SWAPDB refused with replication-factor 2")


def check_eject_delete(report, binary):
    """Eject mode without replicas (a cache): a key of database 1 that a stand-in wrote and
    deleted while its owner was stopped is deleted on the owner too when it is restored."""
    import signal
    import replication_support
    opts = dict(HEALTH, **{"on-peer-down": "eject"})
    with harness.Cluster(binary, 3, name="dbeject", cluster_options=opts) as c:
        ports = c.ports
        replication_support.settle(ports)
        key = peer_keys(c, "ej")[1]  # owned by node 3
        client(ports[0], 1).set(key, "v1")
        c.kill(2, signal.SIGSTOP)
        deadline = time.monotonic() + 10 * harness.timeout_scale()
        while time.monotonic() < deadline:
            try:
                if client(ports[1], 1).set(key, "v2"):
                    break
            except redis.RedisError:
                time.sleep(0.05)
        report.equal(client(ports[1], 1).delete(key), 1, "eject: the stand-in deletes the key it "
                     "took in database 1")
        c.kill(2, signal.SIGCONT)
        replication_support.settle(ports)
        report.equal([client(p, 1).get(key) for p in ports] + [client(ports[2], 0).get(key)],
                     [None] * 4, "eject: once restored no node has the deleted key of database 1 "
                     "(nor database 0)")


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int)
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_databases_cluster")
    with harness.Cluster(args.server, 3, name="dbs") as cluster, harness.start_oracle() as oracle:
        check_differential(report, cluster, oracle, rng)
        check_clients(report, cluster)
        for node in cluster.nodes:
            report.check(node.alive(), "%s still running" % node.name, node.log())
    check_ring_change(report, args.server)
    check_replication(report, args.server)
    check_eject_delete(report, args.server)
    report.finish()


if __name__ == "__main__":
    main()
