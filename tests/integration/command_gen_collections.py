"""Hash, set and list commands for the differential test's generator (mixed into CommandGen).

Each family is drawn with its options, errors and encodings (listpack and hash table, intset and
hash table, listpack and quicklist), and its large forms ("big") cross the encoding limits.
"""

from command_gen_values import BAD_INTS, EDGE_INTS, FLOATS, HUGE_FLOATS, INT_MEMBERS, INT_SET_KEYS, STR_MEMBERS


class CollectionGenMixin:
    """Needs self.r (a random.Random), self.key() and self.value() from CommandGen."""

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
