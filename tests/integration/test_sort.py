"""SORT and SORT_RO, differential against a real redis-server 7: lists, sets and sorted sets of
numbers and strings sorted numerically and with ALPHA, ASC/DESC, LIMIT (negative and past the
end), BY patterns (string keys, hash fields "w_*->f", missing keys, a pattern without '*' that
sorts nothing), GET ('#', keys, hash fields, missing ones), STORE (replacing a key of another
type, deleting it for an empty result, in a MULTI), errors (WRONGTYPE, syntax, LIMIT not an
integer, scores that are not numbers, STORE in SORT_RO) and COMMAND INFO/DOCS/GETKEYS of the rows;
every reply byte for byte.

Then, in a 3-node cluster: SORT runs on its key's node, STORE to a key of another node is a
CROSSSLOT error, and BY with a pattern and GET are refused as Redis Cluster 7.0 refuses them.

    /usr/bin/python3 test_sort.py --server build/ringkv-server
"""

import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import main_support  # noqa: E402
from harness import RespClient  # noqa: E402

SETUP = [
    ["RPUSH", "nums", "3", "1", "2", "10", "-5", "2.5", "1e3", "0", " 7", "0x10"],
    ["RPUSH", "words", "banana", "apple", "Cherry", "apple", "date", "", "b\x00z", "b"],
    ["RPUSH", "mixed", "1", "a", "2"],
    ["SADD", "iset", "5", "3", "9", "1", "7"],
    ["SADD", "sset", "pear", "fig", "kiwi", "lime"],
    ["ZADD", "z", "3", "c", "1", "a", "2", "b", "2", "bb", "0", "z0"],
    ["RPUSH", "ids", "1", "2", "3", "4", "5"],
    ["MSET", "w_1", "50", "w_2", "10", "w_3", "30", "w_5", "10", "name_1", "one", "name_2", "two",
     "name_4", "four", "aw_1", "x", "aw_2", "b", "aw_3", "b", "aw_4", "a", "bad_1", "nan",
     "bad_2", "abc"],
    ["HSET", "h_1", "f", "9", "g", "g1"], ["HSET", "h_2", "f", "3"], ["HSET", "h_3", "g", "g3"],
    ["HSET", "h_4", "f", "3"], ["SET", "str", "x"], ["HSET", "hash", "a", "1"],
    ["RPUSH", "nanlist", "1", "nan"], ["RPUSH", "badlist", "1", "2x"],
    ["RPUSH", "dst_other", "old"], ["SET", "dst_str", "old"],
]

SORTS = [
    ["SORT", "nums"], ["SORT", "nums", "DESC"], ["SORT", "nums", "ASC"], ["SORT", "words", "ALPHA"],
    ["SORT", "words", "ALPHA", "DESC"], ["SORT", "words"], ["SORT", "mixed"],
    ["SORT", "mixed", "ALPHA"], ["SORT", "iset"], ["SORT", "iset", "DESC"],
    ["SORT", "sset", "ALPHA"], ["SORT", "z"], ["SORT", "z", "ALPHA", "DESC"],
    ["SORT", "z", "BY", "nosort"], ["SORT", "z", "BY", "nosort", "DESC"],
    ["SORT", "z", "BY", "nosort", "LIMIT", "1", "2"],
    ["SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "2"],
    ["SORT", "ids", "BY", "nosort"], ["SORT", "ids", "BY", "nosort", "DESC"],
    ["SORT", "ids", "BY", "nosort", "LIMIT", "2", "10"],
    ["SORT", "ids", "BY", "nosort", "DESC", "LIMIT", "1", "3"],
    ["SORT", "ids", "BY", "nosort", "GET", "name_*", "GET", "#"],
    ["SORT", "ids", "BY", "w_*"], ["SORT", "ids", "BY", "w_*", "DESC"],
    ["SORT", "ids", "BY", "h_*->f"], ["SORT", "ids", "BY", "h_*->f", "DESC"],
    ["SORT", "ids", "BY", "aw_*", "ALPHA"], ["SORT", "ids", "BY", "aw_*", "ALPHA", "DESC"],
    ["SORT", "ids", "BY", "w_*", "GET", "#", "GET", "name_*", "GET", "h_*->g", "GET", "h_*->"],
    ["SORT", "ids", "GET", "nokey"], ["SORT", "ids", "GET", "#", "GET", "w_*->f"],
    ["SORT", "ids", "GET", "hash->a"], ["SORT", "ids", "BY", "bad_*"],
    ["SORT", "ids", "BY", "str"], ["SORT", "ids", "BY", "hash*->a"],
    ["SORT", "nums", "LIMIT", "0", "3"], ["SORT", "nums", "LIMIT", "2", "3"],
    ["SORT", "nums", "LIMIT", "-5", "2"], ["SORT", "nums", "LIMIT", "8", "100"],
    ["SORT", "nums", "LIMIT", "20", "5"], ["SORT", "nums", "LIMIT", "0", "0"],
    ["SORT", "nums", "LIMIT", "0", "-1"], ["SORT", "nums", "LIMIT", "3", "-4"],
    ["SORT", "nums", "LIMIT", "x", "1"], ["SORT", "nums", "LIMIT", "1"], ["SORT", "nums", "BY"],
    ["SORT", "nums", "GET"], ["SORT", "nums", "STORE"], ["SORT", "nums", "FOO"],
    ["SORT", "nanlist"], ["SORT", "badlist"], ["SORT", "words", "DESC"], ["SORT", "str"],
    ["SORT", "hash"], ["SORT", "missing"], ["SORT", "missing", "STORE", "dst_other"],
    ["EXISTS", "dst_other"], ["SORT", "nums", "STORE", "dst_str"], ["TYPE", "dst_str"],
    ["LRANGE", "dst_str", "0", "-1"], ["SORT", "ids", "BY", "w_*", "GET", "name_*", "STORE",
                                          "dst"], ["LRANGE", "dst", "0", "-1"],
    ["SORT", "sset", "BY", "nosort", "STORE", "dst2"], ["LRANGE", "dst2", "0", "-1"],
    ["SORT", "words", "ALPHA", "STORE", "dst3"], ["LRANGE", "dst3", "0", "-1"],
    ["SORT", "ids", "STORE", "a", "STORE", "dst4"], ["EXISTS", "a", "dst4"],
    ["SORT_RO", "nums"], ["SORT_RO", "ids", "BY", "w_*", "GET", "#"],
    ["SORT_RO", "nums", "STORE", "x"], ["SORT_RO", "str"],
    ["MULTI"], ["SORT", "ids", "DESC", "STORE", "mdst"], ["LRANGE", "mdst", "0", "-1"], ["EXEC"],
    ["EVAL", "return redis.call('sort', KEYS[1], 'BY', 'nosort')", "1", "sset"],
    ["SORT"], ["SORT_RO"],
    # A listpack sorted set holding a subnormal score: SORT's conversion to a skiplist reads the
    # score back with strtod, which leaves ERANGE, and Redis's numeric conversion then fails for
    # every element it runs strtod on (not for BY values stored as integers, not with ALPHA or
    # BY nosort, nor for values a listpack hash holds as integers). Once a skiplist, it sorts. Each case starts from errno cleared by a ZADD
    # (Redis does not clear it itself, so an earlier command's ERANGE would fail any SORT).
    ["ZADD", "zsub", "5e-324", "3", "1", "1"], ["ZADD", "errno_reset", "0.5", "m"],
    ["SORT", "zsub"], ["OBJECT", "ENCODING", "zsub"], ["ZADD", "errno_reset", "0.5", "m"],
    ["SORT", "zsub", "DESC"],
    ["ZADD", "zsub2", "-1e-310", "1", "2", "2"], ["ZADD", "errno_reset", "0.5", "m"],
    ["SORT_RO", "zsub2", "BY", "w_*"], ["ZADD", "errno_reset", "0.5", "m"],
    ["ZADD", "zsub6", "-1e-310", "1", "2", "2"], ["ZADD", "errno_reset", "0.5", "m"],
    ["SORT_RO", "zsub6", "BY", "h_*->f"],
    ["HSET", "hb_1", "f", "9"], ["HSET", "hb_2", "f", "3", "long", "x" * 70],
    ["OBJECT", "ENCODING", "hb_2"], ["HSET", "hb_3", "f", "1.5"],
    ["ZADD", "zsub7", "-1e-310", "1", "2", "2"], ["ZADD", "errno_reset", "0.5", "m"],
    ["SORT_RO", "zsub7", "BY", "hb_*->f"],
    ["ZADD", "zsub8", "-1e-310", "1", "2", "3"], ["ZADD", "errno_reset", "0.5", "m"],
    ["SORT_RO", "zsub8", "BY", "hb_*->f"],
    ["ZADD", "zsub3", "1e-310", "2", "2", "1"], ["ZADD", "errno_reset", "0.5", "m"],
    ["SORT", "zsub3", "ALPHA"], ["ZADD", "zsub4", "1e-310", "2", "2", "1"],
    ["ZADD", "errno_reset", "0.5", "m"], ["SORT", "zsub4", "BY", "nosort"],
    ["ZADD", "zsub5", "1e-310", "x", "2e-308", "y"], ["ZADD", "errno_reset", "0.5", "m"],
    ["SORT", "zsub5", "BY", "nokey_*"], ["ZADD", "errno_reset", "0.5", "m"],
    ["COMMAND", "INFO", "sort", "sort_ro"], ["COMMAND", "DOCS", "sort", "sort_ro"],
    ["COMMAND", "GETKEYS", "SORT", "k", "STORE", "d", "LIMIT", "0", "1", "GET", "store"],
    ["COMMAND", "GETKEYS", "SORT", "k", "BY", "store", "STORE", "d1", "STORE", "d2"],
    ["COMMAND", "GETKEYS", "SORT_RO", "k", "BY", "x"],
]


def observe(port, rng):
    out = []
    with RespClient(port) as c:
        c.call("FLUSHALL")
        for cmd in SETUP:
            c.call(*cmd)
        for cmd in SORTS:
            out.append((" ".join(cmd), c.call(*cmd)))
        # Random lists of numbers with duplicates, sorted by themselves and by weights.
        for i in range(harness.scaled(40)):
            key = "r%d" % i
            values = [str(rng.randint(-20, 20)) for _ in range(rng.randint(0, 30))]
            if values:
                c.call("RPUSH", key, *values)
            # Distinct weights: elements whose ALPHA BY values tie come out in an order that
            # depends on the sort algorithm (glibc's qsort, Redis's pqsort under LIMIT).
            distinct = sorted(set(values))
            for v, w in zip(distinct, rng.sample(range(100), len(distinct))):
                c.call("SET", "rw_%s" % v, str(w))
            args = [rng.choice([[], ["DESC"]]), rng.choice([[], ["ALPHA"]]),
                    rng.choice([[], ["BY", "rw_*"], ["BY", "nosort"]]),
                    rng.choice([[], ["LIMIT", str(rng.randint(-2, 10)), str(rng.randint(-1, 10))]]),
                    rng.choice([[], ["GET", "#", "GET", "rw_*"]]),
                    rng.choice([[], ["STORE", "rdst"]])]
            cmd = ["SORT", key] + [a for group in args for a in group]
            out.append((" ".join(cmd), c.call(*cmd)))
            out.append(("LRANGE rdst", c.call("LRANGE", "rdst", "0", "-1")))
    return out


def cluster_test(report, binary):
    with harness.Cluster(binary, 3) as cluster:
        keys = harness.keys_on_each_node(cluster)
        with RespClient(cluster.ports[1]) as c:
            report.equal(c.call("RPUSH", keys[0], "3", "1", "2"), b":3\r\n", "RPUSH")
            report.equal(c.call("SORT", keys[0]), b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n",
                         "SORT through another node")
            report.equal(c.call("SORT", keys[0], "BY", "nosort", "DESC"),
                         b"*3\r\n$1\r\n2\r\n$1\r\n1\r\n$1\r\n3\r\n", "SORT BY nosort")
            report.equal(c.call("SORT", keys[0], "BY", "w_*"),
                         b"-ERR BY option of SORT denied in Cluster mode.\r\n", "BY refused")
            report.equal(c.call("SORT_RO", keys[0], "GET", "#"),
                         b"-ERR GET option of SORT denied in Cluster mode.\r\n", "GET refused")
            got = c.call("SORT", keys[0], "STORE", keys[1])
            report.check(got.startswith(b"-CROSSSLOT"), "STORE on another node", repr(got))
            dest = "{%s}dst" % keys[0]
            report.equal(c.call("SORT", keys[0], "DESC", "STORE", dest), b":3\r\n",
                         "STORE on the key's node")
            report.equal(c.call("LRANGE", dest, "0", "-1"),
                         b"*3\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n1\r\n", "stored list")
        report.check(all(n.alive() for n in cluster.nodes), "cluster alive", cluster.logs())


def main():
    seed = random.randrange(1 << 30)
    print("seed: %d" % seed)
    # The same commands on both servers: a generator seeded alike for each.
    same_commands = main_support.oracle_check(lambda port: observe(port, random.Random(seed)))
    main_support.run_checks("test_sort", __doc__, same_commands, cluster_test)


if __name__ == "__main__":
    main()
