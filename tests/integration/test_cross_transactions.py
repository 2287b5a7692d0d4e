"""Transactions across nodes of a 3-node cluster, with real clients: redis-py's default
pipeline() (MULTI ... EXEC) and its transaction() WATCH/retry helper through every node with keys
on every owner, node-redis's multi() (Debian's node-redis), EXEC arrays with per-command errors
compared byte for byte with redis-server's (MGET, MSET, DEL, UNLINK, EXISTS and TOUCH over
several nodes included: split over the nodes' parts), WATCH of keys on several nodes, any other
command whose own keys span nodes refused at queue time (CROSSSLOT, EXECABORT), each participant's append-only
file recording its part inside MULTI/EXEC, lock waits that end with TRYAGAIN after
request-timeout while a participant is stopped (SIGSTOP) during a commit, and a participant
killed (SIGKILL) while transactions commit.

    /usr/bin/python3 test_cross_transactions.py --server build/ringkv-server
"""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import redis  # noqa: E402
from harness import RespClient  # noqa: E402

REQUEST_TIMEOUT = 1500


def owners(port, keys):
    """Each key's owner address (asked through the node on `port`)."""
    with RespClient(port) as c:
        return {k: harness.parse_reply(c.call("CLUSTER", "OWNER", k)).decode() for k in keys}


def keys_on(port, addresses, prefix, per_node=1):
    """`per_node` keys owned by each address, in address order."""
    found = {a: [] for a in addresses}
    i = 0
    with RespClient(port) as c:
        while any(len(v) < per_node for v in found.values()):
            key = "%s:%d" % (prefix, i)
            i += 1
            owner = harness.parse_reply(c.call("CLUSTER", "OWNER", key)).decode()
            if len(found[owner]) < per_node:
                found[owner].append(key)
    return found


def read_when_up(client, key, timeout=10.0):
    """GET key through `client`'s node once the key's owner is seen up again (health checks mark
    a node stopped for a while down until its next answered ping)."""
    deadline = time.time() + timeout
    while True:
        got = client.call("GET", key)
        if b"unavailable" not in got or time.time() > deadline:
            return got
        time.sleep(0.05)


def check_redis_py(report, cluster):
    """The issue's example through every node, then values read back through every node."""
    # k0..k9 as in the issue, with the first keys swapped for others until all nodes own some.
    by_node = keys_on(cluster.ports[0], cluster.addresses, "k", per_node=2)
    keys = [k for ks in by_node.values() for k in ks]
    keys += ["k%d" % i for i in range(10) if "k%d" % i not in keys][:10 - len(keys)]
    spread = set(owners(cluster.ports[0], keys).values())
    report.equal(len(spread), 3, "the ten keys live on all three nodes")
    for round_, port in enumerate(cluster.ports):
        r = redis.Redis(port=port)
        p = r.pipeline()  # transaction=True is redis-py's default
        for i, k in enumerate(keys):
            p.set(k, "%d-%d" % (round_, i))
        p.incr("counter:" + keys[round_])
        p.get(keys[0])
        got = p.execute()
        report.equal(got[:10], [True] * 10, "pipeline() SETs through node %d" % (round_ + 1))
        report.equal(got[10:], [1, ("%d-0" % round_).encode()],
                     "INCR and GET in the same transaction through node %d" % (round_ + 1))
        for other in cluster.ports:
            values = redis.Redis(port=other).mget(keys)
            report.equal(values, [("%d-%d" % (round_, i)).encode() for i in range(10)],
                         "every value visible through port %d after round %d" % (other, round_))
        r.close()
    # A runtime error inside the array does not stop the others (as Redis).
    r = redis.Redis(port=cluster.ports[1])
    p = r.pipeline()
    p.set(keys[1], "x").incr(keys[1]).set(keys[2], "y").lpush(keys[3], "z")
    got = p.execute(raise_on_error=False)
    report.equal([got[0], got[2]], [True, True], "writes beside runtime errors applied")
    report.check(isinstance(got[1], redis.ResponseError) and isinstance(got[3], redis.ResponseError),
                 "INCR of a non-integer and LPUSH of a string fail inside the array", repr(got))
    report.equal(r.get(keys[2]), b"y", "the part on the other node was applied")
    r.close()
    # Multi-key commands over all three nodes inside the pipeline's transaction.
    r = redis.Redis(port=cluster.ports[2])
    p = r.pipeline()
    p.mset({k: "m-%s" % k for k in keys[:6]})
    p.mget(keys)
    p.exists(*keys)
    p.delete(*keys[3:])
    p.mget(keys[:6])
    got = p.execute()
    report.equal(got, [True, [("m-%s" % k).encode() for k in keys[:6]] + [b"2-%d" % i
                                                                         for i in range(6, 10)],
                       10, 7, [("m-%s" % k).encode() for k in keys[:3]] + [None] * 3],
                 "MSET, MGET, EXISTS and DEL over three nodes inside pipeline()")
    r.close()


def check_watch_retry(report, cluster):
    """redis-py's transaction() helper: WATCH keys on two nodes, read, write in MULTI; workers on
    every node increment both keys concurrently and must never lose an update."""
    addresses = cluster.addresses
    spread = keys_on(cluster.ports[0], addresses, "w")
    a, b = spread[addresses[0]][0], spread[addresses[2]][0]
    workers, rounds = 6, harness.scaled(40, minimum=10)
    retries = [0]
    errors = []

    def work(port):
        r = redis.Redis(port=port)

        def body(pipe):
            va = int(pipe.get(a) or 0)
            vb = int(pipe.get(b) or 0)
            pipe.multi()
            pipe.set(a, va + 1)
            pipe.set(b, vb + 1)

        for _ in range(rounds):
            tries = [0]

            def counted(pipe):
                tries[0] += 1
                body(pipe)

            try:
                r.transaction(counted, a, b)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))
            retries[0] += tries[0] - 1
        r.close()

    threads = [threading.Thread(target=work, args=(cluster.ports[i % 3],)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report.equal(errors, [], "transaction() never failed")
    r = redis.Redis(port=cluster.ports[1])
    report.equal((r.get(a), r.get(b)), (str(workers * rounds).encode(),) * 2,
                 "no increment lost on either node (%d retries after a changed WATCH)" % retries[0])
    report.check(retries[0] > 0, "concurrent workers made WATCH fail and retry", str(retries[0]))
    r.close()


def check_node_redis(report, cluster):
    """node-redis's multi() through every node."""
    node = shutil.which("node") or shutil.which("nodejs")
    module = "/usr/share/nodejs/redis"
    if node is None or not os.path.isdir(module):
        report.check(False, "node and node-redis are installed (scripts/packages.sh)")
        return
    keys = ["nr%d" % i for i in range(6)]
    script = """
const { createClient } = require('redis');
(async () => {
  const out = [];
  for (const port of process.argv.slice(1)) {  // node -e: the arguments follow argv[0]
    const c = createClient({ socket: { port: Number(port), host: '127.0.0.1' } });
    await c.connect();
    const m = c.multi();
    %s
    %s
    out.push(await m.exec());
    await c.quit();
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.log('ERROR ' + e); process.exit(1); });
""" % ("\n".join("m.set('%s', port + '-%d');" % (k, i) for i, k in enumerate(keys)),
       "\n".join("m.get('%s');" % k for k in keys))
    env = dict(os.environ, NODE_PATH="/usr/share/nodejs")
    run = subprocess.run([node, "-e", script] + [str(p) for p in cluster.ports], env=env,
                         capture_output=True, text=True, timeout=60)
    report.equal(run.returncode, 0, "node-redis multi() ran" + (": " + run.stdout + run.stderr))
    if run.returncode != 0:
        return
    import json
    results = json.loads(run.stdout)
    report.equal(len(results), 3, "one transaction per node")
    for port, result in zip(cluster.ports, results):
        want = ["OK"] * len(keys) + ["%d-%d" % (port, i) for i in range(len(keys))]
        report.equal(result, want, "node-redis multi().exec() through port %d" % port)


def check_against_redis(report, cluster, oracle):
    """Raw EXEC arrays (RESP2 and RESP3) of transactions over every node, byte for byte."""
    addresses = cluster.addresses
    spread = keys_on(cluster.ports[0], addresses, "d", per_node=2)
    k = [spread[a][i] for i in range(2) for a in addresses]  # two keys per node, interleaved
    scripts = [
        [["SET", k[0], "1"], ["INCR", k[0]], ["RPUSH", k[1], "a", "b"], ["SADD", k[2], "m"],
         ["LRANGE", k[1], "0", "-1"], ["GET", k[3]], ["PING"], ["ECHO", "hi"]],
        [["SET", k[4], "str"], ["LPUSH", k[4], "x"], ["INCR", k[5]], ["HSET", k[3], "f", "v"],
         ["HGETALL", k[3]], ["ZADD", k[2], "1", "m"], ["EXPIRE", k[0], "100"], ["TTL", k[0]]],
        [["DEL", k[0]], ["GET", k[0]], ["INCRBYFLOAT", k[1], "1.5"], ["SMEMBERS", k[2]],
         ["XADD", k[5], "1-1", "f", "v"], ["XLEN", k[5]], ["TYPE", k[4]], ["OBJECT", "ENCODING", k[3]]],
        # Multi-key commands over keys of every node: split over the nodes' parts.
        [["MSET", k[0], "a", k[1], "b", k[2], "c", k[3], "d"], ["LPUSH", k[4], "l"],
         ["MGET", k[3], k[4], k[5], k[0], k[2], k[1]], ["EXISTS", k[0], k[5], k[1], k[0], k[4]],
         ["TOUCH", k[5], k[4], k[3]], ["DEL", k[1], k[5], k[2]], ["MGET", k[2], k[3], k[1]],
         ["UNLINK", k[3], k[4], k[0]], ["EXISTS", k[0], k[1], k[2], k[3], k[4], k[5]]],
    ]
    for proto in (2, 3):
        with RespClient(oracle.port) as theirs:
            theirs.call("FLUSHALL")
        for i, port in enumerate(cluster.ports):
            with RespClient(port) as ours:
                ours.call("FLUSHALL")
            for j, script in enumerate(scripts):
                replies = []
                for server_port in (port, oracle.port):
                    with RespClient(server_port) as c:
                        c.call("HELLO", str(proto))
                        c.call("MULTI")
                        for cmd in script:
                            c.call(*cmd)
                        replies.append(c.call("EXEC"))
                report.equal(replies[0], replies[1],
                             "EXEC array of script %d via node %d, RESP%d" % (j, i + 1, proto))
            with RespClient(oracle.port) as theirs:
                theirs.call("FLUSHALL")


def check_watch_and_crossslot(report, cluster):
    addresses = cluster.addresses
    spread = keys_on(cluster.ports[0], addresses, "x")
    a, b, c = (spread[x][0] for x in addresses)
    one, two = RespClient(cluster.ports[0]), RespClient(cluster.ports[1])
    # WATCH of keys on two nodes; a write through a third node to either fails the EXEC.
    for changed in (a, c):
        one.call("SET", a, "0")
        one.call("SET", c, "0")
        report.equal(one.call("WATCH", a, c), b"+OK\r\n", "WATCH keys on two nodes")
        two.call("SET", changed, "1")
        one.call("MULTI")
        one.call("SET", b, "from-tx")
        one.call("GET", a)
        report.equal(one.call("EXEC"), b"*-1\r\n", "EXEC null after %s changed" % changed)
        report.equal(two.call("EXISTS", b), b":0\r\n", "nothing of the transaction applied")
    one.call("WATCH", a, c)
    one.call("MULTI")
    one.call("SET", b, "from-tx")
    one.call("GET", a)
    report.equal(one.call("EXEC"), b"*2\r\n+OK\r\n$1\r\n0\r\n",
                 "EXEC runs with the WATCHes unchanged")
    # A single command whose keys span nodes is refused when queued and aborts EXEC.
    one.call("MULTI")
    one.call("SET", a, "2")
    crossed = one.call("RENAME", b, c)
    report.check(crossed.startswith(b"-CROSSSLOT"), "RENAME over two nodes inside MULTI",
                 repr(crossed))
    report.equal(one.call("EXEC"),
                 b"-EXECABORT Transaction discarded because of previous errors.\r\n",
                 "EXEC after a CROSSSLOT aborts")
    report.equal(two.call("GET", a), b"$1\r\n0\r\n", "the aborted transaction wrote nothing")
    one.close()
    two.close()


def check_aof_blocks(report, cluster):
    """Each participant's append-only file holds its part of a transaction inside MULTI/EXEC."""
    addresses = cluster.addresses
    spread = keys_on(cluster.ports[0], addresses, "aof")
    keys = [spread[a][0] for a in addresses]
    with RespClient(cluster.ports[0]) as c:
        c.call("MULTI")
        for k in keys:
            c.call("SET", k, "aof-value")
            c.call("INCR", k + "-n")
        report.equal(c.call("EXEC")[:3], b"*%d\r" % (2 * len(keys)), "a transaction over 3 nodes")
    time.sleep(0.3)
    for node, key in zip(cluster.nodes, keys):
        path = os.path.join(node.dir, "appendonly.aof")
        data = open(path, "rb").read() if os.path.exists(path) else b""
        needle = harness.encode_command("SET", key, "aof-value")
        at = data.rfind(needle)
        before = data[:at]
        report.check(at >= 0 and before.rfind(b"MULTI") > before.rfind(b"EXEC") and
                     data.find(b"EXEC", at) > 0,
                     "%s's file records its part inside MULTI/EXEC" % node.name, repr(data[-400:]))


def check_lock_timeouts(report, cluster):
    """A participant stopped during a commit holds the locks another one took: requests for
    those keys wait, then fail with TRYAGAIN after request-timeout; the stopped transaction is
    reported, and once the node continues its keys work again."""
    addresses = cluster.addresses
    order = sorted(range(3), key=lambda i: addresses[i])
    first, last = order[0], order[2]
    spread = keys_on(cluster.ports[0], addresses, "lock")
    a, b = spread[addresses[first]][0], spread[addresses[last]][0]
    # The first node coordinates: it locks a itself, then sends b's LOCK and RUN together.
    coordinator = cluster.ports[first]
    with RespClient(coordinator) as c:
        # The same transaction once first, so a transaction link to each node is open: the
        # frames below are surely sent before the node stops.
        c.call("MULTI")
        c.call("SET", a, "0")
        c.call("SET", b, "0")
        report.equal(c.call("EXEC"), b"*2\r\n+OK\r\n+OK\r\n", "a transaction over a and b")
    # b's node, stopped, holds its LOCK and RUN unanswered, so the coordinator keeps a locked.
    cluster.kill(last, signal.SIGSTOP)
    holder = RespClient(coordinator)
    holder.send(b"".join(harness.encode_command(*cmd) for cmd in
                         (["MULTI"], ["SET", a, "1"], ["SET", b, "1"], ["EXEC"])))
    time.sleep(0.2)
    waiter = RespClient(cluster.ports[first])
    started = time.time()
    got = waiter.call("GET", a)
    waited = time.time() - started
    report.check(got.startswith(b"-TRYAGAIN"), "GET of a locked key fails with TRYAGAIN", repr(got))
    report.check(REQUEST_TIMEOUT / 1000 * 0.8 <= waited <= REQUEST_TIMEOUT / 1000 + 1.5,
                 "after about request-timeout", "%.2f s" % waited)
    replies = [holder.read() for _ in range(4)]
    report.equal(replies[:3], [b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n"], "queued")
    report.check(replies[3].startswith(b"-ERR cross-node transaction incomplete") and
                 addresses[last].encode() in replies[3] and b"may have been applied" in replies[3],
                 "the stopped participant's part is reported as unknown", repr(replies[3]))
    cluster.kill(last, signal.SIGCONT)
    with RespClient(cluster.ports[first]) as c:
        report.equal(c.call("GET", a), b"$1\r\n0\r\n", "the running participant applied nothing")
        report.equal(read_when_up(c, b), b"$1\r\n0\r\n",
                     "the late part was refused when the stopped node continued")
        report.equal(c.call("SET", a, "2"), b"+OK\r\n", "the key is unlocked")
    holder.close()
    waiter.close()


def parse_incomplete(text):
    """The addresses an incomplete transaction's error names as applied ("applied on A, B; ...")."""
    head = text.split(";")[0]
    listed = head.split("applied on ", 1)[1].strip()
    return set() if listed == "no node" else {a.strip() for a in listed.split(",")}


def check_kill_during_commit(report, cluster):
    """kill -9 of a participant while transactions over all three nodes commit through the two
    others: every transaction is answered (committed, aborted naming the dead peer, or incomplete
    naming exactly where it was applied), and the survivors' counters hold exactly the committed
    increments plus those the incomplete errors say were applied there. Runs last (the node stays
    dead)."""
    addresses = cluster.addresses
    victim = max(range(3), key=lambda i: addresses[i])
    survivors = [i for i in range(3) if i != victim]
    spread = keys_on(cluster.ports[0], addresses, "kill")
    keys = {i: spread[addresses[i]][0] for i in range(3)}
    with RespClient(cluster.ports[survivors[0]]) as c:
        for k in keys.values():
            read_when_up(c, k)
            c.call("SET", k, "0")
    stop = [False]
    lock = threading.Lock()
    outcome = {"committed": 0, "applied": {i: 0 for i in survivors}, "errors": [], "bad": [],
               "slowest": 0.0}

    def writer(port):
        c = RespClient(port, timeout=REQUEST_TIMEOUT / 1000 * 4)
        batch = b"".join(harness.encode_command(*cmd) for cmd in
                         [["MULTI"]] + [["INCR", keys[i]] for i in range(3)] + [["EXEC"]])
        while not stop[0]:
            started = time.time()
            c.send(batch)
            try:
                replies = [c.read() for _ in range(5)]
            except OSError as e:
                with lock:
                    outcome["bad"].append("no answer: %r" % e)
                return
            took = time.time() - started
            reply = replies[4]
            with lock:
                outcome["slowest"] = max(outcome["slowest"], took)
                if reply.startswith(b"*3\r\n"):
                    outcome["committed"] += 1
                elif not reply.startswith(b"-"):
                    outcome["bad"].append(reply)
                else:
                    text = reply.decode()
                    outcome["errors"].append(text)
                    if addresses[victim] not in text:
                        outcome["bad"].append(text)
                    elif text.startswith("-ERR cross-node transaction incomplete"):
                        for i in survivors:
                            if addresses[i] in parse_incomplete(text):
                                outcome["applied"][i] += 1
        c.close()

    threads = [threading.Thread(target=writer, args=(cluster.ports[survivors[t % 2]],))
               for t in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    cluster.kill(victim)
    time.sleep(1.0)
    stop[0] = True
    for t in threads:
        t.join()
    incomplete = [e for e in outcome["errors"] if "incomplete" in e]
    label = "(%d committed, %d errors of which %d incomplete, e.g. %r)" % (
        outcome["committed"], len(outcome["errors"]), len(incomplete), incomplete[-1:])
    print("kill -9 of a participant: " + label, flush=True)
    report.check(outcome["committed"] > 0 and outcome["errors"], "commits before, errors after "
                 "the kill " + label, label)
    report.equal(outcome["bad"][:3], [], "every failure names the dead peer " + label)
    report.check(outcome["slowest"] < REQUEST_TIMEOUT / 1000 * 3, "no transaction hung",
                 "%.2f s" % outcome["slowest"])
    dead = [cluster.nodes[i] for i in survivors if not cluster.nodes[i].alive()]
    report.equal([n.name for n in dead], [], "the survivors still run")
    for n in dead:
        print(n.log(tail=12000), flush=True)
    if dead:
        return victim
    with RespClient(cluster.ports[survivors[0]]) as c:
        for i in survivors:
            got = harness.parse_reply(c.call("GET", keys[i]))
            report.equal(int(got), outcome["committed"] + outcome["applied"][i],
                         "%s holds the committed increments and those reported applied there"
                         % addresses[i])
        # Nothing stays locked: a transaction over the two survivors commits.
        c.call("MULTI")
        for i in survivors:
            c.call("INCR", keys[i])
        report.check(c.call("EXEC").startswith(b"*2\r\n"), "the survivors' keys are free")
    return victim


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_cross_transactions")
    # Health checks slow to mark a stopped node down: the stopped-participant check is about the
    # lock wait and the RUN's deadline, not about a coordinator giving up early on a down peer.
    with harness.Cluster(args.server, 3, name="crosstx", request_timeout=REQUEST_TIMEOUT,
                         cluster_options={"failure-limit": 20},
                         extra="[persistence]\nappendonly = true\nappendfsync = \"always\"\n") \
            as cluster, harness.start_oracle() as oracle:
        check_redis_py(report, cluster)
        check_watch_retry(report, cluster)
        check_node_redis(report, cluster)
        check_against_redis(report, cluster, oracle)
        check_watch_and_crossslot(report, cluster)
        check_aof_blocks(report, cluster)
        check_lock_timeouts(report, cluster)
        victim = check_kill_during_commit(report, cluster)
        for i, node in enumerate(cluster.nodes):
            if i != victim:
                report.check(node.alive(), "%s still running" % node.name, node.log())
    report.finish()


if __name__ == "__main__":
    main()
