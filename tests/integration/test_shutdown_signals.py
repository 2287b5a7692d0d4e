#!/usr/bin/env python3
"""What SIGTERM and SIGINT do (shutdown-on-sigterm, shutdown-on-sigint), differential against
redis-server 7.0.15: by default a signal shuts down as SHUTDOWN does (saving when save rules are
set); `nosave` exits without saving, `save` saves without save rules; a save that fails keeps the
server up, serving, unless `force`. CONFIG GET and SET of the two parameters (flags in any order,
shown in Redis's order, SAVE and NOSAVE refused together) are compared too.
"""

import os
import shutil
import signal
import time

import harness
import main_support

# Each scenario: the parameter and value set, the signal, and whether the save must fail.
SCENARIOS = [
    ("default", "shutdown-on-sigterm", "default", signal.SIGTERM, True, False),
    ("nosave", "shutdown-on-sigterm", "nosave", signal.SIGTERM, True, False),
    ("save without save rules", "shutdown-on-sigint", "save", signal.SIGINT, False, False),
    ("SIGINT by default without save rules", "shutdown-on-sigint", "default", signal.SIGINT,
     False, False),
    ("a failing save", "shutdown-on-sigterm", "default", signal.SIGTERM, True, True),
]

VALUES = ["nosave", "save now", "save nosave", "force NOSAVE now", "default", "bogus",
          "default save", ""]


def exited(server, seconds=5):
    """The exit code once the process exits within `seconds`, else None."""
    deadline = time.time() + seconds * harness.timeout_scale()
    while time.time() < deadline:
        if server.proc.poll() is not None:
            return server.proc.returncode
        time.sleep(0.05)
    return None


def scenario(binary, what, name, value, signum, rules, failing):
    kind = "redis" if harness.is_redis_binary(binary) else "ringkv"
    seen = []
    with harness.ServerProcess(binary, kind=kind, name=kind) as server:
        rdb = os.path.join(server.dir, "dump.rdb")
        with harness.RespClient(server.port) as c:
            c.call("CONFIG", "SET", "save", "3600 1" if rules else "")
            seen.append(("%s: CONFIG SET" % what, c.call("CONFIG", "SET", name, value)))
            c.call("SET", "k", "v")
        if failing:
            # The working directory goes: the snapshot's temporary file cannot be made.
            shutil.rmtree(server.dir)
        os.kill(server.pid, signum)
        code = exited(server, 2 if failing else 5)
        seen.append(("%s: exit code" % what, code))
        seen.append(("%s: dump.rdb written" % what, os.path.exists(rdb)))
        if failing and code is None:
            with harness.RespClient(server.port) as c:
                seen.append(("%s: still serving" % what, c.call("GET", "k")))
                c.call("CONFIG", "SET", name, "force")
            os.kill(server.pid, signum)
            seen.append(("%s: with force, exit code" % what, exited(server)))
    return seen


def observe(binary):
    seen = []
    with harness.ServerProcess(binary, name="config") as server, \
            harness.RespClient(server.port) as c:
        for name in ("shutdown-on-sigterm", "shutdown-on-sigint"):
            seen.append(("CONFIG GET " + name, c.call("CONFIG", "GET", name)))
            for value in VALUES:
                seen.append(("CONFIG SET %s %r" % (name, value),
                             c.call("CONFIG", "SET", name, value)))
                seen.append(("then CONFIG GET", c.call("CONFIG", "GET", name)))
    for s in SCENARIOS:
        seen += scenario(binary, *s)
    return seen


def check(report, binary):
    harness.compare_observations(report, observe(binary), observe(harness.REDIS_SERVER))


def main():
    main_support.run_checks("shutdown_signals", __doc__, check)


if __name__ == "__main__":
    main()
