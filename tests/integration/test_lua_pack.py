"""cmsgpack and struct in the script sandbox, differential against a real redis-server 7.0: seeded
random values and formats go through EVAL on both servers and every reply must be byte-identical.

- cmsgpack.pack of random values (boundary integers of every msgpack int width, floats that are
  and are not exact float32s, inf/nan, strings around the fixstr/str8/str16/str32 limits, arrays,
  maps, mixed and deeply nested tables, several values at once): the packed bytes.
- cmsgpack.unpack / unpack_one / unpack_limit of the bytes redis-server packed, of truncated and
  corrupted copies, of hand-made bin/ext/str8 input, and wrong arguments: the decoded values
  (rendered by a Lua function that shows every type and every bit of a number) or the error.
- struct.pack of random formats (byte order, alignment, every integer width including i1..i32,
  c/cN/c0, s, f, d, padding) with fitting and odd arguments (negative, fractional, huge, nan), then
  struct.unpack of those bytes at random offsets and struct.size; random malformed formats.
- the globals: read-only, their fields (pairs() and next() over them), the functions that are
  not there.

    /usr/bin/python3 test_lua_pack.py --server build/ringkv-server [--seed N]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
from harness import DiffPair, RespClient  # noqa: E402

# Renders any Lua values as text: every type, numbers to the last bit, table entries sorted (a
# table's table keys iterate in address order, which differs between processes), so the
# comparison sees all of what came back.
SHOW = r"""
local function show(v, depth)
  local t = type(v)
  if t == 'number' then return string.format('%.17g', v) end
  if t == 'string' then return string.format('%q', v) end
  if t ~= 'table' then return tostring(v) end
  if depth > 40 then return '{...}' end
  local parts = {}
  for k, x in pairs(v) do parts[#parts + 1] = show(k, depth + 1) .. '=' .. show(x, depth + 1) end
  table.sort(parts)
  return '{' .. table.concat(parts, ',') .. '}'
end
local function show_all(...)
  local out = {}
  for i = 1, select('#', ...) do out[i] = show((select(i, ...)), 0) end
  return select('#', ...) .. ':' .. table.concat(out, ' ')
end
"""

INTS = [0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296,
        2 ** 53, 2 ** 62, -1, -31, -32, -33, -127, -128, -129, -32767, -32768, -32769,
        -2147483647, -2147483648, -2147483649, -2 ** 53, -2 ** 62]
NUMBER_EXPRS = ["2^63", "-2^63", "2^64", "-2^64", "1/0", "-1/0", "0/0", "-(0/0)", "-0", "0.5",
                "-0.5", "1.1", "0.1", "3.4028234663852886e38", "3.4028235677973366e38", "1e300",
                "-1e300", "1e-45", "1.401298464324817e-45", "5e-324", "16777216", "16777217",
                "2^24+0.5", "123456.75", "-7.25"]
STRING_LENGTHS = [0, 1, 31, 32, 33, 255, 256, 65535, 65536]


def lua_string(data):
    """A Lua literal for bytes (decimal escapes, so any byte is safe)."""
    return '"' + "".join(chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else "\\%03d" % b
                         for b in data) + '"'


class ValueGen:
    """Random Lua expressions for values cmsgpack can meet."""

    def __init__(self, rng):
        self.r = rng

    def number(self):
        r = self.r
        x = r.random()
        if x < 0.45:
            return str(r.choice(INTS) + r.choice([0, 0, 0, -1, 1]))
        if x < 0.75:
            return r.choice(NUMBER_EXPRS)
        if x < 0.9:
            return repr(r.uniform(-1e6, 1e6))
        return str(r.randint(-2 ** 63, 2 ** 63))

    def string(self):
        r = self.r
        if r.random() < 0.3:
            n = r.choice(STRING_LENGTHS)
            return "string.rep(%s, %d)" % (lua_string(bytes([r.randrange(256)])), n)
        return lua_string(bytes(r.randrange(256) for _ in range(r.randint(0, 40))))

    def table(self, depth):
        r = self.r
        kind = r.random()
        n = r.choice([0, 1, 2, 3, 15, 16, 17]) if r.random() < 0.8 else r.randint(0, 70)
        if kind < 0.4:  # an array 1..n
            return "{" + ",".join(self.value(depth + 1) for _ in range(n)) + "}"
        if kind < 0.7:  # a map with string and number keys
            items = []
            for i in range(n):
                key = r.choice(["[%s]" % self.number(), "k%d" % i, "[%s]" % lua_string(
                    bytes(r.randrange(97, 123) for _ in range(r.randint(1, 5)))), "[%d]" % (i + 2)])
                items.append("%s=%s" % (key, self.value(depth + 1)))
            return "{" + ",".join(items) + "}"
        if kind < 0.85:  # arrays with holes or extra keys
            return "(function() local t = {%s} t[%d] = %s return t end)()" % (
                ",".join(self.value(depth + 1) for _ in range(n)), r.choice([0, n + 2, -1, n]),
                self.value(depth + 1))
        # nesting around the 16-level limit, and a table that contains itself
        levels = r.choice([14, 15, 16, 17, 20])
        if r.random() < 0.3:
            return "(function() local t = {1} t[2] = t t.x = t return t end)()"
        return "{" * levels + self.value(99) + "}" * levels

    def value(self, depth=0):
        r = self.r
        x = r.random()
        if x < 0.35:
            return self.number()
        if x < 0.6:
            return self.string()
        if x < 0.7:
            return r.choice(["true", "false", "nil", "redis.call", "function() end"])
        if depth > 3:
            return self.number()
        return self.table(depth)


def pack_script(args):
    return "return cmsgpack.pack(%s)" % ", ".join(args)


def check_cmsgpack(report, pair, rng, rounds):
    gen = ValueGen(rng)
    packed = []
    for _ in range(rounds):
        args = [gen.value() for _ in range(rng.choice([1, 1, 1, 2, 3, 5]))]
        script = pack_script(args)
        got, want = pair.both("EVAL", script, "0")
        report.equal(got, want, "pack: " + script[:300])
        value = harness.parse_reply(want)
        if isinstance(value, bytes):
            packed.append(value)
    # Decoding what redis-server encoded, whole, one at a time and in slices; then damaged.
    unpack = SHOW + "return show_all(cmsgpack.unpack(ARGV[1]))"
    walk = SHOW + """
local out, offset = {}, tonumber(ARGV[2])
for i = 1, 50 do
  local r = {cmsgpack.unpack_limit(ARGV[1], tonumber(ARGV[3]), offset)}
  out[#out + 1] = show_all(unpack(r))
  offset = r[1]
  if offset == -1 then break end
end
return table.concat(out, '|')"""
    one = SHOW + "return show_all(cmsgpack.unpack_one(ARGV[1], tonumber(ARGV[2])))"
    for data in packed:
        pair.call("EVAL", unpack, "0", data)
        pair.call("EVAL", walk, "0", data, str(rng.choice([0, 0, 1])), str(rng.choice([1, 2, 3])))
        pair.call("EVAL", one, "0", data, str(rng.randint(0, len(data))))
        damaged = bytearray(data)
        x = rng.random()
        if x < 0.4 and len(damaged) > 1:
            del damaged[rng.randrange(1, len(damaged)):]
        elif x < 0.8:
            for _ in range(rng.randint(1, 3)):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        else:
            damaged += bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))
        pair.call("EVAL", unpack, "0", bytes(damaged))
        pair.call("EVAL", one, "0", bytes(damaged), "0")
    for raw in [b"", b"\xc1", b"\xc4\x01a", b"\xc5\x00\x01a", b"\xc6\x00\x00\x00\x01a",
                b"\xc7\x01\x05a", b"\xd4\x01a", b"\xd8\x01" + b"a" * 16, b"\xd9\x03abc",
                b"\xd9\x05abc", b"\xda\x00\x03abc", b"\xdb\x00\x00\x00\x03abc", b"\xdb\xff\xff\xff\xff",
                b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff", b"\xcf\x80" + b"\x00" * 7,
                b"\xd3\x80" + b"\x00" * 7, b"\xd3\x7f" + b"\xff" * 7, b"\xca\x7f\xc0\x00\x00",
                b"\xcb\xff\xf8" + b"\x00" * 6, b"\xce\xff\xff\xff\xff", b"\xd2\x80\x00\x00\x00",
                b"\xd1\x80\x00", b"\xd0\x80", b"\xe0", b"\xff", b"\x81\xc0\x01", b"\x81\x01",
                b"\x81\xcb\xff\xf8\x00\x00\x00\x00\x00\x00\x01", b"\x92\x01", b"\x93\xc0\xc0\xc0",
                b"\xdc\x00\x01\x07", b"\xdd\x00\x00\x00\x01\x07", b"\xde\x00\x01\x01\x02",
                b"\xdf\x00\x00\x00\x01\xa1k\xc3", b"\x91" * 3000 + b"\x01", b"\x01" * 9000,
                b"\x81" * 100 + b"\x01"]:
        pair.call("EVAL", unpack, "0", raw)
        pair.call("EVAL", walk, "0", raw, "0", "2")
    for script in ["return cmsgpack.pack()", "return cmsgpack.unpack()",
                   "return cmsgpack.unpack({})", "return cmsgpack.unpack(12)",
                   "return cmsgpack.unpack_one()", "return cmsgpack.unpack_one('\\1', -1)",
                   "return cmsgpack.unpack_one('\\1\\2', 3)", "return cmsgpack.unpack_one('\\1', 'x')",
                   "return {cmsgpack.unpack_one('\\1\\2', 2)}", "return {cmsgpack.unpack_one('\\1\\2', 1.7)}",
                   "return cmsgpack.unpack_limit('\\1')", "return cmsgpack.unpack_limit('\\1', -2, 0)",
                   "return {cmsgpack.unpack_limit('\\1\\2', 0)}", "return {cmsgpack.unpack_limit('\\1\\2', 0, 1)}",
                   "return {cmsgpack.unpack_limit('\\1\\2', 5, 2)}",
                   "return cmsgpack.pack(unpack((function() local t = {} for i = 1, 5000 do t[i] = i end return t end)()))",
                   "return #cmsgpack.pack(unpack((function() local t = {} for i = 1, 3000 do t[i] = i end return t end)()))",
                   "return {cmsgpack.unpack(cmsgpack.pack(1, 'a', {2}, nil, true))}",
                   "return cmsgpack._NAME .. cmsgpack._VERSION .. cmsgpack._COPYRIGHT .. cmsgpack._DESCRIPTION",
                   "cmsgpack.pack = nil", "cmsgpack.x = 1", "struct.pack = nil", "struct.y = 1",
                   "rawset(cmsgpack, 'x', 1)", "setmetatable(struct, {})", "return cmsgpack_safe",
                   "return cmsgpack.unpack_safe", "return struct.x",
                   "local o = {} for k in pairs(cmsgpack) do o[#o + 1] = k end return o",
                   "local o = {} for k, v in pairs(struct) do o[#o + 1] = k end return o",
                   "return {next(struct, 'pack')}", "return next(cmsgpack, 'nosuch')",
                   "return tostring(pairs({}) == next)", "return pairs()", "return next(1)",
                   "return type(cmsgpack) .. type(struct) .. type(cmsgpack.unpack_limit)",
                   "local t = setmetatable({}, {__index = function(t, k) return k * 2 end}) t[1] = 1 t[2] = 2 return cmsgpack.pack(t)"]:
        pair.call("EVAL", script, "0")


# struct: option letters with the argument each one takes (None: takes none).
INT_OPTS = ["b", "B", "h", "H", "l", "L", "T", "i", "I"]


class FormatGen:
    """Random struct formats with arguments that fit them (mostly) or do not."""

    def __init__(self, rng):
        self.r = rng

    def int_arg(self):
        r = self.r
        x = r.random()
        if x < 0.5:
            return str(r.randint(-300, 300))
        if x < 0.8:
            return str(r.choice([2 ** 7, 2 ** 8, 2 ** 15, 2 ** 16, 2 ** 31, 2 ** 32, 2 ** 53,
                                 2 ** 63, 2 ** 64]) * r.choice([1, -1]) + r.randint(-1, 1))
        return r.choice(["0/0", "1/0", "-1/0", "2^63", "2^64", "-2^63", "-2^64", "1e300",
                         "-1e300", "2.5", "-2.5", "0.999", "'12'", "'0x10'"])

    def item(self, args):
        r = self.r
        x = r.random()
        if x < 0.45:
            opt = r.choice(INT_OPTS)
            if opt in "iI" and r.random() < 0.7:
                opt += str(r.choice([1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 31, 32]))
            args.append(self.int_arg())
            return opt
        if x < 0.6:
            opt = r.choice(["f", "d"])
            args.append(r.choice(["1.5", "-0.1", "1e300", "1/0", "0/0", "3.4028235e38", "7",
                                  repr(r.uniform(-1e9, 1e9))]))
            return opt
        if x < 0.75:
            data = bytes(r.randrange(256) for _ in range(r.randint(0, 12)))
            n = r.choice(["", "0", str(len(data)), str(max(0, len(data) - 1)), str(len(data) + 1)])
            args.append(lua_string(data))
            return "c" + n
        if x < 0.82:
            data = bytes(r.randrange(1, 256) for _ in range(r.randint(0, 10)))
            args.append(lua_string(data))
            return "s"
        if x < 0.9:
            return r.choice(["x", " ", "xx"])
        return r.choice([">", "<", "!", "!1", "!2", "!4", "!8", "!16"])

    def format(self):
        args = []
        fmt = "".join(self.item(args) for _ in range(self.r.randint(1, 8)))
        if self.r.random() < 0.5:
            fmt = self.r.choice(["<", ">", "!", "!4", ">!8", "<!2"]) + fmt
        return fmt, args


def check_struct(report, pair, rng, rounds):
    gen = FormatGen(rng)
    roundtrip = SHOW + """
local ok, packed = pcall(struct.pack, ARGV[1], @ARGS@)
if not ok then return 'pack error: ' .. packed end
local okn, size = pcall(struct.size, ARGV[1])
local pos = tonumber(ARGV[2])
return {packed, tostring(size), show_all(pcall(struct.unpack, ARGV[1], packed, pos)),
        show_all(pcall(struct.unpack, ARGV[1], packed .. 'tail\\0', 1))}"""
    for _ in range(rounds):
        fmt, args = gen.format()
        if rng.random() < 0.1 and args:
            args.pop(rng.randrange(len(args)))  # one argument short
        elif rng.random() < 0.05:
            args.insert(rng.randrange(len(args) + 1), rng.choice(["{}", "nil", "true"]))
        script = roundtrip.replace("@ARGS@", ", ".join(args) if args else "nil")
        pair.call("EVAL", script, "0", fmt, str(rng.choice([1, 1, 1, 2, 3])))
    # Errors raised straight from the library, with their positions and argument numbers.
    for script in ["return struct.pack('i33', 1)", "return struct.pack('i99999999999', 1)",
                   "return struct.pack('!3b', 1)", "return struct.pack('!0b', 1)",
                   "return struct.pack('z', 1)", "return struct.pack('4', 1)",
                   "return struct.pack('b')", "return struct.pack('bb', 1)",
                   "return struct.pack('bbb', 1)", "return struct.pack('b', 'x')",
                   "return struct.pack('c3', 'ab')", "return struct.pack('bc3', 1, 'ab')",
                   "return struct.pack('s', {})", "return struct.pack()", "return struct.pack({})",
                   "return struct.pack('c0s', 'abc', 'de')", "return struct.pack(12, 1)",
                   "return struct.pack('c99999999999', 'a')",
                   "return {struct.unpack('b', 'abc', 0)}", "return {struct.unpack('', 'abc', -5)}",
                   "return {struct.unpack('b', 'abc', -5)}", "return {struct.unpack('b', 'abc', 4)}",
                   "return {struct.unpack('', 'abc', 4)}", "return {struct.unpack('', 'abc', 5)}",
                   "return {struct.unpack('c0', 'abc')}", "return {struct.unpack('bc0', '\\2abc')}",
                   "return {struct.unpack('bc0', '\\9abc')}", "return {struct.unpack('c1c0', '2abc')}",
                   "return {struct.unpack('c1c0', 'xabc')}", "return {struct.unpack('s', 'abc')}",
                   "return {struct.unpack('ss', 'a\\0b\\0c')}", "return {struct.unpack('z', 'abc')}",
                   "return {struct.unpack('b', 'abc', 'x')}", "return {struct.unpack('b')}",
                   "return {struct.unpack('i40', 'abc')}", "return {struct.unpack('!5', 'abc')}",
                   "return {struct.unpack('b', 'abc', 2.9)}", "return {struct.unpack('>i0', 'abc')}",
                   "return {struct.unpack(string.rep('b', 9000), string.rep('a', 9000))}",
                   "return struct.size('bhilLTfdc5x')", "return struct.size('!bhilLTfdc5x')",
                   "return struct.size('!2bhi3c5')", "return struct.size('s')",
                   "return struct.size('c0')", "return struct.size('z9')", "return struct.size('$')",
                   "return struct.size('!7')", "return struct.size('i33')", "return struct.size()",
                   "return struct.size('>!4 b i')", "return struct.pack('>!4 b i', 1, 2)",
                   "return struct.pack(string.rep('c1', 3000), unpack((function() local t = {} for i = 1, 3000 do t[i] = 'a' end return t end)()))"]:
        pair.call("EVAL", script, "0")


def main():
    p = harness.arg_parser(__doc__)
    p.add_argument("--seed", type=int, default=None)
    opts = p.parse_args()
    rng, _ = harness.seeded_rng(opts.seed)
    report = harness.Report("test_lua_pack")
    with harness.ServerProcess(opts.server, name="ringkv") as server, \
            harness.start_oracle() as oracle:
        with DiffPair(report, server.port, oracle.port, "luapack") as pair:
            check_cmsgpack(report, pair, rng, harness.scaled(150, 20))
            check_struct(report, pair, rng, harness.scaled(250, 20))
        for port in (server.port, oracle.port):
            with RespClient(port) as c:
                c.call("SCRIPT", "FLUSH")
        harness.check_clean_exit(report, server)
    report.finish()


if __name__ == "__main__":
    main()
