"""What the integration tests' main functions share: a test made of checks that each take the
report and the server binary, the start of a seeded randomized test, ringkv beside a reference
redis-server with what the same scenarios observe on each compared, ringkv as one server or as a
cluster, and the cluster variant of a differential test."""

import contextlib
import sys

import harness


def run_checks(name, doc, *checks):
    """A test's whole main: parses the command line (--server), runs each `check(report, binary)`
    in turn, then finishes the report (exit status 0 when every check passed)."""
    args = harness.arg_parser(doc).parse_args()
    report = harness.Report(name)
    for check in checks:
        check(report, args.server)
    report.finish()


def seeded_start(name, doc, **options):
    """Parses the command line of a seeded randomized test: --server, --seed N and, for each of
    `options`, --OPTION N defaulting to its value (e.g. keys=5000). Seeds the run (printing the
    seed); returns (args, its random.Random, the seed, the test's Report)."""
    parser = harness.arg_parser(doc)
    parser.add_argument("--seed", type=int, default=None)
    for option, default in options.items():
        parser.add_argument("--" + option, type=int, default=default)
    args = parser.parse_args()
    rng, seed = harness.seeded_rng(args.seed)
    return args, rng, seed, harness.Report(name)


@contextlib.contextmanager
def beside_oracle(report, binary, observe):
    """Starts ringkv (`binary`) and a reference redis-server, and checks that `observe(port)` (a
    list of (note, reply) pairs) sees the same on both; the `with` block gets (ringkv's
    ServerProcess, redis-server's) for more checks, and after it ringkv must still be running."""
    with harness.ServerProcess(binary, name="ringkv") as ours, harness.start_oracle() as oracle:
        harness.compare_observations(report, observe(ours.port), observe(oracle.port))
        yield ours, oracle
        report.check(ours.alive(), "ringkv still running", ours.log())


def oracle_check(observe):
    """A check for run_checks: beside_oracle with nothing more to check."""
    def check(report, binary):
        with beside_oracle(report, binary, observe):
            pass
    return check


def server_or_cluster(binary, size, name):
    """The ringkv under test, not started yet: a Cluster of `size` nodes named after `name`, or one
    ServerProcess when `size` is 0. Returns it and its nodes."""
    if size:
        cluster = harness.Cluster(binary, size, name=name)
        return cluster, cluster.nodes
    server = harness.ServerProcess(binary, name="ringkv")
    return server, [server]


def run_in_cluster(main, name, **defaults):
    """The cluster variant of a differential test: its `main(argv, name=name)` with this process's
    command line plus --cluster 3 and --OPTION VALUE for each of `defaults` the line lacks."""
    argv = sys.argv[1:]
    for option, value in dict(cluster=3, **defaults).items():
        if "--" + option not in argv:
            argv += ["--" + option, str(value)]
    main(argv, name=name)
