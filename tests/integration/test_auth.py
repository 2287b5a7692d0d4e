"""requirepass, differentially against redis-server started with the same password: NOAUTH for
every kind of command before AUTH (unknown commands and wrong arities reported first), AUTH and
HELLO ... AUTH in their right and wrong forms, pipelined AUTH, AUTH inside MULTI, RESET logging
the client out, RESP3, CONFIG SET requirepass at run time (connected clients stay logged in;
an empty password lifts the requirement), and Redis's size limits on unauthenticated requests.
Every reply is compared byte for byte (HELLO's client id masked).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

PASSWORD = "s3cret pass"  # a space: the password is one argument, whatever it holds


def Pair(report, ringkv_port, redis_port, label):
    return harness.DiffPair(report, ringkv_port, redis_port, label)


# Commands of every kind a client may try first: reads, writes, keyspace-wide, admin, pub/sub,
# transactions, connection commands that need authentication, and arity/unknown errors.
BEFORE_AUTH = [
    ("GET", "k"), ("SET", "k", "v"), ("DEL", "k"), ("MGET", "a", "b"), ("INCR", "n"),
    ("LPUSH", "l", "x"), ("BLPOP", "l", "0"), ("ZADD", "z", "1", "m"), ("HSET", "h", "f", "v"),
    ("PING",), ("PING", "hi"), ("ECHO", "x"), ("SELECT", "0"), ("DBSIZE",), ("KEYS", "*"),
    ("SCAN", "0"), ("FLUSHALL",), ("INFO",), ("CONFIG", "GET", "requirepass"),
    ("CONFIG", "SET", "requirepass", ""), ("CLIENT", "ID"), ("CLIENT", "SETNAME", "x"),
    ("COMMAND", "COUNT"), ("TIME",), ("SUBSCRIBE", "c"), ("PUBLISH", "c", "m"),
    ("MULTI",), ("EXEC",), ("DISCARD",), ("WATCH", "k"), ("SHUTDOWN",),
    ("NOSUCHCOMMAND", "x"), ("GET",), ("SET", "k"), ("CONFIG", "NOSUCH"), ("CONFIG",),
    ("HELLO",), ("HELLO", "3"), ("HELLO", "2", "SETNAME", "x"), ("HELLO", "4"),
    ("HELLO", "x"), ("HELLO", "3", "BOGUS"), ("GET", "k"),
    # Protected commands are refused for what they are before NOAUTH; MODULE LIST is not one.
    ("DEBUG", "SLEEP", "0"), ("MODULE", "LOAD", "x.so"), ("MODULE", "UNLOAD"), ("MODULE", "LIST"),
    ("READONLY",),
]


def check_noauth(report, ports):
    with Pair(report, *ports, "before AUTH") as p:
        for command in BEFORE_AUTH:
            p.call(*command)
        p.call("QUIT")


def check_auth_forms(report, ports):
    with Pair(report, *ports, "AUTH forms") as p:
        p.call("AUTH")
        p.call("AUTH", "wrong")
        p.call("AUTH", "default", "wrong")
        p.call("AUTH", "bob", PASSWORD)
        p.call("AUTH", "a", "b", "c")
        p.call("AUTH", PASSWORD[:-1])
        p.call("AUTH", PASSWORD + "x")
        p.call("GET", "k")
        p.call("AUTH", PASSWORD)
        p.call("SET", "auth:k", "v")
        p.call("GET", "auth:k")
        # A failed AUTH leaves an authenticated client authenticated.
        p.call("AUTH", "wrong")
        p.call("GET", "auth:k")
        p.call("AUTH", "default", PASSWORD)
        p.call("CLIENT", "SETNAME", "authed")
        p.call("CLIENT", "GETNAME")
    with Pair(report, *ports, "AUTH default") as p:
        p.call("AUTH", "DEFAULT", PASSWORD)
        p.call("AUTH", "default", PASSWORD)
        p.call("GET", "auth:k")
        fields = dict(f.split(b"=", 1) for f in
                      harness.parse_reply(p.mine.call("CLIENT", "INFO")).split())
        report.equal(fields.get(b"user"), b"default", "CLIENT INFO shows user=default")


def check_hello_auth(report, ports):
    with Pair(report, *ports, "HELLO AUTH") as p:
        p.call("HELLO", "3", "AUTH", "default", "wrong")
        p.call("HELLO", "3", "AUTH", "bob", PASSWORD)
        p.call("HELLO", "3", "AUTH", "default")
        p.call("HELLO", "3", "AUTH")
        p.call("HELLO", "4", "AUTH", "default", PASSWORD)
        p.call("HELLO", "x", "AUTH", "default", PASSWORD)
        p.call("HELLO", "3", "AUTH", "default", "wrong", "SETNAME", "n1")
        p.call("HELLO", "3", "SETNAME", "n1")
        p.call("GET", "auth:k")
        p.call("CLIENT", "GETNAME")
        p.call("HELLO", "3", "AUTH", "default", PASSWORD, "SETNAME", "n1")
        # RESP3 now: replies and errors in RESP3.
        p.call("GET", "auth:k")
        p.call("HGETALL", "auth:none")
        p.call("CLIENT", "GETNAME")
        p.call("AUTH", "wrong")
        p.call("HELLO", "2", "AUTH", "default", "wrong")
        p.call("HELLO", "2")
    with Pair(report, *ports, "HELLO AUTH bad name") as p:
        # Authenticated first, then the name is refused: the client stays authenticated.
        p.call("HELLO", "3", "AUTH", "default", PASSWORD, "SETNAME", "bad name")
        p.call("GET", "auth:k")
        p.call("HELLO")
    with Pair(report, *ports, "HELLO 2 AUTH") as p:
        p.call("HELLO", "2", "AUTH", "default", PASSWORD)
        p.call("GET", "auth:k")
    with Pair(report, *ports, "HELLO AUTH without version") as p:
        p.call("HELLO", "AUTH", "default", PASSWORD)


def check_pipelined(report, ports):
    with Pair(report, *ports, "pipelined AUTH") as p:
        p.pipeline([("GET", "auth:k"), ("AUTH", "wrong"), ("SET", "p", "1"), ("AUTH", PASSWORD),
                    ("SET", "auth:p", "1"), ("INCR", "auth:p"), ("AUTH", "nope"),
                    ("GET", "auth:p"), ("PING",)])
    with Pair(report, *ports, "pipelined HELLO AUTH") as p:
        p.pipeline([("PING",), ("HELLO", "3", "AUTH", "default", PASSWORD), ("PING",),
                    ("GET", "auth:p"), ("RESET",), ("PING",), ("GET", "auth:p")])


def check_multi(report, ports):
    with Pair(report, *ports, "MULTI before AUTH") as p:
        p.call("MULTI")
        p.call("SET", "auth:m", "1")
        p.call("EXEC")
        p.call("AUTH", PASSWORD)
        p.call("EXEC")
    with Pair(report, *ports, "AUTH inside MULTI") as p:
        p.call("AUTH", PASSWORD)
        p.call("MULTI")
        p.call("AUTH", "wrong")
        p.call("AUTH", PASSWORD)
        p.call("HELLO", "3", "AUTH", "default", "wrong")
        p.call("SET", "auth:m", "2")
        p.call("EXEC")
        p.call("GET", "auth:m")


def check_reset(report, ports):
    with Pair(report, *ports, "RESET") as p:
        p.call("HELLO", "3", "AUTH", "default", PASSWORD, "SETNAME", "r")
        p.call("GET", "auth:k")
        p.call("SUBSCRIBE", "ch")
        p.call("RESET")
        p.call("GET", "auth:k")
        p.call("CLIENT", "GETNAME")
        p.call("PING")
        p.call("AUTH", PASSWORD)
        p.call("GET", "auth:k")
        p.call("MULTI")
        p.call("RESET")
        p.call("EXEC")


def check_config_set(report, ports):
    with Pair(report, *ports, "CONFIG SET requirepass") as admin:
        admin.call("AUTH", PASSWORD)
        admin.call("CONFIG", "GET", "requirepass")
        with Pair(report, *ports, "connected before the change") as early:
            early.call("AUTH", PASSWORD)
            admin.call("CONFIG", "SET", "requirepass", "other")
            admin.call("CONFIG", "GET", "requirepass")
            admin.call("GET", "auth:k")
            early.call("GET", "auth:k")
            with Pair(report, *ports, "after the change") as late:
                late.call("GET", "auth:k")
                late.call("AUTH", PASSWORD)
                late.call("AUTH", "other")
                late.call("GET", "auth:k")
        with Pair(report, *ports, "never authenticated") as idle:
            idle.call("PING")
            admin.call("CONFIG", "SET", "requirepass", "")
            # No password: everybody may run commands, AUTH <password> is refused.
            idle.call("PING")
            idle.call("AUTH", "anything")
            idle.call("AUTH", "default", "anything")
            idle.call("AUTH", "bob", "anything")
            idle.call("HELLO", "3", "AUTH", "default", "anything")
            idle.call("HELLO", "3", "AUTH", "bob", "anything")
            admin.call("CONFIG", "SET", "requirepass", PASSWORD)
            # It connected while a password was required and never authenticated.
            idle.call("HELLO", "2")
            idle.call("PING")
        with Pair(report, *ports, "connected with no password") as fresh:
            fresh.call("GET", "auth:k")
        admin.call("CONFIG", "GET", "requirepass")


def check_unauthenticated_limits(report, ports):
    """Before AUTH, Redis refuses requests of more than 10 arguments or with an argument over
    16384 bytes (and closes the connection); after AUTH they run."""
    big = "x" * 16385
    cases = [("11 arguments", ("MSET",) + ("k", "v") * 5),
             ("a 16385-byte argument", ("SET", "k", big)),
             ("10 arguments, 16384 bytes", ("MSET", "k", "x" * 16384) + ("k", "v") * 3 + ("k",))]
    for label, command in cases:
        seen = []
        for port in ports:
            with harness.RespClient(port) as c:
                c.send(harness.encode_command(*command) + harness.encode_command("PING"))
                seen.append(c.read_available(timeout=0.5))
        report.equal(seen[0], seen[1], "before AUTH, %s: same reply and close" % label)
    # Pipelined in one write, each request is read with the limits of the client's state after
    # the one before: AUTH lifts them for the request that follows, RESET brings them back.
    eleven = harness.encode_command("MSET", *(("k", "v") * 5))
    for label, before in (("after a pipelined AUTH", []),
                          ("after a pipelined RESET", [("AUTH", PASSWORD), ("PING",)])):
        seen = []
        for port in ports:
            with harness.RespClient(port) as c:
                for command in before:
                    c.call(*command)
                first = ("AUTH", PASSWORD) if not before else ("RESET",)
                c.send(harness.encode_command(*first) + eleven + harness.encode_command("PING"))
                seen.append(c.read_available(timeout=0.5))
        report.equal(seen[0], seen[1], "11 arguments %s: same replies (and close)" % label)
    with Pair(report, *ports, "limits after AUTH") as p:
        p.call("AUTH", PASSWORD)
        p.call("MSET", *(("k", "v") * 5))
        p.call("SET", "auth:big", big)
        p.call("STRLEN", "auth:big")


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_auth")
    extra = ["--requirepass", PASSWORD]
    with harness.ServerProcess(args.server, name="ringkv-auth", extra_args=extra) as mine, \
            harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="redis-auth",
                                  extra_args=extra) as theirs:
        ports = (mine.port, theirs.port)
        check_noauth(report, ports)
        check_auth_forms(report, ports)
        check_hello_auth(report, ports)
        check_pipelined(report, ports)
        check_multi(report, ports)
        check_reset(report, ports)
        check_config_set(report, ports)
        check_unauthenticated_limits(report, ports)
        harness.check_clean_exit(report, mine)
    report.finish()


if __name__ == "__main__":
    main()
