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
PFCOUNT and PFMERGE are atomic over their keys too).
"""

from command_gen_bitmap import (BIT_KEYS, BITMAP_HLL_ARITY, HLL_KEYS, BitmapHllGenMixin,
                                bitmap_hll_atomic_keys)
from command_gen_db import DB_ARITY, DatabasesGenMixin
from command_gen_geo import GEO_ARITY, GeoGenMixin, geo_atomic_keys
from command_gen_script import SCRIPT_ARITY, ScriptGenMixin
from command_gen_zset import ZSET_ARITY, ZSetGenMixin, zset_atomic_keys

# Absolute unix times far in the future (2100, 2200) so EXPIREAT/EXAT results agree exactly.
FAR_S = [4102444800, 7258118400, 4102444801]
FAR_MS = [t * 1000 + 123 for t in FAR_S]

KEYS = [b"k1", b"k2", b"k3", b"k4", b"n1", b"n2", b"f1", b"\x00bin\xff\r\n", "ключ🔑".encode(),
        b"h1", b"h2", b"s1", b"s2", b"l1", b"l2"] + BIT_KEYS + HLL_KEYS

# Set keys that only ever hold a few integers (always intsets), and set members.
INT_SET_KEYS = [b"si1", b"si2", b"si3"]
INT_MEMBERS = [b"0", b"1", b"-1", b"2", b"3", b"7", b"42", b"-100", b"32767", b"32768", b"-32769",
               b"2147483648", b"-9223372036854775808", b"9223372036854775807"]
STR_MEMBERS = [b"a", b"b", b"c", b"", b"01", b"-0", b"+1", b"1.0", b" 1", "член".encode(),
               b"\x00\xff"]

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

BAD_INTS = [b"", b" 1", b"1 ", b"1.5", b"abc", b"9223372036854775808", b"-9223372036854775809",
            b"0x10", b"+1", b"1e3", b"--1", b"\x00", b"99999999999999999999"]
EDGE_INTS = [b"0", b"-0", b"1", b"-1", b"9223372036854775807", b"-9223372036854775808",
             b"9223372036854775806", b"-9223372036854775807", b"10000", b"9999", b"007"]
FLOATS = [b"0.1", b"-0.1", b"1.5", b"1e10", b"3.0e-5", b"-2.5E+3", b"10", b"1e308", b"-1e308",
          b"0", b"-0", b"inf", b"-inf", b"nan", b"+inf", b"1.", b".5", b" 1.0", b"1.0 ", b"",
          b"abc", b"5.0000000000000001", b"1e-320", b"17976931348623157e292"]

# Floats whose sums print as 300+ digits: kept out of generated hashes, where such a value would
# turn the hash into a hash table (whose field order differs between the servers).
HUGE_FLOATS = {b"1e308", b"-1e308", b"17976931348623157e292"}

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


class CommandGen(ZSetGenMixin, BitmapHllGenMixin, GeoGenMixin, DatabasesGenMixin,
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

    # -- hashes ------------------------------------------------------------------------------

    def hash_key(self):
        return self.r.choice([b"h1", b"h2", b"h1", b"h2", self.key()])

    def field(self):
        return self.r.choice([b"a", b"b", b"c", b"f1", b"", b"\x00\xff", "поле".encode(),
                              ("f%d" % self.r.randint(0, 9)).encode()])

    def hash_value(self):
        """A value short enough (at most 64 bytes) that generated hashes stay listpacks, whose
        order both servers share."""
        v = self.value()
        if v in HUGE_FLOATS:
            return b"1.5"  # an increment of it would be a 300-byte value
        return v if len(v) <= 64 else v[:64]

    def gen_hash(self):
        r = self.r
        k = self.hash_key()
        c = r.choice(["hset", "hset", "hmset", "hsetnx", "hget", "hmget", "hdel", "hlen",
                      "hstrlen", "hexists", "hgetall", "hkeys", "hvals", "hincrby",
                      "hincrbyfloat", "hrandfield", "hscan"])
        if c in ("hset", "hmset"):
            argv = [c.upper().encode(), k]
            for _ in range(r.randint(1, 3)):
                argv += [self.field(), self.hash_value()]
            if r.random() < 0.1:
                argv.pop()  # odd field/value count: an arity error
            return [(argv, "exact")]
        if c == "hsetnx":
            return [([b"HSETNX", k, self.field(), self.hash_value()], "exact")]
        if c in ("hget", "hstrlen", "hexists"):
            return [([c.upper().encode(), k, self.field()], "exact")]
        if c in ("hmget", "hdel"):
            return [([c.upper().encode(), k] + [self.field() for _ in range(r.randint(1, 4))],
                     "exact")]
        if c in ("hlen", "hgetall", "hkeys", "hvals"):
            return [([c.upper().encode(), k], "exact")]
        if c == "hincrby":
            amount = r.choice(EDGE_INTS + BAD_INTS[:6] + [str(r.randint(-1000, 1000)).encode()])
            return [([b"HINCRBY", k, self.field(), amount], "exact")]
        if c == "hincrbyfloat":
            amounts = [f for f in FLOATS if f not in HUGE_FLOATS] + EDGE_INTS[:4]
            return [([b"HINCRBYFLOAT", k, self.field(), r.choice(amounts)], "exact")]
        if c == "hrandfield":
            # Only the deterministic forms: a count covering the whole hash, 0, or errors.
            opts = r.choice([[b"1000"], [b"1000", b"WITHVALUES"], [b"0"], [b"x"],
                             [b"1", b"withvalue"], [b"1", b"WITHVALUES", b"x"],
                             [b"-9223372036854775808"], [b"4611686018427387904", b"WITHVALUES"],
                             [b"9223372036854775807"]])
            return [([b"HRANDFIELD", k] + opts, "exact")]
        opts = r.choice([[], [b"MATCH", b"a*"], [b"COUNT", b"5"], [b"COUNT", b"0"],
                         [b"COUNT", b"x"], [b"MATCH"], [b"TYPE", b"hash"],
                         [b"MATCH", b"*", b"COUNT", b"1000"]])
        cursor = r.choice([b"0", b"0", b"x", b"7"])
        return [([b"HSCAN", k, cursor] + opts, "exact")]

    def gen_hash_big(self):
        """A hash on its own key past the listpack limits: the encoding switch at 512 fields or a
        65-byte value, then whole-hash replies compared as multisets (hash-table order)."""
        r = self.r
        k = b"hbig"
        n = r.choice([511, 512, 513, 600])
        argv = [b"HSET", k]
        for i in range(n):
            argv += [b"field:%d" % i, b"v%d" % i]
        out = [([b"DEL", k], "exact"), (argv, "exact"), ([b"OBJECT", b"ENCODING", k], "exact")]
        if r.random() < 0.5:
            out += [([b"HSET", k, b"long", b"x" * r.choice([64, 65])], "exact"),
                    ([b"OBJECT", b"ENCODING", k], "exact")]
        out += [([b"HLEN", k], "exact"), ([b"HGETALL", k], "unordered"),
                ([b"HKEYS", k], "unordered"), ([b"HVALS", k], "unordered"),
                ([b"HSCAN", k, b"0", b"COUNT", b"100000"], "scan"),
                ([b"HSCAN", k, b"0", b"MATCH", b"field:1?", b"COUNT", b"100000"], "scan"),
                ([b"HRANDFIELD", k, b"5000", b"WITHVALUES"], "unordered"),
                ([b"HINCRBY", k, b"field:1", b"1"], "exact"),
                ([b"HINCRBYFLOAT", k, b"counter", b"2.5"], "exact"),
                ([b"HDEL", k] + [b"field:%d" % i for i in range(0, n, 2)], "exact"),
                ([b"HLEN", k], "exact"), ([b"OBJECT", b"ENCODING", k], "exact"),
                ([b"COPY", k, b"hbig2"], "exact"), ([b"HLEN", b"hbig2"], "exact"),
                ([b"TYPE", b"hbig2"], "exact"), ([b"GET", k], "exact"),
                ([b"DEL", k, b"hbig2"], "exact")]
        return out

    # -- sets --------------------------------------------------------------------------------

    def set_key(self):
        """A set key of any content (may be a hash table: whole-set replies are unordered), or
        any key for WRONGTYPE."""
        return self.r.choice([b"s1", b"s2", b"s1", b"s2", self.key()])

    def int_set_key(self):
        """A key that only ever holds a small set of integers: an intset, whose order (ascending)
        both servers share, so its whole-set replies are compared exactly."""
        return self.r.choice(INT_SET_KEYS)

    def set_member(self, ints_only=False):
        return self.r.choice(INT_MEMBERS if ints_only else INT_MEMBERS + STR_MEMBERS)

    def gen_set(self):
        r = self.r
        ints = r.random() < 0.5
        k = self.int_set_key() if ints else self.set_key()
        whole = "exact" if ints else "unordered"
        c = r.choice(["sadd", "sadd", "srem", "smembers", "sismember", "smismember", "scard",
                      "spop", "srandmember", "smove", "combine", "store", "sintercard", "sscan"])
        if c in ("sadd", "srem"):
            return [([c.upper().encode(), k] +
                     [self.set_member(ints) for _ in range(r.randint(1, 4))], "exact")]
        if c == "smembers":
            return [([b"SMEMBERS", k], whole)]
        if c in ("sismember", "scard"):
            return [([c.upper().encode(), k] + ([self.set_member()] if c == "sismember" else []),
                     "exact")]
        if c == "smismember":
            return [([b"SMISMEMBER", k] + [self.set_member() for _ in range(r.randint(1, 4))],
                     "exact")]
        if c == "spop":
            # Deterministic forms only: count 0, a count covering the set, errors, or a set of
            # one member.
            opts = r.choice([[b"0"], [b"1000"], [b"-1"], [b"x"], [b"1", b"2"], [b"1.5"]])
            if r.random() < 0.3:
                return [([b"DEL", b"sp"], "exact"), ([b"SADD", b"sp", self.set_member()], "exact"),
                        ([b"SPOP", b"sp"], "exact"), ([b"EXISTS", b"sp"], "exact")]
            return [([b"SPOP", k] + opts, whole)]
        if c == "srandmember":
            if r.random() < 0.3:
                # One member: every pick is that member.
                return [([b"DEL", b"sp"], "exact"), ([b"SADD", b"sp", self.set_member()], "exact"),
                        ([b"SRANDMEMBER", b"sp"] + r.choice([[], [b"-3"], [b"2"]]), "exact")]
            opts = r.choice([[b"1000"], [b"0"], [b"x"], [b"1", b"2"], [b"-9223372036854775808"],
                             [b"9223372036854775807"]])
            return [([b"SRANDMEMBER", k] + opts, whole)]
        if c == "smove":
            if ints:
                return [([b"SMOVE", k, self.int_set_key(), self.set_member(True)], "exact")]
            return [([b"SMOVE", k, self.set_key(), self.set_member()], "exact")]
        keys = [self.int_set_key() if ints else self.set_key()
                for _ in range(r.randint(1, 3))]
        if r.random() < 0.2:
            keys.insert(r.randint(0, len(keys)), b"nosuchset")
        if c == "combine":
            return [([r.choice([b"SINTER", b"SUNION", b"SDIFF"])] + keys, whole)]
        if c == "store":
            dest = self.int_set_key() if ints else self.set_key()
            op = r.choice([b"SINTERSTORE", b"SUNIONSTORE", b"SDIFFSTORE"])
            return [([op, dest] + keys, "exact"), ([b"SMEMBERS", dest], whole),
                    ([b"OBJECT", b"ENCODING", dest], "exact")]
        if c == "sintercard":
            numkeys = str(len(keys)).encode()
            if r.random() < 0.2:
                numkeys = r.choice([b"0", b"-1", b"x", b"9", b"9223372036854775808"])
            argv = [b"SINTERCARD", numkeys] + keys
            if r.random() < 0.4:
                argv += r.choice([[b"LIMIT", b"1"], [b"limit", b"0"], [b"LIMIT", b"-1"],
                                  [b"LIMIT", b"x"], [b"LIMIT"], [b"FOO", b"1"],
                                  [b"LIMIT", b"2", b"LIMIT", b"100"]])
            return [(argv, "exact")]
        # A hash table's partial scan follows its own bucket order: only ints get small counts.
        opts = r.choice([[], [b"MATCH", b"1*"], [b"COUNT", b"5" if ints else b"1000"],
                         [b"COUNT", b"0"], [b"COUNT", b"x"], [b"MATCH"], [b"TYPE", b"set"],
                         [b"MATCH", b"*", b"COUNT", b"1000"]])
        # A cursor past 0 names a bucket, which only an intset (scanned whole) makes comparable.
        cursor = r.choice([b"0", b"0", b"x", b"-1" if ints else b"0"])
        if cursor == b"0" and not ints and b"COUNT" not in opts:
            opts = opts + [b"COUNT", b"1000"]  # one call covers a hash table: same cursor 0
        return [([b"SSCAN", k, cursor] + opts, "exact" if ints else "scan")]

    def gen_set_big(self):
        """A set on its own key past the intset limits: the switch at 512 integers or on a
        string member, then whole-set replies compared as multisets (hash-table order), random
        replies by their deterministic properties, and SDIFFSTORE's algorithm-dependent
        encoding."""
        r = self.r
        # One hash tag: a cluster keeps both keys on one node, so every command here runs.
        k, k2 = b"{sbig}1", b"{sbig}2"
        n = r.choice([511, 512, 513, 600])
        members = [b"%d" % (i * 3 - 700) for i in range(n)]
        allowed = frozenset(members + [b"str", b"x"])
        out = [([b"DEL", k, k2], "exact"), ([b"SADD", k] + members, "exact"),
               ([b"OBJECT", b"ENCODING", k], "exact")]
        if r.random() < 0.5:
            out += [([b"SADD", k, b"str"], "exact"), ([b"OBJECT", b"ENCODING", k], "exact"),
                    ([b"SREM", k, b"str"], "exact"), ([b"OBJECT", b"ENCODING", k], "exact")]
        out += [([b"SCARD", k], "exact"), ([b"SMEMBERS", k], "unordered"),
                ([b"SSCAN", k, b"0", b"COUNT", b"100000"], "scan"),
                ([b"SSCAN", k, b"0", b"MATCH", b"1?", b"COUNT", b"100000"], "scan"),
                ([b"SRANDMEMBER", k, b"5000"], "unordered"),
                ([b"SRANDMEMBER", k, b"7"], ("sample", True, allowed)),
                ([b"SRANDMEMBER", k, b"400"], ("sample", True, allowed)),
                ([b"SRANDMEMBER", k, b"-20"], ("sample", False, allowed)),
                ([b"SINTERCARD", b"2", k, b"s1"], "exact"),
                ([b"SINTERCARD", b"1", k, b"LIMIT", b"10"], "exact"),
                ([b"SADD", k2, b"-700", b"-697", b"x"], "exact"),
                ([b"SDIFFSTORE", k2, k, k2], "exact"),
                ([b"OBJECT", b"ENCODING", k2], "exact"),
                ([b"SDIFFSTORE", k2, k2, k, k], "exact"),
                ([b"SINTERSTORE", k2, k, k], "exact"),
                ([b"OBJECT", b"ENCODING", k2], "exact"),
                ([b"COPY", k, k2, b"REPLACE"], "exact"), ([b"SCARD", k2], "exact"),
                ([b"SPOP", k2, b"10"], ("sample", True, allowed)),
                ([b"SCARD", k2], "exact"),
                ([b"SPOP", k2, str(n - 12).encode()], ("sample", True, allowed)),
                ([b"SCARD", k2], "exact"), ([b"OBJECT", b"ENCODING", k2], "exact"),
                ([b"DEL", k, k2], "exact")]
        return out

    # -- lists -------------------------------------------------------------------------------

    def list_key(self):
        return self.r.choice([b"l1", b"l2", b"l1", b"l2", self.key()])

    def list_element(self):
        return self.r.choice([b"a", b"b", b"c", b"", b"1", b"01", b"x" * 70, "элемент".encode(),
                              b"\x00\xff", ("e%d" % self.r.randint(0, 5)).encode()])

    def list_index(self):
        return self.r.choice([b"0", b"1", b"-1", b"-2", b"2", b"5", b"-100", b"100",
                              b"9223372036854775807", b"-9223372036854775808", b"x", b"1.5"])

    def list_end(self):
        return self.r.choice([b"LEFT", b"RIGHT", b"left", b"right", b"up"])

    def gen_list(self):
        r = self.r
        k = self.list_key()
        c = r.choice(["lpush", "rpush", "lpush", "rpush", "lpushx", "rpushx", "lpop", "rpop",
                      "llen", "lrange", "lrange", "lindex", "lset", "linsert", "lrem", "ltrim",
                      "lpos", "lmove", "rpoplpush", "lmpop", "blpop", "brpop", "blmove",
                      "brpoplpush", "blmpop"])
        if c in ("lpush", "rpush", "lpushx", "rpushx"):
            return [([c.upper().encode(), k] + [self.list_element()
                                                for _ in range(r.randint(1, 4))], "exact")]
        if c in ("lpop", "rpop"):
            opts = r.choice([[], [], [b"1"], [b"2"], [b"0"], [b"100"], [b"-1"], [b"x"],
                             [b"1", b"2"]])
            return [([c.upper().encode(), k] + opts, "exact")]
        if c == "llen":
            return [([b"LLEN", k], "exact")]
        if c == "lrange":
            return [([b"LRANGE", k, self.list_index(), self.list_index()], "exact")]
        if c == "lindex":
            return [([b"LINDEX", k, self.list_index()], "exact")]
        if c == "lset":
            return [([b"LSET", k, self.list_index(), self.list_element()], "exact")]
        if c == "linsert":
            where = r.choice([b"BEFORE", b"AFTER", b"after", b"middle"])
            return [([b"LINSERT", k, where, self.list_element(), self.list_element()], "exact")]
        if c == "lrem":
            count = r.choice([b"0", b"1", b"-1", b"2", b"-2", b"x", b"-9223372036854775808"])
            return [([b"LREM", k, count, self.list_element()], "exact")]
        if c == "ltrim":
            return [([b"LTRIM", k, self.list_index(), self.list_index()], "exact")]
        if c == "lpos":
            argv = [b"LPOS", k, self.list_element()]
            for _ in range(r.randint(0, 3)):
                opt = r.choice([b"RANK", b"COUNT", b"MAXLEN", b"rank", b"FOO"])
                argv += [opt, r.choice([b"1", b"-1", b"2", b"-2", b"0", b"3", b"x",
                                        b"-9223372036854775808", b"9223372036854775807"])]
            if r.random() < 0.1:
                argv.append(b"RANK")
            return [(argv, "exact")]
        if c in ("lmove", "blmove"):
            argv = [c.upper().encode(), k, self.list_key(), self.list_end(), self.list_end()]
            if c == "blmove":
                argv.append(r.choice([b"0.01", b"-1", b"x"]))
            return [(argv, "exact")]
        if c in ("rpoplpush", "brpoplpush"):
            argv = [c.upper().encode(), k, self.list_key()]
            if c == "brpoplpush":
                argv.append(r.choice([b"0.01", b"-1", b"nan"]))
            return [(argv, "exact")]
        keys = [self.list_key() for _ in range(r.randint(1, 3))]
        if r.random() < 0.3:
            keys.insert(r.randint(0, len(keys)), b"nosuchlist")
        # Blocking forms always carry a short timeout: an empty key times out, never hangs.
        timeout = r.choice([b"0.01", b"0.01", b"-1", b"x", b"inf"])
        if c in ("blpop", "brpop"):
            return [([c.upper().encode()] + keys + [timeout], "exact")]
        numkeys = str(len(keys)).encode()
        if r.random() < 0.2:
            numkeys = r.choice([b"0", b"-1", b"x", b"9", b"9223372036854775807"])
        argv = [numkeys] + keys + [self.list_end()]
        if r.random() < 0.5:
            argv += r.choice([[b"COUNT", b"2"], [b"count", b"100"], [b"COUNT", b"0"],
                              [b"COUNT", b"-1"], [b"COUNT"], [b"FOO"],
                              [b"COUNT", b"1", b"COUNT", b"1"]])
        if c == "lmpop":
            return [([b"LMPOP"] + argv, "exact")]
        return [([b"BLMPOP", timeout] + argv, "exact")]

    def gen_list_big(self):
        """A long list on its own key, across many 8 KB nodes: indexes, ranges, insertions and
        removals in the middle, trims, and the replies of every read."""
        r = self.r
        k = b"lbig"
        n = r.choice([1000, 5000, 20000])
        out = [([b"DEL", k, b"{lbig}2"], "exact")]
        for start in range(0, n, 2000):
            out.append(([b"RPUSH", k] + [b"item:%d" % i for i in range(start, min(n, start + 2000))],
                        "exact"))
        out += [([b"LPUSH", k, b"x" * 9000, b"head"], "exact"),
                ([b"OBJECT", b"ENCODING", k], "exact"), ([b"LLEN", k], "exact"),
                ([b"LINDEX", k, str(n // 2).encode()], "exact"),
                ([b"LINDEX", k, b"-%d" % (n // 3)], "exact"),
                ([b"LSET", k, str(n // 4).encode(), b"y" * 300], "exact"),
                ([b"LINSERT", k, b"BEFORE", b"item:%d" % (n // 2), b"z" * 5000], "exact"),
                ([b"LINSERT", k, b"AFTER", b"item:%d" % (n - 1), b"tail"], "exact"),
                ([b"LRANGE", k, str(n // 2 - 5).encode(), str(n // 2 + 5).encode()], "exact"),
                ([b"LPOS", k, b"item:%d" % (n - 10)], "exact"),
                ([b"LPOS", k, b"item:7", b"RANK", b"-1", b"MAXLEN", str(n).encode()], "exact"),
                ([b"LREM", k, b"0", b"item:%d" % (n // 5)], "exact"),
                ([b"LMOVE", k, b"{lbig}2", b"LEFT", b"RIGHT"], "exact"),
                ([b"LPOP", k, b"1500"], "exact"),
                ([b"LTRIM", k, b"100", b"-100"], "exact"),
                ([b"LRANGE", k, b"0", b"-1"], "exact"),
                ([b"COPY", k, b"{lbig}2", b"REPLACE"], "exact"),
                ([b"RPOP", b"{lbig}2", str(n).encode()], "exact"),
                ([b"EXISTS", b"{lbig}2"], "exact"), ([b"DEL", k], "exact")]
        return out

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
