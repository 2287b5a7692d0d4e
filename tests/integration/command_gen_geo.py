"""Geo commands for the differential test's generator (mixed into CommandGen).

Points are drawn around a few centres (and at the edges of the storable range, at the poles'
limits and across the antimeridian) so that GEORADIUS/GEOSEARCH by circle and by box find
something, at radii from 0 to larger than the earth (where Redis's neighbour boxes coincide);
every option, order, COUNT [ANY], WITHCOORD/WITHDIST/WITHHASH and STORE/STOREDIST form is drawn,
with bad numbers, units (upper case and past a NUL byte too), negative sizes and conflicting
options, against missing keys, wrong types and plain sorted sets whose scores are not geohashes.
Stored results are read back with ZRANGE WITHSCORES. Replies compare exactly, members at equal
distances included (some edge points coincide): ringkv sorts as Redis does, with glibc's stable
merge sort for full results and Redis's own partial quicksort under COUNT.
"""

GEO_ARITY = {
    "geoadd": -5, "geodist": -4, "geohash": -2, "geopos": -2, "georadius": -6,
    "georadius_ro": -6, "georadiusbymember": -5, "georadiusbymember_ro": -5, "geosearch": -7,
    "geosearchstore": -8,
}

GEO_KEYS = [b"g1", b"g2", b"g3"]
GEO_STORE_KEYS = [b"gs1", b"gs2"]
CENTRES = [(13.36, 38.11), (15.08, 37.50), (-0.12, 51.50), (139.69, 35.68), (-73.98, 40.75),
           (179.99, 0.5), (-179.99, -0.5), (0, 84.9), (10, -84.9), (0, 0)]
EDGE_POINTS = [(b"180", b"85.05112878"), (b"-180", b"-85.05112878"), (b"0", b"0"),
               (b"-180", b"0"), (b"180", b"-85"), (b"1e-300", b"-0")]
BAD_POINTS = [(b"180.0001", b"0"), (b"0", b"85.06"), (b"-200", b"100"), (b"x", b"0"),
              (b"0", b""), (b"nan", b"0"), (b"inf", b"0"), (b" 1", b"0"), (b"1e400", b"0")]
UNITS = [b"m", b"km", b"ft", b"mi", b"M", b"KM", b"Km", b"MI", b"km\x00x"]
BAD_UNITS = [b"meters", b"", b"k", b"x"]
RADII = [b"0", b"1", b"50", b"100", b"300", b"1000", b"5000", b"20000", b"0.5", b"1e-3",
         b"100000000", b"inf"]
BAD_RADII = [b"-1", b"x", b"", b"nan", b"-0.5"]
COUNTS = [b"1", b"2", b"3", b"5", b"100"]
BAD_COUNTS = [b"0", b"-1", b"x", b""]
SPECIAL_MEMBERS = [b"", b"\x00\xff", "место".encode(), b"a" * 70]


def geo_atomic_keys(argv):
    """The keys of GEOSEARCHSTORE and of GEORADIUS[BYMEMBER] with STORE/STOREDIST (they must
    run on one node), or None for other commands and malformed forms. For GEORADIUS those are
    what Redis Cluster routes by: the key specs' (the source, the argument after the first STORE
    and after the first STOREDIST, searched from the options on) and the key the command stores
    into (after the last STORE or STOREDIST)."""
    name = argv[0].lower()
    if name == b"geosearchstore":
        return argv[1:3] if len(argv) >= 8 else None
    if name in (b"georadius", b"georadiusbymember"):
        keys = [argv[1]]
        start = 6 if name == b"georadius" else 5
        for keyword in (b"store", b"storedist"):
            at = next((i for i in range(start, len(argv)) if argv[i].lower() == keyword), None)
            if at is not None and at + 1 < len(argv):
                keys.append(argv[at + 1])
        stored = None
        i = 5
        while i < len(argv):
            if argv[i].lower() in (b"store", b"storedist") and i + 1 < len(argv):
                stored = argv[i + 1]
                i += 1
            i += 1
        if stored is not None:
            keys.append(stored)
        return keys if len(keys) > 1 else None
    return None


class GeoGenMixin:
    """Generators of geo commands; expects self.r (random.Random) and self.key()."""

    def geo_key(self, searchable=False):
        r = self.r
        if searchable:
            return r.choice(GEO_KEYS * 6 + [b"gmissing", b"s1", b"k1"])
        return r.choice(GEO_KEYS * 5 + GEO_STORE_KEYS + [b"z1", b"z2", self.key(), b"s1", b"l1"])

    def geo_member(self):
        r = self.r
        if r.random() < 0.05:
            return r.choice(SPECIAL_MEMBERS)
        return b"p%d" % r.randint(0, 40)

    def geo_point(self):
        r = self.r
        x = r.random()
        if x < 0.04:
            return r.choice(BAD_POINTS)
        if x < 0.1:
            return r.choice(EDGE_POINTS)
        lon, lat = r.choice(CENTRES)
        lon = max(-180.0, min(180.0, lon + r.uniform(-3, 3)))
        lat = max(-85.05, min(85.05, lat + r.uniform(-2, 2)))
        return (b"%.6f" % lon, b"%.6f" % lat)

    def geo_pick(self, good, bad, p_bad=0.04):
        return self.r.choice(bad) if self.r.random() < p_bad else self.r.choice(good)

    def geo_radius(self):
        return [self.geo_pick(RADII, BAD_RADII), self.geo_pick(UNITS, BAD_UNITS)]

    def geo_options(self, search, store):
        """The optional arguments of GEORADIUS (search=False) or GEOSEARCH, shuffled."""
        r = self.r
        opts = []
        if not store:
            for w in (b"WITHCOORD", b"WITHDIST", b"WITHHASH"):
                if r.random() < 0.4:
                    opts.append([r.choice([w, w.lower()])])
        elif r.random() < 0.03:
            opts.append([b"WITHDIST"])
        if r.random() < 0.5:
            count = [b"COUNT", self.geo_pick(COUNTS, BAD_COUNTS)]
            if r.random() < 0.3:
                count.append(b"ANY")
            opts.append(count)
        elif r.random() < 0.03:
            opts.append([b"ANY"])
        if r.random() < 0.5:
            opts.append([r.choice([b"ASC", b"DESC", b"asc", b"desc"])])
        if r.random() < 0.02:
            opts.append([r.choice([b"FOO", b"COUNT", b"STORE"])])
        r.shuffle(opts)
        return [a for o in opts for a in o]

    def geo_center_args(self):
        r = self.r
        x = r.random()
        if x < 0.45:
            return [b"FROMMEMBER", self.geo_member()]
        if x < 0.95:
            return [b"FROMLONLAT", *self.geo_point()]
        return r.choice([[], [b"FROMMEMBER"], [b"FROMLONLAT", b"1"],
                         [b"FROMMEMBER", b"p1", b"FROMLONLAT", b"1", b"2"]])

    def geo_shape_args(self):
        r = self.r
        x = r.random()
        if x < 0.5:
            return [b"BYRADIUS"] + self.geo_radius()
        if x < 0.95:
            return [b"BYBOX", self.geo_pick(RADII, BAD_RADII), self.geo_pick(RADII, BAD_RADII),
                    self.geo_pick(UNITS, BAD_UNITS)]
        return r.choice([[], [b"BYBOX", b"1", b"1"], [b"BYRADIUS", b"1", b"km", b"BYBOX", b"1",
                                                        b"1", b"km"]])

    def geo_sweep(self):
        """COMMAND INFO and DOCS of every geo command and of the other commands of Redis 7.0
        added with them (LCS, the sorted-set ones, sharded pub/sub), and the sharded pub/sub
        commands a plain connection can compare (no subscribers anywhere)."""
        names = [n.encode() for n in GEO_ARITY]
        more = [b"lcs", b"zrangestore", b"zintercard", b"zmpop", b"bzmpop", b"ssubscribe",
                b"sunsubscribe", b"spublish", b"pubsub|shardchannels", b"pubsub|shardnumsub"]
        extra = ([([b"COMMAND", b"INFO"] + more, "exact")] +
                 [([b"COMMAND", b"DOCS", n], "exact") for n in more] +
                 [([b"SPUBLISH", b"ch", b"msg"], "exact"),
                  ([b"SPUBLISH", b"ch"], "exact"),
                  ([b"PUBSUB", b"SHARDCHANNELS"], "exact"),
                  ([b"PUBSUB", b"SHARDCHANNELS", b"c*"], "exact"),
                  ([b"PUBSUB", b"SHARDCHANNELS", b"a", b"b"], "exact"),
                  ([b"PUBSUB", b"SHARDNUMSUB", b"a", b"b", b"a"], "exact"),
                  ([b"PUBSUB", b"SHARDNUMSUB"], "exact"),
                  ([b"PUBSUB", b"HELP"], "exact")])
        return ([([b"COMMAND", b"INFO"] + names, "exact")] +
                [([b"COMMAND", b"DOCS", n], "exact") for n in names] +
                [([b"COMMAND", b"GETKEYS", b"GEORADIUS", b"g1", b"0", b"0", b"1", b"km", b"STORE",
                   b"gs1", b"STOREDIST", b"gs2"], "exact")] + extra)

    def gen_geo_add(self):
        r = self.r
        k = self.geo_key()
        opts = []
        for w in (b"NX", b"XX", b"CH"):
            if r.random() < 0.12:
                opts.append(w)
        argv = [b"GEOADD", k] + opts
        for _ in range(r.choice([1, 1, 2, 3, 5])):
            argv += [*self.geo_point(), self.geo_member()]
        if r.random() < 0.03:
            argv = argv[:-1]
        return [(argv, "exact")]

    def gen_geo(self):
        r = self.r
        c = r.choice(["add", "add", "add", "pos", "hash", "dist", "radius", "radius", "bymember",
                      "search", "search", "search", "searchstore", "read"])
        if c == "add":
            return self.gen_geo_add()
        if c in ("pos", "hash"):
            members = [self.geo_member() for _ in range(r.choice([1, 1, 2, 4]))]
            name = b"GEOPOS" if c == "pos" else b"GEOHASH"
            return [([name, self.geo_key()] + members, "exact")]
        if c == "dist":
            argv = [b"GEODIST", self.geo_key(), self.geo_member(), self.geo_member()]
            if r.random() < 0.6:
                argv.append(self.geo_pick(UNITS, BAD_UNITS))
            if r.random() < 0.03:
                argv.append(b"km")
            return [(argv, "exact")]
        if c == "read":
            k = r.choice(GEO_KEYS + GEO_STORE_KEYS)
            return [(r.choice([[b"ZRANGE", k, b"0", b"-1", b"WITHSCORES"], [b"ZCARD", k],
                               [b"OBJECT", b"ENCODING", k], [b"TYPE", k]]), "exact")]
        # Plain sorted sets too: their scores decode to a few points, all at equal distances.
        src = self.geo_key(searchable=True) if r.random() < 0.9 else r.choice([b"z1", b"z2", b"z3"])
        if c in ("radius", "bymember"):
            ro = r.random() < 0.3
            if c == "radius":
                name = b"GEORADIUS_RO" if ro else b"GEORADIUS"
                argv = [name, src, *self.geo_point()] + self.geo_radius()
            else:
                name = b"GEORADIUSBYMEMBER_RO" if ro else b"GEORADIUSBYMEMBER"
                argv = [name, src, self.geo_member()] + self.geo_radius()
            store = not ro and r.random() < 0.25
            argv += self.geo_options(False, store)
            if store:
                dest = r.choice(GEO_STORE_KEYS + GEO_KEYS[:1])
                argv += [r.choice([b"STORE", b"STOREDIST", b"store"]), dest]
                return [(argv, "exact"), ([b"ZRANGE", dest, b"0", b"-1", b"WITHSCORES"], "exact")]
            return [(argv, "exact")]
        parts = [self.geo_center_args(), self.geo_shape_args()]
        r.shuffle(parts)
        if c == "search":
            argv = [b"GEOSEARCH", src] + parts[0] + parts[1]
            return [(argv + self.geo_options(True, False), "exact")]
        dest = r.choice(GEO_STORE_KEYS + GEO_KEYS[:1])
        argv = [b"GEOSEARCHSTORE", dest, src] + parts[0] + parts[1]
        argv += self.geo_options(True, True)
        if r.random() < 0.4:
            argv.append(r.choice([b"STOREDIST", b"storedist"]))
        return [(argv, "exact"), ([b"ZRANGE", dest, b"0", b"-1", b"WITHSCORES"], "exact")]

    def gen_geo_big(self):
        """Enough points in one key to turn it into a skiplist, then searches over it."""
        r = self.r
        k = r.choice(GEO_KEYS)
        argv = [b"GEOADD", k]
        for i in range(r.choice([100, 200])):
            argv += [*self.geo_point(), b"b%d" % i]
        out = [(argv, "exact"), ([b"OBJECT", b"ENCODING", k], "exact")]
        for _ in range(3):
            out.append(([b"GEOSEARCH", k, b"FROMLONLAT", *self.geo_point(), b"BYRADIUS",
                         r.choice(RADII[2:8]), b"km", b"WITHDIST", b"ASC",
                         b"COUNT", r.choice(COUNTS)], "exact"))
        return out
