"""Live membership: nodes join and leave a running cluster while clients on every node keep
writing and reading, Jepsen style.

Each writer thread (one per stable node) owns its keys and writes them with increasing versions,
remembering the last version each write acknowledged; reader threads read those keys from any
current member and check that no read returns a version older than the one acknowledged before
the read began (no stale read, at any moment of a change), and no version never written. Typed
values (hash, list, set, zset, string, with and without TTLs, hash-tagged groups) are loaded
before the changes and compared after each one with their absolute expiry (PEXPIRETIME). After
each change: every key is readable from every member with its last acknowledged value, and the
members' own key counts add up to the number of keys (no leftovers on old owners, none lost);
CLUSTER OWNER agrees with where each key lives. The ring goes 3 -> 4 -> 5 -> 4 -> 3 (a join with
a weight, a SETWEIGHT, two leaves). Then: refused changes (a second change while one runs, a
node that holds keys, unknown members, bad weights, the last node, a candidate with the wrong
secret), WATCH across a migration, a blocking pop across a migration, SCAN walks across a join
and a leave (no key missed; DBSIZE and KEYS count each key once meanwhile), and a restart of every
node (append-only files on) that must bring the ring back from disk.

    /usr/bin/python3 test_membership.py --server build/ringkv-server [--seed N]
"""

import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import redis  # noqa: E402

PERSIST = '[persistence]\nappendonly = true\nappendfsync = "always"\n'


def client(port, timeout=20):
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=timeout)


def cluster_info(port):
    return harness.info_fields(port, "CLUSTER", "INFO")


def self_keys(port):
    """The key count this node reports for itself in CLUSTER NODES."""
    for line in client(port).execute_command("CLUSTER", "NODES").decode().splitlines():
        if " self " in line:
            return int(line.rsplit("keys=", 1)[1].split()[0])
    raise AssertionError("no self line on %d" % port)


def wait_settled(ports, version, timeout=60):
    """Waits until every node in `ports` is at ring `version` with no migration going on."""
    deadline = time.time() + timeout * harness.timeout_scale()
    last = None
    while time.time() < deadline:
        infos = [cluster_info(p) for p in ports]
        last = [(i.get("cluster_ring_version"), i.get("cluster_migration_state"),
                 i.get("cluster_last_change", ""), i.get("cluster_change_phase", ""),
                 i.get("cluster_copy", ""), i.get("cluster_keys_to_move"),
                 i.get("cluster_keys_moved")) for i in infos]
        if all(t[0] == str(version) and t[1] == "idle" for t in last):
            return True
        time.sleep(0.05)
    raise AssertionError("ring did not settle at version %d: %s" % (version, last))


class Model:
    """The writers' acknowledged versions and the readers' findings."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acked = {}  # key -> last acknowledged version
        self.sent = {}  # key -> highest version sent
        self.errors = []
        self.writes = 0
        self.reads = 0
        self.version = 0  # versions only grow, across every writer ever started

    def next_version(self):
        with self.lock:
            self.version += 1
            return self.version

    def error(self, text):
        with self.lock:
            if len(self.errors) < 20:
                self.errors.append(text)


class Writer(threading.Thread):
    def __init__(self, model, port, name, rng, nkeys, stop):
        super().__init__(daemon=True)
        self.model, self.port, self.rng, self.stop = model, port, rng, stop
        self.keys = ["%s:%d" % (name, i) for i in range(nkeys)]
        if nkeys > 4:
            # A hash-tagged group moves together; multi-key writes on it keep working.
            self.keys[:4] = ["{%s-tag}:%d" % (name, i) for i in range(4)]

    def run(self):
        r = client(self.port)
        while not self.stop.is_set():
            version = self.model.next_version()
            key = self.rng.choice(self.keys)
            with self.model.lock:
                self.model.sent[key] = version
            try:
                if key.startswith("{") and self.rng.random() < 0.5:
                    # MSET of the whole group (one node, one hash tag).
                    group = [k for k in self.keys if k.startswith("{")]
                    with self.model.lock:
                        for k in group:
                            self.model.sent[k] = version
                    r.mset({k: version for k in group})
                    acked = group
                else:
                    r.set(key, version)
                    acked = [key]
            except Exception as e:  # noqa: BLE001 - any failure is a finding
                self.model.error("write %s=%d on %d failed: %r" % (key, version, self.port, e))
                continue
            with self.model.lock:
                for k in acked:
                    self.model.acked[k] = version
                self.model.writes += 1


class Reader(threading.Thread):
    def __init__(self, model, members, rng, stop):
        super().__init__(daemon=True)
        self.model, self.members, self.rng, self.stop = model, members, rng, stop

    def run(self):
        clients = {}
        while not self.stop.is_set():
            with self.model.lock:
                if not self.model.acked:
                    continue
                key = self.rng.choice(list(self.model.acked))
                floor = self.model.acked[key]
            port = self.rng.choice(self.members())
            r = clients.setdefault(port, client(port))
            try:
                got = r.get(key)
            except Exception as e:  # noqa: BLE001
                self.model.error("read %s on %d failed: %r" % (key, port, e))
                continue
            with self.model.lock:
                ceiling = self.model.sent.get(key, 0)
                self.model.reads += 1
            value = int(got) if got is not None else None
            if value is None or value < floor or value > ceiling:
                self.model.error("stale read of %s on %d: %r, acknowledged %d, sent at most %d" %
                                 (key, port, got, floor, ceiling))


def load_typed(port, rng, n):
    """Typed keys with and without TTLs (absolute expiry far ahead); returns their expectations.
    The first ten collections are big (3000 elements: copied a slice at a time)."""
    r = client(port)
    at = int(time.time() * 1000) + 3600 * 1000 + rng.randrange(1000)
    expected = {}
    p = r.pipeline(transaction=False)
    for i in range(n):
        kind = i % 5
        key = "typed:%d:%d" % (kind, i)
        size = 3000 if i < 10 else rng.randrange(1, 20)
        if kind == 0:
            p.hset(key, mapping={"f%d" % j: "v%d" % j for j in range(size)})
        elif kind == 1:
            p.rpush(key, *["e%d" % j for j in range(size)])
        elif kind == 2:
            p.sadd(key, *["m%d" % j for j in range(size)])
        elif kind == 3:
            p.zadd(key, {"z%d" % j: j * 1.5 for j in range(size)})
        else:
            p.set(key, "s" * rng.randrange(1, 200))
        expiry = at + i if i % 3 == 0 else -1
        if expiry > 0:
            p.pexpireat(key, expiry)
        expected[key] = expiry
    p.execute()
    return expected, snapshot(port, expected)


BULK = 20000


def load_bulk(port):
    """BULK plain keys, so that copying takes a while and writes overlap it."""
    r = client(port)
    for start in range(0, BULK, 1000):
        r.mset({"bulk:%d" % i: "value-%d" % i for i in range(start, start + 1000)})


def bulk_intact(port):
    r = client(port)
    for start in range(0, BULK, 2000):
        keys = ["bulk:%d" % i for i in range(start, start + 2000)]
        want = [("value-%d" % i).encode() for i in range(start, start + 2000)]
        if r.mget(keys) != want:
            return False
    return True


def snapshot(port, keys):
    """Every key's type, value and absolute expiry as `port` reads them."""
    r = client(port)
    p = r.pipeline(transaction=False)
    for key in keys:
        p.type(key)
        p.pexpiretime(key)
    res = p.execute()
    out = {}
    p = r.pipeline(transaction=False)
    order = []
    for i, key in enumerate(keys):
        t = res[2 * i].decode()
        order.append((key, t, res[2 * i + 1]))
        if t == "hash":
            p.hgetall(key)
        elif t == "list":
            p.lrange(key, 0, -1)
        elif t == "set":
            p.smembers(key)
        elif t == "zset":
            p.zrange(key, 0, -1, withscores=True)
        else:
            p.get(key)
    for (key, t, ttl), value in zip(order, p.execute()):
        out[key] = (t, ttl, value)
    return out


class Membership:
    """The cluster under test: 3 stable nodes plus candidates that join and leave."""

    def __init__(self, report, binary, rng, secret=None, persist=False):
        self.report, self.binary, self.rng = report, binary, rng
        options = {"health-interval": 200}
        if secret:
            options["secret"] = secret
        extra = PERSIST if persist else ""
        self.cluster = harness.Cluster(binary, 3, name="members", cluster_options=options,
                                       extra=extra).start()
        self.candidates = []
        for port in harness.free_ports(2):
            text = harness.cluster_config(port, [port], cluster_options=options, extra=extra)
            node = harness.ClusterNode(binary, port, text, "candidate%d" % port)
            self.candidates.append(node.start())
        self.version = 0
        self.member_ports = list(self.cluster.ports)
        self.lock = threading.Lock()

    def members(self):
        with self.lock:
            return list(self.member_ports)

    def all_nodes(self):
        return self.cluster.nodes + self.candidates

    def change(self, via, *args, expect_ok=True):
        got = client(via).execute_command("CLUSTER", *args)
        ok = got in (b"OK", "OK", True)
        self.report.check(ok == expect_ok, "CLUSTER %s via %d -> %r" % (" ".join(map(str, args)),
                                                                      via, got))
        return got

    def cleanup(self):
        for n in self.all_nodes():
            n.cleanup()


def check_everything(report, m, model, typed_before, what):
    """After a change settled: values, expiries, ownership, key counts."""
    members = m.members()
    # Every writer key from every member: its last acknowledged value.
    with model.lock:
        acked = dict(model.acked)
    keys = sorted(acked)
    for port in members:
        got = client(port).mget(keys)
        bad = [(k, v) for k, v in zip(keys, got) if v is None or int(v) != acked[k]]
        report.check(not bad, "%s: every written key reads its last value on %d" % (what, port),
                     repr(bad[:5]))
    for port in members:
        snap = snapshot(port, typed_before)
        bad = [k for k in typed_before if snap[k] != typed_before[k]]
        report.check(not bad, "%s: typed keys and expiries intact on %d" % (what, port),
                     repr([(k, typed_before[k], snap[k]) for k in bad[:3]]))
    for port in members:
        report.check(bulk_intact(port), "%s: the %d bulk keys read back on %d" % (what, BULK, port))
    total = len(keys) + len(typed_before) + BULK
    counts = {p: self_keys(p) for p in members}
    report.equal(sum(counts.values()), total, "%s: members' own key counts add up (%r)" %
                 (what, counts))
    # Each key is where CLUSTER OWNER says (EXISTS through a node's own keys: owner's count).
    r = client(members[0])
    p = r.pipeline(transaction=False)
    sample = m.rng.sample(keys + list(typed_before), 200)
    for k in sample:
        p.execute_command("CLUSTER", "OWNER", k)
    owners = [o.decode() for o in p.execute()]
    for port in members[1:]:
        p = client(port).pipeline(transaction=False)
        for k in sample:
            p.execute_command("CLUSTER", "OWNER", k)
        report.equal([o.decode() for o in p.execute()], owners,
                     "%s: %d agrees on the owners" % (what, port))
    # Nodes that left hold nothing.
    for node in m.candidates:
        if node.port not in members:
            report.equal(self_keys(node.port), 0, "%s: %d (not a member) holds no keys" %
                         (what, node.port))


def dump_logs(nodes):
    """The ring-change lines of every node's log (a failure's context)."""
    for n in nodes:
        lines = [line for line in n.log(tail=None).splitlines() if "ring" in line or "fail" in line]
        print("--- %s\n%s" % (n.name, "\n".join(lines[-40:])))


def check_ring_changes(report, binary, rng):
    m = Membership(report, binary, rng)
    try:
        model = Model()
        stop = threading.Event()
        writers = [Writer(model, port, "w%d" % i, random.Random(rng.random()), 300, stop)
                   for i, port in enumerate(m.cluster.ports)]
        readers = [Reader(model, m.members, random.Random(rng.random()), stop) for _ in range(2)]
        typed_expect, typed_before = load_typed(m.cluster.ports[0], rng, 500)
        load_bulk(m.cluster.ports[1])
        for t in writers + readers:
            t.start()
        time.sleep(0.5)
        c4, c5 = m.candidates
        steps = [
            ("join 4", m.cluster.ports[1], ("JOIN", c4.address), c4.port, None),
            ("join 5 (weight 2)", c4.port, ("JOIN", c5.address, "WEIGHT", "2"), c5.port, None),
            ("setweight 5", m.cluster.ports[2], ("SETWEIGHT", c5.address, "1"), None, None),
            ("leave 5", m.cluster.ports[0], ("LEAVE", c5.address), None, c5.port),
            ("leave 4", c4.port, ("LEAVE", c4.address), None, c4.port),
        ]
        for what, via, args, joins, leaves in steps:
            if leaves:
                # Clients move off a node before it leaves (it is then an empty node of its own).
                with m.lock:
                    m.member_ports.remove(leaves)
            before = model.writes
            m.change(via, *args)
            m.version += 1
            try:
                wait_settled(m.members() + ([joins] if joins else []), m.version)
            except AssertionError:
                dump_logs(m.all_nodes())
                raise
            if joins:
                with m.lock:
                    m.member_ports.append(joins)
            time.sleep(0.3)
            report.check(model.writes > before, "%s: writes went on (%d during the change)" %
                         (what, model.writes - before))
            stop.set()
            for t in writers + readers:
                t.join()
            if model.errors:
                dump_logs(m.all_nodes())
            report.check(not model.errors, "%s: no failed or stale operation (%d writes, %d reads)"
                         % (what, model.writes, model.reads), "\n".join(model.errors))
            check_everything(report, m, model, typed_before, what)
            stop.clear()
            writers = [Writer(model, w.port, "w%d" % i, random.Random(rng.random()), 300, stop)
                       for i, w in enumerate(writers)]
            readers = [Reader(model, m.members, random.Random(rng.random()), stop)
                       for _ in range(2)]
            for t in writers + readers:
                t.start()
        stop.set()
        for t in writers + readers:
            t.join()
        try:
            check_refusals(report, m)
        except AssertionError:
            dump_logs(m.all_nodes())
            raise
        for n in m.all_nodes():
            harness.check_clean_exit(report, n)
        del typed_expect
    finally:
        m.cleanup()


def check_refusals(report, m):
    """Changes that must be refused, leaving everything as it was."""
    via = m.cluster.ports[0]
    c4, c5 = m.candidates
    version = cluster_info(via)["cluster_ring_version"]

    def refused(args, text):
        try:
            got = client(via).execute_command("CLUSTER", *args)
            report.check(False, "CLUSTER %s is refused" % " ".join(args), repr(got))
        except redis.ResponseError as e:
            report.check(text in str(e), "CLUSTER %s is refused: %s" % (" ".join(args), e),
                         "want %r" % text)

    refused(("JOIN", m.cluster.nodes[1].address), "is already a member")
    refused(("LEAVE", "127.0.0.1:1"), "is not a member")
    refused(("SETWEIGHT", m.cluster.nodes[1].address, "0"), "Invalid weight")
    refused(("JOIN", c4.address, "WEIGHT", "x"), "Invalid weight")
    refused(("JOIN", "nonsense"), "Invalid node address")
    # A node that holds keys cannot join.
    client(c5.port).set("mine", "1")
    refused(("JOIN", c5.address), "must be an empty node")
    client(c5.port).delete("mine")
    # A second change while one runs (the first one's keys are still moving or it just began).
    r = client(via)
    r.execute_command("CLUSTER", "JOIN", c4.address)
    refused(("JOIN", c5.address), "already in progress")
    wait_settled(m.members() + [c4.port], int(version) + 1)
    r.execute_command("CLUSTER", "LEAVE", c4.address)
    wait_settled(m.members() + [c4.port], int(version) + 2)
    report.equal(self_keys(c4.port), 0, "the node that joined and left holds nothing")


def check_wrong_secret(report, binary):
    """A candidate with another cluster secret is refused, and so is one configured with another
    replication-factor (it would keep copies by another rule: keys with fewer copies than the
    cluster's, which a failover loses); nothing moves."""
    options = {"health-interval": 200, "secret": "s3cret-s3cret-s3cret"}
    candidates = (("secret", {"secret": "another-secret-entirely"},
                   ["cannot reach the node to join", "secret"]),
                  ("replication-factor", {"secret": options["secret"], "replication-factor": 2},
                   ["replication-factor 2", "this cluster's is 1"]))
    for what, differs, says in candidates:
        with harness.Cluster(binary, 2, name="secret", cluster_options=options) as cluster:
            check_refused_candidate(report, binary, cluster, what, differs, says)


def check_refused_candidate(report, binary, cluster, what, differs, says):
    port = harness.free_port()
    text = harness.cluster_config(port, [port],
                                  cluster_options=dict({"health-interval": 200}, **differs))
    cand = harness.ClusterNode(binary, port, text, "wrong-" + what).start()
    try:
        client(cluster.ports[0]).set("k", "v")
        try:
            got = client(cluster.ports[0]).execute_command("CLUSTER", "JOIN", cand.address)
            report.check(False, "a candidate with another %s is refused" % what, repr(got))
        except redis.ResponseError as e:
            report.check(all(s in str(e) for s in says),
                         "a candidate with another %s is refused: %s" % (what, e))
        info = cluster_info(cluster.ports[0])
        report.equal(info["cluster_ring_version"], "0", "the ring did not change")
        report.equal(info["cluster_migration_state"], "idle", "nothing is migrating")
        report.equal(self_keys(cand.port), 0, "the candidate got no keys")
        report.equal(client(cluster.ports[1]).get("k"), b"v", "keys stay where they were")
    finally:
        cand.cleanup()


def check_watch_and_blocking(report, binary, rng):
    """A WATCHed key that migrates makes EXEC fail; a blocking pop waiting on a key that
    migrates is answered by a push after the change; pub/sub keeps delivering."""
    m = Membership(report, binary, rng)
    try:
        ports = m.cluster.ports
        c4 = m.candidates[0]
        r0 = client(ports[0])
        # Keys that will move to the new node (the ring after the join says so: find them by
        # asking the new node's future ring through a throwaway join on a copy is not possible,
        # so use many keys and pick the moved ones afterwards).
        keys = ["watch:%d" % i for i in range(300)]
        r0.mset({k: "0" for k in keys})
        watchers = []
        for k in keys[:60]:
            c = client(ports[1])
            p = c.pipeline(transaction=True)
            p.watch(k)
            watchers.append((k, p))
        owners_before = {k: client(ports[0]).execute_command("CLUSTER", "OWNER", k).decode()
                         for k in keys[:60]}
        lists = ["blist:%d" % i for i in range(40)]
        results = {}

        def pop(key):
            try:
                results[key] = client(ports[2], timeout=60).blpop(key, timeout=30)
            except Exception as e:  # noqa: BLE001
                results[key] = e

        poppers = [threading.Thread(target=pop, args=(k,), daemon=True) for k in lists]
        for t in poppers:
            t.start()
        time.sleep(0.5)
        m.change(ports[0], "JOIN", c4.address)
        try:
            wait_settled(ports + [c4.port], 1)
        except AssertionError:
            dump_logs(m.all_nodes())
            raise
        moved = [k for k in keys[:60] if
                 client(ports[0]).execute_command("CLUSTER", "OWNER", k).decode() !=
                 owners_before[k]]
        report.check(len(moved) > 0, "some watched keys moved (%d)" % len(moved))
        failed = 0
        for k, p in watchers:
            p.multi()
            p.set(k, "1")
            try:
                p.execute()
            except redis.WatchError:
                failed += 1 if k in moved else 0
                continue
            report.check(k not in moved, "EXEC on moved watched key %s fails" % k)
        report.equal(failed, len(moved), "every transaction watching a moved key failed")
        for k in lists:
            client(ports[0]).rpush(k, "x")
        for t in poppers:
            t.join(40)
        bad = {k: v for k, v in results.items() if v != (k.encode(), b"x")}
        report.check(len(results) == len(lists) and not bad,
                     "every blocked pop got its push after the change", repr(bad)[:500])
    finally:
        m.cleanup()


class KeyspaceSampler(threading.Thread):
    """DBSIZE and KEYS through one member, again and again, while a change runs: each must count
    every key once (a node counts neither the keys it is given before the switch nor those it
    gave away and has not deleted yet: their other holder counts them)."""

    def __init__(self, port, n_keys, pattern, n_matching):
        super().__init__(daemon=True)
        self.port, self.n_keys, self.pattern, self.n_matching = port, n_keys, pattern, n_matching
        self.stop, self.samples, self.wrong = threading.Event(), 0, []

    def run(self):
        r = client(self.port)
        while not self.stop.is_set():
            size = r.dbsize()
            keys = r.keys(self.pattern)
            self.samples += 1
            if size != self.n_keys or len(keys) != self.n_matching or len(set(keys)) != len(keys):
                self.wrong.append((size, len(keys), len(set(keys))))

    def finish(self, report, what):
        self.stop.set()
        self.join(30)
        report.check(not self.wrong and self.samples > 0,
                     "DBSIZE and KEYS during %s count every key once (%d samples)" %
                     (what, self.samples), "DBSIZE, KEYS, distinct KEYS: %r" % self.wrong[:5])


def check_scan_across_changes(report, binary, rng):
    """A SCAN walk misses no key that exists all through it, though the ring changes in the
    middle of it (a join, then a leave: keys move between nodes the walk has passed and nodes it
    has not). A cursor made under another ring starts the walk over, which may return keys twice,
    as Redis allows. The walks send each page to another member: a cursor works through any.
    DBSIZE and KEYS, sampled all through each change, count every key once."""
    m = Membership(report, binary, rng)
    try:
        ports = m.cluster.ports
        n_keys = 100000
        keys = {b"scan:%d" % i for i in range(n_keys)}
        pipe = client(ports[0], timeout=60).pipeline(transaction=False)
        for k in keys:
            pipe.set(k, "1")
        pipe.execute()
        c4 = m.candidates[0]

        def join():
            m.change(ports[0], "JOIN", c4.address)
            wait_settled(ports + [c4.port], 1)

        def leave():
            m.change(ports[0], "LEAVE", m.cluster.addresses[2])
            wait_settled(ports[:2] + [c4.port], 2)

        for what, change, via in (("no change", None, ports), ("a join", join, ports),
                                  ("a leave", leave, ports[:2])):
            seen, cursor, pages = set(), 0, 0
            sampler = KeyspaceSampler(via[0], n_keys, "scan:1*",
                                      sum(1 for k in keys if k.startswith(b"scan:1")))
            sampler.start()
            while pages < 5000:
                cursor, batch = client(via[pages % len(via)]).scan(cursor, count=1000)
                seen.update(batch)
                pages += 1
                if pages == 15 and change:
                    change()
                if cursor == 0:
                    break
            report.equal(len(keys - seen), 0, "a SCAN walk across %s misses no key (%d pages)"
                         % (what, pages))
            sampler.finish(report, what)
    finally:
        m.cleanup()


def check_restart_all(report, binary, rng):
    """After a join and a leave with append-only files on, every node restarts (kill -9) and the
    ring comes back from disk on each; every key is still there."""
    m = Membership(report, binary, rng, persist=True)
    try:
        ports = m.cluster.ports
        c4, c5 = m.candidates
        r = client(ports[0])
        r.mset({"p:%d" % i: str(i) for i in range(2000)})
        m.change(ports[0], "JOIN", c4.address)
        wait_settled(ports + [c4.port], 1)
        m.change(ports[1], "JOIN", c5.address)
        wait_settled(ports + [c4.port, c5.port], 2)
        m.change(ports[2], "LEAVE", c5.address)
        wait_settled(ports + [c4.port], 3)
        members = ports + [c4.port]
        nodes = m.cluster.nodes + [c4]
        for n in nodes + [c5]:
            n.kill()
        for n in nodes + [c5]:
            n.start(wait=False)
        for n in nodes + [c5]:
            n.wait_ready()
        wait_settled(members, 3)
        got = client(ports[1]).mget(["p:%d" % i for i in range(2000)])
        report.check(got == [str(i).encode() for i in range(2000)],
                     "every key is back after restarting every node")
        report.equal(sum(self_keys(p) for p in members), 2000, "and lives on one node only")
        report.equal(cluster_info(c5.port)["cluster_members"], "1",
                     "the node that left restarts alone")
        log = c4.log(tail=None)
        report.check("differs from the configuration" in log,
                     "a node whose TOML disagrees with its ring file says the file wins")
    finally:
        m.cleanup()


def settled_version(ports, timeout=60):
    """Waits until every node in `ports` agrees on one ring version with nothing migrating and
    sees every peer up (a restarted node is marked up at its first answered ping); returns it."""
    deadline = time.time() + timeout * harness.timeout_scale()
    last = None
    while time.time() < deadline:
        try:
            infos = [cluster_info(p) for p in ports]
        except (OSError, ConnectionError, AssertionError, redis.RedisError):
            time.sleep(0.1)
            continue
        last = [(i.get("cluster_ring_version"), i.get("cluster_migration_state"),
                 i.get("cluster_state"), i.get("cluster_last_change", "")) for i in infos]
        if (len({v for v, _, _, _ in last}) == 1 and
                all(m == "idle" and s == "ok" for _, m, s, _ in last)):
            return int(last[0][0])
        time.sleep(0.1)
    raise AssertionError("ring did not settle: %s" % last)


def check_kill_during_change(report, binary, rng, victim, trial):
    """kill -9 of the coordinator, a source or the joining node at a random moment of a join;
    after a restart (append-only file, appendfsync always) the change completes or is rolled
    back everywhere, and every key acknowledged is there, once."""
    m = Membership(report, binary, rng, persist=True)
    what = "kill -9 %s (trial %d)" % (victim, trial)
    try:
        ports = m.cluster.ports
        c4 = m.candidates[0]
        r = client(ports[1])
        n = 30000
        for start in range(0, n, 1000):
            r.mset({"k:%d" % i: "v%d" % i for i in range(start, start + 1000)})
        victim_node = {"coordinator": m.cluster.nodes[0], "source": m.cluster.nodes[1],
                       "target": c4}[victim]
        # One writer on a node that stays up; writes that fail while a node is down are not
        # acknowledged (their outcome is unknown: the key may hold them or the last acked one).
        model = Model()
        stop = threading.Event()
        writer = Writer(model, ports[2], "kw", random.Random(rng.random()), 200, stop)
        writer.start()
        time.sleep(0.2)
        try:
            client(ports[0]).execute_command("CLUSTER", "JOIN", c4.address)
        except redis.ResponseError as e:
            report.check(False, "%s: JOIN accepted" % what, str(e))
        time.sleep(rng.uniform(0, 0.5))
        victim_node.kill()
        time.sleep(rng.uniform(0.1, 1.5))
        victim_node.start()
        time.sleep(0.3)
        stop.set()
        writer.join()
        nodes = ports + [c4.port]
        try:
            version = settled_version(nodes)
        except AssertionError:
            dump_logs(m.all_nodes())
            raise
        members = ports + ([c4.port] if version == 1 else [])
        report.check(version in (0, 1), "%s: the change %s" %
                     (what, "completed" if version == 1 else "was rolled back"))
        got = client(ports[0]).mget(["k:%d" % i for i in range(n)])
        report.check(got == [("v%d" % i).encode() for i in range(n)],
                     "%s: every loaded key is there" % what)
        with model.lock:
            acked, sent = dict(model.acked), dict(model.sent)
        for port in members:
            vals = client(port).mget(sorted(acked))
            bad = [(k, v) for k, v in zip(sorted(acked), vals)
                   if v is None or not acked[k] <= int(v) <= sent[k]]
            report.check(not bad, "%s: acknowledged writes hold on %d" % (what, port),
                         repr(bad[:5]))
        # A write that failed may still have landed: count the writer's keys that exist.
        written = [k for k in sent if k not in acked]
        landed = sum(v is not None for v in client(ports[0]).mget(written)) if written else 0
        counts = {p: self_keys(p) for p in nodes}
        report.equal(sum(counts[p] for p in members), n + len(acked) + landed,
                     "%s: members' key counts add up (%r)" % (what, counts))
        if version == 0:
            report.equal(counts[c4.port], 0, "%s: the rolled-back node gave its copies back" %
                         what)
    finally:
        m.cleanup()


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--kills-only", action="store_true",
                   help="run only the kill -9 trials (to repeat them over many seeds)")
    p.add_argument("--trials", type=int, default=2, help="kill -9 trials per victim")
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_membership")
    if not args.kills_only:
        print("3 -> 4 -> 5 -> 4 -> 3 under writers and readers on every node", flush=True)
        check_ring_changes(report, args.server, rng)
        print("wrong-secret candidate", flush=True)
        check_wrong_secret(report, args.server)
        print("WATCH and blocking pops across a migration", flush=True)
        check_watch_and_blocking(report, args.server, rng)
        print("SCAN walks across a join and a leave", flush=True)
        check_scan_across_changes(report, args.server, rng)
        print("restart of every node (ring from disk)", flush=True)
        check_restart_all(report, args.server, rng)
    for victim in ("coordinator", "source", "target"):
        for trial in range(args.trials):
            print("kill -9 of the %s during a join (trial %d)" % (victim, trial), flush=True)
            check_kill_during_change(report, args.server, rng, victim, trial)
    report.finish()


if __name__ == "__main__":
    main()
