"""MIGRATE over TLS, differentially against redis-server 7: with tls-cluster yes, Redis's MIGRATE
speaks TLS to its target (presenting the node's certificate, checking the target's against its
CAs). A ringkv node and a redis-server, both with tls-cluster yes, each migrate to a TLS-only
target redis-server of its own (tls-auth-clients yes: a source without a certificate the
target's CA signed is refused), and every reply, the keys left on each source and the values
and TTLs on each target must match:

  1. one key, several keys with KEYS, COPY and REPLACE, a TTL carried over, another database, a
     second MIGRATE on the cached connection (INFO migrate_cached_sockets);
  2. targets the handshake fails with: a plain-text port, a target whose certificate no CA of
     the source trusts, a port that accepts and never answers (IOERR after the timeout); the
     keys stay on the source;
  3. a source without tls-cluster to a TLS port: IOERR, as Redis.

    /usr/bin/python3 test_migrate_tls.py --server build/ringkv-server
"""

import socket
import threading

import harness
import tls_certs


class Side:
    """One source (ringkv or redis) and its targets: a TLS one, a plain one, a rogue one."""

    def __init__(self, source, tls_target, rogue_target):
        self.source = harness.RespClient(source.port)
        self.tls_target = tls_target
        self.target = harness.RespClient(tls_target.port)
        self.rogue_target = rogue_target


def both(report, sides, what, call):
    """Runs call(side) on both sides; the results must match. Returns ringkv's."""
    got, want = (call(s) for s in sides)
    report.equal(got, want, what)
    return got


def migrate(report, sides, what, port_of, *args):
    return both(report, sides, "MIGRATE " + what,
                lambda s: s.source.call("MIGRATE", "127.0.0.1", str(port_of(s)), *args))


def state(s, keys, db=0):
    """What the source and the target hold of `keys`: type, value, whether a TTL is set."""
    out = []
    for side in (s.source, s.target):
        side.call("SELECT", str(db))
        for k in keys:
            kind = side.call("TYPE", k)
            value = side.call("LRANGE", k, "0", "-1") if kind == b"+list\r\n" else (
                side.call("GET", k) if kind == b"+string\r\n" else None)
            ttl = int(side.call("PTTL", k)[1:-2])
            out.append((k, kind, value, ttl if ttl < 0 else "set"))
        side.call("SELECT", "0")
    return out


def check_migrations(report, sides):
    for s in sides:
        s.source.call("SET", "k1", "v1")
        s.source.call("RPUSH", "l1", "a", "b")
        s.source.call("SET", "k2", "v2", "PX", "100000")
        s.source.call("SET", "k3", "v3")
        s.target.call("SET", "k3", "old")
    tls_port = lambda s: s.tls_target.tls_port  # noqa: E731
    migrate(report, sides, "one key over TLS", tls_port, "k1", "0", "5000")
    migrate(report, sides, "KEYS over TLS", tls_port, "", "0", "5000", "KEYS", "l1", "k2")
    migrate(report, sides, "an existing key", tls_port, "k3", "0", "5000")
    migrate(report, sides, "COPY REPLACE", tls_port, "k3", "0", "5000", "COPY", "REPLACE")
    both(report, sides, "keys and TTLs on source and target",
         lambda s: state(s, ["k1", "l1", "k2", "k3"]))
    both(report, sides, "the connection is kept for the next MIGRATE",
         lambda s: b"migrate_cached_sockets:1" in s.source.call("INFO", "stats"))
    for s in sides:
        s.source.call("SELECT", "3")
        s.source.call("SET", "in3", "x")
    migrate(report, sides, "to database 5", tls_port, "in3", "5", "5000")
    both(report, sides, "database 5 of the target", lambda s: state(s, ["in3"], db=5))
    for s in sides:
        s.source.call("SELECT", "0")


def silent_listener():
    """A port that accepts connections and never answers (a handshake that never ends)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    held = []

    def accept():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return sock, held


def check_failed_handshakes(report, sides):
    for s in sides:
        s.source.call("SET", "stay", "here")
    migrate(report, sides, "to a plain-text port", lambda s: s.tls_target.port, "stay", "0",
            "2000")
    migrate(report, sides, "to a target whose certificate is not trusted",
            lambda s: s.rogue_target.tls_port, "stay", "0", "2000")
    sock, held = silent_listener()
    try:
        migrate(report, sides, "to a port that never answers",
                lambda s: sock.getsockname()[1], "stay", "0", "500")
    finally:
        sock.close()
        for c in held:
            c.close()
    both(report, sides, "the key stays on the source", lambda s: s.source.call("GET", "stay"))


def check_plain_source(report, args, certs, targets):
    """Without tls-cluster a MIGRATE to a TLS port fails as Redis's does."""
    sources = [harness.ServerProcess(args.server, name="ringkv-plain"),
               harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="redis-plain")]
    with sources[0], sources[1]:
        sides = [Side(src, t, None) for src, t in zip(sources, targets)]
        for s in sides:
            s.source.call("SET", "p", "1")
        migrate(report, sides, "without tls-cluster to a TLS port",
                lambda s: s.tls_target.tls_port, "p", "0", "2000")
        both(report, sides, "the key stays", lambda s: s.source.call("GET", "p"))


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_migrate_tls")
    certs = tls_certs.Certs()

    # Every port the six servers listen on, chosen together: ports chosen one at a time, each
    # free when asked, may coincide before any server binds them.
    ports = iter(harness.free_ports(12))

    def tls_server(binary, name, cert="server", tls_cluster=True):
        port = next(ports)
        server = harness.ServerProcess(
            binary, kind=None if binary == args.server else "redis", name=name, port=next(ports),
            extra_args=["--tls-port", str(port), *certs.server_args(name=cert, auth_clients="yes"),
                        *(["--tls-cluster", "yes"] if tls_cluster else [])])
        server.tls_port = port
        return server

    sources = [tls_server(args.server, "ringkv-source"),
               tls_server(harness.REDIS_SERVER, "redis-source")]
    targets = [tls_server(harness.REDIS_SERVER, "target-%d" % i, tls_cluster=False)
               for i in range(2)]
    rogues = [tls_server(harness.REDIS_SERVER, "rogue-%d" % i, cert="rogue", tls_cluster=False)
              for i in range(2)]
    with sources[0], sources[1], targets[0], targets[1], rogues[0], rogues[1]:
        sides = [Side(src, t, r) for src, t, r in zip(sources, targets, rogues)]
        check_migrations(report, sides)
        check_failed_handshakes(report, sides)
        check_plain_source(report, args, certs, targets)
        harness.check_clean_exit(report, sources[0])
    report.finish()


if __name__ == "__main__":
    main()
