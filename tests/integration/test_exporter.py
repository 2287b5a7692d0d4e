"""prometheus-redis-exporter (Debian's 1.45) scraping ringkv, against it scraping a
redis-server 7.0.15 given the same commands: the exporter logs no error and sees the node up,
ringkv exports at least 120 metric names, and every name redis-server's scrape has that
ringkv's lacks is listed, with the reason, in the README's exporter section (between its
`<!-- exporter-missing:begin -->` markers). A node of a 3-node cluster is scraped too, and its
ring and relay fields come out as metrics.
"""

import os
import re
import subprocess
import sys
import time
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

EXPORTER = "/usr/bin/prometheus-redis-exporter"
README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
MIN_NAMES = 120


def workload(port):
    """The same commands on both servers: keys with TTLs, an error, a slow log entry, a script."""
    with harness.RespClient(port) as c:
        c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
        for i in range(20):
            c.call("SET", "exp:%d" % i, "v" * i, "EX", "1000")
        c.call("RPUSH", "exp:list", "a", "b")
        c.call("INCR", "exp:list")
        c.call("GET", "exp:none")
        c.call("EVAL", "return 1", "0")
        c.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")


def scrape(port):
    """(metric names, exporter log, exposition text) of one scrape of the server on `port`."""
    web = harness.free_port()
    log_path = os.path.join(tempfile.mkdtemp(prefix="ringkv-it-exporter-"), "log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([EXPORTER, "-redis.addr", "redis://127.0.0.1:%d" % port,
                                 "-web.listen-address", "127.0.0.1:%d" % web],
                                stdout=log, stderr=subprocess.STDOUT)
    try:
        text, deadline = None, time.time() + 15
        while text is None and time.time() < deadline:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % web, timeout=10) as r:
                    text = r.read().decode()
            except OSError:
                time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    with open(log_path) as f:
        log = f.read()
    names = {m.group(1) for m in re.finditer(r"^(redis_\w+)[ {]", text or "", re.M)}
    return names, log, text or ""


def readme_explained():
    """The metric names the README's exporter section explains."""
    with open(README) as f:
        text = f.read()
    m = re.search(r"<!-- exporter-missing:begin -->(.*?)<!-- exporter-missing:end -->", text, re.S)
    return set(re.findall(r"`(redis_\w+)`", m.group(1))) if m else set()


def main():
    args = harness.arg_parser(__doc__.splitlines()[0]).parse_args()
    report = harness.Report("exporter")
    if not os.path.exists(EXPORTER):
        report.skip("%s is not installed (scripts/packages.sh installs it)" % EXPORTER)
    with harness.ServerProcess(args.server, name="ringkv") as ours, \
            harness.start_oracle() as theirs:
        workload(ours.port)
        workload(theirs.port)
        mine, log, text = scrape(ours.port)
        ref, ref_log, _ = scrape(theirs.port)
    report.check("level=error" not in log, "the exporter logs no error for ringkv", log[-2000:])
    report.check("level=error" not in ref_log, "the exporter logs no error for redis", ref_log)
    report.check(re.search(r"^redis_up 1$", text, re.M) is not None, "redis_up 1")
    missing = sorted(ref - mine)
    print("metric names: ringkv %d, redis-server %d" % (len(mine), len(ref)))
    print("redis-server's names ringkv lacks (%d): %s" % (len(missing), " ".join(missing)))
    report.check(len(mine) >= MIN_NAMES, "ringkv exports at least %d metric names" % MIN_NAMES,
                 "got %d" % len(mine))
    unexplained = [name for name in missing if name not in readme_explained()]
    report.equal(unexplained, [], "every name ringkv lacks is explained in the README")
    stale = sorted(readme_explained() & mine)
    report.equal(stale, [], "the README explains no name ringkv exports")
    for name in ("redis_commands_total", "redis_errors_total", "redis_slowlog_length",
                 "redis_latency_percentiles_usec", "redis_memory_used_peak_bytes"):
        report.check(name in mine, "ringkv exports %s" % name)
    with harness.Cluster(args.server, 3, name="exporter") as cluster:
        names, log, _ = scrape(cluster.ports[0])
    report.check("level=error" not in log, "the exporter logs no error for a cluster node",
                 log[-2000:])
    report.check(len(names) >= MIN_NAMES, "a cluster node exports at least %d names" % MIN_NAMES,
                 "got %d" % len(names))
    report.finish()


if __name__ == "__main__":
    main()
