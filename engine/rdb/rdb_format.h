// The building blocks of Redis's RDB value encoding (rdb.c, listpack.c, intset.c, ziplist.c,
// zipmap.c in Redis 7.0), pure and allocation-bounded: lengths, strings (integer and LZF
// encodings), binary and text doubles, and the packed containers collections are saved in.
// The value layer (rdb_value.h) composes them; RDB files will reuse them as they are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace ringkv::engine::rdb {

// RDB object types (rdb.h).
inline constexpr uint8_t kTypeString = 0;
inline constexpr uint8_t kTypeList = 1;
inline constexpr uint8_t kTypeSet = 2;
inline constexpr uint8_t kTypeZSet = 3;
inline constexpr uint8_t kTypeHash = 4;
inline constexpr uint8_t kTypeZSet2 = 5;
inline constexpr uint8_t kTypeHashZipmap = 9;
inline constexpr uint8_t kTypeListZiplist = 10;
inline constexpr uint8_t kTypeSetIntset = 11;
inline constexpr uint8_t kTypeZSetZiplist = 12;
inline constexpr uint8_t kTypeHashZiplist = 13;
inline constexpr uint8_t kTypeListQuicklist = 14;
inline constexpr uint8_t kTypeHashListpack = 16;
inline constexpr uint8_t kTypeZSetListpack = 17;
inline constexpr uint8_t kTypeStreamListpacks = 15;
inline constexpr uint8_t kTypeListQuicklist2 = 18;
inline constexpr uint8_t kTypeStreamListpacks2 = 19;

// RDB_VERSION of Redis 7.0.
inline constexpr uint16_t kVersion = 10;

// Quicklist node containers (quicklist.h).
inline constexpr uint64_t kContainerPlain = 1;
inline constexpr uint64_t kContainerPacked = 2;

// --- writing -------------------------------------------------------------------------------

// rdbcompression: whether strings longer than 20 bytes are LZF-compressed. Process-wide, as
// Redis's server.rdb_compression: DUMP payloads, RDB files and the snapshots sent to replicas
// all follow it. Set from the configuration; a forked child keeps the value it had at the fork.
void set_compression(bool on);
bool compression();

// rdbSaveLen: 6-bit, 14-bit, 32-bit or 64-bit big-endian length.
void write_len(std::string& out, uint64_t len);
// rdbSaveRawString: an integer encoding when `s` is the canonical decimal form of a number in
// the int32 range, LZF when compression() is on, `s` is longer than 20 bytes and it saves at
// least 4 bytes, else verbatim.
void write_string(std::string& out, std::string_view s);
// A list node's listpack as Redis keeps a node beyond list-compress-depth
// (__quicklistCompressNode: at least 48 bytes, LZF saving more than 8), written as rdbSaveLzfBlob
// does. Returns false, writing nothing, when Redis would keep the node uncompressed.
bool write_compressed_node(std::string& out, std::string_view listpack);
// rdbSaveBinaryDoubleValue: 8 bytes, little-endian IEEE 754.
void write_binary_double(std::string& out, double d);
// Redis's d2string (7.0): "inf", "-inf", "nan", "-0", integers below 2^52 as integers, else %.17g.
std::string_view double_to_string(double d, char (&buf)[32]);

// Builds a listpack (listpack.c) element by element, with Redis's entry encodings: integers as
// 7/13/16/24/32/64-bit, strings with 6/12/32-bit lengths, each entry followed by its backlen.
class ListpackWriter {
 public:
  ListpackWriter();
  // Appends an element (an integer encoding when it is a canonical 64-bit integer).
  void add(std::string_view element);
  // Bytes the listpack would have after appending `element` (without appending it).
  size_t size_with(std::string_view element) const;
  size_t size() const { return buf_.size() + 1; }  // with the end byte
  size_t count() const { return count_; }
  // The finished listpack (header filled in, end byte appended); resets the writer.
  std::string finish();

 private:
  std::string buf_;  // header + entries, without the end byte
  size_t count_ = 0;
};

// Bytes one element takes in a listpack (its encoding, data and backlen), as ListpackWriter
// would write it.
size_t listpack_element_size(std::string_view element);
// The same for an element given as an integer (the text of `v` is stored as that integer).
size_t listpack_int_element_size(int64_t v);

// An intset blob (intset.c) of ascending `values`, at the smallest width holding them all.
std::string intset_bytes(std::span<const int64_t> values);

// --- reading -------------------------------------------------------------------------------

// Reads an RDB value's parts from a bounded buffer. Every read checks the bounds first; on any
// malformed input the reader fails (returns false) and stays failed.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}

  bool read_byte(uint8_t& b);
  // A plain length (rdbLoadLen); fails on an encoded-string marker.
  bool read_len(uint64_t& len);
  // A string in any encoding (rdbGenericLoadStringObject): verbatim, INT8/16/32, LZF.
  bool read_string(std::string& out);
  bool read_binary_double(double& d);
  // `n` bytes as they are (rdbLoadRaw).
  bool read_raw(size_t n, std::string_view& out);
  // The old text double (rdbLoadDoubleValue): length byte, 253 nan, 254 inf, 255 -inf.
  bool read_text_double(double& d);
  size_t remaining() const { return data_.size() - pos_; }
  // Bytes read so far.
  size_t position() const { return pos_; }
  // A read failed because the data ended before the length it needed: more input may complete
  // it (an RDB stream arriving in chunks), where any other failure is malformed data.
  bool short_read() const { return short_read_; }

 private:
  // rdbLoadLenByRef; `encoded` is set for the 0b11 string-encoding marker (then `len` holds it).
  bool read_len_or_encoding(uint64_t& len, bool& encoded);
  bool fail() { return false; }
  bool ran_out() {
    short_read_ = true;
    return false;
  }
  std::string_view data_;
  size_t pos_ = 0;
  bool short_read_ = false;
};

// Element visitors: return false to report a semantic error (which fails the walk).
using ElementVisit = std::function<bool(std::string_view element)>;

// Validates a listpack blob completely (header, every entry's encoding and backlen, the element
// count, the end byte) while visiting its elements in order; integers are visited as decimal
// text. False when it is malformed or `visit` returned false.
bool listpack_for_each(std::string_view lp, const ElementVisit& visit);
// The same for an intset blob (encoding 2, 4 or 8; length matching the blob; ascending values).
bool intset_for_each(std::string_view is, const std::function<bool(int64_t)>& visit);
// The same for a ziplist blob (RDB versions before 10).
bool ziplist_for_each(std::string_view zl, const ElementVisit& visit);
// The same for a zipmap blob (Redis 2.x hashes): visits field, value, field, value...
bool zipmap_for_each(std::string_view zm, const ElementVisit& visit);

}  // namespace ringkv::engine::rdb
