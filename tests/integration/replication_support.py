"""What the replication and failover tests share: clients of a node, durable clusters with the
health settings the failover bounds assume, writer threads that keep a model of every
acknowledged write, and the checks of every key's copies and value against that model."""

import contextlib
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import redis  # noqa: E402

HEALTH = {"health-interval": 200, "failure-limit": 3}
FAILOVER_LIMIT = 3.0  # seconds from the fault to the first successful write, per the issue


def client(port, timeout=5):
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=timeout)

def cluster_info(port):
    return harness.info_fields(port, "CLUSTER", "INFO")

def pipelined(port, requests):
    """The replies to `requests` (argv tuples) sent in one pipeline."""
    pipe = client(port, timeout=30).pipeline(transaction=False)
    for argv in requests:
        pipe.execute_command(*argv)
    return pipe.execute()

def keyspace_keys(port):
    """db0's key count from the node's INFO keyspace: every copy it holds."""
    db0 = harness.info_fields(port, "INFO", "keyspace").get("db0", "keys=0")
    return int(db0.split(",")[0].split("=")[1])

class PeerSession:
    """A connection introduced as a peer's relay link: it runs commands on the node itself
    (never relayed), so it reads the copy a node holds."""

    def __init__(self, port):
        fingerprint = cluster_info(port)["cluster_ring_fingerprint"]
        self.c = harness.RespClient(port)
        hello = self.c.call("RINGKV.PEER", "127.0.0.1:1", fingerprint)
        assert hello == b"+%s\r\n" % fingerprint.encode(), hello

    def call(self, *args):
        return harness.parse_reply(self.c.call(*args))

    def close(self):
        self.c.close()

def durable_cluster(binary, n, name, rf, acks, **options):
    """n nodes (not started) with the fault tests' health checks, replication-factor `rf`,
    replica-acks `acks`, `options` added, and the append-only file fsynced at every write: a
    node killed and restarted keeps every write it acknowledged."""
    opts = dict(HEALTH, **{"replication-factor": rf, "replica-acks": acks}, **options)
    return harness.Cluster(binary, n, name=name, cluster_options=opts,
                           extra='[persistence]\nappendonly = true\nappendfsync = "always"\n')

def wait_ring(ports, done, seconds=20, poll=0.1):
    """Polls each node's (ring version, version of the change it has prepared or None) until
    `done(version, pending)` holds for all of them; returns the last states and the seconds
    waited (the caller checks them: this does not raise on a timeout)."""
    t0 = time.monotonic()
    deadline = t0 + seconds * harness.timeout_scale()
    states = []
    while time.monotonic() < deadline:
        infos = [cluster_info(p) for p in ports]
        states = [(int(i["cluster_ring_version"]), i.get("cluster_pending_version"))
                  for i in infos]
        if all(done(v, p) for v, p in states):
            break
        time.sleep(poll)
    return states, time.monotonic() - t0

def settle(ports, timeout=30):
    """Waits until every node agrees on one ring version, with nothing failed, migrating or
    syncing (every replica stream online); returns the version."""
    deadline = time.time() + timeout * harness.timeout_scale()
    last = None
    while time.time() < deadline:
        try:
            infos = [cluster_info(p) for p in ports]
            repl = [harness.info_fields(p, "INFO", "replication") for p in ports]
        except (OSError, redis.RedisError, AssertionError):
            time.sleep(0.1)
            continue
        last = [(i.get("cluster_ring_version"), i.get("cluster_migration_state"),
                 i.get("cluster_failed", "0"), i.get("cluster_state")) for i in infos]
        streams_ok = all(
            all("state=online" in v for k, v in r.items() if k.startswith("slave")) and
            all("state=synced" in v for k, v in r.items() if k.startswith("primary"))
            for r in repl)
        if (len({v for v, _, _, _ in last}) == 1 and
                all(m == "idle" and f == "0" and s == "ok" for _, m, f, s in last) and streams_ok):
            return int(last[0][0])
        time.sleep(0.1)
    raise AssertionError("cluster did not settle: %s" % last)

def value_of(session, key):
    """A key's type and value as a comparable value (copies may order a hash table otherwise, so
    DUMP payloads are not compared)."""
    kind = session.call("TYPE", key)
    if kind == b"string":
        value = session.call("GET", key)
    elif kind == b"list":
        value = tuple(session.call("LRANGE", key, 0, -1))
    elif kind == b"set":
        value = tuple(sorted(session.call("SMEMBERS", key)))
    elif kind == b"zset":
        value = tuple(session.call("ZRANGE", key, 0, -1, "WITHSCORES"))
    elif kind == b"hash":
        value = tuple(sorted(session.call("HGETALL", key)))
    else:
        value = session.call("DUMP", key)
    return kind, value

def check_copies(report, ports, keys, rf, label):
    """Every key that exists is held by exactly the members CLUSTER COPIES names (rf of them),
    each copy equal to the primary's (type, value and TTL); one that does not (a write never
    acknowledged) is held by none."""
    by_addr = {"127.0.0.1:%d" % p: p for p in ports}
    sessions = {p: PeerSession(p) for p in ports}
    try:
        copies = pipelined(ports[0], [("CLUSTER", "COPIES", k) for k in keys])
        exists = pipelined(ports[0], [("EXISTS", k) for k in keys])
        wrong, differ = [], []
        for key, names, there in zip(keys, copies, exists):
            names = [n.decode() for n in names]
            held = [p for p in ports if sessions[p].call("EXISTS", key) == 1]
            expect = sorted(by_addr[n] for n in names) if there else []
            if not there:
                if held:
                    wrong.append((key, "deleted", held))
                continue
            if len(names) != rf or sorted(held) != expect:
                wrong.append((key, names, held))
                continue
            values = {value_of(sessions[p], key) for p in held}
            ttls = {round(sessions[p].call("PEXPIRETIME", key) / 1000.0) for p in held}
            if len(values) != 1 or len(ttls) != 1:
                differ.append(key)
        report.check(not wrong, "%s: every key is held by exactly its %d copies' members" %
                     (label, rf), repr(wrong[:3]))
        report.check(not differ, "%s: every copy equals its primary's (value and TTL)" % label,
                     repr(differ[:3]))
    finally:
        for s in sessions.values():
            s.close()

class Model:
    """Acknowledged and sent versions per key; versions only grow."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acked = {}
        self.sent = {}
        self.version = 0
        self.failures = 0
        self.writes = 0

    def next_version(self):
        with self.lock:
            self.version += 1
            return self.version

class Writer(threading.Thread):
    """Writes its keys with increasing versions through one node; a failed write is not
    acknowledged (its outcome is unknown). Records when writes to `watch` keys succeed."""

    def __init__(self, model, port, name, rng, nkeys, stop):
        super().__init__(daemon=True)
        self.model, self.port, self.rng, self.stop = model, port, rng, stop
        self.keys = ["%s:%d" % (name, i) for i in range(nkeys)]
        self.successes = []  # (monotonic start, end, key) of acknowledged writes

    def run(self):
        r = client(self.port, timeout=3)
        while not self.stop.is_set():
            key = self.rng.choice(self.keys)
            version = self.model.next_version()
            with self.model.lock:
                self.model.sent[key] = version
            started = time.monotonic()
            try:
                r.set(key, version)
            except Exception:  # noqa: BLE001 - unknown outcome
                with self.model.lock:
                    self.model.failures += 1
                time.sleep(0.01)
                continue
            with self.model.lock:
                self.model.acked[key] = max(self.model.acked.get(key, 0), version)
                self.model.writes += 1
            self.successes.append((started, time.monotonic(), key))

def check_model(report, ports, model, label, strict=True):
    """Every key read through every node in `ports` is a version that was sent, and (strict) not
    older than the last acknowledged one. Returns the keys whose acknowledged write was lost."""
    with model.lock:
        acked, sent = dict(model.acked), dict(model.sent)
    keys = sorted(sent)
    lost = set()
    for port in ports:
        values = client(port, timeout=20).mget(keys)
        bad = []
        for k, v in zip(keys, values):
            got = None if v is None else int(v)
            if got is not None and got > sent[k]:
                bad.append((k, got, "never sent"))
            elif k in acked and (got is None or got < acked[k]):
                lost.add(k)
                if strict:
                    bad.append((k, got, "acked %d" % acked[k]))
        report.check(not bad, "%s: every key read through %d holds its last acknowledged write" %
                     (label, port), repr(bad[:5]))
    return lost

def stop_writers(stop, writers):
    stop.set()
    for w in writers:
        w.join()

def check_after_faults(report, ports, model, label, strict, rf, keys_checked=None):
    """Once the cluster has settled: every key against the writers' model (no acknowledged write
    lost when `strict`) and exactly `rf` copies of the first `keys_checked` keys (all by
    default). Returns the keys whose last acknowledged write was lost."""
    settle(ports, timeout=60)
    print("    %s: %d writes acknowledged, %d failed or unknown" %
          (label, model.writes, model.failures), flush=True)
    lost = check_model(report, ports, model, label, strict=strict)
    with model.lock:
        keys = sorted(model.sent)
    check_copies(report, ports, keys[:keys_checked], rf, label)
    return lost

def start_writers(model, ports, rng, stop, nkeys=200):
    writers = [Writer(model, p, "w%d" % i, random.Random(rng.random()), nkeys, stop)
               for i, p in enumerate(ports)]
    for w in writers:
        w.start()
    return writers

@contextlib.contextmanager
def writing(model, ports, rng, nkeys=200):
    """Writers (start_writers) through `ports`, recording in `model`, for the `with` block, which
    gets them; after it, however it ends, they are stopped and joined."""
    stop = threading.Event()
    writers = start_writers(model, ports, rng, stop, nkeys)
    try:
        yield writers
    finally:
        stop_writers(stop, writers)

def check_writable_again(report, label, whose, writers, t_fault, keys, limit=FAILOVER_LIMIT,
                         detail=""):
    """Prints how long after `t_fault` each of `writers` (one per survivor) first wrote one of
    `keys` (`whose`, e.g. "the failed node's keys"), and checks that each did within `limit`
    seconds. Returns those times (None: never)."""
    firsts = first_success_after(writers, t_fault, keys)
    print("    %s: writes to %s resumed after %s s through the survivors" % (
        label, whose, ", ".join("-" if f is None else "%.2f" % f for f in firsts)), flush=True)
    report.check(all(f is not None and f <= limit for f in firsts),
                 "%s: %s are writable through every survivor within %.0f s" % (
                     label, whose, limit), repr(firsts) + detail)
    return firsts

def kill_stream(port, primary):
    """Closes, on the replica at `port`, the stream connections it takes from `primary` (named
    repl-from-<primary>); returns how many there were."""
    victim = client(port)
    ids = [line.split()[0].split("=")[1] for line in
           victim.execute_command("CLIENT", "LIST").decode().splitlines()
           if "name=repl-from-%s " % primary in line + " "]
    for i in ids:
        victim.execute_command("CLIENT", "KILL", "ID", i)
    return len(ids)

def stream_state(port, replica):
    """The state of the stream from the node at `port` to `replica` (INFO replication)."""
    rport = replica.rsplit(":", 1)[1]
    for k, v in harness.info_fields(port, "INFO", "replication").items():
        if k.startswith("slave") and ",port=%s," % rport in "," + v + ",":
            return v.split("state=")[1].split(",")[0]
    return None

def stream_syncs(port):
    """{replica address: (partial, full)} resyncs of the node's stream to each replica."""
    out = {}
    for k, v in harness.info_fields(port, "INFO", "replication").items():
        if not k.startswith("slave"):
            continue
        f = dict(item.split("=", 1) for item in v.split(","))
        out["%s:%s" % (f["ip"], f["port"])] = (int(f["partial_syncs"]), int(f["full_syncs"]))
    return out

def repl_sync_counts(port):
    """(partial, full) resyncs summed over the node's streams to its replicas."""
    counts = stream_syncs(port).values()
    return sum(p for p, _ in counts), sum(f for _, f in counts)

def first_success_after(writers, t_fault, keys):
    """How long after t_fault the first acknowledged write to one of `keys` sent after it
    completed, per writer."""
    out = []
    for w in writers:
        times = [end for start, end, k in list(w.successes) if start > t_fault and k in keys]
        out.append(min(times) - t_fault if times else None)
    return out

def copies_of(port, keys):
    """Each key's CLUSTER COPIES, asked through node `port`: the addresses of its copies, the
    primary's first."""
    return [[a.decode() for a in held]
            for held in pipelined(port, [("CLUSTER", "COPIES", k) for k in keys])]

def keys_held_by(port, names, addresses):
    """The keys among `names` whose copies are `addresses` (the primary's first), in order."""
    return [k for k, held in zip(names, copies_of(port, names)) if held == list(addresses)]

def owners(port, keys):
    replies = pipelined(port, [("CLUSTER", "OWNER", k) for k in keys])
    return dict(zip(keys, (o.decode() for o in replies)))

def stale_reads(port, floor, rng, seconds=2.0):
    """Reads random keys of `floor` (key -> version acknowledged) through `port` for `seconds`
    (errors are not answers); returns the reads older than that: (key, value, acknowledged)."""
    stale = []
    r = client(port, timeout=10)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        keys = rng.sample(sorted(floor), min(50, len(floor)))
        try:
            values = r.mget(keys)
        except redis.RedisError:
            continue
        stale += [(k, v, floor[k]) for k, v in zip(keys, values)
                  if v is None or int(v) < floor[k]]
    return stale
