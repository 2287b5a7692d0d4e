#!/usr/bin/python3
"""Instructions per request: ringkv-server (and optionally a second ringkv build, e.g. the one
before a change) against redis-server, each run under `valgrind --tool=callgrind` with the same
redis-benchmark workload. Instruction counts do not depend on what else the machine is doing, so
this compares the cost of the command path on a busy machine where throughput figures swing.

For each server and test it runs the server alone under callgrind with no traffic (start-up and
shutdown), then with `redis-benchmark -t TEST -n N -P P -c C -r 100000`, and reports
(instructions with traffic - instructions without) / N, and the ratio to redis-server (below 1
means ringkv executes fewer instructions per request).

    /usr/bin/python3 bench/bench_instructions.py [--server build/ringkv-server]
        [--baseline OTHER/ringkv-server] [--tests set,get,incr,lpush,zadd] [--requests 20000]
        [--pipeline 16]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))

import harness  # noqa: E402


def instructions(binary, kind, test, requests, pipeline, clients):
    """Total instructions callgrind counted for one server process (test None: no traffic)."""
    out = tempfile.NamedTemporaryFile(prefix="callgrind.", delete=False).name
    prefix = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]
    # Started under callgrind a server takes seconds to answer, more on a loaded machine.
    with harness.ServerProcess(binary, kind=kind, name=kind, prefix=prefix).start(timeout=120) \
            as srv:
        if test is not None:
            subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(srv.port), "-c",
                            str(clients), "-r", "100000", "-n", str(requests), "-P",
                            str(pipeline), "-t", test, "-q"], capture_output=True, check=True,
                           timeout=600)
    with open(out) as f:
        summary = re.search(r"^summary: (\d+)", f.read(), re.M)
    os.unlink(out)
    return int(summary.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="build/ringkv-server")
    parser.add_argument("--baseline", help="a second ringkv-server binary to compare")
    parser.add_argument("--tests", default="set,get,incr,lpush,zadd")
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--pipeline", type=int, default=16)
    parser.add_argument("--clients", type=int, default=10)
    args = parser.parse_args()

    servers = [("ringkv", os.path.abspath(args.server), "ringkv")]
    if args.baseline:
        servers.append(("baseline", os.path.abspath(args.baseline), "ringkv"))
    servers.append(("redis", harness.REDIS_SERVER, "redis"))
    idle = {label: instructions(binary, kind, None, 0, 1, 1) for label, binary, kind in servers}

    names = [label for label, _, _ in servers]
    print("instructions per request, -P %d, -c %d, %d requests per test"
          % (args.pipeline, args.clients, args.requests))
    print("| test | " + " | ".join(names) + " | " +
          " | ".join("%s/redis" % n for n in names if n != "redis") + " |")
    print("|---|" + "---:|" * (2 * len(names) - 1))
    for test in args.tests.split(","):
        per = {}
        for label, binary, kind in servers:
            total = instructions(binary, kind, test, args.requests, args.pipeline, args.clients)
            per[label] = (total - idle[label]) / args.requests
        print("| %s | " % test + " | ".join("%.0f" % per[n] for n in names) + " | " +
              " | ".join("%.2f" % (per[n] / per["redis"]) for n in names if n != "redis") + " |",
              flush=True)


if __name__ == "__main__":
    main()
