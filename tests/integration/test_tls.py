"""TLS for clients, against redis-server 7.0.15 started with the same throwaway certificates:
redis-cli --tls and redis-py ssl=True (pipelines, a 1 MB value), the same replies byte for byte
over TLS from both servers, client certificates (tls-auth-clients yes, optional, no; a
certificate from a CA the server does not trust), a passphrase-protected key, certificates
reloaded by CONFIG SET without a restart (and a bad one refused, the old one kept), a TLS-only
node (port 0), and the failures: plain text on the TLS port, a TLS hello on the plain port, a
handshake that never finishes (closed after tls-handshake-timeout) - each closes the connection
with a clear log line, and afterwards the node has no connection left over.
"""

import os
import socket
import ssl
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import tls_certs  # noqa: E402

import redis  # noqa: E402


class TlsClient(harness.RespClient):
    """harness.RespClient over TLS."""

    def __init__(self, port, certs, client="client", timeout=10.0):
        context = ssl.create_default_context(cafile=certs.path("ca.crt"))
        context.check_hostname = False
        if client:
            context.load_cert_chain(certs.path(client + ".crt"), certs.path(client + ".key"))
        raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = context.wrap_socket(raw)
        self.reader = harness.ReplyReader(self.sock)

    def server_cn(self):
        cert = self.sock.getpeercert()
        return dict(x[0] for x in cert["subject"])["commonName"]


def how_it_ends(port, certs, request):
    """Sends `request`, which makes the server close the connection; returns its reply and how
    the TLS session ended: "close_notify" (an orderly end) or "cut" (the TCP connection closed
    without one)."""
    context = ssl.create_default_context(cafile=certs.path("ca.crt"))
    context.check_hostname = False
    context.load_cert_chain(certs.path("client.crt"), certs.path("client.key"))
    # Python leaves out OpenSSL's check of the end by default: an EOF without close_notify
    # then reads as one with it.
    context.options &= ~ssl.OP_IGNORE_UNEXPECTED_EOF
    raw = socket.create_connection(("127.0.0.1", port), timeout=5.0)
    with context.wrap_socket(raw, suppress_ragged_eofs=False) as sock:
        sock.sendall(request)
        got = b""
        try:
            while True:
                data = sock.recv(4096)
                if not data:
                    return got, "close_notify"
                got += data
        except ssl.SSLError as e:
            if "UNEXPECTED_EOF" not in str(e):
                raise
            return got, "cut"


def handshake_fails(port, certs, client):
    """True when a TLS client with `client`'s certificate cannot run a command."""
    try:
        with TlsClient(port, certs, client=client, timeout=3.0) as c:
            c.call("PING")
        return False
    except (ssl.SSLError, ConnectionError, OSError):
        return True


def redis_cli(port, certs, *args, client="client"):
    out = subprocess.run([harness.REDIS_CLI, "-p", str(port), *certs.cli_args(client), *args],
                         capture_output=True, timeout=30)
    return out.stdout.decode().strip()


def connected_clients(port, certs=None):
    with (TlsClient(port, certs) if certs else harness.RespClient(port)) as c:
        text = harness.parse_reply(c.call("INFO", "clients")).decode()
    return int(dict(l.split(":", 1) for l in text.splitlines() if ":" in l)["connected_clients"])


def check_clients(report, certs, ports):
    """redis-cli and redis-py over TLS, and the same bytes from both servers."""
    for port in ports:
        report.equal(redis_cli(port, certs, "SET", "tls:k", "v"), "OK", "redis-cli --tls SET")
        report.equal(redis_cli(port, certs, "GET", "tls:k"), "v", "redis-cli --tls GET")
        r = redis.Redis(port=port, ssl=True, ssl_ca_certs=certs.path("ca.crt"),
                        ssl_certfile=certs.path("client.crt"),
                        ssl_keyfile=certs.path("client.key"))
        pipe = r.pipeline(transaction=False)
        for i in range(1000):
            pipe.set("tls:p%d" % i, i)
        pipe.execute()
        pipe = r.pipeline(transaction=False)
        for i in range(1000):
            pipe.get("tls:p%d" % i)
        report.equal(pipe.execute(), [str(i).encode() for i in range(1000)],
                     "redis-py ssl=True: 1000 pipelined SETs and GETs (port %d)" % port)
        big = os.urandom(1 << 20)
        r.set("tls:big", big)
        report.equal(r.get("tls:big"), big, "a 1 MB value over TLS")
        r.close()
    with TlsClient(ports[0], certs) as a, TlsClient(ports[1], certs) as b:
        for args in [("PING",), ("SET", "tls:x", "1"), ("INCR", "tls:x"), ("GET", "nosuch"),
                     ("HSET", "tls:h", "f", "v"), ("HGETALL", "tls:h"), ("NOSUCH",),
                     ("GET",), ("MGET", "tls:x", "tls:h"), ("HELLO", "3"), ("HGETALL", "tls:h")]:
            got, want = a.call(*args), b.call(*args)
            if args[0] == "HELLO":
                got, want = harness.hello_masked(got), harness.hello_masked(want)
            report.equal(got, want, "over TLS: %s" % " ".join(args))


def check_orderly_close(report, certs, ports):
    """A connection the server closes ends its TLS session with close_notify, as Redis's
    SSL_shutdown does: after QUIT, and after a protocol error."""
    for request, what in ((harness.encode_command("QUIT"), "QUIT"),
                          (b"*1\r\n$x\r\n", "a protocol error")):
        ends = [how_it_ends(port, certs, request) for port in ports]
        report.equal(ends[0], ends[1], "%s over TLS: the reply and the session's end" % what)
        report.equal(ends[0][1], "close_notify", "%s over TLS: ends with close_notify" % what)


def check_client_certs(report, certs, mine, theirs):
    ports = (mine.tls_port, theirs.tls_port)
    for port in ports:
        report.check(handshake_fails(port, certs, None),
                     "tls-auth-clients yes: a client without a certificate is refused (%d)" % port)
        report.check(handshake_fails(port, certs, "rogue"),
                     "a certificate from another CA is refused (%d)" % port)
    report.check("Error accepting a client connection" in mine.log(tail=None),
                 "the refusal is logged with OpenSSL's reason", mine.log())
    for value in ("optional", "no"):
        for port in (mine.port, theirs.port):
            with harness.RespClient(port) as c:
                c.call("CONFIG", "SET", "tls-auth-clients", value)
        for port in ports:
            report.check(not handshake_fails(port, certs, None),
                         "tls-auth-clients %s: no certificate needed (%d)" % (value, port))
        if value == "optional":
            for port in ports:
                report.check(handshake_fails(port, certs, "rogue"),
                             "tls-auth-clients optional: an untrusted certificate is still refused")
    for port in (mine.port, theirs.port):
        with harness.RespClient(port) as c:
            c.call("CONFIG", "SET", "tls-auth-clients", "yes")
    with harness.RespClient(mine.port) as a, harness.RespClient(theirs.port) as b:
        for args in [("CONFIG", "GET", "tls-auth-clients"), ("CONFIG", "SET", "tls-auth-clients",
                                                              "maybe"),
                     ("CONFIG", "GET", "tls-cluster"), ("CONFIG", "GET", "tls-session-caching"),
                     ("CONFIG", "GET", "tls-protocols"), ("CONFIG", "GET", "tls-ciphers")]:
            report.equal(a.call(*args), b.call(*args), "CONFIG: %s" % " ".join(args))


def check_reload(report, certs, mine):
    with TlsClient(mine.tls_port, certs) as before:
        report.equal(before.server_cn(), "ringkv-server", "the first certificate")
        with harness.RespClient(mine.port) as admin:
            report.equal(admin.call("CONFIG", "SET", "tls-cert-file", certs.path("server2.crt"),
                                    "tls-key-file", certs.path("server2.key")), b"+OK\r\n",
                         "CONFIG SET of new certificate files")
            with TlsClient(mine.tls_port, certs) as after:
                report.equal(after.server_cn(), "ringkv-server-reloaded",
                             "new connections get the new certificate, without a restart")
            report.equal(before.call("PING"), b"+PONG\r\n", "an open TLS connection goes on")
            bad = admin.call("CONFIG", "SET", "tls-cert-file", certs.path("nosuch.crt"))
            report.equal(bad, b"-ERR CONFIG SET failed (possibly related to argument "
                              b"'tls-cert-file') - Unable to update TLS configuration. Check "
                              b"server logs.\r\n", "a missing certificate file is refused")
            report.equal(harness.parse_reply(admin.call("CONFIG", "GET", "tls-cert-file"))[1],
                         certs.path("server2.crt").encode(), "and the setting is kept")
            with TlsClient(mine.tls_port, certs) as after:
                report.equal(after.server_cn(), "ringkv-server-reloaded",
                             "the working certificate stays in use")


def check_failures(report, certs, mine, theirs):
    # Plain text on the TLS port: no RESP reply, the connection is closed.
    for server in (mine, theirs):
        with harness.RespClient(server.tls_port) as c:
            c.send(b"PING\r\n")
            data, closed = c.read_available(timeout=2.0)
            report.check(closed and b"PONG" not in data,
                         "%s: plain text on the TLS port is closed unanswered" % server.name,
                         repr(data))
    report.check("wrong version number" in mine.log(tail=None) or
                 "http request" in mine.log(tail=None), "and logged with OpenSSL's reason")
    # A TLS hello on the plain port.
    context = ssl.create_default_context(cafile=certs.path("ca.crt"))
    context.check_hostname = False
    with socket.create_connection(("127.0.0.1", mine.port), timeout=3) as raw:
        try:
            context.wrap_socket(raw)
            report.check(False, "a TLS hello on the plain port fails the handshake")
        except (ssl.SSLError, ConnectionError, OSError):
            report.check(True, "a TLS hello on the plain port fails the handshake")
    report.check("TLS handshake arrived on the plain-text port" in mine.log(tail=None),
                 "the plain port says why it closed", mine.log())
    # A handshake that never finishes: silence, and half a ClientHello.
    for data in (b"", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"):
        with harness.RespClient(mine.tls_port) as c:
            if data:
                c.send(data)
            started = time.time()
            closed = c.closed_by_peer(timeout=5.0)
            report.check(closed and time.time() - started < 3.0 * harness.timeout_scale(),
                         "a handshake that never finishes is closed after the timeout")
    report.check("TLS handshake not finished" in mine.log(tail=None), "and logged")
    time.sleep(0.3)
    report.equal(connected_clients(mine.port), 1, "no connection left over (only this one)")


def check_tls_only(report, certs, args):
    port = harness.free_port()
    node = harness.ServerProcess(
        args.server, name="ringkv-tls-only",
        extra_args=["--tls-port", str(port), *certs.server_args(name="server", auth_clients="yes"),
                    "--tls-key-file", certs.path("server-enc.key"), "--tls-key-file-pass",
                    tls_certs.KEY_PASS])
    node.command_line = lambda: node.launcher() + [
        node.binary, "--port", "0", "--bind", "127.0.0.1"] + node.extra_args
    node.start(wait=False)
    try:
        deadline = time.time() + 10 * harness.timeout_scale()
        reply = None
        while time.time() < deadline and reply is None:
            try:
                with TlsClient(port, certs, timeout=1.0) as c:
                    reply = c.call("PING")
            except (OSError, ssl.SSLError):
                time.sleep(0.1)
        report.equal(reply, b"+PONG\r\n", "port 0: a TLS-only node with an encrypted key serves")
        report.equal(redis_cli(port, certs, "SET", "only", "tls"), "OK", "redis-cli on it")
        harness.check_clean_exit(report, node)
    finally:
        node.cleanup()


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_tls")
    certs = tls_certs.Certs()
    ports = harness.free_ports(2)
    mine = harness.ServerProcess(args.server, name="ringkv-tls", extra_args=[
        "--tls-port", str(ports[0]), "--tls-handshake-timeout", "1000", *certs.server_args()])
    theirs = harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="redis-tls",
                                   extra_args=["--tls-port", str(ports[1]), *certs.server_args()])
    mine.tls_port, theirs.tls_port = ports
    with mine, theirs:
        check_clients(report, certs, ports)
        check_orderly_close(report, certs, ports)
        check_client_certs(report, certs, mine, theirs)
        check_reload(report, certs, mine)
        check_failures(report, certs, mine, theirs)
        harness.check_clean_exit(report, mine)
    check_tls_only(report, certs, args)
    report.finish()


if __name__ == "__main__":
    main()
