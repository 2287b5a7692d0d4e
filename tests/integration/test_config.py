"""ringkv's process interface: --print-config round-trips through --config, bad config files exit
with code 2 naming the file, key and reason, flags override the file, --version and --help, clean
exit 0 on SIGTERM and SHUTDOWN, tcp-keepalive on clients' sockets, tcp-backlog, the pidfile,
--maxclients, and idle clients disconnected after --timeout.

Against a redis-server binary (harness self-check) only the parts Redis shares are run: signals,
SHUTDOWN, tcp-keepalive, tcp-backlog, the pidfile, --maxclients and --timeout.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402


def run(binary, *args, timeout=10):
    return subprocess.run([binary] + list(args), capture_output=True, timeout=timeout)


def write(dirname, name, text):
    path = os.path.join(dirname, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def check_print_config(report, binary, tmp):
    first = run(binary, "--print-config")
    report.equal(first.returncode, 0, "--print-config exits 0")
    text = first.stdout.decode()
    report.check("[server]" in text and "port" in text, "--print-config prints TOML", text[:300])
    path = write(tmp, "printed.toml", text)
    second = run(binary, "--config", path, "--print-config")
    report.equal(second.returncode, 0, "--config of the printed file is accepted")
    report.equal(second.stdout.decode(), text, "--print-config round-trips through --config")

    port = harness.free_port()
    override = run(binary, "--config", path, "--port", str(port), "--loglevel", "warning",
                   "--print-config")
    out = override.stdout.decode()
    report.check("port = %d" % port in out, "--port overrides the file in --print-config",
                 out[:400])

    server = harness.ServerProcess(binary, name="ringkv-config", port=port,
                                   extra_args=["--config", path])
    try:
        server.start()
        with harness.RespClient(port) as c:
            report.equal(c.call("PING"), b"+PONG\r\n", "server started from the printed config")
    finally:
        server.cleanup()


def check_file_overridden_by_flags(report, binary, tmp):
    file_port = harness.free_port()
    path = write(tmp, "ports.toml", '[server]\nbind = "127.0.0.1"\nport = %d\n' % file_port)
    # The harness passes --port (a different free port) besides --config.
    server = harness.ServerProcess(binary, name="override", extra_args=["--config", path])
    try:
        server.start()
        report.check(True, "server listens on the --port given on the command line")
        try:
            harness.RespClient(file_port, timeout=1).close()
            report.check(False, "nothing listens on the file's port")
        except OSError:
            report.check(True, "nothing listens on the file's port")
    except RuntimeError as e:
        report.check(False, "server with --config and --port starts", str(e))
    finally:
        server.cleanup()


BAD_CONFIGS = [
    ("unknown key", "[server]\nport = 7000\nno_such_key = 1\n", "no_such_key"),
    ("unknown section", "[nosuchsection]\nx = 1\n", "nosuchsection"),
    ("wrong type", '[server]\nport = "seven thousand"\n', "port"),
    ("port out of range", "[server]\nport = 70000\n", "port"),
    ("negative port", "[server]\nport = -1\n", "port"),
    ("bad size string", '[server]\nproto-max-bulk-len = "12QB"\n', "proto-max-bulk-len"),
    ("bad log level", '[log]\nlevel = "loud"\n', "level"),
    ("bad peer address", '[cluster]\npeers = ["nocolon"]\n', "peers"),
    ("bad TOML", "[server\nport = 1\n", None),
    ("bad TOML value", "[server]\nport = \n", None),
]


def check_bad_configs(report, binary, tmp):
    for i, (what, text, key) in enumerate(BAD_CONFIGS):
        path = write(tmp, "bad%d.toml" % i, text)
        res = run(binary, "--config", path)
        err = res.stderr.decode(errors="replace")
        report.equal(res.returncode, 2, "bad config (%s) exits 2" % what)
        report.check(os.path.basename(path) in err, "bad config (%s) names the file" % what, err)
        if key:
            report.check(key in err, "bad config (%s) names the key %s" % (what, key), err)
        reason = err.replace(path, "").replace(key or "", "").strip(" :\n")
        report.check(len(reason) >= 5, "bad config (%s) gives a reason" % what, err)
    missing = os.path.join(tmp, "does-not-exist.toml")
    res = run(binary, "--config", missing)
    err = res.stderr.decode(errors="replace")
    report.equal(res.returncode, 2, "missing config file exits 2")
    report.check("does-not-exist.toml" in err, "missing config file is named", err)
    res = run(binary, "--port", "notaport")
    report.equal(res.returncode, 2, "bad --port flag exits 2")
    res = run(binary, "--no-such-flag")
    report.equal(res.returncode, 2, "unknown flag exits 2")


def check_version_help(report, binary):
    res = run(binary, "--version")
    out = res.stdout.decode()
    report.equal(res.returncode, 0, "--version exits 0")
    report.check(any(ch.isdigit() for ch in out), "--version prints a version", out)
    res = run(binary, "--help")
    out = res.stdout.decode()
    report.equal(res.returncode, 0, "--help exits 0")
    for flag in ("--port", "--bind", "--config", "--timeout", "--maxclients", "--loglevel"):
        report.check(flag in out, "--help mentions %s" % flag, out[:500])


def check_signals(report, binary):
    server = harness.ServerProcess(binary, name="sigterm").start()
    try:
        os.kill(server.pid, signal.SIGTERM)
        report.equal(server.proc.wait(10), 0, "SIGTERM: exit code 0")
    finally:
        server.cleanup()
    server = harness.ServerProcess(binary, name="shutdown").start()
    try:
        with harness.RespClient(server.port) as c:
            c.send(harness.encode_command("SHUTDOWN"))
            out, closed = c.read_available(timeout=5)
            report.check(closed, "SHUTDOWN closes the connection", repr(out))
        report.equal(server.proc.wait(10), 0, "SHUTDOWN: exit code 0")
    finally:
        server.cleanup()


def check_maxclients(report, binary):
    with harness.ServerProcess(binary, name="maxclients", extra_args=["--maxclients", "2"]) as s:
        time.sleep(0.3)  # let the server reap the readiness probe's closed connection
        a, b = harness.RespClient(s.port), harness.RespClient(s.port)
        report.equal(a.call("PING"), b"+PONG\r\n", "maxclients 2: first client served")
        report.equal(b.call("PING"), b"+PONG\r\n", "maxclients 2: second client served")
        with harness.RespClient(s.port) as c:
            out, closed = c.read_available(timeout=2)
            report.equal((out, closed), (b"-ERR max number of clients reached\r\n", True),
                         "maxclients 2: third client refused and closed")
        b.close()
        time.sleep(0.2)
        with harness.RespClient(s.port) as c:
            report.equal(c.call("PING"), b"+PONG\r\n", "a slot freed by a closed client is reused")
        a.close()
        harness.check_clean_exit(report, s)


def check_idle_timeout(report, binary):
    with harness.ServerProcess(binary, name="timeout", extra_args=["--timeout", "1"]) as s:
        idle = harness.RespClient(s.port)
        busy = harness.RespClient(s.port)
        # Clients that wait by design are not idle: one blocked in BLPOP, one subscribed.
        blocked = harness.RespClient(s.port)
        subscriber = harness.RespClient(s.port)
        report.equal(idle.call("PING"), b"+PONG\r\n", "idle client served before going idle")
        blocked.send(harness.encode_command("BLPOP", "idle-test-list", "0"))
        report.equal(subscriber.call("SUBSCRIBE", "idle-test"),
                     b"*3\r\n$9\r\nsubscribe\r\n$9\r\nidle-test\r\n:1\r\n", "subscribed")
        deadline = time.time() + 4
        while time.time() < deadline:
            report.equal(busy.call("PING"), b"+PONG\r\n", "busy client stays connected")
            time.sleep(0.3)
        report.check(idle.closed_by_peer(timeout=0.1), "client idle past --timeout 1 is closed")
        report.check(not subscriber.closed_by_peer(timeout=0.1),
                     "a subscriber is not closed as idle")
        report.check(not blocked.closed_by_peer(timeout=0.1),
                     "a client blocked in BLPOP is not closed as idle")
        busy.call("RPUSH", "idle-test-list", "x")
        blocked.sock.settimeout(5)
        report.equal(blocked.read(), b"*2\r\n$14\r\nidle-test-list\r\n$1\r\nx\r\n",
                     "the blocked client is still there to be served")
        for c in (idle, busy, blocked, subscriber):
            c.close()
        harness.check_clean_exit(report, s)


def keepalive_seconds(server_port, client):
    """The keepalive timer of the server's side of `client`'s connection, in seconds left (from
    /proc/net/tcp: timer 2 is keepalive, its expiry in clock ticks), or None without one. While
    a reply waits for its (delayed) acknowledgement the retransmit timer (1) shows instead."""
    client_port = client.sock.getsockname()[1]
    deadline = time.time() + 2
    while True:
        with open("/proc/net/tcp") as f:
            rows = [line.split() for line in f.readlines()[1:]]
        timers = [fields[5].split(":") for fields in rows
                  if int(fields[1].split(":")[1], 16) == server_port and
                  int(fields[2].split(":")[1], 16) == client_port]
        assert timers, "no socket of port %d from %d in /proc/net/tcp" % (server_port, client_port)
        kind, ticks = int(timers[0][0], 16), int(timers[0][1], 16)
        if kind == 2:
            return ticks / os.sysconf("SC_CLK_TCK")
        if kind != 1 or time.time() > deadline:
            return None
        time.sleep(0.05)


def listen_backlog(port):
    """The listener's accept queue size as `ss` shows it (Send-Q of a listening socket)."""
    out = subprocess.run(["ss", "-ltnH", "sport = :%d" % port], capture_output=True, text=True)
    return int(out.stdout.split()[2])


def check_tcp_and_pidfile(report, binary, tmp):
    """tcp-keepalive (Redis's default 300 s, a change applies to later connections, 0 = none),
    tcp-backlog and pidfile (written at start, removed at a clean exit), CONFIG GET dir as an
    absolute path: the same expectations hold for redis-server."""
    pidfile = os.path.join(tmp, "server.pid")
    with open("/proc/sys/net/core/somaxconn") as f:
        somaxconn = int(f.read())
    s = harness.ServerProcess(binary, name="tcp", extra_args=["--pidfile", pidfile,
                                                              "--tcp-backlog", "77"])
    s.start()
    try:
        with open(pidfile) as f:
            report.equal(f.read(), "%d\n" % s.proc.pid, "the pidfile holds the process id")
        report.equal(listen_backlog(s.port), min(77, somaxconn), "tcp-backlog 77: the listen queue")
        with harness.RespClient(s.port) as c:
            report.equal(harness.parse_reply(c.call("CONFIG", "GET", "dir")),
                         [b"dir", os.path.realpath(s.dir).encode()],
                         "CONFIG GET dir: the absolute directory")
            pairs = harness.parse_reply(c.call("CONFIG", "GET", "tcp-*"))
            report.equal(dict(zip(pairs[0::2], pairs[1::2])),
                         {b"tcp-backlog": b"77", b"tcp-keepalive": b"300"}, "CONFIG GET tcp-*")
            first = keepalive_seconds(s.port, c)
            report.check(first is not None and 250 < first <= 300,
                         "tcp-keepalive 300 (the default): a client's socket probes after 300 s",
                         repr(first))
            report.equal(c.call("CONFIG", "SET", "tcp-keepalive", "60"), b"+OK\r\n",
                         "CONFIG SET tcp-keepalive 60")
            with harness.RespClient(s.port) as later:
                later.call("PING")
                seconds = keepalive_seconds(s.port, later)
                report.check(seconds is not None and 30 < seconds <= 60,
                             "a client connected after the change probes after 60 s",
                             repr(seconds))
            first = keepalive_seconds(s.port, c)
            report.check(first is not None and 240 < first <= 300,
                         "an earlier client keeps its 300 s", repr(first))
            c.call("CONFIG", "SET", "tcp-keepalive", "0")
            with harness.RespClient(s.port) as later:
                later.call("PING")
                report.equal(keepalive_seconds(s.port, later), None,
                             "tcp-keepalive 0: no keepalive on a new client")
        harness.check_clean_exit(report, s)
        report.check(not os.path.exists(pidfile), "a clean exit removes the pidfile")
    finally:
        s.cleanup()
    # A pidfile that cannot be written is no reason not to serve.
    with harness.ServerProcess(binary, name="nopid",
                               extra_args=["--pidfile", os.path.join(tmp, "none", "x.pid")]) as s, \
            harness.RespClient(s.port) as c:
        report.equal(c.call("PING"), b"+PONG\r\n", "served without a writable pidfile")


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_config")
    binary = args.server
    with tempfile.TemporaryDirectory(prefix="ringkv-conf-") as tmp:
        if harness.is_redis_binary(binary):
            print("redis-server under test: skipping ringkv-only config and flag checks")
        else:
            check_version_help(report, binary)
            check_print_config(report, binary, tmp)
            check_file_overridden_by_flags(report, binary, tmp)
            check_bad_configs(report, binary, tmp)
        check_signals(report, binary)
        check_tcp_and_pidfile(report, binary, tmp)
        check_maxclients(report, binary)
        check_idle_timeout(report, binary)
    report.finish()


if __name__ == "__main__":
    main()
