// Redis 7.0's RDB building blocks, byte for byte: see rdb_format.h. Readers validate everything
// they walk (Redis checks only headers unless sanitize-dump-payload is on), so a malformed
// payload is refused instead of read out of bounds.
#include "engine/rdb/rdb_format.h"

#include <lzf.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "engine/commands/string_ops.h"

namespace ringkv::engine::rdb {
namespace {

// String encodings after the 0b11 length prefix (rdb.h).
constexpr uint8_t kEncInt8 = 0;
constexpr uint8_t kEncInt16 = 1;
constexpr uint8_t kEncInt32 = 2;
constexpr uint8_t kEncLzf = 3;

// LZF's longest back reference writes 264 bytes from 3 input bytes: a bigger claimed size is
// corrupt, and checking it bounds the allocation.
constexpr uint64_t kLzfMaxRatio = 90;

constexpr size_t kListpackHeader = 6;
constexpr uint8_t kListpackEnd = 0xff;
constexpr uint16_t kListpackCountUnknown = 65535;

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

// rdbEncodeInteger: the INT8/16/32 encodings; 0 when `v` needs more than 32 bits.
size_t encode_integer(int64_t v, unsigned char* enc) {
  if (v >= -(1 << 7) && v <= (1 << 7) - 1) {
    enc[0] = 0xc0 | kEncInt8;
    enc[1] = static_cast<unsigned char>(v & 0xff);
    return 2;
  }
  if (v >= -(1 << 15) && v <= (1 << 15) - 1) {
    enc[0] = 0xc0 | kEncInt16;
    enc[1] = static_cast<unsigned char>(v & 0xff);
    enc[2] = static_cast<unsigned char>((v >> 8) & 0xff);
    return 3;
  }
  if (v >= -(int64_t{1} << 31) && v <= (int64_t{1} << 31) - 1) {
    enc[0] = 0xc0 | kEncInt32;
    for (int i = 0; i < 4; ++i) enc[1 + i] = static_cast<unsigned char>((v >> (8 * i)) & 0xff);
    return 5;
  }
  return 0;
}

// Listpack entry encoding of the integer `v` (lpEncodeIntegerGetType): its bytes, without
// backlen, in `enc`; returns how many.
size_t listpack_int_encoding(int64_t v, unsigned char* enc) {
  if (v >= 0 && v <= 127) {
    enc[0] = static_cast<unsigned char>(v);
    return 1;
  }
  if (v >= -4096 && v <= 4095) {
    const uint64_t u = v < 0 ? static_cast<uint64_t>((int64_t{1} << 13) + v) : v;
    enc[0] = static_cast<unsigned char>((u >> 8) | 0xc0);
    enc[1] = static_cast<unsigned char>(u & 0xff);
    return 2;
  }
  const auto u = static_cast<uint64_t>(v);
  auto fill = [&](unsigned char tag, int bytes) {
    enc[0] = tag;
    for (int i = 0; i < bytes; ++i) enc[1 + i] = static_cast<unsigned char>((u >> (8 * i)) & 0xff);
    return static_cast<size_t>(1 + bytes);
  };
  if (v >= -32768 && v <= 32767) return fill(0xf1, 2);
  if (v >= -8388608 && v <= 8388607) return fill(0xf2, 3);
  if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max())
    return fill(0xf3, 4);
  return fill(0xf4, 8);
}

// Listpack entry encoding of `element` (lpEncodeGetType + lpEncodeString/lpEncodeIntegerGetType);
// returns the encoded bytes (without backlen) in `enc` for integers, or the header for strings.
size_t listpack_header(std::string_view element, unsigned char* enc, bool& is_int) {
  int64_t v = 0;
  is_int = element.size() <= 20 && parse_int64(element, v);
  if (is_int) return listpack_int_encoding(v, enc);
  const size_t len = element.size();
  if (len < 64) {
    enc[0] = static_cast<unsigned char>(0x80 | len);
    return 1;
  }
  if (len < 4096) {
    enc[0] = static_cast<unsigned char>((len >> 8) | 0xe0);
    enc[1] = static_cast<unsigned char>(len & 0xff);
    return 2;
  }
  enc[0] = 0xf0;
  for (int i = 0; i < 4; ++i) enc[1 + i] = static_cast<unsigned char>((len >> (8 * i)) & 0xff);
  return 5;
}

// lpEncodeBacklen: the entry's size (encoding + data) written to be read right to left.
size_t backlen(uint64_t l, unsigned char* buf) {
  size_t n = 1;
  if (l > 127) n = l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t part = (l >> (7 * (n - 1 - i))) & 127;
    buf[i] = static_cast<unsigned char>(i == 0 ? part : part | 128);
  }
  return n;
}

size_t listpack_entry_size(std::string_view element) {
  unsigned char enc[9];
  bool is_int = false;
  const size_t head = listpack_header(element, enc, is_int);
  const size_t l = head + (is_int ? 0 : element.size());
  unsigned char bl[5];
  return l + backlen(l, bl);
}

std::string_view int_text(int64_t v, char (&buf)[24]) {
  const auto end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
  return {buf, static_cast<size_t>(end - buf)};
}

int64_t sign_extend(uint64_t v, int bits) {
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}

bool g_compression = true;

}  // namespace

void set_compression(bool on) { g_compression = on; }
bool compression() { return g_compression; }

void write_len(std::string& out, uint64_t len) {
  if (len < (1 << 6)) {
    out.push_back(static_cast<char>(len));
  } else if (len < (1 << 14)) {
    out.push_back(static_cast<char>(((len >> 8) & 0xff) | 0x40));
    out.push_back(static_cast<char>(len & 0xff));
  } else if (len <= std::numeric_limits<uint32_t>::max()) {
    out.push_back(static_cast<char>(0x80));
    for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  } else {
    out.push_back(static_cast<char>(0x81));
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  }
}

void write_string(std::string& out, std::string_view s) {
  if (s.size() <= 11) {
    int64_t v = 0;
    unsigned char enc[5];
    size_t n = 0;
    if (parse_int64(s, v) && (n = encode_integer(v, enc)) > 0) {
      out.append(reinterpret_cast<const char*>(enc), n);
      return;
    }
  }
  if (g_compression && s.size() > 20) {
    // rdbSaveLzfStringObject: worth it only when it saves at least 4 bytes.
    std::string compressed(s.size() - 4 + 1, '\0');
    const unsigned int clen =
        lzf_compress(s.data(), static_cast<unsigned int>(s.size()), compressed.data(),
                     static_cast<unsigned int>(s.size() - 4));
    if (clen > 0) {
      out.push_back(static_cast<char>(0xc0 | kEncLzf));
      write_len(out, clen);
      write_len(out, s.size());
      out.append(compressed.data(), clen);
      return;
    }
  }
  write_len(out, s.size());
  out.append(s);
}

bool write_compressed_node(std::string& out, std::string_view listpack) {
  constexpr size_t kMinCompressBytes = 48;   // quicklist.c MIN_COMPRESS_BYTES
  constexpr size_t kMinCompressImprove = 8;  // quicklist.c MIN_COMPRESS_IMPROVE
  if (listpack.size() < kMinCompressBytes) return false;
  std::string compressed(listpack.size(), '\0');
  const unsigned int clen =
      lzf_compress(listpack.data(), static_cast<unsigned int>(listpack.size()), compressed.data(),
                   static_cast<unsigned int>(listpack.size()));
  if (clen == 0 || clen + kMinCompressImprove >= listpack.size()) return false;
  out.push_back(static_cast<char>(0xc0 | kEncLzf));
  write_len(out, clen);
  write_len(out, listpack.size());
  out.append(compressed.data(), clen);
  return true;
}

void write_binary_double(std::string& out, double d) {
  uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof(bits));
  put_le(out, bits, 8);
}

std::string_view double_to_string(double d, char (&buf)[32]) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  constexpr double kMin = -4503599627370495.0;
  constexpr double kMax = 4503599627370496.0;
  if (d > kMin && d < kMax && d == static_cast<double>(static_cast<int64_t>(d))) {
    const auto end = std::to_chars(buf, buf + sizeof(buf), static_cast<int64_t>(d)).ptr;
    return {buf, static_cast<size_t>(end - buf)};
  }
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", d);
  return {buf, static_cast<size_t>(n)};
}

size_t listpack_element_size(std::string_view element) { return listpack_entry_size(element); }

size_t listpack_int_element_size(int64_t v) {
  unsigned char enc[9];
  return listpack_int_encoding(v, enc) + 1;  // at most 9 bytes: a backlen of one
}

ListpackWriter::ListpackWriter() : buf_(kListpackHeader, '\0') {}

void ListpackWriter::add(std::string_view element) {
  unsigned char enc[9];
  bool is_int = false;
  const size_t head = listpack_header(element, enc, is_int);
  buf_.append(reinterpret_cast<const char*>(enc), head);
  if (!is_int) buf_.append(element);
  unsigned char bl[5];
  const size_t n = backlen(head + (is_int ? 0 : element.size()), bl);
  buf_.append(reinterpret_cast<const char*>(bl), n);
  ++count_;
}

size_t ListpackWriter::size_with(std::string_view element) const {
  return size() + listpack_entry_size(element);
}

std::string ListpackWriter::finish() {
  buf_.push_back(static_cast<char>(kListpackEnd));
  std::string header;
  put_le(header, buf_.size(), 4);
  put_le(header, count_ < kListpackCountUnknown ? count_ : kListpackCountUnknown, 2);
  buf_.replace(0, kListpackHeader, header);
  std::string out = std::move(buf_);
  buf_.assign(kListpackHeader, '\0');
  count_ = 0;
  return out;
}

std::string intset_bytes(std::span<const int64_t> values) {
  uint32_t width = 2;
  for (int64_t v : values) {
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      width = 8;
      break;
    }
    if (v < std::numeric_limits<int16_t>::min() || v > std::numeric_limits<int16_t>::max())
      width = 4;
  }
  std::string out;
  out.reserve(8 + width * values.size());
  put_le(out, width, 4);
  put_le(out, values.size(), 4);
  for (int64_t v : values) put_le(out, static_cast<uint64_t>(v), static_cast<int>(width));
  return out;
}

bool Reader::read_byte(uint8_t& b) {
  if (pos_ >= data_.size()) return ran_out();
  b = static_cast<uint8_t>(data_[pos_++]);
  return true;
}

// rdbLoadLenByRef; `encoded` is set for the 0b11 string-encoding marker.
bool Reader::read_len_or_encoding(uint64_t& len, bool& encoded) {
  uint8_t b = 0;
  encoded = false;
  if (!read_byte(b)) return false;
  const int kind = (b & 0xc0) >> 6;
  if (kind == 3) {
    encoded = true;
    len = b & 0x3f;
    return true;
  }
  if (kind == 0) {
    len = b & 0x3f;
    return true;
  }
  if (kind == 1) {
    uint8_t lo = 0;
    if (!read_byte(lo)) return false;
    len = (uint64_t{b} & 0x3f) << 8 | lo;
    return true;
  }
  int bytes = 0;
  if (b == 0x80) bytes = 4;
  if (b == 0x81) bytes = 8;
  if (bytes == 0) return false;
  len = 0;
  for (int i = 0; i < bytes; ++i) {
    uint8_t x = 0;
    if (!read_byte(x)) return false;
    len = len << 8 | x;
  }
  return true;
}

bool Reader::read_len(uint64_t& len) {
  bool encoded = false;
  return read_len_or_encoding(len, encoded) && !encoded;
}

bool Reader::read_string(std::string& out) {
  uint64_t len = 0;
  bool encoded = false;
  if (!read_len_or_encoding(len, encoded)) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(data_.data());
  if (!encoded) {
    if (len > remaining()) return ran_out();
    out.assign(data_.substr(pos_, len));
    pos_ += len;
    return true;
  }
  if (len == kEncInt8 || len == kEncInt16 || len == kEncInt32) {
    const int bytes = len == kEncInt8 ? 1 : len == kEncInt16 ? 2 : 4;
    if (remaining() < static_cast<size_t>(bytes)) return ran_out();
    const int64_t v = sign_extend(get_le(p + pos_, bytes), 8 * bytes);
    pos_ += bytes;
    char buf[24];
    out.assign(int_text(v, buf));
    return true;
  }
  if (len != kEncLzf) return fail();
  uint64_t clen = 0;
  uint64_t ulen = 0;
  if (!read_len(clen) || !read_len(ulen)) return false;
  if (ulen > clen * kLzfMaxRatio) return fail();
  if (clen > remaining()) return ran_out();
  if (ulen == 0) {
    // lzf_decompress reports failure as 0, which Redis takes for the expected empty result.
    out.clear();
    pos_ += clen;
    return true;
  }
  out.resize(ulen);
  const unsigned int got = lzf_decompress(data_.data() + pos_, static_cast<unsigned int>(clen),
                                          out.data(), static_cast<unsigned int>(ulen));
  if (got != ulen) return fail();
  pos_ += clen;
  return true;
}

bool Reader::read_raw(size_t n, std::string_view& out) {
  if (n > remaining()) return ran_out();
  out = data_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool Reader::read_binary_double(double& d) {
  if (remaining() < 8) return ran_out();
  const uint64_t bits = get_le(reinterpret_cast<const unsigned char*>(data_.data()) + pos_, 8);
  std::memcpy(&d, &bits, sizeof(d));
  pos_ += 8;
  return true;
}

bool Reader::read_text_double(double& d) {
  uint8_t len = 0;
  if (!read_byte(len)) return false;
  if (len == 253) {
    d = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (len == 254 || len == 255) {
    d = len == 254 ? std::numeric_limits<double>::infinity()
                   : -std::numeric_limits<double>::infinity();
    return true;
  }
  if (len > remaining()) return ran_out();
  const std::string text(data_.substr(pos_, len));
  pos_ += len;
  char* end = nullptr;
  d = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && !text.empty();
}

bool listpack_for_each(std::string_view lp, const ElementVisit& visit) {
  const auto* p = reinterpret_cast<const unsigned char*>(lp.data());
  const size_t size = lp.size();
  if (size < kListpackHeader + 1 || get_le(p, 4) != size || p[size - 1] != kListpackEnd)
    return false;
  const uint64_t declared = get_le(p + 4, 2);
  size_t pos = kListpackHeader;
  const size_t end = size - 1;
  uint64_t count = 0;
  char buf[24];
  while (pos < end) {
    const unsigned char b = p[pos];
    size_t head = 0;
    uint64_t data_len = 0;
    bool is_int = true;
    int64_t v = 0;
    auto need = [&](size_t n) { return end - pos >= n; };
    if ((b & 0x80) == 0) {
      head = 1;
      v = b & 0x7f;
    } else if ((b & 0xc0) == 0x80) {
      head = 1;
      data_len = b & 0x3f;
      is_int = false;
    } else if ((b & 0xe0) == 0xc0) {
      if (!need(2)) return false;
      head = 2;
      v = sign_extend((uint64_t{b} & 0x1f) << 8 | p[pos + 1], 13);
    } else if ((b & 0xf0) == 0xe0) {
      if (!need(2)) return false;
      head = 2;
      data_len = (uint64_t{b} & 0x0f) << 8 | p[pos + 1];
      is_int = false;
    } else if (b == 0xf0) {
      if (!need(5)) return false;
      head = 5;
      data_len = get_le(p + pos + 1, 4);
      is_int = false;
    } else if (b >= 0xf1 && b <= 0xf4) {
      const int bytes = b == 0xf1 ? 2 : b == 0xf2 ? 3 : b == 0xf3 ? 4 : 8;
      if (!need(1 + bytes)) return false;
      head = 1 + bytes;
      v = sign_extend(get_le(p + pos + 1, bytes), 8 * bytes);
    } else {
      return false;
    }
    if (data_len > end - pos - head) return false;
    const uint64_t l = head + data_len;
    unsigned char bl[5];
    const size_t bn = backlen(l, bl);
    if (end - pos - l < bn || std::memcmp(p + pos + l, bl, bn) != 0) return false;
    const std::string_view element =
        is_int ? int_text(v, buf) : lp.substr(pos + head, static_cast<size_t>(data_len));
    if (!visit(element)) return false;
    pos += l + bn;
    ++count;
  }
  return declared == kListpackCountUnknown || declared == count;
}

bool intset_for_each(std::string_view is, const std::function<bool(int64_t)>& visit) {
  const auto* p = reinterpret_cast<const unsigned char*>(is.data());
  if (is.size() < 8) return false;
  const uint64_t width = get_le(p, 4);
  const uint64_t count = get_le(p + 4, 4);
  if (width != 2 && width != 4 && width != 8) return false;
  if ((is.size() - 8) / width != count || (is.size() - 8) % width != 0) return false;
  int64_t prev = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t v = sign_extend(get_le(p + 8 + i * width, static_cast<int>(width)),
                                  static_cast<int>(8 * width));
    if (i > 0 && v <= prev) return false;
    if (!visit(v)) return false;
    prev = v;
  }
  return true;
}

bool ziplist_for_each(std::string_view zl, const ElementVisit& visit) {
  const auto* p = reinterpret_cast<const unsigned char*>(zl.data());
  const size_t size = zl.size();
  constexpr size_t kHeader = 10;
  if (size < kHeader + 1 || get_le(p, 4) != size || p[size - 1] != 0xff) return false;
  if (get_le(p + 4, 4) >= size) return false;  // zltail
  const uint64_t declared = get_le(p + 8, 2);
  size_t pos = kHeader;
  const size_t end = size - 1;
  size_t prev_size = 0;
  uint64_t count = 0;
  char buf[24];
  while (pos < end) {
    auto need = [&](size_t n) { return end - pos >= n; };
    // prevlen: one byte below 254, else 0xfe and four bytes.
    size_t prevlen = p[pos];
    size_t prevlen_size = 1;
    if (prevlen == 0xfe) {
      if (!need(5)) return false;
      prevlen = get_le(p + pos + 1, 4);
      prevlen_size = 5;
    } else if (prevlen == 0xff) {
      return false;
    }
    if (prevlen != prev_size) return false;
    const size_t start = pos;
    pos += prevlen_size;
    if (!need(1)) return false;
    const unsigned char b = p[pos];
    std::string_view element;
    size_t head = 1;
    uint64_t data_len = 0;
    bool is_int = true;
    int64_t v = 0;
    switch (b >> 6) {
      case 0:
        data_len = b & 0x3f;
        is_int = false;
        break;
      case 1:
        if (!need(2)) return false;
        head = 2;
        data_len = (uint64_t{b} & 0x3f) << 8 | p[pos + 1];
        is_int = false;
        break;
      case 2:
        if (b != 0x80 || !need(5)) return false;
        head = 5;
        data_len = uint64_t{p[pos + 1]} << 24 | uint64_t{p[pos + 2]} << 16 |
                   uint64_t{p[pos + 3]} << 8 | p[pos + 4];
        is_int = false;
        break;
      default: {
        int bytes = 0;
        if (b == 0xc0) bytes = 2;
        if (b == 0xd0) bytes = 4;
        if (b == 0xe0) bytes = 8;
        if (b == 0xf0) bytes = 3;
        if (b == 0xfe) bytes = 1;
        if (bytes > 0) {
          if (!need(1 + static_cast<size_t>(bytes))) return false;
          v = sign_extend(get_le(p + pos + 1, bytes), 8 * bytes);
          data_len = static_cast<uint64_t>(bytes);
        } else if (b >= 0xf1 && b <= 0xfd) {
          v = (b & 0x0f) - 1;
        } else {
          return false;
        }
      }
    }
    if (data_len > end - pos - head) return false;
    element = is_int ? int_text(v, buf) : zl.substr(pos + head, static_cast<size_t>(data_len));
    if (!visit(element)) return false;
    pos += head + data_len;
    prev_size = pos - start;
    ++count;
  }
  return declared == 0xffff || declared == count;
}

bool zipmap_for_each(std::string_view zm, const ElementVisit& visit) {
  const auto* p = reinterpret_cast<const unsigned char*>(zm.data());
  const size_t size = zm.size();
  if (size < 2 || p[size - 1] != 0xff) return false;
  size_t pos = 1;  // zmlen
  const size_t end = size - 1;
  auto read_len = [&](uint64_t& len) {
    if (pos >= end) return false;
    if (p[pos] < 254) {
      len = p[pos++];
      return true;
    }
    if (p[pos] != 254 || end - pos < 5) return false;
    len = get_le(p + pos + 1, 4);
    pos += 5;
    return true;
  };
  while (pos < end) {
    uint64_t klen = 0;
    if (!read_len(klen) || klen > end - pos) return false;
    if (!visit(zm.substr(pos, klen))) return false;
    pos += klen;
    uint64_t vlen = 0;
    if (!read_len(vlen) || end - pos < 1) return false;
    const uint64_t free = p[pos++];
    if (vlen > end - pos || free > end - pos - vlen) return false;
    if (!visit(zm.substr(pos, vlen))) return false;
    pos += vlen + free;
  }
  return true;
}

}  // namespace ringkv::engine::rdb
