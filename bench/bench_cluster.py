#!/usr/bin/python3
"""Cluster benchmark: a 3-node ringkv cluster against twemproxy over 3 redis-servers, same run.

Both setups spread keys over three stores and make the client talk to one entry point: ringkv
node 1 (which serves its own keys and relays the rest to its peers) and nutcracker (which relays
everything to redis-server backends chosen by ketama over fnv1a_64). redis-benchmark runs SET and
GET with -c 50 -r 100000, unpipelined (-P 1) and pipelined (-P 16), interleaved ringkv,
twemproxy, ringkv, twemproxy... so machine drift hits both alike; the best round of each is
kept. Then it compares GET latency on ringkv node 1 for a key it owns (local) and a key owned by
node 2 (relayed), with 1 and 50 clients.

The numbers are checked to be real: the backends' DBSIZE and SET call counts must grow by the
requests sent through nutcracker, and after the SET runs every ringkv node must hold keys.

    /usr/bin/python3 bench/bench_cluster.py [--server build/ringkv-server] [--quick]
"""

import argparse
import csv
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))

from harness import encode_command, free_port, free_ports  # noqa: E402

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_BENCHMARK = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"
NUTCRACKER = shutil.which("nutcracker") or "/usr/sbin/nutcracker"

NODES = 3
TESTS = ["SET", "GET"]
PIPELINES = (1, 16)
# Ratio ringkv/twemproxy to reach per pipeline depth.
GOALS = {1: 1.0, 16: 1.3}


def call(port, *args, timeout=5.0):
    """Sends one command and returns its reply decoded to str (simple, error, integer, bulk) or
    None for a null bulk; raises on an error reply. Only the reply types this script needs."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(encode_command(*args))
        buf = b""
        while b"\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("port %d closed the connection on %s" % (port, args[0]))
            buf += chunk
        head, rest = buf.split(b"\r\n", 1)
        kind, body = head[:1], head[1:].decode()
        if kind == b"-":
            raise RuntimeError("port %d: %s -> %s" % (port, " ".join(args), body))
        if kind != b"$":
            return body
        length = int(body)
        if length < 0:
            return None
        while len(rest) < length + 2:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("port %d closed the connection mid-reply" % port)
            rest += chunk
        return rest[:length].decode()


def info_field(port, section, field):
    """An integer field of INFO `section` (0 when absent)."""
    for line in call(port, "INFO", section).splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    return 0


def keyspace_keys(port):
    """The key count of db0 from INFO keyspace (0 when db0 is empty)."""
    for line in call(port, "INFO", "keyspace").splitlines():
        if line.startswith("db0:keys="):
            return int(line.split("=", 1)[1].split(",", 1)[0])
    return 0


def set_calls(port):
    """How many SETs a redis-server has run, from INFO commandstats."""
    for line in call(port, "INFO", "commandstats").splitlines():
        if line.startswith("cmdstat_set:calls="):
            return int(line.split("=", 1)[1].split(",", 1)[0])
    return 0


class Process:
    """One child process with its output in a log file, stopped by PID."""

    def __init__(self, name, argv, workdir, port):
        self.name = name
        self.argv = argv
        self.port = port
        self.log_path = os.path.join(workdir, name + ".out")
        self.workdir = workdir
        self.proc = None

    def start(self):
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(self.argv, cwd=self.workdir, stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        return self

    def wait_ready(self, timeout=10.0):
        """Polls PING until it answers PONG; raises with the output's tail if it never does."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %d at start:\n%s"
                                   % (self.name, self.proc.returncode, self.tail()))
            try:
                if call(self.port, "PING", timeout=1.0) == "PONG":
                    return
            except (OSError, RuntimeError):
                pass
            time.sleep(0.05)
        raise RuntimeError("%s did not answer PING within %.0fs:\n%s"
                           % (self.name, timeout, self.tail()))

    def tail(self, size=2000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-size:].decode(errors="replace")
        except OSError:
            return ""

    def stop(self, timeout=10.0):
        """SIGTERM, then SIGKILL if it is still running after `timeout` seconds."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.kill(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        except ProcessLookupError:
            pass


def ringkv_nodes(binary, workdir, hash_name):
    """Writes TOML configs for a cluster of NODES ringkv-servers; returns their Processes."""
    ports = free_ports(NODES)
    nodes = []
    for i, port in enumerate(ports):
        peers = ", ".join('"127.0.0.1:%d"' % p for p in ports if p != port)
        conf = os.path.join(workdir, "ringkv%d.toml" % (i + 1))
        with open(conf, "w") as f:
            f.write('[server]\nbind = "127.0.0.1"\nport = %d\n'
                    '[cluster]\nself = "127.0.0.1:%d"\npeers = [%s]\nhash = "%s"\n'
                    '[log]\nfile = "%s"\n'
                    % (port, port, peers, hash_name,
                       os.path.join(workdir, "ringkv%d.log" % (i + 1))))
        nodes.append(Process("ringkv%d" % (i + 1), [binary, "--config", conf], workdir, port))
    return nodes


def redis_backends(workdir):
    """NODES redis-servers without persistence, for twemproxy to shard over."""
    backends = []
    for i in range(NODES):
        port = free_port()
        backends.append(Process("redis%d" % (i + 1),
                                [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1",
                                 "--save", "", "--appendonly", "no", "--dir", workdir],
                                workdir, port))
    return backends


def nutcracker(workdir, backends):
    """Writes the twemproxy pool config, checks it with `nutcracker -t`; returns the Process."""
    port = free_port()
    conf = os.path.join(workdir, "nutcracker.yml")
    with open(conf, "w") as f:
        f.write("ringkv_bench:\n"
                "  listen: 127.0.0.1:%d\n"
                "  hash: fnv1a_64\n"
                "  distribution: ketama\n"
                "  redis: true\n"
                "  preconnect: true\n"
                "  auto_eject_hosts: false\n"
                "  server_connections: 1\n"
                "  servers:\n" % port)
        for i, b in enumerate(backends):
            f.write("    - 127.0.0.1:%d:1 redis%d\n" % (b.port, i + 1))
    test = subprocess.run([NUTCRACKER, "-t", "-c", conf], capture_output=True, text=True)
    if test.returncode != 0:
        raise RuntimeError("nutcracker -t rejects %s:\n%s%s" % (conf, test.stdout, test.stderr))
    return Process("nutcracker",
                   [NUTCRACKER, "-c", conf, "-o", os.path.join(workdir, "nutcracker.log"),
                    "-s", str(free_port()), "-a", "127.0.0.1",
                    "-p", os.path.join(workdir, "nutcracker.pid")],
                   workdir, port)


# redis-benchmark warnings already shown, so each is printed once per target.
warned = set()


def redis_benchmark(label, port, requests, clients, pipeline, args):
    """Runs redis-benchmark --csv; returns {test: (rps, p50 ms, p99 ms)}. `args` is either
    ["-t", tests, "-r", range] or a custom command. A warning on stderr such as "Could not fetch
    server CONFIG" (it asks CONFIG GET save/appendonly first; twemproxy rejects CONFIG) is
    harmless, but is shown once per target so it stays visible."""
    cmd = [REDIS_BENCHMARK, "-h", "127.0.0.1", "-p", str(port), "-c", str(clients),
           "-n", str(requests), "-P", str(pipeline), "--csv"] + args
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        raise RuntimeError("%s exited with %d:\n%s" % (" ".join(cmd), res.returncode, res.stderr))
    for line in res.stderr.splitlines():
        if line.strip() and (label, line) not in warned:
            warned.add((label, line))
            print("redis-benchmark on %s: %s" % (label, line.strip()), file=sys.stderr)
    rows = {}
    for row in csv.DictReader(io.StringIO(res.stdout)):
        rows[row["test"]] = (float(row["rps"]), float(row["p50_latency_ms"]),
                             float(row["p99_latency_ms"]))
    return rows


def keep_best(slot, label, row):
    if label not in slot or row[0] > slot[label][0]:
        slot[label] = row


def throughput(entries, backends, requests, rounds):
    """Interleaved SET/GET rounds against each entry point; returns
    ({(test, pipeline): {label: best row}}, proof lines for the twemproxy backends)."""
    results = {}
    proof = []
    for pipeline in PIPELINES:
        n = requests * (4 if pipeline > 1 else 1)
        for r in range(rounds):
            for label, port in entries:
                print("round %d/%d -P %d: %s" % (r + 1, rounds, pipeline, label),
                      file=sys.stderr, flush=True)
                watch = label == "twemproxy" and r == 0
                if watch:
                    before = [(call(b.port, "DBSIZE"), set_calls(b.port)) for b in backends]
                rows = redis_benchmark(label, port, n, 50, pipeline,
                                       ["-t", ",".join(TESTS).lower(), "-r", "100000"])
                if watch:
                    after = [(call(b.port, "DBSIZE"), set_calls(b.port)) for b in backends]
                    proof.append(backend_proof(pipeline, n, before, after))
                for test in TESTS:
                    if test not in rows:
                        raise RuntimeError("redis-benchmark on %s gave no %s row" % (label, test))
                    keep_best(results.setdefault((test, pipeline), {}), label, rows[test])
    return results, proof


def backend_proof(pipeline, n, before, after):
    """(line, ok): whether the twemproxy run reached the backends, by DBSIZE and SET calls."""
    keys_before = sum(int(d) for d, _ in before)
    keys_after = sum(int(d) for d, _ in after)
    sets = sum(a[1] - b[1] for a, b in zip(after, before))
    ok = sets == n and (keys_after > keys_before or keys_before > 0)
    return ("twemproxy -P %d: backends' DBSIZE sum %d -> %d (%s), SET calls +%d for %d sent: %s"
            % (pipeline, keys_before, keys_after,
               "/".join(str(int(d)) for d, _ in after), sets, n, "ok" if ok else "MISMATCH"), ok)


def print_throughput(results):
    print("| command | -P | ringkv rps | twemproxy rps | ratio | goal | ringkv p50/p99 ms | "
          "twemproxy p50/p99 ms |")
    print("|---|---|---:|---:|---:|---|---:|---:|")
    for (test, pipeline), slot in results.items():
        a, b = slot["ringkv"], slot["twemproxy"]
        ratio = a[0] / b[0]
        goal = GOALS[pipeline]
        print("| %s | %d | %.0f | %.0f | %.2f | ≥ %.1f %s | %.3f / %.3f | %.3f / %.3f |"
              % (test, pipeline, a[0], b[0], ratio, goal, "met" if ratio >= goal else "MISSED",
                 a[1], a[2], b[1], b[2]))


def key_owned_by(port, owner, prefix):
    """The first key prefix:N whose CLUSTER OWNER (asked of `port`) is `owner`."""
    for i in range(10000):
        key = "%s:%d" % (prefix, i)
        if call(port, "CLUSTER", "OWNER", key) == owner:
            return key
    raise RuntimeError("no key among %s:0..9999 is owned by %s" % (prefix, owner))


def relay_latency(nodes, requests, rounds):
    """GET of a key node 1 owns vs one node 2 owns, both asked of node 1, with 1 and 50
    clients, interleaved; returns ({(clients, where): best row}, local key, relayed key)."""
    entry = nodes[0].port
    local = key_owned_by(entry, "127.0.0.1:%d" % nodes[0].port, "bench:local")
    relayed = key_owned_by(entry, "127.0.0.1:%d" % nodes[1].port, "bench:relayed")
    for key in (local, relayed):
        if call(entry, "SET", key, "xxx") != "OK" or call(entry, "GET", key) != "xxx":
            raise RuntimeError("SET/GET of %s through node 1 failed" % key)
    results = {}
    for clients in (1, 50):
        n = requests if clients == 1 else requests * 5
        for r in range(rounds):
            for where, key in (("local", local), ("relayed", relayed)):
                print("round %d/%d GET %s -c %d" % (r + 1, rounds, where, clients),
                      file=sys.stderr, flush=True)
                rows = redis_benchmark("ringkv", entry, n, clients, 1, ["GET", key])
                keep_best(results, (clients, where), next(iter(rows.values())))
    return results, local, relayed


def print_relay(results, local, relayed):
    print("| -c | local rps | relayed rps | relayed/local | local p50/p99 ms | "
          "relayed p50/p99 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for clients in (1, 50):
        a, b = results[(clients, "local")], results[(clients, "relayed")]
        print("| %d | %.0f | %.0f | %.2f | %.3f / %.3f | %.3f / %.3f |"
              % (clients, a[0], b[0], b[0] / a[0], a[1], a[2], b[1], b[2]))
    print("\nlocal key %s (owner node 1), relayed key %s (owner node 2)" % (local, relayed))


def ringkv_proof(nodes):
    """Lines showing the SET runs spread keys over every node; raises when a node has none."""
    counts = [keyspace_keys(n.port) for n in nodes]
    relayed = info_field(nodes[0].port, "cluster", "relayed_requests")
    errors = info_field(nodes[0].port, "cluster", "relay_errors")
    line = ("ringkv: db0 keys per node %s, sum %d; node 1 relayed %d requests, %d relay errors"
            % ("/".join(map(str, counts)), sum(counts), relayed, errors))
    if sum(counts) == 0 or min(counts) == 0 or errors:
        raise RuntimeError("ringkv run was not real: " + line)
    return line


def link_peers(nodes):
    """Sends one SET per peer through node 1 so every peer link is up before timing."""
    entry = nodes[0].port
    for peer in nodes[1:]:
        key = key_owned_by(entry, "127.0.0.1:%d" % peer.port, "bench:warmup")
        if call(entry, "SET", key, "1") != "OK":
            raise RuntimeError("relayed SET to %d failed" % peer.port)


def fresh_binary(binary, root):
    """Warns when a source file is newer than the server binary (a stale build skews results)."""
    built = os.path.getmtime(binary)
    for folder in ("server", "cluster", "engine", "protocol", "hashring", "conf"):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in files:
                if name.endswith((".cpp", ".h")) and \
                        os.path.getmtime(os.path.join(dirpath, name)) > built:
                    print("warning: %s is newer than %s; rebuild first"
                          % (os.path.join(dirpath, name), binary), file=sys.stderr)
                    return


def main():
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=os.path.join(root, "build", "ringkv-server"))
    p.add_argument("--requests", type=int, default=100000,
                   help="requests per test at -P 1 (-P 16 runs 4x, the -c 50 GET 5x)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--hash", default="crc32", choices=("crc32", "balanced"),
                   help="ringkv ring hash")
    p.add_argument("--quick", action="store_true", help="short run: 20000 requests, 2 rounds")
    args = p.parse_args()
    if args.quick:
        args.requests, args.rounds = 20000, 2
    binary = os.path.abspath(args.server)
    if not os.access(binary, os.X_OK):
        sys.exit("%s is missing; build it: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && "
                 "cmake --build build -j2" % binary)
    if not os.access(NUTCRACKER, os.X_OK):
        sys.exit("nutcracker is missing: apt-get install -y nutcracker")
    fresh_binary(binary, root)

    workdir = tempfile.mkdtemp(prefix="ringkv-bench-cluster-")
    nodes = ringkv_nodes(binary, workdir, args.hash)
    backends = redis_backends(workdir)
    proxy = nutcracker(workdir, backends)
    started = []
    try:
        for proc in nodes + backends + [proxy]:
            started.append(proc.start())
            proc.wait_ready()
        link_peers(nodes)
        print("ringkv: %d nodes of %s (hash %s), ports %s; twemproxy: nutcracker port %d over "
              "redis-server ports %s" % (NODES, binary, args.hash,
                                         "/".join(str(n.port) for n in nodes), proxy.port,
                                         "/".join(str(b.port) for b in backends)))
        print("redis-benchmark -t set,get -c 50 -r 100000 -n %d (x4 at -P 16) against ringkv "
              "node 1 and nutcracker, best of %d interleaved rounds\n"
              % (args.requests, args.rounds))
        results, proof = throughput([("ringkv", nodes[0].port), ("twemproxy", proxy.port)],
                                    backends, args.requests, args.rounds)
        print_throughput(results)
        print()
        for line, _ in proof:
            print(line)
        print(ringkv_proof(nodes))
        print("\nGET on ringkv node 1, local vs relayed key: redis-benchmark -P 1 -n %d at -c 1, "
              "-n %d at -c 50, best of %d interleaved rounds\n"
              % (args.requests, args.requests * 5, args.rounds))
        print_relay(*relay_latency(nodes, args.requests, args.rounds))
    finally:
        for proc in reversed(started):
            proc.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    if not all(ok for _, ok in proof):
        sys.exit("twemproxy's backends did not run every SET sent: its numbers are not real")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted; every process started was stopped")
