"""Cross-protocol attacks, differentially against redis-server: a connection that sends `POST` or
`Host:` as a command (an HTTP request, e.g. a browser tricked by a web page into talking to a
local node) is closed at once, nothing it sent after that runs and nothing more is answered, and
the node logs Redis's "Possible SECURITY ATTACK detected" warning. Checked with raw sockets for
real HTTP requests, both spellings in any case, the RESP form, behind a password, and that the
node then still serves other clients.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from test_protocol_errors import probe  # noqa: E402

WARNING = "Possible SECURITY ATTACK detected"

BROWSER_POST = (b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
                b"Content-Length: 30\r\n\r\nSET xp:pwned 1\r\nSET xp:also 1\r\n")

# (label, bytes sent on a fresh connection): what comes back and whether the connection is
# closed must match Redis's.
CASES = [
    ("browser POST with commands in its body", BROWSER_POST),
    ("GET request line, then a Host: header", b"GET / HTTP/1.1\r\nHost: x\r\n\r\nSET xp:g 1\r\n"),
    ("lowercase post", b"post /x HTTP/1.0\r\nSET xp:lower 1\r\n"),
    ("uppercase HOST:", b"HOST: example.com\r\nSET xp:host 1\r\n"),
    ("POST as a RESP command", b"*1\r\n$4\r\nPOST\r\n*3\r\n$3\r\nSET\r\n$5\r\nxp:mb\r\n$1\r\n1\r\n"),
    ("commands before POST in the same write", b"PING\r\nSET xp:before 1\r\nPOST /\r\n"),
    ("Host without colon is an unknown command", b"Host x\r\nPING\r\n"),
    ("POSTX is an unknown command", b"POSTX\r\nPING\r\n"),
]


def check_cases(report, ports, label):
    for name, data in CASES:
        got, want = probe(ports[0], data), probe(ports[1], data)
        report.equal(got, want, "%s: %s: same bytes back and same close" % (label, name))
    # What came after the attack never ran, on either server.
    for port in ports:
        with harness.RespClient(port) as c:
            if label == "with a password":
                c.call("AUTH", "pw")
            keys = harness.parse_reply(c.call("KEYS", "xp:*"))
            report.equal(sorted(keys), [b"xp:before"] if label != "with a password" else [],
                         "%s: port %d: only the command sent before POST ran" % (label, port))


def check_after_reply(report, ports):
    """A command answered in an earlier write keeps its reply; the connection closes at POST."""
    for port in ports:
        with harness.RespClient(port) as c:
            report.equal(c.call("PING"), b"+PONG\r\n", "port %d: PING before the attack" % port)
            c.send(b"POST / HTTP/1.1\r\n")
            report.equal(c.read_available(timeout=0.5), (b"", True),
                         "port %d: closed without a reply at POST" % port)
        with harness.RespClient(port) as c:
            report.equal(c.call("PING"), b"+PONG\r\n", "port %d: served after the attack" % port)


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_cross_protocol")
    with harness.ServerProcess(args.server, name="ringkv-xp") as mine, \
            harness.start_oracle("redis-xp") as theirs:
        ports = (mine.port, theirs.port)
        check_cases(report, ports, "no password")
        check_after_reply(report, ports)
        for port in ports:
            with harness.RespClient(port) as c:
                c.call("DEL", "xp:before")
                c.call("CONFIG", "SET", "requirepass", "pw")
        # Before authentication too: the connection closes instead of answering NOAUTH.
        check_cases(report, ports, "with a password")
        time.sleep(0.2)
        for server in (mine, theirs):
            log = server.log(tail=None)
            report.check(WARNING in log, "%s logs '%s'" % (server.name, WARNING), log[-2000:])
        # Logged once a minute at most, as Redis does.
        report.equal(mine.log(tail=None).count(WARNING), 1, "the warning is logged once")
        with harness.RespClient(mine.port) as c:
            c.call("AUTH", "pw")
            report.equal(c.call("PING"), b"+PONG\r\n", "ringkv serves after the attacks")
        harness.check_clean_exit(report, mine)
    report.finish()


if __name__ == "__main__":
    main()
