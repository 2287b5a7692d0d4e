// The `struct` library of the script sandbox: struct.pack(fmt, ...), struct.unpack(fmt, s, [pos])
// and struct.size(fmt), converting between Lua values and C-struct bytes as struct 0.2 (the copy
// redis-server 7.0 embeds, with its bounds checks) does on x86-64 Linux: char 1, short 2, int 4,
// long and size_t 8 bytes, native order little endian, default maximum alignment 8.
//
// Formats: '>' / '<' byte order, '![n]' maximum alignment, 'x' a zero byte, 'b' 'B' 'h' 'H' 'l'
// 'L' 'T' integers, 'i[n]' 'I[n]' integers of n bytes (up to 32), 'c[n]' n chars ('c0': the whole
// string when packing, the length read just before when unpacking), 's' a zero-terminated string,
// 'f' 'd' float and double, ' ' ignored.
//
// Numbers become integers the way the x86-64 C casts of the original do (out of range: the
// 0x8000000000000000 the CPU gives, 2^64 and above: 0 as unsigned), so the bytes of odd input
// match too. The Lua stack is used as the original uses it: its nil marker and string buffer sit
// above the arguments, and a missing argument reads that marker ("got nil", as Redis says).
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <lua.hpp>
#include <utility>

#include "common/numbers.h"
#include "engine/scripting/lua_libraries.h"

namespace ringkv::engine {

namespace {

constexpr int kMaxIntSize = 32;
constexpr int kMaxAlign = 8;  // the alignment of a double after a char
enum Endian { kBig = 0, kLittle = 1 };
constexpr int kNativeEndian = kLittle;

struct Header {
  int endian = kNativeEndian;
  int align = 1;
};

// A decimal count after an option, or `df` when none follows.
int read_number(lua_State* L, const char** fmt, int df) {
  if (!isdigit(static_cast<unsigned char>(**fmt))) return df;
  int a = 0;
  do {
    const int digit = **fmt - '0';
    if (a > INT_MAX / 10 || a * 10 > INT_MAX - digit) luaL_error(L, "integral size overflow");
    a = a * 10 + digit;
    ++*fmt;
  } while (isdigit(static_cast<unsigned char>(**fmt)));
  return a;
}

// The integer options: signed when lowercase (T, size_t, is unsigned).
bool is_integer_option(int opt) { return opt != '\0' && std::strchr("bBhHlLTiI", opt) != nullptr; }

// The size of option `opt` (reading its count from `fmt`); 0 for the options without one.
size_t option_size(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'B':
    case 'b':
    case 'x':
      return 1;
    case 'H':
    case 'h':
      return 2;
    case 'L':
    case 'l':
    case 'T':
    case 'd':
      return 8;
    case 'f':
      return 4;
    case 'c':
      return static_cast<size_t>(read_number(L, fmt, 1));
    case 'i':
    case 'I': {
      const int size = read_number(L, fmt, 4);
      if (size > kMaxIntSize) {
        luaL_error(L, "integral size %d is larger than limit of %d", size, kMaxIntSize);
      }
      return static_cast<size_t>(size);
    }
    default:
      return 0;
  }
}

// Padding before an item of `size` bytes at offset `len`. As in the original, a size that is
// not a power of two (i3, i5...) gets the original's arithmetic, not a true alignment.
int padding(size_t len, const Header& h, int opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > static_cast<size_t>(h.align)) size = static_cast<size_t>(h.align);
  return static_cast<int>((size - (len & (size - 1))) & (size - 1));
}

bool is_power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

void control_option(lua_State* L, int opt, const char** fmt, Header& h) {
  switch (opt) {
    case ' ':
      return;
    case '>':
      h.endian = kBig;
      return;
    case '<':
      h.endian = kLittle;
      return;
    case '!': {
      const int a = read_number(L, fmt, kMaxAlign);
      if (!is_power_of_two(a)) luaL_error(L, "alignment %d is not a power of 2", a);
      h.align = a;
      return;
    }
    default:
      luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
  }
}

// Reverses `size` bytes when the requested order is not the machine's.
void order_bytes(char* b, int size, int endian) {
  if (endian == kNativeEndian) return;
  for (int i = 0, j = size - 1; i < j; ++i, --j) std::swap(b[i], b[j]);
}

void put_integer(lua_State* L, luaL_Buffer* b, int arg, int endian, int size) {
  const lua_Number n = luaL_checknumber(L, arg);
  uint64_t value =
      n < 0 ? static_cast<uint64_t>(common::x86_to_int64(n)) : common::x86_to_uint64(n);
  char buff[kMaxIntSize];
  // Past 8 bytes the value has been shifted out: the extra bytes are zeros, even for negatives.
  if (endian == kLittle) {
    for (int i = 0; i < size; ++i) {
      buff[i] = static_cast<char>(value & 0xff);
      value >>= 8;
    }
  } else {
    for (int i = size - 1; i >= 0; --i) {
      buff[i] = static_cast<char>(value & 0xff);
      value >>= 8;
    }
  }
  luaL_addlstring(b, buff, static_cast<size_t>(size));
}

// `n` as a float or double in `endian` order.
template <typename Float>
void add_float(luaL_Buffer* b, lua_Number n, int endian) {
  auto f = static_cast<Float>(n);
  char bytes[sizeof(Float)];
  std::memcpy(bytes, &f, sizeof bytes);
  order_bytes(bytes, sizeof bytes, endian);
  luaL_addlstring(b, bytes, sizeof bytes);
}

int struct_pack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  int arg = 2;
  size_t total = 0;
  lua_pushnil(L);  // separates the arguments from the buffer's pieces
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  while (*fmt != '\0') {
    const int opt = *fmt++;
    size_t size = option_size(L, static_cast<char>(opt), &fmt);
    int pad = padding(total, h, opt, size);
    total += static_cast<size_t>(pad);
    while (pad-- > 0) luaL_addchar(&b, '\0');
    if (is_integer_option(opt)) {
      put_integer(L, &b, arg++, h.endian, static_cast<int>(size));
      total += size;
      continue;
    }
    switch (opt) {
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f':
        add_float<float>(&b, luaL_checknumber(L, arg++), h.endian);
        break;
      case 'd':
        add_float<double>(&b, luaL_checknumber(L, arg++), h.endian);
        break;
      case 'c':
      case 's': {
        size_t len = 0;
        const char* s = luaL_checklstring(L, arg++, &len);
        if (size == 0) size = len;
        // The original names the argument after this one; Redis's errors say the same.
        luaL_argcheck(L, len >= size, arg, "string too short");
        luaL_addlstring(&b, s, size);
        if (opt == 's') {
          luaL_addchar(&b, '\0');
          ++size;
        }
        break;
      }
      default:
        control_option(L, opt, &fmt, h);
    }
    total += size;
  }
  luaL_pushresult(&b);
  return 1;
}

lua_Number get_integer(const char* buff, int endian, bool is_signed, int size) {
  uint64_t l = 0;
  if (endian == kBig) {
    for (int i = 0; i < size; ++i) l = (l << 8) | static_cast<unsigned char>(buff[i]);
  } else {
    for (int i = size - 1; i >= 0; --i) l = (l << 8) | static_cast<unsigned char>(buff[i]);
  }
  if (!is_signed) return static_cast<lua_Number>(l);
  // The sign bit of a `size`-byte integer; the x86 shift uses the count modulo 64, which is
  // what the original gets for sizes 0 and above 8.
  const uint64_t mask = ~uint64_t{0} << ((size * 8 - 1) & 63);
  if ((l & mask) != 0) l |= mask;
  return static_cast<lua_Number>(static_cast<int64_t>(l));
}

// A float or double stored in `endian` order at `data`.
template <typename Float>
lua_Number read_float(const char* data, int endian) {
  char bytes[sizeof(Float)];
  std::memcpy(bytes, data, sizeof bytes);
  order_bytes(bytes, sizeof bytes, endian);
  Float f;
  std::memcpy(&f, bytes, sizeof f);
  return f;
}

int struct_unpack(lua_State* L) {
  Header h;
  const char* fmt = luaL_checkstring(L, 1);
  size_t ld = 0;
  const char* data = luaL_checklstring(L, 2, &ld);
  size_t pos = static_cast<size_t>(luaL_optinteger(L, 3, 1));
  luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
  --pos;
  int n = 0;
  while (*fmt != '\0') {
    const int opt = *fmt++;
    size_t size = option_size(L, static_cast<char>(opt), &fmt);
    pos += static_cast<size_t>(padding(pos, h, opt, size));
    luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");
    if (is_integer_option(opt)) {
      lua_pushnumber(
          L, get_integer(data + pos, h.endian, islower(static_cast<unsigned char>(opt)) != 0,
                         static_cast<int>(size)));
      ++n;
      pos += size;
      continue;
    }
    switch (opt) {
      case 'x':
        break;
      case 'f':
        lua_pushnumber(L, read_float<float>(data + pos, h.endian));
        ++n;
        break;
      case 'd':
        lua_pushnumber(L, read_float<double>(data + pos, h.endian));
        ++n;
        break;
      case 'c': {
        if (size == 0) {
          // The length is the value unpacked just before (a number, or a numeric string).
          if (n == 0 || lua_isnumber(L, -1) == 0)
            luaL_error(L, "format 'c0' needs a previous size");
          size = common::x86_to_uint64(lua_tonumber(L, -1));
          lua_pop(L, 1);
          --n;
          luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        }
        lua_pushlstring(L, data + pos, size);
        ++n;
        break;
      }
      case 's': {
        const void* end = std::memchr(data + pos, '\0', ld - pos);
        if (end == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<size_t>(static_cast<const char*>(end) - (data + pos)) + 1;
        lua_pushlstring(L, data + pos, size - 1);
        ++n;
        break;
      }
      default:
        control_option(L, opt, &fmt, h);
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return n + 1;
}

int struct_size(lua_State* L) {
  Header h;
  const char* fmt = luaL_checkstring(L, 1);
  size_t pos = 0;
  while (*fmt != '\0') {
    const int opt = *fmt++;
    const size_t size = option_size(L, static_cast<char>(opt), &fmt);
    pos += static_cast<size_t>(padding(pos, h, opt, size));
    if (opt == 's') {
      luaL_argerror(L, 1, "option 's' has no fixed size");
    } else if (opt == 'c' && size == 0) {
      luaL_argerror(L, 1, "option 'c0' has no fixed size");
    }
    // Unknown letters and digits count as size 0 here, without the error pack and unpack give.
    if (!isalnum(static_cast<unsigned char>(opt))) control_option(L, opt, &fmt, h);
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

}  // namespace

int open_struct(lua_State* L) {
  lua_newtable(L);
  const luaL_Reg functions[] = {
      {"pack", struct_pack}, {"unpack", struct_unpack}, {"size", struct_size}};
  for (const luaL_Reg& f : functions) {
    lua_pushcfunction(L, f.func);
    lua_setfield(L, -2, f.name);
  }
  return 1;
}

}  // namespace ringkv::engine
