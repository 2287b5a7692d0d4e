"""ACL users in a 3-node cluster (cluster secret and requirepass set): ACL SETUSER and DELUSER
sent to one node reach every member, so a user exists everywhere and logs in on any node; its
command, key and channel rights are checked on the node the client is connected to, before
anything is relayed (a refused write to a peer's key never reaches the peer, and only the
refusing node logs it in its ACL LOG); allowed commands on peers' keys, split MSET/MGET and
transactions work as for the default user; a refused rule is refused by every node alike; DELUSER
disconnects the user's clients on every node. A script relayed to its key's owner runs its
redis.call()s there with its caller's rights.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

PASSWORD = "adminpw"
SECRET = "acl cluster secret"


def configure(i, port, ports):
    return harness.cluster_config(port, ports, cluster_options={"secret": SECRET},
                                  extra='[security]\nrequirepass = "%s"\n' % PASSWORD)


def admin(port):
    c = harness.RespClient(port)
    assert c.call("AUTH", PASSWORD) == b"+OK\r\n"
    return c


def as_user(port, user, password):
    c = harness.RespClient(port)
    reply = c.call("AUTH", user, password)
    return c, reply


def owned_by(port, node_address, prefix, n=1):
    """`n` keys starting with `prefix` that the cluster places on `node_address`."""
    keys = []
    with admin(port) as c:
        for i in range(10000):
            key = "%s%d" % (prefix, i)
            if harness.parse_reply(c.call("CLUSTER", "OWNER", key)).decode() == node_address:
                keys.append(key)
                if len(keys) == n:
                    return keys
    raise RuntimeError("no key of %s found" % node_address)


def log_objects(port):
    with admin(port) as c:
        entries = harness.parse_reply(c.call("ACL", "LOG"))
    return [dict(zip(e[::2], e[1::2]))[b"object"] for e in entries]


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_acl_cluster")
    with harness.Cluster(args.server, 3, name="acl", configure=configure) as cluster:
        p1, p2, p3 = cluster.ports
        third = cluster.addresses[2]
        with admin(p1) as c:
            report.equal(c.call("ACL", "SETUSER", "app", "on", ">apppw", "+@all", "-flushall",
                                "~app:*", "&news"), b"+OK\r\n", "SETUSER on node 1")
            report.equal(c.call("ACL", "SETUSER", "app", "bogus"),
                         b"-ERR Error in ACL SETUSER modifier 'bogus': Syntax error\r\n",
                         "a refused rule is refused once, with Redis's text")
            described = c.call("ACL", "GETUSER", "app")
        for port in (p2, p3):
            with admin(port) as c:
                report.equal(c.call("ACL", "GETUSER", "app"), described,
                             "node %d has the user as node 1 set it" % port)
        app_key, = owned_by(p1, third, "app:")
        secret_key, = owned_by(p1, third, "secret:")
        other_key, = owned_by(p1, cluster.addresses[1], "app:x")
        c, reply = as_user(p2, "app", "apppw")
        with c:
            report.equal(reply, b"+OK\r\n", "the user logs in on node 2")
            report.equal(c.call("SET", app_key, "v"), b"+OK\r\n", "its key on node 3 is written")
            report.equal(c.call("GET", app_key), b"$1\r\nv\r\n", "and read, relayed")
            report.equal(c.call("SET", secret_key, "v"),
                         b"-NOPERM this user has no permissions to access one of the keys used as "
                         b"arguments\r\n", "a key it may not use is refused on node 2")
            report.equal(c.call("MSET", other_key, "1", app_key, "2"), b"+OK\r\n",
                         "a split MSET of its keys")
            report.equal(c.call("MSET", other_key, "1", secret_key, "2")[:8], b"-NOPERM ",
                         "a split MSET naming a key it may not use is refused whole")
            report.equal(c.call("MGET", other_key, app_key), b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n",
                         "MGET over two nodes")
            report.equal(c.call("FLUSHALL"),
                         b"-NOPERM this user has no permissions to run the 'flushall' command\r\n",
                         "a fanned-out command it may not run is refused")
            report.equal(c.call("PUBLISH", "sports", "x")[:8], b"-NOPERM ",
                         "a channel it may not use is refused")
            report.equal(c.call("PUBLISH", "news", "x"), b":0\r\n", "its channel")
            # A script relayed to its key's owner runs there with the caller's rights.
            report.equal(c.call("EVAL", "return redis.call('get', KEYS[1])", "1", app_key),
                         b"$1\r\n2\r\n", "a script on node 3's key runs there")
            reply = c.call("EVAL", "return redis.call('flushall')", "1", app_key)
            report.check(reply.startswith(b"-ERR The user executing the script can't run this "
                                          b"command or subcommand"),
                         "its redis.call is checked on node 3 against the caller's user", reply)
            c.call("MULTI")
            c.call("SET", app_key, "t")
            report.equal(c.call("EXEC"), b"*1\r\n+OK\r\n", "a transaction on node 3's key")
        with admin(p3) as c:
            report.equal(c.call("EXISTS", secret_key), b":0\r\n",
                         "the refused write never reached the key's owner")
        report.check(secret_key.encode() in log_objects(p2), "node 2 logged the refused key")
        report.equal(log_objects(p3), [b"flushall"],
                     "node 3 logged only the script's refusal: it never saw the refused requests")
        c, _ = as_user(p1, "app", "apppw")
        with c:
            with admin(p3) as a:
                report.equal(a.call("ACL", "DELUSER", "app"), b":1\r\n", "DELUSER on node 3")
            report.check(c.closed_by_peer(timeout=3.0), "node 1 disconnects the deleted user")
        for port in (p1, p2, p3):
            with admin(port) as a:
                report.equal(a.call("ACL", "GETUSER", "app"), b"$-1\r\n",
                             "the user is gone from node %d" % port)
        _, reply = as_user(p2, "app", "apppw")
        report.equal(reply, b"-WRONGPASS invalid username-password pair or user is disabled.\r\n",
                     "the deleted user cannot log in")
        for node in cluster.nodes:
            harness.check_clean_exit(report, node)
    report.finish()


if __name__ == "__main__":
    main()
