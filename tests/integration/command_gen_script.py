"""Functions for the differential test's generator (mixed into CommandGen): a library is loaded
(FUNCTION LOAD REPLACE, which a cluster node fans out) and its functions are called with FCALL
and FCALL_RO on the generator's keys, whatever type they hold, so that redis.call's replies and
errors (wrong type, wrong arity, a write from a no-writes function) come back through the
function; sometimes the library is deleted first (Function not found), and numkeys is sometimes
malformed. One key at most per call, so a cluster runs each call on that key's node.
"""

SCRIPT_ARITY = {"fcall": -3, "fcall_ro": -3}

LIBRARY = b"""#!lua name=gen
redis.register_function('gset', function(k, a) return redis.call('set', k[1], a[1]) end)
redis.register_function{function_name='gget', flags={'no-writes'},
  callback=function(k) return redis.call('get', k[1]) end}
redis.register_function('gincr', function(k) return redis.call('incr', k[1]) end)
redis.register_function('gpush', function(k, a)
  redis.call('rpush', k[1], unpack(a)) return redis.call('lrange', k[1], 0, -1) end)
redis.register_function('garity', function(k) return redis.call('hset', k[1]) end)
redis.register_function{function_name='gtype', flags={'no-writes'},
  callback=function(k) return redis.call('type', k[1]) end}
redis.register_function('gpcall', function(k) return redis.pcall('incr', k[1]) end)
redis.register_function{function_name='gbadwrite', flags={'no-writes'},
  callback=function(k) return redis.call('del', k[1]) end}
redis.register_function('gargs', function(k, a) return {#k, #a, a[1], a[2]} end)
"""

FUNCTIONS = [b"gset", b"gget", b"gincr", b"gpush", b"garity", b"gtype", b"gpcall", b"gbadwrite",
             b"gargs", b"GGET", b"nosuch"]


class ScriptGenMixin:
    def gen_function(self):
        r = self.r
        out = [([b"FUNCTION", b"LOAD", b"REPLACE", LIBRARY], "exact")]
        if r.random() < 0.1:
            out.append(([b"FUNCTION", b"DELETE", b"gen"], "exact"))
        for _ in range(r.randint(1, 4)):
            cmd = b"FCALL_RO" if r.random() < 0.3 else b"FCALL"
            fn = r.choice(FUNCTIONS)
            args = [self.value() for _ in range(r.randint(0, 3))]
            x = r.random()
            if x < 0.8:
                out.append(([cmd, fn, b"1", self.key()] + args, "exact"))
            elif x < 0.9:
                out.append(([cmd, b"gargs", b"0"] + args, "exact"))
            else:
                out.append(([cmd, fn, r.choice([b"-1", b"x", b"9", b""])] + args, "exact"))
        return out
