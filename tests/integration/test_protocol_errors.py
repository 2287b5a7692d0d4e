"""Protocol robustness, compared with a real redis-server 7: malformed requests get Redis's exact
error and the connection is closed (or, where Redis waits for more, nothing happens); requests
split at every byte still parse; 10 000 commands pipelined in one write all get their replies;
and afterwards the server still serves a fresh client.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

BIG_INLINE = b"x" * (64 * 1024 + 100)

# Each case: (name, bytes sent). The reply bytes and whether the server closes the connection
# must match Redis's.
MALFORMED = [
    ("multibulk length not a number", b"*abc\r\n"),
    ("multibulk length with plus sign", b"*+1\r\n"),
    ("multibulk length with leading zero", b"*01\r\n$4\r\nPING\r\n"),
    ("multibulk length too big", b"*3000000000\r\n"),
    ("multibulk length overflows int64", b"*99999999999999999999\r\n"),
    ("expected $, got letter", b"*2\r\nfoo\r\n"),
    ("expected $, got colon", b"*1\r\n:1\r\n"),
    ("expected $ after valid bulk", b"*2\r\n$3\r\nGET\r\n+k\r\n"),
    ("bulk length not a number", b"*1\r\n$abc\r\n"),
    ("bulk length negative", b"*1\r\n$-1\r\n"),
    ("bulk length with space", b"*1\r\n$ 3\r\n"),
    ("bulk length with leading zero", b"*1\r\n$04\r\nPING\r\n"),
    ("bulk length over proto-max-bulk-len", b"*1\r\n$536870913\r\n"),
    ("bulk length 4000000000", b"*1\r\n$4000000000\r\n"),
    ("bulk length 2000000000", b"*1\r\n$2000000000\r\n"),
    ("unbalanced double quote", b'SET "a b\r\n'),
    ("unbalanced single quote", b"SET 'a b\r\n"),
    ("closing quote not followed by space", b'SET "a"b c\r\n'),
    ("valid inline then unbalanced", b"PING\r\nECHO 'x\r\n"),
    ("too big inline request", BIG_INLINE),
    ("too big mbulk count string", b"*" + b"1" * (64 * 1024 + 10)),
    ("too big bulk count string", b"*1\r\n$" + b"1" * (64 * 1024 + 10)),
    ("error after valid pipelined commands", b"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n*x\r\n"),
    # Not errors, but edge cases of the framing that Redis accepts:
    ("declared multibulk 2000000000, then silence", b"*2000000000\r\n"),
    ("negative multibulk is an empty request", b"*-5\r\n*1\r\n$4\r\nPING\r\n"),
    ("zero multibulk is an empty request", b"*0\r\n*1\r\n$4\r\nPING\r\n"),
    ("bulk not followed by CRLF", b"*1\r\n$4\r\nPINGxx"),
    ("empty command name", b"*1\r\n$0\r\n\r\n"),
    ("blank inline lines", b"\r\n\n\r\nPING\r\n"),
    ("inline with LF only", b"PING\nECHO hi\n"),
    ("inline with quotes and escapes", b"ECHO \"a\\x41\\n\\\"\" 'b'\r\n"),
    ("partial bulk, then silence", b"*1\r\n$10\r\nabc"),
    ("partial multibulk header", b"*1"),
]


def probe(port, data):
    """Sends `data` on a fresh connection; returns (bytes received, closed by server)."""
    with harness.RespClient(port) as c:
        c.send(data)
        out, closed = c.read_available(timeout=0.4)
        if not closed:
            # Give a slow server a little longer to close before deciding it keeps the link.
            more, closed = c.read_available(timeout=0.2)
            out += more
        return out, closed


def check_malformed(report, ours, redis):
    for name, data in MALFORMED:
        got = probe(ours.port, data)
        want = probe(redis.port, data)
        report.equal(got, want, "malformed: %s" % name)


def split_requests():
    """A mixed pipeline: multibulk with binary/empty/large arguments and inline lines."""
    return (
        harness.encode_command("SET", "split:k", b"bin\x00\r\nval")
        + harness.encode_command("GET", "split:k")
        + harness.encode_command("MSET", "a", "", "b", "x" * 300)
        + b"PING\r\n"
        + harness.encode_command("MGET", "a", "b", "split:k")
        + b"ECHO \"q q\"\n"
        + harness.encode_command("DEL", "a", "b", "split:k")
    )


def read_n(client, n):
    return b"".join(client.read() for _ in range(n))


def check_splits(report, ours, redis):
    data = split_requests()
    n_replies = 7
    with harness.RespClient(redis.port) as c:
        c.send(data)
        want = read_n(c, n_replies)
    bad = 0
    with harness.RespClient(ours.port) as c:
        for i in range(1, len(data)):
            c.send(data[:i])
            time.sleep(0.002)  # separate segments, so the server sees the split
            c.send(data[i:])
            got = read_n(c, n_replies)
            if got != want:
                bad += 1
                if bad <= 3:
                    print("split at %d: got %r want %r" % (i, got[:120], want[:120]))
    report.equal(bad, 0, "pipeline split at each of %d byte positions" % (len(data) - 1))

    with harness.RespClient(ours.port) as c:
        for i in range(len(data)):
            c.send(data[i : i + 1])
        got = read_n(c, n_replies)
    report.equal(got, want, "pipeline sent one byte per write")


def check_big_pipeline(report, ours, redis):
    n = 10000
    chunks = []
    for i in range(n // 2):
        chunks.append(harness.encode_command("SET", "pipe:%d" % i, "value-%d" % i))
        chunks.append(harness.encode_command("GET", "pipe:%d" % i))
    data = b"".join(chunks)
    replies = {}
    for label, srv in (("ringkv", ours), ("redis", redis)):
        with harness.RespClient(srv.port, timeout=30) as c:
            c.send(data)
            replies[label] = [c.read() for _ in range(n)]
            replies[label].append(c.call("DBSIZE"))
            c.call("FLUSHDB")
    got, want = replies["ringkv"], replies["redis"]
    report.equal(len(got), n + 1, "10000 pipelined commands in one write: reply count")
    first_bad = next((i for i in range(len(want)) if got[i] != want[i]), None)
    report.check(
        first_bad is None,
        "10000 pipelined commands: replies identical to redis",
        "first difference at %s" % first_bad,
    )
    report.equal(got[1], b"$7\r\nvalue-0\r\n", "pipelined GET sees the SET before it")
    report.equal(got[-1], b":5000\r\n", "DBSIZE after the pipeline")


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_protocol_errors")
    with harness.ServerProcess(args.server, name="ringkv") as ours, harness.ServerProcess(
        harness.REDIS_SERVER, kind="redis", name="redis"
    ) as redis:
        with harness.RespClient(ours.port) as survivor:
            report.equal(survivor.call("PING"), b"+PONG\r\n", "first client served")
            check_malformed(report, ours, redis)
            check_splits(report, ours, redis)
            check_big_pipeline(report, ours, redis)
            report.equal(survivor.call("ECHO", "still here"), b"$10\r\nstill here\r\n",
                         "a client connected throughout is still served")
        with harness.RespClient(ours.port) as fresh:
            report.equal(fresh.call("PING"), b"+PONG\r\n", "a new client is served afterwards")
        report.check(ours.alive(), "server still running", ours.log())
        harness.check_clean_exit(report, ours)
    report.finish()


if __name__ == "__main__":
    main()
