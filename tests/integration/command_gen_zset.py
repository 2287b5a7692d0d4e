"""Sorted-set commands for the differential test's generator (mixed into CommandGen).

Sorted-set replies are ordered by (score, member), so almost everything compares exactly: ranges
by rank, score and lex (lex ones on keys whose members all share one score, the only case Redis
defines), every option and its errors, the listpack/skiplist switch at 129 members or a 65-byte
member, scores printed as Redis 7.0.15 prints doubles (RESP2 and RESP3), sets as inputs of the
set operations, and WRONGTYPE against every other type. Random picks (ZRANDMEMBER) are compared
by their deterministic properties.
"""

ZSET_ARITY = {
    "zadd": -4, "zincrby": 4, "zscore": 3, "zmscore": -3, "zcard": 2, "zcount": 4,
    "zlexcount": 4, "zrange": -4, "zrangebyscore": -4, "zrevrangebyscore": -4,
    "zrangebylex": -4, "zrevrangebylex": -4, "zrevrange": -4, "zrank": 3, "zrevrank": 3,
    "zrem": -3, "zremrangebyrank": 4, "zremrangebyscore": 4, "zremrangebylex": 4,
    "zpopmin": -2, "zpopmax": -2, "bzpopmin": -3, "bzpopmax": -3, "zrandmember": -2, "zscan": -3,
    "zunionstore": -4, "zinterstore": -4, "zdiffstore": -4, "zunion": -3, "zinter": -3,
    "zdiff": -3, "zrangestore": -5, "zintercard": -3, "zmpop": -4, "bzmpop": -5,
}

ZSET_KEYS = [b"z1", b"z2", b"z3"]
LEX_KEYS = [b"zl1", b"zl2"]
MEMBERS = [b"a", b"b", b"c", b"d", b"", b"01", b"-0", "член".encode(), b"\x00\xff", b"m1",
           b"m2", b"m10"]
SCORES = [b"0", b"1", b"-1", b"2", b"1.5", b"0.1", b"-0.0", b"1e300", b"-1e300", b"inf",
          b"-inf", b"+inf", b"3.0e-5", b"0.30000000000000004", b"1.1", b"10", b"5e-324",
          b"123456789012345678"]
BAD_SCORES = [b"nan", b"x", b"", b" 1", b"1 ", b"1e400", b"1e-400", b"(1"]
BOUNDS = [b"-inf", b"+inf", b"inf", b"0", b"1", b"(1", b"(0", b"1.5", b"(1.5", b"2", b"-1",
          b"(-inf", b"(+inf", b"10", b"1e300", b"", b"("]
BAD_BOUNDS = [b"x", b"nan", b"(x", b"1x", b"[1"]
LEX_BOUNDS = [b"-", b"+", b"[a", b"(a", b"[b", b"(c", b"[", b"(", b"[m1", b"(m10", b"[\xff"]
BAD_LEX = [b"a", b"", b"+a", b"-a", b"1"]
INDEXES = [b"0", b"1", b"-1", b"2", b"-2", b"5", b"-100", b"100", b"3"]
OP_CMDS = {b"zunion": 1, b"zinter": 1, b"zdiff": 1, b"zunionstore": 2, b"zinterstore": 2,
           b"zdiffstore": 2, b"zintercard": 1, b"zmpop": 1, b"bzmpop": 2}


def zset_atomic_keys(argv):
    """The keys of a multi-key sorted-set command (the set operations by numkeys, BZPOPMIN and
    BZPOPMAX by position), or None when malformed or not a multi-key sorted-set command."""
    name = argv[0].lower()
    if name in (b"bzpopmin", b"bzpopmax"):
        return argv[1:-1] if len(argv) >= 3 else None
    if name == b"zrangestore":
        return argv[1:3] if len(argv) >= 5 else None
    if name not in OP_CMDS:
        return None
    at = OP_CMDS[name]
    n = int(argv[at]) if len(argv) > at and argv[at].isdigit() else 0
    if not 0 < n <= len(argv) - at - 1:
        return None
    stored = [argv[1]] if at == 2 and name != b"bzmpop" else []
    return stored + argv[at + 1:at + 1 + n]


class ZSetGenMixin:
    """Generators of sorted-set commands; expects self.r (random.Random) and self.key()."""

    def zset_key(self):
        return self.r.choice(ZSET_KEYS + ZSET_KEYS + [self.key(), b"s1", b"h1", b"l1"])

    def zmember(self):
        return self.r.choice(MEMBERS)

    def zscore(self):
        r = self.r
        return r.choice(BAD_SCORES) if r.random() < 0.04 else r.choice(SCORES)

    def zbound(self):
        r = self.r
        return r.choice(BAD_BOUNDS) if r.random() < 0.04 else r.choice(BOUNDS)

    def zlex(self):
        r = self.r
        return r.choice(BAD_LEX) if r.random() < 0.04 else r.choice(LEX_BOUNDS)

    def zlimit(self):
        r = self.r
        return r.choice([[], [], [b"LIMIT", r.choice(INDEXES), r.choice(INDEXES)],
                         [b"LIMIT", b"0", b"-1"], [b"LIMIT", b"x", b"1"], [b"LIMIT", b"1"]])

    def gen_zset(self):
        r = self.r
        k = self.zset_key()
        c = r.choice(["zadd", "zadd", "zadd", "zincrby", "zscore", "zmscore", "zcard", "zcount",
                      "zrange", "zrange", "zrangebyscore", "zrevrangebyscore", "zrevrange",
                      "zrank", "zrem", "zremrangebyrank", "zremrangebyscore", "zpop", "bzpop",
                      "zrandmember", "zscan", "op", "store", "lex", "lex", "zrangestore",
                      "zrangestore", "zintercard", "zmpop", "zmpop"])
        if c in ("zrangestore", "zintercard", "zmpop"):
            return self.gen_zset_70(c, k)
        if c == "zadd":
            opts = r.sample([b"NX", b"XX", b"GT", b"LT", b"CH", b"INCR", b"ch"], r.choice([0, 0, 1, 2]))
            pairs = []
            for _ in range(1 if b"INCR" in opts and r.random() < 0.9 else r.randint(1, 4)):
                pairs += [self.zscore(), self.zmember()]
            if r.random() < 0.03:
                pairs = pairs[:-1]
            return [([b"ZADD", k] + opts + pairs, "exact")]
        if c == "zincrby":
            return [([b"ZINCRBY", k, self.zscore(), self.zmember()], "exact")]
        if c == "zscore":
            return [([b"ZSCORE", k, self.zmember()], "exact")]
        if c == "zmscore":
            return [([b"ZMSCORE", k] + [self.zmember() for _ in range(r.randint(1, 3))], "exact")]
        if c == "zcard":
            return [([b"ZCARD", k], "exact")]
        if c == "zcount":
            return [([b"ZCOUNT", k, self.zbound(), self.zbound()], "exact")]
        if c == "zrange":
            form = r.choice(["rank", "score", "lex"])
            argv = [b"ZRANGE", k]
            if form == "rank":
                argv += [r.choice(INDEXES), r.choice(INDEXES)]
            elif form == "score":
                argv += [self.zbound(), self.zbound(), b"BYSCORE"]
            else:
                argv = [b"ZRANGE", r.choice(LEX_KEYS), self.zlex(), self.zlex(), b"BYLEX"]
            extra = r.sample([[b"REV"], [b"WITHSCORES"], self.zlimit(), [b"BYSCORE"], [b"FOO"]],
                             r.choice([0, 1, 1, 2]))
            for e in extra:
                argv += e
            return [(argv, "exact")]
        if c in ("zrangebyscore", "zrevrangebyscore"):
            argv = [c.upper().encode(), k, self.zbound(), self.zbound()]
            if r.random() < 0.5:
                argv.append(b"WITHSCORES")
            return [(argv + self.zlimit(), "exact")]
        if c == "zrevrange":
            argv = [b"ZREVRANGE", k, r.choice(INDEXES), r.choice(INDEXES)]
            return [(argv + r.choice([[], [b"WITHSCORES"], [b"withscores"], [b"X"]]), "exact")]
        if c == "zrank":
            return [([r.choice([b"ZRANK", b"ZREVRANK"]), k, self.zmember()], "exact")]
        if c == "zrem":
            return [([b"ZREM", k] + [self.zmember() for _ in range(r.randint(1, 3))], "exact")]
        if c == "zremrangebyrank":
            return [([b"ZREMRANGEBYRANK", k, r.choice(INDEXES), r.choice(INDEXES)], "exact")]
        if c == "zremrangebyscore":
            return [([b"ZREMRANGEBYSCORE", k, self.zbound(), self.zbound()], "exact")]
        if c == "zpop":
            opts = r.choice([[], [b"1"], [b"2"], [b"0"], [b"-1"], [b"x"], [b"100"], [b"1", b"2"]])
            return [([r.choice([b"ZPOPMIN", b"ZPOPMAX"]), k] + opts, "exact")]
        if c == "bzpop":
            # Only forms that answer at once: data present, a bad timeout, or a wrong type.
            keys = [r.choice([b"nosuchz", k]) for _ in range(r.randint(1, 2))] + [r.choice(ZSET_KEYS)]
            timeout = r.choice([b"0.01", b"1", b"-1", b"x", b"1e20", b"inf"])
            return [([b"ZADD", keys[-1], self.r.choice(SCORES), self.zmember()], "exact"),
                    ([r.choice([b"BZPOPMIN", b"BZPOPMAX"])] + keys + [timeout], "exact")]
        if c == "zscan":
            # A shared key may be a skiplist (over 128 members or a 65-byte one), scanned in its
            # hash table's order (redis seeds its hash at random): scanned whole from cursor 0 and
            # compared as a SCAN reply. A cursor past 0 or a partial COUNT names hash buckets, so
            # those forms go to a listpack set of their own, scanned whole in order (ZSCAN l1 -1
            # on a skiplist gave redis the members of its last bucket, ringkv none).
            opts = r.choice([[], [b"COUNT", b"1"], [b"MATCH", b"*a*"], [b"COUNT", b"0"],
                             [b"COUNT", b"x"], [b"TYPE", b"zset"], [b"MATCH"]])
            cursor = r.choice([b"0", b"0", b"x", b"-1", b"18446744073709551615", b"5"])
            if cursor not in (b"0", b"x") or opts == [b"COUNT", b"1"]:
                small = b"zscan:small"
                return [([b"DEL", small], "exact"),
                        ([b"ZADD", small, b"1", b"a", b"2", b"b", b"3", b"c"], "exact"),
                        ([b"ZSCAN", small, cursor] + opts, "exact")]
            if b"COUNT" not in opts:
                opts = opts + [b"COUNT", b"100000"]  # one call covers a hash table: cursor 0
            return [([b"ZSCAN", k, cursor] + opts, "scan")]
        if c == "zrandmember":
            opts = r.choice([[b"1000"], [b"0"], [b"x"], [b"1", b"x"], [b"1000", b"WITHSCORES"],
                             [b"-9223372036854775808"], [b"9223372036854775807", b"WITHSCORES"],
                             [b"1", b"2", b"3"]])
            if r.random() < 0.3:
                return [([b"DEL", b"zr"], "exact"), ([b"ZADD", b"zr", b"1", self.zmember()], "exact"),
                        ([b"ZRANDMEMBER", b"zr"] + r.choice([[], [b"-3"], [b"2"],
                                                             [b"-2", b"WITHSCORES"]]), "exact")]
            return [([b"ZRANDMEMBER", k] + opts, "exact")]
        if c in ("op", "store"):
            keys = [r.choice(ZSET_KEYS + [b"s1", b"si1", b"nosuchz", k]) for _ in range(r.randint(1, 3))]
            numkeys = str(len(keys)).encode()
            if r.random() < 0.08:
                numkeys = r.choice([b"0", b"-1", b"x", b"9"])
            op = r.choice([b"UNION", b"INTER", b"DIFF"])
            opts = []
            if r.random() < 0.4:
                opts += [b"WEIGHTS"] + [r.choice([b"1", b"2", b"-1", b"0", b"0.5", b"inf", b"x"])
                                        for _ in range(len(keys))]
            if r.random() < 0.4:
                opts += [b"AGGREGATE", r.choice([b"SUM", b"min", b"MAX", b"avg"])]
            if c == "op":
                if r.random() < 0.6:
                    opts.append(b"WITHSCORES")
                return [([b"Z" + op, numkeys] + keys + opts, "exact")]
            dest = r.choice(ZSET_KEYS)
            return [([b"Z" + op + b"STORE", dest, numkeys] + keys + opts, "exact"),
                    ([b"ZRANGE", dest, b"0", b"-1", b"WITHSCORES"], "exact"),
                    ([b"OBJECT", b"ENCODING", dest], "exact")]
        # Lex commands on keys whose members all score 0.
        lk = r.choice(LEX_KEYS)
        sub = r.choice(["add", "range", "revrange", "count", "rem"])
        if sub == "add":
            return [([b"ZADD", lk] + sum([[b"0", self.zmember()] for _ in range(r.randint(1, 3))],
                                         []), "exact")]
        if sub == "range":
            return [([b"ZRANGEBYLEX", lk, self.zlex(), self.zlex()] + self.zlimit(), "exact")]
        if sub == "revrange":
            return [([b"ZREVRANGEBYLEX", lk, self.zlex(), self.zlex()] + self.zlimit(), "exact")]
        if sub == "count":
            return [([b"ZLEXCOUNT", lk, self.zlex(), self.zlex()], "exact")]
        return [([b"ZREMRANGEBYLEX", lk, self.zlex(), self.zlex()], "exact")]

    def gen_zset_70(self, c, k):
        """ZRANGESTORE, ZINTERCARD, ZMPOP and BZMPOP (forms that answer at once)."""
        r = self.r
        if c == "zrangestore":
            dest = r.choice(ZSET_KEYS + [b"zdst", b"s1"])
            form = r.choice(["rank", "score", "lex"])
            if form == "rank":
                argv = [b"ZRANGESTORE", dest, k, r.choice(INDEXES), r.choice(INDEXES)]
            elif form == "score":
                argv = [b"ZRANGESTORE", dest, k, self.zbound(), self.zbound(), b"BYSCORE"]
            else:
                argv = [b"ZRANGESTORE", dest, r.choice(LEX_KEYS), self.zlex(), self.zlex(),
                        b"BYLEX"]
            for e in r.sample([[b"REV"], [b"WITHSCORES"], self.zlimit(), [b"BYSCORE"]],
                              r.choice([0, 1, 1, 2])):
                argv += e
            return [(argv, "exact"), ([b"ZRANGE", dest, b"0", b"-1", b"WITHSCORES"], "exact"),
                    ([b"OBJECT", b"ENCODING", dest], "exact")]
        keys = [r.choice(ZSET_KEYS + [b"s1", b"si1", b"nosuchz", k]) for _ in range(r.randint(1, 3))]
        numkeys = str(len(keys)).encode()
        if r.random() < 0.08:
            numkeys = r.choice([b"0", b"-1", b"x", b"9"])
        if c == "zintercard":
            opts = r.choice([[], [], [b"LIMIT", r.choice([b"0", b"1", b"2", b"-1", b"x"])],
                             [b"LIMIT"], [b"WITHSCORES"]])
            return [([b"ZINTERCARD", numkeys] + keys + opts, "exact")]
        where = r.choice([b"MIN", b"MAX", b"min", b"max", b"MID"] if r.random() < 0.1 else
                         [b"MIN", b"MAX"])
        opts = r.choice([[], [], [b"COUNT", r.choice([b"1", b"2", b"10", b"0", b"-1", b"x"])],
                         [b"COUNT"], [b"COUNT", b"1", b"COUNT", b"2"]])
        if r.random() < 0.3:
            # Only forms that answer at once: data present, a bad timeout, or a wrong type.
            keys.append(r.choice(ZSET_KEYS))
            timeout = r.choice([b"0.01", b"1", b"-1", b"x", b"inf"])
            return [([b"ZADD", keys[-1], r.choice(SCORES), self.zmember()], "exact"),
                    ([b"BZMPOP", timeout, str(len(keys)).encode()] + keys + [where] + opts,
                     "exact")]
        return [([b"ZMPOP", numkeys] + keys + [where] + opts, "exact")]

    def gen_zset_big(self):
        """A sorted set on its own key past the listpack limits (129 members, or a 65-byte
        member), then ranks, ranges, pops, removals and a store of it, all compared exactly."""
        r = self.r
        k = b"zbig"
        n = r.choice([128, 129, 300])
        members = [b"m%d" % i for i in range(n)] + [b"x" * 65]
        out = [([b"DEL", k], "exact")]
        args = [b"ZADD", k]
        for i in range(n):
            args += [str(r.randint(-50, 50) / 4).encode(), b"m%d" % i]
        out.append((args, "exact"))
        if r.random() < 0.3:
            out.append(([b"ZADD", k, b"7", b"x" * 65], "exact"))
        out += [([b"OBJECT", b"ENCODING", k], "exact"), ([b"ZCARD", k], "exact"),
                ([b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"], "exact"),
                ([b"ZRANGE", k, b"(0", b"5", b"BYSCORE", b"LIMIT", b"3", b"10"], "exact"),
                ([b"ZREVRANGE", k, b"10", b"20", b"WITHSCORES"], "exact"),
                ([b"ZRANK", k, b"m%d" % r.randrange(n)], "exact"),
                ([b"ZREVRANK", k, b"m%d" % r.randrange(n)], "exact"),
                ([b"ZCOUNT", k, b"-3", b"(3"], "exact"),
                ([b"ZINCRBY", k, b"100", b"m%d" % r.randrange(n)], "exact"),
                ([b"ZPOPMIN", k, b"3"], "exact"), ([b"ZPOPMAX", k], "exact"),
                ([b"ZREMRANGEBYRANK", k, b"10", b"19"], "exact"),
                ([b"ZREMRANGEBYSCORE", k, b"(5", b"8"], "exact"),
                ([b"ZRANDMEMBER", k, b"-5"], ("sample", False, members)),
                ([b"ZSCAN", k, b"0", b"COUNT", b"100000"], "scan"),
                ([b"ZUNIONSTORE", b"zbig2", b"2", k, b"z1", b"WEIGHTS", b"2", b"1"], "exact"),
                ([b"OBJECT", b"ENCODING", b"zbig2"], "exact"),
                ([b"ZRANGE", b"zbig2", b"0", b"-1", b"WITHSCORES"], "exact"),
                ([b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"], "exact"),
                ([b"DEL", k, b"zbig2"], "exact")]
        return out
