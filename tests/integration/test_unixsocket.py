"""Clients over a Unix domain socket (unixsocket, unixsocketperm), as redis-server serves them.

1. One node and a redis-server, each with a socket file (a stale file left at the path first):
   the file is a socket with the permission bits asked for, raw RESP and `redis-cli -s` are
   served on it, CLIENT INFO names such a client by the socket's path (port 0) with flag U,
   MONITOR as unix:<path>, CONFIG GET/SET of both parameters, a TCP client beside it, and the file removed at a clean
   exit. Every reply is compared with redis-server's, the paths masked.
2. A 3-node cluster whose node 1 also listens on a socket: a client there reads and writes keys
   of every owner (relayed to the others over TCP), MGET across owners included.

    /usr/bin/python3 test_unixsocket.py --server build/ringkv-server
"""

import os
import socket
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

OK = b"+OK\r\n"


class UnixClient(harness.RespClient):
    """A RespClient on a Unix domain socket."""

    def __init__(self, path, timeout=5.0):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(path)
        self.sock = sock
        self.reader = harness.ReplyReader(sock)


def observe(binary, tmp, name):
    """What a client of the node sees over the socket, with the socket's path written as PATH."""
    path = os.path.join(tmp, name + ".sock")
    with open(path, "w") as f:
        f.write("left by a crashed server\n")
    notes = []
    s = harness.ServerProcess(binary, name=name,
                              extra_args=["--unixsocket", path, "--unixsocketperm", "700"])
    s.start()
    try:
        st = os.stat(path)
        notes.append(("socket file", (stat.S_ISSOCK(st.st_mode), oct(st.st_mode & 0o777))))
        with UnixClient(path) as c:
            for argv in (("PING",), ("SET", "k", "v"), ("GET", "k"), ("INCR", "n"),
                         ("CONFIG", "SET", "unixsocket", "/x"),
                         ("CONFIG", "SET", "unixsocketperm", "777")):
                notes.append((" ".join(argv), c.call(*argv)))
            pairs = harness.parse_reply(c.call("CONFIG", "GET", "unixsocket*"))
            notes.append(("CONFIG GET unixsocket*",
                          sorted(zip(pairs[0::2], [v.replace(path.encode(), b"PATH")
                                                   for v in pairs[1::2]]))))
            info = harness.parse_reply(c.call("CLIENT", "INFO")).decode()
            fields = dict(f.split("=", 1) for f in info.strip().split(" ") if "=" in f)
            notes.append(("CLIENT INFO", (fields["addr"].replace(path, "PATH"),
                                          fields["laddr"].replace(path, "PATH"), fields["flags"])))
            with harness.RespClient(s.port) as monitor:
                monitor.call("MONITOR")
                c.call("SET", "m", "1")
                line = monitor.read().decode().replace(path, "PATH")
                notes.append(("MONITOR shows the socket client", line.split(" ", 1)[1]))
            with harness.RespClient(s.port) as tcp:
                notes.append(("TCP beside it", tcp.call("GET", "k")))
                ids = {harness.parse_reply(x.call("CLIENT", "ID")): name
                       for x, name in ((c, "unix"), (tcp, "tcp"))}
                listed = harness.parse_reply(tcp.call("CLIENT", "LIST")).decode().splitlines()
                fields = [dict(f.split("=", 1) for f in line.split(" ")) for line in listed]
                notes.append(("CLIENT LIST flags", sorted((ids[int(f["id"])], f["flags"])
                                                         for f in fields if int(f["id"]) in ids)))
        cli = subprocess.run(["redis-cli", "-s", path, "GET", "k"], capture_output=True,
                             timeout=10)
        notes.append(("redis-cli -s", (cli.returncode, cli.stdout)))
        s.stop()
        notes.append(("file after a clean exit", os.path.exists(path)))
    finally:
        s.cleanup()
    return notes


def check_cluster(report, binary, tmp):
    path = os.path.join(tmp, "node1.sock")

    def configure(i, port, ports):
        text = harness.cluster_config(port, ports)
        return text.replace("[server]\n", '[server]\nunixsocket = "%s"\n' % path) if i == 0 \
            else None

    with harness.Cluster(binary, 3, name="unix", configure=configure) as cluster:
        keys = harness.keys_on_each_node(cluster, prefix="u")
        with UnixClient(path) as c:
            for i, key in enumerate(keys):
                owner = harness.parse_reply(c.call("CLUSTER", "OWNER", key)).decode()
                report.equal(c.call("SET", key, "v%d" % i), OK, "SET over the socket: " + owner)
                with harness.RespClient(int(owner.rsplit(":", 1)[1])) as o:
                    report.equal(o.call("GET", key), b"$2\r\nv%d\r\n" % i,
                                 "its owner %s has the value" % owner)
            report.equal(harness.parse_reply(c.call("MGET", *keys)),
                         [b"v%d" % i for i in range(len(keys))], "MGET across owners")


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_unixsocket")
    with tempfile.TemporaryDirectory(prefix="ringkv-unix-") as tmp:
        ours = observe(args.server, tmp, "ringkv")
        theirs = observe("redis-server", tmp, "redis")
        harness.compare_observations(report, ours, theirs)
        report.equal(ours[0], ("socket file", (True, "0o700")), "a socket file, mode 700")
        if not harness.is_redis_binary(args.server):
            check_cluster(report, args.server, tmp)
    report.finish()


if __name__ == "__main__":
    main()
