"""What the blocking-command tests (test_blocking_lists.py, test_blocking_zset.py) share: raw
clients that block and are checked for silence, and the run that plays the same scenarios against
ringkv and a real redis-server 7 and compares every observation byte for byte."""

import time

import harness
from harness import RespClient, encode_command

# Long enough for a request to reach the server and block before the next client acts.
SETTLE = 0.1


def quiet(client, timeout=SETTLE):
    """True when nothing arrives on `client` within `timeout` (it is still blocked)."""
    data, closed = client.read_available(timeout)
    client.sock.settimeout(10.0)
    return data == b"" and not closed


def blocked_send(client, *args):
    """Sends a (blocking) command without reading, and gives it time to block."""
    client.send(encode_command(*args))
    time.sleep(SETTLE / 2)


class Observations:
    """What one scenario run records: named replies in order, from clients of one server."""

    def __init__(self, port):
        self.port = port
        self.seen = []

    def note(self, name, value):
        """Records `value` under `name` and returns it."""
        self.seen.append((name, value))
        return value

    def client(self):
        """A new raw connection to the server under test."""
        return RespClient(self.port)


def compare_with_redis(name, doc, scenarios, expected):
    """The test's main: runs `scenarios(port, report, label)` (returning (name, reply) pairs)
    against ringkv and redis-server, and checks that every observation is identical and, where
    `expected` names it, equal to the known bytes."""
    args = harness.arg_parser(doc).parse_args()
    report = harness.Report(name)
    with harness.ServerProcess(args.server, name="ringkv") as ours, \
            harness.start_oracle() as redis:
        got = scenarios(ours.port, report, "ringkv")
        want = scenarios(redis.port, report, "redis")
        harness.compare_observations(report, got, want)
        for note, g in got:
            if note in expected:
                report.equal(g, expected[note], "%s (expected bytes)" % note)
        report.check(ours.alive(), "ringkv still running", ours.log())
    report.finish()
