#!/usr/bin/env python3
"""Per-client limits: maxclients (Redis's text, the slot freed on disconnect), proto-max-bulk-len
and client-query-buffer-limit (against redis-server), the output of a client that never reads
its replies (bounded with the defaults, disconnected under a configured normal limit with
Redis's log line) and the idle timeout."""

import socket
import sys
import time

import harness
import main_support

BIG = 1024 * 1024


def both(binary):
    return harness.ServerProcess(binary, name="ringkv"), harness.start_oracle()


def check_maxclients(report, binary):
    srv, oracle = both(binary)
    with srv, oracle:
        replies = {}
        for name, port in (("ringkv", srv.port), ("redis", oracle.port)):
            with harness.RespClient(port) as admin:
                got = [admin.call("CONFIG", "SET", "maxclients", "2")]
                with harness.RespClient(port) as second:
                    got.append(second.call("PING"))
                    third = harness.RespClient(port)
                    got.append(third.read())
                    got.append(third.closed_by_peer(5))
                    third.close()
                # The second client's slot is free again.
                time.sleep(0.2)
                with harness.RespClient(port) as again:
                    got.append(again.call("PING"))
                got.append(admin.call("CONFIG", "SET", "maxclients", "10000"))
                replies[name] = got
        report.equal(replies["ringkv"], replies["redis"], "maxclients replies match redis")
        report.equal(replies["ringkv"][2], b"-ERR max number of clients reached\r\n",
                     "a client over maxclients gets Redis's text")
        report.check(int(harness.info_fields(srv.port, "INFO", "stats")["rejected_connections"])
                     == 1, "INFO counts the rejected connection")


def check_request_limits(report, binary):
    """proto-max-bulk-len and client-query-buffer-limit, byte for byte against Redis."""
    srv, oracle = both(binary)
    with srv, oracle:
        replies = {}
        for name, port in (("ringkv", srv.port), ("redis", oracle.port)):
            got = []
            with harness.RespClient(port) as c:
                got.append(c.call("CONFIG", "SET", "proto-max-bulk-len", "1000"))
                got.append(c.call("CONFIG", "SET", "proto-max-bulk-len", "1mb"))
                got.append(c.call("CONFIG", "GET", "proto-max-bulk-len"))
                got.append(c.call("CONFIG", "SET", "client-query-buffer-limit", "1000"))
                got.append(c.call("CONFIG", "SET", "client-query-buffer-limit", "1mb"))
                got.append(c.call("CONFIG", "GET", "client-query-buffer-limit"))
                got.append(c.call("CONFIG", "GET", "client-output-buffer-limit"))
                got.append(c.call("CONFIG", "SET", "client-output-buffer-limit", "normal 1 2"))
                got.append(c.call("CONFIG", "SET", "client-output-buffer-limit", "master 1 2 3"))
                got.append(c.call("CONFIG", "SET", "client-output-buffer-limit", "normal 1x 2 3"))
                got.append(c.call("CONFIG", "SET", "client-output-buffer-limit",
                                  "normal 4mb 2mb 10 pubsub 64mb 16mb 30"))
                got.append(c.call("CONFIG", "GET", "client-output-buffer-limit"))
                got.append(c.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0"))
            # A bulk over proto-max-bulk-len: protocol error, then closed.
            with harness.RespClient(port) as c:
                c.send(b"*2\r\n$3\r\nGET\r\n$%d\r\n" % (BIG + 1))
                got.append(c.read())
                got.append(c.closed_by_peer(5))
            # Unparsed input past client-query-buffer-limit (a bulk being sent, within
            # proto-max-bulk-len after raising it): closed without a reply.
            with harness.RespClient(port) as c:
                c.call("CONFIG", "SET", "proto-max-bulk-len", "8mb")
                c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % (4 * BIG))
                try:
                    c.send(b"x" * (2 * BIG))
                except OSError:
                    pass
                got.append(c.read_available(2)[0])
                got.append(c.closed_by_peer(5))
            # Requests under the limit still work, however many are pipelined at once.
            with harness.RespClient(port) as c:
                c.send(harness.encode_command("SET", "k", "x" * (BIG // 2)) * 8)
                got.append([c.read() for _ in range(8)])
                got.append(c.call("STRLEN", "k"))
            replies[name] = got
        report.equal(replies["ringkv"], replies["redis"], "request limits match redis")
        report.check("max query buffer length" in srv.log(tail=None),
                     "the query buffer limit is logged as Redis logs it", srv.log())
        with harness.RespClient(srv.port) as c:
            report.equal(c.call("PING"), b"+PONG\r\n", "the node serves others afterwards")


def silent_client(port, request, count):
    """A client that sends `count` copies of `request` and never reads a reply."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    sock.settimeout(5)
    try:
        sock.sendall(request * count)
    except OSError:
        pass  # the server stopped reading, or closed it
    return sock


def closed(sock, timeout=10.0):
    """True when the server closed `sock` (reading and dropping what it had sent)."""
    sock.settimeout(timeout)
    try:
        while sock.recv(1 << 20):
            pass
        return True
    except (socket.timeout, TimeoutError):
        return False
    except ConnectionResetError:
        return True


def check_output_limits(report, binary):
    with harness.ServerProcess(binary, name="output") as srv, \
            harness.RespClient(srv.port) as admin:
        admin.call("SET", "big", "x" * BIG)
        admin.send(b"".join(harness.encode_command("RPUSH", "list", *(["e" * 100] * 1000))
                            for _ in range(10)))
        for _ in range(10):
            admin.read()
        base_kb = srv.rss_kb()
        # Defaults (normal class unlimited): the node stops running the pipeline while the
        # client's unsent output is large, so memory stays bounded.
        for request in (harness.encode_command("GET", "big"),
                        harness.encode_command("LRANGE", "list", "0", "-1")):
            sock = silent_client(srv.port, request, 300)
            time.sleep(1.0)
            grown_mb = (srv.rss_kb() - base_kb) / 1024
            print("non-reading client, 300 x %s: RSS +%.0f MB"
                  % (request.split(b"\r\n")[2].decode(), grown_mb))
            report.check(harness.rss_distortion(binary) or grown_mb < 120, "a client that never reads its %s replies holds a "
                         "bounded amount of memory (%.0f MB for 300 MB of replies)"
                         % (request.split(b"\r\n")[2].decode(), grown_mb))
            report.equal(admin.call("PING"), b"+PONG\r\n", "others are served meanwhile")
            sock.close()
        time.sleep(0.5)
        # A configured normal limit disconnects the client, with Redis's log line.
        admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 8mb 4mb 10")
        sock = silent_client(srv.port, harness.encode_command("GET", "big"), 100)
        report.check(closed(sock), "a client over the normal hard limit is disconnected")
        sock.close()
        report.check("scheduled to be closed ASAP for overcoming of output buffer limits"
                     in srv.log(tail=None), "the disconnection is logged as Redis logs it")
        # The soft limit: over it for longer than its period.
        admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 2mb 1")
        sock = silent_client(srv.port, harness.encode_command("GET", "big"), 40)
        time.sleep(1.5)
        report.equal(admin.call("PING"), b"+PONG\r\n", "others are served meanwhile")
        # The soft limit is checked as output is added, so one more request triggers it.
        try:
            sock.sendall(harness.encode_command("GET", "big"))
        except OSError:
            pass
        report.check(closed(sock), "a client over the soft limit for its period is disconnected")
        sock.close()
        # A client reading its replies is not cut off by the limits (a pipeline whose replies
        # together pass the hard limit would be, as in Redis).
        admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 8mb 4mb 10")
        with harness.RespClient(srv.port) as c:
            replies = []
            for _ in range(10):
                c.send(harness.encode_command("GET", "big") * 3)
                replies += [c.read() for _ in range(3)]
            report.check(all(r == b"$%d\r\n%s\r\n" % (BIG, b"x" * BIG) for r in replies),
                         "a reading client gets all its big replies")


def check_timeout(report, binary):
    with harness.ServerProcess(binary, name="timeout") as srv:
        with harness.RespClient(srv.port) as admin:
            report.equal(admin.call("CONFIG", "SET", "timeout", "1"), b"+OK\r\n",
                         "CONFIG SET timeout")
        with harness.RespClient(srv.port) as idle:
            idle.call("PING")
            report.check(idle.closed_by_peer(5), "an idle client is closed after timeout")


def main():
    main_support.run_checks("test_client_limits", __doc__, check_maxclients,
                            check_request_limits, check_output_limits, check_timeout)


if __name__ == "__main__":
    sys.exit(main())
