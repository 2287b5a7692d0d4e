"""Differential test: the same seeded random commands go to ringkv and to a real redis-server 7,
and the replies must be byte-identical (clock-dependent integers within a tolerance, hash-ordered
arrays as multisets). Covers RESP2 multibulk requests, RESP3 after HELLO 3, and inline requests,
and what COMMAND GETKEYS and GETKEYSANDFLAGS say of every command and of generated requests.

    /usr/bin/python3 test_differential.py --server build/ringkv-server [--seed N] [--count N]
                                          [--cluster N]

With --cluster N the commands go through an N-node ringkv cluster, round-robin over one
connection per node (each paired with its own connection to the one redis-server, so per-client
state such as CLIENT SETNAME matches), and must still answer byte for byte, except where a
cluster cannot be Redis: an atomic multi-key command (MSETNX, RENAME, RENAMENX, COPY) whose keys
have different owners must get exactly the CROSSSLOT error and is not sent to redis; generated
SCANs are skipped (their cursors encode the node) and a full SCAN walk per node is compared with
redis's KEYS instead; RANDOMKEY is compared only while the keyspace has at most one key.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import main_support  # noqa: E402
from command_gen import CommandGen, atomic_keys  # noqa: E402

CROSSSLOT = b"-CROSSSLOT Keys in request don't hash to the same node\r\n"


def replies_agree(a, b, mode):
    """True when replies a and b count as equal under the comparison mode."""
    if a == b:
        return True
    if isinstance(mode, tuple) and mode[0] == "tol":
        if a[:1] == b[:1] == b":":
            return abs(int(a[1:-2]) - int(b[1:-2])) <= mode[1]
        return False
    if mode == "time":
        pa, pb = harness.parse_reply(a), harness.parse_reply(b)
        return (a[:1] == b[:1] and isinstance(pa, list) and isinstance(pb, list)
                and len(pa) == len(pb) == 2 and abs(int(pa[0]) - int(pb[0])) <= 1
                and 0 <= int(pa[1]) < 10**6)
    if mode == "unordered":
        pa, pb = harness.parse_reply(a), harness.parse_reply(b)
        if isinstance(pa, list) and isinstance(pb, list) and a[:1] == b[:1]:
            return sorted(pa) == sorted(pb)
        if isinstance(pa, dict) and isinstance(pb, dict) and a[:1] == b[:1]:
            return pa == pb
    if isinstance(mode, tuple) and mode[0] == "sample":
        # A random pick (SRANDMEMBER, SPOP with a count): the same reply type and length, every
        # element one of the allowed members, and no repeats when the picks must be distinct.
        _, distinct, allowed = mode
        pa, pb = harness.parse_reply(a), harness.parse_reply(b)
        return (a[:1] == b[:1] and isinstance(pa, list) and isinstance(pb, list)
                and len(pa) == len(pb) and all(x in allowed for x in pa)
                and (not distinct or len(set(pa)) == len(pa)))
    if mode == "scan":
        pa, pb = harness.parse_reply(a), harness.parse_reply(b)
        if (a[:1] == b[:1] == b"*" and isinstance(pa, list) and isinstance(pb, list)
                and len(pa) == len(pb) == 2 and isinstance(pa[1], list)
                and isinstance(pb[1], list)):
            return pa[0] == pb[0] and sorted(pa[1]) == sorted(pb[1])
    return False


class ClusterRules:
    """Decides which generated requests a cluster can answer like a single Redis, asking a node
    for each key's owner (CLUSTER OWNER) once and caching the answer."""

    def __init__(self, port):
        self.client = harness.RespClient(port)
        self.owners = {}

    def owner(self, key):
        if key not in self.owners:
            self.owners[key] = self.client.call("CLUSTER", "OWNER", key)
        return self.owners[key]

    def classify(self, argv, oracle):
        """"crossslot" (ringkv must refuse it, redis is not asked), "skip" (not comparable)
        or None (compare as usual). `oracle` is the redis connection the
        request would go to."""
        name = argv[0].lower()
        if name == b"scan":
            return "skip"
        if name == b"randomkey" and len(argv) == 1:
            oracle.send(harness.encode_command("DBSIZE"))
            return "skip" if harness.parse_reply(oracle.read()) > 1 else None
        keys = atomic_keys(argv)
        if keys is not None and len({self.owner(k) for k in keys}) > 1:
            return "crossslot"
        return None

    def close(self):
        self.client.close()


class Pair:
    """Connections to both servers, in pairs: one to each ringkv node (one node unless in cluster
    mode) with its own redis connection. run() sends a request through the next pair in turn and
    compares the replies."""

    def __init__(self, report, ringkv_ports, redis_port, label, rules=None):
        self.report = report
        self.ours = [harness.RespClient(p) for p in ringkv_ports]
        self.theirs = [harness.RespClient(redis_port) for _ in ringkv_ports]
        self.label = label
        self.rules = rules
        self.turn = len(ringkv_ports) - 1  # the first request goes through the first pair
        self.mismatches = 0
        self.count = 0
        self.crossslot = 0
        self.skipped = 0

    def run(self, request, mode, shown, argv=None, advance=True):
        """Sends `request` (argv when known, for the cluster rules) through the next pair, or
        through the same pair as the last request when not `advance`."""
        if advance:
            self.turn = (self.turn + 1) % len(self.ours)
        i = self.turn
        ours, theirs = self.ours[i], self.theirs[i]
        verdict = self.rules.classify(argv, theirs) if self.rules and argv else None
        if verdict == "skip":
            self.skipped += 1
            return None, None
        self.count += 1
        ours.send(request)
        got = ours.read()
        if verdict == "crossslot":
            want = CROSSSLOT
            self.crossslot += 1
            ok = self.report.check(
                got == want, "%s #%d (node %d) %s is %r" % (self.label, self.count, i + 1,
                                                            shown[:300], want),
                "ringkv %r" % got[:300])
            if not ok:
                self.mismatches += 1
                self.resync()
            return got, want
        theirs.send(request)
        want = theirs.read()
        ok = replies_agree(got, want, mode)
        where = " (node %d)" % (i + 1) if len(self.ours) > 1 else ""
        self.report.check(
            ok,
            "%s #%d%s %s" % (self.label, self.count, where, shown[:300]),
            "ringkv %r\n      redis  %r" % (got[:300], want[:300]),
        )
        if not ok:
            self.mismatches += 1
            self.resync()
        return got, want

    def resync(self):
        """After a difference the two keyspaces may have diverged; empty every database on both
        and go back to db 0 on every connection, so one bug is reported once instead of
        cascading."""
        for client in (self.ours[0], self.theirs[0]):
            client.send(harness.encode_command("FLUSHALL"))
            client.read()
        for client in self.ours + self.theirs:
            client.send(harness.encode_command("SELECT", "0"))
            client.read()

    def close(self):
        for c in self.ours + self.theirs:
            c.close()


def show(argv):
    return repr([a if len(a) <= 60 else a[:40] + b"...(%d bytes)" % len(a) for a in argv])


def run_generated(pair, gen, count):
    """Runs `count` generated requests, each generated sequence through one pair: its requests
    assume one connection's state (its SELECTed database above all)."""
    done = 0
    while done < count:
        for n, (argv, mode) in enumerate(gen.next()):
            pair.run(harness.encode_command(*argv), mode, show(argv), argv, advance=n == 0)
            done += 1


def scan_all(client, options):
    """Walks SCAN from cursor 0 to 0 with `options`; returns (keys in order, calls, error)."""
    keys, cursor, calls = [], b"0", 0
    while True:
        calls += 1
        raw = client.call("SCAN", cursor, *options)
        reply = harness.parse_reply(raw)
        if not isinstance(reply, list) or len(reply) != 2 or calls > 100000:
            return keys, calls, raw[:300]
        cursor, batch = reply
        keys += batch
        if cursor == b"0":
            return keys, calls, None


SCAN_VARIANTS = [
    ([], b"*", True), ([b"COUNT", b"1"], b"*", True), ([b"COUNT", b"7"], b"*", True),
    ([b"COUNT", b"1000"], b"*", True), ([b"MATCH", b"scan:*"], b"scan:*", True),
    ([b"MATCH", b"*1?", b"COUNT", b"25"], b"*1?", True),
    ([b"MATCH", b"nomatch*"], b"nomatch*", True),
    ([b"TYPE", b"string"], b"*", True), ([b"TYPE", b"STRING", b"COUNT", b"3"], b"*", True),
    ([b"TYPE", b"hash"], b"*", False), ([b"MATCH", b"k?", b"TYPE", b"string"], b"k?", True),
]


def check_cluster_scan(report, ringkv_ports, oracle_port):
    """Full SCAN walks through every node, with MATCH/COUNT/TYPE variants, must return exactly
    the keys redis's KEYS returns for the same pattern (all keys are strings), each once."""
    with harness.RespClient(oracle_port) as oracle:
        clients = [harness.RespClient(p) for p in ringkv_ports]
        # The generated run leaves keys of every type behind; the walks expect strings only.
        for c in (clients[0], oracle):
            report.equal(c.call("FLUSHALL"), b"+OK\r\n", "cluster scan: FLUSHALL")
        fill = []
        for i in range(600):
            fill += [b"scan:%d" % i, b"v%d" % i]
        for c in (clients[0], oracle):
            report.equal(c.call("MSET", *fill), b"+OK\r\n", "cluster scan: MSET 600 keys")
        for options, pattern, strings in SCAN_VARIANTS:
            want = sorted(harness.parse_reply(oracle.call("KEYS", pattern))) if strings else []
            for n, c in enumerate(clients):
                keys, calls, error = scan_all(c, options)
                what = "cluster scan via node %d %r" % (n + 1, options)
                report.check(error is None, what + " walks to cursor 0", repr(error))
                report.equal(len(keys), len(set(keys)), what + ": no key twice")
                report.check(sorted(set(keys)) == want, what + " = redis KEYS %r" % pattern,
                             "ringkv %d keys, redis %d; missing %r, extra %r" % (
                                 len(set(keys)), len(want), sorted(set(want) - set(keys))[:5],
                                 sorted(set(keys) - set(want))[:5]))
        for argv in ([b"SCAN", b"x"], [b"SCAN", b"0", b"COUNT", b"0"], [b"SCAN", b"0", b"MATCH"],
                     [b"SCAN", b"0", b"TYPE"], [b"SCAN", b"18446744073709551616"],
                     [b"SCAN", b"0", b"FOO", b"1"], [b"SCAN", b"0", b"COUNT", b"x"]):
            want = oracle.call(*argv)
            for n, c in enumerate(clients):
                report.equal(c.call(*argv), want, "cluster scan via node %d %s" % (n + 1,
                                                                                    show(argv)))
        for c in (clients[0], oracle):
            c.call("DEL", *fill[::2])
        for c in clients:
            c.close()


def main(argv=None, name="test_differential"):
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--count", type=int, default=harness.scaled(5000, minimum=500),
                   help="RESP2 commands (RESP3: count/8); default 5000 x RINGKV_TEST_SCALE")
    p.add_argument("--cluster", type=int, default=0, metavar="N",
                   help="run through an N-node ringkv cluster (0: one standalone node)")
    args = p.parse_args(argv)
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report(name)
    gen = CommandGen(rng)

    ours, nodes = main_support.server_or_cluster(args.server, args.cluster, "diff")
    with ours, harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="redis") as oracle:
        ports = [n.port for n in nodes]
        try:
            pairs = compare_all(report, gen, rng, args.count, ports, oracle.port, args.cluster)
            if args.cluster:
                check_cluster_scan(report, ports, oracle.port)
        except (OSError, ValueError) as e:
            # A crash, hang or unparsable reply ends the run; the server logs say why.
            report.check(False, "run aborted: %r" % e, "\n".join(n.log() for n in nodes))
            pairs = []
        total = sum(p.count for p in pairs)
        bad = sum(p.mismatches for p in pairs)
        print("compared %d requests, %d differences" % (total, bad))
        if args.cluster:
            print("CROSSSLOT and cluster-mode errors checked: %d, not comparable (skipped): %d" % (
                sum(p.crossslot for p in pairs), sum(p.skipped for p in pairs)))
        for n in nodes:
            report.check(n.alive(), "%s still running after the run" % n.name, n.log())
        for n in nodes:
            harness.check_clean_exit(report, n)
    report.finish()


def command_names(port):
    """(name split at '|', arity) of every command and subcommand the server lists."""
    with harness.RespClient(port) as c:
        rows = harness.parse_reply(c.call("COMMAND", "INFO"))
    names = []
    for row in rows:
        names.append((row[0].split(b"|"), row[1]))
        for sub in row[9]:
            names.append((sub[0].split(b"|"), sub[1]))
    return names


def command_info_rows(port):
    """COMMAND INFO as {name: row}, every subcommand's row under its own name ("config|get")
    and a container's row without its subcommand list."""
    with harness.RespClient(port) as c:
        rows = harness.parse_reply(c.call("COMMAND", "INFO"))
    out = {}
    for row in rows:
        out[row[0]] = row[:9]
        for sub in row[9]:
            out[sub[0]] = sub
    return out


def command_docs_rows(port):
    """COMMAND DOCS as {name: fields}, every subcommand's under its own name ("config|get") and
    a container's without its subcommands."""
    with harness.RespClient(port) as c:
        flat = harness.parse_reply(c.call("COMMAND", "DOCS"))
    out = {}
    for name, body in zip(flat[0::2], flat[1::2]):
        fields = dict(zip(body[0::2], body[1::2]))
        subs = fields.pop(b"subcommands", [])
        out[name] = fields
        for sub, sub_body in zip(subs[0::2], subs[1::2]):
            out[sub] = dict(zip(sub_body[0::2], sub_body[1::2]))
    return out


# Rows whose docs are ringkv's own: CLUSTER, its INFO and NODES (ringkv's ring).
RINGKV_DOCS = {b"cluster", b"cluster|info", b"cluster|nodes"}


def compare_command_table(report, port, oracle_port):
    """Every command and subcommand both servers list must have the same COMMAND INFO row
    (arity, flags, first/last/step derived from the key specs, ACL categories, tips, key specs)
    and the same COMMAND DOCS (arguments with their key spec indexes, history, ...), except
    RINGKV_DOCS. A container's subcommands are compared one by one: Redis lists them in its
    hash table's order."""
    for what, rows in (("COMMAND INFO", command_info_rows), ("COMMAND DOCS", command_docs_rows)):
        ours, theirs = rows(port), rows(oracle_port)
        common = sorted(set(ours) & set(theirs))
        report.check(len(common) > 300, "%s: %d commands and subcommands in common"
                     % (what, len(common)))
        for name in common:
            if what == "COMMAND DOCS" and name in RINGKV_DOCS:
                continue
            report.equal(ours[name], theirs[name], "%s of %s" % (what, name.decode()))


def getkeys_targets(gen, port, oracle_port, generated):
    """Requests to ask COMMAND GETKEYS(ANDFLAGS) about: every command and subcommand both servers
    list (not ringkv's own CLUSTER subcommands), with as many arguments as its arity asks and 1
    and 3 more, as "k<i>", and again with a "2" first or second (a key count: EVAL's,
    ZUNIONSTORE's, LMPOP's, BLMPOP's); then `generated` generated requests."""
    theirs = {tuple(base) for base, _ in command_names(oracle_port)}
    names = [(base, arity) for base, arity in command_names(port) if tuple(base) in theirs]
    out = []
    for base, arity in sorted(names):
        need = abs(arity) - len(base)
        for extra in (need, need + 1, need + 3):
            args = [b"k%d" % i for i in range(extra)]
            out.append(base + args)
            for at in (0, 1):
                if at < extra:
                    out.append(base + args[:at] + [b"2"] + args[at + 1:])
    # Key counts past an int, which Redis truncates to one (INT64_MAX to -1, 2^32 + 1 to 1).
    for count in (b"9223372036854775807", b"4294967297", b"4294967298", b"2147483648"):
        out += [[b"ZUNION", count, b"k1", b"k2"], [b"EVAL", b"s", count, b"k1", b"k2"],
                [b"LMPOP", count, b"k1", b"k2", b"LEFT"], [b"ZUNIONSTORE", b"d", count, b"k1"]]
    wanted = len(out) + generated
    while len(out) < wanted:
        out += [argv for argv, _ in gen.next()]
    return out


def compare_all(report, gen, rng, count, ours_ports, oracle_port, cluster):
    """Runs the RESP2, RESP3 and inline comparisons; returns their Pairs for the totals."""
    rules = ClusterRules(ours_ports[0]) if cluster else None
    pair = Pair(report, ours_ports, oracle_port, "resp2", rules)
    for argv, mode in (gen.arity_sweep() + gen.set_option_sweep() + gen.bitmap_hll_sweep() +
                      gen.geo_sweep()):
        pair.run(harness.encode_command(*argv), mode, show(argv), argv)
    run_generated(pair, gen, count)
    compare_command_table(report, ours_ports[0], oracle_port)
    # COMMAND GETKEYS and GETKEYSANDFLAGS of every command, and of generated requests (not run).
    for argv in getkeys_targets(gen, ours_ports[0], oracle_port, max(count // 10, 50)):
        for sub in (b"GETKEYS", b"GETKEYSANDFLAGS"):
            request = [b"COMMAND", sub] + argv
            pair.run(harness.encode_command(*request), "exact", show(request))
    pair.close()

    # RESP3: HELLO variants first, then generated commands on the upgraded connections.
    pair3 = Pair(report, ours_ports, oracle_port, "resp3", rules)
    for argv in ([b"HELLO", b"4"], [b"HELLO", b"x"], [b"HELLO", b"3", b"FOO"],
                 [b"HELLO", b"2"], [b"HELLO", b"3", b"SETNAME", b"r3"], [b"HELLO", b"3"]):
        for ours, theirs in zip(pair3.ours, pair3.theirs):
            ours.send(harness.encode_command(*argv))
            theirs.send(harness.encode_command(*argv))
            got, want = ours.read(), theirs.read()
            report.equal(harness.hello_masked(got), harness.hello_masked(want), "resp3 %s" % show(argv))
    run_generated(pair3, gen, max(count // 8, 50))
    pair3.close()

    # Inline requests, on their own connections (they are one line each).
    pair_inline = Pair(report, ours_ports, oracle_port, "inline", rules)
    for _ in range(max(count // 20, 30)):
        line = gen.inline()
        pair_inline.run(line + rng.choice([b"\r\n", b"\n"]), "exact", repr(line))
    pair_inline.close()
    if rules:
        rules.close()

    return [pair, pair3, pair_inline]


if __name__ == "__main__":
    main()
