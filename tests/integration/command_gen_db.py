"""Numbered databases for the differential test's generator (mixed into CommandGen).

SELECT, MOVE, SWAPDB, COPY ... DB and FLUSHDB with good and bad indexes (out of range, not
integers, past int's range), and scenarios that write keys of every type in several databases,
move and copy them between databases, swap databases and read them back (GET, TYPE, TTL, DBSIZE,
KEYS, EXISTS) from each. Requests leave the connection in whatever database they selected, so the
commands drawn after them run there too: the run covers several databases, not only 0.

A cluster answers all of them like one redis-server: the client's database travels with every
relayed, split and fanned-out command (SWAPDB runs on every node).
"""

DB_ARITY = {"move": 3, "swapdb": 3}

DB_INDEXES = [b"0", b"1", b"2", b"3", b"15"]
BAD_DB_INDEXES = [b"16", b"-1", b"x", b"", b"1.5", b"99999999999", b"-99999999999"]


class DatabasesGenMixin:
    def db_index(self):
        r = self.r
        return r.choice(DB_INDEXES) if r.random() < 0.85 else r.choice(BAD_DB_INDEXES)

    def db_write(self, k):
        """A write of a random type to k (replacing whatever is there)."""
        r = self.r
        return r.choice([
            [b"SET", k, self.value()],
            [b"SET", k, self.value(), b"PX", self.rel_ms()],
            [b"RPUSH", k, b"a", b"b", b"c"],
            [b"SADD", k, b"m1", b"m2"],
            [b"HSET", k, b"f", b"v"],
            [b"ZADD", k, b"1", b"z1", b"2", b"z2"],
            [b"INCR", k],
        ])

    def db_reads(self, k):
        return [([b"EXISTS", k], "exact"), ([b"TYPE", k], "exact"), ([b"PTTL", k], ("tol", 50)),
                ([b"DBSIZE"], "exact")]

    def gen_databases(self):
        r = self.r
        c = r.choice(["select", "move", "swapdb", "copy", "flushdb", "scenario", "scenario"])
        k = self.key()
        if c == "select":
            return [([b"SELECT", self.db_index()], "exact")]
        if c == "move":
            return [([b"MOVE", k, self.db_index()], "exact")] + self.db_reads(k)
        if c == "swapdb":
            return [([b"SWAPDB", self.db_index(), self.db_index()], "exact"), ([b"DBSIZE"], "exact")]
        if c == "copy":
            argv = [b"COPY", k, self.key(), b"DB", self.db_index()]
            if r.random() < 0.4:
                argv.append(b"REPLACE")
            return [(argv, "exact")]
        if c == "flushdb":
            return [([b"FLUSHDB"] + r.choice([[], [b"ASYNC"], [b"SYNC"]]), "exact"),
                    ([b"DBSIZE"], "exact")]
        a, b = r.sample(DB_INDEXES, 2)
        out = [([b"SELECT", a], "exact"), (self.db_write(k), "exact"),
               ([b"MOVE", k, b], "exact"), ([b"MOVE", k, b], "exact")]
        out += self.db_reads(k)
        out += [([b"SELECT", b], "exact")] + self.db_reads(k)
        out += [([b"COPY", k, k, b"DB", a], "exact"), ([b"KEYS", b"*"], "unordered"),
                ([b"SWAPDB", a, b], "exact")] + self.db_reads(k)
        out += [([b"SELECT", a], "exact")] + self.db_reads(k)
        return out
