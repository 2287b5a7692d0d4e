"""The encoding parameters (hash-max-listpack-entries/-value, zset-max-listpack-entries/-value,
their ziplist aliases, set-max-intset-entries, hll-sparse-max-bytes, stream-node-max-bytes and
-entries), differential against a real redis-server 7: CONFIG GET of each name and alias, CONFIG
SET with units, bad values and through the alias, and OBJECT ENCODING of hashes, sorted sets and
sets grown past the limits in force (lowered and raised at run time; a lowered limit converts a
key only at its next write), HyperLogLogs' bytes (sparse or dense), and streams' node layout
(XINFO STREAM, DUMP, approximate trimming), on both servers, byte for byte.

    /usr/bin/python3 test_config_encodings.py --server build/ringkv-server
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import main_support  # noqa: E402
from harness import RespClient  # noqa: E402

NAMES = ["hash-max-listpack-entries", "hash-max-ziplist-entries", "hash-max-listpack-value",
         "hash-max-ziplist-value", "zset-max-listpack-entries", "zset-max-ziplist-entries",
         "zset-max-listpack-value", "zset-max-ziplist-value", "set-max-intset-entries",
         "hll-sparse-max-bytes", "stream-node-max-bytes", "stream-node-max-entries"]


def xadds(key, n, value="v", first=1):
    """n XADDs of `key` with ids first-1, first+1-1, ...: one field each."""
    return [["XADD", key, "%d-1" % i, "f", value] for i in range(first, first + n)]


def pfadds(key, n):
    return [["PFADD", key] + ["e%d" % i for i in range(j, min(j + 10, n))]
            for j in range(0, n, 10)]

STEPS = [
    ["CONFIG", "SET", "hash-max-listpack-entries", "4"], ["HSET", "h", "a", "1", "b", "2"],
    ["OBJECT", "ENCODING", "h"], ["HSET", "h", "c", "3", "d", "4", "e", "5"],
    ["OBJECT", "ENCODING", "h"], ["CONFIG", "SET", "hash-max-ziplist-value", "3"],
    ["HSET", "h2", "a", "123"], ["OBJECT", "ENCODING", "h2"], ["HSET", "h2", "b", "1234"],
    ["OBJECT", "ENCODING", "h2"], ["CONFIG", "SET", "hash-max-listpack-value", "1kb"],
    ["CONFIG", "GET", "hash-max-listpack-value"],
    ["CONFIG", "SET", "zset-max-listpack-entries", "2"], ["ZADD", "z", "1", "a", "2", "b"],
    ["OBJECT", "ENCODING", "z"], ["ZADD", "z", "3", "c"], ["OBJECT", "ENCODING", "z"],
    ["CONFIG", "SET", "zset-max-ziplist-entries", "100"], ["ZADD", "z2", "1", "a", "2", "b", "3",
                                                           "c"],
    ["OBJECT", "ENCODING", "z2"], ["CONFIG", "SET", "zset-max-listpack-value", "2"],
    ["ZADD", "z3", "1", "abc"], ["OBJECT", "ENCODING", "z3"],
    ["CONFIG", "SET", "set-max-intset-entries", "3"], ["SADD", "s", "1", "2", "3"],
    ["OBJECT", "ENCODING", "s"], ["SADD", "s", "4"], ["OBJECT", "ENCODING", "s"],
    ["CONFIG", "SET", "set-max-intset-entries", "1000"], ["SADD", "s2", "1", "2", "3", "4"],
    ["OBJECT", "ENCODING", "s2"],
    ["CONFIG", "SET", "hash-max-listpack-entries", "1"], ["HSET", "h3", "a", "1"],
    ["OBJECT", "ENCODING", "h3"], ["CONFIG", "SET", "hash-max-listpack-entries", "0"],
    ["OBJECT", "ENCODING", "h3"], ["HSET", "h3", "a", "2"], ["OBJECT", "ENCODING", "h3"],
    ["CONFIG", "SET", "hash-max-listpack-entries", "-1"],
    ["CONFIG", "SET", "hash-max-listpack-entries", "x"],
    ["CONFIG", "SET", "set-max-intset-entries", "1kb"],
    ["CONFIG", "SET", "zset-max-listpack-value", "-5"],
    # HyperLogLogs: the sparse form up to hll-sparse-max-bytes (GET shows which form).
    ["CONFIG", "SET", "hll-sparse-max-bytes", "100"], *pfadds("hll", 60), ["GET", "hll"],
    ["CONFIG", "SET", "hll-sparse-max-bytes", "1kb"], *pfadds("hll2", 60), ["GET", "hll2"],
    ["CONFIG", "SET", "hll-sparse-max-bytes", "50"], ["PFMERGE", "hll3", "hll2"], ["GET", "hll3"],
    ["PFADD", "hll2", "one-more"], ["GET", "hll2"], ["PFCOUNT", "hll", "hll2", "hll3"],
    ["CONFIG", "SET", "hll-sparse-max-bytes", "-1"],
    ["CONFIG", "SET", "hll-sparse-max-bytes", "3000"],
    # Streams: nodes of at most stream-node-max-entries entries and -bytes bytes; approximate
    # trimming removes whole nodes, at most 100 nodes' worth of entries without LIMIT.
    ["CONFIG", "SET", "stream-node-max-entries", "10"], *xadds("x", 95),
    ["XINFO", "STREAM", "x"], ["XTRIM", "x", "MAXLEN", "~", "50"], ["XLEN", "x"],
    ["XDEL", "x", "60-1", "61-1"], ["XINFO", "STREAM", "x"], ["DUMP", "x"],
    ["CONFIG", "SET", "stream-node-max-bytes", "100"], *xadds("x2", 30, "x" * 20),
    ["XINFO", "STREAM", "x2"], ["XTRIM", "x2", "MAXLEN", "~", "12"], ["XLEN", "x2"],
    ["DUMP", "x2"], ["CONFIG", "SET", "stream-node-max-bytes", "0"],
    ["CONFIG", "SET", "stream-node-max-entries", "0"], *xadds("x3", 150),
    ["XINFO", "STREAM", "x3"], ["XTRIM", "x3", "MAXLEN", "~", "10"], ["XLEN", "x3"],
    ["CONFIG", "SET", "stream-node-max-entries", "1"], *xadds("x4", 5),
    ["XADD", "x4", "MAXLEN", "~", "2", "100-1", "f", "v"], ["XLEN", "x4"],
    ["CONFIG", "SET", "stream-node-max-entries", "-1"],
    ["CONFIG", "SET", "stream-node-max-bytes", "4kb"],
    ["CONFIG", "SET", "stream-node-max-entries", "100"],
]


def observe(port):
    out = []
    with RespClient(port) as c:
        c.call("FLUSHALL")
        for name in NAMES:
            out.append(("CONFIG GET " + name, c.call("CONFIG", "GET", name)))
        for cmd in STEPS:
            out.append((" ".join(cmd), c.call(*cmd)))
        for name in NAMES:
            out.append(("CONFIG GET " + name, c.call("CONFIG", "GET", name)))
        got = harness.parse_reply(c.call("CONFIG", "GET", "*"))
        names = set(got[::2])
        out.append(("CONFIG GET * lists them", sorted(n.decode() for n in names
                                                     if n.decode() in NAMES)))
    return out


def main():
    main_support.run_checks("test_config_encodings", __doc__, main_support.oracle_check(observe))


if __name__ == "__main__":
    main()
