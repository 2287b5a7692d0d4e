"""Seeded random stream commands for test_streams.py: XADD (explicit, partial '<ms>-*' and bad IDs,
NOMKSTREAM, MAXLEN/MINID with '=' and '~' and LIMIT), XLEN, XRANGE/XREVRANGE (inclusive,
exclusive '(' and '-'/'+' bounds, COUNT), XDEL, XTRIM, XREAD (COUNT, several streams, '$'),
XSETID (ENTRIESADDED, MAXDELETEDID), XGROUP CREATE/SETID/DESTROY/CREATECONSUMER/DELCONSUMER
(MKSTREAM, ENTRIESREAD), XREADGROUP ('>', history IDs, NOACK, COUNT), XACK, XPENDING (summary,
extended, IDLE, consumer), XCLAIM (IDLE, TIME, RETRYCOUNT, FORCE, JUSTID, LASTID), XAUTOCLAIM,
XINFO STREAM [FULL [COUNT]], XINFO GROUPS/CONSUMERS, TYPE, OBJECT ENCODING, wrong types, wrong
arities and MULTI/EXEC blocks.

IDs are explicit (no '*', whose ID is the clock's), and idle-time filters are 0 or huge, so every
reply is deterministic except the times XPENDING, XINFO CONSUMERS and XINFO STREAM FULL report:
their comparison mode says which fields are times (compared within a tolerance).
"""

import re

STREAM_KEYS = [b"x1", b"x2", b"x3"]
OTHER_KEYS = [b"xs", b"xl"]  # a string and a list, for WRONGTYPE
GROUPS = [b"g1", b"g2", b"g3"]
CONSUMERS = [b"c1", b"c2", b"c3", b"c4"]
FIELDS = [b"f", b"g", b"h", b"1", b"field-with-a-longer-name"]
VALUES = [b"v", b"1", b"-1", b"127", b"128", b"-4096", b"65536", b"9223372036854775807",
          b"12345678901234567890", b"", b"x" * 70, b"y" * 600, b"z" * 5000, b"01", "ü".encode(),
          b"-0", b"4611686018427387904", b"-4611686018427387904"]
BAD_IDS = [b"x", b"-1", b"1-x", b"1-", b"-", b"+", b"1--1", b"18446744073709551616",
           b"1-18446744073709551616", b"(1", b"", b"1.5", b" 1", b"0x10"]
BAD_INTS = [b"x", b"", b"1.5", b"-", b"9223372036854775808"]

STREAM_ARITY = {
    "xadd": -5, "xlen": 2, "xrange": -4, "xrevrange": -4, "xdel": -3, "xtrim": -4, "xread": -4,
    "xreadgroup": -7, "xsetid": -3, "xack": -4, "xpending": -3, "xclaim": -6, "xautoclaim": -6,
}
SUB_ARITY = {("xgroup", "create"): -5, ("xgroup", "setid"): -5, ("xgroup", "destroy"): 4,
             ("xgroup", "createconsumer"): 5, ("xgroup", "delconsumer"): 5, ("xgroup", "help"): 2,
             ("xinfo", "stream"): -3, ("xinfo", "groups"): 3, ("xinfo", "consumers"): 4,
             ("xinfo", "help"): 2}


class StreamGen:
    """Generates (argv, mode) lists; mode is "exact" or the name of a time-aware comparison."""

    def __init__(self, rng, multi=True):
        self.r = rng
        self.multi = multi  # MULTI blocks among the generated commands
        self.ms = {k: 0 for k in STREAM_KEYS}
        self.recent = {k: [] for k in STREAM_KEYS}  # IDs replies named, per key

    def observe(self, argv, reply):
        """Remembers the IDs a reply named (XADD, XREADGROUP), for XACK/XCLAIM/XDEL to use."""
        name = argv[0].upper()
        if name not in (b"XADD", b"XREADGROUP", b"XPENDING") or reply[:1] == b"-":
            return
        key = argv[1] if name != b"XREADGROUP" else argv[-2] if len(argv) > 2 else None
        if key in self.recent:
            found = re.findall(rb"\r\n(\d+-\d+)\r\n", reply)
            self.recent[key] = (self.recent[key] + found)[-40:]

    def known_id(self, key):
        """An ID a reply named for `key` when there is one, else a plausible one."""
        ids = self.recent.get(key)
        if ids and self.r.random() < 0.7:
            return self.r.choice(ids)
        return self.maybe_bad_id(key)

    def key(self):
        r = self.r.random()
        if r < 0.9:
            return self.r.choice(STREAM_KEYS)
        return self.r.choice(OTHER_KEYS + [b"nokey"])

    def seen_id(self, key=None):
        """An ID near what the key's stream holds, in one of the accepted spellings."""
        r = self.r
        top = self.ms.get(key, 0) if key else max(self.ms.values())
        ms = r.randint(0, top + 2)
        form = r.random()
        if form < 0.6:
            return b"%d-%d" % (ms, r.randint(0, 3))
        if form < 0.8:
            return b"%d" % ms
        if form < 0.9:
            return r.choice([b"0-0", b"0", b"18446744073709551615-18446744073709551615"])
        return b"%d-%d" % (ms, r.choice([0, 18446744073709551615]))

    def maybe_bad_id(self, key=None, p=0.04):
        return self.r.choice(BAD_IDS) if self.r.random() < p else self.seen_id(key)

    def bound(self, key, low):
        r = self.r.random()
        if r < 0.2:
            return b"-" if low else b"+"
        if r < 0.35:
            return b"(" + self.seen_id(key)
        if r < 0.38:
            return self.r.choice([b"(-", b"(+", b"(", b"(0-0", b"(18446744073709551615-18446744073709551615"])
        return self.maybe_bad_id(key, 0.03)

    def fields(self):
        r = self.r
        n = r.choice([1, 1, 1, 2, 2, 3])
        if r.random() < 0.5:
            names = FIELDS[:n]
        else:
            names = [r.choice(FIELDS) for _ in range(n)]
        out = []
        for f in names:
            out += [f, r.choice(VALUES)]
        if r.random() < 0.02:
            out.append(b"odd")
        return out

    def trim_args(self):
        r = self.r
        strategy = r.choice([b"MAXLEN", b"MINID", b"maxlen", b"minid"])
        args = [strategy]
        op = r.choice([None, None, b"=", b"~", b"~"])
        if op:
            args.append(op)
        if strategy.upper() == b"MAXLEN":
            args.append(r.choice([b"0", b"1", b"5", b"50", b"150", b"-1"]) if r.random() > 0.03
                        else r.choice(BAD_INTS))
        else:
            args.append(self.maybe_bad_id(None, 0.03))
        if r.random() < 0.25:
            args += [b"LIMIT", r.choice([b"0", b"1", b"100", b"-1", b"x"])]
        return args

    def gen_xadd(self):
        r = self.r
        key = self.key()
        args = [b"XADD", key]
        if r.random() < 0.1:
            args.append(b"NOMKSTREAM")
        if r.random() < 0.2:
            args += self.trim_args()
        form = r.random()
        if key in self.ms:
            if form < 0.75:
                self.ms[key] += r.choice([0, 0, 1, 1, 2])
                args.append(b"%d-*" % self.ms[key])
            elif form < 0.9:
                self.ms[key] += r.choice([0, 1])
                args.append(b"%d-%d" % (self.ms[key], r.randint(0, 5)))
            else:
                args.append(self.maybe_bad_id(key, 0.5))
        else:
            args.append(b"1-1")
        return [(args + self.fields(), "exact")]

    def gen_xadd_many(self):
        """A burst of appends to one key, so streams grow past a node (100 entries)."""
        key = self.r.choice(STREAM_KEYS)
        out = []
        fields = self.fields()
        for _ in range(self.r.randint(20, 120)):
            self.ms[key] += 1
            out.append(([b"XADD", key, b"%d-*" % self.ms[key]] + fields, "exact"))
        return out

    def gen_range(self):
        r = self.r
        key = self.key()
        rev = r.random() < 0.4
        args = [b"XREVRANGE" if rev else b"XRANGE", key]
        lo, hi = self.bound(key, True), self.bound(key, False)
        args += [hi, lo] if rev else [lo, hi]
        if r.random() < 0.4:
            args += [r.choice([b"COUNT", b"count"]),
                     r.choice([b"0", b"1", b"2", b"10", b"-5"]) if r.random() > 0.05
                     else r.choice(BAD_INTS)]
        if r.random() < 0.02:
            args.append(b"extra")
        return [(args, "exact")]

    def gen_xdel(self):
        key = self.key()
        ids = [self.known_id(key) for _ in range(self.r.randint(1, 4))]
        return [([b"XDEL", key] + ids, "exact")]

    def gen_xtrim(self):
        args = [b"XTRIM", self.key()] + self.trim_args()
        if self.r.random() < 0.03:
            args = [b"XTRIM", self.key(), self.r.choice([b"LIMIT", b"FOO", b"~"]), b"5"]
        return [(args, "exact")]

    def gen_xread(self):
        r = self.r
        keys = [self.key() for _ in range(r.choice([1, 1, 2, 3]))]
        args = [b"XREAD"]
        if r.random() < 0.5:
            args += [b"COUNT", r.choice([b"0", b"1", b"3", b"-1"])]
        if r.random() < 0.03:
            args += [r.choice([b"GROUP", b"NOACK", b"FOO"])]
        args.append(b"STREAMS")
        args += keys
        ids = [r.choice([b"$", b"0", b">"]) if r.random() < 0.3 else self.maybe_bad_id(k)
               for k in keys]
        if r.random() < 0.03:
            ids = ids[:-1]
        return [(args + ids, "exact")]

    def gen_xsetid(self):
        r = self.r
        key = self.key()
        top = self.ms.get(key, 0)
        args = [b"XSETID", key, r.choice([b"%d-%d" % (top + r.randint(-1, 3), r.randint(0, 9)),
                                          self.maybe_bad_id(key, 0.2)])]
        if r.random() < 0.4:
            args += [b"ENTRIESADDED", r.choice([b"0", b"5", b"1000", b"-1", b"x"])]
        if r.random() < 0.3:
            args += [b"MAXDELETEDID", self.maybe_bad_id(key, 0.1)]
        if r.random() < 0.03:
            args.append(b"FOO")
        if key in self.ms and len(args) > 2:
            try:
                self.ms[key] = max(self.ms[key], int(args[2].split(b"-")[0]))
            except ValueError:
                pass
        return [(args, "exact")]

    def gen_xgroup(self):
        r = self.r
        key = self.key()
        group = r.choice(GROUPS)
        sub = r.choice([b"CREATE"] * 6 + [b"SETID", b"SETID", b"CREATECONSUMER", b"DELCONSUMER",
                                          b"create", b"HELP", b"FOO"] +
                       ([b"DESTROY"] if r.random() < 0.3 else []))
        if sub == b"HELP":
            return [([b"XGROUP", b"HELP"] + ([b"x"] if r.random() < 0.2 else []), "exact")]
        args = [b"XGROUP", sub, key, group]
        up = sub.upper()
        if up in (b"CREATE", b"SETID"):
            args.append(r.choice([b"$", b"0", b"0", b"0", b"-", b"+"]) if r.random() < 0.6
                        else self.maybe_bad_id(key))
            if up == b"CREATE" and r.random() < 0.6:
                args.append(r.choice([b"MKSTREAM", b"mkstream"]))
            if r.random() < 0.3:
                args += [b"ENTRIESREAD", r.choice([b"0", b"3", b"-1", b"-2", b"1000", b"x"])]
            if r.random() < 0.03:
                args.append(b"BAD")
        elif up in (b"CREATECONSUMER", b"DELCONSUMER"):
            args.append(r.choice(CONSUMERS))
        return [(args, "exact")]

    def gen_xreadgroup(self):
        r = self.r
        keys = [self.key() for _ in range(r.choice([1, 1, 1, 2]))]
        args = [b"XREADGROUP", b"GROUP", r.choice(GROUPS), r.choice(CONSUMERS)]
        if r.random() < 0.5:
            args += [b"COUNT", r.choice([b"0", b"1", b"2", b"5", b"-1"])]
        if r.random() < 0.25:
            args.append(b"NOACK")
        args.append(b"STREAMS")
        args += keys
        ids = [b">" if r.random() < 0.7 else r.choice([b"0", b"$", self.seen_id(k)])
               for k in keys]
        if r.random() < 0.02:
            args = [b"XREADGROUP", b"COUNT", b"1", b"STREAMS", keys[0], b">", b"x"]
            ids = []
        return [(args + ids, "exact")]

    def gen_xack(self):
        key = self.key()
        ids = [self.known_id(key) for _ in range(self.r.randint(1, 3))]
        return [([b"XACK", key, self.r.choice(GROUPS)] + ids, "exact")]

    def gen_xpending(self):
        r = self.r
        key = self.key()
        args = [b"XPENDING", key, r.choice(GROUPS)]
        if r.random() < 0.4:
            return [(args, "exact")]
        if r.random() < 0.3:
            args += [b"IDLE", r.choice([b"0", b"1000000000", b"x"])]
        args += [self.bound(key, True), self.bound(key, False),
                 r.choice([b"10", b"1", b"0", b"-1", b"x"])]
        if r.random() < 0.4:
            args.append(r.choice(CONSUMERS))
        if r.random() < 0.03:
            args = args[:4]
        return [(args, "xpending")]

    def gen_xclaim(self):
        r = self.r
        key = self.key()
        args = [b"XCLAIM", key, r.choice(GROUPS), r.choice(CONSUMERS),
                r.choice([b"0", b"0", b"1000000000", b"-5", b"x"])]
        args += [self.known_id(key) for _ in range(r.randint(1, 3))]
        for _ in range(r.choice([0, 0, 1, 2])):
            opt = r.choice([b"FORCE", b"JUSTID", b"RETRYCOUNT", b"LASTID", b"IDLE", b"TIME",
                            b"BOGUS"])
            args.append(opt)
            if opt == b"RETRYCOUNT":
                args.append(r.choice([b"0", b"5", b"-1", b"x"]))
            elif opt == b"LASTID":
                args.append(self.maybe_bad_id(key, 0.1))
            elif opt == b"IDLE":
                args.append(r.choice([b"0", b"1000", b"x"]))
            elif opt == b"TIME":
                args.append(r.choice([b"1000", b"x", b"99999999999999"]))
        return [(args, "exact")]

    def gen_xautoclaim(self):
        r = self.r
        key = self.key()
        args = [b"XAUTOCLAIM", key, r.choice(GROUPS), r.choice(CONSUMERS),
                r.choice([b"0", b"0", b"1000000000", b"-1", b"x"]), self.bound(key, True)]
        if r.random() < 0.5:
            args += [b"COUNT", r.choice([b"1", b"2", b"10", b"0", b"-1", b"x"])]
        if r.random() < 0.3:
            args.append(b"JUSTID")
        if r.random() < 0.03:
            args.append(b"BOGUS")
        return [(args, "exact")]

    def gen_xinfo(self):
        r = self.r
        key = self.key()
        which = r.random()
        if which < 0.35:
            args = [b"XINFO", b"STREAM", key]
            return [(args, "exact")]
        if which < 0.55:
            args = [b"XINFO", b"STREAM", key, b"FULL"]
            if r.random() < 0.5:
                args += [b"COUNT", r.choice([b"0", b"1", b"3", b"-1", b"x"])]
            if r.random() < 0.05:
                args = [b"XINFO", b"STREAM", key, r.choice([b"FOO", b"FULL"]), b"COUNT"]
            return [(args, "xinfo_full")]
        if which < 0.75:
            return [([b"XINFO", b"GROUPS", key], "exact")]
        if which < 0.95:
            return [([b"XINFO", b"CONSUMERS", key, r.choice(GROUPS)], "xinfo_consumers")]
        return [([b"XINFO", r.choice([b"HELP", b"FOO", b"help"])], "exact")]

    def setup(self):
        """Groups on every stream to start with, so group commands mostly find theirs."""
        out = []
        for key in STREAM_KEYS:
            for group in GROUPS[:2]:
                out.append(([b"XGROUP", b"CREATE", key, group, b"0", b"MKSTREAM"], "exact"))
        return out

    def gen_misc(self):
        r = self.r
        key = self.key()
        return [(r.choice([[b"TYPE", key], [b"OBJECT", b"ENCODING", key], [b"XLEN", key],
                           [b"EXISTS", key]]), "exact")]

    def gen_del(self):
        return [([b"DEL", self.r.choice(STREAM_KEYS)], "exact")]

    def gen_multi(self):
        out = [([b"MULTI"], "exact")]
        for _ in range(self.r.randint(1, 4)):
            argv, _ = self.r.choice([self.gen_xadd, self.gen_range, self.gen_xreadgroup,
                                     self.gen_xack, self.gen_xdel])()[0]
            out.append((argv, "exact"))
        if self.r.random() < 0.3:
            out.append(([b"XREAD", b"BLOCK", b"0", b"STREAMS", b"x1", b"$"], "exact"))
        out.append(([b"EXEC"], "exact"))
        return out

    def gen_arity(self):
        r = self.r
        if r.random() < 0.7:
            name, arity = r.choice(sorted(STREAM_ARITY.items()))
            n = abs(arity) - 1 - r.randint(1, 2)
            return [([name.encode()] + [b"x1"] * max(n, 0), "exact")]
        (cmd, sub), arity = r.choice(sorted(SUB_ARITY.items()))
        n = (abs(arity) - 2 + 1) if arity > 0 else abs(arity) - 3
        return [([cmd.encode(), sub.encode()] + [b"x1"] * max(n, 0), "exact")]

    def next(self):
        table = [(25, self.gen_xadd), (2, self.gen_xadd_many), (10, self.gen_range),
                 (4, self.gen_xdel), (4, self.gen_xtrim), (6, self.gen_xread),
                 (3, self.gen_xsetid), (8, self.gen_xgroup), (8, self.gen_xreadgroup),
                 (4, self.gen_xack), (5, self.gen_xpending), (5, self.gen_xclaim),
                 (4, self.gen_xautoclaim), (6, self.gen_xinfo), (3, self.gen_misc),
                 (1, self.gen_del), (2 if self.multi else 0, self.gen_multi),
                 (2, self.gen_arity)]
        total = sum(w for w, _ in table)
        x = self.r.uniform(0, total)
        for w, f in table:
            x -= w
            if x <= 0:
                return f()
        return table[-1][1]()
