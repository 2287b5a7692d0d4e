"""redis-cli against ringkv: one-shot commands print what they print against redis-server (raw
and --no-raw formatting), and --pipe mass-loads 10 000 keys with no errors.
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

# Each entry is one redis-cli invocation's arguments; run in order against both servers.
COMMANDS = [
    ["PING"],
    ["PING", "hello world"],
    ["SET", "cli:a", "1"],
    ["SET", "cli:b", "two words"],
    ["SET", "cli:bin", "caf\u00e9 \u2603"],
    ["GET", "cli:a"],
    ["GET", "cli:b"],
    ["GET", "cli:bin"],
    ["GET", "cli:missing"],
    ["INCR", "cli:a"],
    ["INCRBYFLOAT", "cli:a", "0.25"],
    ["MGET", "cli:a", "cli:missing", "cli:b"],
    ["MSET", "cli:c", "3", "cli:d", "4"],
    ["EXISTS", "cli:a", "cli:c", "cli:zz"],
    ["APPEND", "cli:b", "!"],
    ["STRLEN", "cli:b"],
    ["GETRANGE", "cli:b", "0", "2"],
    ["EXPIREAT", "cli:c", "4102444800"],
    ["EXPIRETIME", "cli:c"],
    ["TTL", "cli:d"],
    ["TYPE", "cli:a"],
    ["TYPE", "cli:none"],
    ["INCR", "cli:b"],
    ["SET", "cli:a"],
    ["NOSUCHCOMMAND", "x"],
    ["DEL", "cli:a", "cli:b", "cli:zz"],
    ["ECHO", ""],
    ["DBSIZE"],
    ["OBJECT", "ENCODING", "cli:c"],
    ["CLIENT", "SETNAME", "cli-test"],
    ["FLUSHDB"],
    ["DBSIZE"],
]


def cli(port, args, stdin=None, timeout=60):
    return subprocess.run(
        [harness.REDIS_CLI, "-p", str(port)] + args,
        input=stdin,
        capture_output=True,
        timeout=timeout,
    )


def check_outputs(report, ours, redis):
    for mode in ([], ["--no-raw"]):
        for cmd in COMMANDS:
            got = cli(ours.port, mode + cmd)
            want = cli(redis.port, mode + cmd)
            report.equal(
                (got.returncode, got.stdout, got.stderr),
                (want.returncode, want.stdout, want.stderr),
                "redis-cli %s" % " ".join(mode + cmd),
            )


def check_pipe(report, ours):
    n = 10000
    data = b"".join(
        harness.encode_command("SET", "pipe:%05d" % i, "v%d" % i) for i in range(n)
    )
    res = cli(ours.port, ["--pipe"], stdin=data)
    out = res.stdout.decode(errors="replace")
    report.equal(res.returncode, 0, "redis-cli --pipe exit code")
    report.check("errors: 0, replies: %d" % n in out, "redis-cli --pipe summary", out[-300:])
    res = cli(ours.port, ["DBSIZE"])
    report.equal(res.stdout, b"%d\n" % n, "DBSIZE after --pipe")
    res = cli(ours.port, ["GET", "pipe:09999"])
    report.equal(res.stdout, b"v9999\n", "last piped key readable")


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_redis_cli")
    with harness.ServerProcess(args.server, name="ringkv") as ours, \
            harness.start_oracle() as redis:
        check_outputs(report, ours, redis)
        check_pipe(report, ours)
        report.check(ours.alive(), "server still running", ours.log())
        harness.check_clean_exit(report, ours)
    report.finish()


if __name__ == "__main__":
    main()
