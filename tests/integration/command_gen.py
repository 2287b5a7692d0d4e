"""Seeded random command generator for the differential test.

Each generated item is (argv, mode): argv a list of bytes, mode how replies are compared —
"exact"; "time" for TIME (seconds within 1); ("tol", n) for integers that depend on the clock
(TTL, PTTL, EXPIRETIME of relative expiries may differ by n between two servers); "unordered"
for arrays whose order is a hash table's (KEYS); or "scan" for a complete SCAN from cursor 0
(same next cursor, same keys in any order); or ("sample", distinct, allowed) for a random pick
(SRANDMEMBER, SPOP with a count): same type and length, every element in `allowed`, no repeats
when `distinct`. Relative expiries are drawn from a wide range so two of them practically never
tie, which keeps NX/XX/GT/LT outcomes identical on both servers whatever their clocks read.

In a cluster some commands cannot be compared with a single Redis: `atomic_keys` names the keys
of the commands that must run on one node (MSETNX, RENAME, RENAMENX, COPY, SMOVE, SINTERCARD and
SINTER/SUNION/SDIFF with their STORE forms), which ringkv refuses with CROSSSLOT when their keys
have different owners. Bitmap and HyperLogLog commands come from command_gen_bitmap.py (BITOP,
PFCOUNT and PFMERGE are atomic over their keys too); hash, set and list commands from
command_gen_collections.py.
"""

from command_gen_bitmap import (BIT_KEYS, BITMAP_HLL_ARITY, HLL_KEYS, BitmapHllGenMixin,
                                bitmap_hll_atomic_keys)
from command_gen_collections import CollectionGenMixin
from command_gen_db import DB_ARITY, DatabasesGenMixin
from command_gen_geo import GEO_ARITY, GeoGenMixin, geo_atomic_keys
from command_gen_script import SCRIPT_ARITY, ScriptGenMixin
from command_gen_values import BAD_INTS, EDGE_INTS, FLOATS
from command_gen_zset import ZSET_ARITY, ZSetGenMixin, zset_atomic_keys

# Absolute unix times far in the future (2100, 2200) so EXPIREAT/EXAT results agree exactly.
FAR_S = [4102444800, 7258118400, 4102444801]
FAR_MS = [t * 1000 + 123 for t in FAR_S]

KEYS = [b"k1", b"k2", b"k3", b"k4", b"n1", b"n2", b"f1", b"\x00bin\xff\r\n", "ключ🔑".encode(),
        b"h1", b"h2", b"s1", b"s2", b"l1", b"l2"] + BIT_KEYS + HLL_KEYS

# Redis 7.0 arities (negative: at least -arity), for wrong-arity requests.
ARITY = {
    "get": 2, "set": -3, "setnx": 3, "setex": 4, "psetex": 4, "getset": 3, "getdel": 2,
    "getex": -2, "mget": -2, "mset": -3, "msetnx": -3, "append": 3, "strlen": 2, "incr": 2,
    "decr": 2, "incrby": 3, "decrby": 3, "incrbyfloat": 3, "getrange": 4, "substr": 4,
    "setrange": 4, "del": -2, "unlink": -2, "exists": -2, "touch": -2, "type": 2, "expire": -3,
    "pexpire": -3, "expireat": -3, "pexpireat": -3, "ttl": 2, "pttl": 2, "expiretime": 2,
    "pexpiretime": 2, "persist": 2, "rename": 3, "renamenx": 3, "copy": -3, "keys": 2,
    "randomkey": 1, "dbsize": 1, "ping": -1, "echo": 2, "select": 2, "object": -2, "client": -2,
    "hset": -4, "hsetnx": 4, "hget": 3, "hmget": -3, "hmset": -4, "hdel": -3, "hlen": 2,
    "hstrlen": 3, "hexists": 3, "hgetall": 2, "hkeys": 2, "hvals": 2, "hincrby": 4,
    "hincrbyfloat": 4, "hrandfield": -2, "hscan": -3,
    "sadd": -3, "srem": -3, "smembers": 2, "sismember": 3, "smismember": -3, "scard": 2,
    "spop": -2, "srandmember": -2, "smove": 4, "sinter": -2, "sintercard": -3, "sunion": -2,
    "sdiff": -2, "sinterstore": -3, "sunionstore": -3, "sdiffstore": -3, "sscan": -3,
    "lpush": -3, "rpush": -3, "lpushx": -3, "rpushx": -3, "lpop": -2, "rpop": -2, "llen": 2,
    "lrange": 4, "lindex": 3, "lset": 4, "linsert": 5, "lrem": 4, "ltrim": 4, "lpos": -3,
    "lmove": 5, "rpoplpush": 3, "lmpop": -4, "blpop": -3, "brpop": -3, "blmove": 6,
    "brpoplpush": 4, "blmpop": -5, "lcs": -3,
}
ARITY.update(ZSET_ARITY)
ARITY.update(BITMAP_HLL_ARITY)
ARITY.update(GEO_ARITY)
ARITY.update(SCRIPT_ARITY)
ARITY.update(DB_ARITY)
SUB_ARITY = {("object", "encoding"): 3, ("object", "refcount"): 3, ("object", "freq"): 3,
             ("client", "setname"): 3, ("client", "getname"): 2}

# Commands that must be atomic over all their keys, so a cluster runs them only when every key
# has the same owner.
ATOMIC_MULTI_KEY = {b"msetnx", b"rename", b"renamenx", b"copy"}
# List commands moving between two keys, with their argument counts.
LIST_MOVE_ARGC = {b"lmove": 5, b"blmove": 6, b"rpoplpush": 3, b"brpoplpush": 4}
# Set commands over every argument from index 1 on, with their least argument count.
SET_MULTI_KEY = {b"sinter": 2, b"sunion": 2, b"sdiff": 2, b"sinterstore": 3, b"sunionstore": 3,
                 b"sdiffstore": 3}


def numkeys_keys(argv, at):
    """The keys of a command whose numkeys is at argv[at] (LMPOP, BLMPOP), or None when numkeys
    is malformed (the command then fails the same way on any node)."""
    n = int(argv[at]) if len(argv) > at and argv[at].isdigit() else 0
    return argv[at + 1:at + 1 + n] if 0 < n <= len(argv) - at - 1 else None


def sort_keys(argv):
    """SORT's keys (the sorted key and STORE's destination) when it stores, else None."""
    store, i = None, 2
    while i < len(argv):
        word = argv[i].lower()
        if word == b"limit":
            i += 2
        elif word in (b"get", b"by"):
            i += 1
        elif word == b"store" and i + 1 < len(argv):
            store = argv[i + 1]
            i += 1
        i += 1
    return [argv[1], store] if store is not None else None


def atomic_keys(argv):
    """The keys of an atomic multi-key command with a valid argument count, else None (other
    commands, and wrong-arity forms, which fail the same way on any node)."""
    name = argv[0].lower()
    if name == b"lcs":
        return argv[1:3] if len(argv) >= 3 else None
    if name == b"sort":
        return sort_keys(argv)
    if name in (b"bitop", b"pfcount", b"pfmerge"):
        return bitmap_hll_atomic_keys(argv)
    if name.startswith(b"geo"):
        return geo_atomic_keys(argv)
    if name.startswith(b"z") or name in (b"bzpopmin", b"bzpopmax", b"bzmpop"):
        return zset_atomic_keys(argv)
    if name in (b"lmove", b"blmove", b"rpoplpush", b"brpoplpush"):
        return argv[1:3] if len(argv) == LIST_MOVE_ARGC[name] else None
    if name in (b"blpop", b"brpop"):
        return argv[1:-1] if len(argv) >= 3 else None
    if name == b"lmpop":
        return numkeys_keys(argv, 1)
    if name == b"blmpop":
        return numkeys_keys(argv, 2)
    if name in SET_MULTI_KEY:
        return argv[1:] if len(argv) >= SET_MULTI_KEY[name] else None
    if name == b"smove":
        return argv[1:3] if len(argv) == 4 else None
    if name == b"sintercard":
        n = int(argv[1]) if len(argv) >= 3 and argv[1].isdigit() else 0
        return argv[2:2 + n] if 0 < n <= len(argv) - 2 else None
    if name not in ATOMIC_MULTI_KEY:
        return None
    if name == b"msetnx":
        return argv[1::2] if len(argv) >= 3 and len(argv) % 2 == 1 else None
    if name == b"copy":
        return argv[1:3] if len(argv) >= 3 else None
    return argv[1:3] if len(argv) == 3 else None


class CommandGen(CollectionGenMixin, ZSetGenMixin, BitmapHllGenMixin, GeoGenMixin, DatabasesGenMixin,
                 ScriptGenMixin):
    """Draws commands from every group; all randomness comes from the given random.Random."""

    def __init__(self, rng):
        self.r = rng
        self.gens = [
            (12, self.gen_string_set), (6, self.gen_get_family), (5, self.gen_numeric),
            (3, self.gen_incrbyfloat), (4, self.gen_multi), (4, self.gen_range),
            (3, self.gen_set_variants), (6, self.gen_expire), (5, self.gen_ttl_queries),
            (4, self.gen_keyspace), (2, self.gen_rename_copy), (2, self.gen_object),
            (2, self.gen_connection), (3, self.gen_wrong_arity), (1, self.gen_unknown),
            (1, self.gen_big), (1, self.gen_scenario), (1, self.gen_bad_numbers),
            (1, self.gen_scan), (10, self.gen_hash), (1, self.gen_hash_big),
            (10, self.gen_set), (1, self.gen_set_big), (10, self.gen_list),
            (1, self.gen_list_big),
            (10, self.gen_zset), (1, self.gen_zset_big),
            (8, self.gen_bitmap), (7, self.gen_hll), (1, self.gen_hll_big),
            (10, self.gen_geo), (1, self.gen_geo_big), (3, self.gen_lcs),
            (4, self.gen_databases), (2, self.gen_function), (3, self.gen_sort),
        ]
        self.total = sum(w for w, _ in self.gens)

    def key(self):
        return self.r.choice(KEYS)

    @staticmethod
    def arity_sweep():
        """Every command and subcommand with one argument too few and one too many (where the
        arity allows), so each wrong-arity error is compared at least once whatever the seed."""
        out = []
        for name, arity in ARITY.items():
            counts = [arity - 1, arity + 1] if arity > 0 else [-arity - 1]
            if name == "ping":
                counts = [3]
            for n in counts:
                if n >= 1:
                    out.append(([name.encode()] + [b"k1"] * (n - 1), "exact"))
        for (parent, sub), arity in SUB_ARITY.items():
            for n in (arity - 1, arity + 1):
                out.append(([parent.encode(), sub.encode()] + [b"k1"] * (n - 2), "exact"))
        return out

    def set_option_sweep(self):
        """SET with every combination of condition, GET and expiry option, each on a missing and
        then on an existing key, followed by the resulting value and TTL."""
        out = []
        expiries = [[], [b"EX", self.rel_seconds()], [b"PX", self.rel_ms()],
                    [b"EXAT", str(FAR_S[0]).encode()], [b"PXAT", str(FAR_MS[0]).encode()],
                    [b"KEEPTTL"]]
        for cond in ([], [b"NX"], [b"XX"]):
            for get in ([], [b"GET"]):
                for exp in expiries:
                    opts = cond + get + exp
                    out += [([b"DEL", b"k1"], "exact"),
                            ([b"SET", b"k1", b"first"] + opts, "exact"),
                            ([b"SET", b"k1", b"second"] + opts, "exact"),
                            ([b"GET", b"k1"], "exact"), ([b"PTTL", b"k1"], ("tol", 1500))]
        return out

    def value(self):
        r = self.r.random()
        if r < 0.3:
            return str(self.r.randint(-1000, 20000)).encode()
        if r < 0.4:
            return self.r.choice(EDGE_INTS)
        if r < 0.5:
            return self.r.choice(FLOATS)
        if r < 0.6:
            return bytes(self.r.randrange(256) for _ in range(self.r.randint(0, 20)))
        if r < 0.65:
            return "значение ✓ 値 🎉".encode()
        if r < 0.7:
            return b"x" * self.r.choice([43, 44, 45, 100])
        return ("v%d" % self.r.randint(0, 99)).encode()

    def rel_seconds(self):
        return str(self.r.randint(1000, 10**6)).encode()

    def rel_ms(self):
        return str(self.r.randint(1000, 10**6) * 1000 + self.r.randint(0, 999)).encode()

    def next(self):
        """Returns a list of (argv, mode) — usually one command, a few for scenarios."""
        x = self.r.uniform(0, self.total)
        for w, g in self.gens:
            x -= w
            if x <= 0:
                return g()
        return self.gens[-1][1]()

    # -- strings -----------------------------------------------------------------------------

    def set_options(self):
        r = self.r
        opts = []
        if r.random() < 0.3:
            opts.append(r.choice([b"NX", b"XX", b"nx", b"xx"]))
        if r.random() < 0.3:
            opts.append(b"GET")
        e = r.random()
        if e < 0.15:
            opts += [b"EX", self.rel_seconds()]
        elif e < 0.25:
            opts += [b"PX", self.rel_ms()]
        elif e < 0.32:
            opts += [b"EXAT", str(r.choice(FAR_S)).encode()]
        elif e < 0.38:
            opts += [b"PXAT", str(r.choice(FAR_MS)).encode()]
        elif e < 0.45:
            opts.append(b"KEEPTTL")
        elif e < 0.55:
            # Invalid or conflicting options.
            opts += r.choice([
                [b"EX", b"0"], [b"EX", b"-5"], [b"PX", b"0"], [b"EX", b"abc"], [b"EX"],
                [b"EX", b"10", b"PX", b"10000"], [b"NX", b"XX"], [b"KEEPTTL", b"EX", b"100"],
                [b"EXAT", b"0"], [b"PXAT", b"-1"], [b"FOO"], [b"EX", b"9999999999999999"],
                [b"PX", b"9223372036854775807"], [b"EX", b"1.5"], [b"GET", b"GET"],
                [b"EX", b"100", b"EX", b"200"], [b"NX", b"NX"], [b"PXAT", b"1"],
                [b"EXAT", b"1"], [b"EX", b" 100"],
            ])
        if r.random() < 0.1:
            r.shuffle(opts)
        return opts

    def gen_string_set(self):
        k = self.key()
        opts = self.set_options()
        out = [([b"SET", k, self.value()] + opts, "exact")]
        if b"EXAT" in opts or b"PXAT" in opts:
            # A past absolute time leaves a key that only expires lazily (or whenever the active
            # expiry cycle samples it), so DBSIZE would race; touching it expires it now.
            out.append(([b"EXISTS", k], "exact"))
        return out

    def gen_sort(self):
        """SORT and SORT_RO of lists, sorted sets and sets (or other types: WRONGTYPE) with LIMIT,
        ASC/DESC and BY nosort. BY nosort without STORE only on `lsort` and `zsort`, a list and a
        sorted set of gen_sort's own: any other key may have become a set (the other generators
        write l1 and l2 too), whose own order is its table's in Redis 7.0 (hashed with a random
        seed); with STORE Redis sorts a set anyway (ALPHA), so that form goes to every key.
        ALPHA always stores (binary comparison: without STORE Redis collates with strcoll, whose
        ties between different strings come out in the sort algorithm's order); the stored list
        is read back."""
        r = self.r
        # Sorted sets of their own: SORT converts a sorted set to a skiplist for good, after
        # which ZSCAN's order is the member table's (the other generators' keys stay listpacks).
        own = [b"lsort", b"zsort"]
        key = r.choice(own + [b"l1", b"l2", b"si1", b"si2", b"s1", self.key()])
        out = []
        if key == b"zsort" and r.random() < 0.3:
            members = [str(r.randint(-5, 5)).encode() for _ in range(r.randint(1, 8))]
            pairs = []
            for m in members:
                pairs += [str(r.randint(0, 3)).encode(), m]
            out.append(([b"ZADD", key] + pairs, "exact"))
        if key == b"lsort" and r.random() < 0.3:
            out.append(([b"RPUSH", key] + [r.choice([b"b", b"a", b"3", b"10", b"-1"])
                                           for _ in range(r.randint(1, 6))], "exact"))
        opts = []
        if r.random() < 0.3:
            opts += [b"LIMIT", str(r.randint(-3, 8)).encode(), str(r.randint(-2, 8)).encode()]
        if r.random() < 0.5:
            opts.append(r.choice([b"ASC", b"DESC", b"desc"]))
        nosort = r.random() < 0.25
        if nosort:
            opts += [b"BY", b"nosort"]
        alpha = r.random() < 0.4
        if alpha:
            opts.append(b"ALPHA")
        store = alpha or r.random() < 0.2 or (nosort and key not in own)
        if not alpha:
            # Redis checks strtod's errno for ERANGE without clearing it first, so a numeric SORT
            # fails after any earlier command left ERANGE behind (a score like 1e400); ZADD's
            # score parsing clears it.
            out.append(([b"ZADD", b"errno_reset", b"0.5", b"m"], "exact"))
        if store:
            dest = r.choice([b"sortdst", key])
            return out + [([b"SORT", key] + opts + [b"STORE", dest], "exact"),
                          ([b"LRANGE", dest, b"0", b"-1"], "exact")]
        return out + [([r.choice([b"SORT", b"SORT_RO"]), key] + opts, "exact")]

    def gen_lcs(self):
        """LCS over strings that share runs (so IDX finds several ranges), missing keys and other
        types, with every option and their conflicts."""
        r = self.r
        keys = [b"lcs1", b"lcs2"]
        out = []
        if r.random() < 0.5:
            alphabet = r.choice([b"ab", b"abc", b"acgt", b"xyz01"])
            for k in keys:
                value = bytes(r.choice(alphabet) for _ in range(r.randint(0, 40)))
                out.append(([b"SET", k, value], "exact"))
        a = r.choice(keys + [b"k1", b"n1", b"h1", b"nosuch"])
        b = r.choice(keys + [b"k2", b"f1", b"nosuch"])
        opts = []
        for o in r.sample([[b"LEN"], [b"IDX"], [b"WITHMATCHLEN"], [b"MINMATCHLEN",
                           r.choice([b"0", b"1", b"2", b"3", b"-5", b"x"])], [b"idx"], [b"FOO"],
                           [b"MINMATCHLEN"]], r.choice([0, 1, 1, 2, 2, 3])):
            if o[0] == b"FOO" and r.random() < 0.7:
                continue
            opts += o
        out.append(([b"LCS", a, b] + opts, "exact"))
        return out

    def gen_get_family(self):
        r = self.r
        k = self.key()
        c = r.choice(["get", "getset", "getdel", "getex", "strlen", "append", "getex2"])
        if c == "get":
            return [([b"GET", k], "exact")]
        if c == "getset":
            return [([b"GETSET", k, self.value()], "exact")]
        if c == "getdel":
            return [([b"GETDEL", k], "exact")]
        if c == "strlen":
            return [([b"STRLEN", k], "exact")]
        if c == "append":
            return [([b"APPEND", k, self.value()], "exact")]
        opt = r.choice([[], [b"PERSIST"], [b"EX", self.rel_seconds()], [b"PX", self.rel_ms()],
                        [b"EXAT", str(r.choice(FAR_S)).encode()],
                        [b"PXAT", str(r.choice(FAR_MS)).encode()], [b"EX", b"0"], [b"EX"],
                        [b"PERSIST", b"EX", b"10"], [b"KEEPTTL"], [b"EX", b"x"], [b"px", b"-1"],
                        [b"EX", b"10", b"EX", b"20"], [b"FOO"]])
        return [([b"GETEX", k] + opt, "exact")]

    def gen_numeric(self):
        r = self.r
        k = r.choice([b"n1", b"n2", self.key()])
        c = r.choice(["INCR", "DECR", "INCRBY", "DECRBY", "SET"])
        if c in ("INCR", "DECR"):
            return [([c.encode(), k], "exact")]
        if c == "SET":
            return [([b"SET", k, r.choice(EDGE_INTS + [b"100", b"-100"])], "exact")]
        amount = r.choice(EDGE_INTS + BAD_INTS[:6] + [str(r.randint(-10**6, 10**6)).encode()])
        return [([c.encode(), k, amount], "exact")]

    def gen_incrbyfloat(self):
        r = self.r
        k = r.choice([b"f1", b"n1", self.key()])
        if r.random() < 0.2:
            return [([b"SET", k, r.choice(FLOATS + EDGE_INTS)], "exact")]
        return [([b"INCRBYFLOAT", k, r.choice(FLOATS + EDGE_INTS[:4])], "exact")]

    def gen_multi(self):
        r = self.r
        c = r.choice([b"MGET", b"MSET", b"MSETNX", b"DEL", b"UNLINK", b"EXISTS", b"TOUCH"])
        n = r.randint(1, 5)
        if c in (b"MSET", b"MSETNX"):
            argv = [c]
            for _ in range(n):
                argv += [self.key(), self.value()]
            if r.random() < 0.1:
                argv.append(self.key())  # odd count: wrong arity
            return [(argv, "exact")]
        return [([c] + [self.key() for _ in range(n)], "exact")]

    def gen_range(self):
        r = self.r
        k = self.key()
        idx = lambda: r.choice([b"0", b"-1", b"1", b"-100", b"100", b"3", b"-3", b"x", b"",
                                b"9223372036854775807", b"-9223372036854775808",
                                str(r.randint(-20, 20)).encode()])
        c = r.random()
        if c < 0.4:
            return [([b"GETRANGE", k, idx(), idx()], "exact")]
        if c < 0.5:
            return [([b"SUBSTR", k, idx(), idx()], "exact")]
        off = r.choice([b"0", b"1", b"5", b"10", b"-1", b"x", str(r.randint(0, 300)).encode(),
                        b"536870911", b"536870912", b"9223372036854775807"])
        val = r.choice([b"", b"abc", b"\x00\xff", "ü".encode(), self.value()])
        if off in (b"536870911",) and val:
            val = b"zz"  # offset+len past 512MB: the size error, never a 512MB allocation
        if off == b"536870911" and not val:
            off = b"536870912"
        return [([b"SETRANGE", k, off, val], "exact")]

    def gen_set_variants(self):
        r = self.r
        k = self.key()
        c = r.choice(["setnx", "setex", "psetex"])
        if c == "setnx":
            return [([b"SETNX", k, self.value()], "exact")]
        t = r.choice([self.rel_seconds(), b"0", b"-1", b"abc", b"9999999999999999", b"1.5"])
        if c == "setex":
            return [([b"SETEX", k, t, self.value()], "exact")]
        t = r.choice([self.rel_ms(), b"0", b"-1", b"abc", b"9223372036854775807"])
        return [([b"PSETEX", k, t, self.value()], "exact")]

    # -- keys --------------------------------------------------------------------------------

    def gen_expire(self):
        r = self.r
        k = self.key()
        c = r.choice([b"EXPIRE", b"PEXPIRE", b"EXPIREAT", b"PEXPIREAT", b"PERSIST"])
        if c == b"PERSIST":
            return [([c, k], "exact")]
        p = r.random()
        if c == b"EXPIRE":
            bad = [b"-1", b"0", b"x", b"9223372036854775807", b"1.5"]
            t = self.rel_seconds() if p < 0.8 else r.choice(bad)
        elif c == b"PEXPIRE":
            t = self.rel_ms() if p < 0.8 else r.choice([b"-1", b"0", b"x", b"9223372036854775807"])
        elif c == b"EXPIREAT":
            t = str(r.choice(FAR_S)).encode() if p < 0.8 else r.choice([b"1", b"0", b"-5", b"x"])
        else:
            t = str(r.choice(FAR_MS)).encode() if p < 0.8 else r.choice([b"1", b"0", b"x"])
        argv = [c, k, t]
        if r.random() < 0.5:
            argv += r.choice([[b"NX"], [b"XX"], [b"GT"], [b"LT"], [b"gt"], [b"NX", b"XX"],
                              [b"GT", b"LT"], [b"NX", b"GT"], [b"XX", b"GT"], [b"XX", b"LT"],
                              [b"FOO"], [b"GT", b"GT"]])
        return [(argv, "exact")]

    def gen_ttl_queries(self):
        k = self.key()
        c = self.r.choice([(b"TTL", ("tol", 1)), (b"PTTL", ("tol", 1500)),
                           (b"EXPIRETIME", ("tol", 2)), (b"PEXPIRETIME", ("tol", 2000)),
                           (b"TYPE", "exact"), (b"EXISTS", "exact")])
        return [([c[0], k], c[1])]

    def gen_keyspace(self):
        r = self.r
        c = r.random()
        if c < 0.5:
            pat = r.choice([b"*", b"k*", b"k?", b"[kn]1", b"[^k]*", b"*1", b"\\*", b"k[1-3]",
                            b"", b"\x00*", "ключ*".encode(), b"[a-", b"*[", b"?"])
            return [([b"KEYS", pat], "unordered")]
        if c < 0.8:
            return [([b"DBSIZE"], "exact")]
        if c < 0.9:
            return [([b"TYPE", self.key()], "exact")]
        return [([b"FLUSHDB"] + r.choice([[], [b"ASYNC"], [b"SYNC"], [b"FOO"]]), "exact")]

    def gen_scan(self):
        """A SCAN from cursor 0 with a COUNT large enough to finish in one call (later cursors
        are positions in each server's own hash order), or a malformed SCAN."""
        r = self.r
        if r.random() < 0.3:
            argv = r.choice([[b"SCAN", b"x"], [b"SCAN", b"0", b"COUNT", b"0"],
                             [b"SCAN", b"0", b"COUNT", b"x"], [b"SCAN", b"0", b"MATCH"],
                             [b"SCAN", b"0", b"TYPE"], [b"SCAN", b"0", b"FOO", b"1"],
                             [b"SCAN", b"18446744073709551616"], [b"SCAN", b"0", b"COUNT", b"-1"]])
            return [(argv, "exact")]
        argv = [b"SCAN", b"0", b"COUNT", r.choice([b"100", b"1000"])]
        if r.random() < 0.5:
            argv += [b"MATCH", r.choice([b"k*", b"*1", b"[kn]?", b"nomatch*", b"*"])]
        if r.random() < 0.3:
            argv += [b"TYPE", r.choice([b"string", b"STRING", b"hash", b"list", b"nosuch"])]
        return [(argv, "scan")]


    def gen_rename_copy(self):
        r = self.r
        a, b = self.key(), self.key()
        c = r.choice([b"RENAME", b"RENAMENX", b"COPY"])
        argv = [c, a, b]
        if c == b"COPY" and r.random() < 0.5:
            argv += r.choice([[b"REPLACE"], [b"DB", b"0"], [b"DB", b"0", b"REPLACE"],
                              [b"DB", b"x"], [b"DB"], [b"FOO"], [b"DB", b"99"]])
        return [(argv, "exact")]

    def gen_object(self):
        r = self.r
        sub = r.choice([b"ENCODING", b"REFCOUNT", b"FREQ", b"encoding", b"NOPE", b"HELP"])
        argv = [b"OBJECT", sub] if sub == b"HELP" else [b"OBJECT", sub, self.key()]
        if r.random() < 0.1:
            argv.append(b"extra")
        return [(argv, "exact")]

    def gen_connection(self):
        r = self.r
        c = r.choice(["ping", "echo", "select", "setname", "getname", "time"])
        if c == "time":
            return [([b"TIME"], "time")] if r.random() < 0.8 else [([b"TIME", b"x"], "exact")]
        if c == "ping":
            return [([b"PING"] + r.choice([[], [self.value()], [b"a", b"b"]]), "exact")]
        if c == "echo":
            return [([b"ECHO", self.value()], "exact")]
        if c == "select":
            db = r.choice([b"0", b"x", b"16", b"-1", b"", b"1.5", b"0 "])
            return [([b"SELECT", db], "exact")]
        if c == "setname":
            name = r.choice([b"app", b"my-client_1", b"a b", b"x\ny", b"", "имя".encode(),
                             b"\x01"])
            return [([b"CLIENT", b"SETNAME", name], "exact")]
        return [([b"CLIENT", b"GETNAME"], "exact")]

    def gen_wrong_arity(self):
        r = self.r
        name, arity = r.choice(list(ARITY.items()))
        if arity > 0:
            n = r.choice([arity - 1, arity + 1]) if arity > 1 else 2
        else:
            n = -arity - 1
        n = max(n, 1)
        if name in ("object", "client"):
            (parent, sub), a = r.choice(list(SUB_ARITY.items()))
            n = r.choice([a - 1, a + 1])
            return [([parent.encode(), sub.encode()] + [b"k1"] * (n - 2), "exact")]
        if name == "ping":
            n = 3
        argv = [r.choice([name.encode(), name.upper().encode()])] + [b"k1"] * (n - 1)
        return [(argv, "exact")]

    def gen_unknown(self):
        r = self.r
        # A NUL inside a name, but not after a whole command's name: redis-server hashes the
        # name's every byte and compares with strcasecmp, so "SET\0" runs SET when its hash
        # happens to land in the bucket of "set" (its hash seed is random per process) and is an
        # unknown command otherwise.
        argv = r.choice([
            [b"NOSUCHCMD"], [b"nosuch", b"a", b"b"], [b"FOO", b"x" * 200], [b"GETT", b"k1"],
            [b"OBJECT", b"nosuch"], [b"CLIENT", b"nosuch", b"x"], [b"OBJECT"],
            ["команда".encode(), b"\x00\xff"], [b"S\x00ET", b"a", b"b"],
            [b"x", b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"8", b"9", b"10", b"11"],
        ])
        return [(argv, "exact")]

    def gen_big(self):
        r = self.r
        size = r.choice([1000, 65536, 100000, 512 * 1024, 1024 * 1024])
        val = bytes(r.randrange(256) for _ in range(64)) * (size // 64)
        k = self.key()
        return [([b"SET", k, val], "exact"), ([b"GET", k], "exact"), ([b"STRLEN", k], "exact"),
                ([b"APPEND", k, b"tail"], "exact"), ([b"GETRANGE", k, b"-10", b"-1"], "exact"),
                ([b"OBJECT", b"ENCODING", k], "exact"), ([b"DEL", k], "exact")]

    def gen_scenario(self):
        r = self.r
        c = r.choice(["randomkey", "select1", "expire_past", "encodings"])
        if c == "randomkey":
            k = self.key()
            return [([b"FLUSHDB"], "exact"), ([b"RANDOMKEY"], "exact"),
                    ([b"SET", k, b"only"], "exact"), ([b"RANDOMKEY"], "exact"),
                    ([b"DBSIZE"], "exact")]
        if c == "select1":
            k = self.key()
            return [([b"SELECT", b"1"], "exact"), ([b"FLUSHDB"], "exact"),
                    ([b"SET", k, b"db1"], "exact"), ([b"GET", k], "exact"),
                    ([b"DBSIZE"], "exact"), ([b"SELECT", b"0"], "exact"),
                    ([b"COPY", k, b"k2", b"DB", b"1", b"REPLACE"], "exact"),
                    ([b"SELECT", b"1"], "exact"), ([b"GET", b"k2"], "exact"),
                    ([b"SELECT", b"0"], "exact")]
        if c == "expire_past":
            k = self.key()
            return [([b"SET", k, b"v"], "exact"), ([b"EXPIREAT", k, b"100"], "exact"),
                    ([b"EXISTS", k], "exact"), ([b"SET", k, b"v", b"PXAT", b"1000"], "exact"),
                    ([b"GET", k], "exact"), ([b"SET", k, b"v"], "exact"),
                    ([b"PEXPIRE", k, b"-1"], "exact"), ([b"TTL", k], "exact")]
        k = self.key()
        out = []
        for v in [b"12345", b"-1", b"9999", b"10000", b"abc", b"x" * 44, b"x" * 45, b"1.5",
                  b"9223372036854775807", b"012", b" 1"]:
            out += [([b"SET", k, v], "exact"), ([b"OBJECT", b"ENCODING", k], "exact"),
                    ([b"OBJECT", b"REFCOUNT", k], "exact")]
        out += [([b"APPEND", k, b"z"], "exact"), ([b"OBJECT", b"ENCODING", k], "exact"),
                ([b"SET", k, b"5"], "exact"), ([b"INCR", k], "exact"),
                ([b"OBJECT", b"ENCODING", k], "exact"), ([b"SETRANGE", k, b"0", b"7"], "exact"),
                ([b"OBJECT", b"ENCODING", k], "exact")]
        return out

    def gen_bad_numbers(self):
        r = self.r
        k = self.key()
        bad = r.choice(BAD_INTS)
        argv = r.choice([
            [b"INCRBY", k, bad], [b"DECRBY", k, bad], [b"EXPIRE", k, bad],
            [b"PEXPIRE", k, bad], [b"SETEX", k, bad, b"v"], [b"GETRANGE", k, bad, b"1"],
            [b"SETRANGE", k, bad, b"v"], [b"SELECT", bad], [b"SET", k, b"v", b"EX", bad],
            [b"INCRBYFLOAT", k, bad], [b"EXPIREAT", k, bad], [b"PSETEX", k, bad, b"v"],
        ])
        return [(argv, "exact")]

    def inline(self):
        """An inline (non-RESP) request line and nothing else: simple words or quoted forms."""
        r = self.r
        k = r.choice([b"k1", b"k2", b"n1", b"k3"])
        return r.choice([
            b"PING", b"ping hello", b"SET " + k + b" inline", b"GET " + k, b"INCR n1",
            b"SET " + k + b' "with space"', b"SET " + k + b" 'single quoted'",
            b'ECHO "\\x41\\x42\\n\\t"', b"  GET   " + k + b"  ", b"DEL k1 k2",
            b'SET "k 1" v', b"EXISTS k1 k2 k3", b"ECHO \"a\\\"b\"", b"MGET k1 k2 n1",
            b"ECHO \"\\xzz\"", b"UNKNOWN arg", b"STRLEN " + k, b"ECHO ''", b"ECHO \"\"",
        ])
