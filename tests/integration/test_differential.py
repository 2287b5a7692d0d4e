"""Differential test: the same seeded random commands go to ringkv and to a real redis-server 7,
and the replies must be byte-identical (clock-dependent integers within a tolerance, hash-ordered
arrays as multisets). Covers RESP2 multibulk requests, RESP3 after HELLO 3, and inline requests.

    /usr/bin/python3 test_differential.py --server build/ringkv-server [--seed N] [--count N]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from command_gen import KEYS, CommandGen  # noqa: E402


def replies_agree(a, b, mode):
    """True when replies a and b count as equal under the comparison mode."""
    if a == b:
        return True
    if isinstance(mode, tuple) and mode[0] == "tol":
        if a[:1] == b[:1] == b":":
            return abs(int(a[1:-2]) - int(b[1:-2])) <= mode[1]
        return False
    if mode == "time":
        pa, pb = harness.parse_reply(a), harness.parse_reply(b)
        return (a[:1] == b[:1] and isinstance(pa, list) and isinstance(pb, list)
                and len(pa) == len(pb) == 2 and abs(int(pa[0]) - int(pb[0])) <= 1
                and 0 <= int(pa[1]) < 10**6)
    if mode == "unordered":
        pa, pb = harness.parse_reply(a), harness.parse_reply(b)
        if isinstance(pa, list) and isinstance(pb, list) and a[:1] == b[:1]:
            return sorted(pa) == sorted(pb)
    return False


def hello_masked(raw):
    """A HELLO reply with the client id (different per server) taken out, for comparison."""
    value = harness.parse_reply(raw)
    if isinstance(value, dict):
        value.pop(b"id", None)
    elif isinstance(value, list):
        value = [v for i, v in enumerate(value) if not (i % 2 == 1 and value[i - 1] == b"id")]
    return raw[:1], value


class Pair:
    """One connection to each server; run() sends a request to both and compares the replies."""

    def __init__(self, report, ringkv_port, redis_port, label):
        self.report = report
        self.ours = harness.RespClient(ringkv_port)
        self.theirs = harness.RespClient(redis_port)
        self.label = label
        self.mismatches = 0
        self.count = 0

    def run(self, request, mode, shown):
        self.count += 1
        self.ours.send(request)
        got = self.ours.read()
        self.theirs.send(request)
        want = self.theirs.read()
        ok = replies_agree(got, want, mode)
        self.report.check(
            ok,
            "%s #%d %s" % (self.label, self.count, shown[:300]),
            "ringkv %r\n      redis  %r" % (got[:300], want[:300]),
        )
        if not ok:
            self.mismatches += 1
            self.resync()
        return got, want

    def resync(self):
        """After a difference the two keyspaces may have diverged; empty every key the generator
        uses, in db 0 on both, so one bug is reported once instead of cascading."""
        for client in (self.ours, self.theirs):
            client.send(harness.encode_command("SELECT", "0"))
            client.send(harness.encode_command("DEL", *KEYS))
            client.read()
            client.read()

    def close(self):
        self.ours.close()
        self.theirs.close()


def show(argv):
    return repr([a if len(a) <= 60 else a[:40] + b"...(%d bytes)" % len(a) for a in argv])


def run_generated(pair, gen, count):
    done = 0
    while done < count:
        for argv, mode in gen.next():
            pair.run(harness.encode_command(*argv), mode, show(argv))
            done += 1


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--count", type=int, default=5000, help="RESP2 commands (RESP3: count/8)")
    args = p.parse_args()
    rng, _ = harness.seeded_rng(args.seed)
    report = harness.Report("test_differential")
    gen = CommandGen(rng)

    with harness.ServerProcess(args.server, name="ringkv") as ours, harness.ServerProcess(
        harness.REDIS_SERVER, kind="redis", name="redis"
    ) as oracle:
        try:
            pairs = compare_all(report, gen, rng, args.count, ours.port, oracle.port)
        except (OSError, ValueError) as e:
            # A crash, hang or unparsable reply ends the run; the server log says why.
            report.check(False, "run aborted: %r" % e, ours.log())
            pairs = []
        total = sum(p.count for p in pairs)
        bad = sum(p.mismatches for p in pairs)
        print("compared %d requests, %d differences" % (total, bad))
        report.check(ours.alive(), "ringkv still running after the run", ours.log())
        harness.check_clean_exit(report, ours)
    report.finish()


def compare_all(report, gen, rng, count, ours_port, oracle_port):
    """Runs the RESP2, RESP3 and inline comparisons; returns their Pairs for the totals."""
    pair = Pair(report, ours_port, oracle_port, "resp2")
    for argv, mode in gen.arity_sweep() + gen.set_option_sweep():
        pair.run(harness.encode_command(*argv), mode, show(argv))
    run_generated(pair, gen, count)
    pair.close()

    # RESP3: HELLO variants first, then generated commands on the upgraded connection.
    pair3 = Pair(report, ours_port, oracle_port, "resp3")
    for argv in ([b"HELLO", b"4"], [b"HELLO", b"x"], [b"HELLO", b"3", b"FOO"],
                 [b"HELLO", b"2"], [b"HELLO", b"3", b"SETNAME", b"r3"], [b"HELLO", b"3"]):
        pair3.ours.send(harness.encode_command(*argv))
        pair3.theirs.send(harness.encode_command(*argv))
        got, want = pair3.ours.read(), pair3.theirs.read()
        report.equal(hello_masked(got), hello_masked(want), "resp3 %s" % show(argv))
    run_generated(pair3, gen, max(count // 8, 50))
    pair3.close()

    # Inline requests, on their own connection (they are one line each).
    pair_inline = Pair(report, ours_port, oracle_port, "inline")
    for _ in range(max(count // 20, 30)):
        line = gen.inline()
        pair_inline.run(line + rng.choice([b"\r\n", b"\n"]), "exact", repr(line))
    pair_inline.close()

    return [pair, pair3, pair_inline]


if __name__ == "__main__":
    main()
