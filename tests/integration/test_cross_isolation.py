"""Isolation checker for transactions across nodes (Jepsen style, real processes): on a 3-node
cluster with [cluster] atomic-multikey on, writers run cross-node transactions and atomic MSETs
through random nodes while readers read the same keys every way a client can; no reader may ever
see some parts of a write applied and others not.

  counter group a, b, c (one key per node): writers run MULTI INCR a INCR b INCR c EXEC (and
      INCRBY by 2); readers run MULTI GET a GET b GET c EXEC and atomic MGET a b c (all equal),
      and plain GETs one after the other (a value read later is never smaller than one read
      before: the writes only grow, so seeing a new a and then an old b would show);
  value group d, e, f: writers run atomic MSET d x e x f x with fresh x, alone or inside
      MULTI ... EXEC (where it is split over the three nodes' parts); readers run MGET d e f
      (alone and inside MULTI), and MULTI GET d GET e GET f EXEC (all equal).

Each seed picks new keys (so other nodes come first in the lock order) and new nodes for every
client. At the end the counters equal the number of committed increments.

    /usr/bin/python3 test_cross_isolation.py --server build/ringkv-server [--seed N]
"""

import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import RespClient  # noqa: E402


def one_key_per_node(port, addresses, prefix):
    found = {}
    i = 0
    with RespClient(port) as c:
        while len(found) < len(addresses):
            key = "%s:%d" % (prefix, i)
            i += 1
            owner = harness.parse_reply(c.call("CLUSTER", "OWNER", key)).decode()
            found.setdefault(owner, key)
    return [found[a] for a in addresses]


def pipelined(client, *commands):
    """Sends the commands at once and returns their replies, parsed."""
    client.send(b"".join(harness.encode_command(*c) for c in commands))
    return [harness.parse_reply(client.read()) for _ in commands]


def run_seed(report, cluster, seed, seconds):
    rng = random.Random(seed)
    addresses = cluster.addresses
    counters = one_key_per_node(cluster.ports[0], addresses, "iso%d:n" % seed)
    values = one_key_per_node(cluster.ports[0], addresses, "iso%d:v" % seed)
    rng.shuffle(counters)
    rng.shuffle(values)
    stop = time.time() + seconds
    stats = {"increments": 0, "msets": 0, "reads": 0, "errors": [], "violations": []}
    lock = threading.Lock()

    def note(kind, detail):
        with lock:
            stats[kind].append(detail)

    def writer(port, wseed):
        wr = random.Random(wseed)
        c = RespClient(port)
        while time.time() < stop:
            if wr.random() < 0.6:
                by = wr.choice((1, 2))
                cmds = [["MULTI"]] + [["INCRBY", k, str(by)] for k in counters] + [["EXEC"]]
                got = pipelined(c, *cmds)
                result = got[-1]
                if not isinstance(result, list) or len(result) != 3:
                    note("errors", "incr transaction: %r" % (result,))
                    continue
                with lock:
                    stats["increments"] += by
            else:
                x = str(wr.getrandbits(48))
                mset = ["MSET"] + [a for k in values for a in (k, x)]
                if wr.random() < 0.5:
                    got = pipelined(c, mset)[0]
                else:
                    got = pipelined(c, ["MULTI"], mset, ["EXEC"])[-1]
                    got = got[0] if isinstance(got, list) and len(got) == 1 else got
                if got != b"OK":
                    note("errors", "mset: %r" % (got,))
                    continue
                with lock:
                    stats["msets"] += 1
        c.close()

    def reader(port, rseed):
        rr = random.Random(rseed)
        c = RespClient(port)
        while time.time() < stop:
            choice = rr.randrange(7)
            if choice == 0:
                got = pipelined(c, ["MULTI"], *[["GET", k] for k in counters], ["EXEC"])[-1]
                what, group = "MULTI GET counters", got
            elif choice == 1:
                what, group = "MGET counters", pipelined(c, ["MGET"] + counters)[0]
            elif choice == 2:
                what, group = "MGET values", pipelined(c, ["MGET"] + values)[0]
            elif choice == 3:
                got = pipelined(c, ["MULTI"], *[["GET", k] for k in values], ["EXEC"])[-1]
                what, group = "MULTI GET values", got
            elif choice in (5, 6):
                # MGET inside MULTI: split over the nodes' parts of the transaction.
                keys = counters if choice == 5 else values
                got = pipelined(c, ["MULTI"], ["MGET"] + keys, ["EXEC"])[-1]
                what = "MULTI MGET " + ("counters" if choice == 5 else "values")
                group = got[0] if isinstance(got, list) and len(got) == 1 else got
            else:
                # Plain GETs one at a time, each waiting for the last: never going down.
                order = counters[:]
                rr.shuffle(order)
                seen = [c.call("GET", k) for k in order]
                nums = [int(harness.parse_reply(v) or 0) for v in seen]
                with lock:
                    stats["reads"] += 1
                if any(later < earlier for earlier, later in zip(nums, nums[1:])):
                    note("violations", "plain GETs %s read %s" % (order, nums))
                continue
            with lock:
                stats["reads"] += 1
            if not isinstance(group, list) or len(group) != 3:
                note("errors", "%s: %r" % (what, group))
            elif len(set(group)) != 1:
                note("violations", "%s saw %r" % (what, group))
        c.close()

    threads = [threading.Thread(target=writer, args=(rng.choice(cluster.ports), rng.random()))
               for _ in range(3)]
    threads += [threading.Thread(target=reader, args=(rng.choice(cluster.ports), rng.random()))
                for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with RespClient(rng.choice(cluster.ports)) as c:
        final = [harness.parse_reply(c.call("GET", k)) for k in counters]
    label = "seed %d (%d increments, %d MSETs, %d reads)" % (
        seed, stats["increments"], stats["msets"], stats["reads"])
    report.equal(stats["violations"][:5], [], "no reader saw a partial write, " + label)
    report.equal(stats["errors"][:5], [], "no request failed, " + label)
    report.equal(final, [str(stats["increments"]).encode()] * 3,
                 "the counters hold every committed increment, " + label)
    report.check(stats["increments"] > 0 and stats["msets"] > 0 and stats["reads"] > 20,
                 "the seed did work", label)


def main():
    parser = harness.arg_parser(__doc__)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    report = harness.Report("test_cross_isolation")
    base = args.seed if args.seed is not None else random.randrange(1 << 30)
    print("seed %d" % base, flush=True)
    seeds = harness.scaled(6, minimum=2)
    with harness.Cluster(args.server, 3, name="isolation", request_timeout=3000,
                         cluster_options={"atomic-multikey": True}) as cluster:
        for i in range(seeds):
            run_seed(report, cluster, base + i, 1.5)
        for node in cluster.nodes:
            report.check(node.alive(), "%s still running" % node.name, node.log())
    report.finish()


if __name__ == "__main__":
    main()
