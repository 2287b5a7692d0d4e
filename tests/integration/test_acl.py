"""ACL users, differentially against redis-server 7.0.15 started with the same ACL file: every
ACL SETUSER rule form (flags, passwords and hashes, commands, categories, subcommands, first
arguments, key patterns with read/write rights, channel patterns, selectors, reset) and every
error text, described back by ACL GETUSER and ACL LIST; AUTH and HELLO ... AUTH as users; NOPERM
refusals for commands, keys and channels (selectors granting alternatives), inside MULTI and at
EXEC after the rules changed, and from scripts; ACL LOG entries; ACL DRYRUN, CAT, GENPASS, USERS,
WHOAMI, DELUSER (its clients disconnected), LOAD and SAVE with the aclfile, CLIENT LIST's user,
requirepass as the default user's password, and COMMAND INFO/DOCS of ACL.

Redis lists the single commands of a rule description in its hash table's order (random per
process) and its categories hold commands ringkv does not have, so descriptions are compared with
their single-command tokens sorted, and ACL CAT <category> is compared with Redis's list cut to
the commands ringkv has.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

HASH = "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"  # sha256("password")

ACL_FILE = "users.acl"
FILE_USERS = ("user default on nopass ~* &* +@all\n"
              "user filer on >filepass ~f:* &f:* -@all +get +set\n")


# Names of ringkv's commands and subcommands (filled by main()): Redis's descriptions name
# commands ringkv does not have, which are left out of the comparison.
KNOWN = set()


def norm_rules(text):
    """A rule description with the single-command tokens of each selector sorted, those naming
    commands ringkv does not have left out."""
    def known(token):
        name = token[1:].split("|")
        return ("|".join(name[:2]) in KNOWN or name[0] in KNOWN) if KNOWN else True

    def norm(part):
        tokens = part.split(" ")
        for i, t in enumerate(tokens):
            if t in ("+@all", "-@all"):
                head, tail = tokens[: i + 1], tokens[i + 1 :]
                cats = [x for x in tail if x.startswith(("+@", "-@"))]
                rest = sorted(x for x in tail if not x.startswith(("+@", "-@")) and known(x))
                return " ".join(head + cats + rest)
        return part
    return re.sub(r"\(([^)]*)\)", lambda m: "(" + norm(m.group(1)) + ")", norm_root(text, norm))


def norm_root(text, norm):
    root, _, rest = text.partition(" (")
    return norm(root) + ((" (" + rest) if rest else "")


def norm_value(v):
    """Normalizes parsed GETUSER / ACL LIST replies (rule strings inside)."""
    if isinstance(v, list):
        out = []
        for i, x in enumerate(v):
            if i > 0 and v[i - 1] == b"commands" and isinstance(x, bytes):
                out.append(norm_rules(x.decode()).encode())
            elif isinstance(x, bytes) and x.startswith(b"user "):
                out.append(norm_rules(x.decode()).encode())
            else:
                out.append(norm_value(x))
        return out
    return v


def Pair(report, ports, label, auth=None):
    return harness.DiffPair(report, ports[0], ports[1], label, auth=auth)


# Each case: the rules of a fresh user, then GETUSER and its ACL LIST line are compared.
RULES = [
    ["on", ">p1", ">p2", "<p1"],
    ["on", "#" + HASH, "!" + HASH, ">x", "nopass"],
    ["off", ">x", "resetpass"],
    ["on", "skip-sanitize-payload"],
    ["sanitize-payload", "skip-sanitize-payload", "sanitize-payload"],
    ["+get", "+set", "-get"],
    ["+@string", "-get", "+@hash"],
    ["+@all", "-@dangerous"],
    ["+@all", "-@admin", "-flushall", "+config|get"],
    ["allcommands", "-@write", "+set"],
    ["nocommands", "+@list", "-@blocking"],
    ["+config", "-config|set"],
    ["+client|id", "+client|setname", "+@pubsub"],
    ["-@all", "+select|0", "+select|1", "+get"],
    ["+@all", "-select", "+select|0"],
    ["+@sortedset", "-@blocking", "+@keyspace", "-del"],
    ["+@transaction", "+@scripting", "+@connection", "-@fast"],
    ["~k*", "%R~r*", "%W~w*", "%RW~rw*", "%WR~rw*", "%R~k*"],
    ["%R", "~x", "resetkeys", "~y"],
    ["allkeys"],
    ["~*", "resetkeys", "allkeys"],
    ["&c*", "&d", "resetchannels", "&e?"],
    ["allchannels"],
    ["&*"],
    ["on", "+get", "~a", "(+set ~b &c)", "(%R~x +@read)"],
    ["(+get", "~k1", "~k2)", "(", "+set", ")"],
    ["(+get ~x)", "clearselectors", "+set"],
    ["on", ">x", "+@all", "~*", "&*", "(+get)", "reset"],
    ["", "on", ""],
    ["ON", "+GET", "~K", "+@STRING", "ALLCHANNELS"],
]

# Rules refused with Redis's texts (the user is then compared too: nothing was applied).
BAD_RULES = [
    ["bogus"], ["+nosuch"], ["-nosuch"], ["+@nosuch"], ["-@nosuch"], ["+"], ["-"], ["+@"],
    ["%"], ["%~k"], ["%X~k"], ["%RR~k"], ["~a b"], ["&a b"],
    ["allkeys", "~k"], ["allchannels", "&c"], ["<nosuch"], ["!" + "0" * 64],
    ["#abc"], ["#" + HASH.upper()], ["+config|get|x"], ["+config|"], ["+config|nosuch"],
    ["-config|get|x"], ["-get|x"], ["+get|x|y"], ["(+get"], ["on", "(~a", "~b"],
    ["(+nosuch)"], ["(bogus)"], ["on", ">ok", "bogus", "+get"],
]


def check_rules(report, ports):
    with Pair(report, ports, "rules") as p:
        for i, rules in enumerate(RULES):
            name = "r%d" % i
            p.call("ACL", "SETUSER", name, *rules)
            p.call("ACL", "GETUSER", name, normalize=norm_value)
        p.call("ACL", "LIST", normalize=norm_value)
        p.call("ACL", "USERS")
        for i, rules in enumerate(BAD_RULES):
            p.call("ACL", "SETUSER", "bad%d" % (i % 3), *rules)
            p.call("ACL", "GETUSER", "bad%d" % (i % 3), normalize=norm_value)
        # An existing user is changed only when every rule applies.
        p.call("ACL", "SETUSER", "r0", "+get", "bogus")
        p.call("ACL", "GETUSER", "r0", normalize=norm_value)
        p.call("ACL", "SETUSER", "r0", "~more")
        p.call("ACL", "GETUSER", "r0", normalize=norm_value)
        p.call("ACL", "SETUSER", "a b", "on")
        p.call("ACL", "SETUSER", "a\x00b", "on")
        p.call("ACL", "SETUSER")
        p.call("ACL", "GETUSER", "nosuch")
        p.call("ACL", "GETUSER")
        p.call("ACL", "GETUSER", "default", normalize=norm_value)
        p.call("ACL", "DELUSER", "default")
        p.call("ACL", "DELUSER", "r1", "nosuch", "r2", "r1")
        p.call("ACL", "DELUSER", "x", "default")
        p.call("ACL", "USERS")
        for i in range(len(RULES)):
            p.call("ACL", "DELUSER", "r%d" % i)


def check_pubsub_default(report, ports):
    """acl-pubsub-default: the channels of users, selectors and resets made from then on."""
    with Pair(report, ports, "acl-pubsub-default") as p:
        p.call("CONFIG", "GET", "acl-pubsub-default")
        p.call("CONFIG", "SET", "acl-pubsub-default", "maybe")
        p.call("CONFIG", "SET", "acl-pubsub-default", "allchannels")
        p.call("CONFIG", "GET", "acl-pubsub-default")
        p.call("ACL", "SETUSER", "pd1")
        p.call("ACL", "SETUSER", "pd2", "on", "(+get ~k)")
        p.call("ACL", "SETUSER", "pd3", "resetchannels", "&c")
        p.call("ACL", "SETUSER", "pd3", "reset")
        p.call("ACL", "GETUSER", "pd2", normalize=norm_value)
        p.call("CONFIG", "SET", "acl-pubsub-default", "resetchannels")
        p.call("ACL", "SETUSER", "pd4", "(+set)")
        p.call("ACL", "SETUSER", "pd1", "reset")
        p.call("ACL", "LIST", normalize=norm_value)
        p.call("ACL", "DELUSER", "pd1", "pd2", "pd3", "pd4")


def check_permissions(report, ports):
    with Pair(report, ports, "admin") as admin:
        admin.call("ACL", "LOG", "RESET")
        admin.call("ACL", "SETUSER", "app", "on", ">apppass", "+@read", "+@write", "-flushall",
                   "+multi", "+exec", "+eval", "~app:*", "%R~shared:*", "&news.*",
                   "+publish", "+subscribe", "+psubscribe", "(+get ~other:* )", "(+del ~tmp:*)")
        admin.call("ACL", "SETUSER", "reader", "on", "nopass", "+get", "+mget", "+select|0",
                   "+client|info", "~*")
        admin.call("SET", "shared:x", "1")
        admin.call("SET", "other:y", "2")
        with Pair(report, ports, "app", auth=("app", "apppass")) as app:
            for args in [("SET", "app:1", "v"), ("GET", "app:1"), ("GET", "shared:x"),
                         ("SET", "shared:x", "2"), ("GET", "other:y"), ("SET", "other:y", "3"),
                         ("DEL", "tmp:1"), ("DEL", "app:1", "tmp:2"), ("DEL", "tmp:1", "nope"),
                         ("MSET", "app:a", "1", "app:b", "2"), ("MSET", "app:a", "1", "no", "2"),
                         ("MGET", "app:a", "shared:x", "zzz"), ("FLUSHALL",), ("KEYS", "nomatch*"),
                         ("COPY", "shared:x", "app:c"), ("COPY", "app:c", "shared:x"),
                         ("SET", "app:g", "1", "GET"), ("SET", "shared:x", "1", "GET"),
                         ("LPUSH", "app:l", "a"), ("RPOPLPUSH", "app:l", "shared:l"),
                         ("CONFIG", "GET", "maxmemory"), ("ACL", "WHOAMI"),
                         ("PUBLISH", "news.a", "m"), ("PUBLISH", "sports", "m"),
                         ("EVAL", "return redis.call('get', KEYS[1])", "1", "app:1"),
                         ("EVAL", "return redis.call('get', KEYS[1])", "1", "secret:1"),
                         ("EVAL", "return redis.call('flushall')", "0"),
                         ("EVAL", "return redis.call('publish', 'sports', 'x')", "0"),
                         ("EVAL", "return redis.call('publish', 'news.x', 'x')", "0"),
                         ("PING",), ("AUTH", "app", "wrong")]:
                app.call(*args)
            # Refused inside MULTI: the transaction aborts.
            app.call("MULTI")
            app.call("SET", "app:m", "1")
            app.call("GET", "secret:m")
            app.call("FLUSHALL")
            app.call("EXEC")
            # Rules changed between queuing and EXEC.
            app.call("MULTI")
            app.call("SET", "app:m", "1")
            app.call("GET", "app:m")
            admin.call("ACL", "SETUSER", "app", "-get")
            app.call("EXEC")
            admin.call("ACL", "SETUSER", "app", "+get")
        with Pair(report, ports, "subscriber", auth=("app", "apppass")) as sub:
            sub.call("SUBSCRIBE", "news.a", "other")
            sub.call("SUBSCRIBE", "news.a", "news.b")
            sub.call("PSUBSCRIBE", "news.*")
            sub.call("PSUBSCRIBE", "news.a*")
            # Revoking its channels disconnects a subscriber, as in Redis.
            admin.call("ACL", "SETUSER", "app", "resetchannels", "&sports")
            for c in (sub.mine, sub.theirs):
                report.check(c.closed_by_peer(timeout=2.0),
                             "subscriber is disconnected when its channels are revoked")
        with Pair(report, ports, "reader", auth=("reader", "x")) as reader:
            for args in [("GET", "app:1"), ("SET", "a", "b"), ("SELECT", "0"), ("SELECT", "1"),
                         ("select", "00"), ("ACL", "WHOAMI"), ("CLIENT", "ID")]:
                reader.call(*args)
            report.check(b"user=reader" in harness.parse_reply(reader.mine.call("CLIENT", "INFO")),
                         "CLIENT INFO shows user=reader")
        check_log(report, admin)
        for args in [("ACL", "DRYRUN", "app", "GET", "app:1"),
                     ("ACL", "DRYRUN", "app", "GET", "secret"),
                     ("ACL", "DRYRUN", "app", "SET", "shared:x", "1"),
                     ("ACL", "DRYRUN", "app", "FLUSHALL"),
                     ("ACL", "DRYRUN", "app", "PUBLISH", "nope", "m"),
                     ("ACL", "DRYRUN", "app", "PUBLISH", "sports", "m"),
                     ("ACL", "DRYRUN", "app", "CONFIG", "GET", "x"),
                     ("ACL", "DRYRUN", "app", "CONFIG"),
                     ("ACL", "DRYRUN", "app", "CONFIG", "NOSUCH"),
                     ("ACL", "DRYRUN", "app", "GET"),
                     ("ACL", "DRYRUN", "app", "NOSUCH"),
                     ("ACL", "DRYRUN", "nouser", "GET", "x"),
                     ("ACL", "DRYRUN", "reader", "SELECT", "0"),
                     ("ACL", "DRYRUN", "reader", "SELECT", "5")]:
            admin.call(*args)
        # Each key needs the rights its own key spec asks for, as Redis's key finders give them
        # where the specs cannot (SORT's STORE key, SET with GET, BITFIELD reading only), and a
        # not_key spec (SPUBLISH's channel) needs none.
        admin.call("ACL", "SETUSER", "flags", "on", "nopass", "+@all", "%R~r:*", "%W~w:*", "&*")
        for args in [("SORT", "r:1", "STORE", "w:1"), ("SORT", "w:1", "STORE", "r:1"),
                     ("SORT_RO", "r:1"), ("SET", "w:1", "v"), ("SET", "w:1", "v", "GET"),
                     ("BITFIELD", "r:1", "GET", "u8", "0"), ("BITFIELD", "r:1", "SET", "u8", "0", "1"),
                     ("BITFIELD", "r:1", "GET", "u8", "0", "OVERFLOW", "SAT"),
                     ("BITFIELD", "w:1", "INCRBY", "u8", "0", "1"), ("SPUBLISH", "ch", "m"),
                     ("LMOVE", "r:1", "w:1", "LEFT", "RIGHT"), ("PFMERGE", "w:1"),
                     ("PFMERGE", "w:1", "r:1"), ("ZUNIONSTORE", "w:1", "2", "r:1", "r:2"),
                     ("GEORADIUS", "r:1", "0", "0", "1", "km", "STORE", "w:1")]:
            admin.call("ACL", "DRYRUN", "flags", *args)


def check_log(report, admin):
    """ACL LOG entries, with the age and the client's line (ids and ports differ) masked."""
    def entries(raw):
        out = []
        for e in harness.parse_reply(raw):
            d = dict(zip(e[::2], e[1::2]))
            info = dict(f.split(b"=", 1) for f in d[b"client-info"].split())
            out.append((d[b"count"], d[b"reason"], d[b"context"], d[b"object"], d[b"username"],
                        info[b"user"], info[b"cmd"]))
        return out
    got, want = admin.both("ACL", "LOG")
    report.equal(entries(got), entries(want), "ACL LOG entries")
    got, want = admin.both("ACL", "LOG", "2")
    report.equal(entries(got), entries(want), "ACL LOG 2")
    admin.call("ACL", "LOG", "-1")
    admin.call("ACL", "LOG", "x")
    admin.call("ACL", "LOG", "1", "2")
    admin.call("ACL", "LOG", "RESET")
    admin.call("ACL", "LOG")


def check_auth(report, ports):
    with Pair(report, ports, "admin") as admin:
        admin.call("ACL", "SETUSER", "alice", "on", ">alicepw", "+@all", "~*")
        admin.call("ACL", "SETUSER", "bob", "off", ">bobpw", "+@all", "~*")
        with Pair(report, ports, "auth") as p:
            for args in [("AUTH", "alice", "wrong"), ("AUTH", "bob", "bobpw"),
                         ("AUTH", "nobody", "x"), ("AUTH", "x"), ("ACL", "WHOAMI"),
                         ("AUTH", "alice", "alicepw"), ("ACL", "WHOAMI"),
                         ("HELLO", "3", "AUTH", "bob", "bobpw"),
                         ("HELLO", "2", "AUTH", "default", "x"), ("ACL", "WHOAMI"),
                         ("RESET",), ("ACL", "WHOAMI")]:
                p.call(*args)
        # A deleted user's clients are disconnected.
        with Pair(report, ports, "alice", auth=("alice", "alicepw")) as alice:
            admin.call("ACL", "DELUSER", "alice")
            for c in (alice.mine, alice.theirs):
                report.check(c.closed_by_peer(timeout=2.0), "DELUSER disconnects its clients")
        # requirepass is the default user's password.
        admin.call("CONFIG", "SET", "requirepass", "defpw")
        admin.call("ACL", "GETUSER", "default", normalize=norm_value)
        with Pair(report, ports, "default with a password") as p:
            for args in [("GET", "k"), ("AUTH", "wrong"), ("AUTH", "defpw"), ("ACL", "WHOAMI")]:
                p.call(*args)
        admin.call("ACL", "SETUSER", "default", "off")
        with Pair(report, ports, "default off") as p:
            for args in [("PING",), ("AUTH", "defpw"), ("AUTH", "default", "defpw")]:
                p.call(*args)
        admin.call("ACL", "SETUSER", "default", "on")
        admin.call("CONFIG", "SET", "requirepass", "")
        admin.call("ACL", "GETUSER", "default", normalize=norm_value)


def check_introspection(report, ports):
    with Pair(report, ports, "introspection") as p:
        p.call("ACL", "CAT")
        p.call("ACL", "CAT", "nosuch")
        p.call("ACL", "CAT", "a", "b")
        p.call("ACL", "HELP")
        p.call("ACL", "NOSUCH")
        p.call("ACL")
        def names(client):
            found = set()
            for info in harness.parse_reply(client.call("COMMAND", "INFO")):
                found.add(info[0])
                found.update(sub[0] for sub in info[9])
            return found
        # ringkv's own commands (CLUSTER JOIN...) and Redis's that ringkv lacks are left out.
        both = names(p.mine) & names(p.theirs)
        for cat in harness.parse_reply(p.theirs.call("ACL", "CAT")):
            got, want = (sorted(n for n in harness.parse_reply(r) if n in both)
                         for r in p.both("ACL", "CAT", cat))
            report.equal(got, want, "ACL CAT %s (the commands both servers have)" % cat)
        for bits, length in (("", 64), ("1", 1), ("5", 2), ("128", 32), ("4096", 1024)):
            args = ("ACL", "GENPASS") + ((bits,) if bits else ())
            value = harness.parse_reply(p.mine.call(*args))
            report.check(len(value) == length and re.fullmatch(rb"[0-9a-f]*", value),
                         "ACL GENPASS %s: %d hex digits" % (bits, length), repr(value))
        for args in [("0",), ("-1",), ("4097",), ("x",), ("1", "2")]:
            p.call("ACL", "GENPASS", *args)
        for what in ("INFO", "DOCS"):
            got, want = (harness.parse_reply(r) for r in p.both("COMMAND", what, "acl"))
            report.equal(normalize_command(got, what), normalize_command(want, what),
                         "COMMAND %s acl (subcommands in any order)" % what)


def normalize_command(reply, what):
    if what == "INFO":
        info = reply[0]
        return info[:9] + [sorted(map(repr, info[9]))]
    name, doc = reply
    doc = list(doc)
    i = doc.index(b"subcommands")
    subs = doc[i + 1]
    doc[i + 1] = sorted(repr((subs[j], subs[j + 1])) for j in range(0, len(subs), 2))
    return [name, doc]


def check_acl_file(report, ports, servers):
    with Pair(report, ports, "aclfile") as p:
        p.call("ACL", "USERS")
        p.call("ACL", "GETUSER", "filer", normalize=norm_value)
        with Pair(report, ports, "filer", auth=("filer", "filepass")) as f:
            f.call("SET", "f:1", "x")
            f.call("SET", "g:1", "x")
            p.call("ACL", "SETUSER", "saved", "on", ">s", "~s:*", "+@hash", "(+get ~t)")
            p.call("ACL", "SAVE")
            texts = [open(os.path.join(s.dir, ACL_FILE)).read() for s in servers]
            report.equal([norm_rules(l) for l in texts[0].splitlines()],
                         [norm_rules(l) for l in texts[1].splitlines()], "ACL SAVE writes the same file")
            # LOAD replaces every user; the clients of the users replaced are disconnected.
            p.call("ACL", "DELUSER", "saved")
            p.call("ACL", "LOAD")
            p.call("ACL", "USERS")
            for c in (f.mine, f.theirs):
                report.check(c.closed_by_peer(timeout=2.0), "ACL LOAD disconnects replaced users")
        p.call("ACL", "GETUSER", "saved", normalize=norm_value)
        broken = ("user default on nopass ~* &* +@all\nuser ok on +get\nnotuser x\n"
                  "user ok +set\nuser bad on +nosuch bogus\nuser sel (+get\n\n"
                  "user hash #abc\n")
        for s in servers:
            with open(os.path.join(s.dir, ACL_FILE), "w") as f:
                f.write(broken)
        p.call("ACL", "LOAD")
        p.call("ACL", "USERS")
        for s in servers:
            os.remove(os.path.join(s.dir, ACL_FILE))
        got, want = p.both("ACL", "LOAD")
        report.equal(got.split(b":")[0], want.split(b":")[0], "ACL LOAD of a missing file")
        report.check(b"No such file or directory" in got, "the missing file's reason", got)


def main():
    args = harness.arg_parser(__doc__).parse_args()
    report = harness.Report("test_acl")
    extra = ["--aclfile", ACL_FILE]
    mine = harness.ServerProcess(args.server, name="ringkv-acl", extra_args=extra)
    theirs = harness.ServerProcess(harness.REDIS_SERVER, kind="redis", name="redis-acl",
                                   extra_args=extra)
    for s in (mine, theirs):
        with open(os.path.join(s.dir, ACL_FILE), "w") as f:
            f.write(FILE_USERS)
    with mine, theirs:
        ports = (mine.port, theirs.port)
        with harness.RespClient(mine.port) as c:
            for info in harness.parse_reply(c.call("COMMAND", "INFO")):
                KNOWN.add(info[0].decode())
                KNOWN.update(sub[0].decode() for sub in info[9])
        check_rules(report, ports)
        check_pubsub_default(report, ports)
        check_permissions(report, ports)
        check_auth(report, ports)
        check_introspection(report, ports)
        check_acl_file(report, ports, (mine, theirs))
        harness.check_clean_exit(report, mine)
    report.finish()


if __name__ == "__main__":
    main()
