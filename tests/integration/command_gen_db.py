"""Numbered databases for the differential test's generator (mixed into CommandGen).

SELECT, MOVE, SWAPDB, COPY ... DB and FLUSHDB with good and bad indexes (out of range, not
integers, past int's range), and scenarios that write keys of every type in several databases,
move and copy them between databases, swap databases and read them back (GET, TYPE, TTL, DBSIZE,
KEYS, EXISTS) from each. Requests leave the connection in whatever database they selected, so the
commands drawn after them run there too: the run covers several databases, not only 0.

In a cluster only database 0 exists to clients (as in Redis Cluster): cluster_db_error() gives
the error a cluster answers instead of redis's reply, and the request is not sent to redis.
"""

DB_ARITY = {"move": 3, "swapdb": 3}

DB_INDEXES = [b"0", b"1", b"2", b"3", b"15"]
BAD_DB_INDEXES = [b"16", b"-1", b"x", b"", b"1.5", b"99999999999", b"-99999999999"]


def _int32(arg):
    """The int Redis's getIntFromObject reads from arg, or None."""
    try:
        text = arg.decode()
    except UnicodeDecodeError:
        return None
    if not text or text.strip() != text or text.startswith("+") or (
            len(text) > 1 and text.lstrip("-").startswith("0")):
        return None
    try:
        v = int(text)
    except ValueError:
        return None
    return v if -2**31 <= v < 2**31 else None


def cluster_db_error(argv):
    """The error reply (bytes) a ringkv cluster gives for argv where redis-server, with 16
    databases, answers otherwise; None when both answer alike."""
    name = argv[0].lower()
    if name == b"select" and len(argv) == 2:
        v = _int32(argv[1])
        return b"-ERR SELECT is not allowed in cluster mode\r\n" if v not in (None, 0) else None
    if name == b"move" and len(argv) == 3:
        return b"-ERR MOVE is not allowed in cluster mode\r\n"
    if name == b"swapdb" and len(argv) == 3:
        return b"-ERR SWAPDB is not allowed in cluster mode\r\n"
    if name == b"copy" and len(argv) >= 3:
        dbid = 0
        i = 3
        while i < len(argv):
            opt = argv[i].lower()
            if opt == b"replace":
                i += 1
            elif opt == b"db" and i + 1 < len(argv):
                v = _int32(argv[i + 1])
                if v is None or not 0 <= v < 16:
                    return None  # both report the bad index
                dbid = v
                i += 2
            else:
                return None  # both report the syntax error
        if dbid != 0:
            return b"-ERR Copying to another database is not allowed in cluster mode\r\n"
    return None


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
