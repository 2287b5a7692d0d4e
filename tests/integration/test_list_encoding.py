"""List node layout, differential against a real redis-server 7.0: list-max-listpack-size (and its
alias list-max-ziplist-size) and list-compress-depth through CONFIG GET/SET (values, bad values,
error texts), then random list commands (pushes and pops at both ends, LTRIM, LREM, LSET, LINSERT,
LMOVE, RESTORE) on lists created under various settings, comparing every list's DUMP payload
(its quicklist node boundaries, compressed interior nodes and all), OBJECT ENCODING and DEBUG
OBJECT's ql_ fields byte for byte. Redis's own DUMPs are also RESTOREd into ringkv and dumped back.

    /usr/bin/python3 test_list_encoding.py --server build/ringkv-server [--seed N] [--rounds N]
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import RespClient  # noqa: E402

CONFIG_STEPS = [
    ["CONFIG", "GET", "list-max-listpack-size"], ["CONFIG", "GET", "list-max-ziplist-size"],
    ["CONFIG", "GET", "list-compress-depth"],
    ["CONFIG", "SET", "list-max-ziplist-size", "5"], ["CONFIG", "GET", "list-max-listpack-size"],
    ["CONFIG", "SET", "list-max-listpack-size", "x"],
    ["CONFIG", "SET", "list-max-listpack-size", "2kb"],
    ["CONFIG", "SET", "list-max-listpack-size", "99999999999"],
    ["CONFIG", "SET", "list-max-listpack-size", "-2147483648"],
    ["CONFIG", "GET", "list-max-ziplist-size"],
    ["CONFIG", "SET", "list-compress-depth", "-1"], ["CONFIG", "SET", "list-compress-depth", "1kb"],
    ["CONFIG", "SET", "list-compress-depth", "2147483647"], ["CONFIG", "GET", "list-compress-depth"],
    ["CONFIG", "SET", "list-max-listpack-size", "-2", "list-compress-depth", "0"],
    ["RPUSH", "small", "a", "1"], ["OBJECT", "ENCODING", "small"],
]

# (list-max-listpack-size, list-compress-depth) pairs the random rounds create lists under.
SETTINGS = [(-2, 0), (-1, 1), (-2, 2), (-3, 1), (-5, 0), (-9, 1), (1, 1), (3, 2), (4, 0),
            (16, 1), (200, 3), (0, 1)]
KEYS = ["l1", "l2", "l3"]


def element(rng):
    kind = rng.random()
    if kind < 0.3:
        return str(rng.randrange(-1000, 100000))
    if kind < 0.45:
        return str(rng.randrange(-(1 << 63), 1 << 63))
    if kind < 0.8:
        return "v%d" % rng.randrange(1000) + "x" * rng.randrange(0, 40)
    if kind < 0.97:
        return "".join(rng.choice("abcdef") for _ in range(rng.randrange(50, 400)))
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789")
                   for _ in range(rng.randrange(3000, 9000)))


def random_command(rng, key, other, length):
    kind = rng.random()
    if kind < 0.38:
        return [rng.choice(["LPUSH", "RPUSH"]), key] + [element(rng)
                                                        for _ in range(rng.randrange(1, 30))]
    if kind < 0.5:
        return [rng.choice(["LPOP", "RPOP"]), key, str(rng.randrange(1, 6))]
    if kind < 0.56:
        return ["LTRIM", key, str(rng.randrange(-5, 10)), str(rng.randrange(-10, length + 2))]
    if kind < 0.63:
        return ["LSET", key, str(rng.randrange(-length - 1, length + 1)), element(rng)]
    if kind < 0.83:
        return ["LINSERT", key, rng.choice(["BEFORE", "AFTER"]), ("LINDEX", key,
                str(rng.randrange(-length - 1, length + 1))), element(rng)]
    if kind < 0.9:
        return ["LREM", key, str(rng.randrange(-3, 4)), ("LINDEX", key,
                str(rng.randrange(-length - 1, length + 1)))]
    if kind < 0.96:
        return ["LMOVE", key, other, rng.choice(["LEFT", "RIGHT"]), rng.choice(["LEFT", "RIGHT"])]
    return ["DEL", key]


def resolve(client, cmd):
    """Replaces a ("LINDEX", key, i) placeholder by that element as the oracle has it (or "none"),
    so both servers get the same command."""
    out = []
    for a in cmd:
        if isinstance(a, tuple):
            v = harness.parse_reply(client.call(*a))
            a = v.decode() if isinstance(v, bytes) else "none"
        out.append(a)
    return out


def ql_fields(raw):
    text = harness.parse_reply(raw)
    if not isinstance(text, bytes):
        return text
    return re.findall(rb"ql_\w+:\S+", text)


def observe_config(port):
    with RespClient(port) as c:
        return [(" ".join(cmd), c.call(*cmd)) for cmd in CONFIG_STEPS]


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--rounds", type=int, default=harness.scaled(60))
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_list_encoding")
    with harness.ServerProcess(args.server, name="ringkv",
                               extra_args=["--enable-debug-command", "yes"]) as ours, \
            harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="redis",
                                  extra_args=["--enable-debug-command", "yes"]).start() as oracle:
        got, want = observe_config(ours.port), observe_config(oracle.port)
        for (note, g), (_, w) in zip(got, want):
            report.equal(g, w, "%s (ringkv vs redis)" % note)
        with RespClient(ours.port) as a, RespClient(oracle.port) as b:
            compared = 0
            for rnd in range(args.rounds):
                fill, depth = rng.choice(SETTINGS)
                for c in (a, b):
                    c.call("CONFIG", "SET", "list-max-listpack-size", str(fill),
                           "list-compress-depth", str(depth))
                # Lists created from here on take these settings; older ones keep theirs.
                for _ in range(rng.randrange(5, 40)):
                    key = rng.choice(KEYS)
                    length = harness.parse_reply(b.call("LLEN", key))
                    cmd = resolve(b, random_command(rng, key, rng.choice(KEYS), length))
                    report.equal(a.call(*cmd), b.call(*cmd), "round %d: %s" % (rnd, cmd[:3]))
                for key in KEYS:
                    dump = b.call("DUMP", key)
                    report.equal(a.call("DUMP", key), dump,
                                 "round %d (fill %d, depth %d): DUMP %s" % (rnd, fill, depth, key))
                    report.equal(a.call("OBJECT", "ENCODING", key),
                                 b.call("OBJECT", "ENCODING", key), "OBJECT ENCODING " + key)
                    report.equal(ql_fields(a.call("DEBUG", "OBJECT", key)),
                                 ql_fields(b.call("DEBUG", "OBJECT", key)), "DEBUG OBJECT " + key)
                    compared += 1
                    value = harness.parse_reply(dump)
                    if isinstance(value, bytes):
                        # Redis's payload (compressed nodes included) loads with its nodes as they
                        # were, under the compression depth in force now, on both servers.
                        for c in (a, b):
                            c.call("RESTORE", "copy", "0", value, "REPLACE")
                        report.equal(a.call("DUMP", "copy"), b.call("DUMP", "copy"),
                                     "DUMP of redis's DUMP restored")
                        report.equal(a.call("LRANGE", "copy", "0", "-1"),
                                     b.call("LRANGE", key, "0", "-1"), "LRANGE after RESTORE")
            report.check(compared > 0, "lists compared")
        report.check(ours.alive(), "ringkv still running", ours.log())
    report.finish()


if __name__ == "__main__":
    main()
