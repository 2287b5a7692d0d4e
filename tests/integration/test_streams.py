"""Differential test of streams: the same commands go to ringkv and to a real redis-server 7.0 and
the replies must be byte-identical, except the times of XPENDING, XINFO CONSUMERS and XINFO
STREAM FULL (idle times and unix-ms times, within TIME_TOLERANCE; everything else in those
replies, types included, exact).

  1. COMMAND INFO and COMMAND DOCS of every stream command and subcommand.
  2. Fixed scenarios: every ID form and ID error of XADD, trimming (exact and approximate,
     node boundaries at 100 entries and 4096 bytes, LIMIT), ranges, XREAD, consumer groups
     (PEL, XCLAIM, XAUTOCLAIM with deleted entries, XINFO), XSETID, error texts, RESP3, stream
     commands called by scripts (BLOCK refused there), and TYPE/SCAN TYPE/COPY/RENAME/EXPIRE.
  3. XADD '*' (the clock's ID): the shape and order of generated IDs, the same on both.
  4. Seeded random commands (command_gen_stream.py), RESP2 then RESP3.
  5. DUMP/RESTORE: ringkv's payload of a stream without consumers equals redis's byte for byte;
     payloads cross both ways (ringkv -> redis, redis -> ringkv) with consumer groups and PELs.

With --cluster N the commands go round-robin through an N-node ringkv cluster (each node's
connection paired with its own redis connection) and must still answer byte for byte, except
XREAD and XREADGROUP over streams with different owners, which must get exactly the CROSSSLOT
error (redis is not asked); MULTI blocks are left out there (test_transactions_cluster.py covers
transactions through a cluster) and SCAN is not compared (its cursor names the node).

    /usr/bin/python3 test_streams.py --server build/ringkv-server [--seed N] [--count N]
                                     [--cluster N]
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import main_support  # noqa: E402
from command_gen_stream import STREAM_KEYS, StreamGen  # noqa: E402

TIME_TOLERANCE = 5000  # ms
CROSSSLOT = b"-CROSSSLOT Keys in request don't hash to the same node\r\n"

STREAM_COMMANDS = [b"xadd", b"xlen", b"xrange", b"xrevrange", b"xdel", b"xtrim", b"xread",
                   b"xreadgroup", b"xsetid", b"xgroup", b"xack", b"xpending", b"xclaim",
                   b"xautoclaim", b"xinfo"]
SUBCOMMANDS = [b"xgroup|create", b"xgroup|setid", b"xgroup|destroy", b"xgroup|createconsumer",
               b"xgroup|delconsumer", b"xgroup|help", b"xinfo|stream", b"xinfo|groups",
               b"xinfo|consumers", b"xinfo|help"]


def shape(raw, pos=0, out=None):
    """The reply's type characters and aggregate lengths in order ("*2$:"...), without values."""
    if out is None:
        out = []
    end = raw.index(b"\r\n", pos)
    t = chr(raw[pos])
    rest = raw[pos + 1:end]
    pos = end + 2
    if t in "$=!" and int(rest) >= 0:
        out.append(t)
        return pos + int(rest) + 2, out
    if t in "*~>%|" and int(rest) >= 0:
        n = int(rest) * (2 if t in "%|" else 1)
        out.append(t + rest.decode())
        for _ in range(n):
            pos, _ = shape(raw, pos, out)
        return pos, out
    out.append(t + (rest.decode() if t in "*$" else ""))
    return pos, out


def _pairs(v):
    """A map reply as a dict, whichever protocol (RESP2 flat list or RESP3 dict)."""
    if isinstance(v, dict):
        return v
    return {v[i]: v[i + 1] for i in range(0, len(v) - 1, 2)}


def _close(a, b):
    return isinstance(a, int) and isinstance(b, int) and abs(a - b) <= TIME_TOLERANCE


def _times_agree(mode, a, b):
    """Whether parsed replies a and b agree, the time fields of `mode` within the tolerance."""
    if isinstance(a, harness.Error) or isinstance(b, harness.Error) or a is None or b is None:
        return a == b
    if mode == "xpending":
        if len(a) != len(b):
            return False
        return all(x[:2] == y[:2] and x[3] == y[3] and _close(x[2], y[2]) for x, y in zip(a, b))
    if mode == "xinfo_consumers":
        if len(a) != len(b):
            return False
        for x, y in zip(a, b):
            px, py = _pairs(x), _pairs(y)
            if px[b"name"] != py[b"name"] or px[b"pending"] != py[b"pending"]:
                return False
            if not _close(px[b"idle"], py[b"idle"]):
                return False
        return True
    if mode == "xinfo_full":
        pa, pb = _pairs(a), _pairs(b)
        if {k: v for k, v in pa.items() if k != b"groups"} != \
                {k: v for k, v in pb.items() if k != b"groups"}:
            return False
        ga, gb = pa.get(b"groups"), pb.get(b"groups")
        if len(ga) != len(gb):
            return False
        for x, y in zip(ga, gb):
            px, py = _pairs(x), _pairs(y)
            for k in px:
                if k in (b"pending", b"consumers"):
                    continue
                if px[k] != py.get(k):
                    return False
            if len(px[b"pending"]) != len(py[b"pending"]):
                return False
            for e, f in zip(px[b"pending"], py[b"pending"]):
                if e[:2] != f[:2] or e[3] != f[3] or not _close(e[2], f[2]):
                    return False
            if len(px[b"consumers"]) != len(py[b"consumers"]):
                return False
            for c, d in zip(px[b"consumers"], py[b"consumers"]):
                pc, pd = _pairs(c), _pairs(d)
                if pc[b"name"] != pd[b"name"] or pc[b"pel-count"] != pd[b"pel-count"]:
                    return False
                if not _close(pc[b"seen-time"], pd[b"seen-time"]):
                    return False
                if len(pc[b"pending"]) != len(pd[b"pending"]):
                    return False
                for e, f in zip(pc[b"pending"], pd[b"pending"]):
                    if e[0] != f[0] or e[2] != f[2] or not _close(e[1], f[1]):
                        return False
        return True
    return False


XADD_TOO_LARGE = b"-ERR Elements are too large to be stored\r\n"
XADD_NOT_GREATER = (b"-ERR The ID specified in XADD is equal or smaller than the target stream "
                    b"top item\r\n")


def replies_agree(got, want, mode):
    if got == want:
        return True
    if mode == "exact":
        return False
    if shape(got)[1] != shape(want)[1]:
        return False
    return _times_agree(mode, harness.parse_reply(got), harness.parse_reply(want))


def show(argv):
    return repr([a if len(a) <= 60 else a[:40] + b"...(%d bytes)" % len(a) for a in argv])


def read_keys(argv):
    """The stream keys of an XREAD or XREADGROUP as Redis's xreadGetKeys finds them (the first
    half of what follows STREAMS, seen past the options it knows; none when malformed)."""
    i = 1
    while i < len(argv):
        opt = argv[i].upper()
        if opt in (b"BLOCK", b"COUNT"):
            i += 2
        elif opt == b"GROUP":
            i += 3
        elif opt == b"NOACK":
            i += 1
        elif opt == b"STREAMS":
            rest = argv[i + 1:]
            return rest[:len(rest) // 2] if rest and len(rest) % 2 == 0 else []
        else:
            return []
    return []


class Pair:
    """Connections to both servers (one per ringkv node, each with its own redis connection);
    run() sends a request through the next pair in turn and compares."""

    def __init__(self, report, ours_ports, redis_port, label):
        self.report = report
        self.nodes = [harness.RespClient(p) for p in ours_ports]
        self.redis = [harness.RespClient(redis_port) for _ in ours_ports]
        self.ours, self.theirs = self.nodes[0], self.redis[0]
        self.label = label
        self.count = 0
        self.mismatches = 0
        self.crossslot = 0
        self.owners = {}
        self.in_multi = False  # a transaction stays on its connection

    def both(self, *argv):
        """Sends argv to both; returns (ours, theirs) without comparing."""
        return self.ours.call(*argv), self.theirs.call(*argv)

    def owner(self, key):
        if key not in self.owners:
            self.owners[key] = self.ours.call("CLUSTER", "OWNER", key)
        return self.owners[key]

    def run(self, argv, mode="exact"):
        self.count += 1
        if not self.in_multi:
            i = self.count % len(self.nodes)
            self.ours, self.theirs = self.nodes[i], self.redis[i]
        name = argv[0].upper()
        if name == b"MULTI":
            self.in_multi = True
        elif name in (b"EXEC", b"DISCARD"):
            self.in_multi = False
        if len(self.nodes) > 1 and name == b"SCAN":
            return None  # a cluster's SCAN cursor names the node: not comparable
        if len(self.nodes) > 1 and argv[0].upper() in (b"XREAD", b"XREADGROUP") and \
                len({self.owner(k) for k in read_keys(argv)}) > 1:
            got = self.ours.call(*argv)
            self.crossslot += 1
            self.report.check(got == CROSSSLOT, "%s #%d %s is CROSSSLOT" % (
                self.label, self.count, show(argv)[:300]), repr(got[:300]))
            return got
        got, want = self.both(*argv)
        ok = replies_agree(got, want, mode) or self.seq_exhausted_xadd(argv, got, want)
        at = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                  min(len(got), len(want)))
        self.report.check(ok, "%s #%d %s" % (self.label, self.count, show(argv)[:300]),
                          "ringkv %r\n      redis  %r\n      first difference at byte %d: %r / %r"
                          % (got[:300], want[:300], at, got[max(at - 80, 0):at + 120],
                             want[max(at - 80, 0):at + 120]))
        if not ok:
            self.mismatches += 1
            # One difference, reported once: start the keys over on both.
            self.both("DEL", *STREAM_KEYS)
        return got

    def seq_exhausted_xadd(self, argv, got, want):
        """True for `XADD key ... <ms>-* ...` on a stream whose last ID is <ms>-(2^64-1), where
        ringkv answers "Elements are too large to be stored" and redis-server "The ID specified
        in XADD is equal or smaller than the target stream top item". redis-server 7.0.15's
        streamAppendItem fails there without setting errno, and xaddCommand picks its text from
        whatever errno last held (EDOM from an earlier failed XADD gives the second text), so
        either is Redis's answer; ringkv gives the one a fresh errno gives."""
        if argv[0].upper() != b"XADD" or got != XADD_TOO_LARGE or want != XADD_NOT_GREATER:
            return False
        auto = [a for a in argv[2:] if a.endswith(b"-*") and a[:-2].isdigit()]
        if not auto:
            return False
        info = harness.parse_reply(self.theirs.call("XINFO", "STREAM", argv[1]))
        if not isinstance(info, list):
            return False
        fields = dict(zip(info[::2], info[1::2]))
        return fields.get(b"last-generated-id") == auto[-1][:-2] + b"-18446744073709551615"

    def close(self):
        for c in self.nodes + self.redis:
            c.close()


def fixed_scenarios():
    """Deterministic command lists, each run from an empty keyspace."""
    big = b"v" * 1000
    s = []
    # A tombstone above a later entry (XDEL of the top entry, then XSETID lower): lookups,
    # ranges and DUMP pass it over as Redis's iterators do.
    s.append([["XADD", "s", "262-4", "h", ""], ["XADD", "s", "18446744073709551615-1", "g", "-1"],
              ["XDEL", "s", "18446744073709551615-1"], ["XSETID", "s", "266-7"],
              ["XADD", "s", "324-*", "h", "-0"], ["XADD", "s", "325-0", "h", "1"],
              ["XRANGE", "s", "300", "+"], ["XREVRANGE", "s", "+", "-"], ["DUMP", "s"],
              ["XINFO", "STREAM", "s"], ["XSETID", "s", "300-0"], ["XDEL", "s", "324-0"],
              ["XRANGE", "s", "-", "+"], ["XDEL", "s", "324-0"], ["DUMP", "s"]])
    # IDs and their errors.
    s.append([["XADD", "s", "0-0", "f", "v"], ["XADD", "s", "0", "f", "v"],
              ["XADD", "s", "0-1", "f", "v"], ["XADD", "s", "0-1", "f", "v"],
              ["XADD", "s", "0-*", "f", "v"], ["XADD", "s", "5-*", "f", "v"],
              ["XADD", "s", "5-*", "f", "v"], ["XADD", "s", "5", "f", "v"],
              ["XADD", "s", "4-*", "f", "v"], ["XADD", "s", "7-3", "a", "1", "b", "2"],
              ["XADD", "s", "-", "f", "v"], ["XADD", "s", "+", "f", "v"],
              ["XADD", "s", "1-x", "f", "v"], ["XADD", "s", " 8-1", "f", "v"],
              ["XADD", "s", "+9-1", "f", "v"], ["XADD", "s", "010-1", "f", "v"],
              ["XADD", "s", "11-1", "f"], ["XADD", "s", "12-1"], ["XADD", "s", "12-1", "f", "v", "g"],
              ["XADD", "s", "18446744073709551615-18446744073709551614", "f", "v"],
              ["XADD", "s", "18446744073709551615-*", "f", "v"],
              ["XADD", "s", "18446744073709551615-*", "f", "v"], ["XADD", "s", "*", "f", "v"],
              ["XADD", "s9", "2-18446744073709551615", "f", "v"], ["XADD", "s9", "2-*", "f", "v"],
              ["XADD", "s9", "1-*", "f", "v"],
              ["XLEN", "s"], ["XRANGE", "s", "-", "+"], ["XREVRANGE", "s", "+", "-", "COUNT", "2"],
              ["XADD", "nomk", "NOMKSTREAM", "1-1", "f", "v"], ["EXISTS", "nomk"],
              ["XADD", "s2", "NOMKSTREAM", "MAXLEN", "1", "1-1", "f", "v"],
              ["SET", "str", "x"], ["XADD", "str", "1-1", "f", "v"], ["XLEN", "str"],
              ["XRANGE", "str", "-", "+"], ["TYPE", "s"], ["OBJECT", "ENCODING", "s"]])
    # Trimming at node boundaries (100 entries, 4096 bytes).
    fill = [["XADD", "t", "%d-1" % i, "f", "v%d" % i] for i in range(1, 251)]
    s.append(fill + [["XINFO", "STREAM", "t"], ["XTRIM", "t", "MAXLEN", "~", "120"],
                     ["XLEN", "t"], ["XTRIM", "t", "MAXLEN", "~", "10"], ["XLEN", "t"],
                     ["XTRIM", "t", "MAXLEN", "=", "40"], ["XLEN", "t"],
                     ["XRANGE", "t", "-", "+", "COUNT", "3"], ["XINFO", "STREAM", "t"],
                     ["XTRIM", "t", "MINID", "~", "230-1"], ["XTRIM", "t", "MINID", "230-1"],
                     ["XRANGE", "t", "-", "(231-1"], ["XTRIM", "t", "MAXLEN", "~", "0", "LIMIT", "5"],
                     ["XTRIM", "t", "MAXLEN", "0", "LIMIT", "5"], ["XTRIM", "t", "MAXLEN", "~", "0"],
                     ["XINFO", "STREAM", "t"], ["XLEN", "t"]])
    s.append([["XADD", "b", "%d-1" % i, "f", big] for i in range(1, 12)] +
             [["XINFO", "STREAM", "b"], ["XTRIM", "b", "MAXLEN", "~", "2"], ["XLEN", "b"],
              ["XADD", "b", "MAXLEN", "~", "1", "20-1", "f", big], ["XLEN", "b"],
              ["XADD", "b", "MINID", "=", "20-1", "21-1", "g", "w"], ["XRANGE", "b", "-", "+"],
              ["DUMP", "b"]])
    # Trim argument errors.
    s.append([["XADD", "e", "1-1", "f", "v"],
              ["XTRIM", "e", "MAXLEN", "-1"], ["XTRIM", "e", "MAXLEN", "x"],
              ["XTRIM", "e", "MAXLEN", "1", "LIMIT", "10"], ["XTRIM", "e", "LIMIT", "10"],
              ["XTRIM", "e", "MAXLEN", "~", "1", "LIMIT", "-1"], ["XTRIM", "e", "FOO", "1"],
              ["XTRIM", "e", "MAXLEN", "1", "MINID", "1"], ["XTRIM", "e", "MINID", "-"],
              ["XTRIM", "nokey", "MAXLEN", "1"], ["XTRIM", "nokey", "FOO", "1"],
              ["XADD", "e", "MAXLEN", "1", "LIMIT", "5", "2-1", "f", "v"],
              ["XADD", "e", "MAXLEN", "~", "x", "2-1", "f", "v"],
              ["XADD", "e", "MAXLEN", "2-1", "f", "v"], ["XADD", "e", "MAXLEN"],
              ["XADD", "e", "LIMIT", "5", "*", "f", "v"],
              ["XADD", "e", "MINID", "x", "2-1", "f", "v"], ["XLEN", "e"]])
    # Ranges.
    s.append([["XADD", "r", "1-1", "a", "1"], ["XADD", "r", "1-2", "b", "2"],
              ["XADD", "r", "2-0", "c", "3"], ["XADD", "r", "3-5", "d", "4"],
              ["XRANGE", "r", "1", "2"], ["XRANGE", "r", "(1-1", "(3-5"],
              ["XRANGE", "r", "(1", "+"], ["XRANGE", "r", "-", "(2"],
              ["XRANGE", "r", "(-", "+"], ["XRANGE", "r", "-", "(+"],
              ["XRANGE", "r", "(18446744073709551615-18446744073709551615", "+"],
              ["XRANGE", "r", "-", "(0-0"], ["XRANGE", "r", "-", "+", "COUNT", "0"],
              ["XRANGE", "r", "-", "+", "COUNT", "-1"], ["XRANGE", "r", "-", "+", "COUNT"],
              ["XRANGE", "r", "-", "+", "LIMIT", "1"], ["XRANGE", "nokey", "-", "+", "COUNT", "0"],
              ["XRANGE", "r", "x", "+"], ["XREVRANGE", "r", "3", "1-2"],
              ["XREVRANGE", "r", "(3-5", "(1-1", "COUNT", "1"], ["XDEL", "r", "1-2", "9-9"],
              ["XDEL", "r", "x"], ["XDEL", "nokey", "x"], ["XRANGE", "r", "-", "+"],
              ["XINFO", "STREAM", "r"], ["XDEL", "r", "1-1", "2-0", "3-5"], ["XLEN", "r"],
              ["EXISTS", "r"], ["XINFO", "STREAM", "r"], ["XINFO", "STREAM", "r", "FULL"]])
    # XREAD.
    s.append([["XADD", "a", "1-1", "f", "v"], ["XADD", "a", "2-1", "f", "w"],
              ["XADD", "c", "5-1", "x", "y"], ["XREAD", "STREAMS", "a", "c", "0", "0"],
              ["XREAD", "COUNT", "1", "STREAMS", "a", "c", "1-1", "$"],
              ["XREAD", "STREAMS", "a", "nokey", "2-1", "0"], ["XREAD", "STREAMS", "a"],
              ["XREAD", "STREAMS", "a", "b", "0"], ["XREAD", "STREAMS", "a", ">"],
              ["XREAD", "GROUP", "g", "c", "STREAMS", "a", "0"],
              ["XREAD", "NOACK", "STREAMS", "a", "0"], ["XREAD", "COUNT", "x", "STREAMS", "a", "0"],
              ["XREAD", "BLOCK", "-1", "STREAMS", "a", "0"], ["XREAD", "BLOCK", "x", "STREAMS", "a", "0"],
              ["XREAD", "FOO", "STREAMS", "a", "0"], ["XREAD", "COUNT", "1", "a", "0"],
              ["XREAD", "BLOCK", "10", "STREAMS", "a", "0"], ["SET", "str", "1"],
              ["XREAD", "STREAMS", "a", "str", "0", "0"], ["XREAD", "STREAMS", "a", "a", "0", "1-1"],
              ["MULTI"], ["XREAD", "BLOCK", "0", "STREAMS", "a", "$"], ["EXEC"]])
    # Consumer groups.
    s.append([["XGROUP", "CREATE", "q", "g", "$"], ["XGROUP", "CREATE", "q", "g", "$", "MKSTREAM"],
              ["XGROUP", "CREATE", "q", "g", "$", "MKSTREAM"], ["XINFO", "GROUPS", "q"],
              ["XADD", "q", "1-1", "f", "1"], ["XADD", "q", "2-1", "f", "2"],
              ["XADD", "q", "3-1", "f", "3"], ["XADD", "q", "4-1", "f", "4"],
              ["XGROUP", "CREATE", "q", "h", "0", "ENTRIESREAD", "0"],
              ["XGROUP", "CREATECONSUMER", "q", "g", "alice"],
              ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "q", ">"],
              ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "q", ">"],
              ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "q", ">"],
              ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "q", "0"],
              ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "q", "1-1"],
              ["XREADGROUP", "GROUP", "h", "carol", "NOACK", "COUNT", "3", "STREAMS", "q", ">"],
              ["XINFO", "GROUPS", "q"], ["XPENDING", "q", "g"], ["XPENDING", "q", "h"],
              ["XPENDING", "q", "g", "-", "+", "10", "bob"], ["XPENDING", "q", "g", "-", "+", "0"],
              ["XPENDING", "q", "nog"], ["XPENDING", "nokey", "g"], ["XPENDING", "q", "g", "-"],
              ["XPENDING", "q", "g", "IDLE", "x", "-", "+", "1"],
              ["XPENDING", "q", "g", "IDLE", "10", "-", "+"],
              ["XPENDING", "q", "g", "(1-1", "(4-1", "x"],
              ["XACK", "q", "g", "1-1", "9-9"], ["XACK", "q", "g", "x"], ["XACK", "q", "nog", "x"],
              ["XDEL", "q", "3-1"],
              ["XCLAIM", "q", "g", "dave", "0", "2-1", "3-1", "9-9", "JUSTID"],
              ["XCLAIM", "q", "g", "dave", "0", "4-1", "RETRYCOUNT", "7"],
              ["XCLAIM", "q", "g", "erin", "0", "1-1", "FORCE", "JUSTID"],
              ["XCLAIM", "q", "g", "erin", "0", "4-1", "LASTID", "10-0", "BOGUS"],
              ["XCLAIM", "q", "g", "erin", "x", "4-1"], ["XCLAIM", "q", "nog", "erin", "0", "4-1"],
              ["XCLAIM", "q", "g", "erin", "0", "4-1", "IDLE", "x"],
              ["XCLAIM", "q", "g", "erin", "3600000", "4-1"],
              ["XADD", "q", "5-1", "f", "5"], ["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "q", ">"],
              ["XDEL", "q", "5-1"],
              ["XAUTOCLAIM", "q", "g", "frank", "0", "0", "COUNT", "1"],
              ["XAUTOCLAIM", "q", "g", "frank", "0", "0", "JUSTID"],
              ["XAUTOCLAIM", "q", "g", "frank", "0", "0", "COUNT", "0"],
              ["XAUTOCLAIM", "q", "g", "frank", "x", "0"], ["XAUTOCLAIM", "q", "nog", "frank", "0", "0"],
              ["XAUTOCLAIM", "q", "g", "frank", "0", "(18446744073709551615-18446744073709551615"],
              ["XINFO", "CONSUMERS", "q", "g"], ["XINFO", "CONSUMERS", "q", "nog"],
              ["XGROUP", "DELCONSUMER", "q", "g", "frank"], ["XPENDING", "q", "g"],
              ["XGROUP", "SETID", "q", "g", "0", "ENTRIESREAD", "1"], ["XINFO", "GROUPS", "q"],
              ["XGROUP", "SETID", "q", "g", "$"], ["XINFO", "GROUPS", "q"],
              ["XGROUP", "DESTROY", "q", "h"], ["XGROUP", "DESTROY", "q", "h"],
              ["XREADGROUP", "GROUP", "nog", "x", "STREAMS", "q", ">"],
              ["XREADGROUP", "GROUP", "g", "x", "STREAMS", "q", "$"],
              ["XREADGROUP", "GROUP", "g", "x", "STREAMS", "nokey", ">"],
              ["XREADGROUP", "COUNT", "1", "STREAMS", "q", ">"],
              ["XREADGROUP", "GROUP", "g", "x", "STREAMS", "q"], ["XGROUP", "HELP"],
              ["XINFO", "HELP"], ["XINFO", "FOO", "q"], ["XINFO", "STREAM", "nokey"],
              ["XGROUP", "CREATE", "q", "g2", "0", "FOO"], ["XGROUP", "FOO", "q", "g"]])
    # XSETID and the 7.0 counters.
    s.append([["XADD", "z", "1-1", "f", "v"], ["XADD", "z", "2-1", "f", "v"],
              ["XDEL", "z", "2-1"], ["XSETID", "z", "1-0"], ["XSETID", "z", "2-0"],
              ["XSETID", "z", "3-0", "ENTRIESADDED", "0"], ["XSETID", "z", "3-0", "MAXDELETEDID", "4-0"],
              ["XSETID", "z", "5-0", "ENTRIESADDED", "10", "MAXDELETEDID", "4-0"],
              ["XSETID", "z", "5-0", "ENTRIESADDED", "-1"], ["XSETID", "z", "5-0", "FOO"],
              ["XSETID", "nokey", "5-0"], ["XSETID", "z", "x"], ["XINFO", "STREAM", "z"],
              ["XADD", "z", "5-0", "f", "v"], ["XADD", "z", "5-*", "f", "v"],
              ["XGROUP", "CREATE", "z", "g", "0"], ["XINFO", "GROUPS", "z"],
              ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "z", ">"],
              ["XINFO", "GROUPS", "z"], ["XDEL", "z", "1-1"], ["XINFO", "GROUPS", "z"],
              ["XINFO", "STREAM", "z", "FULL", "COUNT", "1"]])
    # Scripts, and the generic commands on a stream (keys with one hash tag, so that a cluster
    # runs COPY and RENAME on one node).
    s.append([["EVAL", "return redis.call('XADD', KEYS[1], '1-1', 'f', 'v')", "1", "{sc}"],
              ["EVAL", "return redis.call('XRANGE', KEYS[1], '-', '+')", "1", "{sc}"],
              ["EVAL", "return redis.call('XREAD', 'BLOCK', '0', 'STREAMS', KEYS[1], '$')", "1",
               "{sc}"],
              ["EVAL", "return redis.pcall('xreadgroup', 'GROUP', 'g', 'c', 'BLOCK', '0', "
               "'STREAMS', KEYS[1], '>')", "1", "{sc}"],
              ["EVAL", "return redis.call('XINFO', 'STREAM', KEYS[1])", "1", "{sc}"],
              ["EVAL", "return redis.pcall('XADD', KEYS[1], '0-0', 'f', 'v')", "1", "{sc}"],
              ["SET", "plain", "x"], ["SCAN", "0", "TYPE", "stream", "COUNT", "100"],
              ["TYPE", "{sc}"], ["OBJECT", "ENCODING", "{sc}"], ["COPY", "{sc}", "{sc}2"],
              ["XRANGE", "{sc}2", "-", "+"], ["RENAME", "{sc}2", "{sc}3"], ["XLEN", "{sc}3"],
              ["EXPIRE", "{sc}3", "100"], ["TTL", "{sc}3"], ["OBJECT", "FREQ", "{sc}"]])
    return s


def run_fixed(report, pair):
    for n, scenario in enumerate(fixed_scenarios()):
        pair.both("FLUSHALL")
        for argv in scenario:
            mode = "exact"
            name = argv[0].upper()
            if name == "XPENDING" and len(argv) > 3:
                mode = "xpending"
            elif name == "XINFO" and argv[1].upper() == "CONSUMERS":
                mode = "xinfo_consumers"
            elif name == "XINFO" and len(argv) > 3:
                mode = "xinfo_full"
            if name == "XADD" and "*" in argv:
                ours, theirs = pair.both(*argv)
                report.check(ours == theirs if theirs[:1] == b"-" else
                             re.fullmatch(rb"\$\d+\r\n\d+-\d+\r\n", ours) is not None and
                             shape(ours) == shape(theirs),
                             "scenario %d %s: an ID like redis's" % (n, argv), repr((ours, theirs)))
                continue
            pair.run([a.encode() if isinstance(a, str) else a for a in argv], mode)


def check_auto_ids(report, pair):
    """XADD '*': IDs from the clock, increasing, and the same shapes as redis's."""
    pair.both("DEL", "auto")
    ids = []
    for _ in range(5):
        ours, theirs = pair.both("XADD", "auto", "*", "f", "v")
        report.equal(shape(ours), shape(theirs), "XADD * reply shape")
        ids.append(tuple(int(x) for x in harness.parse_reply(ours).split(b"-")))
    report.check(ids == sorted(set(ids)), "XADD * IDs increase", repr(ids))
    ours, theirs = pair.both("XADD", "auto", "MAXLEN", "~", "2", "*", "f", "v")
    report.equal(shape(ours), shape(theirs), "XADD MAXLEN ~ * reply shape")
    pair.run([b"XADD", b"future", b"99999999999999-5", b"f", b"v"])
    pair.run([b"XADD", b"future", b"*", b"f", b"v"])
    pair.run([b"XRANGE", b"future", b"-", b"+"])


def check_command_docs(report, pair):
    # A container lists its subcommands in its dict's order, which differs from one redis
    # process to the next: containers are compared subcommand by subcommand.
    singles = [c for c in STREAM_COMMANDS if c not in (b"xgroup", b"xinfo")]
    pair.run([b"COMMAND", b"INFO"] + singles + SUBCOMMANDS)
    for name in singles + SUBCOMMANDS:
        pair.run([b"COMMAND", b"DOCS", name])
    for container in (b"xgroup", b"xinfo"):
        ours, theirs = pair.both(b"COMMAND", b"INFO", container)
        report.equal(sorted(shape(ours)[1]), sorted(shape(theirs)[1]),
                     "COMMAND INFO %r: same parts" % container)
    pair.run([b"COMMAND", b"GETKEYS", b"XREAD", b"COUNT", b"2", b"STREAMS", b"a", b"b", b"0", b"0"])
    pair.run([b"COMMAND", b"GETKEYS", b"XREADGROUP", b"GROUP", b"g", b"c", b"STREAMS", b"a",
              b">"])


def check_dump_restore(report, pair, rng):
    """DUMP payloads of streams: equal to redis's when the stream has no consumers (whose times
    differ); and each side's payload restored on the other reads back the same."""
    gen = StreamGen(rng)
    pair.both("FLUSHALL")
    for _ in range(600):
        for argv, _mode in gen.gen_xadd() + (gen.gen_xdel() if rng.random() < 0.2 else []) + \
                (gen.gen_xtrim() if rng.random() < 0.03 else []):
            pair.both(*argv)
    for key in STREAM_KEYS:
        pair.both("XGROUP", "CREATE", key, "grp", "0", "MKSTREAM")
        pair.run([b"DUMP", key])
    pair.both("DEL", "empty")
    pair.both("XADD", "empty", "5-5", "f", "v")
    pair.both("XDEL", "empty", "5-5")
    pair.run([b"DUMP", b"empty"])
    for key in STREAM_KEYS:
        pair.both("XREADGROUP", "GROUP", "grp", "c1", "COUNT", "3", "STREAMS", key, ">")
        pair.both("XREADGROUP", "GROUP", "grp", "c2", "COUNT", "2", "STREAMS", key, ">")
        pair.both("XGROUP", "CREATECONSUMER", key, "grp", "idle")
    for key in STREAM_KEYS + [b"empty"]:
        ours = harness.parse_reply(pair.ours.call("DUMP", key))
        theirs = harness.parse_reply(pair.theirs.call("DUMP", key))
        for label, payload in (("ringkv->redis", ours), ("redis->ringkv", theirs)):
            for client in (pair.ours, pair.theirs):
                reply = client.call("RESTORE", key + b":copy", "0", payload, "REPLACE")
                report.equal(reply, b"+OK\r\n", "RESTORE %s of %r (%s)" % (label, key, client))
            pair.run([b"XINFO", b"STREAM", key + b":copy", b"FULL", b"COUNT", b"0"], "xinfo_full")
            pair.run([b"XPENDING", key + b":copy", b"grp"])
            pair.run([b"XRANGE", key + b":copy", b"-", b"+"])
    for bad in (b"\x13\x01", b"\x13" + b"\x00" * 20):
        pair.run([b"RESTORE", b"bad", b"0", bad + b"\x0a\x00" + b"\x00" * 8])


def main(argv=None, name="test_streams"):
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--count", type=int, default=4000)
    p.add_argument("--cluster", type=int, default=0, metavar="N")
    args = p.parse_args(argv)
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report(name)
    ours, nodes = main_support.server_or_cluster(args.server, args.cluster, "streams")
    with ours, harness.start_oracle() as redis:
        ports = [n.port for n in nodes]
        pairs = []
        try:
            pair = Pair(report, ports, redis.port, "resp2")
            pairs.append(pair)
            check_command_docs(report, pair)
            run_fixed(report, pair)
            check_auto_ids(report, pair)
            pair.both("FLUSHALL")
            gen = StreamGen(rng, multi=not args.cluster)
            pair.both("SET", "xs", "string")
            pair.both("RPUSH", "xl", "a")
            for argv, mode in gen.setup():
                pair.run(argv, mode)
            done = 0
            while done < args.count:
                for argv, mode in gen.next():
                    gen.observe(argv, pair.run(argv, mode))
                    done += 1
            pair3 = Pair(report, ports, redis.port, "resp3")
            pairs.append(pair3)
            for c in pair3.nodes + pair3.redis:
                c.call("HELLO", "3")
            run_fixed(report, pair3)
            done = 0
            while done < args.count // 4:
                for argv, mode in gen.next():
                    gen.observe(argv, pair3.run(argv, mode))
                    done += 1
            check_dump_restore(report, pair, rng)
        except (OSError, ValueError) as e:
            report.check(False, "run aborted: %r" % e, "\n".join(n.log() for n in nodes))
        print("compared %d requests, %d differences, %d CROSSSLOT" % (
            sum(p.count for p in pairs), sum(p.mismatches for p in pairs),
            sum(p.crossslot for p in pairs)))
        for n in nodes:
            report.check(n.alive(), "%s still running" % n.name, n.log())
            harness.check_clean_exit(report, n)
    report.finish()


if __name__ == "__main__":
    main()
