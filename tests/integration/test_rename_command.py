"""rename-command from the TOML file, differentially against redis-server started with the same
renames: a disabled command (FLUSHALL) and renamed ones (CONFIG, KEYS) are unknown under their old
names and work under the new ones (case-insensitively, subcommands included, inside MULTI), with
Redis's error texts (unknown command, unknown subcommand naming the new name, arity naming the
old one); COMMAND INFO/DOCS/LIST report a renamed command under its original name and leave a
disabled one out. Bad renames stop the server at start with the file, key and reason. In a
2-node cluster with the same renames, a renamed keyspace-wide command fans out to both nodes.
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

RENAMES = {"FLUSHALL": "", "CONFIG": "CFG_x1", "KEYS": "k_e_y_s"}
TOML = '[security]\nrename-command = { %s }\n' % ", ".join(
    '%s = "%s"' % (k, v) for k, v in RENAMES.items())


def redis_args():
    args = []
    for old, new in RENAMES.items():
        args += ["--rename-command", old, new]
    return args


COMMANDS = [
    ("SET", "rn:a", "1"), ("FLUSHALL",), ("flushall", "ASYNC"), ("CONFIG", "GET", "port"),
    ("config", "get", "requirepass"), ("KEYS", "*"), ("CFG_x1", "GET", "requirepass"),
    ("cfg_X1", "get", "protected-mode"), ("CFG_x1",), ("CFG_x1", "NOSUCH"),
    ("CFG_x1", "SET", "nosuch", "1"), ("k_e_y_s", "rn:*"), ("K_E_Y_S",), ("k_e_y_s", "a", "b"),
    ("COMMAND", "INFO", "k_e_y_s", "keys", "flushall", "get"),
    ("COMMAND", "INFO", "cfg_x1|get", "config|get"),
    ("COMMAND", "DOCS", "k_e_y_s", "keys", "flushall"),
    ("COMMAND", "GETKEYS", "k_e_y_s", "*"), ("COMMAND", "GETKEYS", "FLUSHALL"),
    ("MULTI",), ("CFG_x1", "GET", "requirepass"), ("k_e_y_s", "rn:*"), ("EXEC",),
    ("MULTI",), ("FLUSHALL",), ("SET", "rn:b", "2"), ("EXEC",),
    ("GET", "rn:a"),
]


def check_differential(report, mine, theirs):
    with harness.RespClient(mine.port) as a, harness.RespClient(theirs.port) as b:
        for command in COMMANDS:
            report.equal(a.call(*command), b.call(*command), "same reply: %s" % " ".join(command))
        for c in (a, b):
            info = harness.parse_reply(c.call("COMMAND", "INFO", "CFG_x1", "config"))
            report.equal((info[0][0], info[1]), (b"config", None),
                         "COMMAND INFO knows CONFIG by its new name only, and names it config")
        lists = []
        for c in (a, b):
            names = set(harness.parse_reply(c.call("COMMAND", "LIST")))
            lists.append({n: n in names for n in (b"config", b"keys", b"flushall", b"cfg_x1",
                                                  b"k_e_y_s", b"config|get", b"get")})
        report.equal(lists[0], lists[1], "COMMAND LIST names the same of these commands")
        everything = harness.parse_reply(a.call("COMMAND"))
        names = {entry[0] for entry in everything}
        report.check(b"config" in names and b"flushall" not in names,
                     "COMMAND lists the renamed command under its name, not the disabled one")
        report.equal(a.call("COMMAND", "COUNT"), b":%d\r\n" % len(everything),
                     "COMMAND COUNT counts the commands COMMAND lists")
        a.call("CFG_x1", "GET", "port")
        fields = dict(f.split(b"=", 1) for f in
                      harness.parse_reply(a.call("CLIENT", "INFO")).split())
        report.equal(fields.get(b"cmd"), b"client|info", "CLIENT INFO's cmd= works as before")
        a.call("k_e_y_s", "*")
        listed = harness.parse_reply(a.call("CLIENT", "LIST")).decode()
        report.check("cmd=client|info" in listed or "cmd=client|list" in listed,
                     "CLIENT LIST still names commands", listed)


def check_bad_renames(report, binary):
    cases = [
        ('rename-command = { NOSUCH = "x" }', "no such command 'NOSUCH'"),
        ('rename-command = { GET = "SET" }', "cannot rename 'GET' to 'SET'"),
        ('rename-command = { GET = 1 }', "security.rename-command.GET: expected a string"),
        ('rename-command = "GET"', "security.rename-command: expected a table"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bad.toml")
        for line, reason in cases:
            with open(path, "w") as f:
                f.write("[security]\n%s\n" % line)
            run = subprocess.run([binary, "--config", path, "--port", str(harness.free_port())],
                                 capture_output=True, timeout=10)
            err = run.stderr.decode()
            report.check(run.returncode == 2 and path in err and "rename-command" in err
                         and reason in err, "refused at start: %s" % line, repr(err))


def check_cluster(report, binary):
    with harness.Cluster(binary, 2, name="rename", extra=TOML) as cluster:
        keys = ["rc:%d" % i for i in range(40)]
        with harness.RespClient(cluster.ports[0]) as c:
            for k in keys:
                c.call("SET", k, "v")
            found = harness.parse_reply(c.call("k_e_y_s", "rc:*"))
            report.equal(sorted(found), sorted(k.encode() for k in keys),
                         "the renamed KEYS fans out to both nodes")
            report.equal(c.call("FLUSHALL")[:30], b"-ERR unknown command 'FLUSHALL",
                         "FLUSHALL is disabled on the cluster")
            report.equal(c.call("DBSIZE"), b":%d\r\n" % len(keys), "and nothing was flushed")


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_rename_command")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "renames.toml")
        with open(path, "w") as f:
            f.write(TOML)
        with harness.ServerProcess(args.server, name="ringkv-rename",
                                   extra_args=["--config", path]) as mine, \
                harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="redis-rename",
                                      extra_args=redis_args()) as theirs:
            check_differential(report, mine, theirs)
            harness.check_clean_exit(report, mine)
    check_bad_renames(report, args.server)
    check_cluster(report, args.server)
    report.finish()


if __name__ == "__main__":
    main()
