"""Transactions on one node, differential against a real redis-server 7: the same scenarios run
on both with raw-socket clients and every observation must be byte-identical. Covers MULTI/EXEC/
DISCARD, queue-time errors (EXECABORT), runtime errors that do not roll back, nested MULTI, EXEC
and DISCARD without MULTI, WATCH inside MULTI, WATCH invalidated by another client, by the same
client, by FLUSHALL and by expiry (RESP2 and RESP3 null replies), no-op writes that leave a WATCH
intact, UNWATCH, DISCARD and RESET dropping WATCHes, and blocking commands inside MULTI.

Then a generated part: every write command of ringkv's command table (COMMAND's "write" flag)
has argument templates here, each run as `WATCH k; <write by another client>; MULTI; TYPE k;
EXEC` on both servers; a write command without a template fails the test, and each command must
have at least one template whose write Redis reports as a change (null EXEC).

With --cluster N (test_transactions_cluster_diff.py) the same runs through an N-node ringkv
cluster with [cluster] atomic-multikey on, the two clients on different nodes, so transactions
span nodes: the scenarios' keys spread over the nodes as they hash; the templates' keys share a
hash tag (one command's keys must live on one node) and their transactions also read a key on
another node (`MULTI; TYPE k; TYPE <elsewhere>; EXEC`), so the WATCH is checked by a cross-node
EXEC. A last part runs RENAME, RENAMENX, COPY, MSETNX, MSET, MGET, DEL, UNLINK, EXISTS and TOUCH
over keys on different nodes (outside MULTI; inside MULTI ... EXEC, beside a TYPE of another
key, those the cluster splits per owner) and compares the replies and every key's type, value and
TTL afterwards.

    /usr/bin/python3 test_transactions.py --server build/ringkv-server [--cluster 3]
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import RespClient  # noqa: E402

NULL_RESP2 = b"*-1\r\n"
NULL_RESP3 = b"_\r\n"


# DUMP of the string "v" (redis-server 7.0.15's payload), for RESTORE templates.
STRING_PAYLOAD = b"\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"


# The port of a redis-server MIGRATE templates move keys to (database 9 there, with REPLACE, so
# both runs of a template may send it).
TARGET_PORT = None


def words(text):
    """A command from its space-separated words; '' stands for an empty argument, @PAYLOAD for
    STRING_PAYLOAD and @TARGET for TARGET_PORT."""
    return [{"''": "", "@PAYLOAD": STRING_PAYLOAD, "@TARGET": str(TARGET_PORT)}.get(w, w)
            for w in text.split()]


# In cluster mode: the templates' key names get this hash tag (see the module's docstring), and
# their transactions also read ELSEWHERE, a key that lives on another node.
TAG = ""
ELSEWHERE = None


def tagged(argv):
    """A template command with its one-letter key names (and nothing else) tagged."""
    if not TAG:
        return argv
    return [TAG + w if isinstance(w, str) and w in TEMPLATE_KEYS else w for w in argv]


TEMPLATE_KEYS = {"k", "d", "s", "a", "b", "x"}


def exec_after(a, b, setup, write, watch=("k",), proto=2):
    """Client `a` WATCHes `watch`, client `b` runs `write`, then `a` runs MULTI; TYPE k; EXEC.
    Returns the write's reply and EXEC's."""
    a.call("FLUSHALL")
    for cmd in setup:
        a.call(*tagged(cmd))
    a.call("HELLO", str(proto))
    a.call("WATCH", *tagged(list(watch)))
    wrote = b.call(*tagged(write))
    a.call("MULTI")
    a.call(*tagged(["TYPE", "k"]))
    if ELSEWHERE is not None:
        a.call("TYPE", ELSEWHERE)
    result = a.call("EXEC")
    a.call("HELLO", "2")
    return wrote, result


def scenarios(ports):
    """Runs the hand-written scenarios (client a on the first port, b on the last); returns
    (name, reply bytes) observations."""
    out = []
    a, b = RespClient(ports[0]), RespClient(ports[-1])

    def obs(name, *args):
        out.append((name, a.call(*args)))

    a.call("FLUSHALL")
    # Plain transaction: every command is QUEUED, EXEC answers them in order.
    obs("multi", "MULTI")
    obs("queued set", "SET", "a", "1")
    obs("queued incr", "INCR", "a")
    obs("queued lpush", "LPUSH", "l", "x", "y")
    obs("exec", "EXEC")
    obs("after exec", "MGET", "a", "l")
    # RESP3 shapes inside EXEC.
    a.call("HELLO", "3")
    a.call("MULTI")
    a.call("HSET", "h", "f", "v")
    a.call("HGETALL", "h")
    a.call("GET", "missing")
    obs("exec resp3", "EXEC")
    a.call("HELLO", "2")
    # DISCARD drops the queue.
    a.call("MULTI")
    a.call("SET", "d", "1")
    obs("discard", "DISCARD")
    obs("after discard", "EXISTS", "d")
    # Queue-time errors abort the whole transaction.
    a.call("MULTI")
    obs("unknown command", "NOSUCHCMD", "x")
    a.call("SET", "e", "1")
    obs("execabort unknown", "EXEC")
    obs("nothing ran", "EXISTS", "e")
    a.call("MULTI")
    obs("wrong arity", "GET")
    a.call("SET", "e", "1")
    obs("execabort arity", "EXEC")
    obs("nothing ran 2", "EXISTS", "e")
    # Protected commands the configuration does not allow are refused as they are queued (DEBUG
    # with enable-debug-command no, MODULE LOAD/UNLOAD with no modules), after the arity check.
    a.call("MULTI")
    obs("protected debug", "DEBUG", "SLEEP", "0")
    obs("protected module load", "MODULE", "LOAD", "/nonexistent/module.so")
    obs("protected module unload", "MODULE", "UNLOAD", "nosuch")
    obs("protected arity first", "MODULE", "UNLOAD")
    obs("module list queued", "MODULE", "LIST")
    a.call("SET", "e", "1")
    obs("execabort protected", "EXEC")
    obs("nothing ran 3", "EXISTS", "e")
    obs("module list", "MODULE", "LIST")
    obs("module help", "MODULE", "HELP")
    obs("module loadex", "MODULE", "LOADEX", "/nonexistent/module.so", "CONFIG", "a", "b")
    for cmd in ("READONLY", "READWRITE", "ASKING"):
        obs(cmd.lower(), cmd)
    # Runtime errors do not roll back.
    a.call("SET", "s", "str")
    a.call("MULTI")
    a.call("INCR", "s")
    a.call("SET", "r", "2")
    a.call("LPUSH", "s", "x")
    obs("runtime errors", "EXEC")
    obs("kept writes", "GET", "r")
    # Nested MULTI, EXEC/DISCARD without MULTI, WATCH inside MULTI.
    obs("exec without multi", "EXEC")
    obs("discard without multi", "DISCARD")
    a.call("MULTI")
    obs("nested multi", "MULTI")
    obs("watch inside multi", "WATCH", "a")
    a.call("INCR", "a")
    obs("exec after nested", "EXEC")
    # WATCH then another client writes: null in RESP2 and RESP3.
    for proto in (2, 3):
        got = exec_after(a, b, [["SET", "k", "v"]], ["SET", "k", "w"], proto=proto)
        out.append(("other client writes resp%d" % proto, b"".join(got)))
        got = exec_after(a, b, [["SADD", "k", "m"]], ["SADD", "k", "m"], proto=proto)
        out.append(("no-op write resp%d" % proto, b"".join(got)))
    # The same client writes the watched key itself.
    a.call("SET", "k", "v")
    a.call("WATCH", "k")
    a.call("APPEND", "k", "x")
    a.call("MULTI")
    a.call("GET", "k")
    obs("same client writes", "EXEC")
    # No-op writes by the same client keep the WATCH.
    a.call("HSET", "k2", "f", "v")
    a.call("WATCH", "k2")
    a.call("HDEL", "k2", "nofield")
    a.call("SADD", "k2", "m")  # WRONGTYPE: nothing changed
    a.call("MULTI")
    a.call("HGET", "k2", "f")
    obs("same client no-op", "EXEC")
    # FLUSHALL touches only WATCHed keys that exist.
    got = exec_after(a, b, [["SET", "k", "v"]], ["FLUSHALL"])
    out.append(("flushall existing", b"".join(got)))
    got = exec_after(a, b, [["SET", "other", "v"]], ["FLUSHALL"])
    out.append(("flushall missing", b"".join(got)))
    got = exec_after(a, b, [["SET", "k", "v"]], ["FLUSHDB", "ASYNC"])
    out.append(("flushdb existing", b"".join(got)))
    # A WATCHed key whose TTL runs out before EXEC fails the transaction.
    a.call("FLUSHALL")
    a.call("SET", "k", "v", "PX", "50")
    a.call("WATCH", "k")
    time.sleep(0.15)
    a.call("MULTI")
    a.call("PING")
    obs("expired while watched", "EXEC")
    # A key already expired when WATCHed stays "unchanged".
    a.call("SET", "k", "v", "PX", "20")
    time.sleep(0.06)
    a.call("WATCH", "k")
    a.call("MULTI")
    a.call("PING")
    obs("expired before watch", "EXEC")
    # UNWATCH, DISCARD and RESET drop WATCHes.
    for name, drop in (("unwatch", ["UNWATCH"]), ("discard", None), ("reset", ["RESET"])):
        a.call("SET", "k", "v")
        a.call("WATCH", "k")
        if drop is None:
            a.call("MULTI")
            obs("discard after watch", "DISCARD")
        else:
            obs(name, *drop)
        b.call("SET", "k", "w")
        a.call("MULTI")
        a.call("GET", "k")
        obs("exec after " + name, "EXEC")
    a.call("MULTI")
    a.call("SET", "z", "1")
    obs("reset in multi", "RESET")
    obs("exec after reset", "EXEC")
    obs("reset dropped queue", "EXISTS", "z")
    # Blocking commands inside MULTI do not wait: most answer a null array, BLMOVE and BRPOPLPUSH
    # the null bulk of their non-blocking forms (a real timeout gives them a null array).
    for proto in (2, 3):
        a.call("HELLO", str(proto))
        a.call("MULTI")
        a.call("BLMOVE", "{b}nokey", "{b}dst", "LEFT", "RIGHT", "0")
        a.call("BRPOPLPUSH", "{b}nokey", "{b}dst", "0")
        a.call("BLPOP", "nokey", "0")
        a.call("BLMPOP", "0", "1", "nokey", "LEFT")
        a.call("BZPOPMIN", "nokey", "0")
        a.call("BZPOPMAX", "nokey", "0")
        a.call("RPUSH", "full", "x")
        a.call("BLPOP", "full", "0")
        obs("blocking in multi resp%d" % proto, "EXEC")
    a.call("HELLO", "2")
    a.close()
    b.close()
    return out


# For every write command: (setup commands, the write, keys WATCHed). Each list mixes writes
# that change the watched key (EXEC null) with no-ops (EXEC runs).
TEMPLATES = {
    "set": [("", "SET k v"), ("SET k v", "SET k w NX"), ("", "SET k v XX")],
    "setnx": [("", "SETNX k v"), ("SET k v", "SETNX k w")],
    "setex": [("", "SETEX k 100 v"), ("SET k v", "SETEX k 0 v")],
    "psetex": [("", "PSETEX k 100000 v"), ("SET k v", "PSETEX k -1 v")],
    "getset": [("SET k v", "GETSET k w"), ("HSET k f v", "GETSET k w")],
    "getdel": [("SET k v", "GETDEL k"), ("", "GETDEL k")],
    "getex": [("SET k v", "GETEX k EX 100"), ("SET k v", "GETEX k PERSIST"),
              ("SET k v EX 100", "GETEX k PERSIST"), ("SET k v", "GETEX k PXAT 1"),
              ("SET k v", "GETEX k")],
    "mset": [("", "MSET a 1 k 2"), ("", "MSET a 1 b 2")],
    "msetnx": [("", "MSETNX a 1 k 2"), ("SET a 1", "MSETNX a 1 k 2")],
    "append": [("SET k v", "APPEND k ''"), ("", "APPEND k x"), ("LPUSH k a", "APPEND k x")],
    "incr": [("", "INCR k"), ("SET k x", "INCR k")],
    "decr": [("SET k 5", "DECR k"), ("SET k x", "DECR k")],
    "incrby": [("", "INCRBY k 0"), ("SET k 1", "INCRBY k x")],
    "decrby": [("", "DECRBY k 2"), ("SET k x", "DECRBY k 2")],
    "incrbyfloat": [("", "INCRBYFLOAT k 0"), ("SET k x", "INCRBYFLOAT k 1")],
    "setrange": [("SET k v", "SETRANGE k 0 ''"), ("", "SETRANGE k 2 ''"),
                 ("SET k v", "SETRANGE k 1 x"), ("", "SETRANGE k 2 x")],
    "hset": [("HSET k f v", "HSET k f v"), ("SET k v", "HSET k f v")],
    "hsetnx": [("HSET k f v", "HSETNX k f w"), ("HSET k f v", "HSETNX k g w")],
    "hmset": [("", "HMSET k f v"), ("SET k v", "HMSET k f v")],
    "hdel": [("HSET k f v", "HDEL k g"), ("HSET k f v g w", "HDEL k f"), ("", "HDEL k f")],
    "hincrby": [("HSET k f 1", "HINCRBY k f 0"), ("HSET k f v", "HINCRBY k f 1")],
    "hincrbyfloat": [("HSET k f 1", "HINCRBYFLOAT k f 0"), ("HSET k f v", "HINCRBYFLOAT k f 1")],
    "lpush": [("", "LPUSH k a"), ("SET k v", "LPUSH k a")],
    "rpush": [("RPUSH k a", "RPUSH k b"), ("SET k v", "RPUSH k a")],
    "lpushx": [("", "LPUSHX k a"), ("RPUSH k a", "LPUSHX k b")],
    "rpushx": [("", "RPUSHX k a"), ("RPUSH k a", "RPUSHX k b")],
    "lpop": [("", "LPOP k"), ("RPUSH k a b", "LPOP k"), ("RPUSH k a", "LPOP k 0"),
             ("RPUSH k a", "LPOP k 5")],
    "rpop": [("", "RPOP k 2"), ("RPUSH k a b", "RPOP k")],
    "lset": [("RPUSH k a", "LSET k 0 b"), ("RPUSH k a", "LSET k 5 b")],
    "linsert": [("RPUSH k a", "LINSERT k BEFORE a b"), ("RPUSH k a", "LINSERT k AFTER z b")],
    "lrem": [("RPUSH k a b a", "LREM k -1 a"), ("RPUSH k a", "LREM k 0 z")],
    "ltrim": [("RPUSH k a b", "LTRIM k 0 -1"), ("RPUSH k a b", "LTRIM k 5 9"),
              ("", "LTRIM k 0 -1")],
    "lmove": [("RPUSH k a", "LMOVE k d LEFT RIGHT"), ("RPUSH s a", "LMOVE s k LEFT RIGHT"),
              ("", "LMOVE s k LEFT LEFT"), ("RPUSH k a b", "LMOVE k k LEFT RIGHT")],
    "rpoplpush": [("RPUSH k a", "RPOPLPUSH k d"), ("RPUSH s a", "RPOPLPUSH s k"),
                  ("", "RPOPLPUSH s k")],
    "lmpop": [("RPUSH k a", "LMPOP 2 x k LEFT"), ("RPUSH x a", "LMPOP 2 x k LEFT COUNT 2")],
    "blpop": [("RPUSH k a", "BLPOP x k 1"), ("RPUSH x a", "BLPOP x k 1")],
    "brpop": [("RPUSH k a b", "BRPOP k 1"), ("RPUSH x a", "BRPOP x k 1")],
    "blmove": [("RPUSH k a", "BLMOVE k d RIGHT LEFT 1"), ("RPUSH s a", "BLMOVE s k LEFT LEFT 1")],
    "brpoplpush": [("RPUSH k a", "BRPOPLPUSH k d 1"), ("RPUSH s a", "BRPOPLPUSH s k 1")],
    "blmpop": [("RPUSH k a", "BLMPOP 1 2 x k RIGHT"), ("RPUSH x a", "BLMPOP 1 2 x k RIGHT")],
    "sadd": [("SADD k a", "SADD k a"), ("SADD k a", "SADD k b")],
    "srem": [("SADD k a", "SREM k b"), ("SADD k a b", "SREM k a"), ("", "SREM k a")],
    "spop": [("SADD k a", "SPOP k"), ("SADD k a", "SPOP k 0"),
             ("", "SPOP k"), ("SADD k 1 2", "SPOP k 5")],
    "smove": [("SADD s a", "SMOVE s k a"), ("SADD s a\nSADD k a", "SMOVE s k a"),
              ("SADD k a", "SMOVE k d a"), ("SADD k a", "SMOVE k k a"), ("SADD s a", "SMOVE s k b")],
    "sinterstore": [("SADD a x", "SINTERSTORE k a"), ("", "SINTERSTORE k a"),
                    ("SET k v", "SINTERSTORE k a")],
    "sunionstore": [("SADD a x", "SUNIONSTORE k a"), ("", "SUNIONSTORE k a b"),
                    ("SET k v", "SUNIONSTORE k a")],
    "sdiffstore": [("SADD a x", "SDIFFSTORE k a"), ("SADD a x", "SDIFFSTORE k a a"),
                   ("SADD k x", "SDIFFSTORE k a")],
    "zadd": [("ZADD k 1 m", "ZADD k 1 m"), ("ZADD k 1 m", "ZADD k 2 m"),
             ("ZADD k 1 m", "ZADD k INCR 0 m"), ("ZADD k 1 m", "ZADD k NX 5 m"),
             ("", "ZADD k XX 1 m"), ("ZADD k 1 m", "ZADD k GT 0 m")],
    "zincrby": [("ZADD k 1 m", "ZINCRBY k 0 m"), ("", "ZINCRBY k 1 m")],
    "zrem": [("ZADD k 1 m", "ZREM k x"), ("ZADD k 1 m 2 n", "ZREM k m")],
    "zremrangebyrank": [("ZADD k 1 m", "ZREMRANGEBYRANK k 0 0"),
                        ("ZADD k 1 m", "ZREMRANGEBYRANK k 5 9")],
    "zremrangebyscore": [("ZADD k 1 m", "ZREMRANGEBYSCORE k 0 5"),
                         ("ZADD k 1 m", "ZREMRANGEBYSCORE k 5 9")],
    "zremrangebylex": [("ZADD k 0 m", "ZREMRANGEBYLEX k - +"),
                       ("ZADD k 0 m", "ZREMRANGEBYLEX k [x +")],
    "zmpop": [("ZADD k 1 m", "ZMPOP 2 x k MIN"), ("ZADD x 1 m", "ZMPOP 2 x k MAX COUNT 2")],
    "bzmpop": [("ZADD k 1 m", "BZMPOP 1 2 x k MIN"), ("ZADD x 1 m", "BZMPOP 1 2 x k MAX")],
    "sort": [("RPUSH s 3 1 2", "SORT s STORE k"), ("SET k v", "SORT x STORE k"),
             ("", "SORT x STORE k"), ("RPUSH k 2 1", "SORT k"),
             ("RPUSH k 2 1", "SORT k DESC STORE k")],
    "zrangestore": [("ZADD a 1 m", "ZRANGESTORE k a 0 -1"), ("", "ZRANGESTORE k a 0 -1"),
                    ("SET k v", "ZRANGESTORE k a 0 -1")],
    "geoadd": [("", "GEOADD k 13.36 38.11 m"), ("GEOADD k 13.36 38.11 m", "GEOADD k NX 1 2 m"),
               ("", "GEOADD k XX 1 1 m"), ("GEOADD k 13.36 38.11 m", "GEOADD k 13.36 38.11 m")],
    "georadius": [("GEOADD a 13.36 38.11 m", "GEORADIUS a 13 38 100 km STORE k"),
                  ("", "GEORADIUS a 13 38 100 km STORE k"),
                  ("SET k v", "GEORADIUS a 0 0 1 km STOREDIST k")],
    "georadiusbymember": [("GEOADD a 13.36 38.11 m", "GEORADIUSBYMEMBER a m 100 km STOREDIST k"),
                          ("GEOADD a 13.36 38.11 m", "GEORADIUSBYMEMBER a m 100 km")],
    "geosearchstore": [("GEOADD a 13.36 38.11 m", "GEOSEARCHSTORE k a FROMMEMBER m BYRADIUS 1 km"),
                       ("GEOADD a 13.36 38.11 m",
                        "GEOSEARCHSTORE k a FROMLONLAT 0 0 BYRADIUS 1 km")],
    "zpopmin": [("ZADD k 1 m 2 n", "ZPOPMIN k"), ("ZADD k 1 m", "ZPOPMIN k 0"), ("", "ZPOPMIN k")],
    "zpopmax": [("ZADD k 1 m", "ZPOPMAX k 5"), ("", "ZPOPMAX k 2")],
    "bzpopmin": [("ZADD k 1 m", "BZPOPMIN x k 1"), ("ZADD x 1 m", "BZPOPMIN x k 1")],
    "bzpopmax": [("ZADD k 1 m 2 n", "BZPOPMAX k 1"), ("ZADD x 1 m", "BZPOPMAX x k 1")],
    "zunionstore": [("ZADD a 1 m", "ZUNIONSTORE k 1 a"), ("", "ZUNIONSTORE k 1 a"),
                    ("SET k v", "ZUNIONSTORE k 1 a")],
    "zinterstore": [("ZADD a 1 m", "ZINTERSTORE k 1 a"), ("ZADD k 1 m", "ZINTERSTORE k 2 a k"),
                    ("", "ZINTERSTORE k 2 a b")],
    "zdiffstore": [("ZADD a 1 m", "ZDIFFSTORE k 1 a"), ("ZADD a 1 m", "ZDIFFSTORE k 2 a a"),
                   ("ZADD k 1 m", "ZDIFFSTORE k 1 a")],
    "del": [("SET k v", "DEL x k"), ("SET x v", "DEL x k")],
    "unlink": [("SET k v", "UNLINK k"), ("", "UNLINK k")],
    "expire": [("SET k v", "EXPIRE k 100"), ("", "EXPIRE k 100"), ("SET k v", "EXPIRE k 100 XX"),
               ("SET k v", "EXPIRE k -1")],
    "pexpire": [("SET k v", "PEXPIRE k 100000 NX"), ("SET k v EX 100", "PEXPIRE k 1000 GT")],
    "expireat": [("SET k v", "EXPIREAT k 1"), ("SET k v", "EXPIREAT k 99999999999 LT")],
    "pexpireat": [("SET k v", "PEXPIREAT k 99999999999999"),
                  ("SET k v EX 100", "PEXPIREAT k 1 NX")],
    "persist": [("SET k v EX 100", "PERSIST k"), ("SET k v", "PERSIST k")],
    "rename": [("SET k v", "RENAME k d"), ("SET s v", "RENAME s k"), ("SET k v", "RENAME k k"),
               ("", "RENAME s k")],
    "renamenx": [("SET k v", "RENAMENX k d"), ("SET s v\nSET k v", "RENAMENX s k"),
                 ("SET s v", "RENAMENX s k")],
    "copy": [("SET s v", "COPY s k"), ("SET s v\nSET k v", "COPY s k"),
             ("SET s v\nSET k v", "COPY s k REPLACE"), ("SET k v", "COPY k d")],
    "restore": [("", "RESTORE k 0 @PAYLOAD"), ("SET k w", "RESTORE k 0 @PAYLOAD REPLACE"),
                ("SET k w", "RESTORE k 0 @PAYLOAD"), ("", "RESTORE k 1 @PAYLOAD ABSTTL")],
    "migrate": [("SET k v", "MIGRATE 127.0.0.1 @TARGET k 9 5000 REPLACE"),
                ("", "MIGRATE 127.0.0.1 @TARGET k 9 5000 REPLACE"),
                ("RPUSH k a b", "MIGRATE 127.0.0.1 @TARGET k 9 5000 COPY REPLACE"),
                ("SET k v", "MIGRATE 127.0.0.1 @TARGET '' 9 5000 REPLACE KEYS k")],
    "restore-asking": [("", "RESTORE-ASKING k 0 @PAYLOAD"),
                       ("SET k w", "RESTORE-ASKING k 0 @PAYLOAD REPLACE"),
                       ("SET k w", "RESTORE-ASKING k 0 @PAYLOAD")],
    "flushdb": [("SET k v", "FLUSHDB"), ("SET x v", "FLUSHDB")],
    "flushall": [("SET k v", "FLUSHALL SYNC"), ("", "FLUSHALL")],
    "move": [("SET k v", "MOVE k 1"), ("", "MOVE k 1"), ("SET k v", "MOVE k 0")],
    "swapdb": [("SET k v", "SWAPDB 0 1"), ("", "SWAPDB 0 1"), ("SET k v", "SWAPDB 2 3")],
    "setbit": [("", "SETBIT k 7 1"), ("SETBIT k 7 1", "SETBIT k 7 1"), ("SET k a", "SETBIT k 99 0"),
               ("LPUSH k a", "SETBIT k 1 1")],
    "bitfield": [("", "BITFIELD k GET u8 0"), ("SET k a", "BITFIELD k SET u8 0 1"),
                 ("SET k a", "BITFIELD k OVERFLOW FAIL INCRBY u2 0 100"), ("", "BITFIELD k")],
    "bitop": [("SET a x", "BITOP OR k a"), ("", "BITOP AND k a b"), ("SET k v", "BITOP NOT k a")],
    "pfadd": [("", "PFADD k a"), ("PFADD k a", "PFADD k a"), ("SET k v", "PFADD k a")],
    "pfmerge": [("PFADD a x", "PFMERGE k a"), ("PFADD k a", "PFMERGE k"), ("SET a v", "PFMERGE k a")],
    # PFDEBUG never counts as a change for WATCH in Redis; a converting TODENSE/GETREG does in
    # ringkv (it reports the key modified so that the append-only file records it), so only
    # the forms that convert nothing are compared (see UNCHANGING).
    "pfdebug": [("PFADD k a", "PFDEBUG ENCODING k"),
                ("PFADD k a\nPFDEBUG TODENSE k", "PFDEBUG GETREG k")],
    "xadd": [("", "XADD k 1-1 f v"), ("XADD k 5-1 f v", "XADD k 1-1 f v"),
             ("", "XADD k NOMKSTREAM 1-1 f v")],
    "xdel": [("XADD k 1-1 f v", "XDEL k 1-1"), ("XADD k 1-1 f v", "XDEL k 2-2")],
    "xtrim": [("XADD k 1-1 f v\nXADD k 2-1 f v", "XTRIM k MAXLEN 1"),
              ("XADD k 1-1 f v", "XTRIM k MAXLEN 5")],
    # Consumer groups and XSETID change no WATCHed key in Redis 7.0.15 (see UNCHANGING).
    "xsetid": [("XADD k 1-1 f v", "XSETID k 9-9")],
    "xreadgroup": [("XADD k 1-1 f v\nXGROUP CREATE k g 0", "XREADGROUP GROUP g c STREAMS k >")],
    "xack": [("XADD k 1-1 f v\nXGROUP CREATE k g 0\nXREADGROUP GROUP g c STREAMS k >",
              "XACK k g 1-1")],
    "xclaim": [("XADD k 1-1 f v\nXGROUP CREATE k g 0\nXREADGROUP GROUP g c STREAMS k >",
                "XCLAIM k g d 0 1-1")],
    "xautoclaim": [("XADD k 1-1 f v\nXGROUP CREATE k g 0\nXREADGROUP GROUP g c STREAMS k >",
                    "XAUTOCLAIM k g d 0 0")],
}
# Write commands that Redis never reports as changing the WATCHed key.
UNCHANGING = {"pfdebug", "xsetid", "xreadgroup", "xack", "xclaim", "xautoclaim"}


def write_commands(port):
    """The names of the commands COMMAND reports with the "write" flag."""
    with RespClient(port) as c:
        table = harness.parse_reply(c.call("COMMAND"))
    return sorted(row[0].decode() for row in table if b"write" in row[2])


def generated(ports, commands):
    """Runs every template of `commands`; returns (name, bytes) observations."""
    out = []
    a, b = RespClient(ports[0]), RespClient(ports[-1])
    for name in commands:
        for setup, write in TEMPLATES[name]:
            setup_cmds = [words(line) for line in setup.split("\n") if line]
            got = exec_after(a, b, setup_cmds, words(write))
            out.append(("%s: %s / %s" % (name, setup.replace("\n", "; "), write), got))
    a.close()
    b.close()
    return out


# Multi-key commands over keys on different nodes ($1, $2, $3: one key per node), run alone and
# inside MULTI with another node's key; with atomic-multikey they must answer as on one Redis.
ATOMIC_CASES = [
    ("SET $1 v EX 100\nHSET $2 f v", "RENAME $1 $2"),
    ("RPUSH $1 a b c", "RENAME $1 $2"),
    ("", "RENAME $1 $2"),
    ("SADD $1 m", "RENAMENX $1 $2"),
    ("SET $1 v\nSET $2 w", "RENAMENX $1 $2"),
    ("ZADD $1 1 m 2 n\nPEXPIRE $1 50000", "COPY $1 $2"),
    ("SET $1 v\nSET $2 w", "COPY $1 $2"),
    ("SET $1 v\nSET $2 w", "COPY $1 $2 REPLACE"),
    ("SET $1 v", "COPY $1 $2 DB 0 REPLACE"),
    ("SET $1 v", "COPY $1 $2 BOGUS"),
    ("", "COPY $1 $2"),
    ("", "MSETNX $1 a $2 b $3 c"),
    ("SET $3 z", "MSETNX $1 a $2 b $3 c"),
    ("SET $2 x", "MSET $1 a $2 b $3 c"),
    ("SET $1 v\nLPUSH $3 x", "MGET $1 $2 $3"),
    ("SET $1 v\nSET $3 w", "DEL $1 $2 $3"),
    ("SET $1 v\nSET $2 w", "UNLINK $3 $2 $1"),
    ("SET $1 v\nSET $3 w", "EXISTS $1 $2 $3 $1"),
    ("SET $1 v", "TOUCH $1 $2 $3"),
]


def state_of(c, key):
    """What a key holds, as comparable replies: its type, value and TTL (rounded to seconds)."""
    kind = c.call("TYPE", key)
    reads = {b"+string\r\n": ["GET", key], b"+list\r\n": ["LRANGE", key, "0", "-1"],
             b"+hash\r\n": ["HGETALL", key],
             b"+zset\r\n": ["ZRANGE", key, "0", "-1", "WITHSCORES"]}
    value = c.call(*reads[kind]) if kind in reads else b""
    if kind == b"+set\r\n":
        value = repr(sorted(harness.parse_reply(c.call("SMEMBERS", key)))).encode()
    ttl = harness.parse_reply(c.call("PTTL", key))
    return kind + value + (b"ttl %d" % ((ttl + 999) // 1000) if ttl > 0 else b"ttl %d" % ttl)


def atomic_observations(ports, names):
    """Runs ATOMIC_CASES with $1.. as `names`, alone and in MULTI beside a read of a key."""
    out = []
    c = RespClient(ports[0])
    for in_multi in (False, True):
        for setup, command in ATOMIC_CASES:
            def fill(text):
                for i, name in enumerate(names):
                    text = text.replace("$%d" % (i + 1), name)
                return text.split()
            c.call("FLUSHALL")
            for line in setup.split("\n"):
                if line:
                    c.call(*fill(line))
            words_ = fill(command)
            if in_multi:
                # In MULTI a command whose keys span nodes must be one the cluster splits per
                # owner (each fragment then runs in its node's part of the transaction); the
                # others (RENAME, MSETNX...) are refused with CROSSSLOT when queued.
                if (len({w for w in words_ if w in names}) > 1
                        and words_[0] not in ("MSET", "MGET", "DEL", "UNLINK", "EXISTS", "TOUCH")):
                    continue
                c.call("MULTI")
                c.call(*words_)
                c.call("TYPE", names[-1])
                got = c.call("EXEC")
            else:
                got = c.call(*words_)
            out.append(("%s %s" % (setup.replace("\n", "; "), command), got))
            for name in names:
                out.append(("%s: %s after" % (command, name), state_of(c, name)))
    c.close()
    return out


def spread_names(port):
    """Three key names, one per node of the cluster behind `port`."""
    names = {}
    i = 0
    with RespClient(port) as c:
        while len(names) < 3:
            key = "at%d" % i
            i += 1
            names.setdefault(c.call("CLUSTER", "OWNER", key), key)
    return list(names.values())


def main(argv=None, name="test_transactions"):
    global TAG, ELSEWHERE, TARGET_PORT
    parser = harness.arg_parser(__doc__)
    parser.add_argument("--cluster", type=int, default=0)
    args = parser.parse_args(argv)
    report = harness.Report(name)
    if args.cluster:
        server = harness.Cluster(args.server, args.cluster, name="txdiff",
                                 cluster_options={"atomic-multikey": True})
    else:
        server = harness.ServerProcess(args.server, name="ringkv")
    with server as ours, harness.start_oracle() as redis, \
            harness.start_oracle(name="migrate-target") as target:
        TARGET_PORT = target.port
        ports = ours.ports if args.cluster else [ours.port]
        if args.cluster:
            names = spread_names(ports[0])
            # The templates' keys on the first name's node, ELSEWHERE on another one.
            TAG = "{%s}" % names[0]
            ELSEWHERE = names[1]
            got, want = atomic_observations(ports, names), atomic_observations([redis.port], names)
            harness.compare_observations(report, got, want, "atomic observations")
        got, want = scenarios(ports), scenarios([redis.port])
        harness.compare_observations(report, got, want)
        seen = dict(want)
        report.equal(seen["other client writes resp2"][-5:], NULL_RESP2, "RESP2 null EXEC")
        report.equal(seen["other client writes resp3"][-3:], NULL_RESP3, "RESP3 null EXEC")

        commands = write_commands(ports[0])
        report.check(len(commands) > 50, "COMMAND lists the write commands", repr(commands))
        missing = [c for c in commands if c not in TEMPLATES]
        if missing:
            print("write commands without a template: %s" % " ".join(missing), flush=True)
        report.equal(missing, [], "every write command has a template")
        covered = [c for c in commands if c in TEMPLATES]
        got, want = generated(ports, covered), generated([redis.port], covered)
        for (note, g), (_, w) in zip(got, want):
            report.equal(g, w, "%s (ringkv vs redis)" % note)
        changed = {note.split(":")[0] for note, (_, result) in want if result == NULL_RESP2}
        unexercised = [c for c in covered if c not in changed and c not in UNCHANGING]
        report.equal(unexercised, [], "every write command has a template that changes the key")
        for node in (ours.nodes if args.cluster else [ours]):
            report.check(node.alive(), "%s still running" % node.name, node.log())
    report.finish()


if __name__ == "__main__":
    main()
