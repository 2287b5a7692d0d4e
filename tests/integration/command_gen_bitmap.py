"""Bitmap and HyperLogLog commands for the differential test's generator (mixed into CommandGen).

Bitmaps: SETBIT/GETBIT at offsets around byte edges and far out (the value grows), BITCOUNT and
BITPOS with byte and bit ranges (negative, inverted, out of range, bad units, extra arguments),
BITOP with every operation over present, missing and wrong-type keys, and BITFIELD/BITFIELD_RO
with every field width edge, '#' offsets and the three overflow modes — then GET, STRLEN,
SETRANGE, APPEND and OBJECT ENCODING on the same keys, since bits live in the string.

HyperLogLog: PFADD of few and many elements (so sketches go from sparse to dense), PFCOUNT of one
and several keys, PFMERGE, PFDEBUG, and GET of every sketch, which must be byte-identical to
Redis's; plus strings that are not sketches, sketches damaged by APPEND/SETRANGE, and crafted
headers (bad magic, encoding, length, corrupt sparse runs with a stale cache).
"""

BITMAP_HLL_ARITY = {
    "setbit": 4, "getbit": 3, "bitcount": -2, "bitpos": -3, "bitop": -4, "bitfield": -2,
    "bitfield_ro": -2, "pfadd": -2, "pfcount": -2, "pfmerge": -2, "pfdebug": 3, "pfselftest": 1,
}

BIT_KEYS = [b"b1", b"b2", b"b3"]
HLL_KEYS = [b"p1", b"p2", b"p3"]

OFFSETS = [b"0", b"1", b"7", b"8", b"9", b"15", b"16", b"63", b"64", b"100", b"1000", b"8191",
           b"65536", b"1048576"]
BAD_OFFSETS = [b"-1", b"x", b"", b"4294967296", b"9223372036854775807", b"#1", b"1.5", b" 1"]
BIT_VALUES = [b"0", b"1", b"0", b"1", b"2", b"-1", b"x", b""]
RANGE_INTS = [b"0", b"1", b"2", b"-1", b"-2", b"-3", b"5", b"7", b"8", b"13", b"-9", b"100",
              b"-100", b"9223372036854775807", b"-9223372036854775808"]
BAD_RANGE = [b"x", b"", b"1.5", b"9223372036854775808"]
UNITS = [b"BYTE", b"BIT", b"bit", b"byte", b"Bit"]
BAD_UNITS = [b"BITS", b"", b"x", b"bit\x00"]
OPS = [b"AND", b"OR", b"XOR", b"NOT", b"and", b"Or", b"xor", b"not"]
BAD_OPS = [b"NAND", b"", b"andx", b"NO"]
TYPES = [b"i1", b"u1", b"i5", b"u5", b"i8", b"u8", b"i16", b"u16", b"i32", b"u32", b"i63", b"u63",
         b"i64", b"i7", b"u13"]
BAD_TYPES = [b"u64", b"i65", b"i0", b"u0", b"x8", b"I8", b"U8", b"", b"i", b"i-1", b"i08"]
FIELD_OFFSETS = [b"0", b"1", b"3", b"7", b"8", b"13", b"31", b"100", b"#0", b"#1", b"#2", b"#7",
                 b"#100"]
BAD_FIELD_OFFSETS = [b"-1", b"x", b"#", b"#-1", b"#x", b"", b"##1"]
FIELD_VALUES = [b"0", b"1", b"-1", b"100", b"-100", b"127", b"128", b"-128", b"-129", b"255",
                b"256", b"65535", b"1000000", b"9223372036854775807", b"-9223372036854775808",
                b"4611686018427387904", b"-4611686018427387905"]
OVERFLOWS = [b"WRAP", b"SAT", b"FAIL", b"wrap", b"sat", b"fail"]
ELEMENTS = [b"a", b"b", b"c", b"", b"foo", b"bar", b"\x00\xff", "элемент".encode(), b"1", b"01"]

HYLL = b"HYLL"
# Sketch-shaped strings that are not valid sketches, or are valid but unusual.
CRAFTED = [
    HYLL,                                                    # too short
    b"HYLL\x02" + b"\x00" * 11 + b"\x7f\xff",                # unknown encoding
    b"HYLX\x01" + b"\x00" * 11 + b"\x7f\xff",                # bad magic
    b"HYLL\x00" + b"\x00" * 11 + b"\x00" * 100,              # dense of the wrong length
    b"HYLL\x00" + b"\x00" * 11 + b"\x00" * 12288,            # empty dense, cached 0
    b"HYLL\x00" + b"\x00" * 10 + b"\x80" + b"\x15" * 12288,  # dense, stale cache
    b"HYLL\x01" + b"\x00" * 10 + b"\x80" + b"\x7f\xfe",      # sparse one register short
    b"HYLL\x01" + b"\x00" * 10 + b"\x80" + b"\x7f\xff\x00",  # sparse one register too many
    b"HYLL\x01" + b"\x00" * 10 + b"\x80" + b"\x7f\xfe\x80",  # sparse ending in a VAL
    b"HYLL\x01" + b"\x00" * 11 + b"\x7f\xfe",                # corrupt, but cached 0 is valid
    b"HYLL\x01" + b"\x00" * 10 + b"\x80" + b"\x40\x10\xfe\x7f\xea",  # XZERO VAL XZERO
    b"HYLL\x01" + b"\x05" * 10 + b"\x00",                    # cached count with no registers
]


def bitmap_hll_atomic_keys(argv):
    """The keys of BITOP, PFCOUNT and PFMERGE with a valid argument count (they must run on one
    node), or None for other commands and wrong-arity forms."""
    name = argv[0].lower()
    if name == b"bitop":
        return argv[2:] if len(argv) >= 4 else None
    if name in (b"pfcount", b"pfmerge"):
        return argv[1:] if len(argv) >= 2 else None
    return None


class BitmapHllGenMixin:
    """Generators of bitmap and HyperLogLog commands; expects self.r and self.key()."""

    def bit_key(self):
        return self.r.choice(BIT_KEYS * 4 + HLL_KEYS + [self.key(), b"l1", b"h1", b"n1"])

    def hll_key(self):
        return self.r.choice(HLL_KEYS * 5 + BIT_KEYS + [self.key(), b"s1", b"k1"])

    def pick(self, good, bad, p_bad=0.05):
        return self.r.choice(bad) if self.r.random() < p_bad else self.r.choice(good)

    def bitmap_hll_sweep(self):
        """COMMAND INFO and DOCS of every bitmap and HyperLogLog command, and PFSELFTEST once."""
        names = [n.encode() for n in BITMAP_HLL_ARITY]
        out = [([b"COMMAND", b"INFO"] + names, "exact")]
        out += [([b"COMMAND", b"DOCS", n], "exact") for n in names]
        out += [([b"PFSELFTEST"], "exact")]
        return out

    def range_args(self, with_end_optional):
        r = self.r
        args = []
        n = r.choice([0, 1, 2, 2, 3, 3, 4] if with_end_optional else [0, 2, 2, 3, 3, 1, 4])
        if n >= 1:
            args.append(self.pick(RANGE_INTS, BAD_RANGE))
        if n >= 2:
            args.append(self.pick(RANGE_INTS, BAD_RANGE))
        if n >= 3:
            args.append(self.pick(UNITS, BAD_UNITS, 0.1))
        if n >= 4:
            args.append(b"extra")
        return args

    def bitfield_ops(self, readonly):
        r = self.r
        ops = []
        for _ in range(r.choice([0, 1, 1, 2, 3, 4])):
            kind = r.choice([b"GET", b"GET", b"SET", b"INCRBY", b"OVERFLOW", b"get", b"incrby"])
            if readonly and r.random() < 0.8:
                kind = r.choice([b"GET", b"get"])
            if kind.upper() == b"OVERFLOW":
                ops += [kind, self.pick(OVERFLOWS, [b"BAD", b""], 0.05)]
                continue
            op = [kind, self.pick(TYPES, BAD_TYPES), self.pick(FIELD_OFFSETS, BAD_FIELD_OFFSETS)]
            if kind.upper() != b"GET":
                op.append(self.pick(FIELD_VALUES, [b"x", b"", b"1.5"]))
            if r.random() < 0.03:
                op = op[:-1]  # too few arguments: a syntax error
            ops += op
        if r.random() < 0.03:
            ops.append(r.choice([b"FOO", b"GET", b"OVERFLOW"]))
        return ops

    def gen_bitmap(self):
        r = self.r
        k = self.bit_key()
        c = r.choice(["setbit", "setbit", "setbit", "getbit", "bitcount", "bitcount", "bitpos",
                      "bitpos", "bitop", "bitfield", "bitfield", "bitfield_ro", "string"])
        if c == "setbit":
            return [([b"SETBIT", k, self.pick(OFFSETS[:-2] * 3 + OFFSETS[-2:], BAD_OFFSETS),
                      self.pick(BIT_VALUES[:4], BIT_VALUES[4:], 0.08)], "exact")]
        if c == "getbit":
            return [([b"GETBIT", k, self.pick(OFFSETS, BAD_OFFSETS)], "exact")]
        if c == "bitcount":
            return [([b"BITCOUNT", k] + self.range_args(False), "exact")]
        if c == "bitpos":
            bit = self.pick([b"0", b"1"], [b"2", b"-1", b"x", b""], 0.06)
            return [([b"BITPOS", k, bit] + self.range_args(True), "exact")]
        if c == "bitop":
            op = self.pick(OPS, BAD_OPS, 0.05)
            n = 1 if op.upper() == b"NOT" and r.random() < 0.85 else r.randint(1, 3)
            sources = [self.bit_key() for _ in range(n)]
            return [([b"BITOP", op, r.choice(BIT_KEYS + [k])] + sources, "exact")]
        if c in ("bitfield", "bitfield_ro"):
            return [([c.upper().encode(), k] + self.bitfield_ops(c == "bitfield_ro"), "exact")]
        return [(r.choice([[b"GET", k], [b"STRLEN", k], [b"OBJECT", b"ENCODING", k],
                           [b"SETRANGE", k, r.choice([b"0", b"3", b"20"]), b"\x81\x00\xff"],
                           [b"APPEND", k, b"\x0f"], [b"SET", k, r.choice([b"123", b"foobar",
                                                                         b"\xff\xf0\x00"])]]),
                 "exact")]

    def hll_elements(self, n):
        r = self.r
        return [r.choice(ELEMENTS) if r.random() < 0.2 else b"e%d" % r.randint(0, 3000)
                for _ in range(n)]

    def gen_hll(self):
        r = self.r
        k = self.hll_key()
        c = r.choice(["pfadd", "pfadd", "pfadd", "pfcount", "pfcount", "pfmerge", "get", "get",
                      "pfdebug", "damage", "crafted"])
        if c == "pfadd":
            return [([b"PFADD", k] + self.hll_elements(r.choice([0, 1, 1, 2, 5, 20])), "exact"),
                    ([b"GET", k], "exact")]
        if c == "pfcount":
            keys = [k] + [self.hll_key() for _ in range(r.choice([0, 0, 1, 2]))]
            return [([b"PFCOUNT"] + keys, "exact"), ([b"GET", k], "exact")]
        if c == "pfmerge":
            keys = [self.hll_key() for _ in range(r.choice([0, 1, 1, 2]))]
            return [([b"PFMERGE", k] + keys, "exact"), ([b"GET", k], "exact"),
                    ([b"PFCOUNT", k], "exact")]
        if c == "get":
            return [(r.choice([[b"GET", k], [b"STRLEN", k], [b"OBJECT", b"ENCODING", k]]),
                     "exact")]
        if c == "pfdebug":
            sub = r.choice([b"GETREG", b"DECODE", b"ENCODING", b"TODENSE", b"encoding",
                            b"decode", b"NOPE", b"get\x00reg", b"a\r\nb"])
            return [([b"PFDEBUG", sub, k], "exact"), ([b"GET", k], "exact")]
        if c == "damage":
            return [(r.choice([[b"APPEND", k, r.choice([b"\x00", b"\x80", b"x"])],
                               [b"SETRANGE", k, r.choice([b"4", b"15", b"16", b"17"]),
                                r.choice([b"\x00", b"\x01", b"\x7f", b"\xff"])]]), "exact"),
                    ([b"PFADD", k, b"a"], "exact"), ([b"PFCOUNT", k], "exact"),
                    ([b"GET", k], "exact")]
        return [([b"SET", k, r.choice(CRAFTED)], "exact"),
                ([r.choice([b"PFADD", b"PFCOUNT"]), k] + self.hll_elements(r.choice([0, 1, 3])),
                 "exact"),
                ([b"PFDEBUG", r.choice([b"ENCODING", b"DECODE", b"TODENSE"]), k], "exact"),
                ([b"GET", k], "exact")]

    def gen_hll_big(self):
        """Enough elements at once to turn a sketch dense (or grow it close to the limit)."""
        k = self.r.choice(HLL_KEYS)
        return [([b"PFADD", k] + self.hll_elements(self.r.choice([100, 300, 600])), "exact"),
                ([b"PFCOUNT", k], "exact"), ([b"GET", k], "exact"),
                ([b"PFDEBUG", b"ENCODING", k], "exact")]
