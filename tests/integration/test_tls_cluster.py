"""A 3-node cluster with tls-cluster on: the ring names the nodes' TLS ports, every peer link
(relay, health checks) is TLS with certificates checked both ways, and the cluster secret's
handshake still runs inside. A TLS client on any node reads and writes every node's keys (split
MSET/MGET too); the handshake sent on the plain-text port, where no certificate can be shown, is
refused; a node whose certificate comes from a CA the others do not trust cannot link: its keys
fail with the TLS reason instead of being stored elsewhere, and the others keep serving theirs.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import tls_certs  # noqa: E402
from test_tls import TlsClient  # noqa: E402

SECRET = "tls cluster secret"


def configure(certs, tls_ports, rogue=()):
    def config(i, port, ports):
        me = "127.0.0.1:%d" % tls_ports[i]
        peers = ", ".join('"127.0.0.1:%d"' % p for j, p in enumerate(tls_ports) if j != i)
        cert = "rogue" if i in rogue else "server"
        ca = "rogueca" if i in rogue else "ca"
        return "\n".join([
            "[server]", 'bind = "127.0.0.1"', "port = %d" % port, "tls-port = %d" % tls_ports[i],
            "[cluster]", 'self = "%s"' % me, "peers = [%s]" % peers, 'secret = "%s"' % SECRET,
            "health-interval = 200", "connect-timeout = 1000", "request-timeout = 3000",
            "[tls]", 'tls-cert-file = "%s"' % certs.path(cert + ".crt"),
            'tls-key-file = "%s"' % certs.path(cert + ".key"),
            'tls-ca-cert-file = "%s"' % certs.path(ca + ".crt"), "tls-cluster = true", ""])
    return config


def owner_keys(port, addresses, prefix):
    """One key per node, in the order of `addresses`."""
    found = {}
    with harness.RespClient(port) as c:
        for i in range(5000):
            key = "%s%d" % (prefix, i)
            owner = harness.parse_reply(c.call("CLUSTER", "OWNER", key)).decode()
            found.setdefault(owner, key)
            if len(found) == len(addresses):
                break
    return [found[a] for a in addresses]


def wait_state(port, state, timeout=10.0):
    deadline = time.time() + timeout * harness.timeout_scale()
    fields = {}
    while time.time() < deadline:
        fields = harness.info_fields(port, "CLUSTER", "INFO")
        if fields.get("cluster_state") == state:
            return True
        time.sleep(0.1)
    return False


def check_serving(report, args, certs):
    tls_ports = harness.free_ports(3)
    with harness.Cluster(args.server, 3, name="tlsc",
                         configure=configure(certs, tls_ports)) as cluster:
        addresses = ["127.0.0.1:%d" % p for p in tls_ports]
        keys = owner_keys(cluster.ports[0], addresses, "tk")
        report.check(wait_state(cluster.ports[0], "ok"), "the TLS cluster is ok")
        with TlsClient(tls_ports[0], certs) as c:
            for k in keys:
                report.equal(c.call("SET", k, "v-" + k), b"+OK\r\n", "SET %s through node 1" % k)
            report.equal(c.call("MSET", *[x for k in keys for x in (k + "m", "1")]), b"+OK\r\n",
                         "a split MSET over TLS peer links")
        with TlsClient(tls_ports[1], certs) as c:
            got = harness.parse_reply(c.call("MGET", *keys))
            report.equal(got, [("v-" + k).encode() for k in keys],
                         "MGET of every node's keys through node 2")
        with harness.RespClient(cluster.ports[2]) as c:
            report.equal(harness.parse_reply(c.call("DBSIZE")), 6, "DBSIZE over the cluster")
            report.equal(c.call("RINGKV.PEER", addresses[2], "0" * 16, "f" * 64),
                         b"-ERR peer link refused: tls-cluster requires a TLS link with a "
                         b"certificate the CAs verify\r\n",
                         "the peer handshake on the plain-text port is refused")
            report.check(c.closed_by_peer(), "and that connection is closed")
        for node in cluster.nodes:
            report.check("TLS" not in node.log(tail=None) or "Error" not in node.log(tail=None),
                         "%s logged no TLS error" % node.name, node.log())
            harness.check_clean_exit(report, node)


def check_untrusted(report, args, certs):
    tls_ports = harness.free_ports(3)
    with harness.Cluster(args.server, 3, name="tlsr",
                         configure=configure(certs, tls_ports, rogue=(2,))) as cluster:
        addresses = ["127.0.0.1:%d" % p for p in tls_ports]
        keys = owner_keys(cluster.ports[0], addresses, "rk")
        with TlsClient(tls_ports[0], certs) as c:
            report.equal(c.call("SET", keys[1], "ok"), b"+OK\r\n", "trusted peers still link")
            reply = c.call("SET", keys[2], "x")
            report.check(reply.startswith(b"-ERR peer %s unavailable: " % addresses[2].encode()),
                         "the untrusted node's key fails with a clear error", reply)
        logs = cluster.nodes[0].log(tail=None)
        report.check("certificate verify failed" in logs or "unknown ca" in logs,
                     "node 1 logs why it cannot link to the untrusted node", logs[-3000:])
        for node in cluster.nodes:
            harness.check_clean_exit(report, node)


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_tls_cluster")
    certs = tls_certs.Certs()
    check_serving(report, args, certs)
    check_untrusted(report, args, certs)
    report.finish()


if __name__ == "__main__":
    main()
