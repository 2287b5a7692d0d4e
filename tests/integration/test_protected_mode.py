"""Protected mode, differentially against redis-server: both bound to every address (0.0.0.0)
with protected mode on and no password; a client connecting to the machine's own non-loopback
address (so from a non-loopback source) gets Redis's exact -DENIED text and is closed, while
loopback clients are served. With a password set (CONFIG SET requirepass) the same client is
served (NOAUTH until it authenticates); with CONFIG SET protected-mode no it is served without
one. Skipped when the machine has no non-loopback IPv4 address.
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402


def own_address():
    """The first global-scope IPv4 address of this machine, or None."""
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"],
                             capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        fields = line.split()
        if "inet" in fields:
            return fields[fields.index("inet") + 1].split("/")[0]
    return None


def from_outside(report, ports, address, label):
    """Connects to each server's non-loopback address; returns (reply to PING, closed) per
    server after checking both servers behave alike."""
    seen = []
    for port in ports:
        with harness.RespClient(port, host=address, timeout=5) as c:
            c.send(harness.encode_command("PING"))
            seen.append(c.read_available(timeout=1.0))
    report.equal(seen[0], seen[1], "%s: same bytes and close as redis-server" % label)
    return seen[0]


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_protected_mode")
    address = own_address()
    if address is None:
        report.skip("this machine has no non-loopback IPv4 address to connect from")
    print("connecting from %s" % address, flush=True)
    extra = ["--bind", "0.0.0.0", "--protected-mode", "yes"]
    with harness.ServerProcess(args.server, name="ringkv-protected", extra_args=extra) as mine, \
            harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="redis-protected",
                                  extra_args=extra) as theirs:
        ports = (mine.port, theirs.port)

        data, closed = from_outside(report, ports, address, "protected, no password")
        report.check(data.startswith(b"-DENIED Redis is running in protected mode"),
                     "a non-loopback client gets -DENIED", repr(data[:100]))
        report.check(closed, "and is disconnected")
        with harness.RespClient(mine.port) as c:
            report.equal(c.call("PING"), b"+PONG\r\n", "a loopback client is served")
            info = harness.parse_reply(c.call("INFO", "stats")).decode()
            report.check("rejected_connections:1" in info, "INFO counts the refused client",
                         info)

        for port in ports:
            with harness.RespClient(port) as c:
                c.call("CONFIG", "SET", "requirepass", "pw")
        data, closed = from_outside(report, ports, address, "protected, with a password")
        report.equal((data, closed), (b"-NOAUTH Authentication required.\r\n", False),
                     "with a password a non-loopback client is served (and must AUTH)")

        for port in ports:
            with harness.RespClient(port) as c:
                c.call("AUTH", "pw")
                c.call("CONFIG", "SET", "requirepass", "")
                c.call("CONFIG", "SET", "protected-mode", "no")
        data, closed = from_outside(report, ports, address, "protected mode off")
        report.equal((data, closed), (b"+PONG\r\n", False),
                     "with protected mode off a non-loopback client is served")
        with harness.RespClient(mine.port) as c:
            report.equal(harness.parse_reply(c.call("CONFIG", "GET", "protected-mode")),
                         [b"protected-mode", b"no"], "CONFIG GET protected-mode")
        harness.check_clean_exit(report, mine)
    report.finish()


if __name__ == "__main__":
    main()
