"""Shared helpers for ringkv's integration tests.

Starts servers on free ports (ringkv or a reference redis-server) and ringkv clusters of N nodes
from generated configs (`Cluster`: kill -9, SIGSTOP or restart one node), stops them by PID, and
talks to them over raw sockets with a RESP client that returns each reply as its exact bytes,
so tests can compare ringkv with Redis byte for byte.

The server under test is given with --server PATH. When PATH is a redis-server binary (or the
environment variable RINGKV_SERVER_KIND=redis is set) the harness starts it the way the oracle is
started, which lets every test validate itself against Redis before ringkv exists.

RINGKV_SERVER_WRAPPER, when set, is a command line every ringkv server is started under, e.g.
"valgrind --error-exitcode=99 --leak-check=full": the wrapper
must exec the server in its own process (as valgrind does), so PIDs, signals and exit codes stay
the server's. Start-up waits are then multiplied by RINGKV_TIMEOUT_SCALE (default 20).

RINGKV_TEST_SCALE (default 1) scales the randomized tests' amount of work (generated commands,
kill -9 rounds) through `scaled`: .ci/run sets it below 1 for its sanitizer builds, which run
every test but several times slower.
"""

import argparse
import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"


def cpu_seconds(*pids):
    """User + system CPU seconds the processes used so far (utime + stime from /proc/PID/stat):
    a cost per request that a busy machine disturbs less than throughput."""
    ticks = 0
    for pid in pids:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def server_wrapper():
    """The words of RINGKV_SERVER_WRAPPER (empty when unset)."""
    return shlex.split(os.environ.get("RINGKV_SERVER_WRAPPER", ""))


def timeout_scale():
    """How much slower servers run than natively: RINGKV_TIMEOUT_SCALE, by default 20 under a
    wrapper and 1 without."""
    default = "20" if server_wrapper() else "1"
    return float(os.environ.get("RINGKV_TIMEOUT_SCALE", default))


_instrumentation = {}


def rss_distortion(binary):
    """Why the RSS of a server started from `binary` says little about what it allocates, or None
    when it is a plain build: sanitizers (shadow memory, quarantine) and valgrind multiply and
    delay it. Tests skip their RSS bounds then, and say so."""
    if server_wrapper():
        return "runs under %s" % server_wrapper()[0]
    if binary not in _instrumentation:
        with open(binary, "rb") as f:
            image = f.read()
        _instrumentation[binary] = next(
            (name for marker, name in ((b"__tsan_init", "ThreadSanitizer"),
                                       (b"__asan_init", "AddressSanitizer"))
             if marker in image), None)
    found = _instrumentation[binary]
    return found and "built with %s" % found


def _ephemeral_low():
    """The lowest local port the OS gives outgoing connections (ip_local_port_range)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bound_socket(port):
    """A socket bound to 127.0.0.1:port, or None when the port is taken."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", port))
        return s
    except OSError:
        s.close()
        return None


def free_ports(n):
    """Returns n distinct TCP ports on 127.0.0.1 that are free right now, all held open together
    while asking. They are chosen at random below the OS's ephemeral range: a port the OS picks
    for bind(0) comes from the range it also gives outgoing connections, so on a busy machine a
    client socket could take it between the check and the server's bind ("address already in
    use")."""
    low = _ephemeral_low()
    first = 10000 if low > 12000 else None
    socks = []
    try:
        if first is not None:
            candidates = random.SystemRandom().sample(range(first, low), min(low - first, 400))
            for port in candidates:
                if len(socks) == n:
                    break
                s = _bound_socket(port)
                if s is not None:
                    socks.append(s)
        while len(socks) < n:  # no room below the ephemeral range: let the OS choose
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def free_port():
    """Returns a TCP port on 127.0.0.1 that is free right now (see free_ports)."""
    return free_ports(1)[0]


def is_redis_binary(path):
    """True when `path` should be driven like redis-server rather than ringkv-server."""
    if os.environ.get("RINGKV_SERVER_KIND") == "redis":
        return True
    return os.path.basename(path).startswith("redis-server")


def encode_command(*args):
    """Encodes arguments (str, bytes or int) as one RESP multibulk request."""
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, int):
            a = str(a).encode()
        elif isinstance(a, str):
            a = a.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(parts)


class ServerProcess:
    """One server process on 127.0.0.1:port, with its log and working files in a temp dir."""

    def __init__(self, binary, kind=None, port=None, extra_args=(), name="server", prefix=()):
        # The process runs in its temp dir, so a relative path must be resolved here.
        self.binary = os.path.abspath(binary) if os.sep in binary else binary
        self.kind = kind or ("redis" if is_redis_binary(binary) else "ringkv")
        self.port = port or free_port()
        self.host = "127.0.0.1"
        self.extra_args = list(extra_args)
        # Words before the binary (e.g. `prlimit --nofile=1024:4096 --`); each must exec the
        # next, so the PID stays the server's.
        self.prefix = list(prefix)
        self.name = name
        self.dir = tempfile.mkdtemp(prefix="ringkv-it-%s-" % name)
        self.log_path = os.path.join(self.dir, "server.log")
        self.proc = None
        self.log_file = None

    def launcher(self):
        """The words before the binary: the prefix, then the wrapper for ringkv servers."""
        return self.prefix + (server_wrapper() if self.kind == "ringkv" else [])

    def command_line(self):
        """The argv this server is started with."""
        args = self.launcher() + [self.binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        if self.kind == "redis":
            args += ["--save", "", "--appendonly", "no", "--dir", self.dir]
        return args + self.extra_args

    def start(self, wait=True, timeout=10.0):
        """Starts the process and (by default) waits until it answers PING."""
        self.log_file = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            self.command_line(), cwd=self.dir, stdout=self.log_file, stderr=subprocess.STDOUT
        )
        if wait:
            try:
                self.wait_ready(timeout)
            except RuntimeError:
                # A `with` block never reaches __exit__ when __enter__ raises: clean up here.
                self.cleanup()
                raise
        return self

    def wait_ready(self, timeout=10.0):
        """Polls PING until +PONG (or NOAUTH: a password is required); raises with the log's
        tail when the server dies or times out."""
        if self.kind == "ringkv":
            timeout *= timeout_scale()
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    "%s exited with %s during start:\n%s"
                    % (self.name, self.proc.returncode, self.log())
                )
            try:
                with RespClient(self.port, host=self.host, timeout=1.0) as c:
                    if c.call("PING") in (b"+PONG\r\n", b"-NOAUTH Authentication required.\r\n"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(
            "%s did not answer PING within %.0fs:\n%s" % (self.name, timeout, self.log())
        )

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def rss_kb(self):
        """Resident set size in kB, from /proc/PID/status."""
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def log(self, tail=4000):
        """The last `tail` characters of the server's output (all of it when tail is None)."""
        try:
            with open(self.log_path, "rb") as f:
                data = f.read()
                return (data if tail is None else data[-tail:]).decode(errors="replace")
        except OSError:
            return ""

    def stop(self, timeout=10.0):
        """SIGTERM, then SIGKILL if still running after `timeout`; returns the exit code."""
        if self.proc is None:
            return None
        if self.kind == "ringkv":
            timeout *= timeout_scale()
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                pass
        if self.log_file:
            self.log_file.close()
            self.log_file = None
        return self.proc.returncode

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        # start_oracle() hands over a server that already runs: starting it again would orphan
        # the first process.
        return self if self.proc is not None else self.start()

    def __exit__(self, *exc):
        self.cleanup()


class ClusterNode(ServerProcess):
    """One ringkv cluster node started from a generated TOML config in its temp dir. `host` is
    the address it binds to; `prefix` is prepended to its command line (e.g. `ip netns exec NS`,
    which execs the server, so the process's PID stays the server's)."""

    def __init__(self, binary, port, config_text, name, host="127.0.0.1", prefix=()):
        super().__init__(binary, kind="ringkv", port=port, name=name, prefix=prefix)
        self.host = host
        self.config_path = os.path.join(self.dir, "node.toml")
        with open(self.config_path, "w") as f:
            f.write(config_text)

    @property
    def address(self):
        return "%s:%d" % (self.host, self.port)

    def command_line(self):
        # Everything comes from the config file, so a restart sees exactly the same settings.
        return self.launcher() + [self.binary, "--config", self.config_path]

    def start(self, wait=True, timeout=10.0):
        """Starts (or restarts after a kill) the node; its output log is appended to, not
        truncated, so a restarted node's log still shows what happened before."""
        self.log_file = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            self.command_line(), cwd=self.dir, stdout=self.log_file, stderr=subprocess.STDOUT
        )
        if wait:
            self.wait_ready(timeout)
        return self

    def kill(self, sig=signal.SIGKILL):
        """Sends `sig` to the node (SIGKILL by default, SIGSTOP/SIGCONT to freeze and thaw it);
        after SIGKILL waits for the process to be reaped."""
        os.kill(self.proc.pid, sig)
        if sig == signal.SIGKILL:
            self.proc.wait()
            if self.log_file:
                self.log_file.close()
                self.log_file = None

    def stop(self, timeout=10.0):
        # A stopped (SIGSTOP) process ignores SIGTERM until it is continued.
        if self.alive():
            try:
                os.kill(self.proc.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        return super().stop(timeout)


def cluster_config(port, ports, hash_name="balanced", request_timeout=5000,
                   connect_timeout=1000, replicas=None, log_file=None, extra="", hosts=None,
                   cluster_options=None):
    """The TOML config of the node on `port` in a cluster of `ports` (every other one a peer).
    `hosts` gives each node's bind address, in the order of `ports` (all 127.0.0.1 by default);
    `cluster_options` adds [cluster] keys, e.g. {"health-interval": 200, "failure-limit": 3}."""
    hosts = hosts or ["127.0.0.1"] * len(ports)
    me = ports.index(port)
    peers = ", ".join('"%s:%d"' % (h, p) for i, (h, p) in enumerate(zip(hosts, ports)) if i != me)
    lines = [
        "[server]",
        'bind = "%s"' % hosts[me],
        "port = %d" % port,
        "[cluster]",
        'self = "%s:%d"' % (hosts[me], port),
        "peers = [%s]" % peers,
        'hash = "%s"' % hash_name,
        "request-timeout = %d" % request_timeout,
        "connect-timeout = %d" % connect_timeout,
    ]
    if replicas is not None:
        lines.append("replicas = %d" % replicas)
    for key, value in (cluster_options or {}).items():
        if isinstance(value, bool):
            lines.append("%s = %s" % (key, "true" if value else "false"))
        else:
            lines.append('%s = "%s"' % (key, value) if isinstance(value, str) else
                         "%s = %d" % (key, value))
    lines += ["[log]", 'file = "%s"' % (log_file or "")]
    return "\n".join(lines) + "\n" + extra


class Cluster:
    """N ringkv nodes on free ports that list each other as peers, each started from a generated
    config in its own temp dir; stopped by PID. Use as a context manager:

        with harness.Cluster(binary, 3, hash_name="crc32") as cluster:
            cluster.ports, cluster.nodes[2].kill(), cluster.restart(2)

    `configure(i, port, ports)` may return a node's config text instead of the default one (e.g.
    to give nodes deliberately different rings). `hosts` gives each node its own bind address
    (default 127.0.0.1) and `prefixes` a command prefix per node (e.g. `ip netns exec NS`), for
    nodes that run in network namespaces."""

    def __init__(self, binary, n=3, name="cluster", configure=None, hosts=None, prefixes=None,
                 **config):
        self.binary = binary
        self.ports = free_ports(n)
        self.hosts = hosts or ["127.0.0.1"] * n
        self.nodes = []
        for i, port in enumerate(self.ports):
            text = configure(i, port, self.ports) if configure else None
            if text is None:
                text = cluster_config(port, self.ports, hosts=self.hosts, **config)
            self.nodes.append(ClusterNode(binary, port, text, "%s-node%d" % (name, i + 1),
                                          host=self.hosts[i],
                                          prefix=prefixes[i] if prefixes else ()))

    @property
    def addresses(self):
        return [n.address for n in self.nodes]

    def start(self, timeout=10.0):
        """Starts every node, then waits until each answers PING."""
        try:
            for node in self.nodes:
                node.start(wait=False)
            for node in self.nodes:
                node.wait_ready(timeout)
        except RuntimeError:
            self.cleanup()
            raise
        return self

    def kill(self, i, sig=signal.SIGKILL):
        """Sends `sig` to node i (0-based)."""
        self.nodes[i].kill(sig)

    def restart(self, i, timeout=10.0):
        """Starts node i again with the same config and port, after a kill or stop."""
        if self.nodes[i].alive():
            self.nodes[i].stop()
        return self.nodes[i].start(timeout=timeout)

    def logs(self, tail=2000):
        return "\n".join("--- %s ---\n%s" % (n.name, n.log(tail)) for n in self.nodes)

    def stop(self):
        """Stops every node (SIGTERM, then SIGKILL); returns their exit codes."""
        return [n.stop() for n in self.nodes]

    def cleanup(self):
        for n in self.nodes:
            n.cleanup()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()


def check_clean_exit(report, server):
    """Stops `server` with SIGTERM and checks it exits 0 with no sanitizer report in its log
    (under ASan a leak or memory error turns into a non-zero exit and a report)."""
    code = server.stop()
    log = server.log(tail=None)
    report.equal(code, 0, "%s exits 0 on SIGTERM" % server.name)
    for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "WARNING: ThreadSanitizer"):
        at = log.find(marker)
        report.check(at < 0, "%s log has no '%s'" % (server.name, marker), log[at : at + 3000])


def keys_on_each_node(cluster, prefix="k"):
    """One key per owner of `cluster` (asked with CLUSTER OWNER), in the order first found."""
    owners = {}
    with RespClient(cluster.ports[0]) as c:
        for i in range(200):
            key = "%s%d" % (prefix, i)
            owners.setdefault(parse_reply(c.call("CLUSTER", "OWNER", key)), key)
            if len(owners) == len(cluster.ports):
                break
    return list(owners.values())


def info_fields(port, *args):
    """The `name:value` lines of INFO/CLUSTER INFO (args) as a dict of strings."""
    with RespClient(port) as c:
        text = parse_reply(c.call(*args)).decode()
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def start_oracle(name="redis"):
    """Starts a reference redis-server 7 on a free port."""
    return ServerProcess(REDIS_SERVER, kind="redis", name=name).start()


class ReplyReader:
    """Reads exactly one RESP2/RESP3 reply at a time from a socket, as raw bytes."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()
        self.pos = 0

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("connection closed by server")
        self.buf += data

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = bytes(self.buf[self.pos : i])
                self.pos = i + 2
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) - self.pos < n:
            self._fill()
        data = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return data

    def read(self):
        """Returns the next complete reply's bytes (nested aggregates and attributes included)."""
        # Consumed input is dropped only between replies, so `start` stays valid while reading.
        if self.pos > 1 << 20:
            del self.buf[: self.pos]
            self.pos = 0
        start = self.pos
        self._skip_one()
        return bytes(self.buf[start : self.pos])

    def _skip_one(self):
        line = self._line()
        if not line:
            raise ValueError("empty RESP line")
        t, rest = chr(line[0]), line[1:]
        if t in "+-:_,#(":
            return
        if t in "$=!":
            n = int(rest)
            if n >= 0:
                self._exact(n + 2)
            return
        if t in "*~>":
            n = int(rest)
            for _ in range(max(n, 0)):
                self._skip_one()
            return
        if t == "%":
            for _ in range(2 * int(rest)):
                self._skip_one()
            return
        if t == "|":
            for _ in range(2 * int(rest)):
                self._skip_one()
            self._skip_one()  # the attribute decorates the reply that follows it
            return
        raise ValueError("bad RESP type byte %r in %r" % (t, line))

    def pending(self):
        return len(self.buf) - self.pos


class RespClient:
    """A raw-socket RESP client: send bytes, read replies as exact bytes."""

    def __init__(self, port, host="127.0.0.1", timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = ReplyReader(self.sock)

    def send(self, data):
        self.sock.sendall(data)

    def read(self):
        return self.reader.read()

    def call(self, *args):
        """Sends one command and returns its reply's raw bytes."""
        self.send(encode_command(*args))
        return self.read()

    def closed_by_peer(self, timeout=2.0):
        """True if the server closes the connection within `timeout` (after any pending bytes)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    return True
        except (socket.timeout, TimeoutError):
            return False
        except ConnectionResetError:
            return True

    def read_available(self, timeout=0.3):
        """Reads whatever arrives until the peer closes or `timeout` passes with no data."""
        out = bytes(self.reader.buf[self.reader.pos :])
        self.reader.pos = len(self.reader.buf)
        self.sock.settimeout(timeout)
        closed = False
        try:
            while True:
                data = self.sock.recv(65536)
                if not data:
                    closed = True
                    break
                out += data
        except (socket.timeout, TimeoutError):
            pass
        except ConnectionResetError:
            closed = True
        return out, closed

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class DiffPair:
    """One connection to ringkv and one to redis-server: sends them the same requests and
    compares the replies byte for byte (HELLO's client id masked; `normalize`, when given, maps
    each parsed reply before comparing). With `auth`, both connections AUTH with it first."""

    def __init__(self, report, mine_port, theirs_port, label, auth=None):
        self.report = report
        self.label = label
        self.mine = RespClient(mine_port)
        self.theirs = RespClient(theirs_port)
        if auth:
            self.call("AUTH", *auth)

    def _compare(self, args, got, want, how=""):
        if args and str(args[0]).upper() == "HELLO":
            got, want = hello_masked(got), hello_masked(want)
        self.report.equal(got, want, "%s%s: %s" % (self.label, how, " ".join(map(str, args))))

    def call(self, *args, normalize=None):
        got, want = self.both(*args)
        if normalize is not None:
            got, want = normalize(parse_reply(got)), normalize(parse_reply(want))
        self._compare(args, got, want)
        return got

    def both(self, *args):
        """Sends one command to each server; returns (ringkv's reply, redis-server's)."""
        return self.mine.call(*args), self.theirs.call(*args)

    def pipeline(self, commands):
        """Sends every command in one write to each server, then compares the replies in order."""
        data = b"".join(encode_command(*c) for c in commands)
        self.mine.send(data)
        self.theirs.send(data)
        for c in commands:
            self._compare(c, self.mine.read(), self.theirs.read(), " (pipelined)")

    def close(self):
        self.mine.close()
        self.theirs.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def parse_reply(raw):
    """Decodes one raw reply into Python values (bytes, int, None, list, dict, Error)."""
    value, _ = _parse(raw, 0)
    return value


def hello_masked(raw):
    """A HELLO reply with the client id (different per server) taken out, for comparison."""
    value = parse_reply(raw)
    if isinstance(value, dict):
        value.pop(b"id", None)
    elif isinstance(value, list):
        value = [v for i, v in enumerate(value) if not (i % 2 == 1 and value[i - 1] == b"id")]
    return raw[:1], value


class Error(str):
    """An error reply's text, distinct from a simple string."""


def _parse(raw, pos):
    end = raw.index(b"\r\n", pos)
    t, rest = chr(raw[pos]), raw[pos + 1 : end]
    pos = end + 2
    if t == "+":
        return rest, pos
    if t == "-":
        return Error(rest.decode(errors="replace")), pos
    if t in ":(":
        return int(rest), pos
    if t == ",":
        return float(rest), pos
    if t == "#":
        return rest == b"t", pos
    if t == "_":
        return None, pos
    if t in "$=!":
        n = int(rest)
        if n < 0:
            return None, pos
        return raw[pos : pos + n], pos + n + 2
    if t in "*~>":
        n = int(rest)
        if n < 0:
            return None, pos
        items = []
        for _ in range(n):
            item, pos = _parse(raw, pos)
            items.append(item)
        return items, pos
    if t in "%|":
        d = {}
        for _ in range(int(rest)):
            k, pos = _parse(raw, pos)
            v, pos = _parse(raw, pos)
            d[k if not isinstance(k, list) else tuple(k)] = v
        if t == "|":
            return _parse(raw, pos)
        return d, pos
    raise ValueError("bad RESP type %r" % t)


# The exit status of a skipped test (Report.skip): SKIP_RETURN_CODE in tests/CMakeLists.txt.
SKIP_EXIT_CODE = 77


class Report:
    """Counts checks and failures; every test ends with report.finish()."""

    def __init__(self, name):
        self.name = name
        self.checks = 0
        self.failures = []
        self.started = time.time()

    def check(self, cond, what, detail=""):
        """Records one assertion; prints it when it fails."""
        self.checks += 1
        if not cond:
            self.failures.append(what)
            print("FAIL: %s%s" % (what, ("\n      " + detail) if detail else ""), flush=True)
        return cond

    def equal(self, got, want, what):
        return self.check(got == want, what, "got  %r\n      want %r" % (got, want))

    def skip(self, reason):
        """Ends a test that cannot run here (e.g. it needs root): prints why and a summary with
        one skipped test, then exits with SKIP_EXIT_CODE, which ctest counts as skipped rather
        than failed, and lists at the end of its run (tests/CMakeLists.txt), so a skip is seen
        without the environment failing a suite run."""
        print("SKIP: %s" % reason, flush=True)
        print("%s: SKIPPED — 0 passed, 0 failed, 1 skipped, %.1fs" % (
            self.name, time.time() - self.started), flush=True)
        sys.exit(SKIP_EXIT_CODE)

    def finish(self):
        """Prints the summary and exits: 0 when every check passed, 1 otherwise."""
        elapsed = time.time() - self.started
        status = "OK" if not self.failures and self.checks else "FAILED"
        if not self.checks:
            print("no checks ran")
        print(
            "%s: %s — %d checks, %d failures, %.1fs"
            % (self.name, status, self.checks, len(self.failures), elapsed),
            flush=True,
        )
        sys.exit(0 if status == "OK" else 1)


def compare_observations(report, got, want, what="observations"):
    """Checks that two runs of the same scenarios (lists of (note, reply) pairs, ringkv's and
    redis's) observed the same, note by note."""
    report.equal(len(got), len(want), "number of %s" % what)
    for (note, g), (_, w) in zip(got, want):
        report.equal(g, w, "%s (ringkv vs redis)" % note)


def arg_parser(description):
    """The common command line: --server PATH plus test-specific options."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--server", required=True, help="server binary under test (ringkv-server)")
    return p


def scaled(n, minimum=1):
    """`n` times RINGKV_TEST_SCALE (default 1), rounded, and at least `minimum`: the default amount
    of a randomized test's work (commands, rounds), smaller for slow instrumented builds."""
    scale = float(os.environ.get("RINGKV_TEST_SCALE", "1"))
    return max(minimum, int(round(n * scale)))


def seeded_rng(seed):
    """A random.Random with `seed` (a fresh one when None); prints the seed for reproduction."""
    if seed is None:
        seed = random.SystemRandom().randrange(1 << 31)
    print("seed: %d" % seed, flush=True)
    return random.Random(seed), seed
