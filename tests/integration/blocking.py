"""What the blocking-command tests (test_blocking_lists.py, test_blocking_zset.py, ...) share: raw
clients that block and are checked for silence (the pub/sub and client-control tests' subscribers
and paused clients too), and the run that plays the same scenarios against ringkv and a real
redis-server 7 and compares every observation byte for byte."""

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


def call_n(client, n, *args):
    """Sends one command and returns the raw bytes of its next `n` replies."""
    client.send(encode_command(*args))
    return b"".join(client.read() for _ in range(n))


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

    def flushed_admin(self):
        """A new raw connection to the server under test, after a FLUSHALL through it."""
        admin = self.client()
        admin.call("FLUSHALL")
        return admin

    def served_later(self, admin, name, blocking, write):
        """A new client sends `blocking` (an argv) and is noted still waiting ("<name> waits");
        `write`, sent by `admin` and noted under its command's lower-case name, then serves it
        ("<name> served")."""
        with self.client() as waiter:
            blocked_send(waiter, *blocking)
            self.note(name + " waits", quiet(waiter))
            self.note(write[0].lower(), admin.call(*write))
            self.note(name + " served", waiter.read())

    def pipelined_behind(self, admin, requests, write):
        """A new client sends `requests` (argvs; the first one blocks) in one write and is noted
        still waiting ("pipeline waits") until `admin` sends `write` (noted as "<command> p"); then
        each request's reply is noted in order ("pipeline <command>")."""
        with self.client() as c:
            c.send(b"".join(encode_command(*r) for r in requests))
            self.note("pipeline waits", quiet(c, 0.2))
            self.note(write[0].lower() + " p", admin.call(*write))
            for r in requests:
                self.note("pipeline " + r[0].lower(), c.read())


def compare_with_redis(name, doc, scenarios, expected):
    """The test's main: runs `scenarios(observed, report, label)`, which notes (name, reply) pairs
    in `observed` (an Observations of the server it runs on), against ringkv and redis-server,
    and checks that every observation is identical and, where `expected` names it, equal to the
    known bytes."""
    args = harness.arg_parser(doc).parse_args()
    report = harness.Report(name)
    with harness.ServerProcess(args.server, name="ringkv") as ours, \
            harness.start_oracle() as redis:
        got, want = Observations(ours.port), Observations(redis.port)
        scenarios(got, report, "ringkv")
        scenarios(want, report, "redis")
        harness.compare_observations(report, got.seen, want.seen)
        for note, g in got.seen:
            if note in expected:
                report.equal(g, expected[note], "%s (expected bytes)" % note)
        report.check(ours.alive(), "ringkv still running", ours.log())
    report.finish()
